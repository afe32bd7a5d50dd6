#pragma once

#include "../llm/chatmodel.h"
#include "../turn/turnresult.h"

#include <QDateTime>
#include <QList>
#include <QMetaType>
#include <QObject>
#include <QString>

namespace AgentConsole {

class TurnJournal;

// One conversation as the history sidebar lists it (docs/HISTORY.md).
struct ConversationSummary
{
    Q_GADGET
public:
    // How the conversation's latest turn ended; Interrupted when it never did (the process
    // stopped, or it is still running).
    enum class Outcome { Answered, Partial, Unanswered, Failed, Cancelled, Interrupted };
    Q_ENUM(Outcome)

    QString conversationId;
    QString title; // the first question, on one line, at most ~120 characters
    Outcome latestOutcome = Outcome::Answered;
    int turns = 0;
    bool resumable = false; // one of its turns is offered for resumption
    QString scenario; // a scenario run's name; empty for the staff member's own
    QDateTime startedAt; // UTC
    QDateTime updatedAt; // UTC
};

// One page of the list, as asked for.
struct ConversationPage
{
    QString search; // as applied (trimmed, bounded)
    bool withoutScenarios = false; // scenario runs were left out
    int page = 0;
    QList<ConversationSummary> conversations; // newest first, at most kPageSize
    bool hasMore = false;
};

// A conversation read back for showing: its turns (the last kMaxShownTurns), oldest first,
// and what the agent loop needs to carry it on.
struct StoredConversation
{
    struct Turn
    {
        TurnResult result;
        bool finished = false; // false: interrupted (its Resume offer is the runtime's)
    };
    QString conversationId;
    QList<Turn> turns;
    int unreadableTurns = 0; // damaged rows, left out (the local log says why)
    // The conversation as the model sees it next (no system prompt): what the latest
    // finished turn left, without the half of a turn that did not complete.
    QList<ChatMessage> messages;
};

// The stored conversations of one staff member of one tenant, over the turn journal: list a
// page (optionally filtered by text or order id), read one back, delete one. All database
// work runs on the journal's thread; each answer comes back as a signal on this object's
// thread, and a list answer that a newer list request overtook is dropped. Bounded: a page
// holds at most kPageSize conversations, a search at most kMaxSearchLength characters, a
// conversation read back at most kMaxShownTurns turns.
class ConversationHistory final : public QObject
{
    Q_OBJECT

public:
    static constexpr int kPageSize = 50;
    static constexpr int kMaxSearchLength = 100;
    static constexpr int kMaxShownTurns = 1000;

    // `journal` must outlive this object (the runtime owns both, or the test does).
    ConversationHistory(TurnJournal *journal, const QString &userId, const QString &tenantId,
                        QObject *parent = nullptr);
    ~ConversationHistory() override;

    // The search as list() applies it: trimmed, cut to kMaxSearchLength.
    static QString boundedSearch(const QString &text);

    // listed() follows (unless a newer list() came first).
    void list(const QString &search = {}, int page = 0);
    // Whether list() leaves scenario runs out (the sidebar's "Hide scenario runs").
    void setHidingScenarios(bool hide) { m_hidingScenarios = hide; }
    bool isHidingScenarios() const { return m_hidingScenarios; }
    // opened() follows; its turns are empty when the conversation is not stored (or is
    // another staff member's).
    void open(const QString &conversationId);
    // Deletes every turn of the conversation from the journal, durably; removed() follows.
    void remove(const QString &conversationId);

Q_SIGNALS:
    void listed(const AgentConsole::ConversationPage &page);
    void opened(const AgentConsole::StoredConversation &conversation);
    // `ok` false: nothing was deleted; `message` is one line for staff.
    void removed(const QString &conversationId, bool ok, const QString &message);

private:
    TurnJournal *m_journal = nullptr;
    QString m_owner;
    quint64 m_listGeneration = 0;
    bool m_hidingScenarios = false;
};

} // namespace AgentConsole

Q_DECLARE_METATYPE(AgentConsole::ConversationPage)
Q_DECLARE_METATYPE(AgentConsole::StoredConversation)
