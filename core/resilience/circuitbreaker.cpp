#include "circuitbreaker.h"

#include "../telemetry/logging.h"

#include <QElapsedTimer>
#include <QMetaEnum>

#include <algorithm>
#include <memory>

namespace AgentConsole {

using Millis = std::chrono::milliseconds;

namespace {

CircuitBreaker::Clock monotonicClock()
{
    auto timer = std::make_shared<QElapsedTimer>();
    timer->start();
    return [timer] { return timer->elapsed(); };
}

// Options that cannot work are made to work rather than asserted: they come from settings.
CircuitBreaker::Options sanitized(CircuitBreaker::Options options)
{
    options.windowSize = std::max(1, options.windowSize);
    options.minimumCalls = std::clamp(options.minimumCalls, 1, options.windowSize);
    options.halfOpenProbes = std::max(1, options.halfOpenProbes);
    options.openCooldown = std::max(Millis{0}, options.openCooldown);
    return options;
}

QString nameOf(CircuitBreaker::State state)
{
    return QString::fromLatin1(
        QMetaEnum::fromType<CircuitBreaker::State>().valueToKey(int(state)));
}

} // namespace

CircuitBreaker::CircuitBreaker(QString dependency, const Options &options, QObject *parent)
    : QObject(parent)
    , m_dependency(std::move(dependency))
    , m_options(sanitized(options))
    , m_now(monotonicClock())
{
    m_window.reserve(std::size_t(m_options.windowSize));
}

CircuitBreaker::~CircuitBreaker() = default;

void CircuitBreaker::setClock(Clock nowMs)
{
    m_now = nowMs ? std::move(nowMs) : monotonicClock();
}

bool CircuitBreaker::tryAcquire()
{
    if (isIsolated()) {
        ++m_rejectedCount;
        return false;
    }
    switch (m_state) {
    case State::Closed:
        return true;
    case State::Open:
        if (m_now() - m_openedAtMs < m_options.openCooldown.count()) {
            ++m_rejectedCount;
            return false;
        }
        transitionTo(State::HalfOpen, QStringLiteral("cool-down over, probing"));
        [[fallthrough]];
    case State::HalfOpen:
        // Probes ever handed out in this HALF_OPEN episode, less those released unused.
        if (m_probesOutstanding + m_probesSucceeded >= m_options.halfOpenProbes) {
            ++m_rejectedCount;
            return false;
        }
        ++m_probesOutstanding;
        return true;
    }
    return false;
}

void CircuitBreaker::setIsolation(const BreakerIsolation &isolation)
{
    if (isolation == m_isolation)
        return;
    const bool was = isIsolated();
    m_isolation = isolation;
    if (isIsolated())
        qCWarning(lcResilience).noquote()
            << "circuit breaker" << m_dependency << (was ? "isolation changed:" : "isolated:")
            << "by" << m_isolation.leadStaffId << "(role" << m_isolation.leadRole << ")";
    else
        qCInfo(lcResilience).noquote() << "circuit breaker" << m_dependency << "isolation lifted";
    Q_EMIT isolationChanged(m_dependency);
}

Millis CircuitBreaker::cooldownLeft() const
{
    if (m_state != State::Open)
        return Millis{0};
    const qint64 left = m_options.openCooldown.count() - (m_now() - m_openedAtMs);
    return Millis{std::max<qint64>(0, left)};
}

void CircuitBreaker::recordSuccess(Millis duration)
{
    record(false, duration);
}

void CircuitBreaker::recordFailure(Millis duration)
{
    record(true, duration);
}

void CircuitBreaker::release()
{
    // A released probe gives its permission back, so that another call can probe instead.
    if (m_state == State::HalfOpen && m_probesOutstanding > 0)
        --m_probesOutstanding;
}

void CircuitBreaker::reset()
{
    if (m_state == State::Closed) {
        resetWindow(); // nothing changes state: only the recorded calls are forgotten
        qCInfo(lcResilience).noquote()
            << "circuit breaker" << m_dependency << "reset: its window was emptied";
        return;
    }
    transitionTo(State::Closed, QStringLiteral("reset by staff"));
}

CircuitBreaker::Snapshot CircuitBreaker::snapshot() const
{
    Snapshot taken;
    taken.state = m_state;
    // The ring buffer read from its oldest sample.
    const std::size_t size = m_window.size();
    const std::size_t oldest = size < std::size_t(m_options.windowSize) ? 0 : m_next;
    for (std::size_t i = 0; i < size; ++i) {
        const Sample &sample = m_window[(oldest + i) % size];
        taken.windowFailed.push_back(sample.failed);
        taken.windowSlow.push_back(sample.slow);
    }
    taken.openedAtMs = m_openedAtMs;
    taken.openCount = m_openCount;
    taken.rejectedCount = m_rejectedCount;
    taken.lastTransition = m_lastTransition;
    return taken;
}

void CircuitBreaker::restore(const Snapshot &snapshot)
{
    const State from = m_state;
    resetWindow();
    m_state = snapshot.state;
    for (std::size_t i = 0; i < snapshot.windowFailed.size(); ++i) {
        const Sample sample{snapshot.windowFailed[i],
                            i < snapshot.windowSlow.size() && snapshot.windowSlow[i]};
        m_window.push_back(sample);
        m_failures += sample.failed ? 1 : 0;
        m_slow += sample.slow ? 1 : 0;
    }
    m_next = 0; // the oldest sample is first: where a full window's next one goes
    m_openedAtMs = snapshot.openedAtMs;
    m_openCount = snapshot.openCount;
    m_rejectedCount = snapshot.rejectedCount;
    m_lastTransition = snapshot.lastTransition;
    qCInfo(lcResilience).noquote()
        << "circuit breaker" << m_dependency << "restored:" << nameOf(m_state);
    if (from != m_state)
        Q_EMIT stateChanged(m_dependency, from, m_state);
}

bool CircuitBreaker::isSlow(Millis duration) const
{
    return m_options.slowCallThreshold.count() > 0 && duration >= m_options.slowCallThreshold;
}

void CircuitBreaker::record(bool failed, Millis duration)
{
    const Sample sample{failed, isSlow(duration)};
    switch (m_state) {
    case State::Closed:
        recordInWindow(sample);
        break;
    case State::Open:
        break; // a call admitted before the breaker opened: it has already been judged
    case State::HalfOpen:
        if (m_probesOutstanding > 0)
            recordProbe(sample);
        break;
    }
}

void CircuitBreaker::recordInWindow(const Sample &sample)
{
    if (m_window.size() < std::size_t(m_options.windowSize)) {
        m_window.push_back(sample);
    } else {
        Sample &oldest = m_window[m_next];
        m_failures -= oldest.failed ? 1 : 0;
        m_slow -= oldest.slow ? 1 : 0;
        oldest = sample;
        m_next = (m_next + 1) % m_window.size();
    }
    m_failures += sample.failed ? 1 : 0;
    m_slow += sample.slow ? 1 : 0;

    const int calls = int(m_window.size());
    if (calls < m_options.minimumCalls)
        return;
    // Rates, not counts against threshold * calls: 3 / 10 >= 0.3 holds, 3 >= 0.3 * 10 does not.
    const auto detail = [calls](int count, const char *what) {
        return QStringLiteral("%1 of the last %2 calls %3")
            .arg(count)
            .arg(calls)
            .arg(QLatin1String(what));
    };
    if (double(m_failures) / calls >= m_options.failureRateThreshold)
        transitionTo(State::Open, detail(m_failures, "failed"));
    else if (m_options.slowCallThreshold.count() > 0
             && double(m_slow) / calls >= m_options.slowCallRateThreshold)
        transitionTo(State::Open, detail(m_slow, "were slow"));
}

void CircuitBreaker::recordProbe(const Sample &sample)
{
    --m_probesOutstanding;
    if (sample.failed) {
        transitionTo(State::Open, QStringLiteral("a probe failed"));
        return;
    }
    ++m_probesSucceeded;
    m_probesSlow += sample.slow ? 1 : 0;
    if (m_probesSucceeded < m_options.halfOpenProbes)
        return;
    if (m_options.slowCallThreshold.count() > 0
        && double(m_probesSlow) / m_probesSucceeded >= m_options.slowCallRateThreshold)
        transitionTo(State::Open, QStringLiteral("the probes succeeded, but slowly"));
    else
        transitionTo(State::Closed, QStringLiteral("every probe succeeded"));
}

void CircuitBreaker::resetWindow()
{
    m_window.clear();
    m_next = 0;
    m_failures = 0;
    m_slow = 0;
    m_probesOutstanding = 0;
    m_probesSucceeded = 0;
    m_probesSlow = 0;
}

void CircuitBreaker::transitionTo(State to, const QString &reason)
{
    const State from = m_state;
    if (from == to)
        return;
    m_state = to;
    m_lastTransition = {from, to, m_now(), reason};
    // Every state starts from scratch: CLOSED with an empty window, OPEN and HALF_OPEN with no
    // probes, so that nothing judged before the change is judged again.
    resetWindow();
    const QString change = QStringLiteral("circuit breaker %1: %2 -> %3 (%4)")
                               .arg(m_dependency, nameOf(from), nameOf(to), reason);
    if (to == State::Open) {
        m_openedAtMs = m_now();
        ++m_openCount;
        qCWarning(lcResilience).noquote() << change
                + QStringLiteral("; failing fast for %1 ms").arg(m_options.openCooldown.count());
    } else {
        qCInfo(lcResilience).noquote() << change;
    }
    Q_EMIT stateChanged(m_dependency, from, to);
}

CircuitBreakerRegistry::CircuitBreakerRegistry(const CircuitBreaker::Options &defaults,
                                               QObject *parent)
    : QObject(parent)
    , m_defaults(defaults)
{
}

CircuitBreaker *CircuitBreakerRegistry::breaker(const QString &dependency)
{
    if (CircuitBreaker *existing = m_breakers.value(dependency))
        return existing;
    auto *created = new CircuitBreaker(dependency, m_options.value(dependency, m_defaults), this);
    if (m_clock)
        created->setClock(m_clock);
    created->setIsolation(isolationFor(dependency));
    connect(created, &CircuitBreaker::isolationChanged, this,
            &CircuitBreakerRegistry::isolationChanged);
    connect(created, &CircuitBreaker::stateChanged, this,
            [this](const QString &name, CircuitBreaker::State from, CircuitBreaker::State to) {
                if (to == CircuitBreaker::State::Open)
                    ++m_openCount;
                Q_EMIT stateChanged(name, from, to);
            });
    m_breakers.insert(dependency, created);
    return created;
}

CircuitBreakerRegistry::Snapshot CircuitBreakerRegistry::snapshot() const
{
    Snapshot taken;
    for (auto it = m_breakers.cbegin(); it != m_breakers.cend(); ++it)
        taken.breakers.insert(it.key(), it.value()->snapshot());
    taken.openCount = m_openCount;
    return taken;
}

void CircuitBreakerRegistry::restore(const Snapshot &snapshot)
{
    // The registry's count is put back after the breakers: a restore counts no opening, and
    // one whose state goes back to OPEN must not count one either.
    for (auto it = m_breakers.cbegin(); it != m_breakers.cend(); ++it)
        it.value()->restore(snapshot.breakers.value(it.key()));
    m_openCount = snapshot.openCount;
}

void CircuitBreakerRegistry::setOptions(const QString &dependency,
                                        const CircuitBreaker::Options &options)
{
    if (m_breakers.contains(dependency)) {
        // Changing a live breaker's window would judge its recorded calls by other rules.
        qCWarning(lcResilience).noquote()
            << "circuit breaker" << dependency << "exists already; its options stay as they are";
        return;
    }
    m_options.insert(dependency, options);
}

CircuitBreaker *CircuitBreakerRegistry::find(const QString &dependency) const
{
    return m_breakers.value(dependency);
}

QStringList CircuitBreakerRegistry::dependencies() const
{
    QStringList names = m_breakers.keys();
    names.sort();
    return names;
}

BreakerIsolation CircuitBreakerRegistry::isolationFor(const QString &dependency) const
{
    BreakerIsolation best;
    for (const BreakerIsolation &isolation : m_isolations) {
        if (isolation.covers(dependency) && isolation.dependency.size() > best.dependency.size())
            best = isolation;
    }
    return best;
}

void CircuitBreakerRegistry::setIsolations(const QList<BreakerIsolation> &isolations)
{
    m_isolations = isolations;
    for (CircuitBreaker *breaker : std::as_const(m_breakers))
        breaker->setIsolation(isolationFor(breaker->dependency()));
}

void CircuitBreakerRegistry::setClock(CircuitBreaker::Clock nowMs)
{
    m_clock = std::move(nowMs);
    for (CircuitBreaker *breaker : std::as_const(m_breakers))
        breaker->setClock(m_clock);
}

} // namespace AgentConsole
