#include "supportstore.h"

#include "../telemetry/logging.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QSqlDatabase>
#include <QSqlError>
#include <QSqlQuery>
#include <QThread>
#include <QThreadStorage>

#include <atomic>
#include <memory>
#include <unordered_map>

namespace AgentConsole {
namespace {

constexpr int kSchemaVersion = 1;
std::atomic<quint64> g_nextInstance{1};

// Closes this thread's connection when the thread ends (pool threads expire when idle).
struct ThreadConnection
{
    explicit ThreadConnection(QString connection)
        : name(std::move(connection))
    {
    }
    ~ThreadConnection()
    {

        {
            QSqlDatabase db = QSqlDatabase::database(name, false);
            db.close();
        }
        QSqlDatabase::removeDatabase(name);
    }
    QString name;
};

using ThreadConnections = std::unordered_map<QString, std::unique_ptr<ThreadConnection>>;

// Not thread_local: Qt threads are detached and QThread::wait() returns before C++ thread_local
// destructors run, so those could close a connection after Qt Sql has shut down at process
// exit. QThreadStorage deletes a thread's data while the thread finishes (the main thread's
// when the application object goes), before anyone waiting on it resumes.
ThreadConnections &connectionsOfThisThread()
{
    static QThreadStorage<ThreadConnections *> storage;
    if (!storage.hasLocalData())
        storage.setLocalData(new ThreadConnections); // owned and deleted by the storage
    return *storage.localData();
}

QString inventoryStatus(int available, int threshold)
{
    if (available <= 0)
        return QStringLiteral("OUT_OF_STOCK");
    if (available <= threshold)
        return QStringLiteral("LOW_STOCK");
    return QStringLiteral("IN_STOCK");
}

} // namespace

SupportStore::SupportStore(const QString &filePath)
    : m_filePath(filePath)
    , m_instance(g_nextInstance++)
{
}

SupportStore::~SupportStore() = default;

QString SupportStore::threadConnectionName() const
{
    return QStringLiteral("support-store-%1-%2")
        .arg(m_instance)
        .arg(quintptr(QThread::currentThreadId()), 0, 16);
}

QString SupportStore::connectionName() const
{
    const QString name = threadConnectionName();
    ThreadConnections &connections = connectionsOfThisThread();
    if (connections.find(name) == connections.end()) {
        QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), name);
        db.setDatabaseName(m_filePath);
        db.setConnectOptions(QStringLiteral("QSQLITE_BUSY_TIMEOUT=2000"));
        connections.emplace(name, std::make_unique<ThreadConnection>(name));
    }
    return name;
}

void SupportStore::releaseThreadConnection() const
{
    connectionsOfThisThread().erase(threadConnectionName());
}

bool SupportStore::prepare(QString *error)
{
    const auto fail = [error](const QString &reason) {
        if (error)
            *error = reason;
        return false;
    };
    const QFileInfo info(m_filePath);
    if (!QDir().mkpath(info.absolutePath()))
        return fail(QStringLiteral("cannot create the data directory %1").arg(info.absolutePath()));
    const bool isNew = !info.exists() || info.size() == 0;

    QSqlDatabase db = QSqlDatabase::database(connectionName());
    if (!db.isOpen())
        return fail(QStringLiteral("cannot open the store %1: %2")
                        .arg(m_filePath, db.lastError().text()));
    QSqlQuery query(db);
    query.exec(QStringLiteral("PRAGMA journal_mode=WAL"));
    query.exec(QStringLiteral("PRAGMA foreign_keys=ON"));
    if (!query.exec(QStringLiteral("PRAGMA user_version")) || !query.next())
        return fail(QStringLiteral("the store %1 is not a readable SQLite database").arg(m_filePath));
    const int version = query.value(0).toInt();
    if (!isNew && version == kSchemaVersion)
        return true;
    if (!isNew && version != 0)
        return fail(QStringLiteral("the store %1 has schema version %2; this build knows %3")
                        .arg(m_filePath)
                        .arg(version)
                        .arg(kSchemaVersion));

    QFile script(QStringLiteral(":/agentconsole/data/demo-store.sql"));
    if (!script.open(QIODevice::ReadOnly))
        return fail(QStringLiteral("the demo data is missing from this build"));
    const QString sql = QString::fromUtf8(script.readAll());

    if (!db.transaction())
        return fail(QStringLiteral("cannot write the store: %1").arg(db.lastError().text()));
    QString statement;
    const QStringList lines = sql.split(QLatin1Char('\n'));
    for (const QString &line : lines) {
        if (line.trimmed().startsWith(QLatin1String("--")))
            continue;
        statement += line + QLatin1Char('\n');
        if (!line.trimmed().endsWith(QLatin1Char(';')))
            continue;
        if (!query.exec(statement)) {
            const QString reason = query.lastError().text();
            db.rollback();
            return fail(QStringLiteral("cannot create the demo store: %1").arg(reason));
        }
        statement.clear();
    }
    query.exec(QStringLiteral("PRAGMA user_version = %1").arg(kSchemaVersion));
    if (!db.commit())
        return fail(QStringLiteral("cannot write the store: %1").arg(db.lastError().text()));
    qCInfo(lcTools) << "created the demo store" << m_filePath;
    return true;
}

std::optional<StaffMember> SupportStore::staffMember(const QString &userId) const
{
    QSqlQuery query(QSqlDatabase::database(connectionName()));
    query.prepare(QStringLiteral(
        "SELECT user_id, tenant_id, display_name FROM staff WHERE user_id = ?"));
    query.addBindValue(userId);
    if (!query.exec() || !query.next())
        return std::nullopt;
    return StaffMember{query.value(0).toString(), query.value(1).toString(),
                       query.value(2).toString()};
}

std::optional<StaffMember> SupportStore::firstStaffMember(const QString &tenantId) const
{
    QSqlQuery query(QSqlDatabase::database(connectionName()));
    if (tenantId.isEmpty()) {
        query.prepare(QStringLiteral("SELECT s.user_id, s.tenant_id, s.display_name FROM staff s "
                                     "JOIN tenants t ON t.tenant_id = s.tenant_id "
                                     "ORDER BY t.rowid, s.rowid LIMIT 1"));
    } else {
        query.prepare(QStringLiteral("SELECT user_id, tenant_id, display_name FROM staff "
                                     "WHERE tenant_id = ? ORDER BY rowid LIMIT 1"));
        query.addBindValue(tenantId);
    }
    if (!query.exec() || !query.next())
        return std::nullopt;
    return StaffMember{query.value(0).toString(), query.value(1).toString(),
                       query.value(2).toString()};
}

StoreAnswer SupportStore::order(const QString &tenantId, const QString &orderId) const
{
    const QSqlDatabase db = QSqlDatabase::database(connectionName());
    QSqlQuery query(db);
    query.prepare(QStringLiteral("SELECT order_id, status, created_at, total_amount, currency "
                                 "FROM orders WHERE tenant_id = ? AND order_id = ?"));
    query.addBindValue(tenantId);
    query.addBindValue(orderId);
    if (!query.exec())
        return StoreAnswer::failed(query.lastError().text());
    if (!query.next())
        return StoreAnswer::notFound();
    QJsonObject data{{QStringLiteral("orderId"), query.value(0).toString()},
                     {QStringLiteral("status"), query.value(1).toString()},
                     {QStringLiteral("createdAt"), query.value(2).toString()},
                     {QStringLiteral("totalAmount"), query.value(3).toString()},
                     {QStringLiteral("currency"), query.value(4).toString()}};
    QSqlQuery items(db);
    items.prepare(QStringLiteral("SELECT sku, name, quantity FROM order_items "
                                 "WHERE order_id = ? ORDER BY rowid"));
    items.addBindValue(orderId);
    if (!items.exec())
        return StoreAnswer::failed(items.lastError().text());
    QJsonArray list;
    while (items.next()) {
        list.append(QJsonObject{{QStringLiteral("sku"), items.value(0).toString()},
                                {QStringLiteral("name"), items.value(1).toString()},
                                {QStringLiteral("quantity"), items.value(2).toInt()}});
    }
    data.insert(QStringLiteral("items"), list);
    return StoreAnswer::found(data);
}

StoreAnswer SupportStore::logistics(const QString &tenantId, const QString &orderId) const
{
    const QSqlDatabase db = QSqlDatabase::database(connectionName());
    QSqlQuery query(db);
    // Joined through orders so that another tenant's shipment is indistinguishable from none.
    query.prepare(QStringLiteral(
        "SELECT s.order_id, s.carrier, s.tracking_number, s.status, s.current_location, "
        "s.updated_at FROM shipments s JOIN orders o ON o.order_id = s.order_id "
        "WHERE o.tenant_id = ? AND s.order_id = ?"));
    query.addBindValue(tenantId);
    query.addBindValue(orderId);
    if (!query.exec())
        return StoreAnswer::failed(query.lastError().text());
    if (!query.next())
        return StoreAnswer::notFound();
    QJsonObject data{{QStringLiteral("orderId"), query.value(0).toString()},
                     {QStringLiteral("carrier"), query.value(1).toString()},
                     {QStringLiteral("trackingNumber"), query.value(2).toString()},
                     {QStringLiteral("status"), query.value(3).toString()},
                     {QStringLiteral("currentLocation"), query.value(4).toString()},
                     {QStringLiteral("updatedAt"), query.value(5).toString()}};
    QSqlQuery events(db);
    events.prepare(QStringLiteral("SELECT happened_at, location, description "
                                  "FROM shipment_events WHERE order_id = ? ORDER BY happened_at"));
    events.addBindValue(orderId);
    if (!events.exec())
        return StoreAnswer::failed(events.lastError().text());
    QJsonArray list;
    while (events.next()) {
        list.append(QJsonObject{{QStringLiteral("time"), events.value(0).toString()},
                                {QStringLiteral("location"), events.value(1).toString()},
                                {QStringLiteral("description"), events.value(2).toString()}});
    }
    data.insert(QStringLiteral("events"), list);
    return StoreAnswer::found(data);
}

StoreAnswer SupportStore::inventory(const QString &tenantId, const QString &sku) const
{
    QSqlQuery query(QSqlDatabase::database(connectionName()));
    query.prepare(QStringLiteral("SELECT sku, name, available, low_stock_threshold, warehouse "
                                 "FROM inventory WHERE tenant_id = ? AND sku = ?"));
    query.addBindValue(tenantId);
    query.addBindValue(sku);
    if (!query.exec())
        return StoreAnswer::failed(query.lastError().text());
    if (!query.next())
        return StoreAnswer::notFound();
    const int available = query.value(2).toInt();
    return StoreAnswer::found(
        QJsonObject{{QStringLiteral("sku"), query.value(0).toString()},
                    {QStringLiteral("name"), query.value(1).toString()},
                    {QStringLiteral("available"), available},
                    {QStringLiteral("status"), inventoryStatus(available, query.value(3).toInt())},
                    {QStringLiteral("warehouse"), query.value(4).toString()}});
}

} // namespace AgentConsole
