#pragma once

#include <QByteArray>
#include <QList>
#include <QPair>
#include <QString>
#include <QStringList>
#include <QUrl>

#include <optional>

namespace AgentConsole::Mcp {

// One server of mcp.json, in the format the common desktop clients share:
//   {"mcpServers": {"name": {"command": "...", "args": [...], "env": {...}}
//                          | {"url": "https://...", "headers": {...}}}}
// ("type": "stdio" | "http" | "streamable-http" may say which; "disabled": true skips one).
// Header and env values may be secrets: they are never logged (describe() leaves them out).
struct ServerConfig
{
    enum class Kind { Stdio, Http };

    QString name;
    Kind kind = Kind::Stdio;
    QString command;
    QStringList args;
    QList<QPair<QString, QString>> env;
    QUrl url;
    QList<QPair<QByteArray, QByteArray>> headers;
    // HTTP only: the OAuth sign-in (docs/MCP.md, "Servers that need sign-in"), on unless
    // "oauth": false or a static Authorization header says otherwise.
    //   "oauth": {"clientId": "...", "clientSecret": "${keychain:mcp.<name>.clientSecret}",
    //             "scopes": ["..."], "clientMetadataUrl": "https://..."}
    struct OAuth
    {
        bool enabled = true;
        QString clientId;
        QString clientSecret; // a secret: never logged, moved to the keychain by the editor
        QStringList scopes; // asked for when the server names none
        QString clientMetadataUrl;
    } oauth;

    // How long its tool calls may take, when the file says (else the console's defaults, 10 s
    // and 15 s): "idleTimeoutMs" without an answer or progress, "hardMaximumMs" however it
    // progresses; the hard maximum also bounds staff's time with the server's questions.
    static constexpr int minIdleTimeoutMs = 1000;
    static constexpr int maxIdleTimeoutMs = 50000;
    // One attempt and its 1 s margin stay inside the 60 s turn with time left to answer.
    static constexpr int maxHardMaximumMs = 50000;
    std::optional<int> idleTimeoutMs;
    std::optional<int> hardMaximumMs;

    QString describe() const; // "stdio: npx -y pkg" or "http: https://host/mcp", no secrets
};

struct Config
{
    QList<ServerConfig> servers;
};

struct ConfigLimits
{
    qsizetype maxFileBytes = 1024 * 1024; // DESIGN.md "Bounds": config files <= 1 MiB
    int maxServers = 32;
    int maxArgs = 64;
    int maxEnv = 64;
    int maxHeaders = 32;
    int maxStringChars = 4096;
};

// The file's servers, or the first problem as one line naming the server and the field. The
// file is only ever read: a broken one is reported and left as it is.
std::optional<Config> parseConfig(const QByteArray &json, QString *error,
                                  const ConfigLimits &limits = {});
// Reads at most maxFileBytes of a regular file; a missing file is an error too (the caller
// decides whether a missing default file matters).
std::optional<Config> readConfigFile(const QString &path, QString *error,
                                     const ConfigLimits &limits = {});

} // namespace AgentConsole::Mcp
