#pragma once

#include "simconnectionguard.h"
#include "simfaults.h"

#include <QHostAddress>
#include <QJsonObject>
#include <QObject>

#include <array>
#include <functional>
#include <memory>

QT_BEGIN_NAMESPACE
class QHttpServer;
class QHttpServerRequest;
class QHttpServerResponder;
QT_END_NAMESPACE

namespace AgentConsole {

class SupportStore;

// One answer of the support API, before any fault: a status and a JSON body.
struct SimResponse
{
    int status = 200;
    QJsonObject body;
};

// support-sim's server: the support REST API on the store's data (the same JSON objects the
// embedded store gives the tools), with faults per route and a control API to change them
// while it runs. docs/SUPPORT-SIM.md describes both. Lives on one thread with an event loop;
// a delayed or hung answer holds its connection without blocking anything.
class SupportSim final : public QObject
{
    Q_OBJECT

public:
    struct Stats
    {
        std::array<int, kSimRouteCount> requests{}; // per SimRoute, every data request
        int clientAborts = 0; // the client closed the connection before a delayed answer
        int dropped = 0; // connections closed on purpose without an answer
        int hangLimitReached = 0;
        int ticketsCreated = 0; // writes that made a new ticket
        int ticketReplays = 0; // writes whose key already owned the same ticket
        int ticketConflicts = 0; // writes whose key owned a ticket with other arguments
        int refused = 0; // requests refused unread: too large (413, 431), malformed
        int idleClosed = 0; // connections closed after idleTimeoutMs without a byte

        QJsonObject toJson() const;
    };

    SupportSim(std::shared_ptr<SupportStore> store, SimFaults faults, QObject *parent = nullptr);
    ~SupportSim() override;

    // The bounds on what clients send (before listen()).
    void setLimits(const SimLimits &limits) { m_limits = limits; }
    // Returns the port it listens on (the chosen one when `port` is 0), or 0 and the reason.
    // Every connection is watched by a SimConnectionGuard before QHttpServer reads from it.
    quint16 listen(const QHostAddress &address, quint16 port, QString *error);

    // A lookup (orders, logistics, inventory) with authentication and tenant scoping, faults
    // aside: 401 without a known X-Staff-Id, 400 without X-Tenant-Id or with a malformed key,
    // 403 when the staff member belongs to another tenant, 404 with {"error": "*_NOT_FOUND"},
    // or 200 with the data.
    SimResponse answer(SimRoute route, const QString &key, const QByteArray &staffId,
                       const QByteArray &tenantId) const;
    // POST /api/v1/tickets, faults aside: the same checks, then 400 without an
    // Idempotency-Key or with arguments that cannot be a ticket, 404 ORDER_NOT_FOUND, 409
    // IDEMPOTENCY_CONFLICT when the key owns a ticket with other arguments, 200 with the
    // ticket the key already owns, or 201 with the new one. Deduplicated by the store.
    SimResponse createTicket(const QByteArray &staffId, const QByteArray &tenantId,
                             const QByteArray &idempotencyKey, const QByteArray &body);
    // GET /api/v1/orders/{orderId}/tickets: 200 with {orderId, tickets[]} (newest first, at
    // most SupportStore::kMaxOrderTickets), 404 ORDER_NOT_FOUND. Under the tickets route's
    // faults, as a read.
    SimResponse orderTickets(const QString &orderId, const QByteArray &staffId,
                             const QByteArray &tenantId) const;
    // GET /api/v1/tickets?idempotencyKey=K: 200 with the ticket or 404 TICKET_NOT_FOUND.
    SimResponse ticketStatus(const QByteArray &staffId, const QByteArray &tenantId,
                             const QString &idempotencyKey) const;

    const SimFaults &faults() const { return m_faults; }
    void setFaults(SimFaults faults);
    const Stats &stats() const { return m_stats; }
    // The stats with `duplicateTickets`: keys that own more than one ticket (must be 0).
    QJsonObject statsJson() const;
    void resetStats() { m_stats = {}; }

Q_SIGNALS:
    // A write under commitThenHang left a ticket for `idempotencyKey` (the header's bytes as
    // received; created or replayed), and its answer is now held. Emitted before the hold
    // starts; support-sim prints it as "support-sim: committed <key>".
    void committedThenHeld(const QByteArray &idempotencyKey);

private:
    struct Caller;
    Caller authorize(const QByteArray &staffId, const QByteArray &tenantId) const;
    void addRoutes();
    // Applies the route's faults, then answers with `respond` (which a commitThenDrop or a
    // commitThenHang runs before dropping the connection or holding the answer).
    void serve(SimRoute route, const QHttpServerRequest &request, QHttpServerResponder &&responder,
               const std::function<SimResponse()> &respond);

    std::shared_ptr<SupportStore> m_store;
    SimFaults m_faults;
    SimLimits m_limits;
    Stats m_stats;
    std::unique_ptr<QHttpServer> m_server;
    // Parent of the answers still waiting (latency, hang, drop). Declared last so that they go
    // before the server and its sockets: a held answer never outlives its connection's owner.
    std::unique_ptr<QObject> m_pending;
};

} // namespace AgentConsole
