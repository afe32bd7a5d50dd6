#include "conversationwindow.h"

namespace AgentConsole {

qsizetype ConversationWindow::charsOf(const ChatMessage &message)
{
    qsizetype chars = message.content.size() + message.reasoningContent.size()
        + message.toolCallId.size() + message.toolName.size();
    for (const ModelToolCall &call : message.toolCalls)
        chars += call.id.size() + call.name.size() + call.arguments.size();
    return chars;
}

ConversationWindow ConversationWindow::of(const QList<ChatMessage> &conversation, int budgetChars)
{
    ConversationWindow window;
    if (budgetChars <= 0 || conversation.isEmpty()) {
        window.messages = conversation;
        return window;
    }
    // Where each turn starts: at a staff member's question. What comes before the first one
    // (the system prompt) always goes.
    QList<qsizetype> turnStarts;
    for (qsizetype i = 0; i < conversation.size(); ++i) {
        if (conversation.at(i).role == ChatMessage::Role::User)
            turnStarts.append(i);
    }
    if (turnStarts.size() <= 1) {
        window.messages = conversation;
        return window;
    }
    const auto charsBetween = [&conversation](qsizetype from, qsizetype to) {
        qsizetype chars = 0;
        for (qsizetype i = from; i < to; ++i)
            chars += charsOf(conversation.at(i));
        return chars;
    };
    const qsizetype head = turnStarts.first();
    qsizetype used = charsBetween(0, head) + charsBetween(turnStarts.last(), conversation.size());
    // Earlier turns, newest first, while the next one fits whole.
    qsizetype keptFrom = turnStarts.last();
    for (qsizetype t = turnStarts.size() - 2; t >= 0; --t) {
        const qsizetype cost = charsBetween(turnStarts.at(t), turnStarts.at(t + 1));
        if (used + cost > budgetChars)
            break;
        used += cost;
        keptFrom = turnStarts.at(t);
    }
    window.turnsLeftOut = int(turnStarts.indexOf(keptFrom));
    window.messages.reserve(head + conversation.size() - keptFrom);
    window.messages.append(conversation.mid(0, head));
    window.messages.append(conversation.mid(keptFrom));
    return window;
}

} // namespace AgentConsole
