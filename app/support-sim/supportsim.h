#pragma once

#include "simfaults.h"

#include <QHostAddress>
#include <QJsonObject>
#include <QObject>

#include <array>
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
        std::array<int, 3> requests{}; // per SimRoute, every data request that arrived
        int clientAborts = 0;   // the client closed the connection before a delayed answer
        int dropped = 0;        // connections closed on purpose without an answer
        int hangLimitReached = 0;

        QJsonObject toJson() const;
    };

    SupportSim(std::shared_ptr<const SupportStore> store, SimFaults faults,
               QObject *parent = nullptr);
    ~SupportSim() override;

    // Returns the port it listens on (the chosen one when `port` is 0), or 0 and the reason.
    quint16 listen(const QHostAddress &address, quint16 port, QString *error);

    // Authentication, tenant scoping and the lookup, faults aside: 401 without a known
    // X-Staff-Id, 400 without X-Tenant-Id or with a malformed key, 403 when the staff member
    // belongs to another tenant, 404 with {"error": "*_NOT_FOUND"}, or 200 with the data.
    SimResponse answer(SimRoute route, const QString &key, const QByteArray &staffId,
                       const QByteArray &tenantId) const;

    const SimFaults &faults() const { return m_faults; }
    void setFaults(SimFaults faults);
    const Stats &stats() const { return m_stats; }
    void resetStats() { m_stats = {}; }

private:
    void addRoutes();
    void serve(SimRoute route, const QString &key, const QHttpServerRequest &request,
               QHttpServerResponder &&responder);

    std::shared_ptr<const SupportStore> m_store;
    SimFaults m_faults;
    Stats m_stats;
    std::unique_ptr<QHttpServer> m_server;
    // Parent of the answers still waiting (latency, hang, drop). Declared last so that they go
    // before the server and its sockets: a held answer never outlives its connection's owner.
    std::unique_ptr<QObject> m_pending;
};

} // namespace AgentConsole
