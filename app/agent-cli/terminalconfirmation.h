#pragma once

#include <QFile>
#include <QObject>
#include <QHash>
#include <QQueue>
#include <QSet>

#include <memory>

class QSocketNotifier;

namespace AgentConsole {

class AgentLoop;
struct ToolCallRecord;

// Answers the agent loop's confirmation requests for agent-cli: automatically with --yes,
// otherwise by asking on the controlling terminal (not stdin, which may carry questions)
// without blocking the event loop. With no terminal and no --yes, or once the terminal is
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
    TerminalConfirmation(AgentLoop *loop, bool approveAll, bool allowDuplicates = false,
                         QObject *parent = nullptr);
    ~TerminalConfirmation() override;

Q_SIGNALS:
    // The staff member ended the terminal's input (Ctrl-D) where a confirmation was asked:
    // nothing more is to be asked on it.
    void terminalClosed();

private:
    void onRequested(const ToolCallRecord &call);
    void ask(const ToolCallRecord &call);
    void onTerminalReadable();
    void nobodyToAsk(const QString &operationId);
    // Forgets the confirmations still waiting: their turn ended without them.
    void forgetWaiting();
    // The controlling terminal, opened once and watched for what is typed; false: none.
    bool openTerminal();

    AgentLoop *m_loop;
    bool m_approveAll;
    bool m_allowDuplicates;
    QSet<QString> m_checking; // operation ids whose check of earlier writes is under way
    QHash<QString, QString> m_duplicateOf; // operation id -> the earlier write it repeats
    QFile m_terminal;
    std::unique_ptr<QSocketNotifier> m_notifier;
    QQueue<QString> m_waiting; // operation ids, asked one at a time
    QByteArray m_typed;
    bool m_terminalClosed = false; // read its end: nothing more can be asked on it
};

} // namespace AgentConsole
