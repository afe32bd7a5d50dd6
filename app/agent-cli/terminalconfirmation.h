#pragma once

#include <QObject>
#include <QQueue>
#include <QSet>

namespace AgentConsole {

class AgentLoop;
class TerminalLines;
struct ToolCallRecord;

// Answers the agent loop's confirmation requests for agent-cli: automatically with --yes,
// otherwise by asking on the controlling terminal (not stdin, which may carry questions)
// without blocking the event loop, one write at a time, taking turns with MCP servers'
// questions (TerminalLines). With no terminal and no --yes, or once the terminal is
// closed (Ctrl-D), a write is not run: AgentLoop::cannotConfirm (nobody was asked, so nobody
// declined), and stderr says how to confirm. The terminal is read only while a confirmation
// waits (between turns it is standard input's, the next question), and a turn that ends
// first (Ctrl-C) takes its waiting confirmations with it. A write whose check of earlier ones
// (ToolCallRecord::priorWrites) is under way is asked about once the check is back, and what
// it found is printed first; a likely duplicate is kept, not made, under --yes unless
// `allowDuplicates` (--allow-duplicate), and asked about as such at the terminal.

class TerminalConfirmation final : public QObject
{
    Q_OBJECT

public:
    // `terminal`: where staff are asked; not owned, and outlives this.
    TerminalConfirmation(AgentLoop *loop, TerminalLines *terminal, bool approveAll,
                         bool allowDuplicates = false, QObject *parent = nullptr);
    ~TerminalConfirmation() override;

Q_SIGNALS:
    // The staff member ended the terminal's input (Ctrl-D) where a confirmation was asked:
    // nothing more is to be asked on it.
    void terminalClosed();

private:
    struct Waiting
    {
        QString operationId;
        QString prompt;
        QString existing; // the earlier write it likely repeats, which staff may keep
    };
    void onRequested(const ToolCallRecord &call);
    void ask(const ToolCallRecord &call);
    // Shows the next waiting write's prompt once the terminal is this one's; gives the
    // terminal back when nothing waits.
    void promptNext();
    void onLine(const QString &line);
    void onTerminalClosed();
    void nobodyToAsk(const QString &operationId);
    // Forgets the confirmations still waiting: their turn ended without them.
    void forgetWaiting();

    AgentLoop *m_loop;
    TerminalLines *m_terminal;
    bool m_approveAll;
    bool m_allowDuplicates;
    QSet<QString> m_checking; // operation ids whose check of earlier writes is under way
    QQueue<Waiting> m_waiting; // asked one at a time
    QString m_prompted; // the operation id whose prompt is shown
};

} // namespace AgentConsole
