#include "openaicompatiblemodel.h"

#include "../telemetry/logging.h"
#include "ssestream.h"

#include <QDateTime>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QJsonParseError>
#include <QMap>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QNetworkRequest>
#include <QPointer>
#include <QTimer>

#include <algorithm>
#include <cmath>

namespace AgentConsole {
namespace {

// Bodies are read into memory; a server that sends more than this is not a chat model.
constexpr qsizetype MaxBodyBytes = 16 * 1024 * 1024;

// ---------------------------------------------------------------------------------------
// What staff read. Fixed sentences only: never the server's text (OpenAI's 401 message
// quotes part of the key), never a URL.

bool lastUserMessageIsChinese(const ChatRequest &request)
{
    return questionLanguage(request) == Language::Chinese;
}

QString safeMessage(const QString &code, bool chinese)
{
    struct Sentence
    {
        const QString &code;
        const char16_t *en;
        const char16_t *zh;
    };
    static const Sentence sentences[] = {
        {ModelError::RateLimited,
         u"The model service is busy right now. Please try again in a moment.",
         u"模型服务当前请求过多，请稍后重试。"},
        {ModelError::QuotaExhausted,
         u"The model account has no quota or balance left. Please contact your administrator.",
         u"模型服务账户的额度或余额已用完，请联系管理员。"},
        {ModelError::AuthFailed,
         u"The model service did not accept the credentials. Please check the API key.",
         u"模型服务未接受访问凭据，请检查 API 密钥设置。"},
        {ModelError::BadRequest, u"The model service could not process this request.",
         u"模型服务无法处理此请求。"},
        {ModelError::Unavailable, u"The model is temporarily unavailable. Please try again later.",
         u"模型服务暂时不可用，请稍后重试。"},
        {ModelError::Timeout, u"The model did not respond in time. Please try again later.",
         u"模型服务响应超时，请稍后重试。"},
        {ModelError::Truncated, u"The model's answer was cut off. Please try again.",
         u"模型的回答被中断，请重试。"},
        {ModelError::InvalidResponse, u"The model service sent a response that could not be read.",
         u"模型服务返回了无法读取的响应。"},
        {ModelError::Cancelled, u"The model call was cancelled.", u"模型调用已取消。"},
    };
    for (const Sentence &sentence : sentences) {
        if (sentence.code == code)
            return QString::fromUtf16(chinese ? sentence.zh : sentence.en);
    }
    return QString::fromUtf16(chinese ? u"模型调用失败。" : u"The model call failed.");
}

// ---------------------------------------------------------------------------------------
// The request.

QString roleName(ChatMessage::Role role)
{
    switch (role) {
    case ChatMessage::Role::System:
        return QStringLiteral("system");
    case ChatMessage::Role::User:
        return QStringLiteral("user");
    case ChatMessage::Role::Assistant:
        return QStringLiteral("assistant");
    case ChatMessage::Role::Tool:
        return QStringLiteral("tool");
    }
    return QStringLiteral("user");
}

QJsonObject messageJson(const ChatMessage &message)
{
    QJsonObject json{{QStringLiteral("role"), roleName(message.role)},
                     {QStringLiteral("content"), message.content}};
    if (message.role == ChatMessage::Role::Tool)
        json.insert(QStringLiteral("tool_call_id"), message.toolCallId);
    if (message.role == ChatMessage::Role::Assistant && !message.toolCalls.isEmpty()) {
        QJsonArray calls;
        for (const ModelToolCall &call : message.toolCalls) {
            calls.append(QJsonObject{
                {QStringLiteral("id"), call.id},
                {QStringLiteral("type"), QStringLiteral("function")},
                {QStringLiteral("function"),
                 QJsonObject{{QStringLiteral("name"), call.name},
                             {QStringLiteral("arguments"), call.arguments}}}});
        }
        json.insert(QStringLiteral("tool_calls"), calls);
        // OpenAI's own shape for "only tool calls": content null rather than "".
        if (message.content.isEmpty())
            json.insert(QStringLiteral("content"), QJsonValue::Null);
    }
    return json;
}

QByteArray requestBody(const OpenAiConfig &config, const ChatRequest &request)
{
    QJsonArray messages;
    for (const ChatMessage &message : request.messages)
        messages.append(messageJson(message));
    QJsonObject body{{QStringLiteral("model"), config.model},
                     {QStringLiteral("messages"), messages},
                     {QStringLiteral("stream"), config.stream}};
    if (!request.tools.isEmpty()) {
        QJsonArray tools;
        for (const ToolDescriptor &tool : request.tools)
            tools.append(tool.toFunctionJson());
        body.insert(QStringLiteral("tools"), tools);
        body.insert(QStringLiteral("tool_choice"), QStringLiteral("auto"));
    }
    return QJsonDocument(body).toJson(QJsonDocument::Compact);
}

QUrl completionsUrl(const QUrl &baseUrl)
{
    QUrl url = baseUrl;
    QString path = url.path();
    while (path.endsWith(QLatin1Char('/')))
        path.chop(1);
    url.setPath(path + QStringLiteral("/chat/completions"));
    return url;
}

// ---------------------------------------------------------------------------------------
// The answer.

FinishReason finishReasonFrom(const QString &reason)
{
    if (reason == QLatin1String("tool_calls") || reason == QLatin1String("function_call"))
        return FinishReason::ToolCalls;
    if (reason == QLatin1String("length"))
        return FinishReason::Length;
    if (reason == QLatin1String("content_filter"))
        return FinishReason::ContentFilter;
    return FinishReason::Stop;
}

// Arguments are normally a JSON string; some servers (older Ollama) send the object itself.
QString argumentsText(const QJsonValue &value)
{
    if (value.isString())
        return value.toString();
    if (value.isObject())
        return QString::fromUtf8(QJsonDocument(value.toObject()).toJson(QJsonDocument::Compact));
    return {};
}

// Tool calls as they arrive in stream deltas: the first delta of a call carries its id and
// name, later ones pieces of its arguments, all tagged with the call's `index`; the deltas of
// parallel calls may interleave. Arguments are kept as raw text, malformed or not.
class ToolCallAssembler final
{
public:
    void addDeltas(const QJsonArray &deltas)
    {
        for (qsizetype i = 0; i < deltas.size(); ++i) {
            const QJsonObject delta = deltas.at(i).toObject();
            // A server that leaves out `index` sends one entry per call in order.
            const int index = delta.value(QLatin1String("index")).toInt(int(i));
            ModelToolCall &call = m_calls[index];
            const QString id = delta.value(QLatin1String("id")).toString();
            if (!id.isEmpty())
                call.id = id;
            const QJsonObject function = delta.value(QLatin1String("function")).toObject();
            const QString name = function.value(QLatin1String("name")).toString();
            if (!name.isEmpty())
                call.name = name;
            call.arguments += argumentsText(function.value(QLatin1String("arguments")));
        }
    }

    QList<ModelToolCall> calls() const
    {
        QList<ModelToolCall> calls;
        for (auto it = m_calls.cbegin(); it != m_calls.cend(); ++it) {
            ModelToolCall call = it.value();
            // The agent loop answers each call by id; a server without ids still gets
            // distinct ones.
            if (call.id.isEmpty())
                call.id = QStringLiteral("call_%1").arg(it.key());
            calls.append(call);
        }
        return calls;
    }

    bool isEmpty() const { return m_calls.isEmpty(); }

private:
    QMap<int, ModelToolCall> m_calls; // ordered by index
};

// ---------------------------------------------------------------------------------------
// Failures: classified once, here; the code and whether it is worth another attempt.

struct Failure
{
    QString code;
    bool retryable = false;
    int retryAfterMs = -1; // the server's wish, -1 when it said nothing
    QString detail;        // for the local log only
};

// The server's error object, reduced to what may be logged: code and type, never message.
struct ServerError
{
    QString code;
    QString type;
};

ServerError serverErrorOf(const QByteArray &body)
{
    const QJsonObject error =
        QJsonDocument::fromJson(body).object().value(QLatin1String("error")).toObject();
    const QJsonValue code = error.value(QLatin1String("code"));
    return {code.isDouble() ? QString::number(code.toInt()) : code.toString(),
            error.value(QLatin1String("type")).toString()};
}

Failure classifyStatus(int status, const ServerError &error)
{
    const QString detail = QStringLiteral("HTTP %1 code=%2 type=%3")
                               .arg(status)
                               .arg(error.code.isEmpty() ? QStringLiteral("-") : error.code,
                                    error.type.isEmpty() ? QStringLiteral("-") : error.type);
    const auto is = [&error](QLatin1String name) {
        return error.code == name || error.type == name;
    };
    if (status == 429) {
        if (is(QLatin1String("insufficient_quota")))
            return {ModelError::QuotaExhausted, false, -1, detail};
        return {ModelError::RateLimited, true, -1, detail};
    }
    switch (status) {
    case 402: // DeepSeek: insufficient balance
        return {ModelError::QuotaExhausted, false, -1, detail};
    case 401:
    case 403:
        return {ModelError::AuthFailed, false, -1, detail};
    case 408:
        return {ModelError::Timeout, true, -1, detail};
    case 500:
    case 502:
    case 503:
    case 504:
        return {ModelError::Unavailable, true, -1, detail};
    default:
        break;
    }
    if (status >= 500)
        return {ModelError::Unavailable, false, -1, detail};
    return {ModelError::BadRequest, false, -1, detail};
}

Failure classifyNetworkError(QNetworkReply::NetworkError error)
{
    const QString detail = QStringLiteral("network error %1").arg(int(error));
    switch (error) {
    case QNetworkReply::ConnectionRefusedError:
    case QNetworkReply::RemoteHostClosedError:
    case QNetworkReply::HostNotFoundError:
    case QNetworkReply::TemporaryNetworkFailureError:
    case QNetworkReply::NetworkSessionFailedError:
    case QNetworkReply::UnknownNetworkError:
    case QNetworkReply::ProxyConnectionRefusedError:
    case QNetworkReply::ProxyConnectionClosedError:
    case QNetworkReply::ProxyNotFoundError:
    case QNetworkReply::ProxyTimeoutError:
    case QNetworkReply::ProtocolFailure:
        return {ModelError::Unavailable, true, -1, detail};
    case QNetworkReply::TimeoutError:
        return {ModelError::Timeout, true, -1, detail};
    default:
        // TLS failures, unsupported schemes, proxy authentication: not transient.
        return {ModelError::Unavailable, false, -1, detail};
    }
}

// `retry-after-ms` (OpenAI, milliseconds) wins over `Retry-After` (seconds or an HTTP date).
int retryAfterMs(const QNetworkReply &reply)
{
    bool ok = false;
    const double ms = reply.rawHeader("retry-after-ms").trimmed().toDouble(&ok);
    if (ok && ms >= 0 && std::isfinite(ms))
        return int(std::min(ms, 1e9));
    const QByteArray retryAfter = reply.rawHeader("Retry-After").trimmed();
    if (retryAfter.isEmpty())
        return -1;
    const double seconds = retryAfter.toDouble(&ok);
    if (ok && seconds >= 0 && std::isfinite(seconds))
        return int(std::min(seconds * 1000.0, 1e9));
    // An IMF-fixdate ("Wed, 21 Oct 2015 07:28:00 GMT"); Qt 6.4 reads the zone only as +0000.
    QString date = QString::fromLatin1(retryAfter);
    if (date.endsWith(QLatin1String(" GMT")))
        date = date.chopped(4) + QStringLiteral(" +0000");
    const QDateTime when = QDateTime::fromString(date, Qt::RFC2822Date);
    if (!when.isValid())
        return -1;
    return int(std::clamp<qint64>(QDateTime::currentDateTimeUtc().msecsTo(when), 0, 1000000000));
}

// ---------------------------------------------------------------------------------------
// One model call: attempts, each with its own timeouts, and QTimer backoff between them.

class OpenAiReply final : public ChatReply
{
public:
    OpenAiReply(QNetworkAccessManager *network, const OpenAiConfig &config,
                const ChatRequest &request)
        : m_network(network)
        , m_config(config)
        , m_budget(request.budget)
        , m_chinese(lastUserMessageIsChinese(request))
        , m_body(requestBody(config, request))
    {
        // Precise: a coarse timer may fire up to 5 % early, and a server's Retry-After is a
        // floor, a timeout a promise to the staff member (CONVENTIONS.md, "Known pitfalls").
        for (QTimer *timer : {&m_headerTimer, &m_idleTimer, &m_backoffTimer}) {
            timer->setSingleShot(true);
            timer->setTimerType(Qt::PreciseTimer);
        }
        connect(&m_headerTimer, &QTimer::timeout, this, [this] {
            failAttempt({ModelError::Timeout, true, -1,
                         QStringLiteral("no response headers within the connect timeout")});
        });
        connect(&m_idleTimer, &QTimer::timeout, this, [this] {
            failAttempt({ModelError::Timeout, true, -1,
                         QStringLiteral("no data within the idle timeout")});
        });
        connect(&m_backoffTimer, &QTimer::timeout, this, &OpenAiReply::startAttempt);
        // Started on the next event-loop turn, so that the caller can connect first.
        QTimer::singleShot(0, this, &OpenAiReply::startAttempt);
    }

    ~OpenAiReply() override { releaseNetworkReply(); }

    void abort() override
    {
        m_backoffTimer.stop();
        releaseNetworkReply();
        if (!isFinished())
            finishWith(errorResponse(ModelError::Cancelled));
    }

private:
    void startAttempt()
    {
        if (isFinished())
            return;
        if (!m_network) {
            finishWith(errorResponse(ModelError::Unavailable));
            return;
        }
        ++m_attempts;
        m_stream = SseStream();
        m_toolCalls = ToolCallAssembler();
        m_content.clear();
        m_received.clear();
        m_finishReason.clear();
        m_headersRead = false;
        m_eventStream = false;
        m_status = 0;

        QNetworkRequest request(completionsUrl(m_config.baseUrl));
        request.setHeader(QNetworkRequest::ContentTypeHeader, QByteArray("application/json"));
        request.setRawHeader("Accept", m_config.stream ? QByteArray("text/event-stream")
                                                       : QByteArray("application/json"));
        if (!m_config.apiKey.isEmpty())
            request.setRawHeader("Authorization", "Bearer " + m_config.apiKey.toUtf8());
        for (const auto &[name, value] : m_config.extraHeaders)
            request.setRawHeader(name, value);

        QNetworkReply *reply = m_network->post(request, m_body);
        m_reply = reply;
        connect(reply, &QNetworkReply::metaDataChanged, this, &OpenAiReply::readHeaders);
        connect(reply, &QNetworkReply::readyRead, this, &OpenAiReply::readBody);
        connect(reply, &QNetworkReply::finished, this, &OpenAiReply::replyFinished);
        // Without streaming the headers only come with the finished answer.
        m_headerTimer.start(m_config.stream
                                ? m_config.connectTimeoutMs
                                : std::max(m_config.connectTimeoutMs, m_config.idleTimeoutMs));
    }

    void readHeaders()
    {
        if (m_headersRead || !m_reply)
            return;
        const QVariant status = m_reply->attribute(QNetworkRequest::HttpStatusCodeAttribute);
        if (!status.isValid())
            return; // metaDataChanged before a status line: wait for the real headers
        m_headersRead = true;
        m_status = status.toInt();
        // The server decides: some ignore "stream": true and answer with one JSON body.
        m_eventStream = isSuccess() && m_reply->header(QNetworkRequest::ContentTypeHeader)
                                           .toString()
                                           .contains(QLatin1String("text/event-stream"));
        m_headerTimer.stop();
        m_idleTimer.start(m_config.idleTimeoutMs);
    }

    void readBody()
    {
        if (!m_reply)
            return;
        readHeaders();
        const QByteArray bytes = m_reply->readAll();
        if (bytes.isEmpty())
            return;
        if (!m_eventStream) {
            m_idleTimer.start(m_config.idleTimeoutMs);
            if (m_received.size() + bytes.size() > MaxBodyBytes) {
                failAttempt({ModelError::InvalidResponse, false, -1,
                             QStringLiteral("response body too large")});
                return;
            }
            m_received += bytes;
            return;
        }
        const SseChunk chunk = m_stream.feed(bytes);
        if (chunk.progress)
            m_idleTimer.start(m_config.idleTimeoutMs);
        handleEvents(chunk.events);
    }

    void replyFinished()
    {
        if (!m_reply)
            return;
        readBody();
        if (isFinished() || !m_reply)
            return;
        const QNetworkReply::NetworkError error = m_reply->error();
        const int retryAfter = retryAfterMs(*m_reply);
        releaseNetworkReply();

        if (m_status != 0 && !isSuccess()) {
            const ServerError serverError = serverErrorOf(m_received);
            if (m_status == 400 && serverError.code == QLatin1String("content_filter")) {
                // Azure refuses a prompt this way: a refusal for the loop to show, not a bug.
                qCWarning(lcLlm) << "model" << m_config.model << "refused by a content filter";
                finishWith(answer(FinishReason::ContentFilter));
                return;
            }
            Failure failure = classifyStatus(m_status, serverError);
            failure.retryAfterMs = retryAfter;
            failAttempt(failure);
            return;
        }
        if (error != QNetworkReply::NoError) {
            // A stream that broke off after it began is cut short, not a server failure.
            if (m_status != 0 && m_eventStream) {
                failAttempt({ModelError::Truncated, true, -1,
                             QStringLiteral("stream broken off, network error %1")
                                 .arg(int(error))});
            } else {
                failAttempt(classifyNetworkError(error));
            }
            return;
        }
        if (m_eventStream) {
            if (!handleEvents(m_stream.finish()))
                return;
            if (!m_finishReason.isEmpty()) {
                completeAnswer();
                return;
            }
            failAttempt({ModelError::Truncated, true, -1,
                         QStringLiteral("stream ended without finish_reason or [DONE]")});
            return;
        }
        handleJsonBody();
    }

    // Returns false once the attempt is over: the answer complete, the attempt failed, or a
    // receiver of contentDelta aborted the call.
    bool handleEvents(const QList<SseEvent> &events)
    {
        for (const SseEvent &event : events) {
            if (event.data.trimmed() == "[DONE]") {
                releaseNetworkReply(); // the answer is complete, whatever the socket does
                completeAnswer();
                return false;
            }
            QJsonParseError parseError;
            const QJsonDocument document = QJsonDocument::fromJson(event.data, &parseError);
            if (parseError.error != QJsonParseError::NoError || !document.isObject()) {
                failAttempt({ModelError::InvalidResponse, false, -1,
                             QStringLiteral("unparseable stream chunk")});
                return false;
            }
            const QJsonObject chunk = document.object();
            if (chunk.contains(QLatin1String("error"))) {
                // Some servers report an overload inside a stream that already began.
                const ServerError error = serverErrorOf(event.data);
                failAttempt({ModelError::Unavailable, true, -1,
                             QStringLiteral("error in stream code=%1 type=%2")
                                 .arg(error.code, error.type)});
                return false;
            }
            if (!handleChunk(chunk))
                return false;
        }
        return true;
    }

    bool handleChunk(const QJsonObject &chunk)
    {
        // Usage-only chunks have no choices; only the first choice is asked for (n = 1).
        const QJsonObject choice =
            chunk.value(QLatin1String("choices")).toArray().at(0).toObject();
        const QJsonObject delta = choice.value(QLatin1String("delta")).toObject();
        m_toolCalls.addDeltas(delta.value(QLatin1String("tool_calls")).toArray());
        const QString reason = choice.value(QLatin1String("finish_reason")).toString();
        if (!reason.isEmpty())
            m_finishReason = reason;
        // Only `content` is the answer; DeepSeek's `reasoning_content` is not shown.
        const QString text = delta.value(QLatin1String("content")).toString();
        if (text.isEmpty())
            return true;
        m_content += text;
        m_emitted = true;
        Q_EMIT contentDelta(text);
        return !isFinished(); // a receiver may abort() from its slot
    }

    void handleJsonBody()
    {
        QJsonParseError parseError;
        const QJsonDocument document = QJsonDocument::fromJson(m_received, &parseError);
        const QJsonArray choices = document.object().value(QLatin1String("choices")).toArray();
        if (parseError.error != QJsonParseError::NoError || choices.isEmpty()) {
            failAttempt({ModelError::InvalidResponse, false, -1,
                         QStringLiteral("unparseable response body (%1 bytes)")
                             .arg(m_received.size())});
            return;
        }
        const QJsonObject choice = choices.at(0).toObject();
        const QJsonObject message = choice.value(QLatin1String("message")).toObject();
        m_content = message.value(QLatin1String("content")).toString();
        // The same assembly as for a stream: a complete message is one delta per call.
        m_toolCalls.addDeltas(message.value(QLatin1String("tool_calls")).toArray());
        m_finishReason = choice.value(QLatin1String("finish_reason")).toString();
        if (!m_content.isEmpty()) {
            m_emitted = true;
            Q_EMIT contentDelta(m_content);
            if (isFinished())
                return;
        }
        completeAnswer();
    }

    void completeAnswer()
    {
        // DeepSeek ends a generation its servers could not finish this way: an overload.
        if (m_finishReason == QLatin1String("insufficient_system_resource")) {
            failAttempt({ModelError::Unavailable, true, -1,
                         QStringLiteral("finish_reason insufficient_system_resource")});
            return;
        }
        finishWith(answer(finishReasonFrom(m_finishReason)));
    }

    void failAttempt(Failure failure)
    {
        releaseNetworkReply();
        if (isFinished())
            return;
        // Text already shown cannot be taken back: another attempt would write it twice.
        if (failure.retryable && m_emitted) {
            failure.detail += QStringLiteral(" after streamed text");
            failure.code = ModelError::Truncated;
            failure.retryable = false;
        }
        const int delay = failure.retryable ? backoffMs(failure) : -1;
        const bool retry = failure.retryable && m_attempts < m_config.maxAttempts
                           && budgetAllows(delay);
        qCWarning(lcLlm).noquote()
            << "model" << m_config.model << "at" << m_config.baseUrl.host() << "attempt"
            << m_attempts << "of" << m_config.maxAttempts << "failed:" << failure.detail
            << "->" << failure.code
            << (retry ? QStringLiteral("retry in %1 ms").arg(delay) : QStringLiteral("giving up"));
        if (!retry) {
            finishWith(errorResponse(failure.code));
            return;
        }
        m_backoffTimer.start(delay);
    }

    int backoffMs(const Failure &failure) const
    {
        const int cap = std::max(0, m_config.retryAfterCapMs);
        if (failure.retryAfterMs >= 0)
            return std::min(failure.retryAfterMs, cap);
        const double exponential =
            double(m_config.initialBackoffMs) * std::pow(2.0, std::max(0, m_attempts - 1));
        return int(std::min<double>(exponential, cap));
    }

    // The turn's budget has the last word on every retry: its count and its deadline.
    bool budgetAllows(int delayMs) const
    {
        if (!m_budget)
            return true;
        const QDeadlineTimer deadline = m_budget->deadline();
        if (!deadline.isForever() && deadline.remainingTime() < delayMs) {
            qCWarning(lcLlm) << "model retry skipped: the turn's deadline ends before the backoff";
            return false;
        }
        if (!m_budget->tryConsume(RetryBudget::Layer::Model)) {
            qCWarning(lcLlm) << "model retry refused by the turn's retry budget";
            return false;
        }
        return true;
    }

    ChatResponse answer(FinishReason reason) const
    {
        ChatResponse response;
        response.model = m_config.model;
        response.content = m_content;
        response.toolCalls = m_toolCalls.calls();
        // Some servers (Ollama) say "stop" when the message is tool calls.
        response.finishReason = reason == FinishReason::Stop && !response.toolCalls.isEmpty()
                                    ? FinishReason::ToolCalls
                                    : reason;
        response.attempts = std::max(1, m_attempts);
        return response;
    }

    ChatResponse errorResponse(const QString &code) const
    {
        ChatResponse response;
        response.model = m_config.model;
        response.content = m_content;
        response.finishReason = FinishReason::Error;
        response.errorCode = code;
        response.errorMessage = safeMessage(code, m_chinese);
        response.attempts = std::max(1, m_attempts);
        return response;
    }

    bool isSuccess() const { return m_status >= 200 && m_status < 300; }

    void releaseNetworkReply()
    {
        m_headerTimer.stop();
        m_idleTimer.stop();
        if (!m_reply)
            return;
        QNetworkReply *reply = m_reply;
        m_reply = nullptr;
        reply->disconnect(this);
        if (reply->isRunning())
            reply->abort();
        reply->deleteLater();
    }

    QPointer<QNetworkAccessManager> m_network;
    const OpenAiConfig m_config;
    const RetryBudgetPtr m_budget;
    const bool m_chinese;
    const QByteArray m_body;

    QTimer m_headerTimer;
    QTimer m_idleTimer;
    QTimer m_backoffTimer;
    QPointer<QNetworkReply> m_reply; // owned until finished; released with deleteLater()
    int m_attempts = 0;
    bool m_emitted = false; // text reached contentDelta: no retry may repeat it

    // Per attempt.
    int m_status = 0;
    bool m_headersRead = false;
    bool m_eventStream = false;
    SseStream m_stream;
    ToolCallAssembler m_toolCalls;
    QByteArray m_received; // a JSON body (answer or error), not used for streams
    QString m_content;
    QString m_finishReason;
};

} // namespace

OpenAiConfig OpenAiConfig::preset(const QString &name)
{
    OpenAiConfig config;
    if (name == QLatin1String("deepseek")) {
        // DeepSeek serves /chat/completions at its root (it accepts /v1 too).
        config.baseUrl = QUrl(QStringLiteral("https://api.deepseek.com"));
        config.model = QStringLiteral("deepseek-chat");
        config.displayName = QStringLiteral("DeepSeek");
    } else if (name == QLatin1String("openai")) {
        config.baseUrl = QUrl(QStringLiteral("https://api.openai.com/v1"));
        config.model = QStringLiteral("gpt-4o-mini");
        config.displayName = QStringLiteral("OpenAI");
    } else if (name == QLatin1String("ollama")) {
        config.baseUrl = QUrl(QStringLiteral("http://127.0.0.1:11434/v1"));
        config.model = QStringLiteral("llama3.1");
        config.displayName = QStringLiteral("Ollama");
    }
    return config;
}

OpenAiCompatibleModel::OpenAiCompatibleModel(OpenAiConfig config, QObject *parent)
    : ChatModel(parent)
    , m_config(std::move(config))
    , m_network(new QNetworkAccessManager(this))
{
    if (m_config.displayName.isEmpty())
        m_config.displayName = m_config.model;
}

OpenAiCompatibleModel::~OpenAiCompatibleModel() = default;

QString OpenAiCompatibleModel::modelName() const
{
    return m_config.model;
}

ChatReply *OpenAiCompatibleModel::complete(const ChatRequest &request)
{
    return new OpenAiReply(m_network, m_config, request);
}

} // namespace AgentConsole
