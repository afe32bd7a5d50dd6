#pragma once

// Test-only helpers for the resilience suites: a scripted tool, a probe that records when a
// call's outcome was delivered, a bounded wait that keeps a real event loop running, and the
// textual form of attempt timelines that QCOMPARE prints well.

#include "core/resilience/toolexecutor.h"

#include <QElapsedTimer>
#include <QEventLoop>
#include <QFutureWatcher>
#include <QMetaEnum>
#include <QStringList>
#include <QTimer>

#include <atomic>
#include <functional>
#include <memory>
#include <optional>

namespace AgentConsole::Testing {

// A tool whose attempts run a test-provided body; counts how many attempts reached a pool
// thread.
class ScriptedTool final : public ToolOperation
{
public:
    using Body = std::function<AttemptResult(const AttemptContext &)>;
    using Precheck = std::function<std::optional<ToolResult>(const QJsonObject &)>;

    ScriptedTool(QString name, Body body, Precheck precheck = {})
        : m_name(std::move(name))
        , m_body(std::move(body))
        , m_precheck(std::move(precheck))
    {
    }

    QString name() const override { return m_name; }

    std::optional<ToolResult> precheck(const QJsonObject &arguments,
                                       const TrustedContext &) const override
    {
        return m_precheck ? m_precheck(arguments) : std::nullopt;
    }

    AttemptResult attempt(const QJsonObject &, const TrustedContext &,
                          const AttemptContext &attempt) const override
    {
        m_calls.fetch_add(1);
        return m_body(attempt);
    }

    int calls() const { return m_calls.load(); }

private:
    QString m_name;
    Body m_body;
    Precheck m_precheck;
    mutable std::atomic<int> m_calls{0};
};

inline ToolResult okResult()
{
    return ToolResult::ok(QStringLiteral("done"), QJsonValue(QStringLiteral("payload")));
}

inline TrustedContext staffContext()
{
    return {QStringLiteral("staff-7"), QStringLiteral("tenant-1"), QStringLiteral("conv-1"),
            QStringLiteral("req-1"), Language::English};
}

// A short policy for tests: 40 ms attempts, 2 retries, backoff 10 ms then 20 ms, no jitter.
inline RetryPolicy shortPolicy()
{
    RetryPolicy policy;
    policy.attemptTimeout = RetryPolicy::Millis{40};
    policy.maxRetries = 2;
    policy.initialDelay = RetryPolicy::Millis{10};
    policy.multiplier = 2.0;
    policy.maxDelay = RetryPolicy::Millis{1000};
    policy.jitter = JitterMode::None;
    return policy;
}

// A call under `policy` (the executor has no default of its own: every call names one).
inline ToolCallRequest requestFor(std::shared_ptr<const ToolOperation> tool,
                                  RetryPolicy policy = shortPolicy())
{
    ToolCallRequest request;
    request.tool = std::move(tool);
    request.arguments = QJsonObject{{QStringLiteral("orderId"), QStringLiteral("A1001")}};
    request.context = staffContext();
    request.policy = std::move(policy);
    return request;
}

template<typename Enum>
QString enumName(Enum value)
{
    return QString::fromLatin1(QMetaEnum::fromType<Enum>().valueToKey(int(value)));
}

// "TransientFailure +10ms" (a retry follows after 10 ms) or "TimedOut" (the last attempt).
inline QString stepOf(const AttemptRecord &record)
{
    QString step = enumName(record.outcome);
    if (record.nextDelayMs >= 0)
        step += QStringLiteral(" +%1ms").arg(record.nextDelayMs);
    return step;
}

inline QStringList stepsOf(const QList<AttemptRecord> &records)
{
    QStringList steps;
    for (const AttemptRecord &record : records)
        steps.append(stepOf(record));
    return steps;
}

// The event stream one call should produce for a timeline: "start 1", "end 1 <step>", ...
inline QStringList eventsFor(const QStringList &steps)
{
    QStringList events;
    for (int i = 0; i < steps.size(); ++i) {
        events.append(QStringLiteral("start %1").arg(i + 1));
        events.append(QStringLiteral("end %1 %2").arg(i + 1).arg(steps.at(i)));
    }
    return events;
}

// Records the executor's attempt events, per call, in the order they were emitted.
class EventLog
{
public:
    explicit EventLog(ToolExecutor *executor)
    {
        QObject::connect(executor, &ToolExecutor::attemptStarted, &m_context,
                         [this](const AttemptEvent &event) {
                             m_events[event.callId].append(
                                 QStringLiteral("start %1").arg(event.record.attempt));
                         });
        QObject::connect(executor, &ToolExecutor::attemptFinished, &m_context,
                         [this](const AttemptEvent &event) {
                             m_events[event.callId].append(QStringLiteral("end %1 %2").arg(
                                 event.record.attempt).arg(stepOf(event.record)));
                         });
    }

    QStringList of(quint64 callId) const { return m_events.value(callId); }
    int callCount() const { return int(m_events.size()); }

private:
    QObject m_context;
    QHash<quint64, QStringList> m_events;
};

// Runs a real event loop (not QTest::qWait, which sleeps 10 ms between event batches and would
// delay the executor's timers, which live on this thread) until `condition` holds or
// `timeoutMs` passes. Returns whether the condition held.
inline bool spinUntil(const std::function<bool()> &condition, int timeoutMs = 5000)
{
    if (condition())
        return true;
    QEventLoop loop;
    QTimer poll;
    poll.setTimerType(Qt::PreciseTimer);
    poll.setInterval(1);
    QObject::connect(&poll, &QTimer::timeout, &loop, [&] {
        if (condition())
            loop.quit();
    });
    QTimer guard;
    guard.setSingleShot(true);
    QObject::connect(&guard, &QTimer::timeout, &loop, &QEventLoop::quit);
    poll.start();
    guard.start(timeoutMs);
    loop.exec();
    return condition();
}

// Watches one call's future and stamps the moment its outcome reached this thread, in ms of
// `clock`.
class CallProbe
{
public:
    CallProbe(const QFuture<ToolCallOutcome> &future, const QElapsedTimer &clock)
        : m_clock(clock)
    {
        QObject::connect(&m_watcher, &QFutureWatcherBase::finished, &m_watcher, [this] {
            m_deliveredNs = m_clock.nsecsElapsed();
            m_done = true;
            if (!m_watcher.isCanceled() && m_watcher.future().resultCount() > 0)
                m_outcome = m_watcher.result();
            if (m_onDone)
                m_onDone();
        });
        m_watcher.setFuture(future);
    }

    bool wait(int timeoutMs = 5000)
    {
        if (m_done)
            return true;
        QEventLoop loop;
        QTimer guard;
        guard.setSingleShot(true);
        QObject::connect(&guard, &QTimer::timeout, &loop, &QEventLoop::quit);
        m_onDone = [&loop] { loop.quit(); };
        guard.start(timeoutMs);
        loop.exec();
        m_onDone = nullptr;
        return m_done;
    }

    bool done() const { return m_done; }
    bool hasOutcome() const { return m_outcome.has_value(); }
    const ToolCallOutcome &outcome() const { return *m_outcome; }
    double deliveredMs() const { return double(m_deliveredNs) / 1e6; }
    QFuture<ToolCallOutcome> future() const { return m_watcher.future(); }

private:
    const QElapsedTimer &m_clock;
    QFutureWatcher<ToolCallOutcome> m_watcher;
    std::optional<ToolCallOutcome> m_outcome;
    qint64 m_deliveredNs = 0;
    bool m_done = false;
    std::function<void()> m_onDone;
};

} // namespace AgentConsole::Testing
