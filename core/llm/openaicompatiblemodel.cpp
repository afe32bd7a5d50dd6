#include "openaicompatiblemodel.h"

#include "../http/networkfailure.h"
#include "../http/oneshotbody.h"
#include "../http/retryafter.h"
#include "../http/urljoin.h"
#include "../resilience/retrypolicy.h"
#include "../telemetry/logging.h"
#include "chatcompletionparser.h"
#include "../http/ssestream.h"

#include <QCryptographicHash>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
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

// Bodies are read into memory; a server that sends more than this is not a chat model. A
// stream gets the same cap over all its bytes (DESIGN.md, "Bounds on everything from outside").
constexpr qsizetype MaxBodyBytes = 16 * 1024 * 1024;
// What is read from the network at once, and what Qt may buffer ahead of the reads.
constexpr qint64 ReadSliceBytes = 256 * 1024;
constexpr qint64 ReadBufferBytes = 1024 * 1024;

// ---------------------------------------------------------------------------------------
// What staff read. Fixed sentences only: never the server's text (OpenAI's 401 message
// quotes part of the key), never a URL.

bool lastUserMessageIsChinese(const ChatRequest &request)
{
    return questionLanguage(request) == Language::Chinese;
}

QString safeMessage(const QString &code, bool chinese)
{
    return ModelError::message(code, chinese ? Language::Chinese : Language::English);
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

// `origin` names the provider the request goes to: a thinking model's reasoning goes back
// only to the provider that wrote it (DeepSeek wants it; another may refuse the field).
QJsonObject messageJson(const ChatMessage &message, const QString &origin)
{
    QJsonObject json{{QStringLiteral("role"), roleName(message.role)},
                     {QStringLiteral("content"), message.content}};
    if (message.role == ChatMessage::Role::Tool)
        json.insert(QStringLiteral("tool_call_id"), message.toolCallId);
    if (message.role == ChatMessage::Role::Assistant && !message.toolCalls.isEmpty()) {
        QJsonArray calls;
        for (const ModelToolCall &call : message.toolCalls) {
            calls.append(
                QJsonObject{{QStringLiteral("id"), call.id},
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
    if (message.role == ChatMessage::Role::Assistant && !message.reasoningContent.isEmpty()
        && !origin.isEmpty() && message.reasoningOrigin == origin) {
        json.insert(QStringLiteral("reasoning_content"), message.reasoningContent);
    }
    return json;
}

QByteArray requestBody(const OpenAiConfig &config, const ChatRequest &request,
                       const QString &origin)
{
    QJsonArray messages;
    for (const ChatMessage &message : request.messages)
        messages.append(messageJson(message, origin));
    QJsonObject body{{QStringLiteral("model"), config.model},
                     {QStringLiteral("messages"), messages},
                     {QStringLiteral("stream"), config.stream}};
    if (request.maxTokens > 0)
        body.insert(QStringLiteral("max_tokens"), request.maxTokens);
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
    return Http::joinPath(baseUrl, QStringLiteral("/chat/completions"));
}

// An opaque name of the provider behind a base URL: stored with reasoning in checkpoints and
// compared, never shown, and it must not carry the URL itself.
QString originOf(const QUrl &baseUrl)
{
    const QByteArray key = completionsUrl(baseUrl)
                               .adjusted(QUrl::RemoveUserInfo | QUrl::RemoveQuery
                                         | QUrl::RemoveFragment)
                               .toString()
                               .toLower()
                               .toUtf8();
    return QString::fromLatin1(
        QCryptographicHash::hash(key, QCryptographicHash::Sha256).toHex().left(16));
}

// ---------------------------------------------------------------------------------------
// Failures: classified once, here; the code and whether it is worth another attempt.

struct Failure
{
    QString code;
    bool retryable = false;
    int retryAfterMs = -1; // the server's wish, -1 when it said nothing
    QString detail; // for the local log only
};

// The server's error object, reduced to what may be logged: code and type, never message.
struct ServerError
{
    QString code;
    QString type;
};

ServerError serverErrorOf(const QByteArray &body)
{
    const QJsonObject error
        = QJsonDocument::fromJson(body).object().value(QLatin1String("error")).toObject();
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
    switch (Http::networkFailureOf(error)) {
    case Http::NetworkFailure::NeverConnected:
    case Http::NetworkFailure::ConnectionLost:
        return {ModelError::Unavailable, true, -1, detail};
    case Http::NetworkFailure::TimedOut:
        return {ModelError::Timeout, true, -1, detail};
    default:
        // TLS failures, unsupported schemes, proxy authentication: not transient.
        return {ModelError::Unavailable, false, -1, detail};
    }
}

// `retry-after-ms` (OpenAI, milliseconds) wins over `Retry-After` (seconds or an HTTP date).
int retryAfterMs(const QNetworkReply &reply)
{
    std::optional<std::chrono::milliseconds> wish = Http::parseRetryAfterMs(
        reply.rawHeader("retry-after-ms"));
    if (!wish)
        wish = Http::parseRetryAfter(reply.rawHeader("Retry-After"));
    // Bounded by Http::kMaxRetryAfter (a day), so it fits.
    return wish ? int(wish->count()) : -1;
}

// ---------------------------------------------------------------------------------------
// One model call: attempts, each with its own timeouts, and QTimer backoff between them.

class OpenAiReply final : public ChatReply
{
public:
    OpenAiReply(QNetworkAccessManager *network, const OpenAiConfig &config,
                const ChatRequest &request, std::uint64_t backoffSeed)
        : m_network(network)
        , m_config(config)
        , m_retryPolicy(config.retryPolicy())
        , m_backoff(m_retryPolicy, backoffSeed)
        , m_budget(request.budget)
        , m_chinese(lastUserMessageIsChinese(request))
        , m_origin(originOf(config.baseUrl))
        , m_body(requestBody(config, request, m_origin))
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
        m_message = Internal::ChatCompletionMessage();
        m_received.clear();
        m_streamBytes = 0;
        m_headersRead = false;
        m_eventStream = false;
        m_status = 0;

        QNetworkRequest request(completionsUrl(m_config.baseUrl));
        request.setHeader(QNetworkRequest::ContentTypeHeader, QByteArray("application/json"));
        request.setRawHeader("Accept",
                             m_config.stream ? QByteArray("text/event-stream")
                                             : QByteArray("application/json"));
        if (!m_config.apiKey.isEmpty())
            request.setRawHeader("Authorization", "Bearer " + m_config.apiKey.toUtf8());
        // Never followed: the key and the conversation would go wherever a 3xx points.
        request.setAttribute(QNetworkRequest::RedirectPolicyAttribute,
                             QNetworkRequest::ManualRedirectPolicy);
        for (const auto &[name, value] : m_config.extraHeaders)
            request.setRawHeader(name, value);

        // Sent once: Qt would send it again by itself on a connection closed before the
        // answer (oneshotbody.h); a new attempt is this layer's to decide, within the turn.
        QIODevice *body = Http::oneShotBody(m_body, this);
        QNetworkReply *reply = m_network->post(request, body);
        body->setParent(reply);
        // The socket is read no further ahead than this. Qt 6.4's HTTP thread drops a size
        // set before it started the request (it has no reply yet to apply it to) and then reads
        // ahead without limit, tens of MB past our own bounds (measured): so it is set again
        // once the request is out, before an answer can come, and once more with the headers.
        reply->setReadBufferSize(ReadBufferBytes);
        connect(reply, &QNetworkReply::requestSent, this,
                [reply] { reply->setReadBufferSize(ReadBufferBytes); });
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
        if (!status.isValid() || (status.toInt() >= 100 && status.toInt() < 200))
            return; // before a status line, or an interim 1xx: wait for the real headers
        m_reply->setReadBufferSize(ReadBufferBytes); // see startAttempt()
        m_headersRead = true;
        m_status = status.toInt();
        // The server decides: some ignore "stream": true and answer with one JSON body.
        m_eventStream = isSuccess()
            && m_reply->header(QNetworkRequest::ContentTypeHeader)
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
        // In slices: a read of many MB at once would turn into as many parsed events at once.
        while (m_reply && !isFinished()) {
            const QByteArray bytes = m_reply->read(ReadSliceBytes);
            if (bytes.isEmpty())
                return;
            takeBytes(bytes);
        }
    }

    void takeBytes(const QByteArray &bytes)
    {
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
        m_streamBytes += bytes.size();
        if (m_streamBytes > MaxBodyBytes) {
            failAttempt({ModelError::InvalidResponse, false, -1,
                         QStringLiteral("event stream larger than %1 bytes").arg(MaxBodyBytes)});
            return;
        }
        const SseChunk chunk = m_stream.feed(bytes);
        if (chunk.progress)
            m_idleTimer.start(m_config.idleTimeoutMs);
        if (!handleEvents(chunk.events))
            return;
        if (chunk.overflow) {
            failAttempt({ModelError::InvalidResponse, false, -1,
                         QStringLiteral("an event-stream line or event over %1 bytes")
                             .arg(SseStream::MaxLineBytes)});
        }
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
        const QUrl location = m_reply->attribute(QNetworkRequest::RedirectionTargetAttribute)
                                  .toUrl();
        const int rawStatus = m_reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
        releaseNetworkReply();

        if (m_status == 0 && rawStatus >= 100 && rawStatus < 200) {
            // Qt reads past "100 Continue" only: at any other 1xx the reply ends there.
            failAttempt(
                {ModelError::InvalidResponse, false, -1,
                 QStringLiteral("interim 1xx response (HTTP %1) ended the reply").arg(rawStatus)});
            return;
        }

        if (m_status >= 300 && m_status < 400) {
            // The host it points to is for the local log only.
            failAttempt(
                {ModelError::EndpointMoved, false, -1,
                 QStringLiteral("HTTP %1 redirect to host '%2', not followed")
                     .arg(m_status)
                     .arg(location.host().isEmpty() ? QStringLiteral("-") : location.host())});
            return;
        }
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
                failAttempt(
                    {ModelError::Truncated, true, -1,
                     QStringLiteral("stream broken off, network error %1").arg(int(error))});
            } else {
                failAttempt(classifyNetworkError(error));
            }
            return;
        }
        if (m_eventStream) {
            if (!handleEvents(m_stream.finish()))
                return;
            if (!m_message.finishReason.isEmpty()) {
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
        using Outcome = Internal::ChatCompletionRead::Outcome;
        for (const SseEvent &event : events) {
            const Internal::ChatCompletionRead read = Internal::readStreamEvent(event, &m_message);
            switch (read.outcome) {
            case Outcome::Ignored:
                continue;
            case Outcome::ErrorEvent:
                failAttempt({ModelError::Unavailable, true, -1,
                             QStringLiteral("an 'error' event in the stream")});
                return false;
            case Outcome::Done:
                releaseNetworkReply(); // the answer is complete, whatever the socket does
                completeAnswer();
                return false;
            case Outcome::Unparseable:
                failAttempt({ModelError::InvalidResponse, false, -1,
                             QStringLiteral("unparseable stream chunk")});
                return false;
            case Outcome::ErrorObject:
                failAttempt(errorInsideSuccess(serverErrorOf(event.data)));
                return false;
            case Outcome::Malformed:
                return failMalformed(read.detail);
            case Outcome::Read:
                if (!showText(read.text))
                    return false;
                continue;
            }
        }
        return true;
    }

    // Returns false when a receiver of contentDelta aborted the call.
    bool showText(const QString &text)
    {
        if (text.isEmpty())
            return true;
        // Leading whitespace is held back: a message of blanks alone is no answer, and once
        // anything is shown no other model may answer instead.
        if (!m_emitted && m_message.content.trimmed().isEmpty())
            return true;
        const QString shown = m_emitted ? text : m_message.content;
        m_emitted = true;
        Q_EMIT contentDelta(shown);
        return !isFinished(); // a receiver may abort() from its slot
    }

    // Returns false, for `return failMalformed(...)` where the attempt ends.
    bool failMalformed(const QString &detail)
    {
        failAttempt({ModelError::InvalidResponse, false, -1, detail});
        return false;
    }

    // An error object where an answer was due (a 200 body, or a chunk of a stream): an
    // overload to retry, unless it says the quota is gone.
    static Failure errorInsideSuccess(const ServerError &error)
    {
        const QString detail = QStringLiteral("error object in a 200 answer code=%1 type=%2")
                                   .arg(error.code, error.type);
        if (error.code == QLatin1String("insufficient_quota")
            || error.type == QLatin1String("insufficient_quota")) {
            return {ModelError::QuotaExhausted, false, -1, detail};
        }
        return {ModelError::Unavailable, true, -1, detail};
    }

    void handleJsonBody()
    {
        using Outcome = Internal::ChatCompletionRead::Outcome;
        const Internal::ChatCompletionRead read = Internal::readCompletionBody(m_received,
                                                                               &m_message);
        switch (read.outcome) {
        case Outcome::Unparseable:
            failAttempt(
                {ModelError::InvalidResponse, false, -1,
                 QStringLiteral("unparseable response body (%1 bytes)").arg(m_received.size())});
            return;
        case Outcome::ErrorObject:
            failAttempt(errorInsideSuccess(serverErrorOf(m_received)));
            return;
        case Outcome::Malformed:
            failMalformed(read.detail);
            return;
        case Outcome::Read:
        case Outcome::Ignored:
        case Outcome::Done:
        case Outcome::ErrorEvent:
            break;
        }
        if (!readable())
            return;
        if (!m_message.content.trimmed().isEmpty()) {
            m_emitted = true;
            Q_EMIT contentDelta(m_message.content);
            if (isFinished())
                return;
        }
        completeAnswer();
    }

    // A message that can be acted on (Internal::unreadableReason). Otherwise the attempt fails
    // as unreadable (never an empty answer on a completed turn) and returns false.
    bool readable()
    {
        const QString reason = Internal::unreadableReason(m_message);
        return reason.isEmpty() || failMalformed(reason);
    }

    void completeAnswer()
    {
        // DeepSeek ends a generation its servers could not finish this way: an overload.
        if (m_message.finishReason == QLatin1String("insufficient_system_resource")) {
            failAttempt({ModelError::Unavailable, true, -1,
                         QStringLiteral("finish_reason insufficient_system_resource")});
            return;
        }
        if (!readable())
            return;
        finishWith(answer(Internal::finishReasonFrom(m_message.finishReason)));
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
        const bool retry = failure.retryable && m_attempts < m_retryPolicy.maxAttempts()
            && budgetAllows(delay);
        qCWarning(lcLlm).noquote()
            << "model" << m_config.model << "at" << m_config.baseUrl.host() << "attempt"
            << m_attempts << "of" << m_retryPolicy.maxAttempts() << "failed:" << failure.detail
            << "->" << failure.code
            << (retry ? QStringLiteral("retry in %1 ms").arg(delay) : QStringLiteral("giving up"));
        if (!retry) {
            finishWith(errorResponse(failure.code));
            return;
        }
        m_backoffTimer.start(delay);
        // Last: a receiver may abort this reply.
        Q_EMIT retrying(m_config.model, m_attempts + 1, m_retryPolicy.maxAttempts(), delay);
    }

    int backoffMs(const Failure &failure)
    {
        std::optional<RetryPolicy::Millis> serverDelay;
        if (failure.retryAfterMs >= 0)
            serverDelay = RetryPolicy::Millis(failure.retryAfterMs);
        return int(m_backoff.next(std::max(1, m_attempts), serverDelay).count());
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
        response.content = m_message.content;
        response.toolCalls = m_message.toolCalls.calls();
        // Some servers (Ollama) say "stop" when the message is tool calls.
        response.finishReason = reason == FinishReason::Stop && !response.toolCalls.isEmpty()
            ? FinishReason::ToolCalls
            : reason;
        response.attempts = std::max(1, m_attempts);
        response.retries = std::max(0, m_attempts - 1);
        if (!m_message.reasoning.isEmpty()) {
            response.reasoningContent = m_message.reasoning;
            response.reasoningOrigin = m_origin;
        }
        return response;
    }

    ChatResponse errorResponse(const QString &code) const
    {
        ChatResponse response;
        response.model = m_config.model;
        response.content = m_message.content;
        response.finishReason = FinishReason::Error;
        response.errorCode = code;
        response.errorMessage = safeMessage(code, m_chinese);
        response.attempts = std::max(1, m_attempts);
        response.retries = std::max(0, m_attempts - 1);
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
    const RetryPolicy m_retryPolicy;
    BackoffSchedule m_backoff; // reads m_retryPolicy
    const RetryBudgetPtr m_budget;
    const bool m_chinese;
    const QString m_origin;
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
    Internal::ChatCompletionMessage m_message; // what the server said of its answer so far
    QByteArray m_received; // a JSON body (answer or error), not used for streams
    qsizetype m_streamBytes = 0; // all bytes of an event stream so far
};

} // namespace

OpenAiConfig OpenAiConfig::preset(const QString &name)
{
    OpenAiConfig config;
    if (name == QLatin1String("deepseek")) {
        // DeepSeek serves /chat/completions at its root (it accepts /v1 too).
        config.baseUrl = QUrl(QStringLiteral("https://api.deepseek.com"));
        // DeepSeek's current model name (its pricing page); it thinks by default.
        config.model = QStringLiteral("deepseek-v4-flash");
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

RetryPolicy OpenAiConfig::retryPolicy() const
{
    RetryPolicy policy;
    policy.maxRetries = std::max(0, maxAttempts - 1);
    policy.initialDelay = RetryPolicy::Millis(initialBackoffMs);
    policy.multiplier = 2.0;
    policy.maxDelay = RetryPolicy::Millis(std::max(0, retryAfterCapMs));
    policy.retryAfterCap = policy.maxDelay;
    policy.jitter = jitterSeed ? JitterMode::Full : JitterMode::None;
    policy.jitterSeed = jitterSeed.value_or(policy.jitterSeed);
    return policy;
}

OpenAiCompatibleModel::OpenAiCompatibleModel(OpenAiConfig config, QObject *parent)
    : ChatModel(parent)
    , m_config(std::move(config))
    , m_network(new QNetworkAccessManager(this))
{
    // Each request says so too; this is the second lock on the same door.
    m_network->setRedirectPolicy(QNetworkRequest::ManualRedirectPolicy);
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
    // One seed per reply (Weyl sequence over the model's): two replies never draw the same
    // waits, and the same console seed replays the same sequence.
    const std::uint64_t seed = m_config.jitterSeed.value_or(0)
        ^ (++m_replies * 0x9e3779b97f4a7c15ULL);
    return new OpenAiReply(m_network, m_config, request, seed);
}

} // namespace AgentConsole
