#pragma once

#include <QString>
#include <QStringList>

namespace AgentConsole::Testing {

// Fresh, empty PostgreSQL databases on the cluster that scripts/test.sh starts and names in
// AGENT_CONSOLE_TEST_PG, one per test, so that runs and suites never share rows. Dropped by
// dropAll() and when the object goes.
class TestDatabases final
{
public:
    // `prefix` names the databases (prefix_<pid>_<n>): the pid keeps suites that ctest runs
    // in parallel on one cluster apart.
    explicit TestDatabases(const QString &prefix);
    ~TestDatabases();
    TestDatabases(const TestDatabases &) = delete;
    TestDatabases &operator=(const TestDatabases &) = delete;

    static QString variable(); // "AGENT_CONSOLE_TEST_PG"

    // A postgresql:// URL of a new database; empty, with the reason in *error, when there is
    // none (the variable not set: the message says to run the suites through scripts/test.sh).
    QString create(QString *error);
    void dropAll();

private:
    QString openAdmin(const QString &url);

    QString m_prefix;
    QString m_connection;
    int m_counter = 0;
    QStringList m_databases;
};

} // namespace AgentConsole::Testing
