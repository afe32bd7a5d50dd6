#pragma once

#include <QByteArray>
#include <QJsonParseError>
#include <QString>

#include <optional>

namespace AgentConsole {

// Fault and config files are read whole, so they must be small and must end: only regular
// files of at most `maxBytes` (DESIGN.md "Bounds"). A device such as /dev/zero never ends and a
// FIFO can block forever in open(); both are refused without reading a byte. Returns the
// contents, or nothing and a one-line reason that names the file.
inline constexpr qint64 kMaxPlanFileBytes = 1024 * 1024;

std::optional<QByteArray> readBoundedRegularFile(const QString &path, qint64 maxBytes,
                                                 QString *error);

// The files read so are JSON: why one does not parse ("unterminated string"), worded in the
// window's language like the reasons above, not left to Qt's own (untranslated without
// Qt's translations installed).
QString jsonParseReason(const QJsonParseError &error);

} // namespace AgentConsole
