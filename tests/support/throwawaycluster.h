#pragma once

// A PostgreSQL cluster of one test's own (scripts/pg-cluster.sh), for the tests that stop the
// server mid-write: the shared cluster of scripts/test.sh serves the suites running beside
// them. Stopped (-m immediate) when it goes. Header-only; PG_CLUSTER_SCRIPT names the script.

#include <QProcess>
#include <QString>
#include <QTemporaryDir>

namespace AgentConsole::Testing {

class ThrowawayCluster
{
public:
    ThrowawayCluster() = default;
    ~ThrowawayCluster() { stop(); }
    ThrowawayCluster(const ThrowawayCluster &) = delete;
    ThrowawayCluster &operator=(const ThrowawayCluster &) = delete;

    // Starts it (made on the first start, the same data afterwards); false if it did not.
    bool start()
    {
        QString url;
        if (!run(QStringLiteral("start"), &url))
            return false;
        m_url = url;
        m_running = true;
        return true;
    }
    // Stops it at once, as a crash of the server would.
    bool stop()
    {
        if (!m_running)
            return true;
        m_running = false;
        return run(QStringLiteral("stop"), nullptr);
    }
    // The connection URL (the same after every start).
    QString url() const { return m_url; }

private:
    bool run(const QString &command, QString *out)
    {
        if (!m_dir.isValid())
            return false;
        QProcess script;
        script.start(QStringLiteral("bash"),
                     {QStringLiteral(PG_CLUSTER_SCRIPT), command, m_dir.path()});
        if (!script.waitForFinished(120'000) || script.exitStatus() != QProcess::NormalExit
            || script.exitCode() != 0) {
            qWarning("pg-cluster.sh %s: %s", qPrintable(command),
                     script.readAllStandardError().constData());
            return false;
        }
        if (out)
            *out = QString::fromUtf8(script.readAllStandardOutput()).trimmed();
        return true;
    }

    QTemporaryDir m_dir;
    QString m_url;
    bool m_running = false;
};

} // namespace AgentConsole::Testing
