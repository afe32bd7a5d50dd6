// A fault plan's "sim" section reaches the real support-sim on 127.0.0.1 while the console
// runs: SimFaultControl's PUT /sim/faults and reset, its answers (applied, refused with the
// key, unreachable), and AgentRuntime sending the section at start and after a change.

#include "closedport.h"
#include "supportsimprocess.h"
#include "core/turn/agentloop.h"
#include "core/console/agentruntime.h"
#include "core/console/faultcontrol.h"
#include "core/faults/faultplan.h"
#include "core/support/simfaultcontrol.h"

#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QSignalSpy>
#include <QTcpServer>
#include <QTemporaryDir>
#include <QTest>

#include <memory>

using namespace AgentConsole;

namespace {

constexpr int kWaitMs = 10'000;

QJsonObject json(const QByteArray &text)
{
    return QJsonDocument::fromJson(text).object();
}

SimFaultAnswer waitForAnswer(SimFaultControl &control, QSignalSpy &spy, qsizetype count = 1)
{
    if (spy.size() < count && !QTest::qWaitFor([&] { return spy.size() >= count; }, kWaitMs))
        qFatal("support-sim's control API did not answer");
    Q_UNUSED(control);
    return spy.at(count - 1).first().value<SimFaultAnswer>();
}

// The sim's routes as GET /sim/faults gives them.
QJsonObject simRoutes(Testing::SupportSimProcess &sim)
{
    return sim.control("GET", QStringLiteral("/sim/faults"))
        .body.value(QLatin1String("routes"))
        .toObject();
}

} // namespace

class tst_SimFaultControl : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void init();
    void cleanup();

    void putThenReset();
    void refusedFaultsNameTheKey();
    void anUnreachableSimIsSaidPlainly();
    void quickChangesEndWithTheLast();
    void theRuntimeSendsTheSectionAtStartAndOnChange();
    void anUnreachableSimAtStartIsSaid();
    void theEmbeddedStoreRefusesASimSection();
    void shippedSimSectionsAreTakenBySupportSim();

private:
    bool startRuntime(const QUrl &backend, const QByteArray &faults);

    std::unique_ptr<QTemporaryDir> m_dir;
    std::unique_ptr<Testing::SupportSimProcess> m_sim;
    std::unique_ptr<AgentRuntime> m_runtime;
    // On the runtime from before it starts: the answer to the start's PUT is not missed.
    std::unique_ptr<QSignalSpy> m_applied;
    std::unique_ptr<QSignalSpy> m_refused;
};

void tst_SimFaultControl::initTestCase()
{
    qRegisterMetaType<SimFaultAnswer>();
}

void tst_SimFaultControl::init()
{
    m_dir = std::make_unique<QTemporaryDir>();
    QVERIFY(m_dir->isValid());
    m_sim = std::make_unique<Testing::SupportSimProcess>();
    QString error;
    QVERIFY2(m_sim->start({QStringLiteral("--data-dir"), m_dir->filePath(QStringLiteral("sim"))},
                          &error),
             qPrintable(error));
}

void tst_SimFaultControl::cleanup()
{
    m_applied.reset();
    m_refused.reset();
    m_runtime.reset();
    if (m_sim)
        QVERIFY(m_sim->stop());
    m_sim.reset();
    m_dir.reset();
}

bool tst_SimFaultControl::startRuntime(const QUrl &backend, const QByteArray &faults)
{
    RuntimeOptions options;
    options.dataDirectory = m_dir->path();
    if (backend.isValid())
        options.backend = {BackendOptions::Kind::Http, backend.toString()};
    if (!faults.isEmpty()) {
        QFile plan(m_dir->filePath(QStringLiteral("faults.json")));
        if (!plan.open(QIODevice::WriteOnly))
            return false;
        plan.write(faults);
        options.faultPlanFile = plan.fileName();
    }
    m_runtime = std::make_unique<AgentRuntime>(options);
    m_applied = std::make_unique<QSignalSpy>(m_runtime->faults(), &FaultControl::simFaultsApplied);
    m_refused = std::make_unique<QSignalSpy>(m_runtime->faults(), &FaultControl::faultsRefused);
    QSignalSpy ready(m_runtime.get(), &AgentRuntime::ready);
    m_runtime->start();
    return ready.wait(kWaitMs);
}

void tst_SimFaultControl::putThenReset()
{
    SimFaultControl control(m_sim->baseUrl());
    QSignalSpy answered(&control, &SimFaultControl::answered);
    control.put(json(R"({"seed": 3, "routes": {"logistics": {"status": 503, "times": 2}}})"));
    QVERIFY(control.isBusy());
    SimFaultAnswer answer = waitForAnswer(control, answered);
    QVERIFY2(answer.isApplied(), qPrintable(answer.reason));
    QCOMPARE(answer.httpStatus, 200);
    QVERIFY(!answer.reset);
    // The sim's own echo, remaining times included.
    QCOMPARE(answer.faults.value(QLatin1String("routes"))
                 .toObject()
                 .value(QLatin1String("logistics"))
                 .toObject()
                 .value(QLatin1String("times"))
                 .toInt(),
             2);
    QCOMPARE(simRoutes(*m_sim).value(QLatin1String("logistics")).toObject().value(
                 QLatin1String("status")).toInt(),
             503);

    control.reset();
    answer = waitForAnswer(control, answered, 2);
    QVERIFY2(answer.isApplied(), qPrintable(answer.reason));
    QVERIFY(answer.reset);
    QVERIFY(simRoutes(*m_sim).isEmpty());
    QVERIFY(!control.isBusy());
}

void tst_SimFaultControl::refusedFaultsNameTheKey()
{
    QString error;
    QVERIFY2(m_sim->putFaults(R"({"routes": {"orders": {"latencyMs": 5}}})", &error),
             qPrintable(error));
    SimFaultControl control(m_sim->baseUrl());
    QSignalSpy answered(&control, &SimFaultControl::answered);
    control.put(json(R"({"routes": {"logistics": {"status": 299}}})"));
    const SimFaultAnswer answer = waitForAnswer(control, answered);
    QCOMPARE(answer.status, SimFaultAnswer::Status::Refused);
    QCOMPARE(answer.httpStatus, 400);
    QVERIFY2(answer.reason.contains(QLatin1String("routes.logistics.status")),
             qPrintable(answer.reason));
    QVERIFY(!answer.reason.contains(m_sim->baseUrl().host()));
    QVERIFY(!answer.reason.contains(QLatin1Char('\n')));
    // The old faults stay.
    QVERIFY(simRoutes(*m_sim).contains(QLatin1String("orders")));
}

void tst_SimFaultControl::anUnreachableSimIsSaidPlainly()
{
    // A port where nothing listens.
    const Testing::ClosedPort nothing;
    QVERIFY(nothing.port());
    SimFaultControl control(QUrl(QStringLiteral("http://127.0.0.1:%1").arg(nothing.port())));
    control.setTimeoutMs(2000);
    QSignalSpy answered(&control, &SimFaultControl::answered);
    control.put(json(R"({"routes": {}})"));
    const SimFaultAnswer answer = waitForAnswer(control, answered);
    QCOMPARE(answer.status, SimFaultAnswer::Status::Unreachable);
    QCOMPARE(answer.httpStatus, 0);
    QCOMPARE(answer.reason,
             QStringLiteral("support-sim did not answer; its faults were not changed"));
}

void tst_SimFaultControl::quickChangesEndWithTheLast()
{
    SimFaultControl control(m_sim->baseUrl());
    QSignalSpy answered(&control, &SimFaultControl::answered);
    control.put(json(R"({"routes": {"orders": {"latencyMs": 1}}})"));
    control.put(json(R"({"routes": {"inventory": {"latencyMs": 2}}})")); // replaced by the next
    control.put(json(R"({"routes": {"tickets": {"latencyMs": 3}}})"));
    // The first, in flight, and the last: the one between was never sent.
    const SimFaultAnswer last = waitForAnswer(control, answered, 2);
    QVERIFY2(last.isApplied(), qPrintable(last.reason));
    QCOMPARE(answered.size(), 2);
    QCOMPARE(simRoutes(*m_sim).keys(), QStringList{QStringLiteral("tickets")});
}

void tst_SimFaultControl::theRuntimeSendsTheSectionAtStartAndOnChange()
{
    // At start, from --faults.
    QVERIFY(startRuntime(m_sim->baseUrl(),
                         R"({"sim": {"routes": {"logistics": {"status": 503, "times": 2}}}})"));
    QSignalSpy &applied = *m_applied;
    QSignalSpy &refused = *m_refused;
    // Ready only once the sim holds the section: the first question meets it.
    QCOMPARE(applied.size(), 1);
    QVERIFY(!m_runtime->faults()->isSendingSimFaults());
    QCOMPARE(simRoutes(*m_sim).value(QLatin1String("logistics")).toObject().value(
                 QLatin1String("times")).toInt(),
             2);
    QVERIFY(m_runtime->faults()->hasActiveFaults());
    QVERIFY2(m_runtime->faults()->summary().contains(QLatin1String("support-sim: logistics")),
             qPrintable(m_runtime->faults()->summary()));

    // A change elsewhere in the plan leaves the sim alone (a PUT would restart its counts);
    // a change of the section is sent.
    FaultPlan plan = m_runtime->faults()->plan();
    ToolFault slow;
    slow.latencyMs = 1;
    plan.setFault(QStringLiteral("queryInventory"), slow);
    m_runtime->faults()->setPlan(plan);
    QVERIFY(!m_runtime->faults()->isSendingSimFaults());
    plan.setSimFaults(json(R"({"routes": {"orders": {"status": 503, "times": 1}}})"));
    m_runtime->faults()->setPlan(plan);
    QVERIFY(m_runtime->faults()->isSendingSimFaults());
    QTRY_COMPARE_WITH_TIMEOUT(applied.size(), 2, kWaitMs);
    QCOMPARE(simRoutes(*m_sim).keys(), QStringList{QStringLiteral("orders")});

    // A turn meets it: the order lookup's first attempt gets the sim's 503, the retry answers.
    AgentLoop *loop = m_runtime->agentLoop();
    QSignalSpy finished(loop, &AgentLoop::turnFinished);
    QVERIFY(!loop->ask(QStringLiteral("what is the status of order A1001")).isEmpty());
    QVERIFY(finished.wait(kWaitMs));
    const TurnResult turn = finished.first().first().value<TurnResult>();
    QCOMPARE(turn.toolCalls.size(), 1);
    QCOMPARE(turn.toolCalls[0].name, QStringLiteral("queryOrderStatus"));
    QCOMPARE(turn.toolCalls[0].result.code, ResultCode::Ok);
    QCOMPARE(turn.toolCalls[0].attempts.size(), 2);

    // Clearing the plan resets what the console set.
    m_runtime->faults()->clear();
    QTRY_COMPARE_WITH_TIMEOUT(applied.size(), 3, kWaitMs);
    QVERIFY(simRoutes(*m_sim).isEmpty());
    QVERIFY(refused.isEmpty());

    // A section the sim refuses is said, in one line naming the key.
    plan = FaultPlan();
    plan.setSimFaults(json(R"({"routes": {"orders": {"status": 200}}})"));
    m_runtime->faults()->setPlan(plan);
    QVERIFY(refused.wait(kWaitMs));
    QVERIFY2(refused.first().first().toString().contains(QLatin1String("routes.orders.status")),
             qPrintable(refused.first().first().toString()));
}

// A sim that does not answer delays the start by no more than the control's timeout, and says
// so; the console starts without the section.
void tst_SimFaultControl::anUnreachableSimAtStartIsSaid()
{
    const Testing::ClosedPort nothing;
    QVERIFY(nothing.port());
    const QUrl nowhere(QStringLiteral("http://127.0.0.1:%1").arg(nothing.port()));
    QVERIFY(startRuntime(nowhere, R"({"sim": {"routes": {"orders": {"latencyMs": 5}}}})"));
    QCOMPARE(m_refused->size(), 1);
    QCOMPARE(m_refused->first().first().toString(),
             QStringLiteral("support-sim did not answer; its faults were not changed"));
    QVERIFY(m_applied->isEmpty());
}

void tst_SimFaultControl::theEmbeddedStoreRefusesASimSection()
{
    QVERIFY(startRuntime({}, {}));
    QSignalSpy &refused = *m_refused;
    QVERIFY(refused.isEmpty());
    FaultPlan plan;
    plan.setSimFaults(json(R"({"routes": {"orders": {"latencyMs": 5}}})"));
    m_runtime->faults()->setPlan(plan);
    QCOMPARE(refused.size(), 1);
    QVERIFY(refused.first().first().toString().contains(QLatin1String("REST")));
    // The sim was never told.
    QVERIFY(simRoutes(*m_sim).isEmpty());
}

// The console checks a section's keys only; the sim judges its values: every shipped plan's
// section must pass both.
void tst_SimFaultControl::shippedSimSectionsAreTakenBySupportSim()
{
    const QDir folder(QStringLiteral(AGENT_CONSOLE_SOURCE_DIR "/resources/faults"));
    int sections = 0;
    for (const QString &name : folder.entryList({QStringLiteral("*.json")})) {
        QString error;
        const auto plan = FaultPlan::fromFile(folder.filePath(name), &error);
        QVERIFY2(plan, qPrintable(error));
        if (!plan->hasSimFaults())
            continue;
        ++sections;
        SimFaultControl control(m_sim->baseUrl());
        QSignalSpy answered(&control, &SimFaultControl::answered);
        control.put(plan->simFaults());
        const SimFaultAnswer answer = waitForAnswer(control, answered);
        QVERIFY2(answer.isApplied(), qPrintable(name + QLatin1String(": ") + answer.reason));
    }
    QVERIFY(sections >= 1);
}

QTEST_GUILESS_MAIN(tst_SimFaultControl)
#include "tst_simfaultcontrol.moc"
