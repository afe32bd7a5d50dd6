#pragma once

// Not part of the room's face: the isolations' store on the team database (Isolations uses it).

#include "../../ledger/postgresledger.h"
#include "../../resilience/breakerisolation.h"

#include <QList>
#include <QObject>
#include <QString>

#include <chrono>
#include <memory>

class QThread;

namespace AgentConsole::Internal {

class IsolationWorker;

// The isolations in the team database, on a connection and a thread of their own: the thread
// runs an event loop, because QPSQL hears NOTIFY through a socket notifier on the thread that
// owns the connection. It LISTENs on agentconsole_isolations and reads the current isolations
// whenever the connection has something to say; a connection that fails (a read, a heartbeat
// query, a terminated backend) is closed and opened again with backoff, and the isolations
// are read again once it is back. Made and used on one thread (the GUI thread); its answers
// come back there as signals.
class IsolationStore final : public QObject
{
    Q_OBJECT

public:
    struct Options
    {
        PostgresLocation location;
        std::chrono::milliseconds connectTimeout{5000};
        // A query that proves the connection alive while nothing is said on it.
        std::chrono::milliseconds heartbeat{5000};
        std::chrono::milliseconds firstBackoff{200};
        std::chrono::milliseconds maxBackoff{5000};
    };

    enum class WriteOutcome { Done, NotLead, EndTimePassed, NotIsolated, Unavailable };
    Q_ENUM(WriteOutcome)

    explicit IsolationStore(const Options &options, QObject *parent = nullptr);
    // Closes the connection on its thread and stops the thread; waits a moment for it, never
    // for a connection attempt to time out.
    ~IsolationStore() override;

    void start();
    // A request answered once by written(request, ...). `isolation.dependency`, `reason`,
    // `leadStaffId` and `until` are the client's; the role and the time are the database's.
    quint64 isolate(const BreakerIsolation &isolation);
    quint64 lift(const QString &dependency, const QString &staffId);

Q_SIGNALS:
    // Connected (lead: whether the session's role is a member of agentconsole_lead; role: its
    // name) or not (detail: local log only).
    void connected(bool lead, const QString &role);
    void disconnected(const QString &detail);
    // Every isolation not lifted, as read now (end times are the reader's to apply).
    void isolationsRead(const QList<AgentConsole::BreakerIsolation> &isolations);
    void written(quint64 request, AgentConsole::Internal::IsolationStore::WriteOutcome outcome,
                 const QString &detail);

private:
    std::unique_ptr<QThread> m_thread;
    IsolationWorker *m_worker = nullptr; // lives on m_thread; deleted there
    quint64 m_lastRequest = 0;
};

} // namespace AgentConsole::Internal
