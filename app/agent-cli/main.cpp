// agent-cli: the console's core without widgets. One turn per question; see --help.
#include "clisession.h"
#include "terminalconfirmation.h"
#include "terminallines.h"
#include "teamcommand.h"
#include "terminalquestion.h"

#include "core/async/await.h"
#include "core/async/terminationsignals.h"
#include "core/turn/agentloop.h"
#include "core/console/agentruntime.h"
#include "core/console/mcpservers.h"
#include "core/console/runtimemonitor.h"
#include "core/console/teampolicy.h"
#include "core/console/toolpolicies.h"
#include "core/console/turnrecovery.h"
#include "core/console/writeaudit.h"
#include "core/export/conversationexport.h"
#include "core/console/runtimecommandline.h"
#include "core/scenarios/scenario.h"
#include "core/scenarios/scenariorunner.h"
#include "core/mcp/mcpserver.h"
#include "core/tools/toolregistry.h"
#include "core/telemetry/locallog.h"

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QMetaEnum>
#include <QSocketNotifier>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTextStream>

#include <cstdio>
#include <unistd.h>
#include <functional>
#include <memory>
#include <utility>

using namespace AgentConsole;

namespace {

constexpr int kUsageError = CliSession::usageErrorExitCode;
constexpr int kTurnFailed = CliSession::turnFailedExitCode;
constexpr int kScenarioDiffered = 4;
// How long agent-cli waits, at its end, for its MCP servers to close cleanly (stdin closed,
// SIGTERM: 2 s each in StdioTransport, and a margin).
constexpr int kMcpGoodbyeMs = 5000;

int usageError(const QString &message)
{
    std::fprintf(stderr, "agent-cli: %s\n", qPrintable(message));
    return kUsageError;
}

// --list-tools: every tool the model is offered, built-in and MCP, with the policy that runs
// its calls, and each MCP server's state.
void printTools(const AgentRuntime &runtime, bool json)
{
    const auto policyName = [](Mcp::ToolPolicy policy) {
        switch (policy) {
        case Mcp::ToolPolicy::Read:
            return QStringLiteral("read");
        case Mcp::ToolPolicy::IdempotentWrite:
            return QStringLiteral("idempotent-write");
        case Mcp::ToolPolicy::Write:
            return QStringLiteral("write");
        }
        return QString();
    };
    QJsonArray tools;
    QHash<QString, std::pair<QString, QString>> mcpTools; // name -> server, policy
    QJsonArray servers;
    if (const Mcp::ServerSet *set = runtime.mcp()->servers()) {
        for (const Mcp::Server *server : set->servers()) {
            for (const auto &tool : server->tools())
                mcpTools.insert(tool->name(), {server->name(), policyName(tool->policy())});
            QJsonObject entry{
                {QStringLiteral("name"), server->name()},
                {QStringLiteral("state"),
                 QString::fromLatin1(
                     QMetaEnum::fromType<Mcp::Server::State>().valueToKey(int(server->state())))
                     .toLower()},
                {QStringLiteral("tools"), int(server->tools().size())},
                {QStringLiteral("refused"), int(server->refusedTools().size())},
                {QStringLiteral("notOffered"),
                 QJsonArray::fromStringList(server->refusedTools())}};
            if (server->timeoutsLimitedToMs() > 0)
                entry.insert(QStringLiteral("timeoutsLimitedToMs"), server->timeoutsLimitedToMs());
            if (!server->lastError().isEmpty())
                entry.insert(QStringLiteral("error"), server->lastError());
            servers.append(entry);
        }
    }
    // The servers the team's policy does not allow: listed, never started (docs/POLICY.md).
    for (const McpServerStatus &server : runtime.mcp()->status()) {
        if (server.problem == McpServerStatus::Problem::RefusedByPolicy)
            servers.append(QJsonObject{{QStringLiteral("name"), server.name},
                                       {QStringLiteral("state"), QStringLiteral("refused")},
                                       {QStringLiteral("tools"), 0},
                                       {QStringLiteral("error"), server.lastError}});
    }
    for (const ToolDescriptor &tool : runtime.tools()->descriptors()) {
        const auto mcp = mcpTools.constFind(tool.name);
        QJsonObject entry{{QStringLiteral("name"), tool.name},
                          {QStringLiteral("title"), tool.labels.title},
                          {QStringLiteral("source"),
                           mcp == mcpTools.cend() ? QStringLiteral("built-in")
                                                  : QStringLiteral("mcp")}};
        entry.insert(QStringLiteral("policy"),
                     mcp == mcpTools.cend()
                         ? (tool.hasSideEffects ? QStringLiteral("write") : QStringLiteral("read"))
                         : mcp->second);
        if (mcp != mcpTools.cend())
            entry.insert(QStringLiteral("server"), mcp->first);
        entry.insert(QStringLiteral("worstCaseMs"),
                     qint64(runtime.policies()->policy(tool.name).effectiveDeadline().count()));
        tools.append(entry);
    }
    QTextStream out(stdout);
    if (json) {
        out << QJsonDocument(QJsonObject{{QStringLiteral("tools"), tools},
                                         {QStringLiteral("mcpServers"), servers}})
                   .toJson(QJsonDocument::Compact)
            << '\n';
        return;
    }
    for (const QJsonValue &tool : std::as_const(tools)) {
        out << tool[QStringLiteral("name")].toString() << '\t'
            << tool[QStringLiteral("policy")].toString() << '\t'
            << (tool[QStringLiteral("server")].isString()
                    ? QStringLiteral("mcp:") + tool[QStringLiteral("server")].toString()
                    : QStringLiteral("built-in"))
            << '\t' << tool[QStringLiteral("title")].toString() << '\n';
    }
    for (const QJsonValue &server : std::as_const(servers)) {
        out << "mcp server " << server[QStringLiteral("name")].toString() << ": "
            << server[QStringLiteral("state")].toString() << ", "
            << server[QStringLiteral("tools")].toInt() << " tool(s)";
        if (server[QStringLiteral("refused")].toInt() > 0)
            out << ", " << server[QStringLiteral("refused")].toInt() << " refused";
        if (server[QStringLiteral("error")].isString())
            out << " (" << server[QStringLiteral("error")].toString() << ")";
        out << '\n';
        if (const int limited = server[QStringLiteral("timeoutsLimitedToMs")].toInt(); limited > 0)
            out << "  its timeouts are limited to " << limited / 1000.0
                << " s so that the turn can answer\n";
        for (const QJsonValue &refused : server[QStringLiteral("notOffered")].toArray())
            out << "  not offered: " << refused.toString() << '\n';
    }
}

// --audit: the audit trail's rows, newest first; one object {"audit": [rows], "more"} with
// --json. A row's arguments are as stored (redacted when they were appended).
int printAudit(const AgentRuntime &runtime, const AuditPage &page, bool json)
{
    if (!page.ok()) {
        std::fprintf(stderr,
                     "agent-cli: the audit trail could not be read (%s); the local log says "
                     "why\n",
                     page.outcome == AuditPage::Outcome::Unavailable ? "the ledger keeps none"
                                                                     : "the ledger failed");
        return kUsageError;
    }
    QTextStream out(stdout);
    if (json) {
        QJsonArray rows;
        for (const AuditEntry &entry : page.rows)
            rows.append(entry.toJson());
        out << QJsonDocument(QJsonObject{{QStringLiteral("audit"), rows},
                                         {QStringLiteral("more"), page.more}})
                   .toJson(QJsonDocument::Compact)
            << '\n';
        return 0;
    }
    for (const AuditEntry &entry : page.rows) {
        out << entry.at.toLocalTime().toString(QStringLiteral("yyyy-MM-dd HH:mm:ss")) << '\t'
            << AuditEntry::eventName(entry.event) << '\t' << entry.staffId << '\t'
            << entry.toolName << '\t' << entry.operationId << '\t';
        if (entry.outcome == AuditEntry::Outcome::None) {
            out << QJsonDocument(entry.arguments).toJson(QJsonDocument::Compact);
        } else {
            out << AuditEntry::outcomeName(entry.outcome);
            if (!entry.objectId.isEmpty()) {
                // What the write made, in its tool's word ("Ticket T-000012").
                const AgentLoop *loop = runtime.agentLoop();
                const QString word = loop ? loop->toolLabels(entry.toolName).created.label
                                          : QString();
                out << ' ' << (word.isEmpty() ? QString() : word + QLatin1Char(' '))
                    << entry.objectId;
            }
            if (!entry.resultCode.isEmpty())
                out << ' ' << entry.resultCode;
            out << " (" << AuditEntry::viaName(entry.via) << ')';
        }
        out << '\n';
    }
    out.flush();
    if (page.rows.isEmpty())
        std::fputs("agent-cli: no audit rows match\n", stderr);
    if (page.more)
        std::fprintf(stderr,
                     "agent-cli: only the newest %d rows are shown: narrow them with --order, "
                     "--staff or --day\n",
                     int(page.rows.size()));
    return 0;
}

} // namespace

int main(int argc, char *argv[])
{
    QCoreApplication app(argc, argv);
    QCoreApplication::setOrganizationName(QStringLiteral("AgentConsole"));
    QCoreApplication::setApplicationName(QStringLiteral("agent-console"));

    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral(
        "Ask the support agent questions without the window. With no QUESTION, reads one "
        "question per line from standard input, all in one conversation.\n"
        "At a terminal, a prompt asks for each question; Ctrl-C cancels the running turn (it "
        "is recorded as cancelled, nothing to resume) and, pressed again or at the prompt, "
        "quits; Ctrl-D ends the session, at a confirmation too (the write is not run).\n"
        "Exit status: 0 every turn completed (partial success and cancelled turns included), "
        "2 usage or configuration error (a question longer than the limit included, a damaged "
        "data file, or an --export file that could not be written), 3 a turn failed (or, with "
        "--resume, an interrupted turn's checkpoint is damaged), 130 quit with Ctrl-C; with "
        "--scenario: 0 the scenario matched its expectation, 4 it did not (what differed is "
        "printed), 2 it cannot be read or run."));
    parser.addHelpOption();
    const RuntimeCommandLine runtimeOptions;
    runtimeOptions.addTo(parser);
    const QCommandLineOption json(QStringLiteral("json"),
                                  QStringLiteral("Print one JSON object per turn."));
    const QCommandLineOption yes(QStringLiteral("yes"),
                                 QStringLiteral("Confirm every write (createTicket) without "
                                                "asking; otherwise the terminal asks. A ticket "
                                                "that looks like one made before (same order "
                                                "and category, --duplicate-window) is not made: "
                                                "the earlier one is kept."));
    const QCommandLineOption allowDuplicate(
        QStringLiteral("allow-duplicate"),
        QStringLiteral("With --yes, also confirm a write that looks like one made before."));
    const QCommandLineOption verbose(QStringLiteral("verbose"),
                                     QStringLiteral("Copy the local log to stderr."));
    const QCommandLineOption resume(
        QStringLiteral("resume"),
        QStringLiteral("First carry on every turn interrupted in this data directory (a crash, "
                       "a kill, a failed answer), from its last checkpoint; no tool whose "
                       "result is stored runs again. Without QUESTION, exits afterwards."));
    const QCommandLineOption conversation(
        QStringLiteral("conversation"),
        QStringLiteral("Name the conversation of the questions asked (letters, digits, '-', "
                       "'_', '.')."),
        QStringLiteral("id"));
    const QCommandLineOption requestId(
        QStringLiteral("request-id"),
        QStringLiteral("Name the first question's request. Asking again with the same "
                       "--conversation and --request-id replays it: a write it made is "
                       "answered from the ledger, never made twice."),
        QStringLiteral("id"));
    const QCommandLineOption counters(
        QStringLiteral("counters"),
        QStringLiteral("Print the counters of every turn in this data directory added up "
                       "(model_retry_count, ..., agent_restart_count) and "
                       "duplicate_business_object_count from the backend, as one JSON "
                       "object, and exit."));
    const QCommandLineOption listScenarios(
        QStringLiteral("list-scenarios"),
        QStringLiteral("List the shipped scenarios (docs/SCENARIOS.md): name and what each "
                       "shows, and exit."));
    const QCommandLineOption scenario(
        QStringLiteral("scenario"),
        QStringLiteral("Run a scenario: a shipped one by NAME, or a FILE (a path with a '/' or "
                       "ending in .json). Sets its faults and policies, asks its turns, "
                       "answers their confirmations, prints each turn and the verdict. Uses a "
                       "fresh temporary data directory unless --data-dir is given."),
        QStringLiteral("NAME|FILE"));
    const QCommandLineOption scenarioLanguage(
        QStringLiteral("scenario-language"),
        QStringLiteral("With --scenario, ask its questions in LANGUAGE: en (the default) or zh "
                       "(each turn's questionZh, as a Chinese window asks them). The "
                       "expectations are the same in both."),
        QStringLiteral("LANGUAGE"), QStringLiteral("en"));
    const QCommandLineOption exportTo(
        QStringLiteral("export"),
        QStringLiteral("After the turns, write them as a bug report to FILE: FILE.json (the "
                       "--json objects with the faults, policies, counters and environment) or "
                       "FILE.md (Markdown). Keys and secrets are redacted (docs/EXPORT.md)."),
        QStringLiteral("FILE"));
    const QCommandLineOption listTools(
        QStringLiteral("list-tools"),
        QStringLiteral("List the tools the model is offered, built-in and from MCP servers "
                       "(--mcp-config), each with the policy that runs it (read, "
                       "idempotent-write, write), and the servers' states, and exit."));
    const QCommandLineOption exportAudit(
        QStringLiteral("export-audit"),
        QStringLiteral("With --export, also write the audit trail's rows of the exported turns "
                       "(docs/AUDIT.md)."));
    const QCommandLineOption audit(
        QStringLiteral("audit"),
        QStringLiteral("Print the audit trail of writes (docs/AUDIT.md), newest first: who "
                       "confirmed each write, when, its arguments (secrets redacted), its "
                       "outcome and what it made; the --tenant's rows only. With --json, one "
                       "object {\"audit\": [rows], \"more\"}. Then exit."));
    const QCommandLineOption auditOrder(
        QStringLiteral("order"),
        QStringLiteral("With --audit, only the writes about order ID (any argument of that "
                       "value)."),
        QStringLiteral("ID"));
    const QCommandLineOption auditStaff(
        QStringLiteral("staff"), QStringLiteral("With --audit, only the rows of staff member ID."),
        QStringLiteral("ID"));
    const QCommandLineOption auditDay(QStringLiteral("day"),
                                      QStringLiteral(
                                          "With --audit, only the rows of that day (local time)."),
                                      QStringLiteral("YYYY-MM-DD"));
    parser.addOptions({json, yes, allowDuplicate, verbose, resume, conversation, requestId,
                       counters, listScenarios, scenario, scenarioLanguage, exportTo, exportAudit,
                       listTools, audit, auditOrder, auditStaff, auditDay});
    // --isolate, --lift, --isolations: the team's isolations (docs/TEAM.md).
    TeamCommand teamCommand;
    teamCommand.addTo(parser);
    parser.addPositionalArgument(QStringLiteral("QUESTION"),
                                 QStringLiteral("The question; several words are joined."),
                                 QStringLiteral("[QUESTION...]"));
    if (!parser.parse(QCoreApplication::arguments()))
        return usageError(parser.errorText());
    if (parser.isSet(QStringLiteral("help"))) {
        std::fputs(qPrintable(parser.helpText()), stdout);
        return 0;
    }

    if (parser.isSet(listScenarios)) {
        QStringList problems;
        QTextStream out(stdout);
        for (const Scenario &shipped : ScenarioCatalogue::builtIn(&problems))
            out << shipped.name << "\t" << shipped.summary << '\n';
        out.flush();
        for (const QString &problem : std::as_const(problems))
            std::fprintf(stderr, "agent-cli: %s\n", qPrintable(problem));
        return 0;
    }

    for (const QCommandLineOption *filter : {&auditOrder, &auditStaff, &auditDay}) {
        if (parser.isSet(*filter) && !parser.isSet(audit))
            return usageError(
                QStringLiteral("--%1 goes with --audit").arg(filter->names().constFirst()));
    }
    const QDate auditDayValue = WriteAudit::dayFromText(parser.value(auditDay));
    if (parser.isSet(auditDay) && !auditDayValue.isValid())
        return usageError(QStringLiteral("--day: use YYYY-MM-DD, e.g. 2026-12-07"));
    if (parser.isSet(audit)
        && (!parser.positionalArguments().isEmpty() || parser.isSet(scenario)
            || parser.isSet(resume) || parser.isSet(counters) || parser.isSet(exportTo)))
        return usageError(QStringLiteral("--audit prints the trail and exits: give no QUESTION, "
                                         "--scenario, --resume, --counters or --export with it"));
    if (parser.isSet(exportAudit) && !parser.isSet(exportTo))
        return usageError(QStringLiteral("--export-audit goes with --export"));

    QString error;
    std::optional<RuntimeOptions> read = runtimeOptions.read(parser, &error);
    if (!read)
        return usageError(error);
    std::optional<Scenario> toRun;
    // A scenario without --data-dir runs in a directory removed at exit: it leaves nothing
    // behind. Made only then: a run that is killed (the crash-injection suites kill hundreds)
    // would leave an empty one in /tmp each time.
    std::unique_ptr<QTemporaryDir> scenarioDirectory;
    const QString questionLanguage = parser.value(scenarioLanguage);
    if (questionLanguage != QLatin1String("en") && questionLanguage != QLatin1String("zh"))
        return usageError(QStringLiteral("--scenario-language: use en or zh"));
    if (parser.isSet(scenarioLanguage) && !parser.isSet(scenario))
        return usageError(QStringLiteral("--scenario-language goes with --scenario"));
    if (parser.isSet(scenario)) {
        toRun = ScenarioCatalogue::find(parser.value(scenario), &error);
        if (!toRun)
            return usageError(error);
        if (!parser.positionalArguments().isEmpty() || parser.isSet(resume)
            || parser.isSet(counters))
            return usageError(QStringLiteral("--scenario asks its own questions: give no "
                                             "QUESTION, --resume or --counters with it"));
        if (!parser.isSet(QStringLiteral("data-dir"))) {
            scenarioDirectory = std::make_unique<QTemporaryDir>();
            if (!scenarioDirectory->isValid())
                return usageError(QStringLiteral("cannot create a temporary data directory"));
            read->dataDirectory = scenarioDirectory->path();
        }
    }
    RuntimeOptions &options = *read;
    // The team's policy (docs/POLICY.md), read as the start's first step: one that cannot be
    // used, or that locks a setting given above, fails the start (exit 2, its words).
    options.policySource = TeamPolicy::systemWideSource();
    // An MCP server that wants a sign-in asks for it on the terminal (the address is printed
    // and the redirect waited for, bounded by mcpSignInTimeoutMs): nobody else could click.
    options.mcpSignInWhenAsked = true;
    if (!QDir().mkpath(options.dataDirectory))
        return usageError(
            QStringLiteral("cannot create the data directory %1").arg(options.dataDirectory));
    QString logProblem;
    installLocalLog(options.dataDirectory, parser.isSet(verbose), &logProblem);
    if (!logProblem.isEmpty())
        return usageError(logProblem);

    for (const QCommandLineOption *option : {&conversation, &requestId}) {
        const QString value = parser.value(*option);
        if (parser.isSet(*option) && !AgentLoop::isValidRequestId(value))
            return usageError(QStringLiteral("--%1: use 1 to 64 letters, digits, '-', '_' "
                                             "or '.'")
                                  .arg(option->names().constFirst()));
    }
    // Checked before any turn runs: a bad name must not cost the turns.
    const QString exportPath = parser.isSet(exportTo)
        ? QFileInfo(parser.value(exportTo)).absoluteFilePath()
        : QString();
    if (parser.isSet(exportTo)) {
        if (!ConversationExport::formatForPath(exportPath))
            return usageError(QStringLiteral("--export: name the file .json or .md"));
        if (QFileInfo(exportPath).isDir())
            return usageError(QStringLiteral("--export: %1 is a directory").arg(exportPath));
    }
    const QStringList words = parser.positionalArguments();
    const QStringList questions = words.isEmpty() ? QStringList()
                                                  : QStringList{words.join(QLatin1Char(' '))};
    if (!questions.isEmpty() && questions.constFirst().trimmed().isEmpty())
        return usageError(QStringLiteral("the question is empty: ask something, or give no "
                                         "QUESTION to read questions from standard input"));
    if (!questions.isEmpty()
        && questions.constFirst().trimmed().size() > AgentLoop::maxQuestionLength)
        return usageError(QStringLiteral("the question is longer than %1 characters")
                              .arg(AgentLoop::maxQuestionLength));

    QString teamProblem;
    const bool isTeamCommand = teamCommand.read(parser, !options.teamSpec.isEmpty(),
                                                !questions.isEmpty(), &teamProblem);
    if (!teamProblem.isEmpty())
        return usageError(teamProblem);

    AgentRuntime runtime(options);
    if (isTeamCommand)
        return teamCommand.run(runtime, parser.isSet(json));
    runtime.mcp()->setBrowserOpener([](const QUrl &url) {
        // The address is no secret (no token, no verifier), but it is the terminal's only:
        // never the local log. stderr, so that --json output stays one object per line.
        std::fprintf(stderr,
                     "An MCP server asks you to sign in. Open this address in your browser and "
                     "sign in; the console waits for the redirect:\n  %s\n",
                     url.toEncoded().constData());
        std::fflush(stderr);
        return true;
    });
    CliSession session(&runtime, parser.isSet(json));
    int exitCode = 0;
    // --export-audit: the audit trail's rows of the exported turns, read before the file is
    // written (null without the option); a trail that cannot be read fails the export.
    const auto withAuditRows = [&](const QList<TurnResult> &turns,
                                   std::function<void(const AuditPage *)> write,
                                   std::function<void()> stop) {
        if (!parser.isSet(exportAudit)) {
            write(nullptr);
            return;
        }
        await(runtime.audit()->rowsOfTurns(turns), &app,
              [&, write = std::move(write), stop = std::move(stop)](const AuditPage &page) {
                  if (!page.ok()) {
                      exitCode = usageError(
                          QStringLiteral("--export-audit: the audit trail could not be read; "
                                         "nothing was exported (the local log says why)"));
                      stop();
                      return;
                  }
                  write(&page);
              });
    };
    QObject::connect(&runtime, &AgentRuntime::failed, &app, [&](const QString &reason) {
        exitCode = usageError(reason);
        app.exit(exitCode);
    });
    // The controlling terminal, opened when a prompt first asks on it: confirmations and MCP
    // servers' questions take turns on it. Made before both, so that it outlives them.
    TerminalLines terminal;
    std::unique_ptr<TerminalConfirmation> confirmation;
    // MCP servers' questions: asked on the terminal only when standard input is one and the
    // questions came from the command line; --yes never answers them. Connected before
    // start(), so that the runtime knows someone may answer.
    TerminalQuestion mcpQuestions(runtime.mcp(), &terminal,
                                  isatty(STDIN_FILENO) == 1 && !questions.isEmpty());
    if (toRun) {
        // The runner answers the scenario's confirmations itself, as the file says.
        ScenarioRunner runner(&runtime);
        runner.setLanguage(questionLanguage == QLatin1String("zh") ? Language::Chinese
                                                                   : Language::English);
        const bool asJson = parser.isSet(json);
        QObject::connect(&runner, &ScenarioRunner::turnFinished, &app,
                         [asJson](int, const TurnResult &result) { printTurn(result, asJson); });
        QObject::connect(
            &runner, &ScenarioRunner::finished, &app, [&](const ScenarioVerdict &verdict) {
                QTextStream out(stdout);
                if (asJson) {
                    out << QJsonDocument(
                               QJsonObject{{QStringLiteral("verdict"), verdict.toJson()}})
                               .toJson(QJsonDocument::Compact)
                        << '\n';
                } else {
                    out << QStringLiteral("scenario %1: %2 (%3 turn(s), %4 ms)\n")
                               .arg(verdict.scenario,
                                    verdict.matched ? QStringLiteral("matched")
                                                    : QStringLiteral("did not match"))
                               .arg(verdict.turns.size())
                               .arg(verdict.elapsedMs);
                    for (const QString &note : verdict.notes)
                        out << "  · " << note << '\n';
                    for (const QString &difference : verdict.differenceLines())
                        out << "  - " << difference << '\n';
                }
                out.flush();
                if (!verdict.matched)
                    std::fprintf(stderr, "agent-cli: scenario %s did not match: %s\n",
                                 qPrintable(verdict.scenario),
                                 qPrintable(verdict.differenceLines().join(QStringLiteral("; "))));
                exitCode = verdict.matched ? 0 : kScenarioDiffered;
                if (exportPath.isEmpty()) {
                    app.exit(exitCode);
                    return;
                }
                withAuditRows(
                    verdict.turns,
                    [&, verdict](const AuditPage *rows) {
                        QString problem;
                        ConversationExport exported = ConversationExport::fromScenarioRun(
                            runtime, *toRun, verdict.turns);
                        if (rows)
                            exported.setAuditRows(rows->rows, !rows->more);
                        if (exported.writeTo(exportPath, &problem))
                            std::fprintf(stderr, "agent-cli: exported %d turn(s) to %s\n",
                                         int(verdict.turns.size()), qPrintable(exportPath));
                        else
                            exitCode = usageError(problem);
                        app.exit(exitCode);
                    },
                    [&] { app.exit(exitCode); });
            });
        QObject::connect(&runtime, &AgentRuntime::ready, &app, [&] {
            QString why;
            if (!runner.start(*toRun, &why)) {
                exitCode = usageError(QStringLiteral("scenario %1: %2").arg(toRun->name, why));
                app.exit(exitCode);
            }
        });
        runtime.start();
        app.exec();
        return exitCode;
    }
    if (parser.isSet(listTools)) {
        // Printed once every MCP server's first start has ended (ready, or down and why).
        QObject::connect(&runtime, &AgentRuntime::ready, &app, [&] {
            const Mcp::ServerSet *servers = runtime.mcp()->servers();
            if (!servers || servers->hasSettled()) {
                printTools(runtime, parser.isSet(json));
                app.exit(0);
                return;
            }
            QObject::connect(
                runtime.mcp(), &McpServers::settled, &app,
                [&] {
                    printTools(runtime, parser.isSet(json));
                    app.exit(0);
                },
                Qt::SingleShotConnection);
        });
        runtime.start();
        app.exec();
        return exitCode;
    }
    if (parser.isSet(audit)) {
        QObject::connect(&runtime, &AgentRuntime::ready, &app, [&] {
            const WriteAudit::Filter filter{parser.value(auditOrder), parser.value(auditStaff),
                                            auditDayValue};
            await(runtime.audit()->read(filter, 0, AuditQuery::maxPageSize), &app,
                  [&](const AuditPage &page) {
                      exitCode = printAudit(runtime, page, parser.isSet(json));
                      app.exit(exitCode);
                  });
        });
        runtime.start();
        app.exec();
        return exitCode;
    }
    if (parser.isSet(counters)) {
        // The duplicate check starts with the runtime; the totals are read once it answered.
        const RuntimeMonitor *monitor = runtime.monitor();
        QObject::connect(
            monitor, &RuntimeMonitor::duplicateBusinessObjectsChecked, &app,
            [&] {
                await(monitor->counterTotals(), &app, [&](const QJsonObject &totals) {
                    std::fputs(QJsonDocument(totals)
                                   .toJson(QJsonDocument::Compact)
                                   .append('\n')
                                   .constData(),
                               stdout);
                    app.exit(0);
                });
            },
            Qt::SingleShotConnection);
        runtime.start();
        app.exec();
        return exitCode;
    }
    bool damagedCheckpoint = false;
    bool sessionRunning = false;
    // Ctrl-C cancels the running turn rather than killing the process with the turn left
    // interrupted; at the prompt, or a second time, it quits (through the same goodbye as the
    // end of the input). Before the session runs, it quits at once. SIGTERM keeps its default:
    // a kill is a crash the next start resumes from.
    const auto interrupts = onTerminationSignals(
        {TerminationSignal::Interrupt}, [&](TerminationSignal) {
            if (sessionRunning && !session.isDone()) {
                session.interrupt();
                return;
            }
            // Before the session, or during its goodbye: at once.
            if (!sessionRunning)
                exitCode = CliSession::interruptedExitCode;
            app.exit(exitCode);
        });
    QObject::connect(&runtime, &AgentRuntime::ready, &session, [&] {
        // Turns that are not offered are said, not dropped; a damaged one fails --resume.
        for (const SetAsideTurn &turn : runtime.recovery()->setAsideTurns()) {
            std::fprintf(stderr, "agent-cli: %s\n", qPrintable(turn.describe()));
            damagedCheckpoint |= turn.reason == SetAsideTurn::Reason::Damaged;
        }
        confirmation = std::make_unique<TerminalConfirmation>(runtime.agentLoop(), &terminal,
                                                              parser.isSet(yes),
                                                              parser.isSet(allowDuplicate));
        // Ctrl-D at a confirmation ends the session: a closed terminal is asked nothing more.
        QObject::connect(confirmation.get(), &TerminalConfirmation::terminalClosed, &session,
                         &CliSession::endInput);
        session.setFirstRequest(parser.value(conversation), parser.value(requestId));
        if (parser.isSet(resume))
            session.setTurnsToResume(runtime.recovery()->interruptedTurns());
        // Each turn waits (bounded, --mcp-wait) for MCP servers still starting before its
        // first model request: the agent loop's own rule, the same in the window.
        sessionRunning = true;
        session.run(questions);
    });
    // --export: the session's turns with the runtime's faults, policies and counter totals,
    // written once the totals are read; a file that cannot be written fails the run (2).
    bool finishing = false;
    // The MCP servers are ended as the specification asks before the process goes (a call
    // still in flight is told notifications/cancelled; a stdio server gets its stdin closed,
    // SIGTERM, SIGKILL), bounded: the goodbye of stdin and SIGTERM, 2 s each, and a margin.
    const auto exitAfterGoodbye = [&] {
        runtime.mcp()->close(kMcpGoodbyeMs, &app, [&] { app.exit(exitCode); });
    };
    const auto finish = [&] {
        if (std::exchange(finishing, true))
            return; // the duplicate check may report more than once
        if (exportPath.isEmpty()) {
            exitAfterGoodbye();
            return;
        }
        await(runtime.monitor()->counterTotals(), &app, [&](const QJsonObject &totals) {
            withAuditRows(
                session.finishedTurns(),
                [&, totals](const AuditPage *rows) {
                    ConversationExport exported = ConversationExport::fromRuntime(
                        runtime, session.finishedTurns());
                    exported.setCounterTotals(totals);
                    if (rows)
                        exported.setAuditRows(rows->rows, !rows->more);
                    QString problem;
                    if (exported.writeTo(exportPath, &problem)) {
                        std::fprintf(stderr, "agent-cli: exported %d turn(s) to %s\n",
                                     int(session.finishedTurns().size()), qPrintable(exportPath));
                    } else {
                        exitCode = usageError(problem);
                    }
                    exitAfterGoodbye();
                },
                exitAfterGoodbye);
        });
    };
    QObject::connect(&session, &CliSession::done, &app, [&](int code) {
        if (code == 0 && damagedCheckpoint && parser.isSet(resume))
            code = kTurnFailed; // an interrupted turn could not be carried on
        exitCode = code;
        // The last turn's duplicate check is stored with it: let it finish (it is bounded by
        // the backend's transfer timeout) rather than cancel it.
        if (runtime.monitor()->isCheckingDuplicates()) {
            QObject::connect(runtime.monitor(), &RuntimeMonitor::duplicateBusinessObjectsChecked,
                             &app, [&] {
                                 if (!runtime.monitor()->isCheckingDuplicates())
                                     finish();
                             });
            return;
        }
        finish();
    });
    runtime.start();
    app.exec();
    return exitCode;
}
