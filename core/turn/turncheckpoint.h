#pragma once

#include "../llm/chatmodel.h"
#include "turnresult.h"

#include <QByteArray>
#include <QJsonArray>
#include <QJsonObject>
#include <QList>
#include <QString>

#include <optional>

namespace AgentConsole {

struct JournalEntry;

// TurnStage is in turnresult.h (TurnEnums::Stage), printable by name. These are the names the
// journal stores; they must stay byte-identical.
QString turnStageName(TurnStage stage); // "RECEIVED", "PLANNED", ...
std::optional<TurnStage> turnStageFromName(const QString &name);

// Whose conversations a history lists (docs/HISTORY.md): one staff member of one tenant.
QString conversationOwner(const QString &tenantId, const QString &userId);

// Everything needed to carry a turn on in another process: the trusted session, the
// conversation as the model will see it next (system prompt excluded: it is the console's,
// not the turn's), the plan with its operationIds and every tool result so far.
struct TurnCheckpoint
{
    TurnStage stage = TurnStage::Received;
    QString userId;
    QString tenantId;
    QString conversationId;
    Language language = Language::English;
    QList<ChatMessage> conversation;
    qsizetype turnStart = 0; // where this turn's messages begin in `conversation`
    TurnResult result; // requestId, question, tool calls (plan, states, results), counters
    // Failed while writing the answer, with every tool result stored: the answer may be tried
    // again from those results, without running any tool.
    bool answerFailed = false;
    bool dismissed = false;

    // Interrupted (not final), or its answer failed, and nobody dismissed it.
    bool isResumable() const;

    // `conversation` as stored, one JSON object per message, when the caller already has it:
    // the loop keeps it across a turn's checkpoints, so that each message of a long
    // conversation is serialized once rather than at every checkpoint. Set, it is what
    // toEntry() stores and `conversation` may be left empty (the loop's checkpoints leave it:
    // copying a long conversation at every checkpoint would cost its length). Empty: made
    // from `conversation`.
    std::optional<QJsonArray> storedConversation;
    // Its running hashes (JournalEntry::conversationHashes), kept by the loop beside it, so
    // that the journal finds the earlier turns' part without hashing it. Empty: the journal
    // makes them.
    std::optional<QList<QByteArray>> storedConversationHashes;

    JournalEntry toEntry() const;
    // One message as stored (what toEntry() puts in the state's "conversation" array).
    static QJsonObject messageJson(const ChatMessage &message);
    // One tool call as stored, alone: what TurnJournal::appendToolResult keeps per result.
    static QJsonObject toolCallJson(const ToolCallRecord &call);
    // nullopt (and *error) when the stored state cannot be read back: a journal written by a
    // newer console, or damaged.
    static std::optional<TurnCheckpoint> fromEntry(const JournalEntry &entry, QString *error);
};

} // namespace AgentConsole
