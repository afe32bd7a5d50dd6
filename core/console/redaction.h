#pragma once

#include <QJsonArray>
#include <QJsonObject>
#include <QJsonValue>
#include <QString>
#include <QStringList>

namespace AgentConsole {

struct ModelOptions;

// Takes secrets out of what the console exports (docs/EXPORT.md, "Redaction"): the values of
// the API keys the console knows, and anything shaped like a credential: "sk-..." keys,
// "Bearer ..." tokens, Authorization values, api_key=/token=/password= fields in a query or in
// JSON, a URL's user:password@, and long high-entropy tokens. Each is replaced by
// placeholder(). An export is a bug report that travels: a false positive costs a word of it,
// a miss costs a credential, so the rules lean to redacting.
//
// What it leaves alone, on purpose: operation ids (tenant:conversation:request:tool:step: each
// part is short), order ids (A1001), SKUs, ticket ids, request and conversation ids, and UUIDs
// (8-4-4-4-12 hex: an id's shape, never a provider's key's), and long words without digits or
// capitals (identifiers such as queryLogistics_with_a_long_name).
class Redactor final
{
public:
    static QString placeholder() { return QStringLiteral("[redacted]"); }
    // A known secret shorter than this is not looked for: no provider issues such keys, and
    // replacing every "abc" of a report would make it unreadable.
    static constexpr qsizetype kMinSecretLength = 6;

    Redactor() = default;
    // The values of the model's key variables (ModelOptions::apiKeyEnv, secondaryApiKeyEnv),
    // read from the environment as ApiKeySource reads them, plus `extraSecrets` (a key the
    // runtime got from the keychain, say).
    static Redactor forModel(const ModelOptions &model, const QStringList &extraSecrets = {});

    // Redacts every occurrence of `value` (trimmed); empty and too short values are ignored.
    void addSecret(const QString &value);
    // How many values are looked for (the values themselves are never handed back).
    int knownSecrets() const { return int(m_secrets.size()); }

    QString redact(const QString &text) const;
    // Every string in the value, recursively; and the whole value of a field whose name says
    // it holds a credential (api_key, token, password, authorization, ...), whatever its type.
    QJsonValue redact(const QJsonValue &value) const;
    QJsonObject redact(const QJsonObject &object) const;
    QJsonArray redact(const QJsonArray &array) const;

    // True when a JSON field or query parameter of this name holds a credential.
    static bool isSecretFieldName(QStringView name);

private:
    QStringList m_secrets; // longest first, so that a key containing another goes whole
};

} // namespace AgentConsole
