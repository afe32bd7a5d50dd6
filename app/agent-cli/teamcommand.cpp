#include "teamcommand.h"

#include "core/console/agentruntime.h"
#include "core/team/isolations.h"
#include "core/team/isolationwords.h"
#include "core/turn/turnresult.h"

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTextStream>
#include <QTimer>

#include <cstdio>

namespace AgentConsole {

namespace {

constexpr int kDone = 0;
constexpr int kRefused = 2;
// How long the team database has to answer before agent-cli gives up.
constexpr int kConnectWaitMs = 15000;

} // namespace

TeamCommand::TeamCommand()
    : m_isolate(QStringLiteral("isolate"),
                QStringLiteral("With --team, take dependency NAME offline for every console "
                               "of the team (a shift lead only: a member of the database role "
                               "agentconsole_lead), with --reason and optionally --until. "
                               "NAME is a route (logistics), a model provider "
                               "(model:host:port) or an MCP server (mcp:NAME). Then exit."),
                QStringLiteral("NAME"))
    , m_reason(QStringLiteral("reason"),
               QStringLiteral("With --isolate, why (staff read it on every refused call)."),
               QStringLiteral("TEXT"))
    , m_until(QStringLiteral("until"),
              QStringLiteral("With --isolate, when it ends by itself (ISO 8601, e.g. "
                             "2026-12-07T18:00 local time or ...Z for UTC)."),
              QStringLiteral("ISO-TIME"))
    , m_lift(QStringLiteral("lift"),
             QStringLiteral("With --team, restore dependency NAME for every console (a shift "
                            "lead only). Then exit."),
             QStringLiteral("NAME"))
    , m_list(QStringLiteral("isolations"),
             QStringLiteral("With --team, print the isolations in force (one per line, or one "
                            "JSON object with --json) and exit."))
{
}

void TeamCommand::addTo(QCommandLineParser &parser) const
{
    parser.addOptions({m_isolate, m_reason, m_until, m_lift, m_list});
}

bool TeamCommand::read(const QCommandLineParser &parser, bool hasTeam, bool hasQuestion,
                       QString *problem)
{
    const int given = int(parser.isSet(m_isolate)) + int(parser.isSet(m_lift))
        + int(parser.isSet(m_list));
    if (given == 0) {
        if (parser.isSet(m_reason) || parser.isSet(m_until))
            *problem = QStringLiteral("--reason and --until go with --isolate");
        return false;
    }
    if (given > 1) {
        *problem = QStringLiteral("give one of --isolate, --lift and --isolations");
        return false;
    }
    if (!hasTeam) {
        *problem = QStringLiteral("--isolate, --lift and --isolations need --team URL");
        return false;
    }
    if (hasQuestion) {
        *problem = QStringLiteral("--isolate, --lift and --isolations exit at once: give no "
                                  "QUESTION with them");
        return false;
    }
    if (parser.isSet(m_isolate)) {
        m_kind = Kind::Isolate;
        m_name = parser.value(m_isolate);
        m_reasonText = parser.value(m_reason).trimmed();
        if (m_reasonText.isEmpty()) {
            *problem = QStringLiteral("--isolate needs --reason TEXT: staff read it on every "
                                      "refused call");
            return false;
        }
        if (parser.isSet(m_until)) {
            m_untilTime = QDateTime::fromString(parser.value(m_until), Qt::ISODate);
            if (!m_untilTime.isValid()) {
                *problem = QStringLiteral("--until: expected an ISO 8601 time such as "
                                          "2026-12-07T18:00");
                return false;
            }
        }
    } else if (parser.isSet(m_lift)) {
        if (parser.isSet(m_reason) || parser.isSet(m_until)) {
            *problem = QStringLiteral("--reason and --until go with --isolate");
            return false;
        }
        m_kind = Kind::Lift;
        m_name = parser.value(m_lift);
    } else {
        m_kind = Kind::List;
    }
    return true;
}

int TeamCommand::run(AgentRuntime &runtime, bool json)
{
    Isolations *isolations = runtime.isolations();
    int exitCode = kRefused;
    const auto finish = [&exitCode](int code) {
        exitCode = code;
        QCoreApplication::exit(code);
    };
    QObject::connect(&runtime, &AgentRuntime::failed, qApp, [&](const QString &reason) {
        std::fprintf(stderr, "agent-cli: %s\n", qPrintable(reason));
        finish(kRefused);
    });
    bool asked = false;
    const auto act = [&] {
        if (asked || isolations->connection() != Isolations::Connection::Connected)
            return;
        asked = true;
        if (m_kind == Kind::List) {
            QTextStream out(stdout);
            const QList<BreakerIsolation> current = isolations->current();
            if (json) {
                QJsonArray rows;
                for (const BreakerIsolation &isolation : current)
                    rows.append(isolationToJson(isolation));
                out << QJsonDocument(QJsonObject{{QStringLiteral("isolations"), rows}})
                           .toJson(QJsonDocument::Compact)
                    << '\n';
            } else {
                for (const BreakerIsolation &isolation : current)
                    out << IsolationWords::line(isolation) << '\n';
                if (current.isEmpty())
                    std::fputs("agent-cli: no dependency is isolated\n", stderr);
            }
            out.flush();
            finish(kDone);
            return;
        }
        const quint64 request = m_kind == Kind::Isolate
            ? isolations->isolate(m_name, m_reasonText, m_untilTime)
            : isolations->lift(m_name);
        QObject::connect(isolations, &Isolations::answered, qApp,
                         [&, request](quint64 id, const Isolations::Answer &answer) {
                             if (id != request)
                                 return;
                             const bool done = answer.outcome == Isolations::Outcome::Done;
                             std::fprintf(done ? stdout : stderr, "%s%s\n",
                                          done ? "" : "agent-cli: ", qPrintable(answer.message));
                             finish(done ? kDone : kRefused);
                         });
    };
    QObject::connect(&runtime, &AgentRuntime::ready, qApp, [&] {
        if (!isolations->isEnabled()) {
            std::fputs("agent-cli: the --team URL cannot be used; the local log says why\n",
                       stderr);
            finish(kRefused);
            return;
        }
        QObject::connect(isolations, &Isolations::changed, qApp, act);
        act();
        QTimer::singleShot(kConnectWaitMs, qApp, [&] {
            if (asked)
                return;
            std::fprintf(stderr, "agent-cli: %s\n",
                         qPrintable(
                             IsolationWords::outcome(Isolations::Outcome::Unavailable, m_name)));
            finish(kRefused);
        });
    });
    runtime.start();
    QCoreApplication::exec();
    return exitCode;
}

} // namespace AgentConsole
