#include "agentdoubles.h"

#include "core/ledger/ledgeropening.h"
#include "core/support/createtickettool.h"

#include <QTimer>

namespace AgentConsole::Testing {
namespace {

class ScriptedReply final : public ChatReply
{
public:
    explicit ScriptedReply(ChatResponse response)
    {
        QTimer::singleShot(0, this, [this, response] {
            if (!isFinished())
                finishWith(response);
        });
    }
    void abort() override
    {
        if (!isFinished()) {
            ChatResponse aborted;
            aborted.finishReason = FinishReason::Error;
            aborted.errorCode = QStringLiteral("CANCELLED");
            finishWith(aborted);
        }
    }
};

} // namespace

ChatReply *ScriptedModel::complete(const ChatRequest &request)
{
    requests.append(request);
    ChatResponse response;
    if (!script.isEmpty())
        response = script.takeFirst();
    else
        response.content = QStringLiteral("done");
    response.model = modelName();
    return new ScriptedReply(response);
}

ChatResponse toolCalls(const QList<ModelToolCall> &calls)
{
    ChatResponse response;
    response.toolCalls = calls;
    response.finishReason = FinishReason::ToolCalls;
    return response;
}

ToolDescriptor RecordingWriteTool::descriptor() const
{
    // The real ticket tool's name, side effects and labels; any object for arguments.
    ToolDescriptor descriptor = ticketToolDescriptor();
    descriptor.description = QStringLiteral("creates a ticket");
    descriptor.parameters = QJsonObject{{QStringLiteral("type"), QStringLiteral("object")}};
    return descriptor;
}

std::optional<ToolResult> RecordingWriteTool::precheck(const QJsonObject &arguments,
                                                       const TrustedContext &context) const
{
    if (!arguments.value(QLatin1String("orderId")).isString())
        return ToolResult::failure(ResultCode::InvalidArgument, context.language);
    return std::nullopt;
}

AttemptResult RecordingWriteTool::attempt(const QJsonObject &arguments, const TrustedContext &,
                                          const AttemptContext &context) const
{
    ++runs;
    if (context.mayHaveRun)
        ++runsThatMayRepeat;
    return AttemptResult::completed(ToolResult::ok(QStringLiteral("created"), arguments));
}

std::shared_ptr<FunctionTool> answeringTool(const QString &name, bool hasSideEffects)
{
    return std::make_shared<FunctionTool>(name, hasSideEffects, [](const AttemptContext &) {
        return AttemptResult::completed(ToolResult::ok(QStringLiteral("done"), QJsonValue()));
    });
}

FunctionTool::FunctionTool(const QString &name, bool hasSideEffects, Body body)
    : m_name(name)
    , m_hasSideEffects(hasSideEffects)
    , m_body(std::move(body))
{
}

ToolDescriptor FunctionTool::descriptor() const
{
    ToolDescriptor descriptor;
    descriptor.name = m_name;
    descriptor.description = QStringLiteral("a test tool");
    descriptor.parameters = QJsonObject{{QStringLiteral("type"), QStringLiteral("object")}};
    descriptor.hasSideEffects = m_hasSideEffects;
    return descriptor;
}

std::optional<ToolResult> FunctionTool::precheck(const QJsonObject &,
                                                 const TrustedContext &) const
{
    return std::nullopt;
}

AttemptResult FunctionTool::attempt(const QJsonObject &, const TrustedContext &,
                                    const AttemptContext &context) const
{
    ++runs;
    return m_body(context);
}

std::unique_ptr<IdempotencyLedger> openTestLedger(const QString &directory)
{
    std::unique_ptr<IdempotencyLedger> ledger = openLedger(QString(), directory).ledger;
    QFuture<LedgerOpenResult> opened = ledger->open();
    opened.waitForFinished(); // the ledger's own worker thread; no window waits here
    if (!opened.result().ready())
        qFatal("the test ledger did not open");
    return ledger;
}

} // namespace AgentConsole::Testing
