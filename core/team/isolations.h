#pragma once

#include "../resilience/breakerisolation.h"

#include <QDateTime>
#include <QHash>
#include <QList>
#include <QObject>
#include <QString>
#include <QStringList>
#include <QTimer>

#include <functional>
#include <memory>

namespace AgentConsole {

class CircuitBreakerRegistry;

namespace Internal {
class IsolationStore;
}

// A lead's isolation of a dependency for the whole team (docs/TEAM.md, "Isolating a
// dependency"), the service AgentRuntime::isolations() hands out. With a team database
// (--team) it keeps the isolations the database holds, heard through LISTEN/NOTIFY within a
// second and read again after every reconnect, and applies those in force to the console's
// breakers (an isolated breaker refuses every call at once, with the lead's words); end times
// are applied here, by this console's clock. Only a lead (a member of the database role
// agentconsole_lead, which the database itself enforces) may isolate or lift; everyone sees.
// Without a team database it is off and nothing changes.
//
// Lives on the GUI thread and never blocks it: the store has its own thread and connection.
class Isolations final : public QObject
{
    Q_OBJECT

public:
    // Connected: the connection is up and the isolations were read on it.
    enum class Connection { Off, Connecting, Connected, Lost };
    Q_ENUM(Connection)
    // How a request ended; message() words it for staff.
    enum class Outcome {
        Done,
        Off, // no team database
        NotLead,
        UnknownName,
        ReasonMissing,
        EndTimePassed,
        NotIsolated,
        Unavailable, // the team database could not be reached; nothing changed
    };
    Q_ENUM(Outcome)
    struct Answer
    {
        Outcome outcome = Outcome::Done;
        QString dependency;
        QString message; // staff words (the window's language; agent-cli's English)
    };
    using Clock = std::function<QDateTime()>; // now, UTC

    explicit Isolations(QObject *parent = nullptr);
    ~Isolations() override;

    // Starts keeping the isolations of the team database at `teamSpec` (a postgresql:// URL,
    // no password: libpq's .pgpass) for the staff member `staffId`, applied to `breakers`
    // (the runtime's; outlives this). `knownNames` lists the dependencies this console may
    // isolate (an unknown name is refused). False, with `error` in words, for a spec that
    // cannot be used.
    bool start(const QString &teamSpec, const QString &staffId, CircuitBreakerRegistry *breakers,
               std::function<QStringList()> knownNames, QString *error = nullptr);
    // A test's clock (end times); re-applies at once.
    void setClock(Clock nowUtc);
    // Applies the end times now (the clock's timer does it by itself at each end time).
    void applyEndTimes();

    bool isEnabled() const { return m_connection != Connection::Off; }
    Connection connection() const { return m_connection; }
    bool isLead() const { return m_lead; }
    QString role() const { return m_role; }
    QString staffId() const { return m_staffId; }
    // When the isolations were last read from the database (invalid: never).
    QDateTime lastRead() const { return m_lastRead; }
    // The isolations in force now (end times applied), by dependency.
    QList<BreakerIsolation> current() const;
    // The dependencies this console may name (sorted).
    QStringList knownNames() const;

    // Requests; each is answered once by answered(request, ...). A request refused here
    // (off, a reason missing, an unknown name, not a lead, an end time passed) is answered
    // too, on the next turn of the event loop.
    quint64 isolate(const QString &dependency, const QString &reason, const QDateTime &until = {});
    quint64 lift(const QString &dependency);

    // The words of the connection as the dock and agent-cli show it.
    QString connectionText() const;

Q_SIGNALS:
    // current(), connection(), isLead() changed.
    void changed();
    void answered(quint64 request, const AgentConsole::Isolations::Answer &answer);

private:
    void onRead(const QList<BreakerIsolation> &isolations);
    // The isolations in force now to the breakers; whether that changed them (changed()).
    bool apply();
    quint64 answerLater(Outcome outcome, const QString &dependency);
    QDateTime now() const;

    std::unique_ptr<Internal::IsolationStore> m_store;
    CircuitBreakerRegistry *m_breakers = nullptr;
    std::function<QStringList()> m_knownNames;
    Clock m_clock;
    QTimer m_endTimer;
    Connection m_connection = Connection::Off;
    bool m_connectedUnread = false; // connected, the isolations not read yet
    bool m_lead = false;
    QString m_role;
    QString m_staffId;
    QDateTime m_lastRead;
    QList<BreakerIsolation> m_rows; // as read, end times not applied
    QList<BreakerIsolation> m_applied;
    quint64 m_lastLocalRequest = 0;
    struct Pending
    {
        QString dependency;
        bool lift = false;
    };
    QHash<quint64, Pending> m_pending; // the store's requests
};

} // namespace AgentConsole

Q_DECLARE_METATYPE(AgentConsole::Isolations::Answer)
