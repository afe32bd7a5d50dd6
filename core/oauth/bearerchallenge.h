#pragma once

#include <QByteArray>
#include <QString>
#include <QStringList>
#include <QUrl>

namespace AgentConsole::OAuth {

// The Bearer challenge of a WWW-Authenticate header (RFC 6750 §3, RFC 9728 §5.1): what a
// protected MCP server says when it refuses a request. Other schemes in the same header are
// skipped; a header without a Bearer challenge gives `present == false`.
struct BearerChallenge
{
    bool present = false;
    QString error; // "invalid_token", "insufficient_scope", ... (may be empty)
    QStringList scopes; // the scope parameter, split at spaces
    QUrl resourceMetadata; // RFC 9728's resource_metadata, when it is an absolute http(s) URL

    bool insufficientScope() const { return error == QLatin1String("insufficient_scope"); }
};

// Bounded: a header past 8 KiB is read no further (a server cannot make us parse megabytes).
BearerChallenge parseBearerChallenge(const QByteArray &header);

} // namespace AgentConsole::OAuth
