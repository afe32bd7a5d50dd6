#pragma once

#include <QList>
#include <QString>

#include <chrono>

namespace AgentConsole {

// A dependency whose circuit breaker is not closed.
struct DependencyStatus
{
    enum class Breaker { Closed, HalfOpen, Open }; // from the mildest to the worst

    QString dependency; // the breaker's name, e.g. "model:127.0.0.1:8080"
    Breaker breaker = Breaker::Closed;
    std::chrono::milliseconds openCooldown{0}; // how long an open breaker fails fast
};

// What the window shows about the running console, decided in core: the model that answers,
// the breakers that are not closed, and the tool retry policy with its worst case.
struct RuntimeStatus
{
    QString modelName;            // empty until the runtime is ready
    bool offlineFallback = false; // a remote model, and the offline demo model when it fails
    // The breakers that are open, then those half-open, each in the registry's order.
    QList<DependencyStatus> troubledDependencies;
    // The worst state of any breaker: Closed when none is open or half-open.
    DependencyStatus::Breaker worstBreaker = DependencyStatus::Breaker::Closed;
    QString toolPolicy; // "3 attempts × 2 s, backoff 200 ms ×2 ≤ 1 s; worst case 6.6 s"
    std::chrono::milliseconds toolWorstCase{0}; // the longest one tool call can take
};

} // namespace AgentConsole
