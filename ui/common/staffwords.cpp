#include "staffwords.h"

#include "core/console/faultsandpolicies.h" // RetryPolicy
#include "core/turn/toollatencystats.h"

#include <QCoreApplication>
#include <QHash>

#include <algorithm>

namespace AgentConsole::StaffWords {

namespace {

struct Words
{
    Q_DECLARE_TR_FUNCTIONS(AgentConsole::StaffWords)
};

// "2 s" rather than "2.0 s" for a bound in whole seconds, as a policy is usually written.
QString millis(qint64 ms)
{
    if (ms >= 1000 && ms % 1000 == 0)
        return Words::tr("%1 s").arg(ms / 1000);
    return duration(ms);
}

QString millis(std::chrono::milliseconds value)
{
    return millis(qint64(value.count()));
}

// The parts of a breaker's dependency name (BreakerStatus::dependency): the kind of
// dependency before the colon, where it is after it. Others (a host and port, a model's
// name) are names and stay as they are.
QString dependencyPart(const QString &part)
{
    static const QHash<QString, const char *> words{
        {QStringLiteral("model"), QT_TRANSLATE_NOOP("AgentConsole::StaffWords", "Model")},
        {QStringLiteral("orders"), QT_TRANSLATE_NOOP("AgentConsole::StaffWords", "Orders")},
        {QStringLiteral("logistics"), QT_TRANSLATE_NOOP("AgentConsole::StaffWords", "Logistics")},
        {QStringLiteral("inventory"), QT_TRANSLATE_NOOP("AgentConsole::StaffWords", "Inventory")},
        {QStringLiteral("tickets"), QT_TRANSLATE_NOOP("AgentConsole::StaffWords", "Tickets")},
        {QStringLiteral("embedded"),
         QT_TRANSLATE_NOOP("AgentConsole::StaffWords", "embedded store")},
        {QStringLiteral("offline"), QT_TRANSLATE_NOOP("AgentConsole::StaffWords", "offline demo")},
        {QStringLiteral("primary"),
         QT_TRANSLATE_NOOP("AgentConsole::StaffWords", "primary provider")},
        {QStringLiteral("secondary"),
         QT_TRANSLATE_NOOP("AgentConsole::StaffWords", "secondary provider")},
    };
    const auto it = words.constFind(part);
    return it == words.cend() ? part : Words::tr(*it);
}

// A duration's words keep the context they were first translated in (the cards').
struct DurationWords
{
    Q_DECLARE_TR_FUNCTIONS(AgentConsole::ToolCallText)
};

} // namespace

QString duration(qint64 milliseconds)
{
    if (milliseconds < 1000)
        return DurationWords::tr("%1 ms").arg(std::max<qint64>(0, milliseconds));
    if (milliseconds >= 10000)
        return DurationWords::tr("%1 s").arg(qRound64(double(milliseconds) / 1000.0));
    return DurationWords::tr("%1 s").arg(double(milliseconds) / 1000.0, 0, 'f', 1);
}

QString policy(const RetryPolicy &policy)
{
    // Jitter draws each wait below the computed one (full) or between the first delay and
    // three times the last (decorrelated): the worst case shown still bounds the call.
    const QString text = policy.jitter == JitterMode::Full
        ? Words::tr("%n attempt(s) × %1, backoff %2 ×%3 ≤ %4, jittered; worst case %5", nullptr,
                    policy.maxAttempts())
        : policy.jitter == JitterMode::Decorrelated
        ? Words::tr("%n attempt(s) × %1, backoff %2 ×%3 ≤ %4, decorrelated jitter; "
                    "worst case %5",
                    nullptr, policy.maxAttempts())
        : Words::tr("%n attempt(s) × %1, backoff %2 ×%3 ≤ %4; worst case %5", nullptr,
                    policy.maxAttempts());
    return text.arg(millis(policy.attemptTimeout), millis(policy.initialDelay))
        .arg(policy.multiplier)
        .arg(millis(policy.maxDelay), millis(policy.worstCaseDuration()));
}

QString dependency(const QString &dependency)
{
    const qsizetype colon = dependency.indexOf(QLatin1Char(':'));
    if (colon <= 0)
        return dependencyPart(dependency);
    return Words::tr("%1 · %2").arg(dependencyPart(dependency.left(colon)),
                                    dependencyPart(dependency.mid(colon + 1)));
}

QString latencyBucket(int bucket)
{
    const auto &bounds = ToolLatencyStats::bucketBoundsMs;
    if (bucket >= int(bounds.size()))
        return Words::tr("> %1").arg(millis(bounds.back()));
    const qint64 bound = bounds[std::size_t(std::max(0, bucket))];
    return Words::tr("≤ %1").arg(millis(bound));
}

QString scenarioTitle(const QString &title)
{
    return QCoreApplication::translate("Scenarios", title.toUtf8().constData());
}

QString scenarioSummary(const QString &summary)
{
    return QCoreApplication::translate("Scenarios", summary.toUtf8().constData());
}

QString faultPlanDescription(const QString &description)
{
    return QCoreApplication::translate("FaultPlans", description.toUtf8().constData());
}

} // namespace AgentConsole::StaffWords
