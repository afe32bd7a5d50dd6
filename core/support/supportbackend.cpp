#include "supportbackend.h"

#include "supportstore.h"

namespace AgentConsole {

StoreSupportBackend::StoreSupportBackend(std::shared_ptr<const SupportStore> store)
    : m_store(std::move(store))
{
    Q_ASSERT(m_store);
}

LookupAnswer StoreSupportBackend::lookup(SupportLookup what, const QString &key,
                                         const TrustedContext &context,
                                         const CancellationToken &) const
{
    // A local SQLite read takes microseconds; there is nothing worth interrupting.
    StoreAnswer answer;
    switch (what) {
    case SupportLookup::Order:
        answer = m_store->order(context.tenantId, key);
        break;
    case SupportLookup::Logistics:
        answer = m_store->logistics(context.tenantId, key);
        break;
    case SupportLookup::Inventory:
        answer = m_store->inventory(context.tenantId, key);
        break;
    case SupportLookup::OrderTickets:
        answer = m_store->orderTickets(context.tenantId, key);
        break;
    }
    switch (answer.status) {
    case StoreAnswer::Status::Found:
        return LookupAnswer::found(std::move(answer.data));
    case StoreAnswer::Status::NotFound:
        return LookupAnswer::notFound(answer.notFoundCode);
    case StoreAnswer::Status::Failed:
        break;
    }
    // A store error is a technical failure of the downstream: worth another attempt.
    return LookupAnswer::transient(QStringLiteral("store: ") + answer.detail);
}

} // namespace AgentConsole
