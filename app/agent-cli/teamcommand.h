#pragma once

#include <QCommandLineOption>
#include <QDateTime>
#include <QString>

class QCommandLineParser;

namespace AgentConsole {

class AgentRuntime;

// agent-cli's isolations of a dependency on the team database (docs/TEAM.md): --isolate NAME
// --reason TEXT [--until ISO-TIME], --lift NAME, --isolations. Each needs --team, runs once
// the runtime is ready and the team database has answered, prints what happened and exits:
// 0 done (or listed), 2 refused (not a lead, an unknown name, no reason, an end time passed,
// nothing to lift) or the team database could not be reached.
class TeamCommand final
{
public:
    TeamCommand();
    void addTo(QCommandLineParser &parser) const;
    // Whether one of the three was given; a combination that cannot work is an error in
    // `problem` (the caller exits 2).
    bool read(const QCommandLineParser &parser, bool hasTeam, bool hasQuestion, QString *problem);
    // Starts the runtime, does it and returns the exit status (runs the event loop).
    int run(AgentRuntime &runtime, bool json);

private:
    enum class Kind { None, Isolate, Lift, List };

    QCommandLineOption m_isolate;
    QCommandLineOption m_reason;
    QCommandLineOption m_until;
    QCommandLineOption m_lift;
    QCommandLineOption m_list;
    Kind m_kind = Kind::None;
    QString m_name;
    QString m_reasonText;
    QDateTime m_untilTime;
};

} // namespace AgentConsole
