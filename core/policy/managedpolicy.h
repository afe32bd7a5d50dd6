#pragma once

#include "../resilience/retrypolicy.h"

#include <QByteArray>
#include <QJsonObject>
#include <QList>
#include <QMap>
#include <QString>
#include <QStringList>

#include <optional>

namespace AgentConsole {

// The provider chain a team sets (DESIGN.md, "Circuit breakers, fallbacks"): the primary
// provider, an optional secondary, and whether the offline demo model answers last. The words
// ("offline", "openai", "none") are the console's (OptionWords); this only carries them.
struct PolicyProviderChain
{
    QString provider; // "offline" or "openai" as OptionWords spells them; empty: not given
    QString baseUrl;
    QString model;
    QString apiKeyVariable; // the key's variable, never a key
    QString secondaryBaseUrl;
    QString secondaryModel;
    QString secondaryApiKeyVariable;
    QString fallback; // "offline" or "none"; empty: not given

    friend bool operator==(const PolicyProviderChain &, const PolicyProviderChain &) = default;
};

// A team's managed policy (docs/POLICY.md), set once by an admin: the retry policies of tools
// and of the model, the MCP servers staff may use, the provider chain, and which settings
// staff cannot change. Read strictly (every key known, every value typed and bounded; a
// retry policy refused by RetryPolicy::problem()); what is not given is the console's own.
struct ManagedPolicy
{
    // Bounds on a policy (DESIGN.md, "Bounds"): a file or a database row, 1 MiB at most.
    static constexpr qsizetype maxBytes = 1024 * 1024;
    static constexpr int maxDepth = 32;
    static constexpr int maxVersionLength = 64;
    static constexpr int maxTextLength = 2048;
    static constexpr int maxToolPolicies = 256;
    static constexpr int maxMcpServers = 64; // as many as an mcp.json may hold
    static constexpr int maxLockedSettings = 64;

    QString version; // the admin's, e.g. "2026-12-01"; never empty
    QString origin; // where it was read from: the file's path, later the team database

    // The tools' default retry policy, and policies by tool name (which may name tools this
    // console does not have: a team's consoles differ in their MCP servers).
    std::optional<RetryPolicy> toolDefault;
    QMap<QString, RetryPolicy> toolPolicies;
    // The model layer's retries (attempts, first delay, cap) for every provider.
    std::optional<RetryPolicy> modelRetry;
    // The MCP servers staff may use, by mcp.json's name; nothing: every server.
    std::optional<QStringList> allowedMcpServers;
    std::optional<PolicyProviderChain> providerChain;
    // The settings staff cannot change, by the console's keys ("model/name", "ledger/spec",
    // ConsoleSettings::lockableKeys()); in the file's order, each once.
    QStringList locked;

    bool isLocked(const QString &key) const { return locked.contains(key); }
    bool allowsMcpServer(const QString &name) const
    {
        return !allowedMcpServers || allowedMcpServers->contains(name);
    }

    // What is kept with each turn and export: {"version", "origin"}.
    QJsonObject recorded() const;

    // Reads a policy's JSON text. `lockableKeys`: the settings a policy may lock (the
    // console's). Nothing, and *problem (one line naming the field, e.g. "toolRetry.tools.
    // getOrderStatus.maxRetries: ..."), when the text is not a policy.
    static std::optional<ManagedPolicy> read(const QByteArray &json, const QString &origin,
                                             const QStringList &lockableKeys, QString *problem);
};

// The RetryPolicy JSON form a policy uses (the scenarios' keys): attemptTimeoutMs, maxRetries,
// initialDelayMs, multiplier, maxDelayMs, retryAfterCapMs, jitter ("none", "full",
// "decorrelated"); a key not given keeps `base`'s value. The ranges are RetryPolicy::problem()'s.
std::optional<RetryPolicy> retryPolicyFromJson(const QJsonObject &object, const QString &path,
                                               const RetryPolicy &base, QString *problem);
QJsonObject retryPolicyToJson(const RetryPolicy &policy);

} // namespace AgentConsole
