#pragma once

#include <QJsonObject>
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

    static StoreAnswer found(QJsonObject data) { return {Status::Found, std::move(data), {}}; }
    static StoreAnswer notFound() { return {Status::NotFound, {}, {}}; }
    static StoreAnswer failed(QString detail) { return {Status::Failed, {}, std::move(detail)}; }
};

struct StaffMember
{
    QString userId;
    QString tenantId;
    QString displayName;
};

// The embedded demo backend: orders, shipments and stock of two tenants in a SQLite file.
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

    QString filePath() const { return m_filePath; }

    // Creates the schema and the demo data when the file is new; checks the schema version
    // otherwise. Disk work: call it off the GUI thread.
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

private:
    QString connectionName() const;
    QString threadConnectionName() const;

    QString m_filePath;
    quint64 m_instance;
};

} // namespace AgentConsole
