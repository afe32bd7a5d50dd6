// agent-console: the desktop window. Wiring only: options, the local log, the runtime and the
// window; everything that decides lives in core/.
#include "core/agent/agentruntime.h"
#include "core/telemetry/locallog.h"
#include "ui/mainwindow.h"

#include <QApplication>
#include <QCommandLineOption>
#include <QCommandLineParser>

#include <cstring>
#include <memory>

using namespace AgentConsole;

namespace {

struct ConsoleOptions
{
    QCommandLineOption dataDir{QStringLiteral("data-dir"),
                               QStringLiteral("Where the embedded store and the local log live "
                                              "(default: %1).")
                                   .arg(RuntimeOptions::defaultDataDirectory()),
                               QStringLiteral("dir")};
    QCommandLineOption faults{QStringLiteral("faults"),
                              QStringLiteral("A JSON fault plan to inject (docs/FAULTS.md)."),
                              QStringLiteral("file")};
    QCommandLineOption user{QStringLiteral("user"), QStringLiteral("The staff member's user id."),
                            QStringLiteral("id")};
    QCommandLineOption tenant{QStringLiteral("tenant"), QStringLiteral("The tenant id."),
                              QStringLiteral("id")};

    void addTo(QCommandLineParser &parser) const
    {
        parser.setApplicationDescription(QStringLiteral(
            "Customer-support console: ask about orders, shipments and stock; every tool call "
            "is shown with its outcome and attempt history."));
        parser.addHelpOption();
        parser.addVersionOption();
        parser.addOptions({dataDir, faults, user, tenant});
    }
};

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
    const ConsoleOptions options;
    QCommandLineParser parser;
    options.addTo(parser);
    if (asksOnlyForText(argc, argv)) {
        QCoreApplication textOnly(argc, argv);
        setApplicationNames();
        parser.process(textOnly); // prints and exits
        return 0;
    }

    QApplication app(argc, argv);
    setApplicationNames();
    QApplication::setApplicationDisplayName(QStringLiteral("Agent Console"));
    parser.process(app);

    RuntimeOptions runtimeOptions;
    runtimeOptions.dataDirectory = parser.isSet(options.dataDir)
        ? parser.value(options.dataDir)
        : RuntimeOptions::defaultDataDirectory();
    runtimeOptions.faultPlanFile = parser.value(options.faults);
    runtimeOptions.userId = parser.value(options.user);
    runtimeOptions.tenantId = parser.value(options.tenant);

    installLocalLog(runtimeOptions.dataDirectory, true);

    AgentRuntime runtime(runtimeOptions);
    ConsoleWindow window(&runtime);
    window.show();
    runtime.start();
    return app.exec();
}
