#include "testdatabases.h"

#include "core/ledger/postgresledger.h"

#include <QCoreApplication>
#include <QDebug>
#include <QSqlDatabase>
#include <QSqlError>
#include <QSqlQuery>
#include <QUrl>

#include <optional>

namespace AgentConsole::Testing {

TestDatabases::TestDatabases(const QString &prefix)
    : m_prefix(prefix)
    , m_connection(QStringLiteral("test-databases-admin-") + prefix)
{
}

TestDatabases::~TestDatabases()
{
    dropAll();
    QSqlDatabase::removeDatabase(m_connection);
}

QString TestDatabases::variable()
{
    return QStringLiteral("AGENT_CONSOLE_TEST_PG");
}

QString TestDatabases::openAdmin(const QString &url)
{
    if (QSqlDatabase::contains(m_connection))
        return {};
    QString error;
    const std::optional<PostgresLocation> location = PostgresLocation::fromUrl(url, &error);
    if (!location)
        return variable() + QStringLiteral(": ") + error;
    QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QPSQL"), m_connection);
    db.setHostName(location->host);
    db.setPort(location->port);
    db.setUserName(location->userName);
    db.setPassword(location->password);
    db.setDatabaseName(location->database);
    if (!db.open()) {
        const QString reason = QStringLiteral("cannot connect to %1 (%2): %3")
                                   .arg(variable(), location->safeName(), db.lastError().text());
        db = QSqlDatabase();
        QSqlDatabase::removeDatabase(m_connection);
        return reason;
    }
    return {};
}

QString TestDatabases::create(QString *error)
{
    const auto fail = [error](const QString &reason) {
        if (error)
            *error = reason;
        return QString();
    };
    const QString url = qEnvironmentVariable(qPrintable(variable()));
    if (url.isEmpty())
        return fail(variable() + QStringLiteral(" is not set: PostgreSQL cannot be tested. Run "
                                                "the suites through scripts/test.sh, which "
                                                "starts a throwaway PostgreSQL cluster and "
                                                "sets it."));
    if (const QString reason = openAdmin(url); !reason.isEmpty())
        return fail(reason);
    const QString name = QStringLiteral("%1_%2_%3")
                             .arg(m_prefix)
                             .arg(QCoreApplication::applicationPid())
                             .arg(++m_counter);
    QSqlQuery query(QSqlDatabase::database(m_connection));
    if (!query.exec(QStringLiteral("CREATE DATABASE ") + name))
        return fail(QStringLiteral("CREATE DATABASE failed: ") + query.lastError().text());
    m_databases.append(name);
    QUrl database(url);
    database.setPath(QLatin1Char('/') + name);
    return database.toString();
}

void TestDatabases::dropAll()
{
    if (!QSqlDatabase::contains(m_connection)) {
        m_databases.clear();
        return;
    }
    QSqlQuery query(QSqlDatabase::database(m_connection));
    for (const QString &name : std::as_const(m_databases)) {
        if (!query.exec(QStringLiteral("DROP DATABASE IF EXISTS %1 WITH (FORCE)").arg(name)))
            qWarning() << "could not drop" << name << query.lastError().text();
    }
    m_databases.clear();
}

} // namespace AgentConsole::Testing
