#pragma once

#include <QObject>
#include <QTimer>

namespace AgentConsole {
class IdempotencyLedger;
}

namespace AgentConsole::Internal {

// While the ledger keeps completions its store could not take (an outage during a write),
// asks it to record them again, with backoff: 1 s, doubled up to a minute, from the start of
// the loop that owns it and after each kept completion. Stops when none is kept. A replay
// does not wait for it: the ledger records what it keeps before each operation anyway.
class KeptCompletionsRetry final : public QObject
{
public:
    static constexpr int FirstDelayMs = 1000;
    static constexpr int LongestDelayMs = 60000;

    KeptCompletionsRetry(IdempotencyLedger *ledger, QObject *parent);

    // Tries now (unless a try is under way or due), then again while any is kept.
    void start();

private:
    void tryNow();

    IdempotencyLedger *m_ledger;
    QTimer m_timer;
    int m_delayMs = FirstDelayMs;
    bool m_asking = false;
};

} // namespace AgentConsole::Internal
