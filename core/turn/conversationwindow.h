#pragma once

#include "../llm/chatmodel.h"

#include <QList>

namespace AgentConsole {

// What of a conversation goes to the model (issue #24 §4): every request carried the whole
// conversation, so a long one grew past what a provider accepts. The system prompt and the
// current turn (the staff member's latest question and every tool call and result since)
// always go; earlier turns go whole, newest first, while they fit in the budget. A turn is
// never cut in half: a tool result without the call it answers is a malformed request.
struct ConversationWindow
{
    QList<ChatMessage> messages;
    int turnsLeftOut = 0; // earlier turns (questions with what followed) not sent

    // `budgetChars` <= 0 sends everything.
    static ConversationWindow of(const QList<ChatMessage> &conversation, int budgetChars);
    // What a message costs against the budget: its text, its reasoning, its tool calls.
    static qsizetype charsOf(const ChatMessage &message);
};

} // namespace AgentConsole
