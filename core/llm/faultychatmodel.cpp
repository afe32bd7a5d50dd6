#include "faultychatmodel.h"

#include <QPointer>
#include <QTimer>

namespace AgentConsole {
namespace {

// Waits out the injected latency, then either fails or relays the inner model's reply.
class FaultyReply final : public ChatReply
{
public:
    FaultyReply(ChatModel *inner, const ModelFault &fault, const ChatRequest &request)
        : m_request(request)
        , m_inner(inner)
        , m_fault(fault)
    {
        m_timer.setSingleShot(true);
        m_timer.setTimerType(Qt::PreciseTimer);
        connect(&m_timer, &QTimer::timeout, this, &FaultyReply::proceed);
        m_timer.start(m_fault.latencyMs);
    }

    void abort() override
    {
        m_timer.stop();
        if (m_relayed) {
            m_relayed->abort();
            return;
        }
        if (!isFinished())
            finishWith(error(ModelError::Cancelled, QString()));
    }

private:
    ChatResponse error(const QString &code, const QString &message) const
    {
        ChatResponse response;
        response.model = m_inner->modelName();
        response.finishReason = FinishReason::Error;
        response.errorCode = code;
        response.errorMessage = message;
        return response;
    }

    void proceed()
    {
        if (m_fault.unavailable) {
            finishWith(error(ModelError::Unavailable,
                             questionLanguage(m_request) == Language::Chinese
                                 ? QStringLiteral("模型服务暂时不可用，请稍后重试。")
                                 : QStringLiteral("The model is temporarily unavailable. "
                                                  "Please try again later.")));
            return;
        }
        m_relayed = m_inner->complete(m_request);
        m_relayed->setParent(this);
        connect(m_relayed, &ChatReply::contentDelta, this, &ChatReply::contentDelta);
        connect(m_relayed, &ChatReply::finished, this,
                [this] { finishWith(m_relayed->response()); });
    }

    ChatRequest m_request;
    ChatModel *m_inner;
    ModelFault m_fault;
    QTimer m_timer;
    QPointer<ChatReply> m_relayed;
};

} // namespace

FaultyChatModel::FaultyChatModel(ChatModel *inner, std::shared_ptr<const LiveFaults> faults,
                                 QObject *parent)
    : ChatModel(parent)
    , m_inner(inner)
    , m_faults(std::move(faults))
{
}

QString FaultyChatModel::modelName() const
{
    return m_inner->modelName();
}

ChatReply *FaultyChatModel::complete(const ChatRequest &request)
{
    const std::optional<ModelFault> fault
        = m_faults ? m_faults->current()->modelFault() : std::nullopt;
    if (!fault)
        return m_inner->complete(request);
    return new FaultyReply(m_inner, *fault, request);
}

} // namespace AgentConsole
