#pragma once

#include "../resilience/cancellationtoken.h"
#include "../resilience/tooloperation.h"
#include "ticketrequest.h"

#include <QJsonObject>
#include <QObject>
#include <QString>

#include <chrono>
#include <memory>
#include <optional>

namespace AgentConsole {

class SupportStore;

// What one create attempt did, classified once where it happened. `ticket` is
// {ticketId, orderId, category, description, status, createdAt, idempotencyKey, createdBy};
// `detail`
// (SQL errors, URLs, status lines) is for the local log only and never reaches a ToolResult.
struct TicketWriteAnswer
{
    Q_GADGET

public:
    enum class Status {
        Created, // a new ticket
        AlreadyExisted, // the key had made this ticket before: nothing new was created
        NotFound, // no such order for this tenant: nothing was created
        Conflict, // the key was used with other arguments: IDEMPOTENCY_CONFLICT
        Rejected, // the request itself is wrong (400 and the like): never retried
        AccessDenied, // 401/403: never retried
        Transient, // nothing was committed (nothing was sent, 429, 503): may be retried
        OutcomeUnknown, // the request may have been committed (timeout or dropped connection
                        // after it was sent, 5xx): ask status() before anything else
    };
    Q_ENUM(Status)

    Status status = Status::OutcomeUnknown;
    QJsonObject ticket;
    QString detail;
    std::optional<std::chrono::milliseconds> retryAfter; // with Transient only

    // The ticket exists now, whether this attempt made it or an earlier one.
    bool hasTicket() const
    {
        return status == Status::Created || status == Status::AlreadyExisted;
    }

    static TicketWriteAnswer created(QJsonObject ticket)
    {
        return {Status::Created, std::move(ticket), {}, {}};
    }
    static TicketWriteAnswer alreadyExisted(QJsonObject ticket)
    {
        return {Status::AlreadyExisted, std::move(ticket), {}, {}};
    }
    static TicketWriteAnswer failed(Status status, QString detail,
                                    std::optional<std::chrono::milliseconds> retryAfter = {})
    {
        return {status, {}, std::move(detail), retryAfter};
    }
};

// What the backend knows about one idempotency key: the question to ask after a write whose
// outcome is unknown, before anything is retried.
struct TicketStatusAnswer
{
    Q_GADGET

public:
    enum class Status {
        Exists, // the key owns this ticket: the write happened
        DoesNotExist, // the backend answered that no ticket has this key: it did not
        Unknown, // the status could not be learned (backend down, timeout, odd answer)
    };
    Q_ENUM(Status)

    Status status = Status::Unknown;
    QJsonObject ticket;
    QString detail; // local log only

    static TicketStatusAnswer exists(QJsonObject ticket)
    {
        return {Status::Exists, std::move(ticket), {}};
    }
    static TicketStatusAnswer doesNotExist() { return {Status::DoesNotExist, {}, {}}; }
    static TicketStatusAnswer unknown(QString detail)
    {
        return {Status::Unknown, {}, std::move(detail)};
    }
};

// Where createTicket writes: the embedded store or a REST backend. Both deduplicate by the
// idempotency key (the operationId), scoped to the context's tenant. Calls run inside a tool
// attempt on a pool thread; implementations must be thread-safe and return soon after
// `cancellation` is raised.
class TicketBackend
{
public:
    virtual ~TicketBackend() = default;

    virtual TicketWriteAnswer create(const TicketRequest &request, const QString &idempotencyKey,
                                     const TrustedContext &context,
                                     const CancellationToken &cancellation) const = 0;
    virtual TicketStatusAnswer status(const QString &idempotencyKey, const TrustedContext &context,
                                      const CancellationToken &cancellation) const = 0;
    // How many idempotency keys own more than one ticket (duplicate_business_object_count;
    // anything above 0 is a bug somewhere). nullopt when the backend cannot say.
    virtual std::optional<int> duplicateKeyCount(const TrustedContext &context,
                                                 const CancellationToken &cancellation) const = 0;
};

// The embedded demo store as a ticket backend. A local SQLite transaction either commits or
// leaves nothing behind, so a store error is Transient, never OutcomeUnknown.
class StoreTicketBackend final : public TicketBackend
{
public:
    explicit StoreTicketBackend(std::shared_ptr<SupportStore> store);

    TicketWriteAnswer create(const TicketRequest &request, const QString &idempotencyKey,
                             const TrustedContext &context,
                             const CancellationToken &cancellation) const override;
    TicketStatusAnswer status(const QString &idempotencyKey, const TrustedContext &context,
                              const CancellationToken &cancellation) const override;
    std::optional<int> duplicateKeyCount(const TrustedContext &context,
                                         const CancellationToken &cancellation) const override;

private:
    std::shared_ptr<SupportStore> m_store;
};

} // namespace AgentConsole
