#include "httptransport.h"

#include "internal/httpexchange.h"

#include "../http/networkfailure.h"
#include "../http/oneshotbody.h"
#include "../oauth/authorizer.h"
#include "../oauth/bearerchallenge.h"
#include "../telemetry/logging.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QNetworkRequest>
#include <QPointer>
#include <QTimer>

#include <list>
#include <utility>

namespace AgentConsole::Mcp {

namespace {

constexpr qsizetype kMaxSessionIdBytes = 256;

// MCP allows visible ASCII only in a session id; anything else is not sent back.
bool validSessionId(const QByteArray &id)
{
    if (id.isEmpty() || id.size() > kMaxSessionIdBytes)
        return false;
    for (const char c : id) {
        if (c < 0x21 || c > 0x7e)
            return false;
    }
    return true;
}

// Whether a frame is the answer to `id` (read cheaply: the session parses it properly).
bool answers(const QByteArray &frame, const QJsonValue &id)
{
    const QJsonObject object = QJsonDocument::fromJson(frame).object();
    return object.value(QStringLiteral("id")) == id
        && (object.contains(QStringLiteral("result")) || object.contains(QStringLiteral("error")));
}

} // namespace

class HttpTransport::Private
{
public:
    using Kind = Internal::HttpExchange::Kind;
    using Stream = Internal::HttpExchange;

    // A POST refused for its token, waiting for the authorizer.
    struct Held
    {
        QByteArray request;
        QJsonValue awaitedId;
        int authRetries = 0;
    };

    Private(HttpTransport *q, Options options)
        : q(q)
        , options(std::move(options))
        , network(new QNetworkAccessManager(q))
    {
    }

    bool refusedForToken(Stream *stream, int status, QNetworkReply *reply);
    void sendHeld();
    void failHeld(const OAuth::SignInError &error);

    Stream *open(Kind kind, const QByteArray &body, const QJsonValue &awaitedId,
                 const QByteArray &lastEventId, int reconnects);
    void onReadyRead(Stream *stream);
    void onFinished(Stream *stream);
    void deliver(Stream *stream, const QByteArray &frame);
    void resume(Stream *stream);
    void failRequest(Stream *stream, const Error &error);
    void failTransport(const Error &error);
    void forget(Stream *stream);
    void sweepEnded();
    void finishClose();

    HttpTransport *q;
    Options options;
    QNetworkAccessManager *network;
    std::list<std::unique_ptr<Stream>> streams;
    QByteArray sessionId;
    QByteArray protocolVersion;
    bool closing = false;
    bool closedEmitted = false;
    bool failed = false;
    bool serverStreamRefused = false;
    bool sweepQueued = false;
    QList<Held> held;
    QList<QJsonValue> resumesDue; // requests whose stream waits for its `retry:` delay
};

HttpTransport::Private::Stream *HttpTransport::Private::open(Kind kind, const QByteArray &body,
                                                             const QJsonValue &awaitedId,
                                                             const QByteArray &lastEventId,
                                                             int reconnects)
{
    auto owned = std::make_unique<Stream>();
    Stream *stream = owned.get();
    stream->kind = kind;
    stream->awaitedId = awaitedId;
    stream->lastEventId = lastEventId;
    stream->reconnects = reconnects;
    stream->sse = SseStream(options.maxFrameBytes);
    const QNetworkRequest request = Internal::exchangeRequest(options, kind, sessionId,
                                                              protocolVersion, lastEventId);
    stream->request = kind == Kind::Post ? body : QByteArray();
    stream->carriedToken = request.hasRawHeader("Authorization") && options.authorizer;
    QNetworkReply *reply = nullptr;
    switch (kind) {
    case Kind::Post: {
        // Sent once (oneshotbody.h): Qt would send a tools/call again by itself on a
        // connection closed before the answer, and a write would act twice.
        QIODevice *upload = Http::oneShotBody(body, network);
        reply = network->post(request, upload);
        upload->setParent(reply);
        break;
    }
    case Kind::Resume:
    case Kind::Server:
        reply = network->get(request);
        break;
    case Kind::Delete:
        reply = network->deleteResource(request);
        break;
    }
    stream->reply = reply;
    streams.push_back(std::move(owned));
    QObject::connect(reply, &QNetworkReply::readyRead, q, [this, stream] { onReadyRead(stream); });
    QObject::connect(reply, &QNetworkReply::finished, q, [this, stream] { onFinished(stream); });
    return stream;
}

void HttpTransport::Private::onReadyRead(Stream *stream)
{
    QNetworkReply *reply = stream->reply;
    if (!reply)
        return;
    const int status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
    if (!stream->decided) {
        stream->decided = true;
        // Taken from the headers, before any event: initialize's answer may come as an SSE
        // event, and notifications/initialized must already carry the session id.
        const QByteArray newSession = reply->rawHeader(Internal::SessionHeader);
        if (sessionId.isEmpty() && validSessionId(newSession))
            sessionId = newSession;
        const QByteArray type = reply->header(QNetworkRequest::ContentTypeHeader).toByteArray();
        stream->isSse = status / 100 == 2
            && type.trimmed().toLower().startsWith("text/event-stream");
    }
    const Stream::Reading reading = stream->read(reply->readAll(), status, options.maxFrameBytes);
    for (const QByteArray &frame : reading.frames) {
        deliver(stream, frame);
        // Closed or failed while delivering; a stream let go of because its request was
        // answered still hands on what came with the answer.
        if (!stream->reply && !stream->ended)
            return;
    }
    if (!reading.oversized.isEmpty() && !stream->ended) {
        // As over stdio: a server that broke the bound of one message is not spoken to
        // again (docs/MCP.md, "What is bounded"). The request fails first, with what it was.
        const Error error = Error::of(Failure::Oversized, reading.oversized);
        failRequest(stream, error);
        forget(stream);
        failTransport(error);
    }
}

void HttpTransport::Private::deliver(Stream *stream, const QByteArray &frame)
{
    stream->reconnects = 0; // a stream that carries messages is healthy again
    if (!stream->awaitedId.isUndefined() && !stream->answered && answers(frame, stream->awaitedId))
        stream->answered = true;
    // A POST's stream (or its resumption) carries what the server sends about that request:
    // its answer, and its own requests on the way (an elicitation during a tools/call).
    const QJsonValue previous = std::exchange(q->m_deliveringFor, stream->awaitedId);
    Q_EMIT q->frameReceived(frame);
    q->m_deliveringFor = previous;
}

void HttpTransport::Private::onFinished(Stream *stream)
{
    QNetworkReply *reply = stream->reply;
    if (!reply)
        return;
    stream->reply = nullptr;
    reply->deleteLater();
    if (closing) {
        if (stream->kind == Kind::Delete)
            finishClose();
        forget(stream);
        return;
    }
    const int status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
    const int networkError = int(reply->error());
    const QByteArray newSession = reply->rawHeader(Internal::SessionHeader);
    if (sessionId.isEmpty() && validSessionId(newSession))
        sessionId = newSession;

    if (stream->kind == Kind::Server || stream->kind == Kind::Resume) {
        const bool refused = status != 0 && status / 100 != 2;
        if (refused && stream->kind == Kind::Server) {
            // 405: the server offers no stream of its own, which MCP allows; so does a 400
            // from a server that does not know GET. Either way it is not asked again.
            qCInfo(lcMcp).noquote()
                << q->describe() << "offers no server stream (HTTP" << status << ")";
            serverStreamRefused = true;
            forget(stream);
            return;
        }
        if (refused) {
            // The request went out and its answer is lost (a write may have run), whatever
            // the refusal says; a 404 for our session says too that the session expired.
            failRequest(stream,
                        Error::of(status == 401 || status == 403 ? Failure::AccessDenied
                                                                 : Failure::TransportClosed,
                                  QStringLiteral("resuming the stream got HTTP %1").arg(status),
                                  status));
            forget(stream);
            if (status == 404 && !sessionId.isEmpty())
                failTransport(Error::of(Failure::SessionExpired,
                                        QStringLiteral("resuming a stream got HTTP 404"), status));
            return;
        }
        if (!stream->isSse || stream->awaitedId.isUndefined() || !stream->answered) {
            resume(stream);
            return;
        }
        forget(stream);
        return;
    }

    if (Http::failedBelowHttp(networkError, status)) {
        // A broken SSE answer that named an event id can be resumed; anything else failed.
        if (stream->isSse && !stream->lastEventId.isEmpty() && !stream->answered
            && !stream->awaitedId.isUndefined()) {
            resume(stream);
            return;
        }
        const Http::NetworkFailure below = Http::networkFailureOf(networkError);
        const bool timedOut = below == Http::NetworkFailure::Aborted
            || below == Http::NetworkFailure::TimedOut;
        // Never connected: nothing was sent. Any other break came after the request may have
        // gone out: the answer was lost (for a write, it may have run).
        const Failure failure = timedOut                    ? Failure::Timeout
            : below == Http::NetworkFailure::NeverConnected ? Failure::TransportFailed
                                                            : Failure::TransportClosed;
        failRequest(stream,
                    Error::of(failure,
                              QStringLiteral("POST failed below HTTP: %1")
                                  .arg(Http::networkErrorName(networkError))));
        forget(stream);
        return;
    }
    if (stream->kind == Kind::Post && refusedForToken(stream, status, reply))
        return;
    if (status / 100 == 2 && stream->carriedToken && options.authorizer)
        options.authorizer->accepted();
    if (status / 100 != 2) {
        const QString detail = QStringLiteral("HTTP %1: %2")
                                   .arg(status)
                                   .arg(QString::fromUtf8(stream->body.left(512)));
        if (status == 404 && !sessionId.isEmpty()) {
            // The server forgot our session: everything in flight is lost with it.
            forget(stream);
            failTransport(Error::of(Failure::SessionExpired, detail, status));
            return;
        }
        Failure failure = Failure::Rejected;
        switch (Http::statusClassOf(status)) {
        case Http::StatusClass::AccessDenied:
            failure = Failure::AccessDenied;
            break;
        case Http::StatusClass::Throttled:
        case Http::StatusClass::ServerError:
            failure = Failure::TransportFailed;
            break;
        default:
            break;
        }
        // The body may be a JSON-RPC error for our request: the session reads it first.
        if (!stream->awaitedId.isUndefined() && answers(stream->body, stream->awaitedId)) {
            stream->answered = true;
            Q_EMIT q->frameReceived(stream->body);
        } else {
            failRequest(stream, Error::of(failure, detail, status));
        }
        forget(stream);
        return;
    }
    if (stream->isSse) {
        for (const QByteArray &frame : stream->remainingFrames())
            deliver(stream, frame);
        if (!stream->awaitedId.isUndefined() && !stream->answered) {
            // A graceful end before the answer is a pause, not a failure (SEP-1699): the
            // answer comes on a GET that resumes after the last event id.
            resume(stream);
            return;
        }
        forget(stream);
        return;
    }
    if (stream->awaitedId.isUndefined()) {
        // A notification or a response we sent: MCP's answer is 202 without a body. A body
        // here answers nothing (some servers echo an id-less result) and is not read.
        if (!stream->body.trimmed().isEmpty())
            qCInfo(lcMcp).noquote() << q->describe() << "answered a notification with a body;"
                                    << "ignored";
        forget(stream);
        return;
    }
    if (!stream->body.trimmed().isEmpty())
        deliver(stream, stream->body);
    if (!stream->answered)
        failRequest(stream,
                    Error::of(Failure::Malformed,
                              QStringLiteral("HTTP %1 without the answer").arg(status)));
    forget(stream);
}

void HttpTransport::Private::resume(Stream *stream)
{
    const bool serverStream = stream->kind == Kind::Server;
    if (const std::optional<QString> why = stream->whyNotResumable(options.maxReconnects)) {
        if (serverStream)
            qCWarning(lcMcp).noquote() << q->describe() << "server stream given up:" << *why;
        else
            failRequest(stream, Error::of(Failure::TransportClosed, *why));
        forget(stream);
        return;
    }
    const qint64 delay = stream->resumeDelayMs(options.defaultRetryMs, options.maxRetryMs);
    const Kind kind = serverStream ? Kind::Server : Kind::Resume;
    const QJsonValue awaited = stream->awaitedId;
    const QByteArray lastEventId = stream->lastEventId;
    const qint64 retryMs = stream->retryMs;
    const int reconnects = stream->reconnects + 1;
    forget(stream);
    if (!serverStream)
        resumesDue.append(awaited);
    qCInfo(lcMcp).noquote() << q->describe() << "resumes a stream in" << delay << "ms"
                            << (lastEventId.isEmpty() ? QByteArray("(no event id)")
                                                      : "after event " + lastEventId.left(64));
    auto *timer = new QTimer(q);
    timer->setSingleShot(true);
    timer->setTimerType(Qt::PreciseTimer); // the server's retry is a contract (SEP-1699)
    QObject::connect(timer, &QTimer::timeout, q,
                     [this, timer, kind, awaited, lastEventId, retryMs, reconnects] {
                         timer->deleteLater();
                         if (closing || failed)
                             return;
                         if (kind == Kind::Resume && !resumesDue.removeOne(awaited))
                             return; // its request ended meanwhile: nobody waits for that answer
                         Stream *next = open(kind, {}, awaited, lastEventId, reconnects);
                         next->retryMs = retryMs;
                     });
    timer->start(int(delay));
}

bool HttpTransport::Private::refusedForToken(Stream *stream, int status, QNetworkReply *reply)
{
    if (!options.authorizer || (status != 401 && status != 403))
        return false;
    const QByteArray challenge = reply->rawHeader("WWW-Authenticate");
    // A 403 asks for a new token only when it says the scope is too small (step-up); any
    // other 403 is a refusal the token cannot change.
    if (status == 403 && !OAuth::parseBearerChallenge(challenge).insufficientScope())
        return false;
    if (stream->authRetries >= options.maxAuthRetries) {
        options.authorizer->exhausted();
        failRequest(
            stream,
            Error::of(
                Failure::AuthRequired,
                QStringLiteral("HTTP %1 after %2 new tokens").arg(status).arg(stream->authRetries),
                int(OAuth::SignInFailure::TooManyAttempts)));
        forget(stream);
        return true;
    }
    qCInfo(lcMcp).noquote() << q->describe() << "refused a request for its token (HTTP" << status
                            << "); asking for a new one";
    held.append({stream->request, stream->awaitedId, stream->authRetries + 1});
    forget(stream);
    options.authorizer->challenge(status, challenge);
    return true;
}

void HttpTransport::Private::sendHeld()
{
    const QList<Held> waiting = std::exchange(held, {});
    if (closing || failed)
        return;
    for (const Held &message : waiting) {
        Stream *stream = open(Kind::Post, message.request, message.awaitedId, {}, 0);
        stream->authRetries = message.authRetries;
    }
}

void HttpTransport::Private::failHeld(const OAuth::SignInError &error)
{
    const QList<Held> waiting = std::exchange(held, {});
    for (const Held &message : waiting) {
        if (!message.awaitedId.isUndefined())
            Q_EMIT q->requestFailed(message.awaitedId,
                                    Error::of(Failure::AuthRequired, error.describe(),
                                              int(error.failure)));
    }
}

void HttpTransport::Private::failRequest(Stream *stream, const Error &error)
{
    if (QNetworkReply *reply = stream->reply) {
        stream->reply = nullptr;
        reply->abort();
        reply->deleteLater();
    }
    if (!stream->awaitedId.isUndefined() && !stream->answered) {
        stream->answered = true;
        Q_EMIT q->requestFailed(stream->awaitedId, error);
    } else {
        qCWarning(lcMcp).noquote() << q->describe() << error.describe();
    }
}

void HttpTransport::Private::failTransport(const Error &error)
{
    if (failed || closing)
        return;
    failed = true;
    Q_EMIT q->failed(error);
}

void HttpTransport::Private::sweepEnded()
{
    sweepQueued = false;
    streams.remove_if(
        [](const std::unique_ptr<Stream> &stream) { return stream->ended && !stream->reply; });
}

void HttpTransport::Private::forget(Stream *stream)
{
    if (QNetworkReply *reply = stream->reply) {
        stream->reply = nullptr;
        reply->abort();
        reply->deleteLater();
    }
    streams.remove_if([stream](const std::unique_ptr<Stream> &s) { return s.get() == stream; });
}

void HttpTransport::Private::finishClose()
{
    if (closedEmitted)
        return;
    closedEmitted = true;
    Q_EMIT q->closed();
}

HttpTransport::HttpTransport(Options options, QObject *parent)
    : Transport(parent)
    , d(std::make_unique<Private>(this, std::move(options)))
{
    if (OAuth::Authorizer *authorizer = d->options.authorizer) {
        connect(authorizer, &OAuth::Authorizer::authorized, this, [this] { d->sendHeld(); });
        connect(authorizer, &OAuth::Authorizer::refused, this,
                [this](const OAuth::SignInError &error) { d->failHeld(error); });
    }
}

HttpTransport::~HttpTransport()
{
    d->closing = true;
    for (const auto &stream : d->streams) {
        if (QNetworkReply *reply = stream->reply) {
            stream->reply = nullptr;
            reply->abort();
            delete reply;
        }
    }
}

void HttpTransport::start()
{
    QMetaObject::invokeMethod(this, &Transport::started, Qt::QueuedConnection);
}

void HttpTransport::send(const JsonRpcMessage &message)
{
    if (d->closing || d->failed)
        return;
    const QJsonValue awaited = message.kind == JsonRpcMessage::Kind::Request
        ? message.id
        : QJsonValue(QJsonValue::Undefined);
    d->open(Private::Kind::Post, message.toBytes(), awaited, {}, 0);
}

void HttpTransport::close()
{
    if (d->closing)
        return;
    d->closing = true;
    for (const auto &stream : d->streams) {
        if (QNetworkReply *reply = stream->reply) {
            stream->reply = nullptr;
            reply->abort();
            reply->deleteLater();
        }
    }
    // The streams themselves stay until the destructor: close() may be called from a frame
    // one of them is delivering.
    if (!d->sessionId.isEmpty() && !d->failed) {
        // Tells the server the session is over; not waited for longer than closeTimeoutMs.
        d->open(Private::Kind::Delete, {}, QJsonValue(QJsonValue::Undefined), {}, 0);
        return;
    }
    QMetaObject::invokeMethod(
        this, [this] { d->finishClose(); }, Qt::QueuedConnection);
}

void HttpTransport::requestEnded(const QJsonValue &id)
{
    d->resumesDue.removeAll(id);
    bool letGo = false;
    for (const auto &stream : d->streams) {
        if (stream->awaitedId != id || !stream->reply || stream->ended)
            continue;
        // A server may keep the stream open after the answer, or without one (a hung call,
        // comments for ever): each would hold one of the few connections the network stack
        // opens to a host, and requests after it, notifications/cancelled first, would wait.
        QNetworkReply *reply = stream->reply;
        stream->reply = nullptr;
        stream->ended = true;
        reply->abort();
        reply->deleteLater();
        letGo = true;
    }
    // Forgotten later: the session may be inside the delivery of that very stream.
    if (letGo && !std::exchange(d->sweepQueued, true))
        QMetaObject::invokeMethod(
            this, [this] { d->sweepEnded(); }, Qt::QueuedConnection);
}

void HttpTransport::setProtocolVersion(const QString &version)
{
    d->protocolVersion = version.toLatin1();
}

void HttpTransport::sessionInitialized()
{
    if (d->options.openServerStream && !d->serverStreamRefused && !d->closing)
        d->open(Private::Kind::Server, {}, QJsonValue(QJsonValue::Undefined), {}, 0);
}

QString HttpTransport::describe() const
{
    // Never the query or user info: they may carry a token.
    return QStringLiteral("http server %1")
        .arg(d->options.url
                 .adjusted(QUrl::RemoveQuery | QUrl::RemoveUserInfo | QUrl::RemoveFragment)
                 .toString());
}

QByteArray HttpTransport::sessionId() const
{
    return d->sessionId;
}

} // namespace AgentConsole::Mcp
