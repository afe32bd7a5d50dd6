#pragma once

#include "core/console/mcpquestion.h"

#include <QFile>
#include <QJsonObject>
#include <QObject>
#include <QQueue>

#include <memory>
#include <optional>

class QSocketNotifier;

namespace AgentConsole {

class McpServers;

// Asks MCP servers' questions (elicitation, form mode) on the terminal for agent-cli: the
// server, its message, then each field with its default in brackets (Enter keeps it), and
// whether to accept, decline or cancel. One question at a time, read through a socket
// notifier on /dev/tty so the event loop (and the call's timeout) keep running. --yes never
// answers a question: staff's words are staff's. When there is no terminal to ask on, or
// standard input is not one, or it is where the questions come from, each question is
// declined and stderr says so. What staff type is never logged.
class TerminalQuestion final : public QObject
{
    Q_OBJECT

public:
    // `servers`: the runtime's MCP servers, whose questions are asked and answered here.
    TerminalQuestion(McpServers *servers, bool canAsk, QObject *parent = nullptr);
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
    void onLine(const QString &line);
    void finish(McpAnswer action);
    void terminalClosed();
    void say(const QString &text);

    McpServers *m_servers;
    bool m_canAsk;
    QFile m_terminal;
    std::unique_ptr<QSocketNotifier> m_notifier;
    QQueue<Asked> m_waiting;
    std::optional<Asked> m_current;
    int m_field = -1; // -1: the action is asked; else the field being filled in
    QJsonObject m_content;
    QByteArray m_typed;
    bool m_terminalClosed = false; // read its end: nothing more is asked on it
};

} // namespace AgentConsole
