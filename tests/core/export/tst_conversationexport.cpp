// The conversation export: its JSON and Markdown shape, redaction of both, and strict reading
// back (docs/EXPORT.md). Turns are built as the loop reports them; no runtime needed.
#include "core/export/conversationexport.h"
#include "core/faults/faultplan.h"
#include "core/telemetry/counters.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>

using namespace AgentConsole;
using namespace std::chrono_literals;

namespace {

const QString kKey = QStringLiteral("envkey-Quokka-7731");

// A turn like a real partial one: logistics timed out three times, inventory answered.
TurnResult partialTurn()
{
    TurnResult turn;
    turn.requestId = QStringLiteral("r-0a1b2c3d4e5f");
    turn.conversationId = QStringLiteral("c-9f8e7d6c5b4a");
    turn.question = QStringLiteral("Where is order A1001 and is SKU-200 in stock?");
    turn.answer = QStringLiteral("SKU-200 is low on stock (3 left). The shipment of A1001 "
                                 "could not be looked up just now; try again later.");
    turn.model = QStringLiteral("offline-demo");
    turn.toolRounds = 1;
    turn.totalMs = 6712;
    turn.modelCalls = 2;
    turn.modelAttempts = 3;
    turn.modelRetryCount = 1;
    turn.breakerOpens = 1;

    ToolCallRecord logistics;
    logistics.index = 0;
    logistics.name = QStringLiteral("queryLogistics");
    logistics.operationId = QStringLiteral("t-acme:c-9f8e7d6c5b4a:r-0a1b2c3d4e5f:"
                                           "queryLogistics:0");
    logistics.toolCallId = QStringLiteral("call_1");
    logistics.arguments = {{QStringLiteral("orderId"), QStringLiteral("A1001")}};
    logistics.state = ToolCallRecord::State::Finished;
    logistics.result = ToolResult::failure(ResultCode::ToolTimeout,
                                           QStringLiteral("The lookup timed out."));
    logistics.attempts = {{1, 0, 2000, AttemptOutcome::TimedOut, 200, true},
                          {2, 2200, 2000, AttemptOutcome::TimedOut, 400, true},
                          {3, 4600, 2000, AttemptOutcome::TimedOut, -1, true}};
    logistics.totalMs = 6600;

    ToolCallRecord inventory;
    inventory.index = 1;
    inventory.name = QStringLiteral("queryInventory");
    inventory.operationId = QStringLiteral("t-acme:c-9f8e7d6c5b4a:r-0a1b2c3d4e5f:"
                                           "queryInventory:1");
    inventory.toolCallId = QStringLiteral("call_2");
    inventory.arguments = {{QStringLiteral("sku"), QStringLiteral("SKU-200")}};
    inventory.state = ToolCallRecord::State::Finished;
    inventory.result = ToolResult::ok(QStringLiteral("In stock."),
                                      QJsonObject{{QStringLiteral("available"), 3}});
    inventory.attempts = {{1, 0, 12, AttemptOutcome::Succeeded, -1, true}};
    inventory.totalMs = 12;

    ToolCallRecord refused;
    refused.index = 2;
    refused.round = 2;
    refused.name = QStringLiteral("queryOrder");
    refused.operationId = QStringLiteral("t-acme:c-9f8e7d6c5b4a:r-0a1b2c3d4e5f:queryOrder:2");
    refused.toolCallId = QStringLiteral("call_3");
    refused.rawArguments = QStringLiteral("{not json");
    refused.state = ToolCallRecord::State::Finished;
    refused.result = ToolResult::failure(ResultCode::ToolUnavailable,
                                         QStringLiteral("Unavailable."));
    refused.circuitCooldownLeftMs = 2500;
    turn.toolCalls = {logistics, inventory, refused};
    return turn;
}

// A turn whose text carries secrets, as a hostile or careless model might write them.
TurnResult leakyTurn()
{
    TurnResult turn = partialTurn();
    turn.requestId = QStringLiteral("r-leaky");
    turn.answer = QStringLiteral("Your key is %1 and the other sk-abcdef0123456789xyz.").arg(kKey);
    turn.toolCalls[0].arguments.insert(QStringLiteral("note"), kKey);
    turn.toolCalls[2].rawArguments = QStringLiteral(R"({"password":"hunter2-pw"})");
    return turn;
}

ConversationExport sampleExport(const QList<TurnResult> &turns)
{
    ConversationExport exported;
    exported.setTurns(turns);
    exported.setExportedAt(QDateTime(QDate(2026, 12, 1), QTime(10, 30), Qt::UTC));
    ExportEnvironment environment;
    environment.appVersion = QStringLiteral("0.1.0");
    environment.qtVersion = QString::fromLatin1(qVersion());
    environment.os = QStringLiteral("Debian GNU/Linux 12 (bookworm)");
    environment.provider = QStringLiteral("offline");
    environment.model = QStringLiteral("offline-demo");
    environment.backend = QStringLiteral("embedded");
    exported.setEnvironment(environment);
    QString error;
    const std::optional<FaultPlan> plan = FaultPlan::fromJson(
        R"({"seed": 7, "tools": {"queryLogistics": {"hang": true}}})", &error);
    if (!plan)
        qFatal("fault plan: %s", qPrintable(error));
    exported.setFaultPlan(*plan);
    RetryPolicy fast;
    fast.attemptTimeout = 500ms;
    fast.jitter = JitterMode::Full;
    exported.setPolicies(RetryPolicy::defaults(),
                         {{QStringLiteral("queryOrder"), RetryPolicy::defaults(), false},
                          {QStringLiteral("queryLogistics"), fast, true}});
    Redactor redactor;
    redactor.addSecret(kKey);
    exported.setRedactor(redactor);
    return exported;
}

// The audit trail's rows of a write, as the ledger would read them: a
// confirmation whose arguments carry the console's key (redacted when appended, as the runtime
// does; here not, so that the export's own redaction is what is shown) and its outcome.
QList<AuditEntry> auditRows()
{
    AuditEntry confirmed;
    confirmed.id = 7;
    confirmed.at = QDateTime(QDate(2026, 12, 1), QTime(10, 29, 58, 120), Qt::UTC);
    confirmed.event = AuditEntry::Event::Confirmed;
    confirmed.staffId = QStringLiteral("u-1001");
    confirmed.tenantId = QStringLiteral("t-acme");
    confirmed.conversationId = QStringLiteral("c-9f8e7d6c5b4a");
    confirmed.requestId = QStringLiteral("r-0a1b2c3d4e5f");
    confirmed.operationId = QStringLiteral("t-acme:c-9f8e7d6c5b4a:r-0a1b2c3d4e5f:createTicket:3");
    confirmed.toolName = QStringLiteral("createTicket");
    confirmed.idempotencyKey = confirmed.operationId;
    confirmed.arguments = {{QStringLiteral("orderId"), QStringLiteral("A1001")},
                           {QStringLiteral("description"), QStringLiteral("key %1").arg(kKey)}};
    confirmed.consoleId = QStringLiteral("console-1");
    AuditEntry succeeded = confirmed;
    succeeded.id = 8;
    succeeded.at = confirmed.at.addSecs(1);
    succeeded.event = AuditEntry::Event::Outcome;
    succeeded.outcome = AuditEntry::Outcome::Succeeded;
    succeeded.objectId = QStringLiteral("T-000012");
    succeeded.via = AuditEntry::Via::Backend;
    return {succeeded, confirmed};
}

} // namespace

class tst_ConversationExport final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void jsonHasTheExportShape();
    void markdownIsABugReport();
    void secretsLeaveNeitherFormat();
    void readsItsOwnJsonBack();
    void turnJsonRoundTrips();
    void refusesWhatIsNotAnExport_data();
    void refusesWhatIsNotAnExport();
    void refusesFilesThatAreNotSmallRegularFiles();
    void aJsonTooLargeToOpenAgainIsNotWritten();
    void writesByExtension();
    void auditRowsGoWithTheirTurns();
    void theTeamPolicyGoesWithTheExport();
};

void tst_ConversationExport::jsonHasTheExportShape()
{
    const TurnResult turn = partialTurn();
    ConversationExport exported = sampleExport({turn});
    exported.setCounterTotals({{QStringLiteral("model_retry_count"), 4}});
    const QJsonObject json = exported.toJson();
    QCOMPARE(json.value(QLatin1String("format")).toString(),
             QStringLiteral("agent-console-export"));
    QCOMPARE(json.value(QLatin1String("version")).toInt(), 1);
    QCOMPARE(json.value(QLatin1String("exportedAt")).toString(),
             QStringLiteral("2026-12-01T10:30:00Z"));
    // Each turn is exactly what agent-cli --json prints for it.
    const QJsonArray turns = json.value(QLatin1String("turns")).toArray();
    QCOMPARE(turns.size(), 1);
    QCOMPARE(turns.first().toObject(), turn.toJson());

    const QJsonObject environment = json.value(QLatin1String("environment")).toObject();
    QCOMPARE(environment.value(QLatin1String("qtVersion")).toString(),
             QString::fromLatin1(qVersion()));
    QCOMPARE(environment.keys(),
             (QStringList{QStringLiteral("appVersion"), QStringLiteral("backend"),
                          QStringLiteral("model"), QStringLiteral("os"),
                          QStringLiteral("provider"), QStringLiteral("qtVersion")}));

    const QJsonObject faults = json.value(QLatin1String("faults")).toObject();
    QVERIFY(faults.value(QLatin1String("active")).toBool());
    QVERIFY2(faults.value(QLatin1String("summary"))
                 .toString()
                 .contains(QLatin1String("queryLogistics: hang")),
             qPrintable(faults.value(QLatin1String("summary")).toString()));
    // The plan itself, as --faults reads it: it loads back as the same plan.
    const QJsonObject plan = faults.value(QLatin1String("plan")).toObject();
    QVERIFY(plan.value(QLatin1String("tools"))
                .toObject()
                .value(QLatin1String("queryLogistics"))
                .toObject()
                .value(QLatin1String("hang"))
                .toBool());
    QString planError;
    const std::optional<FaultPlan> reloaded = FaultPlan::fromJson(QJsonDocument(plan).toJson(),
                                                                  &planError);
    QVERIFY2(reloaded, qPrintable(planError));
    QCOMPARE(reloaded->toJson(), plan);

    const QJsonObject policies = json.value(QLatin1String("policies")).toObject();
    QCOMPARE(policies.value(QLatin1String("default"))
                 .toObject()
                 .value(QLatin1String("worstCaseMs"))
                 .toInt(),
             6600);
    const QJsonObject tools = policies.value(QLatin1String("tools")).toObject();
    QCOMPARE(tools.keys(),
             (QStringList{QStringLiteral("queryLogistics"), QStringLiteral("queryOrder")}));
    const QJsonObject logistics = tools.value(QLatin1String("queryLogistics")).toObject();
    QVERIFY(logistics.value(QLatin1String("custom")).toBool());
    QCOMPARE(logistics.value(QLatin1String("attemptTimeoutMs")).toInt(), 500);
    QCOMPARE(logistics.value(QLatin1String("jitter")).toString(), QStringLiteral("full"));
    QCOMPARE(logistics.value(QLatin1String("describe")).toString(), [] {
        RetryPolicy fast;
        fast.attemptTimeout = 500ms;
        fast.jitter = JitterMode::Full; // as set above: the text says so
        return fast.describe();
    }());
    QVERIFY(!tools.value(QLatin1String("queryOrder"))
                 .toObject()
                 .value(QLatin1String("custom"))
                 .toBool());
    QCOMPARE(json.value(QLatin1String("totals"))
                 .toObject()
                 .value(QLatin1String("model_retry_count"))
                 .toInt(),
             4);
    // Totals are left out when not given.
    QVERIFY(!sampleExport({turn}).toJson().contains(QLatin1String("totals")));
}

void tst_ConversationExport::markdownIsABugReport()
{
    const TurnResult turn = partialTurn();
    const QString md = sampleExport({turn}).toMarkdown();
    const auto has = [&md](const QString &piece) {
        if (!md.contains(piece))
            qWarning("missing: %s\n---\n%s", qPrintable(piece), qPrintable(md));
        return md.contains(piece);
    };
    QVERIFY(has(QStringLiteral("# Agent Console conversation export")));
    QVERIFY(has(QStringLiteral("## Turn 1 — partial")));
    QVERIFY(has(QStringLiteral("> ") + turn.question));
    QVERIFY(has(QStringLiteral("> SKU-200 is low on stock")));
    QVERIFY(has(QStringLiteral("#### Call 1: queryLogistics — TOOL_TIMEOUT")));
    QVERIFY(has(QStringLiteral("| Attempt | Outcome | Started | Duration | Next delay |")));
    QVERIFY(has(QStringLiteral("| 1 | timed_out | 0 ms | 2000 ms | 200 ms |")));
    QVERIFY(has(QStringLiteral("| 2 | timed_out | 2200 ms | 2000 ms | 400 ms |")));
    QVERIFY(has(QStringLiteral("| 3 | timed_out | 4600 ms | 2000 ms | — |")));
    QVERIFY(has(QStringLiteral("| 1 | succeeded | 0 ms | 12 ms | — |")));
    QVERIFY(has(QStringLiteral("- Arguments: ` {\"orderId\":\"A1001\"} `")));
    QVERIFY(has(QStringLiteral("- Arguments: ` {not json `")));
    QVERIFY(has(QStringLiteral("- Refused: circuit open, 2500 ms cool-down left")));
    QVERIFY(has(QStringLiteral("No attempt was made.")));
    QVERIFY(has(QStringLiteral("| model_retry_count | 1 |")));
    QVERIFY(has(QStringLiteral("| tool_retry_count | 2 |")));
    QVERIFY(has(QStringLiteral("| circuit_breaker_open_count | 1 |")));
    QVERIFY(has(QStringLiteral("Active: queryLogistics: hang")));
    QVERIFY(has(QStringLiteral("```json\n")));
    QVERIFY(has(QStringLiteral("\"hang\": true")));
    QVERIFY(has(QStringLiteral("| queryLogistics | ") + [] {
        RetryPolicy fast;
        fast.attemptTimeout = 500ms;
        fast.jitter = JitterMode::Full; // as set above: the text says so
        return fast.describe();
    }() + QStringLiteral(" | full | yes |")));
    QVERIFY(has(QStringLiteral("| Qt | %1 |").arg(QString::fromLatin1(qVersion()))));
    QVERIFY(has(QStringLiteral("| OS | Debian GNU/Linux 12 (bookworm) |")));
    QVERIFY(has(QStringLiteral("| App version | 0.1.0 |")));
}

void tst_ConversationExport::secretsLeaveNeitherFormat()
{
    const ConversationExport exported = sampleExport({partialTurn(), leakyTurn()});
    const QByteArray json = exported.serialize(ConversationExport::Format::Json);
    const QByteArray md = exported.serialize(ConversationExport::Format::Markdown);
    for (const QByteArray &text : {json, md}) {
        for (const QByteArray &secret :
             {kKey.toUtf8(), QByteArray("abcdef0123456789xyz"), QByteArray("hunter2-pw")})
            QVERIFY2(!text.contains(secret), text.constData());
        QVERIFY(text.contains("[redacted]"));
        // The ids a reader needs are intact.
        QVERIFY(text.contains("t-acme:c-9f8e7d6c5b4a:r-0a1b2c3d4e5f:queryLogistics:0"));
        QVERIFY(text.contains("A1001"));
    }
    // The clean turn is untouched.
    const QJsonObject root = QJsonDocument::fromJson(json).object();
    QCOMPARE(root.value(QLatin1String("turns")).toArray().first().toObject(),
             partialTurn().toJson());
}

void tst_ConversationExport::readsItsOwnJsonBack()
{
    const QList<TurnResult> turns{partialTurn(), leakyTurn()};
    ConversationExport exported = sampleExport(turns);
    exported.setCounterTotals({{QStringLiteral("tool_retry_count"), 9}});
    const QByteArray bytes = exported.serialize(ConversationExport::Format::Json);
    QString error;
    const std::optional<ConversationExport> read = ConversationExport::fromJson(bytes, &error);
    QVERIFY2(read, qPrintable(error));
    QCOMPARE(read->exportedAt(), QDateTime(QDate(2026, 12, 1), QTime(10, 30), Qt::UTC));
    QCOMPARE(read->turns().size(), 2);
    QCOMPARE(read->turns().first().toJson(), partialTurn().toJson());
    QCOMPARE(read->turns().first().outcome(), TurnOutcome::Partial);
    QCOMPARE(read->turns().first().toolCalls.at(0).attempts.size(), 3);
    QVERIFY(!read->turns().at(1).answer.contains(kKey)); // read as written: redacted
    QCOMPARE(read->environment(), exported.toJson().value(QLatin1String("environment")));
    QCOMPARE(read->faults(), exported.toJson().value(QLatin1String("faults")));
    QCOMPARE(read->policies(), exported.toJson().value(QLatin1String("policies")));
    QCOMPARE(read->counterTotals().value(QLatin1String("tool_retry_count")).toInt(), 9);
    // Written again, it is the same file.
    QCOMPARE(read->serialize(ConversationExport::Format::Json), bytes);
}

void tst_ConversationExport::turnJsonRoundTrips()
{
    TurnResult turn = partialTurn();
    turn.status = TurnStatus::Failed;
    turn.incidentId = QStringLiteral("INC-1A2B3C4D");
    turn.modelDeclined = true;
    turn.answerCutOff = true;
    turn.restarts = 2;
    turn.idempotencyHits = 1;
    turn.idempotencyConflicts = 1;
    turn.unknownExecutionStatus = 1;
    turn.fallbackHops = 3;
    turn.toolCalls[1].attempts.append({2, 20, 0, AttemptOutcome::CircuitOpen, -1, false});
    turn.toolCalls[1].result.code = ResultCode::ToolCallLimit;
    QString error;
    const std::optional<TurnResult> read = TurnResult::fromJson(turn.toJson(), &error);
    QVERIFY2(read, qPrintable(error));
    QCOMPARE(read->toJson(), turn.toJson());
    QCOMPARE(read->toolCalls.at(1).attempts.last().made, false);
}

void tst_ConversationExport::refusesWhatIsNotAnExport_data()
{
    QTest::addColumn<QByteArray>("json");
    QTest::addColumn<QString>("reason");
    const QByteArray good = sampleExport({partialTurn()})
                                .serialize(ConversationExport::Format::Json);
    const QJsonObject root = QJsonDocument::fromJson(good).object();
    const auto with = [&root](const QString &key, const QJsonValue &value) {
        QJsonObject changed = root;
        if (value.isUndefined())
            changed.remove(key);
        else
            changed.insert(key, value);
        return QJsonDocument(changed).toJson();
    };
    const auto withTurn = [&](const QString &key, const QJsonValue &value) {
        QJsonObject turn = root.value(QLatin1String("turns")).toArray().first().toObject();
        if (value.isUndefined())
            turn.remove(key);
        else
            turn.insert(key, value);
        return with(QStringLiteral("turns"), QJsonArray{turn});
    };
    QTest::newRow("not json") << QByteArray("{\"format\":") << "unterminated";
    QTest::newRow("an array") << QByteArray("[]") << "not a JSON object";
    QTest::newRow("another format")
        << with(QStringLiteral("format"), QStringLiteral("agent-cli")) << "\"format\"";
    QTest::newRow("a newer version") << with(QStringLiteral("version"), 2) << "version 2";
    QTest::newRow("version as text")
        << with(QStringLiteral("version"), QStringLiteral("1")) << "version";
    QTest::newRow("unknown field") << with(QStringLiteral("extra"), 1) << "\"extra\"";
    QTest::newRow("no turns") << with(QStringLiteral("turns"), QJsonValue::Undefined)
                              << "\"turns\"";
    QTest::newRow("turns not an array")
        << with(QStringLiteral("turns"), QJsonObject()) << "\"turns\"";
    QTest::newRow("bad time") << with(QStringLiteral("exportedAt"), QStringLiteral("yesterday"))
                              << "\"exportedAt\"";
    QTest::newRow("environment missing")
        << with(QStringLiteral("environment"), QJsonValue::Undefined) << "\"environment\"";
    QTest::newRow("turn without question")
        << withTurn(QStringLiteral("question"), QJsonValue::Undefined)
        << "turns[0].\"question\" is missing";
    QTest::newRow("turn with a bad status")
        << withTurn(QStringLiteral("status"), QStringLiteral("done")) << "\"status\"";
    QTest::newRow("turn with fractional time")
        << withTurn(QStringLiteral("totalMs"), 1.5) << "\"totalMs\" is not a whole number";
    QTest::newRow("call not an object")
        << withTurn(QStringLiteral("toolCalls"), QJsonArray{1}) << "toolCalls[0]";
    QJsonObject call = root.value(QLatin1String("turns"))
                           .toArray()
                           .first()
                           .toObject()
                           .value(QLatin1String("toolCalls"))
                           .toArray()
                           .first()
                           .toObject();
    QJsonArray attempts = call.value(QLatin1String("attempts")).toArray();
    QJsonObject attempt = attempts.first().toObject();
    attempt.insert(QStringLiteral("outcome"), QStringLiteral("exploded"));
    attempts[0] = attempt;
    call.insert(QStringLiteral("attempts"), attempts);
    QTest::newRow("unknown attempt outcome")
        << withTurn(QStringLiteral("toolCalls"), QJsonArray{call})
        << "toolCalls[0].attempts[0].\"outcome\"";
    QJsonObject counters;
    QTest::newRow("counters missing a counter")
        << withTurn(QStringLiteral("counters"), counters) << "counters.\"model_retry_count\"";
}

void tst_ConversationExport::refusesWhatIsNotAnExport()
{
    QFETCH(QByteArray, json);
    QFETCH(QString, reason);
    QString error;
    QVERIFY(!ConversationExport::fromJson(json, &error));
    QVERIFY2(error.startsWith(QLatin1String("not a conversation export: ")), qPrintable(error));
    QVERIFY2(error.contains(reason), qPrintable(error));
}

void tst_ConversationExport::refusesFilesThatAreNotSmallRegularFiles()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    QString error;
    QVERIFY(!ConversationExport::fromFile(dir.path(), &error));
    QVERIFY2(error.contains(dir.path()), qPrintable(error));

    QFile big(dir.filePath(QStringLiteral("big.json")));
    QVERIFY(big.open(QIODevice::WriteOnly));
    QVERIFY(big.resize(ConversationExport::kMaxFileBytes + 1));
    big.close();
    error.clear();
    QVERIFY(!ConversationExport::fromFile(big.fileName(), &error));
    QVERIFY2(error.contains(QLatin1String("big.json")), qPrintable(error));

    error.clear();
    QVERIFY(!ConversationExport::fromFile(dir.filePath(QStringLiteral("none.json")), &error));
    QVERIFY(!error.isEmpty());
}

// Every JSON export written can be opened again: one larger than a read allows is refused
// with its size, and what was at that path stays; as Markdown (never read back) it is written.
void tst_ConversationExport::aJsonTooLargeToOpenAgainIsNotWritten()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    QList<TurnResult> turns;
    for (int i = 0; i < 9; ++i) {
        TurnResult turn = partialTurn();
        turn.requestId = QStringLiteral("r-large-%1").arg(i);
        turn.answer = QString(1024 * 1024, QLatin1Char('a'));
        turns.append(turn);
    }
    const ConversationExport large = sampleExport(turns);
    const QString json = dir.filePath(QStringLiteral("large.json"));
    QFile earlier(json);
    QVERIFY(earlier.open(QIODevice::WriteOnly));
    QVERIFY(earlier.write("an earlier export") > 0);
    earlier.close();
    QString error;
    QVERIFY(!large.writeTo(json, &error));
    QVERIFY2(error.contains(json) && error.contains(QLatin1String("9.0 MiB"))
                 && error.contains(QLatin1String("8 MiB")),
             qPrintable(error));
    QVERIFY(earlier.open(QIODevice::ReadOnly));
    QCOMPARE(earlier.readAll(), QByteArray("an earlier export"));
    QVERIFY2(large.writeTo(dir.filePath(QStringLiteral("large.md")), &error), qPrintable(error));
    // Seven of them fit, and read back.
    turns.removeLast();
    turns.removeLast();
    QVERIFY2(sampleExport(turns).writeTo(json, &error), qPrintable(error));
    QVERIFY2(ConversationExport::fromFile(json, &error), qPrintable(error));
}

void tst_ConversationExport::writesByExtension()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const ConversationExport exported = sampleExport({partialTurn()});
    QString error;
    const QString json = dir.filePath(QStringLiteral("report.JSON"));
    QVERIFY2(exported.writeTo(json, &error), qPrintable(error));
    QVERIFY(ConversationExport::fromFile(json, &error));
    const QString md = dir.filePath(QStringLiteral("report.md"));
    QVERIFY2(exported.writeTo(md, &error), qPrintable(error));
    QFile mdFile(md);
    QVERIFY(mdFile.open(QIODevice::ReadOnly));
    QVERIFY(mdFile.readAll().startsWith("# Agent Console conversation export"));

    QVERIFY(!exported.writeTo(dir.filePath(QStringLiteral("report.txt")), &error));
    QVERIFY2(error.contains(QLatin1String(".json or .md")), qPrintable(error));
    QVERIFY(QDir(dir.path()).mkdir(QStringLiteral("folder.json")));
    QVERIFY(!exported.writeTo(dir.filePath(QStringLiteral("folder.json")), &error));
    QVERIFY2(error.contains(QLatin1String("directory")), qPrintable(error));
}

// An export asked to carry the audit trail (docs/AUDIT.md): "audit" with its rows, redacted
// like everything else, a table in the Markdown, read back strictly; none unless asked.
void tst_ConversationExport::auditRowsGoWithTheirTurns()
{
    ConversationExport plain = sampleExport({partialTurn()});
    QVERIFY(!plain.toJson().contains(QLatin1String("audit")));
    QVERIFY(!plain.toMarkdown().contains(QLatin1String("Audit trail")));

    ConversationExport exported = sampleExport({partialTurn()});
    exported.setAuditRows(auditRows(), true);
    const QByteArray json = exported.serialize(ConversationExport::Format::Json);
    const QString md = QString::fromUtf8(exported.serialize(ConversationExport::Format::Markdown));
    for (const QString &text : {QString::fromUtf8(json), md}) {
        QVERIFY2(!text.contains(kKey), qPrintable(text));
        QVERIFY(text.contains(QLatin1String("T-000012")));
        QVERIFY(text.contains(QLatin1String("u-1001")));
    }
    const QJsonObject audit = QJsonDocument::fromJson(json).object().value(u"audit").toObject();
    QCOMPARE(audit.value(u"complete").toBool(), true);
    const QJsonArray rows = audit.value(u"rows").toArray();
    QCOMPARE(rows.size(), 2);
    QCOMPARE(rows.at(0).toObject().value(u"event").toString(), QStringLiteral("OUTCOME"));
    QCOMPARE(rows.at(0).toObject().value(u"outcome").toString(), QStringLiteral("SUCCEEDED"));
    QCOMPARE(rows.at(0).toObject().value(u"via").toString(), QStringLiteral("backend"));
    QCOMPARE(rows.at(1).toObject().value(u"event").toString(), QStringLiteral("CONFIRMED"));
    QCOMPARE(rows.at(1).toObject().value(u"arguments").toObject().value(u"description"),
             QJsonValue(QStringLiteral("key [redacted]")));
    QVERIFY2(md.contains(QLatin1String("## Audit trail")), qPrintable(md));
    QVERIFY2(md.contains(QLatin1String("| SUCCEEDED T-000012 (backend) |")), qPrintable(md));

    // Read back as written (redacted), and written again the same.
    QString error;
    const std::optional<ConversationExport> read = ConversationExport::fromJson(json, &error);
    QVERIFY2(read, qPrintable(error));
    QVERIFY(read->hasAuditRows());
    QCOMPARE(read->auditRows().size(), 2);
    QCOMPARE(read->auditRows().at(0).objectId, QStringLiteral("T-000012"));
    QCOMPARE(read->serialize(ConversationExport::Format::Json), json);

    // Only the newest rows: said in both formats.
    exported.setAuditRows(auditRows().mid(0, 1), false);
    QVERIFY(!QJsonDocument::fromJson(exported.serialize(ConversationExport::Format::Json))
                 .object()
                 .value(u"audit")
                 .toObject()
                 .value(u"complete")
                 .toBool());
    QVERIFY(exported.toMarkdown().contains(QLatin1String("Only the newest 1 rows are here.")));

    // Strictly: a row of the wrong shape refuses the file, naming it.
    QJsonObject root = QJsonDocument::fromJson(json).object();
    QJsonObject badAudit = audit;
    QJsonArray badRows = rows;
    QJsonObject badRow = rows.at(1).toObject();
    badRow.insert(QStringLiteral("event"), QStringLiteral("APPROVED"));
    badRows[1] = badRow;
    badAudit.insert(QStringLiteral("rows"), badRows);
    root.insert(QStringLiteral("audit"), badAudit);
    QVERIFY(!ConversationExport::fromJson(QJsonDocument(root).toJson(), &error));
    QVERIFY2(error.contains(QLatin1String("audit.rows[1]")), qPrintable(error));
    root.insert(QStringLiteral("audit"), QJsonArray());
    QVERIFY(!ConversationExport::fromJson(QJsonDocument(root).toJson(), &error));
    QVERIFY2(error.contains(QLatin1String("\"audit\"")), qPrintable(error));
}

// docs/POLICY.md: the policy in force when exported, and the one each turn ran under; read
// back strictly; a line in the Markdown. An export made before policies has neither.
void tst_ConversationExport::theTeamPolicyGoesWithTheExport()
{
    TurnResult turn = partialTurn();
    const QJsonObject record{{QStringLiteral("version"), QStringLiteral("2026-12-01")},
                             {QStringLiteral("origin"),
                              QStringLiteral("/etc/xdg/AgentConsole/policy.json")}};
    turn.teamPolicy = record;
    ConversationExport exported = sampleExport({turn});
    QVERIFY(!exported.toJson().contains(QLatin1String("teamPolicy")));
    exported.setTeamPolicy(record);
    const QJsonObject json = exported.toJson();
    QCOMPARE(json.value(QLatin1String("teamPolicy")), QJsonValue(record));
    QCOMPARE(json.value(QLatin1String("turns"))
                 .toArray()
                 .first()
                 .toObject()
                 .value(QLatin1String("teamPolicy")),
             QJsonValue(record));
    QVERIFY2(
        exported.toMarkdown().contains(QStringLiteral(
            "Team policy: version ` 2026-12-01 ` from ` /etc/xdg/AgentConsole/policy.json `")),
        qPrintable(exported.toMarkdown()));

    QString error;
    const std::optional<ConversationExport> back = ConversationExport::fromJson(
        exported.serialize(ConversationExport::Format::Json), &error);
    QVERIFY2(back, qPrintable(error));
    QCOMPARE(back->teamPolicy(), QJsonValue(record));
    QCOMPARE(back->turns().first().teamPolicy, QJsonValue(record));

    exported.setTeamPolicy(QStringLiteral("none"));
    QVERIFY(exported.toMarkdown().contains(QStringLiteral("Team policy: none")));
    QVERIFY(ConversationExport::fromJson(exported.serialize(ConversationExport::Format::Json),
                                         &error));

    // Neither "none" nor a record: refused, naming the field.
    QJsonObject damaged = exported.toJson();
    damaged.insert(QStringLiteral("teamPolicy"), QStringLiteral("some"));
    QVERIFY(!ConversationExport::fromJson(QJsonDocument(damaged).toJson(), &error));
    QVERIFY2(error.contains(QStringLiteral("\"teamPolicy\"")), qPrintable(error));
    damaged.insert(QStringLiteral("teamPolicy"),
                   QJsonObject{{QStringLiteral("version"), QStringLiteral("1")}});
    QVERIFY(!ConversationExport::fromJson(QJsonDocument(damaged).toJson(), &error));
}

QTEST_GUILESS_MAIN(tst_ConversationExport)
#include "tst_conversationexport.moc"
