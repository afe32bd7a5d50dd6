// Turn checkpoints and resumption inside one process: what is on disk at each stage, and what
// a resumed turn runs again (nothing with a stored result) and how it recovers its writes.
// The crash-injection suite (tst_crashinjection) kills real processes at these points.
#include "agentdoubles.h"
#include "core/agent/agentloop.h"
#include "core/agent/turncheckpoint.h"
#include "core/ledger/idempotencyledger.h"
#include "core/ledger/requesthash.h"
#include "core/ledger/turnjournal.h"
#include "core/resilience/toolexecutor.h"
#include "core/tools/toolregistry.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include <atomic>

using namespace AgentConsole;
using namespace AgentConsole::Testing;

namespace {

// A read tool that counts how often its body ran.
class CountingReadTool final : public SupportTool
{
public:
    mutable std::atomic<int> runs{0};

    ToolDescriptor descriptor() const override
    {
        return {QStringLiteral("queryOrderStatus"), QStringLiteral("reads an order"),
                QJsonObject{{QStringLiteral("type"), QStringLiteral("object")}}, false};
    }
    std::optional<ToolResult> precheck(const QJsonObject &, const TrustedContext &) const override
    {
        return std::nullopt;
    }
    AttemptResult attempt(const QJsonObject &, const TrustedContext &,
                          const AttemptContext &) const override
    {
        ++runs;
        return AttemptResult::completed(ToolResult::ok(QStringLiteral("read live"), {}));
    }
};

// A write whose backend never answers until the attempt is cancelled.
class StalledWriteTool final : public SupportTool
{
public:
    ToolDescriptor descriptor() const override
    {
        return {QStringLiteral("createTicket"), QStringLiteral("stalls"),
                QJsonObject{{QStringLiteral("type"), QStringLiteral("object")}}, true};
    }
    std::optional<ToolResult> precheck(const QJsonObject &, const TrustedContext &) const override
    {
        return std::nullopt;
    }
    AttemptResult attempt(const QJsonObject &, const TrustedContext &,
                          const AttemptContext &context) const override
    {
        context.cancellation.waitForCancellation(std::chrono::seconds(30));
        return AttemptResult::transient(QStringLiteral("cancelled"));
    }
};

template<typename T>
T await(QFuture<T> future)
{
    future.waitForFinished(); // a database thread of the test's own; nothing else waits here
    return future.result();
}

const QString kQuestion = QStringLiteral("Is A1001 shipped? Open a ticket for it.");
const QJsonObject kReadArguments{{QStringLiteral("orderId"), QStringLiteral("A1001")}};
const QJsonObject kWriteArguments{{QStringLiteral("orderId"), QStringLiteral("A1001")},
                                  {QStringLiteral("category"), QStringLiteral("DAMAGED")}};

ChatResponse answer(const QString &text)
{
    ChatResponse response;
    response.content = text;
    return response;
}

QString compact(const QJsonObject &object)
{
    return QString::fromUtf8(QJsonDocument(object).toJson(QJsonDocument::Compact));
}

// What a console killed while the write of a two-tool plan was running leaves on disk.
TurnCheckpoint interruptedWhileWriting(bool writeConfirmed)
{
    TurnCheckpoint checkpoint;
    checkpoint.stage = TurnStage::Planned;
    checkpoint.userId = QStringLiteral("u-1");
    checkpoint.tenantId = QStringLiteral("t-1");
    checkpoint.conversationId = QStringLiteral("c-1");
    const QList<ModelToolCall> plan{
        {QStringLiteral("call-a"), QStringLiteral("queryOrderStatus"), compact(kReadArguments)},
        {QStringLiteral("call-b"), QStringLiteral("createTicket"), compact(kWriteArguments)}};
    checkpoint.conversation = {ChatMessage::user(kQuestion), ChatMessage::assistant({}, plan)};
    checkpoint.result.requestId = QStringLiteral("r-1");
    checkpoint.result.question = kQuestion;
    checkpoint.result.toolRounds = 1;
    checkpoint.result.modelCalls = 1;
    checkpoint.result.modelAttempts = 1;
    for (int i = 0; i < 2; ++i) {
        ToolCallRecord call;
        call.index = i;
        call.toolCallId = plan[i].id;
        call.name = plan[i].name;
        call.rawArguments = plan[i].arguments;
        call.arguments = i == 0 ? kReadArguments : kWriteArguments;
        call.operationId = QStringLiteral("t-1:c-1:r-1:%1:%2").arg(call.name).arg(i);
        checkpoint.result.toolCalls.append(call);
    }
    ToolCallRecord &read = checkpoint.result.toolCalls[0];
    read.state = ToolCallRecord::State::Finished;
    read.result = ToolResult::ok(QStringLiteral("read before the crash"), {});
    read.attempts = {{1, 0, 12, AttemptOutcome::Succeeded, -1}};
    checkpoint.result.toolCalls[1].confirmed = writeConfirmed;
    return checkpoint;
}

} // namespace

class tst_TurnRecovery : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void init();
    void cleanup();

    void checkpointsSurviveARoundTrip();
    void aDamagedCheckpointIsReportedNotResumed();
    void thePlanIsOnDiskBeforeAnyToolRuns();
    void aResumedTurnRunsOnlyWhatHasNoResult();
    void anUnconfirmedWriteIsOfferedAgain();
    void aFailedAnswerIsRetriedFromStoredResults();
    void aWriteStoppedInFlightBecomesRetryable();
    void dismissedTurnsAreNotOffered();

private:
    std::unique_ptr<AgentLoop> makeLoop(ChatModel *model);

    std::unique_ptr<QTemporaryDir> m_dir;
    std::unique_ptr<TurnJournal> m_journal;
    std::unique_ptr<IdempotencyLedger> m_ledger;
    std::shared_ptr<CountingReadTool> m_read;
    std::shared_ptr<RecordingWriteTool> m_write;
    std::unique_ptr<ToolRegistry> m_registry;
    std::unique_ptr<ToolExecutor> m_executor;
};

void tst_TurnRecovery::init()
{
    m_dir = std::make_unique<QTemporaryDir>();
    QVERIFY(m_dir->isValid());
    m_journal = std::make_unique<TurnJournal>(m_dir->filePath(QStringLiteral("turns.sqlite")));
    QVERIFY(await(m_journal->open()).ok);
    m_ledger = openTestLedger(m_dir->path());
    m_read = std::make_shared<CountingReadTool>();
    m_write = std::make_shared<RecordingWriteTool>();
    m_registry = std::make_unique<ToolRegistry>();
    m_registry->add(m_read);
    m_registry->add(m_write);
    m_executor = std::make_unique<ToolExecutor>();
}

void tst_TurnRecovery::cleanup()
{
    m_executor.reset();
    m_registry.reset();
    m_ledger.reset();
    m_journal.reset();
    m_dir.reset();
}

std::unique_ptr<AgentLoop> tst_TurnRecovery::makeLoop(ChatModel *model)
{
    auto loop = std::make_unique<AgentLoop>(model, m_registry.get(), m_executor.get());
    loop->setLedger(m_ledger.get());
    loop->setJournal(m_journal.get());
    loop->setSession({QStringLiteral("u-1"), QStringLiteral("t-1"), QStringLiteral("c-1")});
    return loop;
}

void tst_TurnRecovery::checkpointsSurviveARoundTrip()
{
    TurnCheckpoint original = interruptedWhileWriting(true);
    original.language = Language::Chinese;
    original.result.idempotencyHits = 2;
    original.result.restarts = 3;
    QVERIFY(await(m_journal->save(original.toEntry())).ok);
    const auto entry = await(m_journal->entry(QStringLiteral("r-1")));
    QVERIFY(entry);
    QCOMPARE(entry->stage, QStringLiteral("PLANNED"));
    QVERIFY(entry->resumable);
    QCOMPARE(entry->counters.value(QLatin1String("agent_restart_count")).toInt(), 3);

    QString error;
    const auto back = TurnCheckpoint::fromEntry(*entry, &error);
    QVERIFY2(back, qPrintable(error));
    QCOMPARE(back->stage, TurnStage::Planned);
    QCOMPARE(back->language, Language::Chinese);
    QCOMPARE(back->conversationId, QStringLiteral("c-1"));
    QCOMPARE(back->conversation.size(), 2);
    QCOMPARE(back->conversation[1].toolCalls.size(), 2);
    QCOMPARE(back->conversation[1].toolCalls[1].arguments, compact(kWriteArguments));
    QCOMPARE(back->result.idempotencyHits, 2);
    QCOMPARE(back->result.restarts, 3);
    const ToolCallRecord &read = back->result.toolCalls[0];
    QCOMPARE(read.state, ToolCallRecord::State::Finished);
    QCOMPARE(read.result, original.result.toolCalls[0].result);
    QCOMPARE(read.attempts, original.result.toolCalls[0].attempts);
    const ToolCallRecord &write = back->result.toolCalls[1];
    QCOMPARE(write.state, ToolCallRecord::State::Pending);
    QVERIFY(write.confirmed);
    QCOMPARE(write.operationId, QStringLiteral("t-1:c-1:r-1:createTicket:1"));
    QCOMPARE(write.arguments, kWriteArguments);
}

void tst_TurnRecovery::aDamagedCheckpointIsReportedNotResumed()
{
    JournalEntry entry = interruptedWhileWriting(true).toEntry();
    JournalEntry newer = entry;
    newer.state.insert(QStringLiteral("format"), 99);
    QString error;
    QVERIFY(!TurnCheckpoint::fromEntry(newer, &error));
    QVERIFY2(error.contains(QLatin1String("r-1")) && error.contains(QLatin1String("format")),
             qPrintable(error));

    JournalEntry badStage = entry;
    badStage.stage = QStringLiteral("HALFWAY");
    QVERIFY(!TurnCheckpoint::fromEntry(badStage, &error));
    QVERIFY(error.contains(QLatin1String("HALFWAY")));

    JournalEntry badPlan = entry;
    QJsonArray calls = badPlan.state.value(QLatin1String("toolCalls")).toArray();
    calls.removeFirst();
    badPlan.state.insert(QStringLiteral("toolCalls"), calls);
    QVERIFY(!TurnCheckpoint::fromEntry(badPlan, &error));
    QVERIFY(error.contains(QLatin1String("plan")));
}

void tst_TurnRecovery::thePlanIsOnDiskBeforeAnyToolRuns()
{
    ScriptedModel model;
    model.script = {toolCalls({{QStringLiteral("call-a"), QStringLiteral("queryOrderStatus"),
                                compact(kReadArguments)}})};
    const auto loop = makeLoop(&model);
    QStringList stagesWhenToolsStarted;
    QStringList operationIdsOnDisk;
    connect(loop.get(), &AgentLoop::toolCallStarted, this,
            [&](const QString &requestId, const ToolCallRecord &) {
        const auto entry = await(m_journal->entry(requestId));
        stagesWhenToolsStarted.append(entry ? entry->stage : QStringLiteral("none"));
        if (entry) {
            for (const QJsonValue &call : entry->state.value(QLatin1String("toolCalls")).toArray())
                operationIdsOnDisk.append(
                    call.toObject().value(QLatin1String("operationId")).toString());
        }
    });
    QSignalSpy finished(loop.get(), &AgentLoop::turnFinished);
    const QString requestId = loop->ask(QStringLiteral("Is A1001 shipped?"));
    QVERIFY(finished.wait(5'000));
    const auto turn = finished.first().first().value<TurnResult>();
    QCOMPARE(turn.status, TurnStatus::Completed);
    QCOMPARE(stagesWhenToolsStarted, QStringList{QStringLiteral("PLANNED")});
    QCOMPARE(operationIdsOnDisk, QStringList{turn.toolCalls[0].operationId});

    const auto entry = await(m_journal->entry(requestId));
    QCOMPARE(entry->stage, QStringLiteral("COMPLETED"));
    QVERIFY(!entry->resumable);
    QCOMPARE(entry->state.value(QLatin1String("answer")).toString(), QStringLiteral("done"));
    QCOMPARE(entry->counters.value(QLatin1String("agent_restart_count")).toInt(), 0);
    QVERIFY(await(m_journal->resumable()).isEmpty());
    QCOMPARE(m_read->runs.load(), 1);
}

void tst_TurnRecovery::aResumedTurnRunsOnlyWhatHasNoResult()
{
    const TurnCheckpoint checkpoint = interruptedWhileWriting(true);
    // The interrupted run had claimed the write: its row is an orphan PROCESSING row.
    const QString writeOperation = checkpoint.result.toolCalls[1].operationId;
    QCOMPARE(await(m_ledger->begin(writeOperation, QStringLiteral("createTicket"),
                                   requestHash(kWriteArguments))).outcome,
             LedgerClaim::Outcome::Claimed);

    ScriptedModel model;
    model.script = {answer(QStringLiteral("Both done."))};
    const auto loop = makeLoop(&model);
    QSignalSpy resumed(loop.get(), &AgentLoop::turnResumed);
    QSignalSpy finished(loop.get(), &AgentLoop::turnFinished);
    QVERIFY(loop->resume(checkpoint));
    QVERIFY(!loop->resume(checkpoint)); // one turn at a time
    QVERIFY(finished.wait(5'000));
    QCOMPARE(resumed.size(), 1);
    QCOMPARE(resumed.first().at(1).toString(), QStringLiteral("PLANNED"));

    const auto turn = finished.first().first().value<TurnResult>();
    QCOMPARE(turn.status, TurnStatus::Completed);
    QCOMPARE(turn.requestId, QStringLiteral("r-1"));
    QCOMPARE(turn.restarts, 1);
    QCOMPARE(turn.answer, QStringLiteral("Both done."));
    // The read's stored result stands; the write ran once, told to ask the backend first.
    QCOMPARE(m_read->runs.load(), 0);
    QCOMPARE(turn.toolCalls[0].result.message, QStringLiteral("read before the crash"));
    QCOMPARE(m_write->runs.load(), 1);
    QCOMPARE(m_write->runsThatMayRepeat.load(), 1);
    QVERIFY(turn.toolCalls[1].result.success);
    QCOMPARE(await(m_ledger->lookup(writeOperation)).row->status, LedgerStatus::Succeeded);
    // The answer was written from both results, in the resumed conversation.
    QCOMPARE(model.requests.size(), 1);
    const QList<ChatMessage> &seen = model.requests.first().messages;
    QCOMPARE(seen.size(), 5); // system, user, assistant with the plan, two results
    QCOMPARE(seen[3].toolCallId, QStringLiteral("call-a"));
    QVERIFY(seen[3].content.contains(QLatin1String("read before the crash")));
    QCOMPARE(seen[4].toolCallId, QStringLiteral("call-b"));
    QCOMPARE(loop->session().conversationId, QStringLiteral("c-1"));

    const auto entry = await(m_journal->entry(QStringLiteral("r-1")));
    QCOMPARE(entry->stage, QStringLiteral("COMPLETED"));
    QCOMPARE(entry->counters.value(QLatin1String("agent_restart_count")).toInt(), 1);
    QCOMPARE(await(m_journal->counterTotals())
                 .value(QLatin1String("agent_restart_count")).toInt(), 1);
}

void tst_TurnRecovery::anUnconfirmedWriteIsOfferedAgain()
{
    ScriptedModel model;
    const auto loop = makeLoop(&model);
    QSignalSpy asked(loop.get(), &AgentLoop::confirmationRequested);
    QSignalSpy finished(loop.get(), &AgentLoop::turnFinished);
    QVERIFY(loop->resume(interruptedWhileWriting(false)));
    QVERIFY(asked.wait(5'000));
    const auto pending = asked.first().at(1).value<ToolCallRecord>();
    QCOMPARE(pending.arguments, kWriteArguments);
    QCOMPARE(m_write->runs.load(), 0);
    // The approval reaches the disk before the write is claimed.
    loop->confirm(pending.operationId, true);
    QVERIFY(finished.wait(5'000));
    QCOMPARE(m_write->runs.load(), 1);
    QCOMPARE(m_write->runsThatMayRepeat.load(), 0); // never claimed before: nothing to ask
    QCOMPARE(m_read->runs.load(), 0);
}

void tst_TurnRecovery::aFailedAnswerIsRetriedFromStoredResults()
{
    ScriptedModel failing;
    ChatResponse down;
    down.finishReason = FinishReason::Error;
    down.errorCode = ModelError::Unavailable;
    failing.script = {toolCalls({{QStringLiteral("call-b"), QStringLiteral("createTicket"),
                                  compact(kWriteArguments)}}),
                      down};
    QString requestId;
    {
        const auto loop = makeLoop(&failing);
        QSignalSpy asked(loop.get(), &AgentLoop::confirmationRequested);
        QSignalSpy finished(loop.get(), &AgentLoop::turnFinished);
        requestId = loop->ask(kQuestion);
        QVERIFY(asked.wait(5'000));
        loop->confirm(asked.first().at(1).value<ToolCallRecord>().operationId, true);
        QVERIFY(finished.wait(5'000));
        QCOMPARE(finished.first().first().value<TurnResult>().status, TurnStatus::Failed);
    }
    QCOMPARE(m_write->runs.load(), 1);

    const QList<JournalEntry> offered = await(m_journal->resumable());
    QCOMPARE(offered.size(), 1);
    QCOMPARE(offered.first().stage, QStringLiteral("FAILED"));
    QString error;
    const auto checkpoint = TurnCheckpoint::fromEntry(offered.first(), &error);
    QVERIFY2(checkpoint, qPrintable(error));
    QVERIFY(checkpoint->answerFailed);

    ScriptedModel working;
    working.script = {answer(QStringLiteral("Ticket created."))};
    const auto loop = makeLoop(&working);
    QSignalSpy finished(loop.get(), &AgentLoop::turnFinished);
    QVERIFY(loop->resume(*checkpoint));
    QVERIFY(finished.wait(5'000));
    const auto turn = finished.first().first().value<TurnResult>();
    QCOMPARE(turn.status, TurnStatus::Completed);
    QCOMPARE(turn.answer, QStringLiteral("Ticket created."));
    QCOMPARE(turn.restarts, 1);
    QCOMPARE(m_write->runs.load(), 1); // the stored result, not a second write
    QCOMPARE(turn.idempotencyHits, 0); // not even asked of the ledger
    QCOMPARE(working.requests.size(), 1);
    QCOMPARE(working.requests.first().messages.last().role, ChatMessage::Role::Tool);
    QVERIFY(await(m_journal->resumable()).isEmpty());
}

void tst_TurnRecovery::aWriteStoppedInFlightBecomesRetryable()
{
    ToolRegistry registry;
    registry.add(std::make_shared<StalledWriteTool>());
    ScriptedModel model;
    model.script = {toolCalls({{QStringLiteral("call-b"), QStringLiteral("createTicket"),
                                compact(kWriteArguments)}})};
    AgentLoop loop(&model, &registry, m_executor.get());
    loop.setLedger(m_ledger.get());
    loop.setJournal(m_journal.get());
    loop.setSession({QStringLiteral("u-1"), QStringLiteral("t-1"), QStringLiteral("c-1")});
    QSignalSpy asked(&loop, &AgentLoop::confirmationRequested);
    QSignalSpy finished(&loop, &AgentLoop::turnFinished);
    loop.ask(kQuestion);
    QVERIFY(asked.wait(5'000));
    const QString operationId = asked.first().at(1).value<ToolCallRecord>().operationId;
    loop.confirm(operationId, true);
    QTRY_COMPARE_WITH_TIMEOUT(m_executor->activeCalls(), 1, 5'000); // the write is in flight
    loop.cancel();
    QVERIFY(finished.wait(5'000));

    // Not PROCESSING forever, not a failure: whoever claims it next asks the backend first.
    QTRY_VERIFY_WITH_TIMEOUT(await(m_ledger->lookup(operationId)).row->status
                                 == LedgerStatus::FailedRetryable,
                             5'000);
    const LedgerClaim next = await(m_ledger->begin(operationId, QStringLiteral("createTicket"),
                                                   requestHash(kWriteArguments)));
    QCOMPARE(next.outcome, LedgerClaim::Outcome::Claimed);
    QVERIFY(next.mayHaveRun);
    QTRY_COMPARE_WITH_TIMEOUT(m_executor->activeCalls(), 0, 5'000);
}

void tst_TurnRecovery::dismissedTurnsAreNotOffered()
{
    QVERIFY(await(m_journal->save(interruptedWhileWriting(true).toEntry())).ok);
    QCOMPARE(await(m_journal->resumable()).size(), 1);
    QVERIFY(await(m_journal->dismiss(QStringLiteral("r-1"))).ok);
    QVERIFY(await(m_journal->resumable()).isEmpty());
    const auto kept = await(m_journal->entry(QStringLiteral("r-1")));
    QVERIFY(kept); // dismissed, not deleted
    QCOMPARE(kept->stage, QStringLiteral("PLANNED"));
}

QTEST_GUILESS_MAIN(tst_TurnRecovery)
#include "tst_turnrecovery.moc"
