#pragma once

#include "core/console/mcpquestion.h"

#include <QJsonObject>
#include <QObject>
#include <QQueue>

#include <optional>

namespace AgentConsole {

class McpServers;
class TerminalLines;

// Asks MCP servers' questions (elicitation, form mode) on the terminal for agent-cli: the
// server, its message, then each field with its default in brackets (Enter keeps it), and
// whether to accept, decline or cancel. One question at a time, taking turns with writes'
// confirmations, read a line at a time (TerminalLines) so the event loop (and the call's
// timeout) keep running. --yes never answers a question: staff's words are staff's. When
// there is no terminal to ask on, or standard input is not one, or it is where the questions
// come from, each question is declined and stderr says so. What staff type is never logged.
class TerminalQuestion final : public QObject
{
    Q_OBJECT

public:
    // `servers`: the runtime's MCP servers, whose questions are asked and answered here;
    // `terminal`: where they are asked, not owned, and outliving this.
    TerminalQuestion(McpServers *servers, TerminalLines *terminal, bool canAsk,
                     QObject *parent = nullptr);
    ~TerminalQuestion() override;

private:
    struct Asked
    {
        QString id;
        McpQuestion question;
    };
    void onAsked(const QString &id, const McpQuestion &question);
    void onEnded(const QString &id, McpQuestionEnd how);
    void askNext();
    void promptAction();
    void promptField();
    void onLine(const QString &line, bool tooLong);
    void finish(McpAnswer action);
    void terminalClosed();
    void say(const QString &text);

    McpServers *m_servers;
    TerminalLines *m_terminal;
    bool m_canAsk;
    QQueue<Asked> m_waiting;
    std::optional<Asked> m_current; // asked, with the terminal this one's
    int m_field = -1; // -1: the action is asked; else the field being filled in
    QJsonObject m_content;
};

} // namespace AgentConsole
