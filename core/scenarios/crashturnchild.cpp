#include "crashturnchild.h"

#include "../telemetry/logging.h"

#include <QDir>
#include <QJsonDocument>
#include <QProcess>
#include <QTemporaryFile>
#include <QTimer>

namespace AgentConsole {

CrashTurnChild::CrashTurnChild(QObject *parent)
    : QObject(parent)
{
}

CrashTurnChild::~CrashTurnChild()
{
    killAndWait();
}

bool CrashTurnChild::start(const Launch &launch, QString *problem)
{
    m_launch = launch;
    QStringList arguments = launch.arguments;
    if (!launch.faults.isEmpty()) {
        m_faults = std::make_unique<QTemporaryFile>(
            QDir::temp().filePath(QStringLiteral("scenario-faults-XXXXXX.json")));
        if (!m_faults->open() || m_faults->write(QJsonDocument(launch.faults).toJson()) < 0
            || !m_faults->flush()) {
            if (problem)
                *problem = QStringLiteral("cannot write the faults for the child");
            return false;
        }
        arguments << QStringLiteral("--faults") << m_faults->fileName();
    }
    arguments << launch.question;

    m_process = std::make_unique<QProcess>();
    QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
    environment.insert(QStringLiteral("AGENT_CONSOLE_KILL_AT"), launch.killAt);
    m_process->setProcessEnvironment(environment);
    m_process->setStandardOutputFile(QProcess::nullDevice());
    connect(m_process.get(), &QProcess::readyReadStandardError, this,
            &CrashTurnChild::onStandardError);
    connect(m_process.get(), &QProcess::started, this, [this] { m_pid = m_process->processId(); });
    connect(m_process.get(), &QProcess::finished, this, &CrashTurnChild::onGone);
    connect(m_process.get(), &QProcess::errorOccurred, this,
            [this](QProcess::ProcessError failure) {
                if (failure == QProcess::FailedToStart)
                    onGone();
            });
    m_timer = std::make_unique<QTimer>();
    m_timer->setSingleShot(true);
    connect(m_timer.get(), &QTimer::timeout, this, &CrashTurnChild::kill);
    m_timer->start(launch.timeoutMs);
    qCInfo(lcAgent).noquote() << "crash turn: starting" << launch.cliPath << "to be killed at"
                              << launch.killAt;
    m_process->start(launch.cliPath, arguments);
    return true;
}

void CrashTurnChild::onStandardError()
{
    // Bounded: only the last lines matter, and the announcement is one short line.
    m_stderr.append(m_process->readAllStandardError());
    if (m_stderr.size() > 64 * 1024)
        m_stderr = m_stderr.right(32 * 1024);
    if (!m_reachedKillPoint && m_stderr.contains("agent-console: kill point")) {
        m_reachedKillPoint = true;
        qCInfo(lcAgent).noquote() << "scenario child reached its kill point; killing it";
        m_process->kill(); // SIGKILL: nothing after the point runs
    }
}

void CrashTurnChild::kill()
{
    if (m_process && m_process->state() != QProcess::NotRunning)
        m_process->kill();
}

void CrashTurnChild::killAndWait()
{
    if (!m_process || m_gone)
        return;
    m_process->disconnect(this);
    m_process->kill();
    m_process->waitForFinished(5000); // a SIGKILLed child is reaped at once
    m_gone = true;
}

void CrashTurnChild::onGone()
{
    if (m_gone)
        return;
    m_gone = true;
    m_timer.reset();
    m_failedToStart = m_process->error() == QProcess::FailedToStart;
    m_exitCode = m_process->exitCode();
    m_crashed = m_process->exitStatus() == QProcess::CrashExit;
    m_faults.reset();
    Q_EMIT gone();
}

QString CrashTurnChild::problem() const
{
    if (m_failedToStart)
        return QStringLiteral("cannot start %1").arg(m_launch.cliPath);
    if (m_reachedKillPoint)
        return {};
    const QList<QByteArray> lines = m_stderr.trimmed().split('\n');
    return QStringLiteral("the child agent-cli %1 before reaching the kill point %2%3")
        .arg(m_crashed ? QStringLiteral("crashed")
                       : QStringLiteral("exited with %1").arg(m_exitCode),
             m_launch.killAt,
             lines.constLast().isEmpty()
                 ? QString()
                 : QStringLiteral(" (%1)").arg(QString::fromUtf8(lines.constLast().left(200))));
}

} // namespace AgentConsole
