// FaultControl: the fault plan in force. What a plan may name, the plan set and cleared (what
// every attempt reads, what is said, what a turn keeps), the start's plan, and the "sim"
// section's way to support-sim: refused without a REST backend, and an unreachable sim said
// before the runtime's own hook runs. The real support-sim's answers are tst_simfaultcontrol's.
#include "agentdoubles.h"
#include "closedport.h"

#include "core/console/faultcontrol.h"
#include "core/faults/faultplan.h"
#include "core/faults/livefaults.h"
#include "core/tools/toolregistry.h"

#include <QJsonDocument>
#include <QSignalSpy>
#include <QTest>
#include <QUrl>

#include <memory>

using namespace AgentConsole;
using namespace AgentConsole::Testing;

namespace {

FaultPlan plan(const QByteArray &json, const KnownTools &tools)
{
    QString error;
    const std::optional<FaultPlan> read = FaultPlan::fromJson(json, &error, tools);
    if (!read)
        qFatal("fault plan refused: %s", qPrintable(error));
    return *read;
}

QJsonObject simSection()
{
    return QJsonDocument::fromJson(R"({"routes": {"orders": {"latencyMs": 5}}})").object();
}

} // namespace

class tst_FaultControl final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void init();
    void knownToolsAreTheRegistrys();
    void noPlanAtFirst();
    void aPlanIsInForceAtOnce();
    void theStartsPlanIsNotAChange();
    void aSimSectionNeedsARestBackend();
    void anUnreachableSimIsSaidBeforeTheRuntimeHears();

private:
    std::unique_ptr<ToolRegistry> m_registry;
};

void tst_FaultControl::init()
{
    m_registry = std::make_unique<ToolRegistry>();
    m_registry->add(answeringTool(QStringLiteral("lookUp")));
    m_registry->add(answeringTool(QStringLiteral("file"), true));
}

void tst_FaultControl::knownToolsAreTheRegistrys()
{
    const FaultControl faults(m_registry.get(), {});
    const KnownTools known = faults.knownTools();
    QCOMPARE(known.names, (QStringList{QStringLiteral("lookUp"), QStringLiteral("file")}));
    QCOMPARE(known.writes, QStringList{QStringLiteral("file")});
    // A plan naming another tool is refused against them.
    QString error;
    QVERIFY(!FaultPlan::fromJson(R"({"tools": {"other": {"latencyMs": 5}}})", &error, known));
}

void tst_FaultControl::noPlanAtFirst()
{
    const FaultControl faults(m_registry.get(), {});
    QVERIFY(!faults.hasActiveFaults());
    QVERIFY(faults.plan().isEmpty());
    QVERIFY(faults.summary().isEmpty());
    QVERIFY(faults.liveFaults()->current()->isEmpty());
    QCOMPARE(faults.conditions(), (QJsonObject{{QStringLiteral("active"), false}}));
    QVERIFY(!faults.isSendingSimFaults());
}

// Set: what every attempt reads from now on, said once, kept with a turn; cleared the same way.
void tst_FaultControl::aPlanIsInForceAtOnce()
{
    FaultControl faults(m_registry.get(), {});
    faults.setBackend(QUrl()); // the embedded store
    QVERIFY(!faults.beginSending());
    QSignalSpy changed(&faults, &FaultControl::faultsChanged);
    QSignalSpy refused(&faults, &FaultControl::faultsRefused);
    const FaultPlan failing = plan(R"({"tools": {"lookUp": {"transientFailures": 2}}})",
                                    faults.knownTools());
    faults.setPlan(failing);
    QCOMPARE(changed.size(), 1);
    QVERIFY(refused.isEmpty()); // no sim section: nothing to send
    QVERIFY(faults.hasActiveFaults());
    QVERIFY(faults.plan() == failing);
    QVERIFY(*faults.liveFaults()->current() == failing);
    QCOMPARE(faults.summary(), failing.summary(FaultPlan::SummaryWords::Log));
    QVERIFY(!faults.summary().isEmpty());
    const QJsonObject kept = faults.conditions();
    QCOMPARE(kept.value(QLatin1String("active")).toBool(), true);
    QCOMPARE(kept.value(QLatin1String("summary")).toString(), faults.summary());
    QCOMPARE(kept.value(QLatin1String("plan")).toObject(), failing.toJson());

    faults.clear();
    QCOMPARE(changed.size(), 2);
    QVERIFY(!faults.hasActiveFaults());
    QVERIFY(faults.liveFaults()->current()->isEmpty());
}

// --faults is in force from the start without a change to tell: the window reads it when the
// runtime is ready. Its sim section waits until sending begins.
void tst_FaultControl::theStartsPlanIsNotAChange()
{
    int answers = 0;
    FaultControl faults(m_registry.get(), [&answers] { ++answers; });
    QSignalSpy changed(&faults, &FaultControl::faultsChanged);
    QSignalSpy refused(&faults, &FaultControl::faultsRefused);
    FaultPlan start = plan(R"({"tools": {"file": {"latencyMs": 5}}})", faults.knownTools());
    start.setSimFaults(simSection());
    faults.startWith(start);
    QVERIFY(changed.isEmpty());
    QVERIFY(faults.plan() == start);
    QVERIFY(refused.isEmpty()); // not sent yet

    faults.setBackend(QUrl()); // the embedded store: the section cannot go anywhere
    QVERIFY(!faults.beginSending());
    QCOMPARE(refused.size(), 1);
    QCOMPARE(answers, 0); // no request went out: nothing to wait for
}

void tst_FaultControl::aSimSectionNeedsARestBackend()
{
    FaultControl faults(m_registry.get(), {});
    faults.setBackend(QUrl());
    QVERIFY(!faults.beginSending());
    QSignalSpy refused(&faults, &FaultControl::faultsRefused);
    FaultPlan withSim;
    withSim.setSimFaults(simSection());
    faults.setPlan(withSim);
    QCOMPARE(refused.size(), 1);
    QCOMPARE(refused.first().first().toString(),
             QStringLiteral("the support-sim faults apply only when the backend is REST "
                            "(support-sim); they were not sent"));
    QVERIFY(!faults.isSendingSimFaults());
    // The rest of the plan is in force all the same.
    QVERIFY(faults.hasActiveFaults());
}

// A REST backend whose sim does not answer: the section goes out (sending), the refusal is
// said, and only then does the runtime's hook run (its ready() waits for the answer at start).
void tst_FaultControl::anUnreachableSimIsSaidBeforeTheRuntimeHears()
{
    const ClosedPort nothing;
    QVERIFY(nothing.port());
    QStringList events;
    FaultControl faults(m_registry.get(), [&events] { events.append(QStringLiteral("hook")); });
    connect(&faults, &FaultControl::faultsRefused, this, [&events](const QString &reason) {
        events.append(QStringLiteral("refused: ") + reason);
    });
    connect(&faults, &FaultControl::simFaultsApplied, this,
            [&events] { events.append(QStringLiteral("applied")); });
    FaultPlan start;
    start.setSimFaults(simSection());
    faults.startWith(start);
    faults.setBackend(QUrl(QStringLiteral("http://127.0.0.1:%1").arg(nothing.port())));
    QVERIFY(events.isEmpty()); // not sending before beginSending()
    QVERIFY(faults.beginSending());
    QVERIFY(faults.isSendingSimFaults());
    QTRY_COMPARE_WITH_TIMEOUT(events.size(), 2, 10'000);
    QCOMPARE(events,
             (QStringList{QStringLiteral("refused: support-sim did not answer; its faults were "
                                         "not changed"),
                          QStringLiteral("hook")}));
    QVERIFY(!faults.isSendingSimFaults());
}

QTEST_GUILESS_MAIN(tst_FaultControl)
#include "tst_faultcontrol.moc"
