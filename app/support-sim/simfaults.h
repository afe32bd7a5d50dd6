#pragma once

#include <QByteArray>
#include <QJsonObject>
#include <QString>

#include <array>
#include <cstddef>
#include <optional>

namespace AgentConsole {

// The data routes of the support API, each with its own faults. Tickets covers both
// POST /api/v1/tickets (a write) and GET /api/v1/tickets?idempotencyKey= (its status).
enum class SimRoute { Orders, Logistics, Inventory, Tickets };
inline constexpr std::size_t kSimRouteCount = 4;

// What the simulator does to one route (docs/SUPPORT-SIM.md describes the JSON).
struct RouteFault
{
    int latencyMs = 0; // before every answer (faulted or not)
    bool hang = false; // never answer; hold the connection until the client closes it
    int status = 0; // answer with this status instead of the data ...
    bool dropConnection = false; // ... or close the connection without any answer ...
    bool commitThenDrop = false; // ... or (tickets, writes only) commit, then close without
                                 // an answer: the backend acted, the answer never arrived ...
    bool commitThenHang = false; // ... or (tickets, writes only) commit, say so on stdout,
                                 // then hold the answer like `hang` ...
    int times = -1; // ... for the next N requests; -1: every request
    int retryAfterSeconds = -1; // sent as Retry-After with every faulted status; -1: none
    double failureProbability = 0.0; // answer failureStatus with this probability
    int failureStatus = 503;
};

// What to do with one request, decided before it is looked at.
struct SimDecision
{
    enum class Action { Serve, Respond, Drop, CommitThenDrop, Hang, CommitThenHang };
    Action action = Action::Serve;
    int latencyMs = 0;
    int status = 0; // for Respond
    int retryAfterSeconds = -1; // for Respond
};

// The simulator's fault state and its decisions. Deterministic: "the next N requests" count
// down in arrival order, and probabilistic failures are a hash of (seed, route, the route's
// request number), so the same plan and the same sequence of requests fail the same way.
// Not thread-safe: the simulator uses it on its one thread.
class SimFaults final
{
public:
    static constexpr int kDefaultHangLimitMs = 60'000;

    // Strict, like the console's fault plans: unknown keys, wrong types and values out of range
    // are errors, reported as one line that names the key.
    static std::optional<SimFaults> fromJson(const QByteArray &json, QString *error);
    // The current state, remaining `times` included; fromJson() reads it back.
    QJsonObject toJson() const;

    static QString routeName(SimRoute route);
    std::optional<RouteFault> faultFor(SimRoute route) const;
    void setFault(SimRoute route, const RouteFault &fault);
    // A hung request is closed without an answer after this long, whatever the client does.
    int hangLimitMs() const { return m_hangLimitMs; }

    // Counts the request and says what to do with it; consumes one of `times`. commitThenDrop
    // and commitThenHang apply to writes only: a status query on the tickets route is served
    // (and consumes nothing), so that a test can ask what became of the unanswered write.
    SimDecision decide(SimRoute route, bool isWrite = false);

private:
    quint64 m_seed = 0;
    int m_hangLimitMs = kDefaultHangLimitMs;
    QString m_description;
    std::array<std::optional<RouteFault>, kSimRouteCount> m_routes;
    std::array<quint64, kSimRouteCount> m_requestNumbers{};
};

} // namespace AgentConsole
