#include "isolationstore.h"

#include "teamschema.h"

#include "../../telemetry/logging.h"

#include <QAtomicInteger>
#include <QSocketNotifier>
#include <QSqlDatabase>
#include <QSqlDriver>
#include <QSqlError>
#include <QSqlQuery>
#include <QThread>
#include <QTimer>

#include <algorithm>

namespace AgentConsole::Internal {

namespace {

QAtomicInteger<quint64> connectionCounter;

// SQLSTATEs the writes answer with (PostgreSQL's appendix A).
const QString InsufficientPrivilege = QStringLiteral("42501");
const QString CheckViolation = QStringLiteral("23514");

} // namespace

// Lives on the store's thread: the connection, its notifier, the heartbeat and the backoff.
class IsolationWorker final : public QObject
{
    Q_OBJECT

public:
    explicit IsolationWorker(const IsolationStore::Options &options)
        : m_options(options)
        , m_connectionName(QStringLiteral("team-isolations-%1").arg(++connectionCounter))
    {
        m_heartbeat.setInterval(int(m_options.heartbeat.count()));
        connect(&m_heartbeat, &QTimer::timeout, this, [this] { readNow(); });
        m_retry.setSingleShot(true);
        connect(&m_retry, &QTimer::timeout, this, &IsolationWorker::open);
        m_read.setSingleShot(true);
        m_read.setInterval(0);
        connect(&m_read, &QTimer::timeout, this, &IsolationWorker::readNow);
    }

    ~IsolationWorker() override { close(); }

    void open();
    void isolate(quint64 request, const BreakerIsolation &isolation);
    void lift(quint64 request, const QString &dependency, const QString &staffId);

Q_SIGNALS:
    void connected(bool lead, const QString &role);
    void disconnected(const QString &detail);
    void isolationsRead(const QList<AgentConsole::BreakerIsolation> &isolations);
    void written(quint64 request, AgentConsole::Internal::IsolationStore::WriteOutcome outcome,
                 const QString &detail);

private:
    bool isOpen() const { return QSqlDatabase::contains(m_connectionName) && m_open; }
    QSqlDatabase db() const { return QSqlDatabase::database(m_connectionName, false); }
    bool prepareSchema(QSqlDatabase &db, QString *detail);
    bool connectNow(QString *detail, bool *lead, QString *role);
    void readNow();
    void lost(const QString &detail);
    void close();
    void answer(quint64 request, const QSqlError &error);

    const IsolationStore::Options m_options;
    const QString m_connectionName;
    bool m_open = false;
    QTimer m_heartbeat{this};
    QTimer m_retry{this};
    QTimer m_read{this};
    std::chrono::milliseconds m_backoff{0};
};

bool IsolationWorker::prepareSchema(QSqlDatabase &database, QString *detail)
{
    // A staff role may not create the version table (PUBLIC has no CREATE on schema public
    // since PostgreSQL 15): a database already at the newest version is not migrated again.
    const QList<SchemaMigration> migrations = teamControlMigrations();
    QSqlQuery query(database);
    if (query.exec(QStringLiteral("SELECT to_regclass('%1') IS NOT NULL")
                       .arg(QLatin1String(TeamSchemaVersionTable)))
        && query.next() && query.value(0).toBool()
        && query.exec(QStringLiteral("SELECT COALESCE(MAX(version), 0) FROM %1")
                          .arg(QLatin1String(TeamSchemaVersionTable)))
        && query.next() && query.value(0).toInt() >= migrations.constLast().version) {
        if (query.value(0).toInt() > migrations.constLast().version)
            qCWarning(lcLedger).noquote() << "team database: schema version"
                                          << query.value(0).toInt() << "is newer than this "
                                          << "console's; isolations are read as they are";
        return true;
    }
    const MigrationResult migrated = migrateSchema(database, SqlDialect::Postgres, migrations,
                                                   QLatin1String(TeamSchemaVersionTable));
    if (migrated.outcome == MigrationResult::Outcome::Failed) {
        *detail = QStringLiteral("team schema migration failed: ") + migrated.detail;
        return false;
    }
    return true;
}

bool IsolationWorker::connectNow(QString *detail, bool *lead, QString *role)
{
    const PostgresLocation &where = m_options.location;
    QSqlDatabase database = QSqlDatabase::addDatabase(QStringLiteral("QPSQL"), m_connectionName);
    database.setHostName(where.host);
    database.setPort(where.port);
    database.setUserName(where.userName);
    database.setPassword(where.password);
    database.setDatabaseName(where.database);
    database.setConnectOptions(
        QStringLiteral("connect_timeout=%1;keepalives=1;keepalives_idle=5;"
                       "keepalives_interval=2;keepalives_count=3")
            .arg(std::max<qint64>(1, m_options.connectTimeout.count() / 1000)));
    if (!database.open()) {
        *detail = database.lastError().text();
        return false;
    }
    QSqlQuery query(database);
    for (const char *statement :
         {"SET client_min_messages = warning", "SET statement_timeout = 5000"}) {
        if (!query.exec(QLatin1String(statement))) {
            *detail = query.lastError().text();
            return false;
        }
    }
    if (!prepareSchema(database, detail))
        return false;
    if (!query.exec(QStringLiteral("SELECT session_user, "
                                   "pg_has_role(session_user, 'agentconsole_lead', 'MEMBER')"))
        || !query.next()) {
        *detail = query.lastError().text();
        return false;
    }
    *role = query.value(0).toString();
    *lead = query.value(1).toBool();
    if (!database.driver()->subscribeToNotification(QLatin1String(IsolationChannel))) {
        *detail = QStringLiteral("LISTEN failed: ") + database.driver()->lastError().text();
        return false;
    }
    // Whatever the connection says (a notification, or its end) leads to a read: the read
    // sees the change, or fails and the connection is opened again. Coalesced: one read for
    // a burst.
    connect(database.driver(), &QSqlDriver::notification, &m_read, qOverload<>(&QTimer::start));
    if (auto *notifier = database.driver()->findChild<QSocketNotifier *>())
        connect(notifier, &QSocketNotifier::activated, &m_read, qOverload<>(&QTimer::start));
    return true;
}

void IsolationWorker::open()
{
    close();
    QString detail;
    QString role;
    bool lead = false;
    if (!connectNow(&detail, &lead, &role)) {
        close();
        lost(QStringLiteral("team database %1: %2").arg(m_options.location.safeName(), detail));
        return;
    }
    m_open = true;
    qCInfo(lcLedger).noquote() << "team database" << m_options.location.safeName()
                               << "connected as" << role << (lead ? "(lead)" : "(staff)");
    m_backoff = std::chrono::milliseconds{0};
    Q_EMIT connected(lead, role);
    m_heartbeat.start();
    readNow();
}

void IsolationWorker::readNow()
{
    if (!isOpen())
        return;
    QList<BreakerIsolation> isolations;
    bool read = false;
    QString failure;
    {
        QSqlQuery query(db());
        query.setForwardOnly(true);
        if (query.exec(QStringLiteral(
                "SELECT dependency, reason, lead_staff_id, lead_role, isolated_at, until "
                "FROM team_isolations WHERE lifted_at IS NULL ORDER BY dependency"))) {
            while (query.next()) {
                BreakerIsolation isolation;
                isolation.dependency = query.value(0).toString();
                isolation.reason = query.value(1).toString();
                isolation.leadStaffId = query.value(2).toString();
                isolation.leadRole = query.value(3).toString();
                isolation.since = query.value(4).toDateTime().toUTC();
                if (!query.value(5).isNull())
                    isolation.until = query.value(5).toDateTime().toUTC();
                isolations.append(isolation);
            }
            read = query.lastError().type() == QSqlError::NoError;
        }
        // A connection that died says "database not open" with no error text of its own.
        failure = query.lastError().text();
    }
    if (!read) {
        lost(QStringLiteral("reading the isolations: ")
             + (failure.isEmpty() ? QStringLiteral("the connection is closed") : failure));
        return;
    }
    Q_EMIT isolationsRead(isolations);
}

void IsolationWorker::lost(const QString &detail)
{
    const bool wasOpen = m_open;
    close();
    m_backoff = m_backoff.count() == 0 ? m_options.firstBackoff
                                       : std::min(m_options.maxBackoff, m_backoff * 2);
    qCWarning(lcLedger).noquote() << QStringLiteral("%1%2; trying again in %3 ms")
                                         .arg(detail,
                                              wasOpen ? QStringLiteral("; connection lost")
                                                      : QString())
                                         .arg(m_backoff.count());
    m_retry.start(int(m_backoff.count()));
    Q_EMIT disconnected(detail);
}

void IsolationWorker::close()
{
    m_heartbeat.stop();
    m_read.stop();
    m_open = false;
    if (QSqlDatabase::contains(m_connectionName)) {
        {
            QSqlDatabase database = db();
            if (QSqlDriver *driver = database.driver()) {
                driver->disconnect(&m_read);
                for (QSocketNotifier *notifier : driver->findChildren<QSocketNotifier *>())
                    notifier->disconnect(&m_read);
            }
            database.close();
        }
        QSqlDatabase::removeDatabase(m_connectionName);
    }
}

void IsolationWorker::answer(quint64 request, const QSqlError &error)
{
    using Outcome = IsolationStore::WriteOutcome;
    const QString code = error.nativeErrorCode();
    const QString detail = error.text();
    if (code == InsufficientPrivilege) {
        Q_EMIT written(request, Outcome::NotLead, detail);
        return;
    }
    if (code == CheckViolation && detail.contains(QLatin1String("ends_later"))) {
        Q_EMIT written(request, Outcome::EndTimePassed, detail);
        return;
    }
    Q_EMIT written(request, Outcome::Unavailable, detail);
    // The connection may be gone: the read says so, and opens it again.
    m_read.start();
}

void IsolationWorker::isolate(quint64 request, const BreakerIsolation &isolation)
{
    using Outcome = IsolationStore::WriteOutcome;
    if (!isOpen()) {
        Q_EMIT written(request, Outcome::Unavailable, QStringLiteral("not connected"));
        return;
    }
    QSqlDatabase database = db();
    QSqlQuery query(database);
    const auto fail = [&](const QSqlError &error) {
        QSqlQuery(database).exec(QStringLiteral("ROLLBACK"));
        answer(request, error);
    };
    if (!query.exec(QStringLiteral("BEGIN")))
        return fail(query.lastError());
    // An isolation in force is replaced: lifted by the same lead, in the same transaction.
    query.prepare(QStringLiteral("UPDATE team_isolations SET lifted_by_staff_id = ? "
                                 "WHERE dependency = ? AND lifted_at IS NULL"));
    query.addBindValue(isolation.leadStaffId);
    query.addBindValue(isolation.dependency);
    if (!query.exec())
        return fail(query.lastError());
    query.prepare(QStringLiteral("INSERT INTO team_isolations "
                                 "(dependency, reason, lead_staff_id, lead_role, isolated_at, "
                                 "until) VALUES (?, ?, ?, session_user, now(), ?)"));
    query.addBindValue(isolation.dependency);
    query.addBindValue(isolation.reason);
    query.addBindValue(isolation.leadStaffId);
    query.addBindValue(isolation.until.isValid() ? QVariant(isolation.until.toUTC())
                                                 : QVariant(QMetaType(QMetaType::QDateTime)));
    if (!query.exec())
        return fail(query.lastError());
    if (!query.exec(QStringLiteral("COMMIT")))
        return fail(query.lastError());
    Q_EMIT written(request, Outcome::Done, {});
    m_read.start();
}

void IsolationWorker::lift(quint64 request, const QString &dependency, const QString &staffId)
{
    using Outcome = IsolationStore::WriteOutcome;
    if (!isOpen()) {
        Q_EMIT written(request, Outcome::Unavailable, QStringLiteral("not connected"));
        return;
    }
    QSqlQuery query(db());
    query.prepare(QStringLiteral("UPDATE team_isolations SET lifted_by_staff_id = ? "
                                 "WHERE dependency = ? AND lifted_at IS NULL"));
    query.addBindValue(staffId);
    query.addBindValue(dependency);
    if (!query.exec())
        return answer(request, query.lastError());
    if (query.numRowsAffected() == 0)
        Q_EMIT written(request, Outcome::NotIsolated, {});
    else
        Q_EMIT written(request, Outcome::Done, {});
    m_read.start();
}

IsolationStore::IsolationStore(const Options &options, QObject *parent)
    : QObject(parent)
    , m_thread(std::make_unique<QThread>())
    , m_worker(new IsolationWorker(options))
{
    m_thread->setObjectName(QStringLiteral("team-isolations"));
    m_worker->moveToThread(m_thread.get());
    connect(m_worker, &IsolationWorker::connected, this, &IsolationStore::connected);
    connect(m_worker, &IsolationWorker::disconnected, this, &IsolationStore::disconnected);
    connect(m_worker, &IsolationWorker::isolationsRead, this, &IsolationStore::isolationsRead);
    connect(m_worker, &IsolationWorker::written, this, &IsolationStore::written);
    m_thread->start();
}

IsolationStore::~IsolationStore()
{
    // The worker (and its connection) go on their own thread, then the thread stops.
    QMetaObject::invokeMethod(
        m_worker,
        [worker = m_worker, thread = m_thread.get()] {
            delete worker;
            thread->quit();
        },
        Qt::QueuedConnection);
    // A statement or a connection attempt under way ends within libpq's connect timeout (5 s):
    // waited out, so that the thread never outlives the process's teardown (a thread still
    // running then crashed agent-cli under load, tst_teamproof). Beyond that, it is left to end
    // by itself and is deleted then.
    if (m_thread->wait(QDeadlineTimer(6000)))
        return;
    qCWarning(lcLedger)
        << "the team isolations' thread did not end within 6 s; it is left to end by itself";
    QThread *thread = m_thread.release();
    connect(thread, &QThread::finished, thread, &QObject::deleteLater);
    if (thread->isFinished())
        thread->deleteLater();
}

void IsolationStore::start()
{
    QMetaObject::invokeMethod(m_worker, &IsolationWorker::open, Qt::QueuedConnection);
}

quint64 IsolationStore::isolate(const BreakerIsolation &isolation)
{
    const quint64 request = ++m_lastRequest;
    QMetaObject::invokeMethod(
        m_worker, [worker = m_worker, request, isolation] { worker->isolate(request, isolation); },
        Qt::QueuedConnection);
    return request;
}

quint64 IsolationStore::lift(const QString &dependency, const QString &staffId)
{
    const quint64 request = ++m_lastRequest;
    QMetaObject::invokeMethod(
        m_worker,
        [worker = m_worker, request, dependency, staffId] {
            worker->lift(request, dependency, staffId);
        },
        Qt::QueuedConnection);
    return request;
}

} // namespace AgentConsole::Internal

#include "isolationstore.moc"
