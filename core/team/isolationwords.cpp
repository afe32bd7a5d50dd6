#include "isolationwords.h"

namespace AgentConsole {

QString IsolationWords::time(const QDateTime &utc)
{
    if (!utc.isValid())
        return tr("never");
    const QDateTime local = utc.toLocalTime();
    if (local.date() == QDate::currentDate())
        return local.toString(QStringLiteral("HH:mm"));
    return local.toString(QStringLiteral("yyyy-MM-dd HH:mm"));
}

QString IsolationWords::refusal(const BreakerIsolation &isolation)
{
    const QString staff = isolation.leadStaffId.isEmpty() ? isolation.leadRole
                                                          : isolation.leadStaffId;
    if (isolation.until.isValid())
        return tr("Isolated by the shift lead (staff %1) at %2: %3 (until %4)")
            .arg(staff, time(isolation.since), isolation.reason, time(isolation.until));
    return tr("Isolated by the shift lead (staff %1) at %2: %3")
        .arg(staff, time(isolation.since), isolation.reason);
}

QString IsolationWords::chip()
{
    return tr("Isolated");
}

QString IsolationWords::notAttempted()
{
    return tr("not attempted · isolated by the shift lead");
}

QString IsolationWords::line(const BreakerIsolation &isolation)
{
    return tr("%1: %2").arg(isolation.dependency, refusal(isolation));
}

QString IsolationWords::whyNotLead()
{
    return tr("Only a shift lead can lift an isolation: your database role is not a member of "
              "agentconsole_lead.");
}

QString IsolationWords::lifted(const QString &dependency)
{
    return tr("Done: %1 is restored for every console of the team.").arg(dependency);
}

QString IsolationWords::outcome(Isolations::Outcome outcome, const QString &dependency,
                                const QStringList &knownNames)
{
    using Outcome = Isolations::Outcome;
    switch (outcome) {
    case Outcome::Done:
        return tr("Done: every console of the team now refuses %1.").arg(dependency);
    case Outcome::Off:
        return tr("Isolations need a team database (--team).");
    case Outcome::NotLead:
        return tr("Only a shift lead can isolate or lift a dependency: your database role is "
                  "not a member of agentconsole_lead. Nothing was changed.");
    case Outcome::UnknownName:
        return knownNames.isEmpty()
            ? tr("%1 is not a dependency this console knows.").arg(dependency)
            : tr("%1 is not a dependency this console knows. Known: %2.")
                  .arg(dependency, knownNames.join(QStringLiteral(", ")));
    case Outcome::ReasonMissing:
        return tr("Give a reason: staff read it on every call the isolation refuses.");
    case Outcome::EndTimePassed:
        return tr("The end time has already passed. Nothing was changed.");
    case Outcome::NotIsolated:
        return tr("%1 is not isolated.").arg(dependency);
    case Outcome::Unavailable:
        return tr("The team database cannot be reached; nothing was changed. Try again.");
    }
    return {};
}

} // namespace AgentConsole
