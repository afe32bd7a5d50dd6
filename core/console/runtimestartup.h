#pragma once

#include "../policy/managedpolicy.h"
#include "../support/supportstore.h"
#include "../turn/interruptedturns.h"
#include "runtimeoptions.h"
#include "runtimestatus.h"

#include <QObject>
#include <QString>

#include <cstddef>
#include <memory>

class QLockFile;

namespace AgentConsole {

class FaultPlan;
class IdempotencyLedger;
class TurnJournal;
struct PostgresLocation;

// What a successful start hands to the runtime. Declared in dependency order, as the runtime
// holds them: the lock is released last, after the ledger's and the journal's queues drained.
// The OS keychain's entry for a team database's password (`database`: its safe name, as
// TeamStatus::database says it). Settings › Team stores it there; the start reads it.
QString teamKeychainKey(const QString &database);

struct StartedParts
{
    std::shared_ptr<SupportStore> store;
    std::shared_ptr<FaultPlan> faults;
    StaffMember staff;
    QString consoleId; // the ledger's owner: who claims this data directory's writes
    QString apiKey; // never logged
    std::unique_ptr<QLockFile> dataDirectoryLock;
    std::unique_ptr<IdempotencyLedger> ledger;
    std::unique_ptr<TurnJournal> journal;
    InterruptedTurns interrupted;
    TeamStatus team;
    // The team's policy read at start (docs/POLICY.md); nothing without one. Its values are
    // already in the options the later steps used (TeamPolicy::applyTo).
    std::optional<ManagedPolicy> policy;

    StartedParts();
    StartedParts(StartedParts &&) noexcept;
    StartedParts &operator=(StartedParts &&) noexcept;
    ~StartedParts();
};

// The runtime's start, one step after the other: read the team's policy and put its values
// into the options (on a worker thread; docs/POLICY.md), prepare the data directory (on a worker
// thread), open the ledger, open the journal, lock the data directory, read the interrupted
// turns, look up the API key. Each step ends in the next one or in failed(); ready() follows
// the last, after which takeParts() hands over what was opened. Nothing blocks the owner's
// thread; a startup destroyed half-way delivers nothing more.
class RuntimeStartup final : public QObject
{
    Q_OBJECT

public:
    explicit RuntimeStartup(const RuntimeOptions &options, QObject *parent = nullptr);
    ~RuntimeStartup() override;

    void start();
    StartedParts takeParts();

Q_SIGNALS:
    void ready();
    // A clear, one-line reason; what was opened so far stays held until the startup goes.
    void failed(const QString &reason);
    // The team's database cannot be reached (RuntimeOptions::WhenTeamUnreachable::Ask): the
    // start waits for runAlone() or giveUp().
    void teamUnreachable(const QString &reason);

public Q_SLOTS:
    // After teamUnreachable(): go on with this desk's own store, marked as alone.
    void runAlone();
    // After teamUnreachable(): stop; failed() follows with the reason.
    void giveUp();

private:
    void next();
    void fail(const QString &reason);

    // The steps, in the order next() runs them.
    void readTeamPolicy();
    void prepareDataDirectory();
    void lookUpTeamPassword();
    void openLedger();
    void openLocalLedger();
    void onTeamUnreachable(const QString &reason);
    void openJournal();
    void lockDataDirectory();
    void readInterruptedTurns();
    void lookUpApiKey();

    RuntimeOptions m_options; // with the team policy's values once it is read
    std::size_t m_nextStep = 0;
    StartedParts m_parts;
    // The team's database, read from the options once, with the keychain's password (never
    // logged); null without --team.
    std::unique_ptr<PostgresLocation> m_team;
    bool m_waitingForTeamAnswer = false;
};

} // namespace AgentConsole
