#pragma once

#include <QDateTime>
#include <QString>

namespace AgentConsole {

// A person took a dependency offline for the whole team (docs/TEAM.md, "Isolating a
// dependency"): while it holds, the dependency's breakers refuse every call at once, as an
// open breaker does, and say who did it, when and why. A plain value: where it comes from (the
// team database) is not this room's business.
struct BreakerIsolation
{
    // What was isolated, as the lead named it: a breaker's whole name ("model:api.example:443",
    // "mcp:weather") or its first parts ("logistics" for every backend's logistics route).
    QString dependency;
    QString reason;
    QString leadStaffId; // the lead's staff id, from the lead console's trusted session
    QString leadRole; // the database role that wrote it (session_user): cannot be forged
    QDateTime since; // UTC
    QDateTime until; // UTC; invalid: until lifted

    bool isNull() const { return dependency.isEmpty(); }
    // Whether it covers the breaker named `breaker`: the same name, or the name's first
    // ':'-separated parts ("logistics" covers "logistics:embedded", not "logisticsx:...").
    bool covers(const QString &breaker) const
    {
        return !dependency.isEmpty()
            && (breaker == dependency
                || (breaker.size() > dependency.size() && breaker.startsWith(dependency)
                    && breaker.at(dependency.size()) == QLatin1Char(':')));
    }
    // Whether it still holds at `now` (an end time that has come ends it on every seat).
    bool holdsAt(const QDateTime &now) const { return !until.isValid() || now < until; }

    friend bool operator==(const BreakerIsolation &a, const BreakerIsolation &b)
    {
        return a.dependency == b.dependency && a.reason == b.reason
            && a.leadStaffId == b.leadStaffId && a.leadRole == b.leadRole && a.since == b.since
            && a.until == b.until;
    }
    friend bool operator!=(const BreakerIsolation &a, const BreakerIsolation &b)
    {
        return !(a == b);
    }
};

} // namespace AgentConsole
