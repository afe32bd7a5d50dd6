#include "mcpsession.h"

#include "../telemetry/logging.h"
#include "mcptransport.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QMetaEnum>
#include <QMetaMethod>

#include <algorithm>
#include <cmath>

namespace AgentConsole::Mcp {

namespace {

const QString kInitialize = QStringLiteral("initialize");
const QString kProgressToken = QStringLiteral("progressToken");
constexpr int kMaxLoggedChars = 512; // of a server's log message or error text

QString bounded(const QString &text)
{
    return text.size() <= kMaxLoggedChars ? text
                                          : text.left(kMaxLoggedChars) + QStringLiteral("…");
}

} // namespace

PendingRequest::PendingRequest(Session *session, qint64 id, QString method)
    : QObject(session)
    , m_session(session)
    , m_id(id)
    , m_method(std::move(method))
{
    m_idle.setSingleShot(true);
    m_idle.setTimerType(Qt::PreciseTimer);
    connect(&m_idle, &QTimer::timeout, this, [this] { m_session->onTimeout(this); });
}

void PendingRequest::cancel(const QString &reason)
{
    if (m_finished)
        return;
    m_session->sendCancelled(this, reason);
    m_session->finish(this, {{}, Error::of(Failure::Cancelled, reason), {}});
}

PendingElicitation::PendingElicitation(Session *session, QJsonValue id,
                                       ElicitationQuestion question, qint64 relatedId,
                                       QString relatedTag)
    : QObject(session)
    , m_session(session)
    , m_id(std::move(id))
    , m_question(std::move(question))
    , m_relatedId(relatedId)
    , m_relatedTag(std::move(relatedTag))
{
    m_bound.setSingleShot(true);
    m_bound.setTimerType(Qt::PreciseTimer);
    connect(&m_bound, &QTimer::timeout, this, [this] {
        m_session->endElicitation(this, End::Withdrawn,
                                  {{QStringLiteral("action"),
                                    elicitationActionName(ElicitationAction::Cancel)}});
    });
}

bool PendingElicitation::answer(ElicitationAction action, const QJsonObject &content,
                                ElicitationProblem *problem)
{
    if (m_finished)
        return false;
    QJsonObject result{{QStringLiteral("action"), elicitationActionName(action)}};
    if (action == ElicitationAction::Accept) {
        const QJsonObject filled = withDefaults(m_question, content);
        const ElicitationProblem found = checkAnswer(m_question, filled);
        if (found.isProblem()) {
            if (problem)
                *problem = found;
            return false;
        }
        result.insert(QStringLiteral("content"), filled);
    }
    m_session->endElicitation(this, End::Answered, result);
    return true;
}

QString Session::latestProtocolVersion()
{
    return supportedProtocolVersions().constFirst();
}

const QStringList &Session::supportedProtocolVersions()
{
    // What this client reads correctly: the offered version and the older ones whose
    // answers differ only in what we do not use (no batching since 2025-06-18, which we
    // still read; tool annotations since 2025-03-26, absent before).
    static const QStringList versions{QStringLiteral("2025-11-25"), QStringLiteral("2025-06-18"),
                                      QStringLiteral("2025-03-26"), QStringLiteral("2024-11-05")};
    return versions;
}

Session::Session(std::unique_ptr<Transport> transport, Options options, QObject *parent)
    : QObject(parent)
    , m_transport(std::move(transport))
    , m_options(std::move(options))
{
    qRegisterMetaType<AgentConsole::Mcp::Error>();
    qRegisterMetaType<AgentConsole::Mcp::Reply>();
    qRegisterMetaType<AgentConsole::Mcp::PendingElicitation *>();
    m_closeTimer.setSingleShot(true);
    connect(&m_closeTimer, &QTimer::timeout, this, [this] {
        qCWarning(lcMcp).noquote() << m_transport->describe() << "did not close in"
                                   << m_options.closeTimeoutMs << "ms; given up";
        setState(State::Closed);
        Q_EMIT closed();
    });
    connect(m_transport.get(), &Transport::started, this, [this] {
        if (m_state != State::Initializing)
            return;
        // Neither roots nor sampling: the server's requests for them are refused (method not
        // found), as a client that declares none must. Elicitation in form mode only, when
        // someone can answer (URL mode is not offered).
        QJsonObject capabilities;
        if (m_options.elicitation)
            capabilities.insert(QStringLiteral("elicitation"),
                                QJsonObject{{QStringLiteral("form"), QJsonObject{}}});
        QJsonObject params{{QStringLiteral("protocolVersion"), latestProtocolVersion()},
                           {QStringLiteral("capabilities"), capabilities},
                           {QStringLiteral("clientInfo"),
                            QJsonObject{{QStringLiteral("name"), m_options.clientName},
                                        {QStringLiteral("version"), m_options.clientVersion}}}};
        PendingRequest *init = send(kInitialize, params,
                                    {m_options.initializeTimeoutMs, 0, false, {}}, true);
        connect(init, &PendingRequest::finished, this, &Session::onInitialized);
    });
    connect(m_transport.get(), &Transport::frameReceived, this, &Session::onFrame);
    connect(m_transport.get(), &Transport::requestFailed, this,
            [this](const QJsonValue &id, const Error &error) {
                if (PendingRequest *request = m_pending.value(qint64(id.toDouble())))
                    finish(request, {{}, error, {}});
            });
    connect(m_transport.get(), &Transport::failed, this, &Session::fail);
    connect(m_transport.get(), &Transport::closed, this, [this] {
        if (m_state == State::Closing) {
            m_closeTimer.stop();
            setState(State::Closed);
            Q_EMIT closed();
        }
    });
}

Session::~Session()
{
    // Whoever still waits hears of it now (a tool attempt on a pool thread would otherwise
    // wait for its own timeout); the transport (a child process, HTTP replies) is ended by
    // its own destructor without waiting for the server.
    disconnect(m_transport.get(), nullptr, this, nullptr);
    withdrawElicitations(-2, false);
    const QList<PendingRequest *> pending = m_pending.values();
    for (PendingRequest *request : pending)
        finish(request,
               {{}, Error::of(Failure::NotConnected, QStringLiteral("the session ended")), {}});
}

void Session::start()
{
    if (m_state != State::Idle)
        return;
    setState(State::Initializing);
    m_transport->start();
}

void Session::close()
{
    if (m_state == State::Closing || m_state == State::Closed)
        return;
    const bool wasFailed = m_state == State::Failed;
    setState(State::Closing);
    withdrawElicitations(-2, !wasFailed);
    failAll(Error::of(Failure::Cancelled, QStringLiteral("the session is closing")), !wasFailed);
    m_closeTimer.start(m_options.closeTimeoutMs);
    m_transport->close();
}

PendingRequest *Session::request(const QString &method, const QJsonObject &params,
                                 const RequestOptions &options)
{
    return send(method, params, options, false);
}

void Session::notify(const QString &method, const QJsonObject &params)
{
    if (m_state == State::Ready
        || (m_state == State::Initializing
            && method.startsWith(QStringLiteral("notifications/initialized"))))
        m_transport->send(JsonRpcMessage::notification(method, params));
}

PendingRequest *Session::send(const QString &method, const QJsonObject &params,
                              const RequestOptions &options, bool allowBeforeReady)
{
    const qint64 id = m_nextId++;
    auto *request = new PendingRequest(this, id, method);
    const bool sendable = m_state == State::Ready
        || (allowBeforeReady && m_state == State::Initializing);
    if (!sendable || m_pending.size() >= m_options.maxInFlight) {
        const Error error = !sendable
            ? Error::of(Failure::NotConnected,
                        QStringLiteral("%1 while the session is %2")
                            .arg(method,
                                 QString::fromLatin1(
                                     QMetaEnum::fromType<State>().valueToKey(int(m_state)))))
            : Error::of(Failure::TooManyRequests,
                        QStringLiteral("%1 requests in flight").arg(m_pending.size()));
        // Finished later, so that the caller can connect to finished() first; pending until
        // then, so that a session destroyed meanwhile still finishes it.
        m_pending.insert(id, request);
        QMetaObject::invokeMethod(
            this,
            [this, guarded = QPointer<PendingRequest>(request), error] {
                if (guarded)
                    finish(guarded, {{}, error, {}});
            },
            Qt::QueuedConnection);
        return request;
    }
    request->m_tag = options.tag;
    request->m_deadline = options.deadline;
    request->m_timeoutMs = options.timeoutMs > 0 ? options.timeoutMs : m_options.requestTimeoutMs;
    request->m_hardMaximumMs = options.progress
        ? std::max<qint64>(options.hardMaximumMs, request->m_timeoutMs)
        : request->m_timeoutMs;
    QJsonObject sentParams = params;
    if (options.progress) {
        QJsonObject meta = sentParams.value(QStringLiteral("_meta")).toObject();
        meta.insert(kProgressToken, double(id)); // our request id is a unique token
        sentParams.insert(QStringLiteral("_meta"), meta);
    }
    m_pending.insert(id, request);
    request->m_age.start();
    request->m_idle.start(int(request->m_timeoutMs));
    m_transport->send(JsonRpcMessage::request(id, method, sentParams));
    return request;
}

void Session::onFrame(const QByteArray &frame)
{
    if (m_state == State::Closed || m_state == State::Failed)
        return;
    const ParsedFrame parsed = parseFrame(frame, m_options.limits);
    if (parsed.error.isError()) {
        // A server that writes anything but JSON-RPC breaks the protocol (stdout is the
        // channel): nothing it sends can be trusted to belong to a request any more.
        qCWarning(lcMcp).noquote() << m_transport->describe() << "sent an unreadable frame ("
                                   << frame.size() << "bytes):" << parsed.error.describe();
        fail(parsed.error);
        return;
    }
    for (const JsonRpcMessage &message : parsed.messages) {
        switch (message.kind) {
        case JsonRpcMessage::Kind::Result:
        case JsonRpcMessage::Kind::Error:
            onResponse(message);
            break;
        case JsonRpcMessage::Kind::Request:
            onServerRequest(message);
            break;
        case JsonRpcMessage::Kind::Notification:
            onNotification(message);
            break;
        }
        if (m_state == State::Failed || m_state == State::Closed)
            return;
    }
}

void Session::onResponse(const JsonRpcMessage &message)
{
    const qint64 id = message.id.isDouble() ? qint64(message.id.toDouble()) : -1;
    PendingRequest *request = m_pending.value(id);
    if (!request) {
        // A late answer to a request that timed out or was cancelled: normal, not an error.
        qCInfo(lcMcp).noquote()
            << m_transport->describe() << "answered request"
            << QJsonDocument(QJsonArray{message.id}).toJson(QJsonDocument::Compact)
            << "that nobody waits for";
        return;
    }
    if (message.kind == JsonRpcMessage::Kind::Error) {
        finish(request,
               {{},
                Error::of(Failure::RemoteError, bounded(message.errorMessage), message.errorCode),
                message.errorData});
        return;
    }
    finish(request, {message.result, {}, {}});
}

void Session::onServerRequest(const JsonRpcMessage &message)
{
    if (message.method == QLatin1String("ping")) {
        m_transport->send(JsonRpcMessage::resultFor(message.id, QJsonObject{}));
        return;
    }
    if (message.method == QLatin1String("elicitation/create") && m_options.elicitation) {
        onElicitation(message);
        return;
    }
    qCInfo(lcMcp).noquote() << m_transport->describe() << "asked for" << message.method
                            << "which this client does not offer";
    m_transport->send(JsonRpcMessage::errorFor(message.id, JsonRpcCode::MethodNotFound,
                                               QStringLiteral("Method not found")));
}

void Session::onElicitation(const JsonRpcMessage &message)
{
    const auto decline = [&](const QString &why) {
        qCInfo(lcMcp).noquote() << m_transport->describe() << "asked staff a question;"
                                << "declined:" << why;
        m_transport->send(JsonRpcMessage::resultFor(
            message.id,
            QJsonObject{
                {QStringLiteral("action"), elicitationActionName(ElicitationAction::Decline)}}));
    };
    QString problem;
    std::optional<ElicitationQuestion> question = parseElicitation(message.params, &problem);
    if (!question) {
        decline(problem);
        return;
    }
    if (m_elicitations.size() >= m_options.maxOpenElicitations) {
        decline(QStringLiteral("%1 questions are open already").arg(m_elicitations.size()));
        return;
    }
    if (!isSignalConnected(QMetaMethod::fromSignal(&Session::elicitationRequested))) {
        decline(QStringLiteral("nobody can answer"));
        return;
    }
    // Which request of ours it belongs to: the one whose answer stream carried it (HTTP);
    // else, where the transport cannot tell (stdio), the only tools/call in flight, if one.
    qint64 related = -1;
    const QJsonValue via = m_transport->deliveringFor();
    if (via.isDouble() && m_pending.contains(qint64(via.toDouble()))) {
        related = qint64(via.toDouble());
    } else {
        int calls = 0;
        for (const PendingRequest *request : std::as_const(m_pending)) {
            if (request->m_method == QLatin1String("tools/call")) {
                related = request->m_id;
                ++calls;
            }
        }
        if (calls != 1)
            related = -1;
    }
    PendingRequest *call = related >= 0 ? m_pending.value(related) : nullptr;
    const QString tag = call ? call->m_tag : QString();
    if (call) {
        // The call now waits on staff, not on the server: its idle clock stops while a
        // question of its is open, and only its hard maximum bounds the wait (never extended),
        // or the caller's own deadline when that comes first (a turn's).
        ++call->m_openQuestions;
        restartIdle(call);
        const QDeadlineTimer hardMaximum(
            std::max<qint64>(0, call->m_hardMaximumMs - call->m_age.elapsed()), Qt::PreciseTimer);
        question->answerBy = std::min(hardMaximum, call->m_deadline);
    } else {
        question->answerBy = QDeadlineTimer(m_options.elicitationTimeoutMs, Qt::PreciseTimer);
    }
    auto *pending = new PendingElicitation(this, message.id, std::move(*question), related, tag);
    m_elicitations.append(pending);
    pending->m_bound.start(m_options.elicitationTimeoutMs);
    qCInfo(lcMcp).noquote() << m_transport->describe() << "asks staff a question with"
                            << pending->m_question.fields.size() << "fields"
                            << (related >= 0 ? QStringLiteral("for request %1").arg(related)
                                             : QStringLiteral("for no known request"));
    Q_EMIT elicitationRequested(pending);
}

void Session::endElicitation(PendingElicitation *question, PendingElicitation::End how,
                             const QJsonObject &answer)
{
    if (question->m_finished)
        return;
    question->m_finished = true;
    question->m_bound.stop();
    m_elicitations.removeOne(question);
    // Its call (when it is still waiting) hears from the server again: its idle clock runs.
    if (PendingRequest *call = m_pending.value(question->m_relatedId);
        call && call->m_openQuestions > 0 && --call->m_openQuestions == 0) {
        restartIdle(call);
    }
    if (!answer.isEmpty() && (m_state == State::Ready || m_state == State::Closing)) {
        // Only the action is logged: what staff typed is theirs and the server's.
        const char *end = QMetaEnum::fromType<PendingElicitation::End>().valueToKey(int(how));
        qCInfo(lcMcp).noquote() << m_transport->describe() << "question answered:"
                                << answer.value(QStringLiteral("action")).toString() << end;
        m_transport->send(JsonRpcMessage::resultFor(question->m_id, answer));
    }
    Q_EMIT question->ended(how);
    question->deleteLater();
}

void Session::withdrawElicitations(qint64 relatedId, bool tellServer)
{
    const QList<PendingElicitation *> open = m_elicitations;
    const QJsonObject cancel{
        {QStringLiteral("action"), elicitationActionName(ElicitationAction::Cancel)}};
    for (PendingElicitation *question : open) {
        if (relatedId == -2 || question->m_relatedId == relatedId)
            endElicitation(question, PendingElicitation::End::Withdrawn,
                           tellServer ? cancel : QJsonObject{});
    }
}

void Session::onNotification(const JsonRpcMessage &message)
{
    if (message.method == QLatin1String("notifications/cancelled")) {
        // The server no longer wants an answer to its question.
        const QJsonValue id = message.params.value(QStringLiteral("requestId"));
        const QList<PendingElicitation *> open = m_elicitations;
        for (PendingElicitation *question : open) {
            if (question->m_id == id)
                endElicitation(question, PendingElicitation::End::CancelledByServer, {});
        }
        return;
    }
    if (message.method == QLatin1String("notifications/progress")) {
        const QJsonValue token = message.params.value(kProgressToken);
        PendingRequest *request = token.isDouble() ? m_pending.value(qint64(token.toDouble()))
                                                   : nullptr;
        if (!request || request->m_hardMaximumMs <= request->m_timeoutMs)
            return; // unknown token, or a request that did not ask for progress
        const double progress = message.params.value(QStringLiteral("progress")).toDouble(-1);
        // Progress must grow: a server repeating one value is not making any.
        if (!std::isfinite(progress) || progress <= request->m_lastProgress)
            return;
        request->m_lastProgress = progress;
        restartIdle(request);
        Q_EMIT request->progressed(
            progress, message.params.value(QStringLiteral("total")).toDouble(0),
            bounded(message.params.value(QStringLiteral("message")).toString()));
        return;
    }
    if (message.method == QLatin1String("notifications/tools/list_changed")) {
        Q_EMIT toolsChanged();
        return;
    }
    if (message.method == QLatin1String("notifications/message")) {
        qCInfo(lcMcp).noquote()
            << m_transport->describe() << "log"
            << message.params.value(QStringLiteral("level")).toString().left(16)
            << bounded(QString::fromUtf8(
                   QJsonDocument(message.params.value(QStringLiteral("data")).toObject())
                       .toJson(QJsonDocument::Compact)));
        return;
    }
    // resources, prompts: unused.
}

void Session::onInitialized(const Reply &reply)
{
    if (m_state != State::Initializing)
        return;
    if (!reply.ok()) {
        fail(reply.error);
        return;
    }
    const QJsonObject result = reply.result.toObject();
    const QString version = result.value(QStringLiteral("protocolVersion")).toString();
    if (!supportedProtocolVersions().contains(version)) {
        fail(Error::of(
            Failure::ProtocolVersion,
            QStringLiteral("the server speaks protocol version \"%1\"").arg(version.left(32))));
        return;
    }
    m_protocolVersion = version;
    m_serverInfo = result.value(QStringLiteral("serverInfo")).toObject();
    m_serverCapabilities = result.value(QStringLiteral("capabilities")).toObject();
    m_transport->setProtocolVersion(version);
    qCInfo(lcMcp).noquote() << m_transport->describe() << "initialized: protocol" << version
                            << "server"
                            << bounded(m_serverInfo.value(QStringLiteral("name")).toString())
                            << bounded(m_serverInfo.value(QStringLiteral("version")).toString());
    notify(QStringLiteral("notifications/initialized"));
    setState(State::Ready);
    m_transport->sessionInitialized();
    Q_EMIT ready();
}

void Session::onTimeout(PendingRequest *request)
{
    if (request->m_finished)
        return;
    const qint64 age = request->m_age.elapsed();
    const bool hardMaximum = age >= request->m_hardMaximumMs;
    const QString why = hardMaximum && request->m_hardMaximumMs > request->m_timeoutMs
        ? QStringLiteral("%1 ran past its hard maximum of %2 ms")
              .arg(request->m_method)
              .arg(request->m_hardMaximumMs)
        : QStringLiteral("no answer to %1 in %2 ms")
              .arg(request->m_method)
              .arg(request->m_timeoutMs);
    // MCP: initialize is never cancelled; everything else is, so the server can stop working.
    if (request->m_method != kInitialize)
        sendCancelled(request, QStringLiteral("timed out"));
    finish(request, {{}, Error::of(Failure::Timeout, why), {}});
}

// A request's idle clock runs from the server's last sign of work (its start, a progress, an
// answer to the server's question) for the idle timeout, and stops while staff have a
// question of the request open; the hard maximum bounds both.
void Session::restartIdle(PendingRequest *request)
{
    const qint64 left = std::max<qint64>(0, request->m_hardMaximumMs - request->m_age.elapsed());
    request->m_idle.start(
        int(request->m_openQuestions > 0 ? left : std::min(left, request->m_timeoutMs)));
}

void Session::finish(PendingRequest *request, Reply reply)
{
    if (request->m_finished)
        return;
    request->m_finished = true;
    request->m_idle.stop();
    m_pending.remove(request->m_id);
    // Its questions go with it: the wait for staff never outlives the request's deadline.
    withdrawElicitations(request->m_id, true);
    // The transport lets go of what it holds for it: an HTTP stream that a server keeps open
    // would hold one of the few connections to the host, and what follows (first the
    // notifications/cancelled just sent for it) would wait behind it.
    m_transport->requestEnded(QJsonValue(double(request->m_id)));
    if (reply.error.isError() && reply.error.failure != Failure::Cancelled)
        qCInfo(lcMcp).noquote() << m_transport->describe() << request->m_method << "request"
                                << request->m_id << "failed:" << reply.error.describe();
    Q_EMIT request->finished(reply);
    request->deleteLater();
}

void Session::sendCancelled(PendingRequest *request, const QString &reason)
{
    if (m_state != State::Ready && m_state != State::Closing)
        return;
    if (request->m_method == kInitialize || request->m_finished)
        return;
    m_transport->send(JsonRpcMessage::notification(
        QStringLiteral("notifications/cancelled"),
        QJsonObject{{QStringLiteral("requestId"), double(request->m_id)},
                    {QStringLiteral("reason"), reason}}));
}

void Session::failAll(const Error &error, bool tellServer)
{
    const QList<PendingRequest *> pending = m_pending.values();
    for (PendingRequest *request : pending) {
        if (tellServer)
            sendCancelled(request, error.detail);
        finish(request, {{}, error, {}});
    }
}

void Session::fail(const Error &error)
{
    if (m_state == State::Failed || m_state == State::Closed || m_state == State::Closing)
        return;
    m_lastError = error;
    qCWarning(lcMcp).noquote() << m_transport->describe() << "is down:" << error.describe();
    setState(State::Failed);
    withdrawElicitations(-2, false);
    failAll(error, false);
    Q_EMIT failed(error);
}

void Session::setState(State state)
{
    if (m_state == state)
        return;
    m_state = state;
    Q_EMIT stateChanged(state);
}

} // namespace AgentConsole::Mcp
