#include "supportstore.h"

#include "chinesefields.h"
#include "supportfailures.h"
#include "ticketrequest.h"

#include "../telemetry/logging.h"

#include <QCoreApplication>
#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QSqlDatabase>
#include <QSqlError>
#include <QSqlQuery>
#include <QThread>
#include <QThreadStorage>

#include <array>
#include <atomic>
#include <memory>
#include <unordered_map>

namespace AgentConsole {
namespace {

// Why the store cannot be used, in the window's language (docs/TRANSLATIONS.md); agent-cli
// installs no translator and keeps the English source.
struct StoreWords
{
    Q_DECLARE_TR_FUNCTIONS(AgentConsole::SupportStore)
};

// Each step brings the schema from the version before it to `version`, in the transaction of
// prepare(). A new store runs all of them; an older file only the ones it lacks.
struct Migration
{
    int version;
    const char *script;
};
constexpr std::array<Migration, 3> kMigrations{{
    {1, ":/agentconsole/data/demo-store.sql"},
    {2, ":/agentconsole/data/store-v2-tickets.sql"},
    {3, ":/agentconsole/data/store-v3-chinese.sql"},
}};
static_assert(kMigrations.back().version == SupportStore::kSchemaVersion);

constexpr auto kTicketColumns = "ticket_id, order_id, category, description, status, created_at, "
                                "idempotency_key, created_by";

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

std::optional<int> schemaVersion(const QSqlDatabase &db)
{
    QSqlQuery query(db);
    if (!query.exec(QStringLiteral("PRAGMA user_version")) || !query.next())
        return std::nullopt;
    return query.value(0).toInt();
}

void rollback(const QSqlDatabase &db)
{
    QSqlQuery(db).exec(QStringLiteral("ROLLBACK"));
}

// Runs a schema script from the resources, statement by statement (each ends with a semicolon
// at the end of a line; lines starting with "--" are comments).
bool runScript(const QSqlDatabase &db, const QString &resource, QString *error)
{
    QFile script(resource);
    if (!script.open(QIODevice::ReadOnly)) {
        *error = QStringLiteral("%1 is missing from this build").arg(resource);
        return false;
    }
    QSqlQuery query(db);
    QString statement;
    const QStringList lines = QString::fromUtf8(script.readAll()).split(QLatin1Char('\n'));
    for (const QString &line : lines) {
        if (line.trimmed().startsWith(QLatin1String("--")))
            continue;
        statement += line + QLatin1Char('\n');
        if (!line.trimmed().endsWith(QLatin1Char(';')))
            continue;
        if (!query.exec(statement)) {
            *error = query.lastError().text();
            return false;
        }
        statement.clear();
    }
    return true;
}

// A value in words and its Chinese (chinesefields.h): the sibling only where the store has one.
void insertWords(QJsonObject &object, QLatin1String key, const QVariant &english,
                 const QVariant &chinese)
{
    object.insert(key, english.toString());
    if (const QString zh = chinese.toString(); !zh.isEmpty())
        object.insert(ChineseFields::keyFor(key), zh);
}

QJsonObject ticketJson(const QSqlQuery &row)
{
    return QJsonObject{{QStringLiteral("ticketId"), row.value(0).toString()},
                       {QStringLiteral("orderId"), row.value(1).toString()},
                       {QStringLiteral("category"), row.value(2).toString()},
                       {QStringLiteral("description"), row.value(3).toString()},
                       {QStringLiteral("status"), row.value(4).toString()},
                       {QStringLiteral("createdAt"), row.value(5).toString()},
                       {QStringLiteral("idempotencyKey"), row.value(6).toString()},
                       {QStringLiteral("createdBy"), row.value(7).toString()}};
}

StoreAnswer ticketOf(const QSqlDatabase &db, const QString &tenantId, const QString &key)
{
    QSqlQuery query(db);
    query.prepare(QStringLiteral("SELECT %1 FROM tickets WHERE tenant_id = ? "
                                 "AND idempotency_key = ?")
                      .arg(QLatin1String(kTicketColumns)));
    query.addBindValue(tenantId);
    query.addBindValue(key);
    if (!query.exec())
        return StoreAnswer::failed(query.lastError().text());
    if (!query.next())
        return StoreAnswer::notFound();
    return StoreAnswer::found(ticketJson(query));
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
        return fail(
            StoreWords::tr("cannot create the data directory %1").arg(info.absolutePath()));

    QSqlDatabase db = QSqlDatabase::database(connectionName());
    if (!db.isOpen())
        return fail(
            StoreWords::tr("cannot open the store %1: %2").arg(m_filePath, db.lastError().text()));
    QSqlQuery query(db);
    query.exec(QStringLiteral("PRAGMA journal_mode=WAL")); // not inside a transaction
    query.exec(QStringLiteral("PRAGMA foreign_keys=ON"));
    const std::optional<int> seen = schemaVersion(db);
    if (!seen)
        return fail(
            StoreWords::tr("the store %1 is not a readable SQLite database").arg(m_filePath));
    if (*seen == kSchemaVersion) {
        // A file whose pages are damaged still has a readable header: without this check its
        // first failed lookup would read as "no staff members" or "not found".
        if (query.exec(QStringLiteral("PRAGMA quick_check(1)")) && query.next()
            && query.value(0).toString() == QLatin1String("ok"))
            return true;
        qCWarning(lcTools).noquote() << "the store" << m_filePath << "failed its page check:"
                                     << (query.lastError().isValid() ? query.lastError().text()
                                                                     : query.value(0).toString());
        return fail(StoreWords::tr("the store %1 is damaged (its pages do not read back); "
                                   "restore it from a backup, or move it aside to start with "
                                   "the demo data (its tickets are then lost)")
                        .arg(m_filePath));
    }
    const auto unknownVersion = [&](int version) {
        return fail(StoreWords::tr("the store %1 has schema version %2; this build knows %3")
                        .arg(m_filePath)
                        .arg(version)
                        .arg(kSchemaVersion));
    };
    if (*seen < 0 || *seen > kSchemaVersion)
        return unknownVersion(*seen);

    // Another process (a second console, support-sim on the same file) may be preparing the
    // same file: take the write lock first, then look at the version again under it.
    if (!query.exec(QStringLiteral("BEGIN IMMEDIATE")))
        return fail(StoreWords::tr("cannot write the store %1: %2")
                        .arg(m_filePath, query.lastError().text()));
    const std::optional<int> version = schemaVersion(db);
    if (!version || *version < 0 || *version > kSchemaVersion) {
        rollback(db);
        return version
            ? unknownVersion(*version)
            : fail(
                StoreWords::tr("the store %1 is not a readable SQLite database").arg(m_filePath));
    }
    QString reason;
    if (!migrate(*version, &reason)) {
        rollback(db);
        return fail(StoreWords::tr("cannot bring the store %1 from schema version %2 to %3: %4")
                        .arg(m_filePath)
                        .arg(*version)
                        .arg(kSchemaVersion)
                        .arg(reason));
    }
    if (!query.exec(QStringLiteral("COMMIT"))) {
        const QString commitError = query.lastError().text();
        rollback(db);
        return fail(StoreWords::tr("cannot write the store %1: %2").arg(m_filePath, commitError));
    }
    if (*version == 0)
        qCInfo(lcTools) << "created the demo store" << m_filePath;
    else
        qCInfo(lcTools) << "upgraded the store" << m_filePath << "from schema version" << *version
                        << "to" << kSchemaVersion;
    return true;
}

bool SupportStore::migrate(int fromVersion, QString *error)
{
    QSqlDatabase db = QSqlDatabase::database(connectionName());
    for (const Migration &migration : kMigrations) {
        if (migration.version <= fromVersion)
            continue;
        if (!runScript(db, QString::fromLatin1(migration.script), error))
            return false;
    }
    // Inside the transaction: a failed upgrade leaves the old version number too.
    QSqlQuery query(db);
    if (!query.exec(QStringLiteral("PRAGMA user_version = %1").arg(kSchemaVersion))) {
        *error = query.lastError().text();
        return false;
    }
    return true;
}

std::optional<StaffMember> SupportStore::staffMember(const QString &userId) const
{
    QSqlQuery query(QSqlDatabase::database(connectionName()));
    query.prepare(
        QStringLiteral("SELECT user_id, tenant_id, display_name FROM staff WHERE user_id = ?"));
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
    items.prepare(QStringLiteral("SELECT sku, name, quantity, name_zh FROM order_items "
                                 "WHERE order_id = ? ORDER BY rowid"));
    items.addBindValue(orderId);
    if (!items.exec())
        return StoreAnswer::failed(items.lastError().text());
    QJsonArray list;
    while (items.next()) {
        QJsonObject item{{QStringLiteral("sku"), items.value(0).toString()},
                         {QStringLiteral("quantity"), items.value(2).toInt()}};
        insertWords(item, QLatin1String("name"), items.value(1), items.value(3));
        list.append(item);
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
        "s.updated_at, s.carrier_zh, s.current_location_zh "
        "FROM shipments s JOIN orders o ON o.order_id = s.order_id "
        "WHERE o.tenant_id = ? AND s.order_id = ?"));
    query.addBindValue(tenantId);
    query.addBindValue(orderId);
    if (!query.exec())
        return StoreAnswer::failed(query.lastError().text());
    if (!query.next()) {
        // No shipment: for an order that exists that is "no logistics yet", for one that does
        // not (or is another tenant's) it is "no such order".
        QSqlQuery order(db);
        order.prepare(QStringLiteral("SELECT 1 FROM orders WHERE tenant_id = ? AND order_id = ?"));
        order.addBindValue(tenantId);
        order.addBindValue(orderId);
        if (!order.exec())
            return StoreAnswer::failed(order.lastError().text());
        return order.next() ? StoreAnswer::notFound()
                            : StoreAnswer::notFound(SupportCode::OrderNotFound);
    }
    QJsonObject data{{QStringLiteral("orderId"), query.value(0).toString()},
                     {QStringLiteral("trackingNumber"), query.value(2).toString()},
                     {QStringLiteral("status"), query.value(3).toString()},
                     {QStringLiteral("updatedAt"), query.value(5).toString()}};
    insertWords(data, QLatin1String("carrier"), query.value(1), query.value(6));
    insertWords(data, QLatin1String("currentLocation"), query.value(4), query.value(7));
    QSqlQuery events(db);
    events.prepare(QStringLiteral("SELECT happened_at, location, description, location_zh, "
                                  "description_zh FROM shipment_events WHERE order_id = ? "
                                  "ORDER BY happened_at"));
    events.addBindValue(orderId);
    if (!events.exec())
        return StoreAnswer::failed(events.lastError().text());
    QJsonArray list;
    while (events.next()) {
        QJsonObject event{{QStringLiteral("time"), events.value(0).toString()}};
        insertWords(event, QLatin1String("location"), events.value(1), events.value(3));
        insertWords(event, QLatin1String("description"), events.value(2), events.value(4));
        list.append(event);
    }
    data.insert(QStringLiteral("events"), list);
    return StoreAnswer::found(data);
}

StoreAnswer SupportStore::inventory(const QString &tenantId, const QString &sku) const
{
    QSqlQuery query(QSqlDatabase::database(connectionName()));
    query.prepare(QStringLiteral("SELECT sku, name, available, low_stock_threshold, warehouse, "
                                 "name_zh, warehouse_zh FROM inventory "
                                 "WHERE tenant_id = ? AND sku = ?"));
    query.addBindValue(tenantId);
    query.addBindValue(sku);
    if (!query.exec())
        return StoreAnswer::failed(query.lastError().text());
    if (!query.next())
        return StoreAnswer::notFound();
    const int available = query.value(2).toInt();
    const QString status = inventoryStatus(available, query.value(3).toInt());
    QJsonObject data{{QStringLiteral("sku"), query.value(0).toString()},
                     {QStringLiteral("available"), available},
                     {QStringLiteral("status"), status}};
    insertWords(data, QLatin1String("name"), query.value(1), query.value(5));
    insertWords(data, QLatin1String("warehouse"), query.value(4), query.value(6));
    return StoreAnswer::found(data);
}

TicketAnswer SupportStore::createTicket(const QString &tenantId, const QString &userId,
                                        const QString &orderId, const QString &category,
                                        const QString &description, const QString &idempotencyKey)
{
    const TicketRequest request{orderId, category, description};
    QString problem = request.problem();
    if (problem.isEmpty())
        problem = TicketRequest::keyProblem(idempotencyKey);
    if (problem.isEmpty() && userId.isEmpty())
        problem = QStringLiteral("no staff member");
    if (!problem.isEmpty())
        return {TicketAnswer::Status::Invalid, {}, problem};

    const QSqlDatabase db = QSqlDatabase::database(connectionName());
    QSqlQuery query(db);
    // IMMEDIATE takes the write lock up front (waiting up to the busy timeout): a deferred
    // transaction that reads first could not upgrade once another writer had committed.
    if (!query.exec(QStringLiteral("BEGIN IMMEDIATE")))
        return {TicketAnswer::Status::Failed, {}, query.lastError().text()};
    const auto failed = [&db](const QString &reason) {
        rollback(db);
        return TicketAnswer{TicketAnswer::Status::Failed, {}, reason};
    };

    // The order comes from the tenant's own orders, so another tenant's order inserts nothing,
    // exactly like a missing one. Ticket numbers follow the rowid; the write lock serialises
    // them.
    query.prepare(QStringLiteral(
        "INSERT INTO tickets (ticket_id, tenant_id, order_id, category, description, "
        "idempotency_key, created_by, created_at) "
        "SELECT printf('T-%06d', COALESCE((SELECT MAX(rowid) FROM tickets), 0) + 1), "
        "o.tenant_id, o.order_id, ?, ?, ?, ?, ? FROM orders o "
        "WHERE o.tenant_id = ? AND o.order_id = ? "
        "ON CONFLICT (tenant_id, idempotency_key) DO NOTHING"));
    query.addBindValue(category);
    query.addBindValue(description);
    query.addBindValue(idempotencyKey);
    query.addBindValue(userId);
    query.addBindValue(QDateTime::currentDateTimeUtc().toString(Qt::ISODate));
    query.addBindValue(tenantId);
    query.addBindValue(orderId);
    if (!query.exec())
        return failed(query.lastError().text());
    const bool inserted = query.numRowsAffected() == 1;
    query.finish();

    const StoreAnswer owned = ticketOf(db, tenantId, idempotencyKey);
    if (owned.status == StoreAnswer::Status::Failed)
        return failed(owned.detail);
    if (!query.exec(QStringLiteral("COMMIT")))
        return failed(query.lastError().text());

    if (owned.status == StoreAnswer::Status::NotFound)
        return {TicketAnswer::Status::OrderNotFound, {}, {}};
    if (inserted)
        return {TicketAnswer::Status::Created, owned.data, {}};
    const TicketRequest before = TicketRequest::fromJson(owned.data);
    if (before == request)
        return {TicketAnswer::Status::Existed, owned.data, {}};
    return {TicketAnswer::Status::Conflict, owned.data,
            QStringLiteral("the key already owns ticket %1 with other arguments")
                .arg(owned.data.value(QLatin1String("ticketId")).toString())};
}

StoreAnswer SupportStore::orderTickets(const QString &tenantId, const QString &orderId) const
{
    const QSqlDatabase db = QSqlDatabase::database(connectionName());
    QSqlQuery query(db);
    // The order first: "no tickets" and "no such order" are different answers.
    query.prepare(QStringLiteral("SELECT 1 FROM orders WHERE tenant_id = ? AND order_id = ?"));
    query.addBindValue(tenantId);
    query.addBindValue(orderId);
    if (!query.exec())
        return StoreAnswer::failed(query.lastError().text());
    if (!query.next())
        return StoreAnswer::notFound(SupportCode::OrderNotFound);
    query.finish();
    query.prepare(QStringLiteral("SELECT %1 FROM tickets WHERE tenant_id = ? AND order_id = ? "
                                 "ORDER BY rowid DESC LIMIT %2")
                      .arg(QLatin1String(kTicketColumns))
                      .arg(kMaxOrderTickets));
    query.addBindValue(tenantId);
    query.addBindValue(orderId);
    if (!query.exec())
        return StoreAnswer::failed(query.lastError().text());
    QJsonArray tickets;
    while (query.next())
        tickets.append(ticketJson(query));
    return StoreAnswer::found(
        QJsonObject{{QStringLiteral("orderId"), orderId}, {QStringLiteral("tickets"), tickets}});
}

StoreAnswer SupportStore::ticketByIdempotencyKey(const QString &tenantId, const QString &key) const
{
    return ticketOf(QSqlDatabase::database(connectionName()), tenantId, key);
}

int SupportStore::ticketCountForKey(const QString &tenantId, const QString &key) const
{
    QSqlQuery query(QSqlDatabase::database(connectionName()));
    query.prepare(QStringLiteral("SELECT COUNT(*) FROM tickets WHERE tenant_id = ? "
                                 "AND idempotency_key = ?"));
    query.addBindValue(tenantId);
    query.addBindValue(key);
    if (!query.exec() || !query.next())
        return -1;
    return query.value(0).toInt();
}

int SupportStore::duplicateTicketKeys() const
{
    QSqlQuery query(QSqlDatabase::database(connectionName()));
    if (!query.exec(QStringLiteral("SELECT COUNT(*) FROM (SELECT 1 FROM tickets "
                                   "GROUP BY tenant_id, idempotency_key HAVING COUNT(*) > 1)"))
        || !query.next())
        return -1;
    return query.value(0).toInt();
}

} // namespace AgentConsole
