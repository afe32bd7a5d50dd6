// The audit trail of writes as the agent loop keeps it (docs/AUDIT.md): a confirmed write's
// rows (confirmed, then its outcome with what it made), the staff member from the trusted
// session whatever the model says, an unknown outcome settled later by a replay and by a
// resume, answers from the ledger, a stopped turn, a dismissed turn, a declined write (no
// row), and, through the console's runtime, secrets redacted and a real ticket's id.

#include "agentdoubles.h"
#include "core/console/agentruntime.h"
#include "core/console/writeaudit.h"
#include "core/ledger/audittrail.h"
#include "core/ledger/idempotencyledger.h"
#include "core/ledger/requesthash.h"
#include "core/resilience/toolexecutor.h"
#include "core/support/createtickettool.h"
#include "core/tools/toolregistry.h"
#include "core/turn/agentloop.h"
#include "core/turn/turncheckpoint.h"

#include <QFutureWatcher>
#include <QScopeGuard>
#include <QJsonDocument>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include <atomic>

using namespace AgentConsole;
using namespace AgentConsole::Testing;
using Event = AuditEntry::Event;
using AuditOutcome = AuditEntry::Outcome;
using Via = AuditEntry::Via;

namespace {

template <typename T> T await(const QFuture<T> &future)
{
    QFutureWatcher<T> watcher;
    QSignalSpy finished(&watcher, &QFutureWatcherBase::finished);
    watcher.setFuture(future);
    if (finished.isEmpty() && !finished.wait(20'000))
        qFatal("a future did not finish");
    return future.result();
}

RetryPolicy fastPolicy()
{
    RetryPolicy policy;
    policy.attemptTimeout = std::chrono::milliseconds(100);
    policy.initialDelay = std::chrono::milliseconds(5);
    policy.maxDelay = std::chrono::milliseconds(10);
    policy.maxRetries = 0;
    return policy;
}

const QJsonObject kTicketArguments{{QStringLiteral("orderId"), QStringLiteral("A1001")},
                                   {QStringLiteral("category"), QStringLiteral("DAMAGED")},
                                   {QStringLiteral("description"), QStringLiteral("mug broken")}};

QString compact(const QJsonObject &object)
{
    return QString::fromUtf8(QJsonDocument(object).toJson(QJsonDocument::Compact));
}

// A write with the ticket tool's descriptor (its name, its labels: what it makes is named by
// "ticketId") whose attempts run `body`.
class TicketLikeTool final : public AgentTool
{
public:
    using Body = std::function<AttemptResult(const AttemptContext &)>;
    explicit TicketLikeTool(Body body)
        : m_body(std::move(body))
    {
    }
    mutable std::atomic<int> runs{0};

    ToolDescriptor descriptor() const override
    {
        ToolDescriptor descriptor = ticketToolDescriptor();
        descriptor.parameters = QJsonObject{{QStringLiteral("type"), QStringLiteral("object")}};
        descriptor.priorWrites = {}; // no lookup before the confirmation
        return descriptor;
    }
    std::optional<ToolResult> precheck(const QJsonObject &, const TrustedContext &) const override
    {
        return std::nullopt;
    }
    AttemptResult attempt(const QJsonObject &, const TrustedContext &,
                          const AttemptContext &context) const override
    {
        ++runs;
        return m_body(context);
    }

private:
    Body m_body;
};

ChatResponse answered()
{
    ChatResponse response;
    response.content = QStringLiteral("Done.");
    return response;
}

AttemptResult ticketMade(const QString &id)
{
    return AttemptResult::completed(ToolResult::ok(
        QStringLiteral("Ticket created"), QJsonObject{{QStringLiteral("ticketId"), id}}));
}

// The rows of `ledger`'s trail, newest first.
QList<AuditEntry> rowsOf(IdempotencyLedger &ledger)
{
    const AuditPage page = await(ledger.auditTrail()->read({}));
    if (!page.ok())
        qFatal("the audit trail could not be read");
    return page.rows;
}

// What a row says in one line, for comparing a whole trail: "CONFIRMED", "OUTCOME SUCCEEDED
// T-1 backend", "SETTLEMENT SUCCEEDED T-1 replay".
QString line(const AuditEntry &entry)
{
    QStringList words{AuditEntry::eventName(entry.event)};
    for (const QString &word : {AuditEntry::outcomeName(entry.outcome), entry.objectId,
                                entry.resultCode, AuditEntry::viaName(entry.via)}) {
        if (!word.isEmpty())
            words.append(word);
    }
    return words.join(QLatin1Char(' '));
}

QStringList lines(const QList<AuditEntry> &rows)
{
    QStringList out;
    for (const AuditEntry &entry : rows)
        out.append(line(entry));
    return out;
}

} // namespace

class tst_WriteAudit : public QObject
{
    Q_OBJECT

private slots:
    void init();
    void cleanup();
    void aConfirmedWriteHasItsConfirmationAndItsOutcome();
    void theStaffMemberComesFromTheSession();
    void aDeclinedWriteLeavesNoRow();
    void aFailedWriteHasItsResultCode();
    void anUnknownOutcomeIsSettledByTheSameRequestAskedAgain();
    void anUnknownOutcomeIsSettledByAResume();
    void answersFromTheLedgerAreAudited();
    void aStoppedTurnsWriteEndsUnknown();
    void aDismissedTurnsWriteEndsUnknown();
    void theRuntimeRedactsSecretsAndNamesTheTicket();

private:
    std::unique_ptr<AgentLoop> makeLoop(ChatModel *model, std::shared_ptr<AgentTool> tool,
                                        bool confirmAll = true);
    // Asks `question` (under `requestId` when given) and waits for the turn's end.
    TurnResult ask(AgentLoop &loop, const QString &requestId = {});

    std::unique_ptr<QTemporaryDir> m_dir;
    std::unique_ptr<IdempotencyLedger> m_ledger;
    std::unique_ptr<ToolRegistry> m_registry;
    std::unique_ptr<ToolExecutor> m_executor;
};

void tst_WriteAudit::init()
{
    m_dir = std::make_unique<QTemporaryDir>();
    QVERIFY(m_dir->isValid());
    m_ledger = openTestLedger(m_dir->path());
    QVERIFY(m_ledger->auditTrail());
    m_registry = std::make_unique<ToolRegistry>();
    m_executor = std::make_unique<ToolExecutor>();
}

void tst_WriteAudit::cleanup()
{
    m_executor.reset();
    m_registry.reset();
    m_ledger.reset();
    m_dir.reset();
}

std::unique_ptr<AgentLoop> tst_WriteAudit::makeLoop(ChatModel *model,
                                                    std::shared_ptr<AgentTool> tool,
                                                    bool confirmAll)
{
    m_registry->add(std::move(tool));
    auto loop = std::make_unique<AgentLoop>(AgentLoop::Dependencies{
        .model = model,
        .tools = m_registry.get(),
        .executor = m_executor.get(),
        .ledger = m_ledger.get(),
        .toolPolicies = [](const QString &) { return fastPolicy(); }});
    loop->setSession({QStringLiteral("u-7"), QStringLiteral("t-1"), QStringLiteral("c-1")});
    if (confirmAll) {
        AgentLoop *raw = loop.get();
        connect(raw, &AgentLoop::confirmationRequested, this,
                [raw](const QString &, const ToolCallRecord &write) {
                    raw->confirm(write.operationId, true);
                });
    }
    return loop;
}

TurnResult tst_WriteAudit::ask(AgentLoop &loop, const QString &requestId)
{
    QSignalSpy finished(&loop, &AgentLoop::turnFinished);
    const QString asked = loop.ask(QStringLiteral("create a ticket for A1001"), requestId);
    if (asked.isEmpty())
        qFatal("the loop refused the question");
    if (!finished.wait(20'000))
        qFatal("the turn did not finish");
    return finished.first().first().value<TurnResult>();
}

void tst_WriteAudit::aConfirmedWriteHasItsConfirmationAndItsOutcome()
{
    ScriptedModel model;
    model.script = {toolCalls({{QStringLiteral("c1"), QStringLiteral("createTicket"),
                                compact(kTicketArguments)}})};
    auto tool = std::make_shared<TicketLikeTool>(
        [](const AttemptContext &) { return ticketMade(QStringLiteral("T-000012")); });
    const auto loop = makeLoop(&model, tool);
    const TurnResult turn = ask(*loop);
    QVERIFY(turn.toolCalls[0].result.success);

    const QList<AuditEntry> rows = rowsOf(*m_ledger);
    QCOMPARE(lines(rows), QStringList({"OUTCOME SUCCEEDED T-000012 backend", "CONFIRMED"}));
    const QString operationId = turn.toolCalls[0].operationId;
    for (const AuditEntry &row : rows) {
        QCOMPARE(row.staffId, QStringLiteral("u-7"));
        QCOMPARE(row.tenantId, QStringLiteral("t-1"));
        QCOMPARE(row.conversationId, QStringLiteral("c-1"));
        QCOMPARE(row.requestId, turn.requestId);
        QCOMPARE(row.operationId, operationId);
        QCOMPARE(row.idempotencyKey, operationId);
        QCOMPARE(row.toolName, QStringLiteral("createTicket"));
        QCOMPARE(row.arguments, kTicketArguments);
        QVERIFY(row.at.isValid());
    }
    QVERIFY(rows[0].id > rows[1].id);
    QVERIFY(rows[1].resultCode.isEmpty() && rows[1].objectId.isEmpty());
}

// The model may say anything about who asks; the row's staff member is the session's.
void tst_WriteAudit::theStaffMemberComesFromTheSession()
{
    QJsonObject arguments = kTicketArguments;
    arguments.insert(QStringLiteral("staffId"), QStringLiteral("u-mallory"));
    arguments.insert(QStringLiteral("confirmedBy"), QStringLiteral("u-mallory"));
    ScriptedModel model;
    model.script = {toolCalls(
        {{QStringLiteral("c1"), QStringLiteral("createTicket"), compact(arguments)}})};
    const auto loop = makeLoop(
        &model, std::make_shared<TicketLikeTool>(
                    [](const AttemptContext &) { return ticketMade(QStringLiteral("T-1")); }));
    loop->setSession({QStringLiteral("u-alice"), QStringLiteral("t-1"), QStringLiteral("c-9")});
    ask(*loop);
    const QList<AuditEntry> rows = rowsOf(*m_ledger);
    QCOMPARE(rows.size(), 2);
    for (const AuditEntry &row : rows) {
        QCOMPARE(row.staffId, QStringLiteral("u-alice"));
        QCOMPARE(row.conversationId, QStringLiteral("c-9"));
        QCOMPARE(row.arguments.value(u"staffId").toString(), QStringLiteral("u-mallory"));
    }
    // And the filter by staff member finds them under the session's.
    AuditQuery query;
    query.staffId = QStringLiteral("u-mallory");
    QVERIFY(await(m_ledger->auditTrail()->read(query)).rows.isEmpty());
    query.staffId = QStringLiteral("u-alice");
    QCOMPARE(await(m_ledger->auditTrail()->read(query)).rows.size(), 2);
}

void tst_WriteAudit::aDeclinedWriteLeavesNoRow()
{
    ScriptedModel model;
    model.script = {toolCalls({{QStringLiteral("c1"), QStringLiteral("createTicket"),
                                compact(kTicketArguments)}})};
    auto tool = std::make_shared<TicketLikeTool>(
        [](const AttemptContext &) { return ticketMade(QStringLiteral("T-1")); });
    const auto loop = makeLoop(&model, tool, false);
    AgentLoop *raw = loop.get();
    connect(raw, &AgentLoop::confirmationRequested, this,
            [raw](const QString &, const ToolCallRecord &write) {
                raw->confirm(write.operationId, false);
            });
    const TurnResult turn = ask(*loop);
    QCOMPARE(turn.toolCalls[0].result.code, ResultCode::ConfirmationDeclined);
    QCOMPARE(tool->runs.load(), 0);
    QVERIFY(rowsOf(*m_ledger).isEmpty());
}

void tst_WriteAudit::aFailedWriteHasItsResultCode()
{
    ScriptedModel model;
    model.script = {toolCalls({{QStringLiteral("c1"), QStringLiteral("createTicket"),
                                compact(kTicketArguments)}})};
    const auto loop = makeLoop(&model, std::make_shared<TicketLikeTool>([](const AttemptContext &) {
                                   return AttemptResult::rejected(
                                       QStringLiteral("400 from the backend"));
                               }));
    const TurnResult turn = ask(*loop);
    QCOMPARE(turn.toolCalls[0].result.code, ResultCode::ToolRejected);
    QCOMPARE(lines(rowsOf(*m_ledger)),
             QStringList({"OUTCOME FAILED TOOL_REJECTED backend", "CONFIRMED"}));
}

// A write times out (it may have been made); the same request asked again claims it with
// "may have run", the tool asks the backend by its key and finds the ticket: a settlement.
void tst_WriteAudit::anUnknownOutcomeIsSettledByTheSameRequestAskedAgain()
{
    ScriptedModel model;
    const ModelToolCall call{QStringLiteral("c1"), QStringLiteral("createTicket"),
                             compact(kTicketArguments)};
    model.script = {toolCalls({call}), answered(), toolCalls({call}), answered()};
    std::atomic<int> mayHaveRun{0};
    auto tool = std::make_shared<TicketLikeTool>([&mayHaveRun](const AttemptContext &context) {
        if (!context.mayHaveRun) { // sent, then silent past the attempt timeout
            context.cancellation.waitUntilCancelled();
            return AttemptResult::transient(QStringLiteral("no answer"));
        }
        ++mayHaveRun; // asked the backend by the key: it was made
        return ticketMade(QStringLiteral("T-000777"));
    });
    const auto loop = makeLoop(&model, tool);
    const TurnResult first = ask(*loop, QStringLiteral("r-same"));
    QCOMPARE(first.toolCalls[0].result.code, ResultCode::ExecutionStatusUnknown);
    QCOMPARE(lines(rowsOf(*m_ledger)),
             QStringList({"OUTCOME UNKNOWN EXECUTION_STATUS_UNKNOWN backend", "CONFIRMED"}));

    const TurnResult again = ask(*loop, QStringLiteral("r-same"));
    QCOMPARE(again.toolCalls[0].operationId, first.toolCalls[0].operationId);
    QVERIFY(again.toolCalls[0].result.success);
    QCOMPARE(mayHaveRun.load(), 1);
    const QList<AuditEntry> rows = rowsOf(*m_ledger);
    QCOMPARE(lines(rows), QStringList({"SETTLEMENT SUCCEEDED T-000777 replay", "CONFIRMED",
                                       "OUTCOME UNKNOWN EXECUTION_STATUS_UNKNOWN backend",
                                       "CONFIRMED"}));
    QCOMPARE(rows[0].operationId, first.toolCalls[0].operationId);
    QCOMPARE(await(m_ledger->lookup(rows[0].operationId)).row->status, LedgerStatus::Succeeded);
}

// A console killed while a confirmed write ran: the resumed turn recovers its claim ("may have
// run"), asks the backend, and the trail settles what the interrupted run could not tell.
void tst_WriteAudit::anUnknownOutcomeIsSettledByAResume()
{
    TurnCheckpoint checkpoint;
    checkpoint.stage = TurnStage::Planned;
    checkpoint.userId = QStringLiteral("u-7");
    checkpoint.tenantId = QStringLiteral("t-1");
    checkpoint.conversationId = QStringLiteral("c-1");
    const ModelToolCall planned{QStringLiteral("c1"), QStringLiteral("createTicket"),
                                compact(kTicketArguments)};
    checkpoint.conversation = {ChatMessage::user(QStringLiteral("create a ticket")),
                               ChatMessage::assistant({}, {planned})};
    checkpoint.result.requestId = QStringLiteral("r-1");
    checkpoint.result.question = QStringLiteral("create a ticket");
    checkpoint.result.toolRounds = 1;
    ToolCallRecord write;
    write.toolCallId = planned.id;
    write.name = planned.name;
    write.rawArguments = planned.arguments;
    write.arguments = kTicketArguments;
    write.operationId = QStringLiteral("t-1:c-1:r-1:createTicket:0");
    write.confirmed = true;
    checkpoint.result.toolCalls = {write};
    // The interrupted run claimed it (and appended its confirmation, as it does).
    QCOMPARE(await(m_ledger->begin(write.operationId, write.name, requestHash(kTicketArguments)))
                 .outcome,
             LedgerClaim::Outcome::Claimed);

    ScriptedModel model;
    auto tool = std::make_shared<TicketLikeTool>([](const AttemptContext &context) {
        return context.mayHaveRun ? ticketMade(QStringLiteral("T-000031"))
                                  : AttemptResult::rejected(QStringLiteral("not asked first"));
    });
    const auto loop = makeLoop(&model, tool);
    QSignalSpy finished(loop.get(), &AgentLoop::turnFinished);
    QVERIFY(loop->resume(checkpoint));
    QVERIFY(finished.wait(20'000));
    QVERIFY(finished.first().first().value<TurnResult>().toolCalls[0].result.success);
    const QList<AuditEntry> rows = rowsOf(*m_ledger);
    QCOMPARE(lines(rows), QStringList({"SETTLEMENT SUCCEEDED T-000031 resume"}));
    QCOMPARE(rows[0].staffId, QStringLiteral("u-7"));
    QCOMPARE(rows[0].requestId, QStringLiteral("r-1"));
    QCOMPARE(rows[0].arguments, kTicketArguments);
}

void tst_WriteAudit::answersFromTheLedgerAreAudited()
{
    ScriptedModel model;
    const ModelToolCall call{QStringLiteral("c1"), QStringLiteral("createTicket"),
                             compact(kTicketArguments)};
    model.script = {toolCalls({call}), answered(), toolCalls({call}), answered()};
    auto tool = std::make_shared<TicketLikeTool>(
        [](const AttemptContext &) { return ticketMade(QStringLiteral("T-000042")); });
    const auto loop = makeLoop(&model, tool);
    ask(*loop, QStringLiteral("r-twice"));
    const TurnResult replay = ask(*loop, QStringLiteral("r-twice"));
    QCOMPARE(replay.idempotencyHits, 1);
    QCOMPARE(tool->runs.load(), 1);
    QCOMPARE(lines(rowsOf(*m_ledger)),
             QStringList({"OUTCOME SUCCEEDED T-000042 ledger", "CONFIRMED",
                          "OUTCOME SUCCEEDED T-000042 backend", "CONFIRMED"}));
}

// A cancel while the write runs: it may still reach the backend, so its outcome is unknown,
// and the trail says the turn stopped around it.
void tst_WriteAudit::aStoppedTurnsWriteEndsUnknown()
{
    ScriptedModel model;
    model.script = {toolCalls({{QStringLiteral("c1"), QStringLiteral("createTicket"),
                                compact(kTicketArguments)}})};
    RetryPolicy slow = fastPolicy();
    slow.attemptTimeout = std::chrono::seconds(30);
    std::atomic<bool> started{false};
    auto tool = std::make_shared<TicketLikeTool>([&started](const AttemptContext &context) {
        started = true;
        context.cancellation.waitUntilCancelled();
        return AttemptResult::transient(QStringLiteral("cancelled"));
    });
    m_registry->add(tool);
    AgentLoop loop({.model = &model,
                    .tools = m_registry.get(),
                    .executor = m_executor.get(),
                    .ledger = m_ledger.get(),
                    .toolPolicies = [&slow](const QString &) { return slow; }});
    loop.setSession({QStringLiteral("u-7"), QStringLiteral("t-1"), QStringLiteral("c-1")});
    connect(&loop, &AgentLoop::confirmationRequested, this,
            [&loop](const QString &, const ToolCallRecord &write) {
                loop.confirm(write.operationId, true);
            });
    QSignalSpy finished(&loop, &AgentLoop::turnFinished);
    loop.ask(QStringLiteral("create a ticket for A1001"));
    QTRY_VERIFY_WITH_TIMEOUT(started.load(), 20'000);
    loop.cancel();
    QVERIFY(finished.size() == 1 || finished.wait(20'000));
    QCOMPARE(finished.first().first().value<TurnResult>().toolCalls[0].result.code,
             ResultCode::ExecutionStatusUnknown);
    QCOMPARE(lines(rowsOf(*m_ledger)),
             QStringList({"OUTCOME UNKNOWN EXECUTION_STATUS_UNKNOWN stopped", "CONFIRMED"}));
}

void tst_WriteAudit::aDismissedTurnsWriteEndsUnknown()
{
    ScriptedModel model;
    const auto loop = makeLoop(&model, std::make_shared<TicketLikeTool>([](const AttemptContext &) {
                                   return ticketMade(QStringLiteral("T-1"));
                               }));
    TurnCheckpoint checkpoint;
    checkpoint.stage = TurnStage::Planned;
    checkpoint.userId = QStringLiteral("u-7");
    checkpoint.tenantId = QStringLiteral("t-1");
    checkpoint.conversationId = QStringLiteral("c-3");
    checkpoint.result.requestId = QStringLiteral("r-3");
    ToolCallRecord write;
    write.name = QStringLiteral("createTicket");
    write.arguments = kTicketArguments;
    write.operationId = QStringLiteral("t-1:c-3:r-3:createTicket:0");
    write.confirmed = true;
    write.state = ToolCallRecord::State::Running;
    checkpoint.result.toolCalls = {write};
    loop->abandon(checkpoint);
    const QList<AuditEntry> rows = rowsOf(*m_ledger);
    QCOMPARE(lines(rows), QStringList({"OUTCOME UNKNOWN EXECUTION_STATUS_UNKNOWN dismissed"}));
    QCOMPARE(rows[0].staffId, QStringLiteral("u-7"));
    QCOMPARE(rows[0].conversationId, QStringLiteral("c-3"));
    QCOMPARE(rows[0].operationId, write.operationId);
}

// Through the console: the row's arguments go through the export's redactor (the API key
// the console holds, credentials by shape), and a real ticket's id is the row's object.
void tst_WriteAudit::theRuntimeRedactsSecretsAndNamesTheTicket()
{
    const QByteArray key = "Quokka-Primary-7781";
    qputenv("AGENT_CONSOLE_API_KEY", key);
    const auto unset = qScopeGuard([] { qunsetenv("AGENT_CONSOLE_API_KEY"); });
    RuntimeOptions options;
    options.dataDirectory = m_dir->filePath(QStringLiteral("console"));
    options.userId = QStringLiteral("u-1001");
    options.tenantId = QStringLiteral("t-acme");
    AgentRuntime runtime(options);
    QSignalSpy ready(&runtime, &AgentRuntime::ready);
    runtime.start();
    QVERIFY(ready.wait(20'000));
    QVERIFY(runtime.audit()->isAvailable());

    QJsonObject arguments = kTicketArguments;
    arguments.insert(QStringLiteral("description"),
                     QStringLiteral("customer pasted %1 and password=hunter2 and "
                                    "sk-abcdefgh12345678")
                         .arg(QString::fromLatin1(key)));
    ScriptedModel model;
    model.script = {toolCalls(
        {{QStringLiteral("c1"), QStringLiteral("createTicket"), compact(arguments)}})};
    AgentLoop *loop = runtime.agentLoop();
    loop->setModel(&model);
    connect(loop, &AgentLoop::confirmationRequested, this,
            [loop](const QString &, const ToolCallRecord &write) {
                loop->confirm(write.operationId, true);
            });
    QSignalSpy appended(runtime.audit(), &WriteAudit::appended);
    const TurnResult turn = ask(*loop);
    QVERIFY2(turn.toolCalls[0].result.success,
             qPrintable(turn.toolCalls[0].result.message));
    const QString ticketId =
        turn.toolCalls[0].result.data.toObject().value(u"ticketId").toString();
    QVERIFY(ticketId.startsWith(QLatin1String("T-")));
    QCOMPARE(appended.size(), 1);

    const AuditPage page = await(runtime.audit()->read({}));
    QVERIFY(page.ok());
    QCOMPARE(lines(page.rows), QStringList({"OUTCOME SUCCEEDED " + ticketId + " backend",
                                            "CONFIRMED"}));
    for (const AuditEntry &row : page.rows) {
        QCOMPARE(row.staffId, QStringLiteral("u-1001"));
        QCOMPARE(row.tenantId, QStringLiteral("t-acme"));
        const QString stored = compact(row.arguments);
        QVERIFY2(!stored.contains(QString::fromLatin1(key)), qPrintable(stored));
        QVERIFY2(!stored.contains(QLatin1String("hunter2")), qPrintable(stored));
        QVERIFY2(!stored.contains(QLatin1String("sk-abcdefgh")), qPrintable(stored));
        QVERIFY2(stored.contains(QLatin1String("[redacted]")), qPrintable(stored));
        QCOMPARE(row.arguments.value(u"orderId").toString(), QStringLiteral("A1001"));
    }
    // The service's filters: the order, the staff member, today.
    QCOMPARE(await(runtime.audit()->read({QStringLiteral(" A1001 "), {}, {}})).rows.size(), 2);
    QCOMPARE(await(runtime.audit()->read({QStringLiteral("A1002"), {}, {}})).rows.size(), 0);
    QCOMPARE(await(runtime.audit()->read({{}, QStringLiteral("u-1002"), {}})).rows.size(), 0);
    QCOMPARE(await(runtime.audit()->read({{}, {}, QDate::currentDate()})).rows.size(), 2);
    QCOMPARE(await(runtime.audit()->read({{}, {}, QDate::currentDate().addDays(-1)})).rows.size(),
             0);
    const AuditPage ofTurn = await(runtime.audit()->rowsOfTurns({turn}));
    QCOMPARE(ofTurn.rows.size(), 2);
}

QTEST_GUILESS_MAIN(tst_WriteAudit)
#include "tst_writeaudit.moc"
