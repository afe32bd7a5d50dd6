#pragma once

#include "elicitation.h"
#include "jsonrpc.h"
#include "mcperror.h"

#include <QDeadlineTimer>
#include <QElapsedTimer>
#include <QHash>
#include <QJsonObject>
#include <QObject>
#include <QPointer>
#include <QStringList>
#include <QTimer>

#include <memory>

namespace AgentConsole::Mcp {

class Transport;

// What a request to the server came back with: its result, or a classified error (a JSON-RPC
// error keeps its code in error.code and its message, bounded, in error.detail).
struct Reply
{
    QJsonValue result;
    Error error;
    QJsonValue errorData; // a JSON-RPC error's data member, if any

    bool ok() const { return !error.isError(); }
};

struct RequestOptions
{
    int timeoutMs = 0; // 0: the session's requestTimeoutMs. With progress: the idle timeout
    int hardMaximumMs = 0; // with progress: the longest it may run however it progresses
    bool progress = false; // send a progressToken; progress restarts the timeout
    // Who the request is for (McpTool: the call's operation id), handed to the questions the
    // server asks while it runs (PendingElicitation::relatedTag()).
    QString tag;
    // When the caller gives up on the request (McpTool: its attempt's end, which the turn's
    // deadline caps). A question the server asks while it runs is withdrawn by then at the
    // latest, so that is when it must be answered by (ElicitationQuestion::answerBy).
    QDeadlineTimer deadline{QDeadlineTimer::Forever};
};

// One request in flight. It ends exactly once (finished()), by its answer, its timeout, its
// cancellation or the session's end; the session deletes it (deleteLater) right after, so hold
// it in a QPointer. A request that asked for progress is kept alive by each progress
// notification, up to its hard maximum.
class PendingRequest final : public QObject
{
    Q_OBJECT

public:
    qint64 id() const { return m_id; }
    const QString &method() const { return m_method; }
    const QString &tag() const { return m_tag; }
    bool isFinished() const { return m_finished; }
    // Ends the request at once with Cancelled and tells the server (notifications/cancelled).
    void cancel(const QString &reason = QStringLiteral("cancelled by the client"));

Q_SIGNALS:
    void progressed(double progress, double total, const QString &message);
    void finished(const AgentConsole::Mcp::Reply &reply);

private:
    friend class Session;
    PendingRequest(class Session *session, qint64 id, QString method);

    Session *m_session;
    qint64 m_id;
    QString m_method;
    QString m_tag;
    QTimer m_idle;
    QElapsedTimer m_age;
    qint64 m_timeoutMs = 0;
    qint64 m_hardMaximumMs = 0;
    QDeadlineTimer m_deadline{QDeadlineTimer::Forever}; // the caller's (RequestOptions)
    double m_lastProgress = -1;
    int m_openQuestions = 0; // staff's questions of this request still open (elicitation)
    bool m_finished = false;
};

// A server's question to staff (elicitation/create, form mode) waiting for its answer. It
// ends exactly once (ended()): answered, or withdrawn when the request it belongs to ends
// (its hard maximum, its cancellation: while the question is open the request's idle clock
// stops, since the server waits on staff, but its hard maximum is never extended), when it
// waited its own bound, when the server cancels it, or when the session ends. A withdrawn
// question is answered "cancel" where the server still listens. The session deletes it
// (deleteLater) right after: hold it in a QPointer.
class PendingElicitation final : public QObject
{
    Q_OBJECT

public:
    enum class End { Answered, Withdrawn, CancelledByServer };
    Q_ENUM(End)

    const ElicitationQuestion &question() const { return m_question; }
    // The request of ours it belongs to (a tools/call), and that request's tag; -1 and empty
    // when unknown.
    qint64 relatedRequestId() const { return m_relatedId; }
    const QString &relatedTag() const { return m_relatedTag; }
    bool isFinished() const { return m_finished; }
    // Sends staff's answer. Accept's content has the defaults applied (withDefaults) and must
    // then fit the question; otherwise nothing is sent, false is returned and `problem` says
    // which field. False also once the question has ended.
    bool answer(ElicitationAction action, const QJsonObject &content = {},
                ElicitationProblem *problem = nullptr);

Q_SIGNALS:
    void ended(AgentConsole::Mcp::PendingElicitation::End how);

private:
    friend class Session;
    PendingElicitation(class Session *session, QJsonValue id, ElicitationQuestion question,
                       qint64 relatedId, QString relatedTag);

    Session *m_session;
    QJsonValue m_id;
    ElicitationQuestion m_question;
    qint64 m_relatedId;
    QString m_relatedTag;
    QTimer m_bound;
    bool m_finished = false;
};

// An MCP client session over one transport: the lifecycle (initialize with version
// negotiation, notifications/initialized, ping, shutdown), requests with ids and bounded
// waits, the server's own requests (ping is answered; elicitation/create, when offered, goes to
// whoever listens to elicitationRequested(), else is declined; everything else refused),
// progress and list-changed notifications. Lives on one thread with an event loop; nothing blocks.
class Session final : public QObject
{
    Q_OBJECT

public:
    enum class State { Idle, Initializing, Ready, Closing, Closed, Failed };
    Q_ENUM(State)

    struct Options
    {
        QString clientName = QStringLiteral("agent-console");
        QString clientVersion = QStringLiteral("1.0.0");
        int initializeTimeoutMs = 10000;
        int requestTimeoutMs = 30000;
        int maxInFlight = 64;
        int closeTimeoutMs = 5000; // the transport's clean end, then closed() regardless
        FrameLimits limits;
        // Declares the elicitation capability (form mode) and asks elicitationRequested()'s
        // listener; off: elicitation/create is refused as unknown, as before.
        bool elicitation = false;
        // How long a question that belongs to no known request may wait for its answer; one
        // that belongs to a request waits at most as long as that request runs, and this.
        int elicitationTimeoutMs = 300000;
        int maxOpenElicitations = 4; // at once; more are declined
    };

    using RequestOptions = Mcp::RequestOptions;

    // The version we offer, and every version whose answer we accept (newest first).
    static QString latestProtocolVersion();
    static const QStringList &supportedProtocolVersions();

    Session(std::unique_ptr<Transport> transport, Options options, QObject *parent = nullptr);
    ~Session() override;

    void start();
    void close();

    State state() const { return m_state; }
    QString protocolVersion() const { return m_protocolVersion; }
    QJsonObject serverInfo() const { return m_serverInfo; }
    QJsonObject serverCapabilities() const { return m_serverCapabilities; }
    Error lastError() const { return m_lastError; }
    Transport *transport() const { return m_transport.get(); }
    int inFlight() const { return int(m_pending.size()); }

    // Null only never: a request that cannot be sent (not ready, too many in flight) finishes
    // at once, on the next turn of the event loop, with its error.
    PendingRequest *request(const QString &method, const QJsonObject &params = {},
                            const RequestOptions &options = RequestOptions());
    void notify(const QString &method, const QJsonObject &params = {});
    PendingRequest *ping(int timeoutMs = 0)
    {
        RequestOptions options;
        options.timeoutMs = timeoutMs;
        return request(QStringLiteral("ping"), {}, options);
    }

Q_SIGNALS:
    void stateChanged(AgentConsole::Mcp::Session::State state);
    void ready();
    void failed(const AgentConsole::Mcp::Error &error);
    void closed();
    void toolsChanged(); // notifications/tools/list_changed
    // The server asks staff a question (Options::elicitation). Answer with question->answer();
    // with nobody connected it is declined.
    void elicitationRequested(AgentConsole::Mcp::PendingElicitation *question);

private:
    friend class PendingRequest;
    friend class PendingElicitation;
    void onElicitation(const JsonRpcMessage &message);
    void endElicitation(PendingElicitation *question, PendingElicitation::End how,
                        const QJsonObject &answer);
    void withdrawElicitations(qint64 relatedId, bool tellServer);
    PendingRequest *send(const QString &method, const QJsonObject &params,
                         const RequestOptions &options, bool allowBeforeReady);
    void onFrame(const QByteArray &frame);
    void onResponse(const JsonRpcMessage &message);
    void onServerRequest(const JsonRpcMessage &message);
    void onNotification(const JsonRpcMessage &message);
    void onInitialized(const Reply &reply);
    void onTimeout(PendingRequest *request);
    void restartIdle(PendingRequest *request);
    void finish(PendingRequest *request, Reply reply);
    void sendCancelled(PendingRequest *request, const QString &reason);
    void fail(const Error &error);
    void setState(State state);
    void failAll(const Error &error, bool tellServer);

    std::unique_ptr<Transport> m_transport;
    Options m_options;
    State m_state = State::Idle;
    QString m_protocolVersion;
    QJsonObject m_serverInfo;
    QJsonObject m_serverCapabilities;
    Error m_lastError;
    qint64 m_nextId = 1;
    QHash<qint64, PendingRequest *> m_pending;
    QList<PendingElicitation *> m_elicitations; // open ones, in the order asked
    QTimer m_closeTimer;
};

} // namespace AgentConsole::Mcp

Q_DECLARE_METATYPE(AgentConsole::Mcp::Reply)
Q_DECLARE_METATYPE(AgentConsole::Mcp::PendingElicitation *)
