#pragma once

#include "../resilience/toolresult.h"

#include <QObject>
#include <QString>
#include <QStringView>

#include <optional>

namespace AgentConsole {

// Stable codes of failed model calls (ChatResponse::errorCode): one enum, printable by name,
// and a row per code saying what the fallback chain does with it and what staff read. The
// sentence shown to the staff member is ChatResponse::errorMessage (the row's); details go to
// the local log only. The wire names are stored with a turn and shown by agent-cli: they
// must never change.
namespace ModelError {
Q_NAMESPACE

enum class Code {
    RateLimited, // 429 rate_limit_exceeded, after the provider's retries
    QuotaExhausted, // 429 insufficient_quota, DeepSeek's 402: never retried
    AuthFailed, // 401, 403, no key
    BadRequest, // 400, 404, 422
    Unavailable, // 5xx, connection failures
    Timeout, // connect or idle timeout, a stalled stream
    Truncated, // the stream ended early
    InvalidResponse, // a body that cannot be parsed
    // A 3xx: the endpoint answered with a redirect, which is never followed (the key and the
    // conversation would go to another origin); not retried, the next model answers.
    EndpointMoved,
    CircuitOpen, // the provider's breaker is open: fail fast
    Cancelled, // keep last: codeCount counts up to it
};
Q_ENUM_NS(Code)

inline constexpr int codeCount = int(Code::Cancelled) + 1;

// The wire names, as QString constants for comparing with ChatResponse::errorCode.
inline const QString RateLimited = QStringLiteral("MODEL_RATE_LIMITED");
inline const QString QuotaExhausted = QStringLiteral("MODEL_QUOTA_EXHAUSTED");
inline const QString AuthFailed = QStringLiteral("MODEL_AUTH_FAILED");
inline const QString BadRequest = QStringLiteral("MODEL_BAD_REQUEST");
inline const QString Unavailable = QStringLiteral("MODEL_UNAVAILABLE");
inline const QString Timeout = QStringLiteral("MODEL_TIMEOUT");
inline const QString Truncated = QStringLiteral("MODEL_STREAM_TRUNCATED");
inline const QString InvalidResponse = QStringLiteral("MODEL_INVALID_RESPONSE");
inline const QString EndpointMoved = QStringLiteral("MODEL_ENDPOINT_MOVED");
inline const QString CircuitOpen = QStringLiteral("MODEL_CIRCUIT_OPEN");
inline const QString Cancelled = QStringLiteral("CANCELLED"); // the same word as a tool's

const QString &wireName(Code code);
// Empty for a code this console does not know.
std::optional<Code> fromWireName(QStringView name);

struct Row
{
    Code code;
    // No retry and no wait of seconds cures it: the fallback chain takes the provider out
    // until its cool-down or a settings change.
    bool takesProviderOut;
    // Says the provider cannot serve right now: counts against its circuit breaker.
    bool providerFailure;
    // Points at the model's configuration (key, model name, endpoint): logged as a warning.
    bool configuration;
    // ChatResponse::errorMessage of a provider's failure (UTF-16). Null when the failure is
    // worded where it happens (an open circuit names the provider).
    const char16_t *english;
    const char16_t *chinese;
};

const Row &row(Code code);
// Null for a wire name this console does not know.
const Row *find(QStringView wireName);
// The row's sentence; a general one for a code without a sentence or row.
QString message(QStringView wireName, Language language);

} // namespace ModelError
} // namespace AgentConsole
