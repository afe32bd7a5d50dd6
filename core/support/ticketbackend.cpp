#include "ticketbackend.h"

#include "../telemetry/killpoint.h"

#include "supportstore.h"

namespace AgentConsole {

StoreTicketBackend::StoreTicketBackend(std::shared_ptr<SupportStore> store)
    : m_store(std::move(store))
{
    Q_ASSERT(m_store);
}

TicketWriteAnswer StoreTicketBackend::create(const TicketRequest &request,
                                             const QString &idempotencyKey,
                                             const TrustedContext &context,
                                             const CancellationToken &cancellation) const
{
    using S = TicketWriteAnswer::Status;
    // Past this point the local transaction takes microseconds and is not worth interrupting.
    if (cancellation.isCancelled())
        return TicketWriteAnswer::failed(S::Transient,
                                         QStringLiteral("cancelled before the write"));
    killPoint(KillPoints::WriteBeforeSend);
    const TicketAnswer answer = m_store->createTicket(context.tenantId, context.userId,
                                                      request.orderId, request.category,
                                                      request.description, idempotencyKey);
    if (answer.status == TicketAnswer::Status::Created)
        killPoint(KillPoints::WriteCommitted);
    switch (answer.status) {
    case TicketAnswer::Status::Created:
        return TicketWriteAnswer::created(answer.ticket);
    case TicketAnswer::Status::Existed:
        return TicketWriteAnswer::alreadyExisted(answer.ticket);
    case TicketAnswer::Status::Conflict:
        return TicketWriteAnswer::failed(S::Conflict, QStringLiteral("store: ") + answer.detail);
    case TicketAnswer::Status::OrderNotFound:
        return TicketWriteAnswer::failed(S::NotFound, {});
    case TicketAnswer::Status::Invalid:
        return TicketWriteAnswer::failed(S::Rejected, QStringLiteral("store: ") + answer.detail);
    case TicketAnswer::Status::Failed:
        break;
    }
    // The transaction was rolled back: nothing was written, another attempt is safe.
    return TicketWriteAnswer::failed(S::Transient, QStringLiteral("store: ") + answer.detail);
}

TicketStatusAnswer StoreTicketBackend::status(const QString &idempotencyKey,
                                              const TrustedContext &context,
                                              const CancellationToken &) const
{
    const StoreAnswer answer = m_store->ticketByIdempotencyKey(context.tenantId, idempotencyKey);
    switch (answer.status) {
    case StoreAnswer::Status::Found:
        return TicketStatusAnswer::exists(answer.data);
    case StoreAnswer::Status::NotFound:
        return TicketStatusAnswer::doesNotExist();
    case StoreAnswer::Status::Failed:
        break;
    }
    return TicketStatusAnswer::unknown(QStringLiteral("store: ") + answer.detail);
}

std::optional<int> StoreTicketBackend::duplicateKeyCount(const TrustedContext &,
                                                         const CancellationToken &) const
{
    const int count = m_store->duplicateTicketKeys();
    if (count < 0)
        return std::nullopt;
    return count;
}

} // namespace AgentConsole
