#include "core/faults/faultplan.h"

#include <QDir>
#include <QTest>

using namespace AgentConsole;

class tst_FaultPlan : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void parsesEveryField();
    void rejectsBadPlans_data();
    void rejectsBadPlans();
    void unreadableFile();
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
    QTest::newRow("negative seed") << QByteArray(R"({"seed": -3})") << "seed: expected";
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
    QVERIFY2(error.contains(QLatin1String("cannot read")), qPrintable(error));
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
    const QDir folder(QStringLiteral(AGENT_CONSOLE_SOURCE_DIR "/resources/faults"));
    const QStringList plans = folder.entryList({QStringLiteral("*.json")});
    QVERIFY(plans.size() >= 3);
    for (const QString &name : plans) {
        QString error;
        const auto plan = FaultPlan::fromFile(folder.filePath(name), &error);
        QVERIFY2(plan, qPrintable(name + QLatin1String(": ") + error));
        QVERIFY(!plan->isEmpty());
    }
}

QTEST_GUILESS_MAIN(tst_FaultPlan)
#include "tst_faultplan.moc"
