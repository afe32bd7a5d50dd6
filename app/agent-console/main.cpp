// agent-console: the desktop window. Wiring only: options, the local log, the runtime and the
// window; everything that decides lives in core/.
#include "core/async/terminationsignals.h"
#include "core/console/agentruntime.h"
#include "core/console/mcpservers.h"
#include "core/console/consolesettings.h"
#include "core/console/runtimecommandline.h"
#include "core/console/teampolicy.h"
#include "core/telemetry/locallog.h"
#include "ui/window/applicationicon.h"
#include "ui/window/consolelanguage.h"
#include "ui/window/consoleshell.h"

#include <QApplication>
#include <QCommandLineOption>
#include <QCommandLineParser>
#include <QDesktopServices>
#include <QEventLoop>
#include <QIcon>
#include <QSocketNotifier>

#include <cstdio>
#include <cstring>
#include <memory>

using namespace AgentConsole;

namespace {

void setApplicationNames()
{
    // The same names as agent-cli, so that both use the same default data directory.
    QCoreApplication::setOrganizationName(QStringLiteral("AgentConsole"));
    QCoreApplication::setApplicationName(QStringLiteral("agent-console"));
    QCoreApplication::setApplicationVersion(QStringLiteral(AGENT_CONSOLE_VERSION));
}

// --help and --version print text and exit: they must work without a display.
bool asksOnlyForText(int argc, char *argv[])
{
    for (int i = 1; i < argc; ++i) {
        for (const char *flag : {"-h", "-?", "--help", "--help-all", "-v", "--version"}) {
            if (std::strcmp(argv[i], flag) == 0)
                return true;
        }
    }
    return false;
}

} // namespace

int main(int argc, char *argv[])
{
    // Before the options are made: --help shows the default data directory, which follows
    // these names (made first, it showed only the generic data folder).
    setApplicationNames();
    const RuntimeCommandLine options;
    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral(
        "Customer-support console: ask about orders, shipments and stock; every tool call is "
        "shown with its outcome and attempt history."));
    parser.addHelpOption();
    parser.addVersionOption();
    options.addTo(parser);
    if (asksOnlyForText(argc, argv)) {
        QCoreApplication textOnly(argc, argv);
        parser.process(textOnly); // prints and exits
        return 0;
    }

    // Bad options stop before any window opens (and before a display is needed), with one
    // line that names the option.
    QStringList arguments;
    for (int i = 0; i < argc; ++i)
        arguments.append(QString::fromLocal8Bit(argv[i]));
    // The stored settings first; an option on the command line (or the key's variable) wins
    // over them where it is given. A broken value is reported and its default used.
    ConsoleSettings stored;
    stored.load();
    for (const QString &problem : stored.problems())
        std::fprintf(stderr, "agent-console: settings: %s\n", qPrintable(problem));
    QString error;
    std::optional<RuntimeOptions> read;
    if (!parser.parse(arguments))
        error = parser.errorText();
    else
        read = options.read(parser, &error, stored.startOptions());
    if (!read) {
        std::fprintf(stderr, "agent-console: %s\n", qPrintable(error));
        return 2;
    }
    // The team's policy (docs/POLICY.md), read off the GUI thread as the start's first step.
    read->policySource = TeamPolicy::systemWideSource();
    RuntimeOptions &runtimeOptions = *read;
    // The window asks whether to work alone when the team's database is out of reach
    // (--alone-if-unreachable answers beforehand).
    if (runtimeOptions.whenTeamUnreachable == RuntimeOptions::WhenTeamUnreachable::Refuse)
        runtimeOptions.whenTeamUnreachable = RuntimeOptions::WhenTeamUnreachable::Ask;

    QApplication app(argc, argv);
    QApplication::setApplicationDisplayName(QStringLiteral("Agent Console"));
    // The desktop entry's name (without .desktop): Wayland compositors and docks match the
    // window to its entry, and so to its icon, by it.
    QGuiApplication::setDesktopFileName(QStringLiteral("org.agentconsole.AgentConsole"));
    QApplication::setWindowIcon(applicationIcon());
    // The stored language, or the system's for "system": before the first widget is made.
    ConsoleLanguage::install(stored.settings().language);

    QString logProblem;
    installLocalLog(runtimeOptions.dataDirectory, true, &logProblem);
    if (!logProblem.isEmpty()) {
        std::fprintf(stderr, "agent-console: %s\n", qPrintable(logProblem));
        return 2;
    }

    AgentRuntime runtime(runtimeOptions);
    // An MCP server's sign-in page opens in the staff member's own browser (RFC 8252: never
    // an embedded view, whose cookies and password manager are not theirs).
    runtime.mcp()->setBrowserOpener(
        [](const QUrl &url) { return QDesktopServices::openUrl(url); });
    // Why the console did not start is in the window; the same line goes to stderr for a
    // console started from a terminal or a script, and the exit status says it too (2, as
    // for a bad option) once the staff member has read it and closed the window.
    bool startFailed = false;
    QObject::connect(&runtime, &AgentRuntime::failed, &app, [&startFailed](const QString &reason) {
        startFailed = true;
        std::fprintf(stderr, "agent-console: %s\n", qPrintable(reason));
    });
    // The window, made again by the shell when staff switch the language in Settings.
    ConsoleShell shell(&runtime, &stored);
    shell.show();
    runtime.start();
    // A logout or `kill` ends the window as closing it does: the goodbye below still runs.
    const auto signalNotifier = quitOnTerminationSignals();
    const int status = app.exec();
    // The window is gone; before the runtime goes, its MCP servers are ended as the
    // specification asks (calls in flight told notifications/cancelled, a stdio server's
    // stdin closed, then SIGTERM, then SIGKILL), within 5 s, as agent-cli ends them.
    QEventLoop goodbye;
    runtime.mcp()->close(5000, &goodbye, [&goodbye] { goodbye.quit(); });
    goodbye.exec();
    return startFailed ? 2 : status;
}
