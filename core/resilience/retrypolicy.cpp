#include "retrypolicy.h"

#include <QCoreApplication>
#include <QString>

#include <algorithm>
#include <cmath>

namespace AgentConsole {

using Millis = RetryPolicy::Millis;

bool RetryPolicy::isRetryable(FailureKind kind) const
{
    switch (kind) {
    case FailureKind::Transient:
        return retryTransient;
    case FailureKind::AttemptTimeout:
        return retryAttemptTimeout;
    default:
        return false; // invalid argument, not found, permanent, access denied, bugs: never
    }
}

Millis RetryPolicy::computedDelay(int retry) const
{
    if (retry < 1)
        return Millis{0};
    const double raw = double(initialDelay.count()) * std::pow(multiplier, retry - 1);
    const double capped = std::min(raw, double(maxDelay.count()));
    return Millis{static_cast<Millis::rep>(std::llround(std::max(0.0, capped)))};
}

static Millis worstCase(const RetryPolicy &policy, bool serverDelays)
{
    Millis total = policy.attemptTimeout * policy.maxAttempts();
    Millis previousBound = policy.initialDelay;
    for (int retry = 1; retry <= policy.maxRetries; ++retry) {
        Millis bound = policy.computedDelay(retry);
        if (policy.jitter == JitterMode::Decorrelated) {
            previousBound = std::min(policy.maxDelay, previousBound * 3);
            bound = previousBound;
        }
        if (serverDelays)
            bound = std::max(bound, policy.serverDelayCap());
        total += bound;
    }
    return total;
}

Millis RetryPolicy::worstCaseDuration() const
{
    const Millis schedule = worstCase(*this, false);
    return callDeadline.count() > 0 ? std::min(schedule, callDeadline) : schedule;
}

Millis RetryPolicy::worstCaseWithServerDelays() const
{
    const Millis schedule = worstCase(*this, true);
    return callDeadline.count() > 0 ? std::min(schedule, callDeadline) : schedule;
}

Millis RetryPolicy::serverDelayCap() const
{
    return std::max(Millis{0}, std::min(retryAfterCap, maxDelay));
}

Millis RetryPolicy::effectiveDeadline() const
{
    // The shown worst case is the deadline: a Retry-After longer than the computed backoff
    // takes its time from the attempts after it, never adds to the total (issue #8: a call
    // took 9.7 s under a displayed 6.6 s).
    return worstCaseDuration();
}

static QString seconds(Millis value)
{
    if (value.count() % 1000 == 0)
        return QStringLiteral("%1 s").arg(value.count() / 1000);
    if (value.count() < 1000)
        return QStringLiteral("%1 ms").arg(value.count());
    // Rounded up to a tenth: the worst case shown is a bound, so 1950 ms reads 2.0 s, never
    // 1.9 s.
    const double tenths = std::ceil(double(value.count()) / 100.0);
    return QStringLiteral("%1 s").arg(tenths / 10.0, 0, 'f', 1);
}

namespace {

// The refusals are worded where they are made, in the window's language (agent-cli installs
// no translator, so its words stay English).
struct RetryPolicyWords
{
    Q_DECLARE_TR_FUNCTIONS(AgentConsole::RetryPolicy)
};

using Unit = RetryPolicy::Bound::Unit;

// A bound, the member it holds and the words of its refusal.
struct Checked
{
    RetryPolicy::Bound bound;
    double (*value)(const RetryPolicy &);
    const char *refusal; // %1 and %2: the bound's ends
};

const Checked kChecked[] = {
    {{"attemptTimeout", Unit::Millis, 10, 120'000},
     [](const RetryPolicy &p) { return double(p.attemptTimeout.count()); },
     QT_TRANSLATE_NOOP("AgentConsole::RetryPolicy", "attempt timeout: from %1 to %2")},
    {{"maxRetries", Unit::Count, 0, 10},
     [](const RetryPolicy &p) { return double(p.maxRetries); },
     QT_TRANSLATE_NOOP("AgentConsole::RetryPolicy", "retries: from %1 to %2")},
    {{"initialDelay", Unit::Millis, 0, 60'000},
     [](const RetryPolicy &p) { return double(p.initialDelay.count()); },
     QT_TRANSLATE_NOOP("AgentConsole::RetryPolicy", "first delay: from %1 to %2")},
    {{"multiplier", Unit::Factor, 1, 10},
     [](const RetryPolicy &p) { return p.multiplier; },
     QT_TRANSLATE_NOOP("AgentConsole::RetryPolicy", "multiplier: from %1 to %2")},
    {{"maxDelay", Unit::Millis, 0, 300'000},
     [](const RetryPolicy &p) { return double(p.maxDelay.count()); },
     QT_TRANSLATE_NOOP("AgentConsole::RetryPolicy", "maximum delay: from %1 to %2")},
    {{"retryAfterCap", Unit::Millis, 0, 300'000},
     [](const RetryPolicy &p) { return double(p.retryAfterCap.count()); },
     QT_TRANSLATE_NOOP("AgentConsole::RetryPolicy", "Retry-After cap: from %1 to %2")},
    {{"callDeadline", Unit::Millis, 0, 3'600'000},
     [](const RetryPolicy &p) { return double(p.callDeadline.count()); },
     QT_TRANSLATE_NOOP("AgentConsole::RetryPolicy", "call deadline: from %1 to %2")},
};

// An end of a range in the refusal's words: "10 ms", "120 s", "1 h"; a zero needs no unit.
QString endWords(Unit unit, double value)
{
    if (unit != Unit::Millis || value == 0)
        return QString::number(value, 'g', 16);
    const qint64 ms = qint64(value);
    if (ms % 3'600'000 == 0)
        return RetryPolicyWords::tr("%1 h").arg(ms / 3'600'000);
    if (ms % 1000 == 0)
        return RetryPolicyWords::tr("%1 s").arg(ms / 1000);
    if (ms < 1000)
        return RetryPolicyWords::tr("%1 ms").arg(ms);
    return RetryPolicyWords::tr("%1 s").arg(double(ms) / 1000.0);
}

} // namespace

const QList<RetryPolicy::Bound> &RetryPolicy::bounds()
{
    static const QList<Bound> all = [] {
        QList<Bound> list;
        for (const Checked &checked : kChecked)
            list.append(checked.bound);
        return list;
    }();
    return all;
}

std::optional<RetryPolicy::Bound> RetryPolicy::bound(const char *field)
{
    for (const Checked &checked : kChecked) {
        if (qstrcmp(checked.bound.field, field) == 0)
            return checked.bound;
    }
    return std::nullopt;
}

std::optional<RetryPolicy::RangeProblem> RetryPolicy::rangeProblem() const
{
    for (const Checked &checked : kChecked) {
        const Bound &bound = checked.bound;
        const double value = checked.value(*this);
        // Written so that a NaN multiplier is outside too.
        if (!(value >= bound.min && value <= bound.max))
            return RangeProblem{bound.field,
                                RetryPolicyWords::tr(checked.refusal)
                                    .arg(endWords(bound.unit, bound.min),
                                         endWords(bound.unit, bound.max))};
    }
    if (maxDelay < initialDelay)
        return RangeProblem{"maxDelay",
                            RetryPolicyWords::tr("maximum delay: not below the first delay")};
    return std::nullopt;
}

std::optional<QString> RetryPolicy::problem() const
{
    if (const std::optional<RangeProblem> found = rangeProblem())
        return found->text;
    return std::nullopt;
}

QString RetryPolicy::describe() const
{
    const QString jittered = jitter == JitterMode::Full ? QStringLiteral(", full jitter")
        : jitter == JitterMode::Decorrelated            ? QStringLiteral(", decorrelated jitter")
                                                        : QString();
    return QStringLiteral("%1 attempts × %2, backoff %3 ×%4 ≤ %5%7; worst case %6")
        .arg(maxAttempts())
        .arg(seconds(attemptTimeout), seconds(initialDelay))
        .arg(multiplier)
        .arg(seconds(maxDelay), seconds(worstCaseDuration()), jittered);
}

BackoffSchedule::BackoffSchedule(const RetryPolicy &policy, std::uint64_t seed)
    : m_policy(policy)
    , m_seed(seed)
    , m_previous(policy.initialDelay)
{
}

std::mt19937_64 &BackoffSchedule::random()
{
    if (!m_random)
        m_random = std::make_unique<std::mt19937_64>(m_seed);
    return *m_random;
}

Millis BackoffSchedule::next(int retry, std::optional<Millis> serverDelay)
{
    if (serverDelay && serverDelay->count() >= 0) {
        m_previous = std::min(*serverDelay, m_policy.serverDelayCap());
        return m_previous;
    }
    const Millis computed = m_policy.computedDelay(retry);
    Millis delay = computed;
    switch (m_policy.jitter) {
    case JitterMode::None:
        break;
    case JitterMode::Full: {
        std::uniform_int_distribution<Millis::rep> pick(0, computed.count());
        delay = Millis{pick(random())};
        break;
    }
    case JitterMode::Decorrelated: {
        const Millis low = m_policy.initialDelay;
        const Millis high = std::max(low, m_previous * 3);
        std::uniform_int_distribution<Millis::rep> pick(low.count(), high.count());
        delay = std::min(m_policy.maxDelay, Millis{pick(random())});
        break;
    }
    }
    m_previous = delay;
    return delay;
}

} // namespace AgentConsole
