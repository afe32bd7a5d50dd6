#pragma once

#include <QByteArray>
#include <QJsonObject>
#include <QObject>
#include <QString>
#include <QStringList>

#include <memory>

class QProcess;
class QTemporaryFile;
class QTimer;

namespace AgentConsole {

// A scenario's crash turn as it runs in a child agent-cli (docs/SCENARIOS.md, "Crash turns"):
// started with the scenario's faults (in a temporary file it owns) and AGENT_CONSOLE_KILL_AT,
// killed (SIGKILL) as soon as it announces the kill point, as tst_crashinjection does, and
// killed too when it outlives its time limit. gone() follows once, however it ended; then
// reachedKillPoint() and problem() say how.
class CrashTurnChild final : public QObject
{
    Q_OBJECT

public:
    struct Launch
    {
        QString cliPath;
        QStringList arguments; // everything but the faults and the question
        QJsonObject faults; // none when empty
        QString question;
        QString killAt; // a kill point name (telemetry/killpoint.h)
        int timeoutMs = 30'000;
    };

    explicit CrashTurnChild(QObject *parent = nullptr);
    // A child still running is killed and reaped, without gone().
    ~CrashTurnChild() override;

    // False, with the reason, when the faults could not be written (nothing was started).
    bool start(const Launch &launch, QString *problem);
    // Ends the child at once (SIGKILL); gone() follows.
    void kill();

    bool reachedKillPoint() const { return m_reachedKillPoint; }
    qint64 pid() const { return m_pid; }
    // Empty when the child reached its kill point; else why the crash did not happen as
    // planned (could not start, crashed or exited first, with its last stderr line).
    QString problem() const;

Q_SIGNALS:
    void gone();

private:
    void killAndWait();
    void onStandardError();
    void onGone();

    Launch m_launch;
    std::unique_ptr<QProcess> m_process;
    std::unique_ptr<QTimer> m_timer;
    std::unique_ptr<QTemporaryFile> m_faults;
    QByteArray m_stderr;
    bool m_reachedKillPoint = false;
    bool m_failedToStart = false;
    bool m_crashed = false;
    bool m_gone = false;
    int m_exitCode = 0;
    qint64 m_pid = 0;
};

} // namespace AgentConsole
