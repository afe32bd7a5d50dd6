#pragma once

#include "../resilience/cancellationtoken.h"
#include "../resilience/tooloperation.h"

#include <QJsonObject>
#include <QString>

#include <chrono>
#include <memory>
#include <optional>

namespace AgentConsole {

class SupportStore;

// The read-only lookups every support backend answers. OrderTickets: an order's after-sales
// tickets, newest first ({orderId, tickets[]}).
enum class SupportLookup { Order, Logistics, Inventory, OrderTickets };

// The answer of one backend lookup, classified once where it happened: found, a business miss,
// or a technical failure of a known kind. `detail` (SQL errors, URLs, status lines) is for the
// local log only and never reaches a ToolResult.
struct LookupAnswer
{
    enum class Status {
        Found,
        NotFound,
        Transient, // worth another attempt: 429, 5xx, connection trouble, timeouts
        Rejected, // the request itself is wrong (400 and the like): never retried
        AccessDenied, // 401/403: configuration or permission error, never retried
    };

    Status status = Status::NotFound;
    QJsonObject data;
    QString detail;
    std::optional<std::chrono::milliseconds> retryAfter; // the server's Retry-After
    // NotFound: the backend's *_NOT_FOUND code when it names something other than what was
    // looked up (a shipment of an order that does not exist: SupportCode::OrderNotFound).
    std::optional<ResultCode::Code> notFoundCode;

    static LookupAnswer found(QJsonObject data)
    {
        return {Status::Found, std::move(data), {}, {}, {}};
    }
    static LookupAnswer notFound(std::optional<ResultCode::Code> code = std::nullopt)
    {
        return {Status::NotFound, {}, {}, {}, code};
    }
    static LookupAnswer transient(QString detail,
                                  std::optional<std::chrono::milliseconds> retryAfter = {})
    {
        return {Status::Transient, {}, std::move(detail), retryAfter, {}};
    }
    static LookupAnswer rejected(QString detail)
    {
        return {Status::Rejected, {}, std::move(detail), {}, {}};
    }
    static LookupAnswer accessDenied(QString detail)
    {
        return {Status::AccessDenied, {}, std::move(detail), {}, {}};
    }
};

// Where the read-only support tools get their data: the embedded store or a REST backend.
// lookup() runs inside a tool attempt on a pool thread; implementations must be thread-safe
// and return soon after `cancellation` is raised.
class SupportBackend
{
public:
    virtual ~SupportBackend() = default;

    virtual LookupAnswer lookup(SupportLookup what, const QString &key,
                                const TrustedContext &context,
                                const CancellationToken &cancellation) const = 0;
};

// The embedded demo store as a backend: every store error is a transient failure.
class StoreSupportBackend final : public SupportBackend
{
public:
    explicit StoreSupportBackend(std::shared_ptr<const SupportStore> store);

    LookupAnswer lookup(SupportLookup what, const QString &key, const TrustedContext &context,
                        const CancellationToken &cancellation) const override;

private:
    std::shared_ptr<const SupportStore> m_store;
};

} // namespace AgentConsole
