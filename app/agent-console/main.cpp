// agent-console: the desktop window. Wiring only: options, the local log, the runtime and the
// window; everything that decides lives in core/.
#include "core/agent/agentruntime.h"
#include "core/telemetry/locallog.h"
#include "ui/mainwindow.h"

#include <QApplication>
#include <QCommandLineOption>
#include <QCommandLineParser>

using namespace AgentConsole;

int main(int argc, char *argv[])
{
    QApplication app(argc, argv);
    // The same names as agent-cli, so that both use the same default data directory.
    QApplication::setOrganizationName(QStringLiteral("AgentConsole"));
    QApplication::setApplicationName(QStringLiteral("agent-console"));
    QApplication::setApplicationDisplayName(QStringLiteral("Agent Console"));
    QApplication::setApplicationVersion(QStringLiteral(AGENT_CONSOLE_VERSION));

    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral(
        "Customer-support console: ask about orders, shipments and stock; every tool call is "
        "shown with its outcome and attempt history."));
    parser.addHelpOption();
    parser.addVersionOption();
    const QCommandLineOption dataDirOption(
        QStringLiteral("data-dir"),
        QStringLiteral("Where the embedded store and the local log live (default: %1).")
            .arg(RuntimeOptions::defaultDataDirectory()),
        QStringLiteral("dir"));
    const QCommandLineOption faultsOption(
        QStringLiteral("faults"), QStringLiteral("A JSON fault plan to inject into the tools."),
        QStringLiteral("file"));
    const QCommandLineOption userOption(
        QStringLiteral("user"), QStringLiteral("The staff member's user id."),
        QStringLiteral("id"));
    const QCommandLineOption tenantOption(
        QStringLiteral("tenant"), QStringLiteral("The tenant id."), QStringLiteral("id"));
    parser.addOptions({dataDirOption, faultsOption, userOption, tenantOption});
    parser.process(app);

    RuntimeOptions options;
    options.dataDirectory = parser.isSet(dataDirOption) ? parser.value(dataDirOption)
                                                        : RuntimeOptions::defaultDataDirectory();
    options.faultPlanFile = parser.value(faultsOption);
    options.userId = parser.value(userOption);
    options.tenantId = parser.value(tenantOption);

    installLocalLog(options.dataDirectory, true);

    AgentRuntime runtime(options);
    ConsoleWindow window(&runtime);
    window.show();
    runtime.start();
    return app.exec();
}
