#pragma once

#include "../resilience/resultcode.h"

#include <QJsonObject>
#include <QObject>
#include <QString>

#include <optional>

namespace AgentConsole {

// The answer of one store lookup. `detail` (SQL errors and the like) is for the local log only.
struct StoreAnswer
{
    enum class Status { Found, NotFound, Failed };

    Status status = Status::NotFound;
    QJsonObject data;
    QString detail;
    // Set when what is missing is not what was asked for: a shipment asked for an order that
    // does not exist is SupportCode::OrderNotFound, not "no logistics yet".
    std::optional<ResultCode::Code> notFoundCode;

    static StoreAnswer found(QJsonObject data) { return {Status::Found, std::move(data), {}, {}}; }
    static StoreAnswer notFound(std::optional<ResultCode::Code> code = std::nullopt)
    {
        return {Status::NotFound, {}, {}, code};
    }
    static StoreAnswer failed(QString detail)
    {
        return {Status::Failed, {}, std::move(detail), {}};
    }
};

// The answer of one ticket write. `ticket` is {ticketId, orderId, category, description, status,
// createdAt, idempotencyKey, createdBy}: the new ticket, or the one the key already owns (for
// Existed and
// Conflict). `detail` is for the local log only.
struct TicketAnswer
{
    Q_GADGET

public:
    enum class Status {
        Created, // a new row
        Existed, // the key already owned a ticket with these arguments: no new row
        Conflict, // the key already owned a ticket with other arguments: no new row
        OrderNotFound, // no such order of this tenant: no row
        Invalid, // category, description or key out of bounds: no row
        Failed, // the store could not be written; the transaction left nothing behind
    };
    Q_ENUM(Status)

    Status status = Status::Failed;
    QJsonObject ticket;
    QString detail;

    bool created() const { return status == Status::Created; }
};

struct StaffMember
{
    QString userId;
    QString tenantId;
    QString displayName;
};

// The embedded demo backend: orders, shipments, stock and after-sales tickets of two tenants in
// a SQLite file.
// Every lookup is scoped to a tenant: staff see only their tenant's data. Lookups may run on
// any thread; each thread uses its own connection (Qt Sql connections never cross threads),
// and SQLite's WAL mode lets them read concurrently.
class SupportStore final
{
public:
    explicit SupportStore(const QString &filePath);
    ~SupportStore();
    SupportStore(const SupportStore &) = delete;
    SupportStore &operator=(const SupportStore &) = delete;

    // Version 1: tenants, staff, orders, shipments, stock. Version 2: tickets. Version 3: the
    // demo data's words in Chinese too, answered under *Zh keys (chinesefields.h).
    static constexpr int kSchemaVersion = 3;

    QString filePath() const { return m_filePath; }

    // Creates the schema and the demo data when the file is new, upgrades an older schema in
    // place in one transaction (version 1 or 2 -> 3: nothing is dropped or rewritten, columns
    // are added), and refuses a version this build does not know.
    // Disk work: call it off the GUI thread.
    bool prepare(QString *error);

    std::optional<StaffMember> staffMember(const QString &userId) const;
    std::optional<StaffMember> firstStaffMember(const QString &tenantId = {}) const;

    // Closes the calling thread's connection now. A thread the store does not own (the global
    // pool's) must call this before it goes back: otherwise the connection would be closed
    // when that thread ends, which may be after Qt Sql itself has shut down at process exit.
    void releaseThreadConnection() const;

    StoreAnswer order(const QString &tenantId, const QString &orderId) const;
    StoreAnswer logistics(const QString &tenantId, const QString &orderId) const;
    StoreAnswer inventory(const QString &tenantId, const QString &sku) const;

    // Idempotent by (tenant, key): the first call creates the ticket, every later call with the
    // same key returns that ticket (Existed) or, with other arguments, Conflict; never a second
    // row, also when threads or processes race (one IMMEDIATE transaction: the UNIQUE
    // constraint decides, INSERT ... ON CONFLICT DO NOTHING, then the row is read back).
    // Another tenant's order is indistinguishable from none (OrderNotFound).
    TicketAnswer createTicket(const QString &tenantId, const QString &userId,
                              const QString &orderId, const QString &category,
                              const QString &description, const QString &idempotencyKey);
    // An order's tickets, newest first, at most kMaxOrderTickets: Found with {orderId,
    // tickets[]} (possibly none), NotFound (ORDER_NOT_FOUND: no such order for the tenant), or
    // Failed.
    static constexpr int kMaxOrderTickets = 50;
    StoreAnswer orderTickets(const QString &tenantId, const QString &orderId) const;
    // Found with the ticket, NotFound, or Failed.
    StoreAnswer ticketByIdempotencyKey(const QString &tenantId, const QString &key) const;
    // For duplicate_business_object_count: how many tickets one key owns (0 or 1 here, by
    // the UNIQUE constraint), and how many keys own more than one. -1 when the store cannot
    // be read.
    int ticketCountForKey(const QString &tenantId, const QString &key) const;
    int duplicateTicketKeys() const;

private:
    bool migrate(int fromVersion, QString *error);
    QString connectionName() const;
    QString threadConnectionName() const;

    QString m_filePath;
    quint64 m_instance;
};

} // namespace AgentConsole
