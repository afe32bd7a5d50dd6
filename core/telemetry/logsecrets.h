#pragma once

#include <QString>
#include <QStringList>

namespace AgentConsole::LogSecrets {

// Every secret the console holds, kept out of the local log (docs/MCP.md, "Secrets"): API
// keys, MCP bearer tokens, OAuth tokens and client secrets, mcp.json header and env values
// marked secret, any value read from or written to the keychain. Whoever learns one adds it;
// the log's writer redacts every line it writes (locallog.cpp), so that a server's error text,
// log notification or stderr that echoes a secret back never stores it, whoever logged it.
// Thread-safe. Values shorter than kMinLength are not looked for (they would redact words).
inline constexpr qsizetype kMinLength = 6;

// A value of an Authorization header ("Bearer <token>") adds the token alone too.
void add(const QString &value);
void add(const QStringList &values);

// `text` with every known secret replaced by "[redacted]": as it is, and as JSON and a URL
// would escape it.
QString redact(const QString &text);

} // namespace AgentConsole::LogSecrets
