// agent-cli --export end to end: the API keys set in the environment are read and sent to the
// providers (fake OpenAI servers on 127.0.0.1), and never appear in the .json or .md export,
// nor on stdout; a key the model itself repeats is redacted in the export (docs/EXPORT.md).
#include "clirun.h"
#include "fakeopenaiserver.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

using namespace AgentConsole::Testing;

namespace {

const QString kQuestion = QStringLiteral("Where is order A1001 and is SKU-200 in stock?");
// Recognisable, and the secondary one shaped like no known kind of key: only the lookup of the
// console's key variables can take it out.
const QByteArray kPrimaryKey = "sk-export-test-PRIMARY-4f1c2e9a7b";
const QByteArray kSecondaryKey = "Quokka-Secondary-5521";

FakeResponse plannedToolCalls(const QString &inventoryArguments)
{
    return FakeResponse::events({
        {Sse::role()},
        {Sse::toolCall(0, QStringLiteral("call_a"), QStringLiteral("queryLogistics"),
            QStringLiteral("{\"orderId\":\"A1001\"}"))},
        {Sse::toolCall(
            1, QStringLiteral("call_b"), QStringLiteral("queryInventory"), inventoryArguments)},
        {Sse::finish(QStringLiteral("tool_calls"))},
        {Sse::done()},
    });
}

FakeResponse streamedAnswer(const QString &text)
{
    return FakeResponse::events({{Sse::role()}, {Sse::content(text)},
        {Sse::finish(QStringLiteral("stop"))}, {Sse::done()}});
}

QByteArray readAll(const QString &path)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return {};
    return file.readAll();
}

} // namespace

class tst_ExportSecrets final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void init();
    void cleanup();

    void keysInTheEnvironmentNeverReachAnExport_data();
    void keysInTheEnvironmentNeverReachAnExport();
    void aKeyTheModelRepeatsIsRedacted();
    void aScenarioRunIsExportedWithTheFaultsItSet();
    void badExportNamesAreRefusedBeforeAnyTurn_data();
    void badExportNamesAreRefusedBeforeAnyTurn();

private:
    // The primary provider is out of quota, so the secondary one answers: both keys are read.
    void scriptProviders(const QString &inventoryArguments, const QString &answer);
    QStringList providerArguments() const;
    CliRun runCli(const QStringList &arguments);

    std::unique_ptr<QTemporaryDir> m_dir;
    std::unique_ptr<FakeOpenAiServer> m_primary;
    std::unique_ptr<FakeOpenAiServer> m_secondary;
};

void tst_ExportSecrets::init()
{
    m_dir = std::make_unique<QTemporaryDir>();
    QVERIFY(m_dir->isValid());
    m_primary = std::make_unique<FakeOpenAiServer>();
    QVERIFY(m_primary->listen());
    m_secondary = std::make_unique<FakeOpenAiServer>();
    QVERIFY(m_secondary->listen());
}

void tst_ExportSecrets::cleanup()
{
    m_primary.reset();
    m_secondary.reset();
    m_dir.reset();
}

void tst_ExportSecrets::scriptProviders(const QString &inventoryArguments, const QString &answer)
{
    m_primary->enqueue(
        FakeResponse::error(429, QStringLiteral("insufficient_quota"), QStringLiteral("quota")));
    m_secondary->enqueue(plannedToolCalls(inventoryArguments));
    m_secondary->enqueue(streamedAnswer(answer));
}

QStringList tst_ExportSecrets::providerArguments() const
{
    return {QStringLiteral("--provider"), QStringLiteral("openai"), QStringLiteral("--base-url"),
        m_primary->baseUrl().toString(), QStringLiteral("--model"),
        QStringLiteral("primary-model"), QStringLiteral("--secondary-base-url"),
        m_secondary->baseUrl().toString(), QStringLiteral("--secondary-model"),
        QStringLiteral("secondary-model")};
}

// The fake servers live in this process: the CLI is waited for with the event loop running.
CliRun tst_ExportSecrets::runCli(const QStringList &arguments)
{
    QProcess process;
    QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
    environment.insert(QStringLiteral("AGENT_CONSOLE_API_KEY"), QString::fromLatin1(kPrimaryKey));
    environment.insert(
        QStringLiteral("AGENT_CONSOLE_SECONDARY_API_KEY"), QString::fromLatin1(kSecondaryKey));
    process.setProcessEnvironment(environment);
    QSignalSpy finished(&process, &QProcess::finished);
    process.start(QStringLiteral(AGENT_CLI_PATH),
        QStringList{QStringLiteral("--data-dir"), m_dir->path()} + arguments);
    process.closeWriteChannel();
    if (!finished.wait(60'000)) {
        process.kill();
        process.waitForFinished(5'000);
        qFatal("agent-cli did not finish");
    }
    return {process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -1,
        process.readAllStandardOutput(), process.readAllStandardError()};
}

void tst_ExportSecrets::keysInTheEnvironmentNeverReachAnExport_data()
{
    QTest::addColumn<QString>("fileName");
    QTest::newRow("json") << QStringLiteral("report.json");
    QTest::newRow("markdown") << QStringLiteral("report.md");
}

void tst_ExportSecrets::keysInTheEnvironmentNeverReachAnExport()
{
    QFETCH(QString, fileName);
    scriptProviders(QStringLiteral("{\"sku\":\"SKU-200\"}"),
        QStringLiteral("A1001 is at Shanghai Pudong Hub; SKU-200 has 3 left."));
    const QString path = m_dir->filePath(fileName);
    const CliRun run = runCli(providerArguments()
        + QStringList{QStringLiteral("--json"), QStringLiteral("--export"), path, kQuestion});
    QCOMPARE(run.exitCode, 0);
    QVERIFY2(run.err.contains("exported 1 turn(s) to " + path.toUtf8()), run.err.constData());

    // Both keys were really read and used: each provider got its own as a bearer token.
    QCOMPARE(m_primary->requestCount(), 1);
    QCOMPARE(m_primary->requests()[0].headers.value("authorization"), "Bearer " + kPrimaryKey);
    QCOMPARE(m_secondary->requestCount(), 2);
    QCOMPARE(m_secondary->requests()[0].headers.value("authorization"), "Bearer " + kSecondaryKey);

    const QByteArray exported = readAll(path);
    QVERIFY(!exported.isEmpty());
    for (const QByteArray &key : {kPrimaryKey, kSecondaryKey}) {
        QVERIFY2(!exported.contains(key), exported.constData());
        QVERIFY(!run.out.contains(key));
        QVERIFY(!run.err.contains(key));
    }
    // The export is the turn stdout printed, with the environment: models by name, no URL.
    QVERIFY(!exported.contains("127.0.0.1"));
    QVERIFY(exported.contains("secondary-model"));
    if (fileName.endsWith(QLatin1String(".json"))) {
        const QJsonObject root = QJsonDocument::fromJson(exported).object();
        QCOMPARE(root.value(QLatin1String("format")).toString(),
            QStringLiteral("agent-console-export"));
        const QJsonArray turns = root.value(QLatin1String("turns")).toArray();
        QCOMPARE(turns.size(), 1);
        QCOMPARE(turns.first().toObject(), run.turn());
        QCOMPARE(root.value(QLatin1String("environment"))
                     .toObject()
                     .value(QLatin1String("provider"))
                     .toString(),
            QStringLiteral("openai-compatible"));
        QVERIFY(root.value(QLatin1String("totals")).isObject());
    } else {
        QVERIFY(exported.startsWith("# Agent Console conversation export"));
        QVERIFY(exported.contains("> A1001 is at Shanghai Pudong Hub; SKU-200 has 3 left."));
        QVERIFY(exported.contains("| Attempt | Outcome | Started | Duration | Next delay |"));
        QVERIFY(exported.contains("| fallback_model_count | 2 |"));
    }
}

void tst_ExportSecrets::aKeyTheModelRepeatsIsRedacted()
{
    // A model that echoes what it should never have seen, in its arguments and its answer.
    const QString primary = QString::fromLatin1(kPrimaryKey);
    const QString secondary = QString::fromLatin1(kSecondaryKey);
    scriptProviders(QStringLiteral("{\"sku\":\"SKU-200\",\"note\":\"%1\"}").arg(secondary),
        QStringLiteral("Keys: %1 and %2.").arg(primary, secondary));
    const QString json = m_dir->filePath(QStringLiteral("echo.json"));
    QCOMPARE(runCli(providerArguments() + QStringList{QStringLiteral("--export"), json, kQuestion})
                 .exitCode,
        0);
    scriptProviders(QStringLiteral("{\"sku\":\"SKU-200\",\"note\":\"%1\"}").arg(secondary),
        QStringLiteral("Keys: %1 and %2.").arg(primary, secondary));
    const QString md = m_dir->filePath(QStringLiteral("echo.md"));
    QCOMPARE(runCli(providerArguments() + QStringList{QStringLiteral("--export"), md, kQuestion})
                 .exitCode,
        0);
    for (const QString &path : {json, md}) {
        const QByteArray exported = readAll(path);
        QVERIFY(exported.contains("Keys: [redacted] and [redacted]."));
        for (const QByteArray &key : {kPrimaryKey, kSecondaryKey})
            QVERIFY2(!exported.contains(key), exported.constData());
    }
}

// The runner restores the console's faults when the scenario is over; the export still names
// the ones the scenario ran under.
void tst_ExportSecrets::aScenarioRunIsExportedWithTheFaultsItSet()
{
    const QString path = m_dir->filePath(QStringLiteral("scenario.json"));
    const CliRun run = runCli({QStringLiteral("--scenario"), QStringLiteral("access-denied"),
        QStringLiteral("--export"), path});
    QCOMPARE(run.exitCode, 0);
    QVERIFY2(run.err.contains("exported 1 turn(s) to " + path.toUtf8()), run.err.constData());
    const QJsonObject root = QJsonDocument::fromJson(readAll(path)).object();
    const QJsonObject faults = root.value(QLatin1String("faults")).toObject();
    QVERIFY(faults.value(QLatin1String("active")).toBool());
    QVERIFY(faults.value(QLatin1String("plan"))
                .toObject()
                .value(QLatin1String("tools"))
                .toObject()
                .value(QLatin1String("queryOrderStatus"))
                .toObject()
                .value(QLatin1String("accessDenied"))
                .toBool());
    const QJsonArray turns = root.value(QLatin1String("turns")).toArray();
    QCOMPARE(turns.size(), 1);
    QCOMPARE(turns.first()
                 .toObject()
                 .value(QLatin1String("toolCalls"))
                 .toArray()
                 .first()
                 .toObject()
                 .value(QLatin1String("code"))
                 .toString(),
        QStringLiteral("TOOL_ACCESS_DENIED"));
}

void tst_ExportSecrets::badExportNamesAreRefusedBeforeAnyTurn_data()
{
    QTest::addColumn<QString>("name");
    QTest::addColumn<QByteArray>("message");
    QTest::newRow("other extension")
        << QStringLiteral("report.txt") << QByteArray("name the file .json or .md");
    QTest::newRow("a directory") << QStringLiteral("folder.json") << QByteArray("is a directory");
}

void tst_ExportSecrets::badExportNamesAreRefusedBeforeAnyTurn()
{
    QFETCH(QString, name);
    QFETCH(QByteArray, message);
    QVERIFY(QDir(m_dir->path()).mkdir(QStringLiteral("folder.json")));
    const CliRun run = runCli(providerArguments()
        + QStringList{QStringLiteral("--export"), m_dir->filePath(name), kQuestion});
    QCOMPARE(run.exitCode, 2);
    QVERIFY2(run.err.contains(message), run.err.constData());
    QCOMPARE(m_primary->requestCount(), 0); // no turn ran
    QVERIFY(!QFile::exists(m_dir->filePath(QStringLiteral("report.txt"))));
}

QTEST_MAIN(tst_ExportSecrets)
#include "tst_exportsecrets.moc"
