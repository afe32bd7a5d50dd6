#pragma once

#include "../resilience/cancellationtoken.h"
#include "../resilience/tooloperation.h"

#include <QList>
#include <QObject>
#include <QPair>
#include <QString>

#include <memory>

class QThreadPool;

namespace AgentConsole {

class SupportStore;
class TicketBackend;
class TurnJournal;

// Asks the ticket backend how many idempotency keys own more than one ticket
// (duplicate_business_object_count), at start and after every turn that wrote, and stores
// the figure with those turns' counters. One check at a time, on a thread of its own: a check
// asked for while one runs starts when it ends, since the running one may predate the write.
// A check that cannot reach the backend keeps the last figure: an alert must not go away just
// because the backend stopped answering.
class DuplicateTicketMonitor final : public QObject
{
    Q_OBJECT

public:
    // `session` names who asks; `journal` (may be null) keeps the figure with each turn.
    DuplicateTicketMonitor(const TrustedContext &session, TurnJournal *journal,
                           QObject *parent = nullptr);
    ~DuplicateTicketMonitor() override; // stop()

    // The backend asked from the next check on; `store` is the embedded store whose
    // connection a check on the monitor's thread releases (may be null).
    void setBackend(std::shared_ptr<const TicketBackend> tickets,
                    std::shared_ptr<SupportStore> store);
    // Checks now, or after the running check. With a turn (conversation and request id of a
    // turn that wrote), the next figure that predates no write is stored with it.
    void check(const QString &conversationId = {}, const QString &requestId = {});
    // Cancels a running check and waits for it (a cancelled check returns within
    // milliseconds). Called at shutdown, before anything the check uses goes away; nothing is
    // delivered afterwards.
    void stop();

    // Keys owning more than one ticket as last checked: -1 while unknown.
    int count() const { return m_count; }
    bool isChecking() const { return m_running; }

Q_SIGNALS:
    // A check finished; above 0 is an alert (one operationId, several tickets).
    void checked(int count);

private:
    void onChecked(int figure);

    const TrustedContext m_session;
    TurnJournal *const m_journal;
    std::shared_ptr<const TicketBackend> m_tickets;
    std::shared_ptr<SupportStore> m_store;
    int m_count = -1;
    // The check runs on a thread the monitor owns, so that it is over (cancelled if need be)
    // before the runtime and the application go away.
    std::unique_ptr<QThreadPool> m_pool;
    CancellationToken m_cancellation;
    bool m_running = false;
    bool m_wanted = false; // asked for while one was running: run another
    QList<QPair<QString, QString>> m_turnsAwaiting; // turns that wrote: the next figure
};

} // namespace AgentConsole
