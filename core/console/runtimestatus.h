#pragma once

#include <QList>
#include <QString>

#include <chrono>

namespace AgentConsole {

// A dependency whose circuit breaker is not closed.
struct DependencyStatus
{
    enum class Breaker { Closed, HalfOpen, Open }; // from the mildest to the worst

    QString dependency; // the breaker's name, e.g. "model:127.0.0.1:8080"
    Breaker breaker = Breaker::Closed;
    std::chrono::milliseconds openCooldown{0}; // how long an open breaker fails fast
};

// One circuit breaker as the diagnostics dock shows it, read when status() was called.
struct BreakerStatus
{
    using Breaker = DependencyStatus::Breaker;

    QString dependency; // "logistics:embedded", "model:127.0.0.1:8080"
    Breaker state = Breaker::Closed;
    // CLOSED: the calls in its sliding window and how many of them failed (both 0 otherwise),
    // judged once it holds minimumCalls; a failure rate >= failureRateThreshold opens it.
    int windowCalls = 0;
    int windowFailures = 0;
    int windowSize = 0;
    int minimumCalls = 0;
    double failureRateThreshold = 0.0;
    // OPEN: how long it still fails fast (0 once over: the next call probes), of openCooldown.
    qint64 cooldownLeftMs = 0;
    qint64 openCooldownMs = 0;
    // OPEN with its cool-down over: the next call is let through as a trial.
    bool probeDue = false;
    // The last change of state; lastChangeAgoMs < 0 when it never changed.
    Breaker lastFrom = Breaker::Closed;
    Breaker lastTo = Breaker::Closed;
    qint64 lastChangeAgoMs = -1;
    QString lastChangeReason; // "10 of the last 10 calls failed", "reset by staff"
    int openCount = 0; // times it opened
    int rejectedCount = 0; // calls it refused
    // Isolated by a lead (docs/TEAM.md): it refuses every call whatever `state` says; the
    // isolation in core's words (IsolationWords::refusal), empty otherwise.
    bool isolated = false;
    QString isolation;
};

// One MCP server of mcp.json (docs/MCP.md) as the window will list it: plain values, so ui/
// needs nothing of core/mcp.
struct McpServerStatus
{
    enum class State { Starting, Ready, Down };
    // Why a server is down, in kinds the window words for staff (never the server's text).
    enum class Problem {
        None,
        CouldNotStart, // the program did not start, or the address could not be reached
        Stopped, // the program exited or the connection closed
        NoAnswer, // it did not answer in time
        Refused, // it refused the console's requests
        AccessDenied, // it refused access (credentials)
        NotUnderstood, // it sent what is not MCP, or too much of it
        OtherProtocol, // it speaks an MCP version the console does not
        SessionEnded, // it ended the session
        SignInNeeded, // it wants staff to sign in (OAuth) before it answers
        RefusedByPolicy, // the team's policy does not allow it: never started (docs/POLICY.md)
    };
    // Its OAuth sign-in (docs/MCP.md, "Servers that need sign-in").
    enum class SignIn {
        None, // no sign-in: stdio, "oauth": false, or its own Authorization header
        NotNeeded, // it has asked for none so far
        SignedOut, // it asks for a sign-in (again): staff sign in from the dock
        SigningIn, // the browser is open; waiting for the redirect
        SignedIn, // a token is held (kept in the keychain)
    };
    // Why the last sign-in did not bring a token, in kinds the window words for staff.
    enum class SignInProblem {
        None,
        Cancelled, // staff cancelled it
        TimedOut, // the browser did not come back in time
        Declined, // the sign-in page was declined
        Refused, // the authorization server refused the console (or the refresh)
        Unreachable, // the authorization server did not answer
        Unusable, // no usable authorization server: metadata missing, wrong, insecure
        TooManyAttempts, // the server kept refusing new tokens
        NoBrowser, // the browser could not be opened
        Keychain, // the keychain did not keep the sign-in
    };
    // Who chose how a tool's calls run.
    enum class Decider { Annotations, Staff };

    QString name;
    QString transport; // "stdio: npx -y pkg" or "http: https://host/mcp", never a secret
    State state = State::Starting;
    int tools = 0;
    // Listed by the server, not offered (schema, name, task-only): one line each, the tool's
    // name and why, in the console's own words (Mcp::Server::refusedTools).
    QStringList refusedTools;
    // mcp.json asked for longer attempts than fit inside a turn: they are limited to this.
    int timeoutsLimitedToMs = 0;
    QString lastError; // why it is down, for the log and the tooltip; empty when ready
    Problem problem = Problem::None; // Down: why, for staff
    qint64 restartInMs = -1; // Down: the next restart is due in this long; -1 when none is
    bool givenUp = false; // Down after its restarts in a row: it stays down until restart
    // Its circuit breaker ("mcp:<server>") is open: its tools fail fast for the cool-down.
    bool circuitOpen = false;
    qint64 circuitCooldownLeftMs = 0;
    // A lead isolated it for the team (docs/TEAM.md): why, in core's words
    // (IsolationWords::refusal); empty when it is not isolated.
    QString isolation;
    SignIn signIn = SignIn::None;
    SignInProblem signInProblem = SignInProblem::None;
    struct Tool
    {
        QString name; // as the model calls it, "<server>__<tool>"
        QString toolName; // the server's own name for it
        QString policyKey; // "<server>/<tool>": its key in McpServers::setToolPolicies
        QString title; // the server's title, else its name
        QString policy; // in force: "read", "idempotent-write" or "write"
        QString annotatedPolicy; // as its annotations decide (the same unless staff chose)
        Decider decidedBy = Decider::Annotations;
        // The annotations, hints nobody verified, took a safeguard away: its calls are
        // retried (read-only, idempotent) without staff confirming them.
        bool hintsRelaxSafeguard = false;
    };
    QList<Tool> toolPolicies;
};

// Where a team console keeps what it shares (docs/TEAM.md): nowhere for a desk of its own.
struct TeamStatus
{
    QString database; // the team's database as staff may read it (user@host:port/db); empty: none
    bool alone = false; // it could not be reached at the start: this desk's own store instead
    QString reason; // why it is alone, one line for staff
};

// What the window shows about the running console, decided in core: the model that answers,
// the breakers that are not closed, and the tool retry policy with its worst case.
struct RuntimeStatus
{
    QString modelName; // empty until the runtime is ready
    // Who is asking, within which tenant (the trusted session); empty until ready.
    QString staffUserId;
    QString staffName;
    QString tenantId;
    bool offlineFallback = false; // a remote model, and the offline demo model when it fails
    TeamStatus team;
    // The breakers that are open, then those half-open, each in the registry's order.
    QList<DependencyStatus> troubledDependencies;
    // The worst state of any breaker: Closed when none is open or half-open.
    DependencyStatus::Breaker worstBreaker = DependencyStatus::Breaker::Closed;
    QString toolPolicy; // "3 attempts × 2 s, backoff 200 ms ×2 ≤ 1 s; worst case 6.6 s"
    std::chrono::milliseconds toolWorstCase{0}; // the longest one tool call can take
    // Every breaker, in the registry's order (by name), whatever its state.
    QList<BreakerStatus> breakers;
    // The MCP servers, in mcp.json's order; empty without one.
    QList<McpServerStatus> mcpServers;
};

} // namespace AgentConsole
