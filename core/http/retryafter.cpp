#include "retryafter.h"

#include <QString>

#include <algorithm>
#include <cmath>

namespace AgentConsole::Http {

using Millis = std::chrono::milliseconds;

namespace {

// A finite, non-negative number of `unit` milliseconds, bounded; nothing otherwise.
std::optional<Millis> boundedNumber(const QByteArray &trimmed, double unit)
{
    bool ok = false;
    const double number = trimmed.toDouble(&ok);
    if (!ok || !std::isfinite(number) || number < 0)
        return std::nullopt;
    const double ms = std::min(number * unit, double(kMaxRetryAfter.count()));
    return Millis(static_cast<Millis::rep>(ms));
}

} // namespace

std::optional<Millis> parseRetryAfter(const QByteArray &value, const QDateTime &now)
{
    const QByteArray trimmed = value.trimmed();
    if (trimmed.isEmpty())
        return std::nullopt;
    bool isNumber = false;
    trimmed.toDouble(&isNumber);
    if (isNumber)
        return boundedNumber(trimmed, 1000.0);
    // An IMF-fixdate ends in "GMT", which Qt 6.4's RFC 2822 reader does not take; it is UTC.
    QString date = QString::fromLatin1(trimmed);
    if (date.endsWith(QLatin1String(" GMT")))
        date = date.chopped(4) + QStringLiteral(" +0000");
    const QDateTime when = QDateTime::fromString(date, Qt::RFC2822Date);
    if (!when.isValid())
        return std::nullopt;
    return Millis(std::clamp<qint64>(now.msecsTo(when), 0, kMaxRetryAfter.count()));
}

std::optional<Millis> parseRetryAfterMs(const QByteArray &value)
{
    const QByteArray trimmed = value.trimmed();
    if (trimmed.isEmpty())
        return std::nullopt;
    return boundedNumber(trimmed, 1.0);
}

} // namespace AgentConsole::Http
