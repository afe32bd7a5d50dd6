#include "duplicateticketmonitor.h"

#include "../async/await.h"
#include "../ledger/turnjournal.h"
#include "../support/supportstore.h"
#include "../support/ticketbackend.h"
#include "../telemetry/counters.h"
#include "../telemetry/logging.h"

#include <QThreadPool>
#include <QtConcurrent/QtConcurrentRun>

#include <utility>

namespace AgentConsole {

DuplicateTicketMonitor::DuplicateTicketMonitor(const TrustedContext &session, TurnJournal *journal,
                                               QObject *parent)
    : QObject(parent)
    , m_session(session)
    , m_journal(journal)
{
}

DuplicateTicketMonitor::~DuplicateTicketMonitor()
{
    stop();
}

void DuplicateTicketMonitor::setBackend(std::shared_ptr<const TicketBackend> tickets,
                                        std::shared_ptr<SupportStore> store)
{
    m_tickets = std::move(tickets);
    m_store = std::move(store);
}

void DuplicateTicketMonitor::stop()
{
    if (m_pool) {
        m_cancellation.cancel();
        m_pool->waitForDone(); // a cancelled check returns within milliseconds
    }
}

void DuplicateTicketMonitor::check(const QString &conversationId, const QString &requestId)
{
    if (!requestId.isEmpty())
        m_turnsAwaiting.append({conversationId, requestId});
    if (!m_tickets)
        return;
    if (m_running) {
        m_wanted = true; // a check that started before this turn's write ended
        return;
    }
    m_running = true;
    if (!m_pool) {
        m_pool = std::make_unique<QThreadPool>();
        m_pool->setMaxThreadCount(1);
    }
    await(QtConcurrent::run(m_pool.get(),
                            [backend = m_tickets, store = m_store, context = m_session,
                             cancel = m_cancellation] {
                                const std::optional<int> count = backend->duplicateKeyCount(
                                    context, cancel);
                                if (store)
                                    store->releaseThreadConnection();
                                return count.value_or(-1);
                            }),
          this, [this](int figure) { onChecked(figure); });
}

void DuplicateTicketMonitor::onChecked(int figure)
{
    m_running = false;
    // A check that could not reach the backend keeps the last figure. The turns waiting for
    // a figure wait for the next check.
    if (figure < 0)
        qCWarning(lcAgent).noquote() << "the duplicate check could not reach the backend";
    else
        m_count = figure;
    if (figure > 0)
        qCCritical(lcAgent).noquote() << figure << "idempotency key(s) own more than one ticket";
    if (std::exchange(m_wanted, false)) {
        check(); // the figure may predate a write: only the next one counts
    } else if (figure >= 0) {
        const auto turns = std::exchange(m_turnsAwaiting, {});
        for (const auto &[conversationId, requestId] : turns) {
            if (m_journal)
                m_journal->mergeCounters(
                    conversationId, requestId,
                    {{Metrics::counterName(Metrics::Counter::DuplicateBusinessObject), figure}});
        }
    }
    Q_EMIT checked(m_count);
}

} // namespace AgentConsole
