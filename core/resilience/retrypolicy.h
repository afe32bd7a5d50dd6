#pragma once

#include "failurekind.h"

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <random>

#include <QList>
#include <QString>

namespace AgentConsole {

enum class JitterMode {
    None, // the exponential schedule as computed
    Full, // uniform in [0, computed]
    Decorrelated, // uniform in [initial, previous * 3], capped ("decorrelated jitter")
};

// When and how often a tool call is attempted again. `maxRetries` counts retries, not
// attempts: the default 2 retries means at most 3 attempts. Defaults are the seed article's:
// attempt timeout 2 s, 2 retries, 200 ms first delay, x2, 1 s cap, so a call takes at most
// 2 + 0.2 + 2 + 0.4 + 2 = 6.6 s.
struct RetryPolicy
{
    using Millis = std::chrono::milliseconds;

    Millis attemptTimeout{2000};
    int maxRetries = 2;
    Millis initialDelay{200};
    double multiplier = 2.0;
    Millis maxDelay{1000};
    JitterMode jitter = JitterMode::None;
    std::uint64_t jitterSeed = 0x5eed;
    bool retryTransient = true;
    bool retryAttemptTimeout = true;
    // A delay the server asks for (Retry-After) replaces the computed one, but never exceeds
    // this nor maxDelay: a server cannot stretch a call beyond the worst case shown.
    Millis retryAfterCap{2000};
    // Caps attempts plus backoff for the whole call; zero means the policy's worst case
    // (worstCaseDuration(), the figure the console shows), so the figure is a true bound even
    // when a server's Retry-After makes a backoff longer than the schedule's.
    Millis callDeadline{0};

    // The seed article's figures, un-jittered: the same waits in every run (tests, scenarios).
    static RetryPolicy defaults() { return {}; }
    // What a console runs with unless staff chose otherwise: the same figures and worst case,
    // each backoff drawn uniformly up to the computed one (full jitter) from `seed`, so that
    // a team's consoles, seeded apart, do not retry a recovering backend in lockstep.
    static RetryPolicy jittered(std::uint64_t seed)
    {
        RetryPolicy policy;
        policy.jitter = JitterMode::Full;
        policy.jitterSeed = seed;
        return policy;
    }

    // The range problem() allows one member, stated once: scenarios and the policy editor are
    // refused by it, and the editor builds its fields' ranges and help from it.
    struct Bound
    {
        enum class Unit { Millis, Count, Factor };
        const char *field; // the member's name ("attemptTimeout"), as RangeProblem's
        Unit unit;
        double min;
        double max;
    };
    // Every member with a range, in the order problem() checks them.
    static const QList<Bound> &bounds();
    // One member's range; nothing for a member without one (jitter, what is retried).
    static std::optional<Bound> bound(const char *field);

    // Why this policy cannot be used (one line naming the field and its range), or nothing
    // when every value is in range. The window's policy editor and scenarios refuse such a
    // policy and keep the one they had.
    std::optional<QString> problem() const;
    // The same problem with the member it is about ("maxRetries"), so that a form can show it
    // beside that field whatever language the text is in.
    struct RangeProblem
    {
        const char *field;
        QString text;
    };
    std::optional<RangeProblem> rangeProblem() const;

    friend bool operator==(const RetryPolicy &, const RetryPolicy &) = default;

    int maxAttempts() const { return 1 + maxRetries; }
    bool isRetryable(FailureKind kind) const;
    // The un-jittered delay before retry number `retry` (1-based), capped at maxDelay.
    Millis computedDelay(int retry) const;
    // The longest a call can take with this policy when the server gives no Retry-After:
    // every attempt times out and every backoff is as long as the schedule allows.
    Millis worstCaseDuration() const;
    // The same, if every backoff were stretched to the Retry-After cap (serverDelayCap()).
    // Longer than worstCaseDuration(): the call deadline then cuts the last attempts short.
    Millis worstCaseWithServerDelays() const;
    // The longest backoff a server's Retry-After can ask for: min(retryAfterCap, maxDelay).
    Millis serverDelayCap() const;
    Millis effectiveDeadline() const;
    // Short human text for the UI, e.g. "3 attempts × 2 s, backoff 200 ms ×2 ≤ 1 s; worst case 6.6
    // s".
    QString describe() const;
};

// The delays of one call's retries, in order. Deterministic for a given seed.
class BackoffSchedule final
{
public:
    BackoffSchedule(const RetryPolicy &policy, std::uint64_t seed);

    // Delay before retry number `retry` (1-based). A server-given delay overrides the computed
    // one, up to the policy's serverDelayCap().
    RetryPolicy::Millis next(int retry,
                             std::optional<RetryPolicy::Millis> serverDelay = std::nullopt);

private:
    std::mt19937_64 &random();

    const RetryPolicy &m_policy;
    std::uint64_t m_seed;
    // Seeded on the first jittered draw: the engine is 2.5 KB of state whose seeding would
    // otherwise be paid by every call, jittered or not, retried or not.
    std::unique_ptr<std::mt19937_64> m_random;
    RetryPolicy::Millis m_previous;
};

} // namespace AgentConsole
