// A request to support-sim's support API as its routes hand it over (SupportSim::answer,
// createTicket, ticketStatus): the path argument, the staff, tenant and idempotency headers
// and the JSON body, on the real demo store (a SQLite file in a temporary directory). Input:
// fields separated by "\n--\n": route (orders, logistics, inventory, ticket-status,
// ticket-create), key, X-Staff-Id, X-Tenant-Id, body. Tickets made by earlier inputs stay, as
// in a running simulator: a run is repeatable as a whole.
// Properties: every answer is a status the API documents, with a JSON object.

#include "fuzzsupport.h"

#include "app/support-sim/supportsim.h"
#include "core/support/supportstore.h"

#include <QDir>
#include <QSet>
#include <QTemporaryDir>
#include <QUrlQuery>

using namespace AgentConsole;

namespace {

SupportSim &sim()
{
    static SupportSim *made = [] {
        // In $TMPDIR: run-fuzzers.sh points it at tmpfs, and removes it even after a crash.
        static QTemporaryDir directory(
            QDir::temp().filePath(QStringLiteral("agentconsole-fuzz-XXXXXX")));
        auto store = std::make_shared<SupportStore>(directory.filePath(QStringLiteral("s.db")));
        QString error;
        if (!directory.isValid() || !store->prepare(&error)) {
            std::fprintf(stderr, "cannot prepare the demo store: %s\n", qPrintable(error));
            std::abort();
        }
        return new SupportSim(store, SimFaults()); // lives as long as the process
    }();
    return *made;
}

void check(const SimResponse &response)
{
    static const QSet<int> documented{200, 201, 400, 401, 403, 404, 409, 500};
    FUZZ_CHECK(documented.contains(response.status));
    // The API's answers never carry an internal error: a 500 here is a store failure.
    FUZZ_CHECK(response.status != 500);
    if (response.status >= 400)
        FUZZ_CHECK(response.body.value(QLatin1String("error")).isString());
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    Fuzz::ensureApplication();
    const QList<QByteArray> fields = Fuzz::fieldsOf(Fuzz::bytesOf(data, size), 5);
    const QByteArray &route = fields.at(0);
    const QString key = QString::fromUtf8(fields.at(1));
    const QByteArray &staffId = fields.at(2);
    const QByteArray &tenantId = fields.at(3);

    if (route == "orders") {
        check(sim().answer(SimRoute::Orders, key, staffId, tenantId));
    } else if (route == "logistics") {
        check(sim().answer(SimRoute::Logistics, key, staffId, tenantId));
    } else if (route == "inventory") {
        check(sim().answer(SimRoute::Inventory, key, staffId, tenantId));
    } else if (route == "ticket-status") {
        // As the route reads it: the query string, percent-decoded.
        const QString idempotencyKey =
            QUrlQuery(key).queryItemValue(QStringLiteral("idempotencyKey"), QUrl::FullyDecoded);
        check(sim().ticketStatus(staffId, tenantId, idempotencyKey));
    } else if (route == "ticket-create") {
        check(sim().createTicket(staffId, tenantId, fields.at(1), fields.at(4)));
    }
    return 0;
}
