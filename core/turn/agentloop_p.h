#pragma once

// Not part of the API. AgentLoop's state: agentloop.cpp (the path of a turn: the model, the
// turn's start, stop and end), agentloopwrites.cpp (the confirmation and question API) and
// agentlooprecovery.cpp (resumption, and the TurnRecorder that saves checkpoints to the
// journal). Its parts with a state of their own live in their own files: the tool round
// (toolround.*, with the WriteGuard of writeguard.*), the turn's state (turnstate.h), its
// clock (turnclock.*), the calls in flight (callsinflight.*), admitToolCall and
// readModelAnswer.

#include "agentloop.h"

#include "../ledger/idempotencyledger.h"
#include "../resilience/circuitbreaker.h"
#include "../resilience/toolexecutor.h"
#include "turncheckpoint.h"
#include "internal/turnstate.h"
#include "internal/toolround.h"
#include "internal/writeguard.h"

#include <QElapsedTimer>
#include <QFuture>
#include <QHash>
#include <QPointer>
#include <QSet>
#include <QTimer>

#include <functional>
#include <optional>
#include <utility>

namespace AgentConsole {

struct JournalWrite;

namespace Internal {
QString shortId(const QString &prefix);
QString systemPrompt();
// The turn recorder: where a turn's checkpoints and tool results are saved. It owns the
// journal and the kill point after each save (the crash-injection suite stops the process
// there). Without a journal it records nothing and says so.
class TurnRecorder final
{
public:
    // Results are delivered on `context`'s thread, and not at all once it is gone.
    TurnRecorder(TurnJournal *journal, QObject *context)
        : m_journal(journal)
        , m_context(context)
    {
    }

    bool isRecording() const { return m_journal != nullptr; }
    // Where the checkpoints are written (the data directory), for a full disk's message.
    QString directory() const;
    // Saves a checkpoint; once it is on disk (or failed), passes the kill point
    // "checkpoint-<STAGE>" and calls `done(write)`. Needs a journal.
    void save(const TurnCheckpoint &checkpoint, std::function<void(const JournalWrite &)> done);
    // Appends call `index`'s result alone, without holding anything up.
    void saveToolResult(const QString &conversationId, const QString &requestId, int index,
                        const ToolCallRecord &record);
    // The turn as a checkpoint stores it, in `session`, with `conversation` (its system
    // prompt first, which is the console's and not stored) as TurnCheckpoint::
    // storedConversation, its messages left empty. `revision` changes whenever `conversation`
    // changed other than by messages appended (Private::conversationRevision): while it does
    // not, a checkpoint costs the messages added since the last one, not the conversation.
    TurnCheckpoint snapshot(const TurnState &turn, const SessionContext &session,
                            const QList<ChatMessage> &conversation, quint64 revision);

private:
    TurnJournal *m_journal;
    QObject *m_context;
    // The conversation (past its system prompt) as checkpoints store it, with its running
    // hashes, and the messages and revision it was made from (a list of the recorder's own:
    // one shared with the loop's would make its next message copy the whole conversation):
    // snapshot() serializes only what was added since, and keeps only the part still the same
    // when the conversation was cut or replaced (a failed turn, a resume).
    QList<ChatMessage> m_storedFrom;
    quint64 m_storedRevision = 0;
    QJsonArray m_storedConversation;
    QList<QByteArray> m_storedHashes;
};

// The policies the loop's calls run under: the caller's, else the seed article's for every
// tool. Decided here once, so that nothing downstream (the round, the prior-writes lookup, the
// executor) keeps a default of its own.
inline AgentLoop::ToolPolicies policiesOrDefaults(AgentLoop::Dependencies &dependencies)
{
    if (dependencies.toolPolicies)
        return std::move(dependencies.toolPolicies);
    return [](const QString &) { return RetryPolicy::defaults(); };
}

} // namespace Internal

class AgentLoop::Private final : public Internal::ToolRound::Host
{
public:
    using Turn = Internal::TurnState;

    Private(AgentLoop *q, Dependencies dependencies)
        : q(q)
        , model(dependencies.model)
        , tools(dependencies.tools)
        , executor(dependencies.executor)
        , toolsReady(std::move(dependencies.toolsReady))
        , turnConditions(std::move(dependencies.turnConditions))
        , turnPolicy(std::move(dependencies.turnPolicy))
        , breakerRegistry(dependencies.breakerRegistry)
        , recorder(dependencies.journal, q)
        , round(*this,
                {q, dependencies.tools, dependencies.executor,
                 std::move(dependencies.toolBreakers), Internal::policiesOrDefaults(dependencies),
                 dependencies.ledger, std::move(dependencies.auditRedaction)})
    {
        Q_ASSERT(model && tools && executor);
    }

    void resetConversation();
    void callModel();
    // The first model request of a turn, once the tools still starting are there (or the
    // wait for them has passed): the ones not ready are named in the turn's result.
    void callModelWithTools();
    // Runs `next` once the tools' servers that are starting are ready (bounded: the
    // runtime's wait), at once when there is nothing to wait for; not at all when the turn
    // ended meanwhile. Those still not ready are kept in the result (serversNotReady).
    void whenToolsReady(std::function<void()> next);
    void onModelFinished(ChatReply *reply);
    void runTools(const QList<ModelToolCall> &calls);
    void finishToolRound();
    // AgentLoop::confirm and cannotConfirm: a write waiting for its confirmation goes on.
    void answerConfirmation(const QString &operationId, Internal::ToolRound::Confirmation answer,
                            const QString &existingId = {});
    void onTurnDeadline();
    void stopTurn(TurnStatus status, ResultCode::Code unfinishedCode, const QString &answer);
    void finishTurn(TurnStatus status, const QString &answer);
    void emitFinished();
    ToolLabels labelsOf(const QString &toolName) const;
    // Saves the turn at `stage`, then (once it is on disk) runs `then` if the turn is still
    // the same one. Without a journal `then` runs at once.
    // `required`: if the save fails the turn stops there (nothing of it may run unrecorded).
    void checkpoint(TurnStage stage, std::function<void()> then, bool required = false);
    Turn &newTurn();
    // Saves a tool result as it arrives, without holding anything up (a round's last result
    // goes to disk with TOOLS_EXECUTED instead). Appends call `index` alone.
    void saveProgress(int index);

    // ToolRound::Host
    Internal::TurnState *runningTurn() const override { return turn.get(); }
    SessionContext turnSession() const override { return session; }
    void saveTurn(TurnStage stage, std::function<void()> then, bool required) override
    {
        checkpoint(stage, std::move(then), required);
    }
    void saveResult(int index) override { saveProgress(index); }
    void roundFinished() override { finishToolRound(); }

    AgentLoop *q;
    ChatModel *model;
    const ToolRegistry *tools;
    ToolExecutor *executor;
    const AgentLoop::ToolsReady toolsReady;
    const std::function<QJsonObject()> turnConditions;
    const std::function<QJsonValue()> turnPolicy;
    const QPointer<CircuitBreakerRegistry> breakerRegistry;
    Internal::TurnRecorder recorder;
    // The calls of the turn's tool rounds, and the write guard they go through.
    Internal::ToolRound round;
    SessionContext session;
    AgentLoop::TurnLimits limits;
    QList<ChatMessage> conversation;
    // Changes whenever `conversation` changes other than by messages appended (replaced, cut
    // back): the recorder then looks for what it has stored already instead of taking only
    // the messages past it.
    quint64 conversationRevision = 0;
    quint64 turnsStarted = 0;
    // A resumed turn runs in its own session and conversation; the staff member's own come
    // back when it ends.
    std::optional<std::pair<SessionContext, QList<ChatMessage>>> beforeResume;
    std::unique_ptr<Turn> turn;
};

} // namespace AgentConsole
