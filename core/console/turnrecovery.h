#pragma once

#include "../turn/interruptedturns.h"
#include "../turn/turncheckpoint.h"

#include <QList>
#include <QObject>
#include <QString>

#include <memory>

class QLockFile;

namespace AgentConsole {

class AgentLoop;
class TurnJournal;

// What a turn killed half-way leaves, and the data directory it is kept in: the turn journal,
// the turns found interrupted (offered for AgentLoop::resume) or set aside, and this
// process's hold on the data directory (console.lock), which a scenario's crash turn borrows.
// Valid once the runtime is ready; before, every list is empty and every request refused.
// Lives on the runtime's thread.
class TurnRecovery final : public QObject
{
    Q_OBJECT

public:
    explicit TurnRecovery(QObject *parent = nullptr);
    // Releases the data directory last of all: the runtime destroys this after the ledger's
    // and the journal's queues have drained.
    ~TurnRecovery() override;

    // Where turns are checkpointed: turns.sqlite in the data directory.
    TurnJournal *journal() const { return m_journal; }
    // The turns found interrupted at start (or whose answer failed), oldest first, for
    // AgentLoop::resume(); a turn leaves the list when it finishes or is dismissed. Empty when
    // another console process holds this data directory: the turns are its to resume.
    QList<TurnCheckpoint> interruptedTurns() const;
    // Interrupted turns found at start that are not offered (another session's, or damaged):
    // the window and agent-cli report them.
    QList<SetAsideTurn> setAsideTurns() const;
    // Stops offering a turn for resumption; its record is kept.
    void dismissInterruptedTurn(const QString &conversationId, const QString &requestId);

    // A scenario's crash turn (ScenarioRunner) runs in a child agent-cli on this data
    // directory: the console, idle, releases its console.lock so that the child may take it,
    // and rescanInterruptedTurns() takes it back once the child is gone. Refused (false, with
    // the reason) while a turn runs or before the runtime is ready. Nothing else may ask
    // meanwhile.
    bool lendDataDirectory(QString *error);
    bool isDataDirectoryLent() const;
    // Takes the data directory back when it was lent, then reads the interrupted turns from
    // the journal again (a child's turn killed half-way is then offered like one found at
    // start); interruptedTurnsRescanned() follows, with an empty error on success.
    void rescanInterruptedTurns();

    // The runtime's side, once its start opened them: the lock it holds, the journal, the
    // turns read at start and whose they are, and the loop that resumes them (a turn it
    // finishes is no longer interrupted).
    void attach(std::unique_ptr<QLockFile> lock, TurnJournal *journal,
                InterruptedTurns interrupted, const QString &userId, const QString &tenantId,
                AgentLoop *loop);

Q_SIGNALS:
    // rescanInterruptedTurns() finished: `error` is empty, or says why the lock could not be
    // taken back (the turns were then not read).
    void interruptedTurnsRescanned(const QString &error);

private:
    std::unique_ptr<QLockFile> m_lock;
    TurnJournal *m_journal = nullptr;
    InterruptedTurns m_interrupted;
    QString m_userId;
    QString m_tenantId;
    AgentLoop *m_loop = nullptr;
};

} // namespace AgentConsole
