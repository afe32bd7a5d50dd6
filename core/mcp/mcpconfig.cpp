#include "mcpconfig.h"

#include <QCoreApplication>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>

#include <cmath>

namespace AgentConsole::Mcp {

namespace {

// Why mcp.json is refused, in the window's language (docs/TRANSLATIONS.md); agent-cli installs
// no translator and keeps the English source. Keys and names stay as they are in the file.
struct McpConfigWords
{
    Q_DECLARE_TR_FUNCTIONS(AgentConsole::McpConfig)
};

} // namespace

QString ServerConfig::describe() const
{
    if (kind == Kind::Http)
        return QStringLiteral("http: ")
            + url.adjusted(QUrl::RemoveQuery | QUrl::RemoveUserInfo | QUrl::RemoveFragment)
                  .toString();
    return QStringLiteral("stdio: ") + command
        + (args.isEmpty() ? QString() : QLatin1Char(' ') + args.join(QLatin1Char(' ')).left(200));
}

std::optional<Config> parseConfig(const QByteArray &json, QString *error,
                                  const ConfigLimits &limits)
{
    const auto fail = [error](const QString &message) {
        *error = message;
        return std::nullopt;
    };
    if (json.size() > limits.maxFileBytes)
        return fail(McpConfigWords::tr("larger than %1 bytes").arg(limits.maxFileBytes));
    QJsonParseError parseError;
    const QJsonDocument document = QJsonDocument::fromJson(json, &parseError);
    if (parseError.error != QJsonParseError::NoError)
        return fail(McpConfigWords::tr("not JSON: %1 at offset %2")
                        .arg(parseError.errorString())
                        .arg(parseError.offset));
    if (!document.isObject() || !document.object().value(QStringLiteral("mcpServers")).isObject())
        return fail(McpConfigWords::tr("expected an object with an \"mcpServers\" object"));
    const QJsonObject servers = document.object().value(QStringLiteral("mcpServers")).toObject();
    if (servers.size() > limits.maxServers)
        return fail(McpConfigWords::tr("more than %1 servers").arg(limits.maxServers));
    static const QRegularExpression validName(QStringLiteral("^[A-Za-z0-9_-]{1,32}$"));
    static const QRegularExpression headerName(
        QStringLiteral("^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,64}$"));
    Config config;
    for (auto it = servers.constBegin(); it != servers.constEnd(); ++it) {
        ServerConfig server;
        server.name = it.key();
        const auto bad = [&](const QString &what) {
            return fail(McpConfigWords::tr("server \"%1\": %2").arg(server.name.left(64), what));
        };
        if (!validName.match(server.name).hasMatch())
            return bad(McpConfigWords::tr("name it with 1 to 32 letters, digits, '_' or '-'"));
        if (!it.value().isObject())
            return bad(McpConfigWords::tr("expected an object"));
        const QJsonObject entry = it.value().toObject();
        if (entry.value(QStringLiteral("disabled")).toBool())
            continue;
        const auto text = [&](const QJsonValue &value) -> std::optional<QString> {
            if (!value.isString() || value.toString().size() > limits.maxStringChars)
                return std::nullopt;
            return value.toString();
        };
        const QString type = entry.value(QStringLiteral("type")).toString();
        const bool hasCommand = entry.contains(QStringLiteral("command"));
        const bool hasUrl = entry.contains(QStringLiteral("url"));
        if (hasCommand == hasUrl)
            return bad(McpConfigWords::tr("give either \"command\" (stdio) or \"url\" (HTTP)"));
        if (type == QLatin1String("sse"))
            return bad(McpConfigWords::tr("the old HTTP+SSE transport is not supported; use the "
                                          "server's Streamable HTTP endpoint"));
        if (!type.isEmpty() && type != QLatin1String("stdio") && type != QLatin1String("http")
            && type != QLatin1String("streamable-http"))
            return bad(McpConfigWords::tr("unknown \"type\" (stdio, http or streamable-http)"));
        if (hasCommand) {
            server.kind = ServerConfig::Kind::Stdio;
            const auto command = text(entry.value(QStringLiteral("command")));
            if (!command || command->trimmed().isEmpty())
                return bad(McpConfigWords::tr("\"command\" must be a non-empty string"));
            server.command = *command;
            const QJsonValue args = entry.value(QStringLiteral("args"));
            if (!args.isUndefined() && !args.isArray())
                return bad(McpConfigWords::tr("\"args\" must be an array of strings"));
            if (args.toArray().size() > limits.maxArgs)
                return bad(McpConfigWords::tr("more than %1 args").arg(limits.maxArgs));
            for (const QJsonValue &arg : args.toArray()) {
                const auto value = text(arg);
                if (!value)
                    return bad(McpConfigWords::tr("\"args\" must be an array of strings"));
                server.args.append(*value);
            }
            const QJsonValue env = entry.value(QStringLiteral("env"));
            if (!env.isUndefined() && !env.isObject())
                return bad(McpConfigWords::tr("\"env\" must be an object of strings"));
            if (env.toObject().size() > limits.maxEnv)
                return bad(McpConfigWords::tr("more than %1 env entries").arg(limits.maxEnv));
            const QJsonObject envObject = env.toObject();
            for (auto e = envObject.constBegin(); e != envObject.constEnd(); ++e) {
                const auto value = text(e.value());
                if (!value || e.key().isEmpty() || e.key().contains(QLatin1Char('=')))
                    return bad(McpConfigWords::tr("\"env\" must map names to strings"));
                server.env.append({e.key(), *value});
            }
        } else {
            server.kind = ServerConfig::Kind::Http;
            const auto url = text(entry.value(QStringLiteral("url")));
            server.url = url ? QUrl(*url, QUrl::StrictMode) : QUrl();
            if (!server.url.isValid() || server.url.host().isEmpty()
                || (server.url.scheme() != QLatin1String("http")
                    && server.url.scheme() != QLatin1String("https")))
                return bad(McpConfigWords::tr("\"url\" must be an http:// or https:// URL"));
            const QJsonValue headers = entry.value(QStringLiteral("headers"));
            if (!headers.isUndefined() && !headers.isObject())
                return bad(McpConfigWords::tr("\"headers\" must be an object of strings"));
            if (headers.toObject().size() > limits.maxHeaders)
                return bad(McpConfigWords::tr("more than %1 headers").arg(limits.maxHeaders));
            const QJsonObject headerObject = headers.toObject();
            for (auto h = headerObject.constBegin(); h != headerObject.constEnd(); ++h) {
                const auto value = text(h.value());
                if (!headerName.match(h.key()).hasMatch() || !value
                    || value->contains(QLatin1Char('\r')) || value->contains(QLatin1Char('\n')))
                    return bad(McpConfigWords::tr("header \"%1\": a token name and a one-line "
                                                  "string value")
                                   .arg(h.key().left(64)));
                server.headers.append({h.key().toLatin1(), value->toUtf8()});
            }
            const QJsonValue oauth = entry.value(QStringLiteral("oauth"));
            if (oauth.isBool()) {
                server.oauth.enabled = oauth.toBool();
            } else if (!oauth.isUndefined()) {
                if (!oauth.isObject())
                    return bad(McpConfigWords::tr("\"oauth\" must be false or an object"));
                const QJsonObject o = oauth.toObject();
                for (auto k = o.constBegin(); k != o.constEnd(); ++k) {
                    const QString key = k.key();
                    if (key == QLatin1String("scopes")) {
                        if (!k.value().isArray() || k.value().toArray().size() > limits.maxArgs)
                            return bad(McpConfigWords::tr("\"oauth\": \"scopes\" must be an array "
                                                          "of strings"));
                        for (const QJsonValue &scope : k.value().toArray()) {
                            const auto value = text(scope);
                            if (!value || value->isEmpty() || value->contains(QLatin1Char(' ')))
                                return bad(McpConfigWords::tr("\"oauth\": \"scopes\" must be an "
                                                              "array of strings"));
                            server.oauth.scopes.append(*value);
                        }
                        continue;
                    }
                    const auto value = text(k.value());
                    if (!value)
                        return bad(McpConfigWords::tr("\"oauth\": \"%1\" must be a string")
                                       .arg(key.left(64)));
                    if (key == QLatin1String("clientId"))
                        server.oauth.clientId = *value;
                    else if (key == QLatin1String("clientSecret"))
                        server.oauth.clientSecret = *value;
                    else if (key == QLatin1String("clientMetadataUrl"))
                        server.oauth.clientMetadataUrl = *value;
                    else
                        return bad(McpConfigWords::tr("\"oauth\": unknown field \"%1\"")
                                       .arg(key.left(64)));
                }
                if (!server.oauth.clientSecret.isEmpty() && server.oauth.clientId.isEmpty())
                    return bad(McpConfigWords::tr("\"oauth\": a \"clientSecret\" needs its "
                                                  "\"clientId\""));
            }
        }
        // Whole milliseconds from the shortest idle timeout to `high`, or absent.
        const auto millis = [&](const char *key, int high,
                                std::optional<int> *into) -> std::optional<QString> {
            const QJsonValue value = entry.value(QLatin1String(key));
            if (value.isUndefined())
                return std::nullopt;
            const double number = value.toDouble(-1);
            if (!value.isDouble() || number != std::floor(number)
                || number < ServerConfig::minIdleTimeoutMs || number > high)
                return McpConfigWords::tr("\"%1\" must be whole milliseconds from %2 to %3")
                    .arg(QLatin1String(key))
                    .arg(ServerConfig::minIdleTimeoutMs)
                    .arg(high);
            *into = int(number);
            return std::nullopt;
        };
        if (const auto problem = millis("idleTimeoutMs", ServerConfig::maxIdleTimeoutMs,
                                        &server.idleTimeoutMs))
            return bad(*problem);
        if (const auto problem = millis("hardMaximumMs", ServerConfig::maxHardMaximumMs,
                                        &server.hardMaximumMs))
            return bad(*problem);
        if (server.idleTimeoutMs && server.hardMaximumMs
            && *server.hardMaximumMs < *server.idleTimeoutMs)
            return bad(McpConfigWords::tr("\"hardMaximumMs\" must not be shorter than "
                                          "\"idleTimeoutMs\""));
        config.servers.append(server);
    }
    return config;
}

std::optional<Config> readConfigFile(const QString &path, QString *error,
                                     const ConfigLimits &limits)
{
    const QFileInfo info(path);
    if (!info.exists()) {
        *error = McpConfigWords::tr("%1: no such file").arg(path);
        return std::nullopt;
    }
    if (!info.isFile()) {
        *error = McpConfigWords::tr("%1: not a regular file").arg(path);
        return std::nullopt;
    }
    if (info.size() > limits.maxFileBytes) {
        *error = McpConfigWords::tr("%1: larger than %2 bytes").arg(path).arg(limits.maxFileBytes);
        return std::nullopt;
    }
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) {
        *error = McpConfigWords::tr("%1: %2").arg(path, file.errorString());
        return std::nullopt;
    }
    // Read with the bound again: the file may have grown since it was measured.
    const QByteArray bytes = file.read(limits.maxFileBytes + 1);
    QString problem;
    auto config = parseConfig(bytes, &problem, limits);
    if (!config)
        *error = McpConfigWords::tr("%1: %2").arg(path, problem);
    return config;
}

} // namespace AgentConsole::Mcp
