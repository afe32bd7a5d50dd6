// AgentLoop, part three: checkpoints and resumption. Every stage of a turn is saved to the
// journal before the turn moves on; an interrupted turn is carried on from its last one.
#include "agentloop_p.h"

#include "../async/await.h"
#include "../ledger/turnjournal.h"
#include "../telemetry/killpoint.h"
#include "../telemetry/logging.h"

#include <QFileInfo>

#include <algorithm>

namespace AgentConsole {

using namespace Internal;

bool AgentLoop::resume(const TurnCheckpoint &checkpoint)
{
    if (isBusy() || !checkpoint.isResumable())
        return false;
    // The journal is a file anyone with the data directory can edit: a turn of another staff
    // member or tenant is never carried on under this session, whatever its row says.
    if (checkpoint.userId != d->session.userId || checkpoint.tenantId != d->session.tenantId) {
        qCWarning(lcAgent).noquote()
            << "turn" << checkpoint.result.requestId << "belongs to another session: not resumed";
        return false;
    }
    d->beforeResume.emplace(d->session, d->conversation);
    d->session = {checkpoint.userId, checkpoint.tenantId, checkpoint.conversationId};
    d->conversation = {ChatMessage::system(systemPrompt())};
    d->conversation.append(checkpoint.conversation);
    ++d->conversationRevision;

    Private::Turn &turn = d->newTurn();
    const int retryBudget = turn.result.retryBudget;
    turn.result = checkpoint.result;
    turn.result.retryBudget = retryBudget;
    turn.result.conversationId = checkpoint.conversationId;
    turn.result.answer.clear();
    turn.result.status = TurnStatus::Completed;
    turn.clock->carryOver(checkpoint.result.totalMs);
    ++turn.result.restarts;
    turn.resumed = true;
    turn.language = checkpoint.language;
    turn.conversationLengthBefore = checkpoint.turnStart + 1; // + the system prompt
    turn.breakerOpensBefore -= turn.result.breakerOpens; // keep the count from before
    for (ToolCallRecord &call : turn.result.toolCalls) {
        turn.calls.add(call.operationId, call.index);
        call.labels = d->labelsOf(call.name); // labels are not stored: today's tools word them
    }

    const QString requestId = turn.result.requestId;
    const QString stageName = turnStageName(checkpoint.stage);
    qCInfo(lcAgent).noquote() << "turn" << requestId << "resumed at" << stageName
                              << QStringLiteral("(restart %1)").arg(turn.result.restarts);
    Q_EMIT turnStarted(requestId, turn.result.question);
    Q_EMIT turnResumed(requestId, stageName, turn.result.restarts);
    // Every stored result gets its card again, whatever round it came from.
    const QList<ToolCallRecord> stored = d->turn ? d->turn->result.toolCalls
                                                 : QList<ToolCallRecord>();
    for (const ToolCallRecord &call : stored) {
        if (call.state != ToolCallRecord::State::Finished)
            continue;
        Q_EMIT toolCallStarted(requestId, call);
        Q_EMIT toolCallFinished(requestId, call);
    }
    if (!d->turn || d->turn->finishing) // a slot may have cancelled it already
        return true;

    switch (checkpoint.stage) {
    case TurnStage::Received:
        d->checkpoint(TurnStage::Received, [this] { d->callModelWithTools(); });
        break;
    case TurnStage::Planned: {
        // The last round's calls: finished ones keep their result, the rest run (or are
        // recovered, or asked for confirmation) again.
        QList<int> unfinished;
        for (const ToolCallRecord &call : std::as_const(d->turn->result.toolCalls)) {
            if (call.round == d->turn->result.toolRounds
                && call.state != ToolCallRecord::State::Finished)
                unfinished.append(call.index);
        }
        d->checkpoint(
            TurnStage::Planned,
            [this, unfinished] {
                if (unfinished.isEmpty()) {
                    d->finishToolRound();
                    return;
                }
                // Right after a start, the MCP servers whose tools the interrupted calls name
                // are still starting: they are waited for (bounded, as a new turn waits), or an
                // interrupted write would be told UNKNOWN_TOOL and its ledger row left as it was.
                d->whenToolsReady([this, unfinished] { d->round.start(unfinished); });
            },
            true);
        break;
    }
    case TurnStage::ToolsExecuted:
    case TurnStage::AnswerGenerating:
    case TurnStage::Failed:
        // The tool results are already in the conversation: only the answer is missing.
        d->checkpoint(TurnStage::AnswerGenerating, [this] { d->callModel(); });
        break;
    case TurnStage::Completed:
        break;
    }
    return true;
}

void AgentLoop::abandon(const TurnCheckpoint &checkpoint)
{
    for (const ToolCallRecord &call : checkpoint.result.toolCalls) {
        // Only a PROCESSING row this console claimed moves, never another console's write.
        if (call.confirmed && call.state != ToolCallRecord::State::Finished) {
            const ToolResult unknown = ToolResult::failure(ResultCode::ExecutionStatusUnknown,
                                                           checkpoint.language);
            d->round.writes().releaseClaim(call.operationId, call.name, unknown);
            // The write confirmed in that turn ends in the audit trail too: nobody knows.
            AuditEntry subject;
            subject.staffId = checkpoint.userId;
            subject.tenantId = checkpoint.tenantId;
            subject.conversationId = checkpoint.conversationId;
            subject.requestId = checkpoint.result.requestId;
            subject.operationId = call.operationId;
            subject.toolName = call.name;
            subject.idempotencyKey = call.operationId;
            subject.arguments = call.arguments;
            d->round.writes().auditOutside(std::move(subject), unknown,
                                           AuditEntry::Via::Dismissed);
        }
    }
}

void AgentLoop::Private::checkpoint(TurnStage stage, std::function<void()> then, bool required)
{
    const bool final = stage == TurnStage::Completed || stage == TurnStage::Failed;
    // A turn being finished is only ever saved as finished: a slot that cancelled it from a
    // signal must not leave a resumable row behind.
    if (!turn || (turn->finishing && !final))
        return;
    turn->stage = stage;
    if (!recorder.isRecording() || turn->heldElsewhere) {
        then();
        return;
    }
    const quint64 serial = turn->serial;
    const QString stageName = turnStageName(stage);
    const TurnCheckpoint snapshot = recorder.snapshot(*turn, session, conversation,
                                                      conversationRevision);
    recorder.save(
        snapshot,
        [this, serial, stageName, final, required,
         then = std::move(then)](const JournalWrite &write) {
            if (!turn || turn->serial != serial || (turn->finishing && !final))
                return; // cancelled or stopped meanwhile
            if (!write.ok) {
                qCWarning(lcAgent).noquote()
                    << "turn" << turn->result.requestId << "could not save its checkpoint"
                    << QStringLiteral("checkpoint-") + stageName;
                // Another desk of the same agent carries the turn on (a team's journal): never
                // two desks at once, whatever the checkpoint.
                if (!write.heldBy.isEmpty()) {
                    turn->heldElsewhere = true;
                    // The finished turn is that desk's to record: this one only ends.
                    if (final) {
                        then();
                        return;
                    }
                    stopTurn(TurnStatus::Failed, ResultCode::ToolUnavailable,
                             localized(turn->language,
                                       "This request is being carried on at desk %1, so nothing "
                                       "more of it was run here.",
                                       "该请求正在工位 %1 上继续处理，因此此处未再执行。")
                                 .arg(write.heldBy));
                    return;
                }
                if (required) {
                    // Running tools whose plan or approval is not on disk could repeat a write
                    // after a restart: stop here instead.
                    const QString notSaved = write.diskFull
                        ? localized(
                              turn->language,
                              "The disk holding %1 is full, so this request's progress could "
                              "not be saved and nothing more of it was run: free space and "
                              "try again; nothing was lost.",
                              "%1 "
                              "所在的磁盘已满，无法保存该请求的进度，因此未继续执行：请释放空间后"
                              "重试；"
                              "没有丢失任何内容。")
                              .arg(recorder.directory())
                        : localized(
                            turn->language,
                            "The console could not save this request's progress, so "
                            "nothing more of it was run. The details are in the local "
                            "log.",
                            "控制台无法保存该请求的进度，因此未继续执行。详情见本地日志。");
                    stopTurn(TurnStatus::Failed, ResultCode::ToolUnavailable, notSaved);
                    return;
                }
            }
            then();
        });
}

void AgentLoop::Private::saveProgress(int index)
{
    if (!recorder.isRecording() || !turn)
        return;
    recorder.saveToolResult(session.conversationId, turn->result.requestId, index,
                            turn->result.toolCalls.at(index));
}

TurnCheckpoint TurnRecorder::snapshot(const TurnState &t, const SessionContext &session,
                                      const QList<ChatMessage> &conversation, quint64 revision)
{
    TurnCheckpoint checkpoint;
    checkpoint.stage = t.stage;
    checkpoint.userId = session.userId;
    checkpoint.tenantId = session.tenantId;
    checkpoint.conversationId = session.conversationId;
    checkpoint.language = t.language;
    // Each message is serialized and hashed once, and only the messages added since the last
    // checkpoint are looked at: a long conversation's checkpoints would otherwise each cost its
    // whole length on this (the GUI) thread (docs/PERFORMANCE.md, "journal_bench").
    // `conversation` starts with the system prompt, which is the console's and not stored.
    const qsizetype stored = m_storedFrom.size();
    qsizetype same = 0; // messages past the system prompt already stored, and still the same
    if (revision == m_storedRevision && conversation.size() - 1 >= stored
        && (stored == 0 || conversation.at(stored) == m_storedFrom.constLast())) {
        same = stored; // appended to only
    } else {
        const qsizetype common = std::min(stored, conversation.size() - 1);
        while (same < common && m_storedFrom.at(same) == conversation.at(same + 1))
            ++same;
    }
    while (m_storedFrom.size() > same) {
        m_storedFrom.removeLast();
        m_storedConversation.removeLast();
        m_storedHashes.removeLast();
    }
    // With each message's running hash: the journal finds the earlier turns' part of the
    // conversation by it, and stores only what this turn adds.
    for (qsizetype i = same + 1; i < conversation.size(); ++i) {
        const QJsonObject json = TurnCheckpoint::messageJson(conversation.at(i));
        m_storedHashes.append(journalMessageHash(
            m_storedHashes.isEmpty() ? QByteArray() : m_storedHashes.constLast(), json));
        m_storedConversation.append(json);
        m_storedFrom.append(conversation.at(i));
    }
    m_storedRevision = revision;
    checkpoint.storedConversation = m_storedConversation;
    checkpoint.storedConversationHashes = m_storedHashes;
    checkpoint.turnStart = std::max<qsizetype>(0, t.conversationLengthBefore - 1);
    checkpoint.result = t.result;
    if (!t.finishing)
        checkpoint.result.totalMs = t.clock->elapsedMs();
    checkpoint.answerFailed = t.answerFailed;
    return checkpoint;
}

QString TurnRecorder::directory() const
{
    if (!m_journal)
        return {};
    // A team's journal: the database (its server's disk), as staff may read its name.
    return m_journal->isTeamJournal() ? m_journal->filePath()
                                      : QFileInfo(m_journal->filePath()).absolutePath();
}

void TurnRecorder::save(const TurnCheckpoint &checkpoint,
                        std::function<void(const JournalWrite &)> done)
{
    Q_ASSERT(m_journal);
    const QByteArray point = "checkpoint-" + turnStageName(checkpoint.stage).toLatin1();
    // Let go of on the journal's thread as soon as it is made into an entry: a copy kept
    // until the save's future is handed back would make the next snapshot's messages copy
    // the whole stored conversation (copy on write).
    auto held = std::make_shared<std::optional<TurnCheckpoint>>(checkpoint);
    await(m_journal->save([held] {
        const JournalEntry entry = (*held)->toEntry();
        held->reset();
        return entry;
    }),
          m_context, [point, done = std::move(done)](const JournalWrite &write) {
              killPoint(point.constData());
              done(write);
          });
}

// One result is appended on its own: its cost does not grow with the results already stored
// (a re-save of the whole turn per result made a turn's checkpoints cost its calls squared).
void TurnRecorder::saveToolResult(const QString &conversationId, const QString &requestId,
                                  int index, const ToolCallRecord &record)
{
    Q_ASSERT(m_journal);
    // Made on the journal's thread: a call's JSON (its attempts, its result) need not be
    // built on the GUI thread, which runs the agent loop.
    await(m_journal->appendToolResult(conversationId, requestId, index,
                                      [record] { return TurnCheckpoint::toolCallJson(record); }),
          m_context, [](const JournalWrite &) { killPoint("checkpoint-TOOL_RESULT"); });
}

} // namespace AgentConsole
