#include "keptcompletionsretry.h"

#include "../../async/await.h"
#include "../../ledger/idempotencyledger.h"
#include "../../telemetry/logging.h"

#include <algorithm>

namespace AgentConsole::Internal {

KeptCompletionsRetry::KeptCompletionsRetry(IdempotencyLedger *ledger, QObject *parent)
    : QObject(parent)
    , m_ledger(ledger)
{
    m_timer.setSingleShot(true);
    connect(&m_timer, &QTimer::timeout, this, &KeptCompletionsRetry::tryNow);
}

void KeptCompletionsRetry::start()
{
    if (!m_ledger || m_asking || m_timer.isActive())
        return;
    m_delayMs = FirstDelayMs;
    tryNow();
}

void KeptCompletionsRetry::tryNow()
{
    m_asking = true;
    await(m_ledger->recordKept(), this, [this](qsizetype left) {
        m_asking = false;
        if (left == 0) {
            m_delayMs = FirstDelayMs;
            return;
        }
        qCInfo(lcAgent).noquote() << left << "ledger completion(s) still kept; next try in"
                                  << m_delayMs << "ms";
        m_timer.start(m_delayMs);
        m_delayMs = std::min(m_delayMs * 2, LongestDelayMs);
    });
}

} // namespace AgentConsole::Internal
