#include "core/faults/faultplan.h"
#include "core/support/createtickettool.h"
#include "core/support/supportstore.h"
#include "core/support/supportbackend.h"
#include "core/support/supporttools.h"
#include "core/support/ticketbackend.h"
#include "core/tools/toolregistry.h"

#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>

#include <sys/stat.h>

#include <algorithm>

using namespace AgentConsole;

namespace {

// Built field by field: ToolFault gains fields, and aggregate initialization would leave the
// new ones to a -Wmissing-field-initializers warning.
template<typename Set>
ToolFault toolFault(Set set)
{
    ToolFault fault;
    set(fault);
    return fault;
}

} // namespace

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
    void parsesTheNewKeys();
    void roundTrip_data();
    void roundTrip();
    void accessorsEditAPlan();
    void backendAppliesToToolsWithoutAnEntry();
    void summaryNamesTheNewKeys();
    void everyFieldIsReadByItsBounds_data();
    void everyFieldIsReadByItsBounds();
    void aFieldBelongsToItsScope();
    void aDefaultIsNotWritten();
    void activeFaultCount_data();
    void activeFaultCount();
    void everyFaultOfItsOwnIsCounted();
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
    QTest::newRow("rejection status not a rejection")
        << QByteArray(R"({"tools": {"queryLogistics": {"permanentStatus": 500}}})")
        << "tools.queryLogistics.permanentStatus: expected 400, 404, 409 or 422";
    QTest::newRow("rejection status a string")
        << QByteArray(R"({"tools": {"queryLogistics": {"permanentStatus": "404"}}})")
        << "tools.queryLogistics.permanentStatus: expected 400, 404, 409 or 422";
    QTest::newRow("internal error not a bool")
        << QByteArray(R"({"tools": {"queryLogistics": {"internalError": 1}}})")
        << "tools.queryLogistics.internalError: expected true or false";
    QTest::newRow("backend not an object") << QByteArray(R"({"backend": true})")
                                           << "fault plan: backend: expected an object";
    QTest::newRow("unknown backend key") << QByteArray(R"({"backend": {"slow": 3}})")
                                         << "fault plan: backend.slow: unknown key";
    QTest::newRow("backend latency out of range")
        << QByteArray(R"({"backend": {"latencyMs": 3600001}})")
        << "fault plan: backend.latencyMs: expected a whole number from 0 to 3600000";
    QTest::newRow("negative rate limit") << QByteArray(R"({"model": {"rateLimited": -1}})")
                                         << "fault plan: model.rateLimited: expected a whole";
    QTest::newRow("fractional retry after")
        << QByteArray(R"({"model": {"retryAfterMs": 1.5}})")
        << "fault plan: model.retryAfterMs: expected a whole number from 0 to 3600000";
    QTest::newRow("stall not a bool") << QByteArray(R"({"model": {"streamStall": "yes"}})")
                                      << "fault plan: model.streamStall: expected true or false";
    QTest::newRow("burst too large")
        << QByteArray(R"({"models": {"primary": {"toolCallBurst": 101}}})")
        << "fault plan: models.primary.toolCallBurst: expected a whole number from 0 to 100";
    QTest::newRow("third model") << QByteArray(R"({"models": {"tertiary": {}}})")
                                 << "fault plan: models.tertiary: unknown key";
    QTest::newRow("secondary not an object")
        << QByteArray(R"({"models": {"secondary": []}})")
        << "fault plan: models.secondary: expected an object";
    QTest::newRow("unknown secondary key")
        << QByteArray(R"({"models": {"secondary": {"quota": true}}})")
        << "fault plan: models.secondary.quota: unknown key";
    QTest::newRow("primary given twice")
        << QByteArray(R"({"model": {}, "models": {"primary": {}}})")
        << "fault plan: model: the primary is given as models.primary too";
    QTest::newRow("sim not an object") << QByteArray(R"({"sim": "logistics"})")
                                       << "fault plan: sim: expected an object";
    QTest::newRow("unknown sim key") << QByteArray(R"({"sim": {"route": {}}})")
                                     << "fault plan: sim.route: unknown key";
    QTest::newRow("unknown sim route")
        << QByteArray(R"({"sim": {"routes": {"payments": {}}}})")
        << "fault plan: sim.routes.payments: no such route";
    QTest::newRow("unknown sim route key")
        << QByteArray(R"({"sim": {"routes": {"logistics": {"statsu": 503}}}})")
        << "fault plan: sim.routes.logistics.statsu: unknown key";
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
    plan.setFault(QStringLiteral("flaky"),
                  toolFault([](ToolFault &f) { f.transientFailures = 2; }));
    plan.setFault(QStringLiteral("rejected"),
                  toolFault([](ToolFault &f) { f.permanentFailure = true; }));
    plan.setFault(QStringLiteral("denied"),
                  toolFault([](ToolFault &f) { f.accessDenied = true; }));
    plan.setFault(QStringLiteral("missing"), toolFault([](ToolFault &f) { f.notFound = true; }));
    // An injected bug wins over every failure but latency and a hang.
    plan.setFault(QStringLiteral("buggy"), toolFault([](ToolFault &f) {
        f.internalError = true;
        f.accessDenied = true;
        f.permanentFailure = true;
    }));
    const CancellationToken token;
    const QString key = QStringLiteral("{}");
    QCOMPARE(plan.apply(QStringLiteral("flaky"), key, 1, token), FaultEffect::Transient);
    QCOMPARE(plan.apply(QStringLiteral("flaky"), key, 2, token), FaultEffect::Transient);
    QCOMPARE(plan.apply(QStringLiteral("flaky"), key, 3, token), FaultEffect::None);
    QCOMPARE(plan.apply(QStringLiteral("rejected"), key, 1, token), FaultEffect::Permanent);
    QCOMPARE(plan.apply(QStringLiteral("denied"), key, 1, token), FaultEffect::AccessDenied);
    QCOMPARE(plan.apply(QStringLiteral("missing"), key, 1, token), FaultEffect::NotFound);
    QCOMPARE(plan.apply(QStringLiteral("buggy"), key, 1, token), FaultEffect::InternalError);
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
    plan.setFault(QStringLiteral("slow"), toolFault([](ToolFault &f) { f.latencyMs = 60'000; }));
    plan.setFault(QStringLiteral("hung"), toolFault([](ToolFault &f) { f.hang = true; }));
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

void tst_FaultPlan::parsesTheNewKeys()
{
    QString error;
    const auto plan = FaultPlan::fromJson(R"({
        "tools": {"queryOrderStatus": {"permanentFailure": true, "permanentStatus": 404},
                  "queryInventory": {"internalError": true}},
        "backend": {"transientFailures": 1, "latencyMs": 20},
        "model": {"latencyMs": 1, "unavailable": false, "rateLimited": 2, "retryAfterMs": 300,
                  "quotaExhausted": true, "malformedResponse": true, "streamStall": true,
                  "malformedToolArguments": true, "unknownTool": true, "toolCallBurst": 5},
        "models": {"secondary": {"unavailable": true}},
        "sim": {"seed": 3, "routes": {"logistics": {"status": 503, "times": 2}}}})",
                                          &error);
    QVERIFY2(plan, qPrintable(error));
    QCOMPARE(plan->faultFor(QStringLiteral("queryOrderStatus"))->permanentStatus, 404);
    QCOMPARE(plan->faultFor(QStringLiteral("queryLogistics")), std::nullopt);
    QVERIFY(plan->faultFor(QStringLiteral("queryInventory"))->internalError);
    QCOMPARE(plan->backendFault()->transientFailures, 1);
    QCOMPARE(plan->backendFault()->latencyMs, 20);
    const ModelFault primary = *plan->modelFault(FaultPlan::Provider::Primary);
    QCOMPARE(plan->modelFault(), primary); // the primary's, as before
    QCOMPARE(primary.latencyMs, 1);
    QCOMPARE(primary.rateLimited, 2);
    QCOMPARE(primary.retryAfterMs, 300);
    QVERIFY(primary.quotaExhausted && primary.malformedResponse && primary.streamStall);
    QVERIFY(primary.malformedToolArguments && primary.unknownTool);
    QCOMPARE(primary.toolCallBurst, 5);
    QVERIFY(plan->modelFault(FaultPlan::Provider::Secondary)->unavailable);
    QCOMPARE(plan->simFaults().value(QLatin1String("seed")).toInt(), 3);
    QVERIFY(plan->hasSimFaults());
    // models.primary is the same as model; retryAfterMs defaults to one second.
    const auto same = FaultPlan::fromJson(R"({"models": {"primary": {"rateLimited": 1}}})",
                                          &error);
    QVERIFY2(same, qPrintable(error));
    QCOMPARE(same->modelFault()->rateLimited, 1);
    QCOMPARE(same->modelFault()->retryAfterMs, 1000);
    QCOMPARE(same->modelFault(FaultPlan::Provider::Secondary), std::nullopt);
    // A sim section alone is an active plan.
    QVERIFY(!FaultPlan::fromJson(R"({"sim": {"routes": {}}})", &error)->isEmpty());
    // The backend may lose a write's answer: it applies to the tools that write.
    const KnownTools known{{QStringLiteral("queryLogistics"), QStringLiteral("createTicket")},
                           {QStringLiteral("createTicket")}};
    QVERIFY2(FaultPlan::fromJson(R"({"backend": {"commitThenLoseAnswer": true}})", &error,
                                 known),
             qPrintable(error));
}

void tst_FaultPlan::roundTrip_data()
{
    QTest::addColumn<QByteArray>("json");
    QTest::newRow("empty") << QByteArray("{}");
    QTest::newRow("every key") << QByteArray(R"({"description": "all of it", "seed": 99,
        "tools": {"queryLogistics": {"latencyMs": 5, "hang": true, "transientFailures": 2,
            "permanentFailure": true, "permanentStatus": 409, "accessDenied": true,
            "notFound": true, "failureProbability": 0.125, "internalError": true},
          "createTicket": {"commitThenLoseAnswer": true}, "queryInventory": {}},
        "backend": {"failureProbability": 1},
        "models": {"primary": {"unavailable": true, "latencyMs": 7, "rateLimited": 3,
            "retryAfterMs": 0, "quotaExhausted": true, "malformedResponse": true,
            "streamStall": true, "malformedToolArguments": true, "unknownTool": true,
            "toolCallBurst": 100},
          "secondary": {}},
        "sim": {"seed": 7, "hangLimitMs": 500,
                "routes": {"tickets": {"commitThenDrop": true, "times": 1}}}})");
    QTest::newRow("largest seed") << QByteArray(R"({"seed": 9007199254740991})");
    QTest::newRow("old model key") << QByteArray(R"({"model": {"unavailable": true}})");
    const QDir folder(QStringLiteral(AGENT_CONSOLE_SOURCE_DIR "/resources/faults"));
    for (const QString &name : folder.entryList({QStringLiteral("*.json")})) {
        QFile file(folder.filePath(name));
        QVERIFY(file.open(QIODevice::ReadOnly));
        QTest::newRow(qPrintable(name)) << file.readAll();
    }
}

void tst_FaultPlan::roundTrip()
{
    QFETCH(QByteArray, json);
    QString error;
    const auto plan = FaultPlan::fromJson(json, &error);
    QVERIFY2(plan, qPrintable(error));
    const QJsonObject written = plan->toJson();
    const auto again = FaultPlan::fromJson(QJsonDocument(written).toJson(), &error);
    QVERIFY2(again, qPrintable(error));
    QCOMPARE(*again, *plan);
    QCOMPARE(again->toJson(), written);
    QCOMPARE(again->summary(), plan->summary());
    QCOMPARE(again->seed(), plan->seed());
    QCOMPARE(again->description(), plan->description());
}

void tst_FaultPlan::accessorsEditAPlan()
{
    FaultPlan plan;
    QVERIFY(plan.isEmpty());
    plan.setSeed(12);
    QCOMPARE(plan.seed(), 12u);
    plan.setSeed(~quint64(0)); // held to what a JSON number holds exactly
    QCOMPARE(plan.seed(), quint64(FaultPlan::kMaxSeed));
    QVERIFY(plan.isEmpty());

    plan.setFault(QStringLiteral("queryLogistics"),
                  toolFault([](ToolFault &f) { f.hang = true; }));
    plan.setFault(QStringLiteral("createTicket"),
                  toolFault([](ToolFault &f) { f.commitThenLoseAnswer = true; }));
    QCOMPARE(plan.faultedTools(),
             (QStringList{QStringLiteral("createTicket"), QStringLiteral("queryLogistics")}));
    plan.removeFault(QStringLiteral("queryLogistics"));
    QCOMPARE(plan.faultedTools(), QStringList{QStringLiteral("createTicket")});
    plan.removeFault(QStringLiteral("createTicket"));
    QVERIFY(plan.isEmpty());

    ModelFault quota;
    quota.quotaExhausted = true;
    plan.setModelFault(FaultPlan::Provider::Secondary, quota);
    QCOMPARE(plan.modelFault(FaultPlan::Provider::Secondary), quota);
    QCOMPARE(plan.modelFault(), std::nullopt);
    QVERIFY(!plan.isEmpty());
    plan.setModelFault(FaultPlan::Provider::Secondary, std::nullopt);
    QVERIFY(plan.isEmpty());

    const QJsonObject sim{{QStringLiteral("routes"),
                           QJsonObject{{QStringLiteral("orders"),
                                        QJsonObject{{QStringLiteral("latencyMs"), 10}}}}}};
    plan.setSimFaults(sim);
    QCOMPARE(plan.simFaults(), sim);
    QVERIFY(!plan.isEmpty());
    plan.setSimFaults({});
    QVERIFY(plan.isEmpty());

    plan.setBackendFault(toolFault([](ToolFault &f) { f.accessDenied = true; }));
    QVERIFY(plan.backendFault()->accessDenied);
    QVERIFY(!plan.isEmpty());
    // What the panel builds is what a file would say.
    QString error;
    const auto read = FaultPlan::fromJson(QJsonDocument(plan.toJson()).toJson(), &error);
    QVERIFY2(read, qPrintable(error));
    QCOMPARE(*read, plan);
    plan.setBackendFault(std::nullopt);
    QVERIFY(plan.isEmpty());
}

void tst_FaultPlan::backendAppliesToToolsWithoutAnEntry()
{
    QString error;
    const auto plan = FaultPlan::fromJson(R"({"backend": {"accessDenied": true},
        "tools": {"queryLogistics": {"transientFailures": 1}, "queryInventory": {}}})",
                                          &error);
    QVERIFY2(plan, qPrintable(error));
    const CancellationToken token;
    const QString key = QStringLiteral("{}");
    // No entry of its own: the backend's.
    QCOMPARE(plan->apply(QStringLiteral("queryOrderStatus"), key, 1, token),
             FaultEffect::AccessDenied);
    QCOMPARE(plan->faultFor(QStringLiteral("queryOrderStatus")), std::nullopt);
    QVERIFY(plan->effectiveFaultFor(QStringLiteral("queryOrderStatus"))->accessDenied);
    // Its own entry replaces the backend's, even an empty one.
    QCOMPARE(plan->apply(QStringLiteral("queryLogistics"), key, 1, token), FaultEffect::Transient);
    QCOMPARE(plan->apply(QStringLiteral("queryLogistics"), key, 2, token), FaultEffect::None);
    QCOMPARE(plan->apply(QStringLiteral("queryInventory"), key, 1, token), FaultEffect::None);
}

void tst_FaultPlan::summaryNamesTheNewKeys()
{
    QString error;
    const auto plan = FaultPlan::fromJson(R"({
        "tools": {"queryOrderStatus": {"permanentFailure": true, "permanentStatus": 404},
                  "queryInventory": {"internalError": true}},
        "backend": {"transientFailures": 1},
        "model": {"rateLimited": 2, "retryAfterMs": 300, "quotaExhausted": true,
                  "malformedResponse": true, "streamStall": true,
                  "malformedToolArguments": true, "unknownTool": true, "toolCallBurst": 5},
        "models": {"secondary": {"unavailable": true}},
        "sim": {"routes": {"logistics": {"status": 503, "times": 2}}}})",
                                          &error);
    QVERIFY2(plan, qPrintable(error));
    QCOMPARE(plan->summary(),
             QStringLiteral("queryInventory: internal error; queryOrderStatus: rejected (404); "
                            "other tools: first 1 attempts fail; primary model: first 2 "
                            "attempts rate-limited (retry after 300 ms), quota exhausted, "
                            "unreadable answer, stream stalls, broken tool arguments, calls an "
                            "unknown tool, repeats a tool call 5 times; secondary model: "
                            "unavailable; support-sim: logistics status 503, times 2"));
}

namespace {

// A plan with `value` at `key` of an entry the field belongs to: a provider's, else a tool's
// (createTicket, which writes, so that a write fault is allowed).
QByteArray planWith(const FaultField &field, const QJsonValue &value)
{
    const QJsonObject entry{{QLatin1String(field.key), value}};
    const bool model = field.scope == FaultField::Scope::Model;
    const QString target = model ? QStringLiteral("primary") : QStringLiteral("createTicket");
    const QJsonObject plan{{model ? QStringLiteral("models") : QStringLiteral("tools"),
                            QJsonObject{{target, entry}}}};
    return QJsonDocument(plan).toJson(QJsonDocument::Compact);
}

QString pathOf(const FaultField &field)
{
    return (field.scope == FaultField::Scope::Model ? QStringLiteral("models.primary.")
                                                    : QStringLiteral("tools.createTicket."))
        + QLatin1String(field.key);
}

KnownTools supportTools()
{
    return {{QStringLiteral("queryLogistics"), QStringLiteral("createTicket")},
            {QStringLiteral("createTicket")}};
}

} // namespace

// What FaultPlan::fields() publishes is what fromJson takes: each field's ends are read, one
// step past either end is refused naming the key and the published range, and its default
// reads back as the value of an entry without it. A bound changed in one place only fails
// here.
void tst_FaultPlan::everyFieldIsReadByItsBounds_data()
{
    QTest::addColumn<int>("index");
    const QList<FaultField> &fields = FaultPlan::fields();
    QVERIFY(!fields.isEmpty());
    for (int index = 0; index < fields.size(); ++index) {
        const FaultField &field = fields.at(index);
        QTest::addRow("%s %s", field.scope == FaultField::Scope::Model ? "model" : "tool",
                      field.key)
            << index;
    }
}

void tst_FaultPlan::everyFieldIsReadByItsBounds()
{
    QFETCH(int, index);
    const FaultField field = FaultPlan::fields().at(index);
    QVERIFY(field.min <= field.defaultValue && field.defaultValue <= field.max);
    const auto readBack = [&field](const QJsonValue &value, QString *error) {
        const auto plan = FaultPlan::fromJson(planWith(field, value), error, supportTools());
        if (!plan)
            return QJsonValue(QJsonValue::Undefined);
        const QJsonObject json = plan->toJson();
        return (field.scope == FaultField::Scope::Model
                    ? json[QLatin1String("models")][QLatin1String("primary")]
                    : json[QLatin1String("tools")][QLatin1String("createTicket")])
            .toObject()
            .value(QLatin1String(field.key));
    };
    QString error;
    switch (field.kind) {
    case FaultField::Kind::Flag:
        QCOMPARE(readBack(true, &error), QJsonValue(true));
        QVERIFY2(readBack(false, &error).isUndefined() && error.isEmpty(), qPrintable(error));
        QVERIFY(readBack(1, &error).isUndefined());
        QCOMPARE(error,
                 QStringLiteral("fault plan: %1: expected true or false").arg(pathOf(field)));
        return;
    case FaultField::Kind::Millis:
    case FaultField::Kind::Count:
    case FaultField::Kind::Probability: {
        const bool whole = field.kind != FaultField::Kind::Probability;
        const QString range = QStringLiteral("fault plan: %1: expected a %2 from %3 to %4")
                                  .arg(pathOf(field), whole ? QStringLiteral("whole number")
                                                            : QStringLiteral("number"))
                                  .arg(field.min, 0, 'f', 0)
                                  .arg(field.max, 0, 'f', 0);
        for (const double end : {field.min, field.max}) {
            const QJsonValue back = readBack(end, &error);
            QVERIFY2(error.isEmpty(), qPrintable(error));
            // An end equal to the default is not written back.
            QCOMPARE(back.isUndefined(), end == field.defaultValue);
            if (!back.isUndefined())
                QCOMPARE(back.toDouble(), end);
        }
        const double step = whole ? 1 : 0.001;
        for (const double past : {field.min - step, field.max + step}) {
            QVERIFY(readBack(past, &error).isUndefined());
            QCOMPARE(error, range);
        }
        if (whole) {
            QVERIFY(readBack(field.min + 0.5, &error).isUndefined());
            QCOMPARE(error, range);
        }
        return;
    }
    case FaultField::Kind::HttpStatus: {
        QVERIFY(!field.choices.isEmpty());
        for (const int choice : field.choices) {
            const QJsonValue back = readBack(choice, &error);
            QVERIFY2(error.isEmpty(), qPrintable(error));
            QCOMPARE(back.isUndefined(), choice == field.defaultValue);
        }
        QVERIFY(readBack(field.choices.first() + 1, &error).isUndefined());
        QVERIFY2(error.startsWith(QStringLiteral("fault plan: %1: expected ").arg(pathOf(field))),
                 qPrintable(error));
        for (const int choice : field.choices)
            QVERIFY2(error.contains(QString::number(choice)), qPrintable(error));
        return;
    }
    }
    QFAIL("a field of a kind this suite does not know");
}

// A tool's key in a provider's entry (or the reverse) is an unknown key there, and a write
// fault goes only to a tool that writes.
void tst_FaultPlan::aFieldBelongsToItsScope()
{
    for (const FaultField &field : FaultPlan::fields()) {
        const bool model = field.scope == FaultField::Scope::Model;
        const bool elsewhere = std::any_of(
            FaultPlan::fields().cbegin(), FaultPlan::fields().cend(), [&](const FaultField &f) {
                return qstrcmp(f.key, field.key) == 0
                    && (f.scope == FaultField::Scope::Model) != model;
            });
        if (elsewhere)
            continue; // latencyMs: both have one
        const QJsonValue on = field.kind == FaultField::Kind::Flag ? QJsonValue(true)
                                                                   : QJsonValue(field.max);
        const QJsonObject entry{{QLatin1String(field.key), on}};
        const QJsonObject plan = model
            ? QJsonObject{{QStringLiteral("backend"), entry}}
            : QJsonObject{{QStringLiteral("model"), entry}};
        QString error;
        QVERIFY(!FaultPlan::fromJson(QJsonDocument(plan).toJson(), &error));
        QCOMPARE(error, QStringLiteral("fault plan: %1.%2: unknown key")
                            .arg(model ? QStringLiteral("backend") : QStringLiteral("model"),
                                 QLatin1String(field.key)));
        if (field.scope != FaultField::Scope::WriteTool)
            continue;
        const QJsonObject lookup{{QStringLiteral("tools"),
                                  QJsonObject{{QStringLiteral("queryLogistics"), entry}}}};
        QVERIFY(!FaultPlan::fromJson(QJsonDocument(lookup).toJson(), &error, supportTools()));
        QVERIFY2(error.contains(QStringLiteral("only for tools that write")), qPrintable(error));
    }
}

// A field at its default is no fault and is not written: the published default is the one
// the plan's structs start with.
void tst_FaultPlan::aDefaultIsNotWritten()
{
    for (const FaultField &field : FaultPlan::fields()) {
        const QJsonValue value = field.kind == FaultField::Kind::Flag
            ? QJsonValue(field.defaultValue != 0)
            : QJsonValue(field.defaultValue);
        QString error;
        const auto plan = FaultPlan::fromJson(planWith(field, value), &error, supportTools());
        QVERIFY2(plan, qPrintable(error));
        const QJsonObject json = plan->toJson();
        const QJsonObject entry = field.scope == FaultField::Scope::Model
            ? json[QLatin1String("models")][QLatin1String("primary")].toObject()
            : json[QLatin1String("tools")][QLatin1String("createTicket")].toObject();
        QVERIFY2(entry.isEmpty(), field.key);
        QCOMPARE(plan->activeFaultCount(), 0);
    }
    QCOMPARE(FaultPlan().activeFaultCount(), 0);
}

// The window's badge, the fault panel's chip and each of its targets count with this.
void tst_FaultPlan::activeFaultCount_data()
{
    QTest::addColumn<QByteArray>("json");
    QTest::addColumn<int>("count");
    QTest::newRow("empty") << QByteArray("{}") << 0;
    QTest::newRow("seed and description only")
        << QByteArray(R"({"seed": 3, "description": "nothing yet"})") << 0;
    QTest::newRow("an entry with nothing on")
        << QByteArray(R"({"tools": {"queryLogistics": {"hang": false, "latencyMs": 0}}})")
        << 0;
    QTest::newRow("one flag") << QByteArray(R"({"tools": {"queryLogistics": {"hang": true}}})")
                              << 1;
    QTest::newRow("two faults on one tool")
        << QByteArray(R"({"tools": {"queryLogistics": {"latencyMs": 150,
            "transientFailures": 2}}})")
        << 2;
    QTest::newRow("the same fault on two tools")
        << QByteArray(R"({"tools": {"queryLogistics": {"notFound": true},
            "queryInventory": {"notFound": true}}})")
        << 2;
    QTest::newRow("a rejection's status only qualifies it")
        << QByteArray(R"({"tools": {"queryLogistics": {"permanentFailure": true,
            "permanentStatus": 404}}})")
        << 1;
    QTest::newRow("a status without its rejection")
        << QByteArray(R"({"tools": {"queryLogistics": {"permanentStatus": 409}}})") << 0;
    QTest::newRow("a Retry-After only qualifies the rate limit")
        << QByteArray(R"({"model": {"rateLimited": 2, "retryAfterMs": 250}})") << 1;
    QTest::newRow("the backend, both providers")
        << QByteArray(R"({"backend": {"failureProbability": 0.5},
            "models": {"primary": {"unavailable": true, "latencyMs": 300},
                       "secondary": {"quotaExhausted": true}}})")
        << 4;
    QTest::newRow("the old model key") << QByteArray(R"({"model": {"unknownTool": true}})")
                                       << 1;
    QTest::newRow("a support-sim section counts once")
        << QByteArray(R"({"sim": {"routes": {"logistics": {"status": 503, "times": 2},
            "orders": {"hang": true}}}})")
        << 1;
    QTest::newRow("everything")
        << QByteArray(R"({"tools": {"queryLogistics": {"hang": true}},
            "backend": {"internalError": true}, "model": {"streamStall": true},
            "sim": {"seed": 1}})")
        << 4;
}

void tst_FaultPlan::activeFaultCount()
{
    QFETCH(QByteArray, json);
    QFETCH(int, count);
    QString error;
    const auto plan = FaultPlan::fromJson(json, &error);
    QVERIFY2(plan, qPrintable(error));
    QCOMPARE(plan->activeFaultCount(), count);
}

// Every published field that is no qualifier counts as one fault when it is on, on a tool or
// a provider; a qualifier alone counts as none.
void tst_FaultPlan::everyFaultOfItsOwnIsCounted()
{
    for (const FaultField &field : FaultPlan::fields()) {
        const QJsonValue on = field.kind == FaultField::Kind::Flag ? QJsonValue(true)
            : field.kind == FaultField::Kind::HttpStatus
            ? QJsonValue(field.choices.last())
            : QJsonValue(field.max);
        QString error;
        const auto plan = FaultPlan::fromJson(planWith(field, on), &error, supportTools());
        QVERIFY2(plan, qPrintable(error));
        QVERIFY2(plan->activeFaultCount() == (field.qualifies ? 0 : 1), field.key);
        if (!field.qualifies)
            continue;
        // A qualifier names a field of its own entry that is counted.
        const auto &fields = FaultPlan::fields();
        QVERIFY2(std::any_of(fields.cbegin(), fields.cend(),
                             [&](const FaultField &other) {
                                 return qstrcmp(other.key, field.qualifies) == 0
                                     && other.scope == field.scope && !other.qualifies;
                             }),
                 field.key);
    }
}

QTEST_GUILESS_MAIN(tst_FaultPlan)
#include "tst_faultplan.moc"
