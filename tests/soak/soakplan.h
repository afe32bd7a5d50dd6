#pragma once

#include <QJsonObject>
#include <QList>
#include <QString>

#include <cstdint>

namespace AgentConsole::Soak {

// One tool call the scripted model asks for: a name and the raw JSON text of its arguments
// (which may be malformed on purpose).
struct PlannedCall
{
    QString name;
    QString arguments;
};

// What the scripted model does in one turn: a tool round per entry of `rounds`, then the
// answer. Made from the seed and the turn's number only, so a run is the same every time.
struct TurnPlan
{
    int turn = 0; // the ordinal of the ask, from 0
    QString requestId; // soak-<n>; a repeat reuses the earlier turn's
    QString question;
    QList<QList<PlannedCall>> rounds;
    QString answer;
    bool repeat = false; // asks again under the previous turn's request id
    bool changedTicket = false; // a repeat whose ticket description differs (a conflict)
    bool declineWrites = false; // the staff member declines every write of the turn

    int writes() const;
};

// How the model server misbehaves on one request (docs: tests/soak/README comment in
// soak_turns.cpp).
enum class ModelFault {
    None,
    RateLimited, // 429 rate_limit_exceeded, no Retry-After
    RateLimitedRetryAfter, // 429 with retry-after-ms
    UnavailableRetryAfter, // 503 with Retry-After: 1 (capped by the provider's retry cap)
    ServerError, // 500, no Retry-After
    MalformedJson, // 200 application/json that does not parse
    MalformedSse, // an event whose data is not JSON
    SlowHeaders, // the status line only after the provider's connect timeout
    CutStream, // the connection closes after the first event
    StalledStream, // silence after the first event, socket open (idle timeout)
    // Real data, but slowly: every event 450 ms after the last, never idle long enough for
    // the idle timeout; the turn's deadline stops it. Rarer than the others.
    SlowStream,
};
QString modelFaultName(ModelFault fault);

// The seeded generator of a soak run: turn plans, model faults per request, support-sim's
// fault file per epoch of turns, and the tool fault plan (docs/FAULTS.md) for the whole run.
// Every draw is a hash of the seed and where it is made, never a shared generator's next
// value, so what one turn gets does not depend on how many draws the turns before it made.
class SoakPlan final
{
public:
    struct Settings
    {
        std::uint64_t seed = 1;
        int conversationTurns = 20; // a new conversation every this many turns
        double modelFaultRate = 0.10;
        int epochTurns = 25; // support-sim's faults change every this many turns
        double slowStreamRate = 0.003; // of requests: turns that meet their deadline
    };

    explicit SoakPlan(const Settings &settings);

    // Turn `turn`'s plan; `previous` is the plan of turn - 1 (null for the first turn).
    TurnPlan turn(int turn, const TurnPlan *previous) const;
    bool startsConversation(int turn) const;
    // The fault of request `attempt` (from 1) of `round` (from 0; the answer's round is
    // rounds.size()) in turn `turn`.
    ModelFault modelFault(int turn, int round, int attempt) const;
    // support-sim's faults for the turns of epoch `epoch` (PUT /sim/faults).
    QJsonObject simFaults(int epoch) const;
    // The console's own fault plan (--faults): seeded random failures on every tool.
    QJsonObject toolFaultPlan() const;

    const Settings &settings() const { return m_settings; }

private:
    // A uniform double in [0, 1) drawn at (a, b, c, d).
    double uniform(
        std::uint64_t a, std::uint64_t b, std::uint64_t c = 0, std::uint64_t d = 0) const;
    int below(int bound, std::uint64_t a, std::uint64_t b, std::uint64_t c = 0,
        std::uint64_t d = 0) const;
    QList<PlannedCall> round(int turn, int round) const;
    PlannedCall call(int turn, int round, int index) const;
    QJsonObject routeFault(int epoch, int route, bool tickets) const;

    Settings m_settings;
};

} // namespace AgentConsole::Soak
