#pragma once

#include "breakerisolation.h"

#include <QHash>
#include <QObject>
#include <QString>
#include <QStringList>

#include <chrono>
#include <functional>
#include <vector>

namespace AgentConsole {

// Fails fast while a dependency (one model provider, one tool backend — never one breaker for
// everything) is known to be down, so that staff get "temporarily unavailable" at once rather
// than after every call has waited out its timeouts and retries (DESIGN.md, "Circuit breakers").
//
//   CLOSED    calls pass. Each recorded call enters a sliding window of the last windowSize
//             calls; once it holds minimumCalls, a failure rate >= failureRateThreshold (or,
//             when slowCallThreshold > 0, a slow-call rate >= slowCallRateThreshold) opens it.
//   OPEN      tryAcquire() refuses every call until openCooldown has passed; the next
//             tryAcquire() after that moves to HALF_OPEN (lazily: nothing ticks while open).
//   HALF_OPEN at most halfOpenProbes calls are let through. Any failed probe re-opens it; once
//             all probes succeeded it closes with an empty window — unless their slow-call rate
//             alone reaches the slow threshold, which re-opens it as in CLOSED.
//
// A caller that was admitted ends with exactly one of recordSuccess(), recordFailure() or
// release() (cancelled, or an outcome that says nothing about the dependency's health, such as
// a rejected request). Results of calls admitted before the breaker opened are ignored while it
// is OPEN; in HALF_OPEN such a straggler can only be told apart from a probe when no probe is
// outstanding (the API carries no per-call token), in which case it is ignored too.
//
// ISOLATED (an override, not a state of its own): while a lead's isolation covers the breaker
// (setIsolation), tryAcquire() refuses every call, whatever the state underneath, and the
// isolation says who, when and why. The state underneath keeps its window and goes on as
// before once the isolation is lifted or its end time has come.
//
// Lives on one thread (the one that runs the executor and the model calls); not thread-safe.
class CircuitBreaker final : public QObject
{
    Q_OBJECT

public:
    struct Options
    {
        int windowSize = 20;
        int minimumCalls = 10;
        double failureRateThreshold = 0.5;
        std::chrono::milliseconds slowCallThreshold{0}; // 0 = slow calls are not judged
        double slowCallRateThreshold = 1.0;
        std::chrono::milliseconds openCooldown{10000};
        int halfOpenProbes = 2;
    };

    enum class State { Closed, Open, HalfOpen };
    Q_ENUM(State)

    // A monotonic clock in milliseconds; injectable so that tests need not wait out cool-downs.
    using Clock = std::function<qint64()>;

    // A change of state, for diagnostics: when (on the breaker's clock) and why.
    struct Transition
    {
        State from = State::Closed;
        State to = State::Closed;
        qint64 atMs = -1; // -1: the breaker has not changed state yet
        QString reason;
    };

    CircuitBreaker(QString dependency, const Options &options, QObject *parent = nullptr);
    ~CircuitBreaker() override;

    void setClock(Clock nowMs);

    // Whether a call may go to the dependency now. A true answer must be followed by one of
    // recordSuccess(), recordFailure() or release().
    bool tryAcquire();
    // A lead's isolation (a null one lifts it); isolationChanged follows a change.
    void setIsolation(const BreakerIsolation &isolation);
    const BreakerIsolation &isolation() const { return m_isolation; }
    bool isIsolated() const { return !m_isolation.isNull(); }
    void recordSuccess(std::chrono::milliseconds duration);
    void recordFailure(std::chrono::milliseconds duration);
    void release();
    // Closes the breaker with an empty window, whatever its state (a person asked: the
    // diagnostics dock's Reset). Calls admitted before are judged in the new window, as any
    // call is; stateChanged follows when the state was not CLOSED.
    void reset();

    // Everything the breaker has counted and decided, to be put back later: a scenario run
    // leaves the breakers it touched as it found them (state, window, counts).
    struct Snapshot
    {
        State state = State::Closed;
        std::vector<bool> windowFailed; // CLOSED: the window, oldest first
        std::vector<bool> windowSlow;
        qint64 openedAtMs = 0;
        int openCount = 0;
        int rejectedCount = 0;
        Transition lastTransition;
    };
    Snapshot snapshot() const;
    // Puts a snapshot back (a default one: a new breaker's state). stateChanged follows when
    // the state changes, as with reset(); it counts no opening.
    void restore(const Snapshot &snapshot);

    State state() const { return m_state; }
    QString dependency() const { return m_dependency; }
    const Options &options() const { return m_options; }

    // How long an OPEN breaker still refuses calls; zero when it is not OPEN or its cool-down
    // is over (the next tryAcquire() then probes). Shown on a refused call's card.
    std::chrono::milliseconds cooldownLeft() const;

    int openCount() const { return m_openCount; } // transitions into OPEN
    int rejectedCount() const { return m_rejectedCount; } // calls refused while OPEN/HALF_OPEN
    // The window as it stands (CLOSED only; empty otherwise), for diagnostics and tests.
    int windowCalls() const { return int(m_window.size()); }
    int windowFailures() const { return m_failures; }
    // The last change of state (atMs < 0 when there was none) and the clock it is read by.
    const Transition &lastTransition() const { return m_lastTransition; }
    qint64 nowMs() const { return m_now(); }

Q_SIGNALS:
    void stateChanged(const QString &dependency, AgentConsole::CircuitBreaker::State from,
                      AgentConsole::CircuitBreaker::State to);
    void isolationChanged(const QString &dependency);

private:
    struct Sample
    {
        bool failed = false;
        bool slow = false;
    };

    void record(bool failed, std::chrono::milliseconds duration);
    void recordInWindow(const Sample &sample);
    void recordProbe(const Sample &sample);
    bool isSlow(std::chrono::milliseconds duration) const;
    void transitionTo(State to, const QString &reason);
    void resetWindow();

    const QString m_dependency;
    const Options m_options;
    Clock m_now;
    State m_state = State::Closed;

    // CLOSED: a ring buffer of the last windowSize samples, with running counts.
    std::vector<Sample> m_window;
    std::size_t m_next = 0; // where the next sample goes once the window is full
    int m_failures = 0;
    int m_slow = 0;

    qint64 m_openedAtMs = 0;
    // HALF_OPEN: probes handed out and not yet ended, and those that ended well.
    int m_probesOutstanding = 0;
    int m_probesSucceeded = 0;
    int m_probesSlow = 0;

    int m_openCount = 0;
    int m_rejectedCount = 0;
    Transition m_lastTransition;
    BreakerIsolation m_isolation;
};

// One breaker per dependency name, created on first use with shared default options. Re-emits
// every breaker's stateChanged and counts circuit_breaker_open_count over all of them.
class CircuitBreakerRegistry final : public QObject
{
    Q_OBJECT

public:
    explicit CircuitBreakerRegistry(const CircuitBreaker::Options &defaults = {},
                                    QObject *parent = nullptr);

    // The dependency's breaker, created with the default options (or `options` given here
    // before the first use) when there is none yet. Owned by the registry.
    CircuitBreaker *breaker(const QString &dependency);
    void setOptions(const QString &dependency, const CircuitBreaker::Options &options);
    CircuitBreaker *find(const QString &dependency) const;
    QStringList dependencies() const;

    // Applies to the breakers that exist and to those created later.
    void setClock(CircuitBreaker::Clock nowMs);
    // The isolations in force (docs/TEAM.md): each breaker, now and when made later, takes the
    // one that covers it (BreakerIsolation::covers; the longest name when several do), or none.
    void setIsolations(const QList<BreakerIsolation> &isolations);
    const QList<BreakerIsolation> &isolations() const { return m_isolations; }

    const CircuitBreaker::Options &defaults() const { return m_defaults; }

    // Every breaker's snapshot and the registry's count, to be put back by restore(): breakers
    // made since then are put back to a new one's state.
    struct Snapshot
    {
        QHash<QString, CircuitBreaker::Snapshot> breakers;
        int openCount = 0;
    };
    Snapshot snapshot() const;
    void restore(const Snapshot &snapshot);

    // circuit_breaker_open_count: transitions into OPEN of every breaker of this registry.
    int openCount() const { return m_openCount; }

Q_SIGNALS:
    void stateChanged(const QString &dependency, AgentConsole::CircuitBreaker::State from,
                      AgentConsole::CircuitBreaker::State to);
    void isolationChanged(const QString &dependency);

private:
    BreakerIsolation isolationFor(const QString &dependency) const;

    CircuitBreaker::Options m_defaults;
    QHash<QString, CircuitBreaker::Options> m_options;
    QHash<QString, CircuitBreaker *> m_breakers; // children of this registry
    CircuitBreaker::Clock m_clock;
    int m_openCount = 0;
    QList<BreakerIsolation> m_isolations;
};

} // namespace AgentConsole
