#pragma once

#include <QByteArray>
#include <QDateTime>

#include <chrono>
#include <optional>

namespace AgentConsole::Http {

// A server's wish longer than a day is nonsense; every caller's retry policy caps what it
// honours far below this anyway. The bound keeps the arithmetic after it in range.
inline constexpr std::chrono::milliseconds kMaxRetryAfter{86'400'000};

// `Retry-After`: delay seconds ("120", fractions and exponents read as numbers do) or an
// HTTP date (IMF-fixdate, "Sun, 06 Nov 1994 08:49:37 GMT") measured from `now`; a date in
// the past is 0. Bounded by kMaxRetryAfter. Nothing when absent, negative or unreadable.
std::optional<std::chrono::milliseconds> parseRetryAfter(
    const QByteArray &value, const QDateTime &now = QDateTime::currentDateTimeUtc());

// `retry-after-ms` (OpenAI): non-negative milliseconds, bounded by kMaxRetryAfter.
// Nothing when absent, negative or unreadable.
std::optional<std::chrono::milliseconds> parseRetryAfterMs(const QByteArray &value);

} // namespace AgentConsole::Http
