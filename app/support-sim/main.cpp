// support-sim: the support REST API on the demo data, with injectable faults, for demos,
// manual QA and the integration tests. docs/SUPPORT-SIM.md describes the API and the faults.
#include "simfaults.h"
#include "supportsim.h"

#include "core/async/terminationsignals.h"
#include "core/faults/boundedfile.h"
#include "core/support/supportstore.h"

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QDir>
#include <QLoggingCategory>
#include <QSocketNotifier>
#include <QTemporaryDir>

#include <cstdio>
#include <memory>

using namespace AgentConsole;

namespace {

int fail(const QString &reason)
{
    std::fprintf(stderr, "support-sim: %s\n", qPrintable(reason));
    return 2;
}

} // namespace

int main(int argc, char *argv[])
{
    QCoreApplication app(argc, argv);
    QCoreApplication::setApplicationName(QStringLiteral("support-sim"));

    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral(
        "The support REST API on the demo data, with faults per route (docs/SUPPORT-SIM.md)."));
    parser.addHelpOption();
    const QCommandLineOption portOption(QStringLiteral("port"),
                                        QStringLiteral("Port to listen on; 0 picks a free one."),
                                        QStringLiteral("PORT"), QStringLiteral("0"));
    const QCommandLineOption hostOption(QStringLiteral("host"),
                                        QStringLiteral("Address to listen on."),
                                        QStringLiteral("ADDRESS"), QStringLiteral("127.0.0.1"));
    const QCommandLineOption faultsOption(QStringLiteral("faults"),
                                          QStringLiteral("JSON fault file applied at start."),
                                          QStringLiteral("FILE"));
    const QCommandLineOption dataOption(QStringLiteral("data-dir"),
                                        QStringLiteral("Directory of the SQLite data file; a "
                                                       "temporary one when omitted."),
                                        QStringLiteral("DIR"));
    const QCommandLineOption verboseOption(QStringLiteral("verbose"),
                                           QStringLiteral("Log every request to stderr."));
    const QCommandLineOption idleOption(
        QStringLiteral("idle-timeout-ms"),
        QStringLiteral("Close a connection after this many milliseconds without a byte "
                       "(100 to 3600000)."),
        QStringLiteral("MS"), QString::number(SimLimits::kDefaultIdleTimeoutMs));
    parser.addOptions(
        {portOption, hostOption, faultsOption, dataOption, verboseOption, idleOption});
    parser.process(app);

    bool portOk = false;
    const uint port = parser.value(portOption).toUInt(&portOk);
    if (!portOk || port > 65535)
        return fail(QStringLiteral("--port: expected a number from 0 to 65535"));
    const QHostAddress host(parser.value(hostOption));
    if (host.isNull())
        return fail(QStringLiteral("--host: not an IP address: %1").arg(parser.value(hostOption)));
    bool idleOk = false;
    const int idleTimeoutMs = parser.value(idleOption).toInt(&idleOk);
    if (!idleOk || idleTimeoutMs < 100 || idleTimeoutMs > 3'600'000)
        return fail(QStringLiteral("--idle-timeout-ms: expected a number from 100 to 3600000"));
    if (parser.isSet(verboseOption))
        QLoggingCategory::setFilterRules(QStringLiteral("agentconsole.sim.info=true"));

    SimFaults faults;
    if (parser.isSet(faultsOption)) {
        // Only a regular file of at most 1 MiB: /dev/zero would never end, a FIFO could
        // block the start forever.
        QString error;
        const auto contents = readBoundedRegularFile(parser.value(faultsOption), kMaxPlanFileBytes,
                                                     &error);
        if (!contents)
            return fail(QStringLiteral("--faults ") + error);
        auto parsed = SimFaults::fromJson(*contents, &error);
        if (!parsed)
            return fail(error);
        faults = std::move(*parsed);
    }

    // Without --data-dir the data lives only as long as the process.
    std::unique_ptr<QTemporaryDir> temporary;
    QString dataDir = parser.value(dataOption);
    if (dataDir.isEmpty()) {
        temporary = std::make_unique<QTemporaryDir>();
        if (!temporary->isValid())
            return fail(QStringLiteral("cannot create a temporary data directory"));
        dataDir = temporary->path();
    }
    auto store = std::make_shared<SupportStore>(
        QDir(dataDir).filePath(QStringLiteral("support-sim.sqlite")));
    QString error;
    if (!store->prepare(&error))
        return fail(error);

    const auto signalNotifier = quitOnTerminationSignals();
    SupportSim sim(store, std::move(faults));
    SimLimits limits;
    limits.idleTimeoutMs = idleTimeoutMs;
    sim.setLimits(limits);
    // A line crash tests wait for (commitThenHang): the ticket is committed, its answer held.
    QObject::connect(&sim, &SupportSim::committedThenHeld, [](const QByteArray &key) {
        // The key exactly as received, bytes and all.
        const QByteArray line = QByteArrayLiteral("support-sim: committed ") + key + '\n';
        std::fwrite(line.constData(), 1, std::size_t(line.size()), stdout);
        std::fflush(stdout);
    });
    const quint16 bound = sim.listen(host, quint16(port), &error);
    if (bound == 0)
        return fail(error);
    const QString shownHost = host.protocol() == QAbstractSocket::IPv6Protocol
        ? QStringLiteral("[%1]").arg(host.toString())
        : host.toString();
    // The one line scripts and tests wait for.
    std::printf("support-sim listening on http://%s:%u\n", qPrintable(shownHost), unsigned(bound));
    std::fflush(stdout);
    return app.exec();
}
