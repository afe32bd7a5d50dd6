#include "core/faults/faultplan.h"
#include "core/support/createtickettool.h"
#include "core/support/supportstore.h"
#include "core/support/supportbackend.h"
#include "core/support/supporttools.h"
#include "core/support/ticketbackend.h"
#include "core/tools/toolregistry.h"

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include <sys/stat.h>

using namespace AgentConsole;

class tst_FaultPlan : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void parsesEveryField();
    void rejectsBadPlans_data();
    void rejectsBadPlans();
    void seedsInRange_data();
    void seedsInRange();
    void toolsMustBeRegistered_data();
    void toolsMustBeRegistered();
    void unreadableFile();
    void onlySmallRegularFiles_data();
    void onlySmallRegularFiles();
    void effectsInOrder();
    void probabilityIsSeededAndDeterministic();
    void latencyAndHangHonourCancellation();
    void summaryNamesEveryFault();
    void modelFaults();
    void shippedPlansAreValid();
};

void tst_FaultPlan::parsesEveryField()
{
    QString error;
    const auto plan = FaultPlan::fromJson(R"({"seed": 42, "description": "demo",
        "tools": {"queryLogistics": {"latencyMs": 5, "hang": false, "transientFailures": 2,
        "permanentFailure": false, "accessDenied": false, "notFound": true,
        "failureProbability": 0.25}}})", &error);
    QVERIFY2(plan, qPrintable(error));
    QCOMPARE(plan->seed(), 42u);
    const auto fault = plan->faultFor(QStringLiteral("queryLogistics"));
    QVERIFY(fault);
    QCOMPARE(fault->latencyMs, 5);
    QCOMPARE(fault->transientFailures, 2);
    QVERIFY(fault->notFound);
    QCOMPARE(fault->failureProbability, 0.25);
    QVERIFY(!plan->faultFor(QStringLiteral("queryInventory")));
}

void tst_FaultPlan::rejectsBadPlans_data()
{
    QTest::addColumn<QByteArray>("json");
    QTest::addColumn<QString>("expected");
    QTest::newRow("not json") << QByteArray("{tools:") << "not valid JSON";
    QTest::newRow("array") << QByteArray("[]") << "top level must be an object";
    QTest::newRow("unknown top key") << QByteArray(R"({"tool": {}})") << "tool: unknown key";
    QTest::newRow("unknown tool key")
        << QByteArray(R"({"tools": {"queryLogistics": {"latncyMs": 5}}})")
        << "tools.queryLogistics.latncyMs: unknown key";
    QTest::newRow("negative latency")
        << QByteArray(R"({"tools": {"queryLogistics": {"latencyMs": -1}}})")
        << "tools.queryLogistics.latencyMs: expected a whole number";
    QTest::newRow("fractional count")
        << QByteArray(R"({"tools": {"queryLogistics": {"transientFailures": 1.5}}})")
        << "tools.queryLogistics.transientFailures: expected a whole number";
    QTest::newRow("string flag")
        << QByteArray(R"({"tools": {"queryLogistics": {"hang": "yes"}}})")
        << "tools.queryLogistics.hang: expected true or false";
    QTest::newRow("probability above one")
        << QByteArray(R"({"tools": {"queryLogistics": {"failureProbability": 1.5}}})")
        << "tools.queryLogistics.failureProbability: expected a number from 0 to 1";
    QTest::newRow("tool not an object")
        << QByteArray(R"({"tools": {"queryLogistics": 3}})") << "tools.queryLogistics: expected";
    const char *seedRange = "seed: expected a whole number from 0 to 9007199254740991";
    QTest::newRow("negative seed") << QByteArray(R"({"seed": -3})") << seedRange;
    // 1e300 once went through a double-to-integer cast: undefined behaviour.
    QTest::newRow("huge seed") << QByteArray(R"({"seed": 1e300})") << seedRange;
    QTest::newRow("seed past 2^53") << QByteArray(R"({"seed": 9007199254740992})") << seedRange;
    QTest::newRow("hugely negative seed") << QByteArray(R"({"seed": -1e300})") << seedRange;
    QTest::newRow("fractional seed") << QByteArray(R"({"seed": 2.5})") << seedRange;
    QTest::newRow("string seed") << QByteArray(R"({"seed": "7"})") << seedRange;
    QTest::newRow("null seed") << QByteArray(R"({"seed": null})") << seedRange;
    QTest::newRow("description not a string")
        << QByteArray(R"({"description": 3})") << "description: expected a string";
    QTest::newRow("description an object")
        << QByteArray(R"({"description": {"text": "x"}})") << "description: expected a string";
    QTest::newRow("lost answer not a bool")
        << QByteArray(R"({"tools": {"createTicket": {"commitThenLoseAnswer": 1}}})")
        << "tools.createTicket.commitThenLoseAnswer: expected true or false";
}

void tst_FaultPlan::seedsInRange_data()
{
    QTest::addColumn<QByteArray>("json");
    QTest::addColumn<quint64>("seed");
    QTest::newRow("zero") << QByteArray(R"({"seed": 0})") << quint64(0);
    QTest::newRow("absent") << QByteArray(R"({})") << quint64(0);
    QTest::newRow("largest") << QByteArray(R"({"seed": 9007199254740991})")
                             << quint64(9007199254740991);
    QTest::newRow("written with an exponent") << QByteArray(R"({"seed": 1e3})") << quint64(1000);
}

void tst_FaultPlan::seedsInRange()
{
    QFETCH(QByteArray, json);
    QFETCH(quint64, seed);
    QString error;
    const auto plan = FaultPlan::fromJson(json, &error);
    QVERIFY2(plan, qPrintable(error));
    QCOMPARE(plan->seed(), seed);
}

void tst_FaultPlan::toolsMustBeRegistered_data()
{
    QTest::addColumn<QByteArray>("json");
    QTest::addColumn<QString>("expected"); // empty: accepted
    QTest::newRow("registered read tool")
        << QByteArray(R"({"tools": {"queryLogistics": {"hang": true}}})") << QString();
    QTest::newRow("registered write tool")
        << QByteArray(R"({"tools": {"createTicket": {"commitThenLoseAnswer": true}}})")
        << QString();
    QTest::newRow("misspelt tool")
        << QByteArray(R"({"tools": {"queryLogisitcs": {"hang": true}}})")
        << "fault plan: tools.queryLogisitcs: no such tool (the tools are queryLogistics, "
           "createTicket)";
    QTest::newRow("tool of another console")
        << QByteArray(R"({"tools": {"refundOrder": {}}})")
        << "fault plan: tools.refundOrder: no such tool";
    QTest::newRow("write fault on a read tool")
        << QByteArray(R"({"tools": {"queryLogistics": {"commitThenLoseAnswer": true}}})")
        << "fault plan: tools.queryLogistics.commitThenLoseAnswer: only for tools that write "
           "(createTicket)";
}

void tst_FaultPlan::toolsMustBeRegistered()
{
    QFETCH(QByteArray, json);
    QFETCH(QString, expected);
    const KnownTools known{{QStringLiteral("queryLogistics"), QStringLiteral("createTicket")},
                           {QStringLiteral("createTicket")}};
    QString error;
    const auto plan = FaultPlan::fromJson(json, &error, known);
    if (expected.isEmpty()) {
        QVERIFY2(plan, qPrintable(error));
        return;
    }
    QVERIFY(!plan);
    QVERIFY2(error.startsWith(expected), qPrintable(error));
    // Without the registry's names (a plan checked on its own) the names are not judged.
    QVERIFY(FaultPlan::fromJson(json, &error));
}

void tst_FaultPlan::rejectsBadPlans()
{
    QFETCH(QByteArray, json);
    QFETCH(QString, expected);
    QString error;
    QVERIFY(!FaultPlan::fromJson(json, &error));
    QVERIFY2(error.contains(expected), qPrintable(error));
    QVERIFY(!error.contains(QLatin1Char('\n')));
    QVERIFY(error.startsWith(QLatin1String("fault plan: ")));
}

void tst_FaultPlan::unreadableFile()
{
    QString error;
    QVERIFY(!FaultPlan::fromFile(QStringLiteral("/nonexistent/plan.json"), &error));
    QVERIFY2(error.startsWith(QLatin1String("fault plan: /nonexistent/plan.json: cannot open")),
             qPrintable(error));
}

void tst_FaultPlan::onlySmallRegularFiles_data()
{
    QTest::addColumn<QString>("kind");
    QTest::addColumn<QString>("expected"); // after "fault plan: <path>: "; empty: accepted
    QTest::newRow("device that never ends") << "/dev/zero" << "not a regular file";
    QTest::newRow("FIFO without a writer") << "fifo" << "not a regular file";
    QTest::newRow("directory") << "directory" << "not a regular file";
    QTest::newRow("one byte over 1 MiB") << "over" << "larger than 1 MiB";
    QTest::newRow("exactly 1 MiB") << "limit" << QString();
}

void tst_FaultPlan::onlySmallRegularFiles()
{
    QFETCH(QString, kind);
    QFETCH(QString, expected);
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    QString path = dir.filePath(kind);
    if (kind == QLatin1String("/dev/zero")) {
        path = kind;
    } else if (kind == QLatin1String("fifo")) {
        // Opening a FIFO with no writer blocks forever unless the reader refuses it first.
        QVERIFY(::mkfifo(QFile::encodeName(path).constData(), 0600) == 0);
    } else if (kind == QLatin1String("directory")) {
        QVERIFY(QDir(dir.path()).mkdir(kind));
    } else {
        // A valid plan padded with blanks to the limit, or one byte past it.
        QByteArray json = R"({"seed": 1})";
        json.append(QByteArray(1024 * 1024 - json.size() + (kind == QLatin1String("over")),
                               ' '));
        QFile file(path);
        QVERIFY(file.open(QIODevice::WriteOnly));
        QCOMPARE(file.write(json), json.size());
    }
    QString error;
    const auto plan = FaultPlan::fromFile(path, &error);
    if (expected.isEmpty()) {
        QVERIFY2(plan, qPrintable(error));
        QCOMPARE(plan->seed(), 1u);
        return;
    }
    QVERIFY(!plan);
    QCOMPARE(error, QStringLiteral("fault plan: %1: %2").arg(path, expected));
}

void tst_FaultPlan::effectsInOrder()
{
    FaultPlan plan;
    plan.setFault(QStringLiteral("flaky"), ToolFault{0, false, 2, false, false, false, 0.0});
    plan.setFault(QStringLiteral("rejected"), ToolFault{0, false, 0, true, false, false, 0.0});
    plan.setFault(QStringLiteral("denied"), ToolFault{0, false, 0, false, true, false, 0.0});
    plan.setFault(QStringLiteral("missing"), ToolFault{0, false, 0, false, false, true, 0.0});
    const CancellationToken token;
    const QString key = QStringLiteral("{}");
    QCOMPARE(plan.apply(QStringLiteral("flaky"), key, 1, token), FaultEffect::Transient);
    QCOMPARE(plan.apply(QStringLiteral("flaky"), key, 2, token), FaultEffect::Transient);
    QCOMPARE(plan.apply(QStringLiteral("flaky"), key, 3, token), FaultEffect::None);
    QCOMPARE(plan.apply(QStringLiteral("rejected"), key, 1, token), FaultEffect::Permanent);
    QCOMPARE(plan.apply(QStringLiteral("denied"), key, 1, token), FaultEffect::AccessDenied);
    QCOMPARE(plan.apply(QStringLiteral("missing"), key, 1, token), FaultEffect::NotFound);
    QCOMPARE(plan.apply(QStringLiteral("other"), key, 1, token), FaultEffect::None);
}

void tst_FaultPlan::probabilityIsSeededAndDeterministic()
{
    const auto draws = [](quint64 seed) {
        const auto plan = FaultPlan::fromJson(
            QStringLiteral(R"({"seed": %1, "tools": {"t": {"failureProbability": 0.3}}})")
                .arg(seed)
                .toUtf8(),
            nullptr);
        QString pattern;
        const CancellationToken token;
        for (int call = 0; call < 400; ++call) {
            const QString key = QStringLiteral("{\"orderId\":\"A%1\"}").arg(1000 + call);
            pattern += plan->apply(QStringLiteral("t"), key, 1, token) == FaultEffect::Transient
                ? QLatin1Char('x')
                : QLatin1Char('.');
        }
        return pattern;
    };
    const QString first = draws(7);
    QCOMPARE(draws(7), first);
    QVERIFY(draws(8) != first);
    const auto failures = first.count(QLatin1Char('x'));
    // 400 draws at p = 0.3: 120 expected; a fair generator stays well inside this band.
    QVERIFY2(failures > 80 && failures < 160, qPrintable(QString::number(failures)));
}

void tst_FaultPlan::latencyAndHangHonourCancellation()
{
    FaultPlan plan;
    plan.setFault(QStringLiteral("slow"), ToolFault{60'000, false, 0, false, false, false, 0.0});
    plan.setFault(QStringLiteral("hung"), ToolFault{0, true, 0, false, false, false, 0.0});
    const CancellationToken token;
    token.cancel();
    // Already cancelled: neither waits (a minute of latency would time the test out).
    QCOMPARE(plan.apply(QStringLiteral("slow"), QString(), 1, token), FaultEffect::Cancelled);
    QCOMPARE(plan.apply(QStringLiteral("hung"), QString(), 1, token), FaultEffect::Cancelled);
}

void tst_FaultPlan::summaryNamesEveryFault()
{
    const auto plan = FaultPlan::fromJson(
        R"({"tools": {"queryLogistics": {"transientFailures": 2, "latencyMs": 300},
            "queryInventory": {"hang": true}}})",
        nullptr);
    QCOMPARE(plan->summary(),
        QStringLiteral("queryInventory: hang; queryLogistics: +300 ms, first 2 attempts fail"));
    const auto lost = FaultPlan::fromJson(
        R"({"tools": {"createTicket": {"commitThenLoseAnswer": true}}})", nullptr);
    QCOMPARE(lost->summary(), QStringLiteral("createTicket: answer lost after the commit"));
}

void tst_FaultPlan::modelFaults()
{
    QString error;
    const auto plan = FaultPlan::fromJson(R"({"model": {"unavailable": true, "latencyMs": 20}})",
                                          &error);
    QVERIFY2(plan, qPrintable(error));
    QVERIFY(!plan->isEmpty());
    QVERIFY(plan->modelFault()->unavailable);
    QCOMPARE(plan->modelFault()->latencyMs, 20);
    QCOMPARE(plan->summary(), QStringLiteral("model: unavailable, +20 ms"));
    QVERIFY(!FaultPlan::fromJson(R"({"model": {"down": true}})", &error));
    QCOMPARE(error, QStringLiteral("fault plan: model.down: unknown key"));
}

void tst_FaultPlan::shippedPlansAreValid()
{
    // The shipped plans name only tools the console registers, as the runtime checks them.
    ToolRegistry registry;
    const auto store = std::make_shared<SupportStore>(QStringLiteral("unused.sqlite"));
    registerSupportTools(registry, std::make_shared<StoreSupportBackend>(store), nullptr);
    registerTicketTool(registry, std::make_shared<StoreTicketBackend>(store));
    KnownTools known;
    for (const ToolDescriptor &tool : registry.descriptors()) {
        known.names.append(tool.name);
        if (tool.hasSideEffects)
            known.writes.append(tool.name);
    }
    QCOMPARE(known.writes, QStringList{QStringLiteral("createTicket")});

    const QDir folder(QStringLiteral(AGENT_CONSOLE_SOURCE_DIR "/resources/faults"));
    const QStringList plans = folder.entryList({QStringLiteral("*.json")});
    QVERIFY(plans.size() >= 4);
    for (const QString &name : plans) {
        QString error;
        const auto plan = FaultPlan::fromFile(folder.filePath(name), &error, known);
        QVERIFY2(plan, qPrintable(name + QLatin1String(": ") + error));
        QVERIFY(!plan->isEmpty());
    }
}

QTEST_GUILESS_MAIN(tst_FaultPlan)
#include "tst_faultplan.moc"
