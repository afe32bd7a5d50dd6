// Turn checkpoints and resumption inside one process: what is on disk at each stage, and what
// a resumed turn runs again (nothing with a stored result) and how it recovers its writes.
// The crash-injection suite (tst_crashinjection) kills real processes at these points.
#include "agentdoubles.h"
#include "journalfixtures.h"
#include "core/history/conversationhistory.h"
#include "core/turn/agentloop.h"
#include "core/turn/interruptedturns.h"
#include "core/turn/turncheckpoint.h"
#include "core/ledger/idempotencyledger.h"
#include "core/ledger/requesthash.h"
#include "core/ledger/turnjournal.h"
#include "core/resilience/toolexecutor.h"
#include "core/tools/toolregistry.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QSignalSpy>
#include <QSqlDatabase>
#include <QSqlQuery>
#include <QTemporaryDir>
#include <QTest>

#include <atomic>

using namespace AgentConsole;
using namespace AgentConsole::Testing;

namespace {

// A read of an order that answers at once.
std::shared_ptr<FunctionTool> countingReadTool()
{
    return std::make_shared<FunctionTool>(
        QStringLiteral("queryOrderStatus"), false, [](const AttemptContext &) {
            return AttemptResult::completed(ToolResult::ok(QStringLiteral("read live"), {}));
        });
}

// A write whose backend never answers until the attempt is cancelled.
std::shared_ptr<FunctionTool> stalledWriteTool()
{
    return std::make_shared<FunctionTool>(
        QStringLiteral("createTicket"), true, [](const AttemptContext &context) {
            context.cancellation.waitForCancellation(std::chrono::seconds(30));
            return AttemptResult::transient(QStringLiteral("cancelled"));
        });
}

// Plans with the script, then never answers: a model that hangs while writing the answer.
class StallingModel final : public ChatModel
{
public:
    QList<ChatResponse> script;

    QString modelName() const override { return QStringLiteral("stalling"); }
    ChatReply *complete(const ChatRequest &request) override
    {
        if (!script.isEmpty()) {
            ScriptedModel once;
            once.script = {script.takeFirst()};
            return once.complete(request);
        }
        return new StalledReply;
    }

private:
    class StalledReply final : public ChatReply
    {
    public:
        void abort() override
        {
            ChatResponse aborted;
            aborted.finishReason = FinishReason::Error;
            aborted.errorCode = ModelError::Cancelled;
            finishWith(aborted);
        }
    };
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
    void anAbandonedTurnReleasesItsWriteUnderWay();
    void aClaimArrivingAfterCancelIsReleased();
    void aLaterRoundResumesWithTheEarlierOnesKept();
    void aPlanThatCannotBeSavedRunsNothing();
    void turnsOfTwoConversationsMayShareARequestId();
    void theStaffMembersConversationComesBackAfterAResume();
    void aTurnCancelledFromItsFirstSignalLeavesNothingToResume();
    void aDeadlineDuringTheAnswerLeavesItResumable();
    void aToolResultIsAppendedAndAssembledOnRead();
    void aToolResultCheckpointCostsTheSameWhateverTheTurnHolds();
    void aVersionOneJournalStillLoadsAndResumes();
    void anEditedRowThatIsNotJsonIsDamaged();
    void aTurnOfAnotherSessionIsNotResumed();
    void aLongConversationsTurnsStoreOnlyWhatTheyAdd();
    void failedResumedAndLaterTurnsReadBackWhatTheLoopHeld();
    void aTurnInterruptedBeforeTheMigrationIsCarriedOn();
    void aReopenedConversationGoesOnWithoutStoringItAgain();

private:
    std::unique_ptr<AgentLoop> makeLoop(ChatModel *model);

    std::unique_ptr<QTemporaryDir> m_dir;
    std::unique_ptr<TurnJournal> m_journal;
    std::unique_ptr<IdempotencyLedger> m_ledger;
    std::shared_ptr<FunctionTool> m_read;
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
    m_read = countingReadTool();
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
    auto loop = std::make_unique<AgentLoop>(AgentLoop::Dependencies{
        .model = model,
        .tools = m_registry.get(),
        .executor = m_executor.get(),
        .ledger = m_ledger.get(),
        .journal = m_journal.get(),
    });
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
    const auto entry = await(m_journal->entry(QStringLiteral("c-1"), QStringLiteral("r-1")));
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
        const auto entry = await(m_journal->entry(QStringLiteral("c-1"), requestId));
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

    const auto entry = await(m_journal->entry(QStringLiteral("c-1"), requestId));
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

    const auto entry = await(m_journal->entry(QStringLiteral("c-1"), QStringLiteral("r-1")));
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
    registry.add(stalledWriteTool());
    ScriptedModel model;
    model.script = {toolCalls({{QStringLiteral("call-b"), QStringLiteral("createTicket"),
                                compact(kWriteArguments)}})};
    AgentLoop loop({.model = &model,
                    .tools = &registry,
                    .executor = m_executor.get(),
                    .ledger = m_ledger.get(),
                    .journal = m_journal.get()});
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
    QVERIFY(await(m_journal->dismiss(QStringLiteral("c-1"), QStringLiteral("r-1"))).ok);
    QVERIFY(await(m_journal->resumable()).isEmpty());
    const auto kept = await(m_journal->entry(QStringLiteral("c-1"), QStringLiteral("r-1")));
    QVERIFY(kept); // dismissed, not deleted
    QCOMPARE(kept->stage, QStringLiteral("PLANNED"));
}

// The staff member cancels while the ledger is still answering the claim: the claim arrives
// for a turn that is over, and must not leave the row PROCESSING for ever.
void tst_TurnRecovery::aClaimArrivingAfterCancelIsReleased()
{
    ScriptedModel model;
    model.script = {toolCalls({{QStringLiteral("call-b"), QStringLiteral("createTicket"),
                                compact(kWriteArguments)}})};
    // No journal: the claim is asked at once on confirm().
    AgentLoop loop({.model = &model,
                    .tools = m_registry.get(),
                    .executor = m_executor.get(),
                    .ledger = m_ledger.get()});
    loop.setSession({QStringLiteral("u-1"), QStringLiteral("t-1"), QStringLiteral("c-1")});
    QSignalSpy asked(&loop, &AgentLoop::confirmationRequested);
    QSignalSpy finished(&loop, &AgentLoop::turnFinished);
    loop.ask(kQuestion);
    QVERIFY(asked.wait(5'000));
    const QString operationId = asked.first().at(1).value<ToolCallRecord>().operationId;
    loop.confirm(operationId, true);
    loop.cancel(); // before the ledger's answer can arrive
    QCOMPARE(finished.size(), 1);
    QCOMPARE(finished.first().first().value<TurnResult>().toolCalls[0].result.code,
             ResultCode::Cancelled); // nothing was sent
    QTRY_VERIFY_WITH_TIMEOUT(await(m_ledger->lookup(operationId)).row
                                 && await(m_ledger->lookup(operationId)).row->status
                                     == LedgerStatus::FailedRetryable,
                             5'000);
    QCOMPARE(m_write->runs.load(), 0);
    const LedgerClaim next = await(m_ledger->begin(operationId, QStringLiteral("createTicket"),
                                                   requestHash(kWriteArguments)));
    QCOMPARE(next.outcome, LedgerClaim::Outcome::Claimed);
}

void tst_TurnRecovery::aLaterRoundResumesWithTheEarlierOnesKept()
{
    // Round 1 read the order; round 2 was planned (a second read) when the process died.
    TurnCheckpoint checkpoint = interruptedWhileWriting(true);
    checkpoint.result.toolCalls.removeLast();
    const ModelToolCall second{QStringLiteral("call-c"), QStringLiteral("queryOrderStatus"),
                               compact(kReadArguments)};
    checkpoint.conversation.last().toolCalls.removeLast();
    checkpoint.conversation.append(ChatMessage::toolResult(
        QStringLiteral("call-a"), QStringLiteral("queryOrderStatus"),
        compact(checkpoint.result.toolCalls[0].result.toJson())));
    checkpoint.conversation.append(ChatMessage::assistant({}, {second}));
    ToolCallRecord call;
    call.index = 1;
    call.round = 2;
    call.toolCallId = second.id;
    call.name = second.name;
    call.rawArguments = second.arguments;
    call.arguments = kReadArguments;
    call.operationId = QStringLiteral("t-1:c-1:r-1:queryOrderStatus:1");
    checkpoint.result.toolCalls.append(call);
    checkpoint.result.toolRounds = 2;
    checkpoint.result.modelCalls = 2;

    ScriptedModel model;
    model.script = {answer(QStringLiteral("Two reads."))};
    const auto loop = makeLoop(&model);
    QSignalSpy cards(loop.get(), &AgentLoop::toolCallStarted);
    QSignalSpy finished(loop.get(), &AgentLoop::turnFinished);
    QVERIFY(loop->resume(checkpoint));
    QVERIFY(finished.wait(5'000));
    const auto turn = finished.first().first().value<TurnResult>();
    QCOMPARE(turn.status, TurnStatus::Completed);
    QCOMPARE(m_read->runs.load(), 1); // round 2 only
    QCOMPARE(turn.toolCalls[0].result.message, QStringLiteral("read before the crash"));
    QCOMPARE(turn.toolCalls[1].result.message, QStringLiteral("read live"));
    QCOMPARE(cards.size(), 2); // the stored round-1 card, then the round-2 call
    QCOMPARE(cards[0].at(1).value<ToolCallRecord>().round, 1);
    const QList<ChatMessage> &seen = model.requests.first().messages;
    QCOMPARE(seen.size(), 6); // system, user, plan 1, result 1, plan 2, result 2
    QCOMPARE(seen[5].toolCallId, QStringLiteral("call-c"));
}

void tst_TurnRecovery::aPlanThatCannotBeSavedRunsNothing()
{
    // Someone else's hand on the file: the journal can no longer write.
    {
        QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"),
                                                    QStringLiteral("vandal"));
        db.setDatabaseName(m_dir->filePath(QStringLiteral("turns.sqlite")));
        QVERIFY(db.open());
        QVERIFY(QSqlQuery(db).exec(QStringLiteral("DROP TABLE turn_checkpoints")));
        db.close();
    }
    QSqlDatabase::removeDatabase(QStringLiteral("vandal"));
    ScriptedModel model;
    model.script = {toolCalls({{QStringLiteral("call-a"), QStringLiteral("queryOrderStatus"),
                                compact(kReadArguments)}})};
    const auto loop = makeLoop(&model);
    QSignalSpy finished(loop.get(), &AgentLoop::turnFinished);
    loop->ask(QStringLiteral("Is A1001 shipped?"));
    QVERIFY(finished.wait(5'000));
    const auto turn = finished.first().first().value<TurnResult>();
    QCOMPARE(turn.status, TurnStatus::Failed);
    QVERIFY(turn.answer.contains(QLatin1String("could not save")));
    QVERIFY(!turn.answer.contains(QLatin1String("turn_checkpoints"))); // no SQL for staff
    QCOMPARE(turn.toolCalls[0].result.code, ResultCode::ToolUnavailable);
    QCOMPARE(m_read->runs.load(), 0);
}

void tst_TurnRecovery::turnsOfTwoConversationsMayShareARequestId()
{
    TurnCheckpoint first = interruptedWhileWriting(true);
    TurnCheckpoint second = first;
    second.conversationId = QStringLiteral("c-2");
    second.result.question = QStringLiteral("another question");
    QVERIFY(await(m_journal->save(first.toEntry())).ok);
    QVERIFY(await(m_journal->save(second.toEntry())).ok);
    QCOMPARE(await(m_journal->resumable()).size(), 2);
    const auto one = await(m_journal->entry(QStringLiteral("c-1"), QStringLiteral("r-1")));
    const auto two = await(m_journal->entry(QStringLiteral("c-2"), QStringLiteral("r-1")));
    QCOMPARE(one->state.value(QLatin1String("question")).toString(), kQuestion);
    QCOMPARE(two->state.value(QLatin1String("question")).toString(),
             QStringLiteral("another question"));
}

void tst_TurnRecovery::theStaffMembersConversationComesBackAfterAResume()
{
    ScriptedModel model;
    model.script = {answer(QStringLiteral("first")), answer(QStringLiteral("resumed")),
                    answer(QStringLiteral("next"))};
    const auto loop = makeLoop(&model);
    loop->setSession({QStringLiteral("u-1"), QStringLiteral("t-1"), QStringLiteral("c-own")});
    QSignalSpy finished(loop.get(), &AgentLoop::turnFinished);
    loop->ask(QStringLiteral("my own question"));
    QVERIFY(finished.wait(5'000));
    TurnCheckpoint interrupted = interruptedWhileWriting(true);
    interrupted.result.toolCalls[1].state = ToolCallRecord::State::Finished;
    interrupted.result.toolCalls[1].result = ToolResult::ok(QStringLiteral("made"), {});
    interrupted.stage = TurnStage::ToolsExecuted;
    QVERIFY(loop->resume(interrupted));
    QVERIFY(finished.wait(5'000));
    QCOMPARE(model.requests[1].messages[1].content, kQuestion); // the resumed conversation
    QCOMPARE(loop->session().conversationId, QStringLiteral("c-own"));
    loop->ask(QStringLiteral("and now?"));
    QVERIFY(finished.wait(5'000));
    const QList<ChatMessage> &next = model.requests[2].messages;
    QCOMPARE(next[1].content, QStringLiteral("my own question"));
    QCOMPARE(next.last().content, QStringLiteral("and now?"));
    QCOMPARE(finished.last().first().value<TurnResult>().conversationId,
             QStringLiteral("c-own"));
}

void tst_TurnRecovery::aTurnCancelledFromItsFirstSignalLeavesNothingToResume()
{
    ScriptedModel model;
    const auto loop = makeLoop(&model);
    connect(loop.get(), &AgentLoop::turnStarted, loop.get(), [&] { loop->cancel(); });
    QSignalSpy finished(loop.get(), &AgentLoop::turnFinished);
    const QString requestId = loop->ask(QStringLiteral("Is A1001 shipped?"));
    QVERIFY(finished.wait(5'000));
    QCOMPARE(finished.first().first().value<TurnResult>().status, TurnStatus::Cancelled);
    QVERIFY(!finished.wait(200)); // and nothing else happens to it
    const auto entry = await(m_journal->entry(QStringLiteral("c-1"), requestId));
    QCOMPARE(entry->stage, QStringLiteral("FAILED"));
    QVERIFY(await(m_journal->resumable()).isEmpty());
    QCOMPARE(model.requests.size(), 0);
}

void tst_TurnRecovery::aDeadlineDuringTheAnswerLeavesItResumable()
{
    StallingModel model;
    model.script = {toolCalls({{QStringLiteral("call-a"), QStringLiteral("queryOrderStatus"),
                                compact(kReadArguments)}})};
    const auto loop = makeLoop(&model);
    loop->setTurnLimits({std::chrono::milliseconds(300), 8});
    QSignalSpy finished(loop.get(), &AgentLoop::turnFinished);
    loop->ask(QStringLiteral("Is A1001 shipped?"));
    QVERIFY(finished.wait(5'000));
    QCOMPARE(finished.first().first().value<TurnResult>().status, TurnStatus::Failed);
    QCOMPARE(m_read->runs.load(), 1);
    const QList<JournalEntry> offered = await(m_journal->resumable());
    QCOMPARE(offered.size(), 1); // the tools ran: only the answer is missing
    QString error;
    const auto checkpoint = TurnCheckpoint::fromEntry(offered.first(), &error);
    QVERIFY(checkpoint && checkpoint->answerFailed);
    QCOMPARE(checkpoint->conversation.last().role, ChatMessage::Role::Tool);
}

// Dismissing an interrupted turn must not leave its write "in progress" for ever: the row
// becomes retryable, and whoever asks again asks the backend first.
void tst_TurnRecovery::anAbandonedTurnReleasesItsWriteUnderWay()
{
    const TurnCheckpoint checkpoint = interruptedWhileWriting(true);
    const QString operationId = checkpoint.result.toolCalls[1].operationId;
    QCOMPARE(await(m_ledger->begin(operationId, QStringLiteral("createTicket"),
                                   requestHash(kWriteArguments))).outcome,
             LedgerClaim::Outcome::Claimed);
    ScriptedModel model;
    const auto loop = makeLoop(&model);
    loop->abandon(checkpoint);
    QTRY_VERIFY_WITH_TIMEOUT(await(m_ledger->lookup(operationId)).row->status
                                 == LedgerStatus::FailedRetryable,
                             5'000);
    const LedgerClaim next = await(m_ledger->begin(operationId, QStringLiteral("createTicket"),
                                                   requestHash(kWriteArguments)));
    QCOMPARE(next.outcome, LedgerClaim::Outcome::Claimed);
    QVERIFY(next.mayHaveRun);
    QCOMPARE(m_write->runs.load(), 0);
    QVERIFY(!loop->isBusy());
}

// A result that arrives is its own row; reading the turn puts it back in its call, and the
// next whole checkpoint takes it in (the row goes).
void tst_TurnRecovery::aToolResultIsAppendedAndAssembledOnRead()
{
    TurnCheckpoint planned = interruptedWhileWriting(true);
    planned.result.toolCalls[0].state = ToolCallRecord::State::Pending;
    QVERIFY(await(m_journal->save(planned.toEntry())).ok);
    TurnCheckpoint progressed = interruptedWhileWriting(true);
    const ToolCallRecord &read = progressed.result.toolCalls[0];
    const JournalWrite appended = await(m_journal->appendToolResult(
        QStringLiteral("c-1"), QStringLiteral("r-1"), 0, TurnCheckpoint::toolCallJson(read)));
    QVERIFY(appended.ok);
    QCOMPARE(appended.bytes, compact(TurnCheckpoint::toolCallJson(read)).toUtf8().size());

    auto entry = await(m_journal->entry(QStringLiteral("c-1"), QStringLiteral("r-1")));
    QVERIFY(entry);
    QCOMPARE(entry->appendedResults.keys(), QList<int>{0});
    QString error;
    auto back = TurnCheckpoint::fromEntry(*entry, &error);
    QVERIFY2(back, qPrintable(error));
    QCOMPARE(back->result.toolCalls[0].state, ToolCallRecord::State::Finished);
    QCOMPARE(back->result.toolCalls[0].result, read.result);
    QCOMPARE(back->result.toolCalls[0].attempts, read.attempts);
    QCOMPARE(back->result.toolCalls[1].state, ToolCallRecord::State::Pending);
    QCOMPARE(await(m_journal->resumable()).first().appendedResults.size(), 1);

    QVERIFY(await(m_journal->save(progressed.toEntry())).ok); // holds the result itself now
    entry = await(m_journal->entry(QStringLiteral("c-1"), QStringLiteral("r-1")));
    QVERIFY(entry->appendedResults.isEmpty());
    back = TurnCheckpoint::fromEntry(*entry, &error);
    QCOMPARE(back->result.toolCalls[0].result, read.result);

    // A result for a call the plan does not have is damage, not a new call.
    ToolCallRecord stray = read;
    stray.index = 7;
    QVERIFY(await(m_journal->appendToolResult(QStringLiteral("c-1"), QStringLiteral("r-1"), 7,
                                              TurnCheckpoint::toolCallJson(stray))).ok);
    entry = await(m_journal->entry(QStringLiteral("c-1"), QStringLiteral("r-1")));
    QVERIFY(!TurnCheckpoint::fromEntry(*entry, &error));
    QVERIFY2(error.contains(QLatin1String("no planned call")), qPrintable(error));
}

// Issue #8: every result used to re-save the whole turn and its conversation, so a turn's
// checkpoints cost its call count squared. Now the bytes stored per result are one record's,
// the same for a turn of 4 calls as for one of 16, and the whole-turn saves per turn do not
// grow with the calls.
void tst_TurnRecovery::aToolResultCheckpointCostsTheSameWhateverTheTurnHolds()
{
    struct Cost
    {
        qint64 appends = 0;
        qint64 bytesPerResult = 0;
        qint64 saves = 0;
    };
    const auto costOf = [&](int calls) {
        QList<ModelToolCall> plan;
        for (int i = 0; i < calls; ++i)
            plan.append({QStringLiteral("call-%1").arg(i, 2, 10, QLatin1Char('0')),
                         QStringLiteral("queryOrderStatus"), compact(kReadArguments)});
        ScriptedModel model;
        model.script = {toolCalls(plan), answer(QStringLiteral("done"))};
        const auto loop = makeLoop(&model);
        loop->setSession({QStringLiteral("u-1"), QStringLiteral("t-1"),
                          QStringLiteral("c-%1").arg(calls)});
        QSignalSpy finished(loop.get(), &AgentLoop::turnFinished);
        const JournalActivity before = m_journal->activity();
        loop->ask(QStringLiteral("Is A1001 shipped?"), QStringLiteral("r-cost"));
        [&] { QVERIFY(finished.wait(10'000)); }();
        // The last append's watcher may still be on its way: the journal's queue is ordered,
        // so one more read waits for it.
        await(m_journal->entry(QStringLiteral("c-x"), QStringLiteral("r-x")));
        const JournalActivity after = m_journal->activity();
        const TurnResult turn = finished.first().first().value<TurnResult>();
        [&] { QCOMPARE(turn.toolCalls.size(), calls); }();
        Cost cost;
        cost.appends = after.appends - before.appends;
        cost.bytesPerResult = cost.appends ? (after.appendedBytes - before.appendedBytes)
                / cost.appends : 0;
        cost.saves = after.saves - before.saves;
        return cost;
    };
    const Cost few = costOf(4);
    const Cost many = costOf(16);
    // The round's last result goes to disk with TOOLS_EXECUTED.
    QCOMPARE(few.appends, 3);
    QCOMPARE(many.appends, 15);
    QVERIFY(few.bytesPerResult > 0);
    // The records differ only in their index digits.
    QVERIFY2(many.bytesPerResult <= few.bytesPerResult + 8,
             qPrintable(QStringLiteral("%1 bytes per result at 16 calls, %2 at 4")
                            .arg(many.bytesPerResult).arg(few.bytesPerResult)));
    QCOMPARE(many.saves, few.saves);
    QCOMPARE(m_read->runs.load(), 20);
}

// A journal written before results had rows of their own (schema version 1) is brought to
// version 2 and its interrupted turn is carried on.
void tst_TurnRecovery::aVersionOneJournalStillLoadsAndResumes()
{
    m_journal.reset();
    const QString path = m_dir->filePath(QStringLiteral("v1-turns.sqlite"));
    const JournalEntry saved = interruptedWhileWriting(false).toEntry();
    {
        QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"),
                                                    QStringLiteral("v1"));
        db.setDatabaseName(path);
        QVERIFY(db.open());
        QSqlQuery query(db);
        QVERIFY(query.exec(QStringLiteral(
            "CREATE TABLE turn_checkpoints (conversation_id TEXT NOT NULL, "
            "request_id TEXT NOT NULL, stage TEXT NOT NULL, resumable INTEGER NOT NULL, "
            "state_json TEXT NOT NULL, counters_json TEXT NOT NULL, created_at TEXT NOT NULL, "
            "updated_at TEXT NOT NULL, PRIMARY KEY (conversation_id, request_id))")));
        QVERIFY(query.exec(QStringLiteral("CREATE INDEX turn_checkpoints_resumable "
                                          "ON turn_checkpoints (resumable, created_at)")));
        query.prepare(QStringLiteral("INSERT INTO turn_checkpoints VALUES "
                                     "(?, ?, ?, 1, ?, ?, '2026-01-01T00:00:00.000Z', "
                                     "'2026-01-01T00:00:00.000Z')"));
        query.addBindValue(saved.conversationId);
        query.addBindValue(saved.requestId);
        query.addBindValue(saved.stage);
        query.addBindValue(compact(saved.state));
        query.addBindValue(compact(saved.counters));
        QVERIFY(query.exec());
        QVERIFY(query.exec(QStringLiteral("PRAGMA user_version = 1")));
        db.close();
    }
    QSqlDatabase::removeDatabase(QStringLiteral("v1"));

    m_journal = std::make_unique<TurnJournal>(path);
    QVERIFY(await(m_journal->open()).ok);
    const QList<JournalEntry> offered = await(m_journal->resumable());
    QCOMPARE(offered.size(), 1);
    QString error;
    const auto checkpoint = TurnCheckpoint::fromEntry(offered.first(), &error);
    QVERIFY2(checkpoint, qPrintable(error));

    ScriptedModel model;
    model.script = {answer(QStringLiteral("resumed"))};
    const auto loop = makeLoop(&model);
    bool offeredAgain = false;
    connect(loop.get(), &AgentLoop::confirmationRequested, this,
            [&](const QString &, const ToolCallRecord &call) {
                offeredAgain = true;
                loop->confirm(call.operationId, false);
            });
    QSignalSpy finished(loop.get(), &AgentLoop::turnFinished);
    QVERIFY(loop->resume(*checkpoint));
    QVERIFY(finished.wait(5'000));
    QVERIFY(offeredAgain);
    QCOMPARE(m_read->runs.load(), 0); // its stored result is kept
    QCOMPARE(m_write->runs.load(), 0); // declined
    const auto entry = await(m_journal->entry(QStringLiteral("c-1"), QStringLiteral("r-1")));
    QCOMPARE(entry->stage, QStringLiteral("COMPLETED"));
}

// A row whose stored text is not JSON (edited, or damaged on disk) is not read as an empty
// turn: it is damaged, and says so.
void tst_TurnRecovery::anEditedRowThatIsNotJsonIsDamaged()
{
    QVERIFY(await(m_journal->save(interruptedWhileWriting(true).toEntry())).ok);
    {
        QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"),
                                                    QStringLiteral("editor"));
        db.setDatabaseName(m_journal->filePath());
        QVERIFY(db.open());
        QVERIFY(QSqlQuery(db).exec(QStringLiteral("UPDATE turn_checkpoints "
                                                  "SET state_json = '{\"format\": 1,'")));
        db.close();
    }
    QSqlDatabase::removeDatabase(QStringLiteral("editor"));
    const QList<JournalEntry> offered = await(m_journal->resumable());
    QCOMPARE(offered.size(), 1);
    QVERIFY(!offered.first().damage.isEmpty());
    QString error;
    QVERIFY(!TurnCheckpoint::fromEntry(offered.first(), &error));
    QVERIFY2(error.contains(QLatin1String("r-1")) && error.contains(QLatin1String("damaged")),
             qPrintable(error));
}

// The loop carries a checkpoint on only under the session it was saved in.
void tst_TurnRecovery::aTurnOfAnotherSessionIsNotResumed()
{
    ScriptedModel model;
    model.script = {answer(QStringLiteral("should not be asked"))};
    const auto loop = makeLoop(&model);
    QSignalSpy started(loop.get(), &AgentLoop::turnStarted);
    QSignalSpy cards(loop.get(), &AgentLoop::toolCallFinished);
    TurnCheckpoint otherTenant = interruptedWhileWriting(true);
    otherTenant.tenantId = QStringLiteral("t-2");
    QVERIFY(!loop->resume(otherTenant));
    TurnCheckpoint otherStaff = interruptedWhileWriting(true);
    otherStaff.userId = QStringLiteral("u-2");
    QVERIFY(!loop->resume(otherStaff));
    QVERIFY(!loop->isBusy());
    QCOMPARE(started.size(), 0);
    QCOMPARE(cards.size(), 0); // not even its stored results are shown
    QCOMPARE(model.requests.size(), 0);
    QCOMPARE(m_read->runs.load() + m_write->runs.load(), 0);
    // Its own session's turn is carried on.
    connect(loop.get(), &AgentLoop::confirmationRequested, this,
            [&](const QString &, const ToolCallRecord &call) {
                loop->confirm(call.operationId, false);
            });
    QSignalSpy finished(loop.get(), &AgentLoop::turnFinished);
    QVERIFY(loop->resume(interruptedWhileWriting(false)));
    QVERIFY(finished.wait(5'000));
    QCOMPARE(started.size(), 1);
}

// Waits until the journal has done what it was given so far (its queue is ordered): the last
// tool result's append of a turn may still be on its way when the turn is reported finished.
void drain(TurnJournal &journal)
{
    await(journal.entry(QStringLiteral("c-none"), QStringLiteral("r-none")));
}

// Issue #43 §1 through the loop: a turn's checkpoints cost the same at turn 30 as at turn 5
// (they stored the whole conversation again: six times as much), no turn stores the earlier
// ones' messages again, and the conversation read back is the one the loop holds.
void tst_TurnRecovery::aLongConversationsTurnsStoreOnlyWhatTheyAdd()
{
    constexpr int kTurns = 30;
    ScriptedModel model;
    for (int turn = 1; turn <= kTurns; ++turn) {
        model.script.append(
            toolCalls({{QStringLiteral("call-%1").arg(turn % 10),
                        QStringLiteral("queryOrderStatus"), compact(kReadArguments)}}));
        model.script.append(answer(QStringLiteral("A1001 is shipped (%1).").arg(turn % 10)));
    }
    const auto loop = makeLoop(&model);
    QSignalSpy finished(loop.get(), &AgentLoop::turnFinished);
    QList<qint64> bytes;
    for (int turn = 1; turn <= kTurns; ++turn) {
        const JournalActivity before = m_journal->activity();
        loop->ask(QStringLiteral("Is A1001 shipped? (%1)").arg(turn % 10),
                  QStringLiteral("r-%1").arg(turn, 2, 10, QLatin1Char('0')));
        QVERIFY(finished.wait(5'000));
        QCOMPARE(finished.last().first().value<TurnResult>().status, TurnStatus::Completed);
        drain(*m_journal);
        const JournalActivity after = m_journal->activity();
        bytes.append(after.savedBytes + after.appendedBytes - before.savedBytes
                     - before.appendedBytes);
    }
    QCOMPARE(m_journal->activity().earlierParts, qint64(0));
    QVERIFY2(bytes.last() * 10 <= bytes.at(4) * 11,
             qPrintable(QStringLiteral("turn 5: %1 bytes, turn %2: %3 bytes")
                            .arg(bytes.at(4))
                            .arg(kTurns)
                            .arg(bytes.last())));
    const auto entry = await(m_journal->entry(QStringLiteral("c-1"), QStringLiteral("r-30")));
    QVERIFY(entry);
    QString error;
    const auto stored = TurnCheckpoint::fromEntry(*entry, &error);
    QVERIFY2(stored, qPrintable(error));
    QCOMPARE(stored->conversation.size(), qsizetype(kTurns * 4));
    QVERIFY(stored->conversation == loop->conversationMessages());
}

// A turn whose answer failed is left out of the next one's conversation, is resumed later in
// its own conversation, and a turn after it goes on from it: each checkpoint reads back as the
// conversation the loop held at that moment, and none stored an earlier turn's messages again.
void tst_TurnRecovery::failedResumedAndLaterTurnsReadBackWhatTheLoopHeld()
{
    ChatResponse down;
    down.finishReason = FinishReason::Error;
    down.errorCode = ModelError::Unavailable;
    const auto lookup = [](const char *id) {
        return toolCalls(
            {{QLatin1String(id), QStringLiteral("queryOrderStatus"), compact(kReadArguments)}});
    };
    ScriptedModel model;
    model.script = {lookup("call-1"),
                    answer(QStringLiteral("first")),
                    lookup("call-2"),
                    down,
                    lookup("call-3"),
                    answer(QStringLiteral("third")),
                    answer(QStringLiteral("second, resumed")),
                    answer(QStringLiteral("fourth"))};
    const auto loop = makeLoop(&model);
    QSignalSpy finished(loop.get(), &AgentLoop::turnFinished);
    QHash<QString, QList<ChatMessage>> held; // what the loop held after each turn
    const auto askAndKeep = [&](const QString &requestId, TurnStatus status) {
        loop->ask(QStringLiteral("Is A1001 shipped?"), requestId);
        QVERIFY(finished.wait(5'000));
        QCOMPARE(finished.last().first().value<TurnResult>().status, status);
        held.insert(requestId, loop->conversationMessages());
    };
    askAndKeep(QStringLiteral("r-1"), TurnStatus::Completed);
    askAndKeep(QStringLiteral("r-2"), TurnStatus::Failed);
    QCOMPARE(held.value(QStringLiteral("r-2")), held.value(QStringLiteral("r-1")));
    askAndKeep(QStringLiteral("r-3"), TurnStatus::Completed);
    drain(*m_journal);
    const QList<JournalEntry> offered = await(m_journal->resumable());
    QCOMPARE(offered.size(), 1);
    QString error;
    const auto failed = TurnCheckpoint::fromEntry(offered.first(), &error);
    QVERIFY2(failed && failed->answerFailed, qPrintable(error));
    QVERIFY(loop->resume(*failed));
    QVERIFY(finished.wait(5'000));
    QCOMPARE(finished.last().first().value<TurnResult>().status, TurnStatus::Completed);
    // Its conversation is the staff member's own: the loop goes on from the resumed turn.
    const QList<ChatMessage> resumed = loop->conversationMessages();
    askAndKeep(QStringLiteral("r-4"), TurnStatus::Completed);
    drain(*m_journal);
    QCOMPARE(m_journal->activity().earlierParts, qint64(0));

    const auto conversationOf = [&](const char *requestId) {
        const auto entry = await(
            m_journal->entry(QStringLiteral("c-1"), QLatin1String(requestId)));
        QString why;
        const auto checkpoint = entry ? TurnCheckpoint::fromEntry(*entry, &why) : std::nullopt;
        return checkpoint ? checkpoint->conversation : QList<ChatMessage>();
    };
    QVERIFY(conversationOf("r-1") == held.value(QStringLiteral("r-1")));
    QCOMPARE(conversationOf("r-2").size(), held.value(QStringLiteral("r-1")).size() + 4);
    QVERIFY(conversationOf("r-2") == resumed);
    QVERIFY(conversationOf("r-3") == held.value(QStringLiteral("r-3")));
    QCOMPARE(conversationOf("r-3").size(), qsizetype(8)); // r-1's and its own, not r-2's
    QVERIFY(conversationOf("r-4") == held.value(QStringLiteral("r-4")));
    QVERIFY(conversationOf("r-4").mid(0, resumed.size()) == resumed);
}

// The console of journal schema 4 was killed in a turn (the fixture, tests/core/ledger/data/):
// this one migrates the journal at start, offers the same interrupted turns, carries one on
// from where it stopped, and the conversation goes on without its earlier turns stored again.
void tst_TurnRecovery::aTurnInterruptedBeforeTheMigrationIsCarriedOn()
{
    m_journal.reset();
    const QString path = m_dir->filePath(QStringLiteral("fixture-turns.sqlite"));
    QVERIFY(QFile::copy(QStringLiteral(JOURNAL_FIXTURE), path));
    QFile::setPermissions(path, QFile::ReadOwner | QFile::WriteOwner);
    m_journal = std::make_unique<TurnJournal>(path);
    QVERIFY(await(m_journal->open()).ok);
    const QString user = QStringLiteral("u-1001");
    const QString tenant = QStringLiteral("t-acme");
    InterruptedTurns interrupted;
    interrupted.sortOut(await(m_journal->resumable()), user, tenant);
    QVERIFY(interrupted.setAside().isEmpty());
    QCOMPARE(requestIds(interrupted.offered()),
             (QStringList{QStringLiteral("r-083ccd959727"), QStringLiteral("r-b5b4b3fc87e5")}));
    // Killed after its tools ran, in the second turn of c-fixture-2: only the answer is missing.
    const TurnCheckpoint &killed = interrupted.offered().first();
    QCOMPARE(killed.stage, TurnStage::ToolsExecuted);
    QCOMPARE(killed.turnStart, qsizetype(4));
    QCOMPARE(killed.conversation.first().content,
             QStringLiteral("What is the status of order A1005?"));
    QCOMPARE(killed.conversation.at(4).content,
             QStringLiteral("Where is order A1006 and is SKU-300 in stock?"));

    ScriptedModel model;
    model.script = {answer(QStringLiteral("A1006 is on its way; SKU-300 is in stock.")),
                    answer(QStringLiteral("You are welcome."))};
    const auto loop = makeLoop(&model);
    loop->setSession({user, tenant, killed.conversationId});
    QSignalSpy finished(loop.get(), &AgentLoop::turnFinished);
    QVERIFY(loop->resume(killed));
    QVERIFY(finished.wait(5'000));
    const auto turn = finished.last().first().value<TurnResult>();
    QCOMPARE(turn.status, TurnStatus::Completed);
    QCOMPARE(turn.restarts, 1);
    QCOMPARE(m_read->runs.load(), 0); // its results were stored
    QCOMPARE(model.requests.first().messages.size(), killed.conversation.size() + 1);
    loop->ask(QStringLiteral("Thanks!"));
    QVERIFY(finished.wait(5'000));
    drain(*m_journal);
    QCOMPARE(m_journal->activity().earlierParts, qint64(0));
    const QList<JournalEntry> turns = await(
        m_journal->turns(killed.conversationId, conversationOwner(tenant, user), 10));
    QCOMPARE(turns.size(), qsizetype(3));
    QString error;
    const auto last = TurnCheckpoint::fromEntry(turns.last(), &error);
    QVERIFY2(last, qPrintable(error));
    QVERIFY(last->conversation == loop->conversationMessages());
    QVERIFY(last->conversation.mid(0, killed.conversation.size()) == killed.conversation);
}

// A conversation reopened from the history by another loop (the window after a restart) goes
// on from what the journal holds: its next turn costs what the turns before it cost, and
// stores nothing of the earlier ones again.
void tst_TurnRecovery::aReopenedConversationGoesOnWithoutStoringItAgain()
{
    ScriptedModel model;
    for (int turn = 1; turn <= 4; ++turn) {
        model.script.append(
            toolCalls({{QStringLiteral("call-%1").arg(turn), QStringLiteral("queryOrderStatus"),
                        compact(kReadArguments)}}));
        model.script.append(answer(QStringLiteral("A1001 is shipped (%1).").arg(turn)));
    }
    qint64 lastTurnBytes = 0;
    {
        const auto loop = makeLoop(&model);
        QSignalSpy finished(loop.get(), &AgentLoop::turnFinished);
        for (int turn = 1; turn <= 3; ++turn) {
            const JournalActivity before = m_journal->activity();
            loop->ask(QStringLiteral("Is A1001 shipped? (%1)").arg(turn));
            QVERIFY(finished.wait(5'000));
            drain(*m_journal);
            lastTurnBytes = m_journal->activity().savedBytes - before.savedBytes;
        }
    }
    ConversationHistory history(m_journal.get(), QStringLiteral("u-1"), QStringLiteral("t-1"));
    QSignalSpy opened(&history, &ConversationHistory::opened);
    history.open(QStringLiteral("c-1"));
    QVERIFY(opened.wait(5'000));
    const auto stored = opened.first().first().value<StoredConversation>();
    QCOMPARE(stored.turns.size(), qsizetype(3));
    QCOMPARE(stored.messages.size(), qsizetype(12));

    const auto loop = makeLoop(&model);
    QVERIFY(loop->continueConversation(QStringLiteral("c-1"), stored.messages));
    QSignalSpy finished(loop.get(), &AgentLoop::turnFinished);
    const JournalActivity before = m_journal->activity();
    const QString requestId = loop->ask(QStringLiteral("Is A1001 shipped? (4)"));
    QVERIFY(finished.wait(5'000));
    drain(*m_journal);
    const JournalActivity after = m_journal->activity();
    QCOMPARE(after.earlierParts, qint64(0));
    const qint64 bytes = after.savedBytes - before.savedBytes;
    QVERIFY2(bytes * 10 <= lastTurnBytes * 11,
             qPrintable(QStringLiteral("turn 3: %1 bytes, the reopened turn: %2 bytes")
                            .arg(lastTurnBytes)
                            .arg(bytes)));
    const auto entry = await(m_journal->entry(QStringLiteral("c-1"), requestId));
    QString error;
    const auto checkpoint = entry ? TurnCheckpoint::fromEntry(*entry, &error) : std::nullopt;
    QVERIFY2(checkpoint, qPrintable(error));
    QVERIFY(checkpoint->conversation == loop->conversationMessages());
    QVERIFY(checkpoint->conversation.mid(0, 12) == stored.messages);
}

QTEST_GUILESS_MAIN(tst_TurnRecovery)
#include "tst_turnrecovery.moc"
