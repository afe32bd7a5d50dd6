#pragma once

#include "mcpconfig.h"

#include <QByteArray>
#include <QHash>
#include <QList>
#include <QString>
#include <QStringList>

#include <functional>
#include <optional>

QT_BEGIN_NAMESPACE
class QObject;
QT_END_NAMESPACE

namespace AgentConsole::Mcp {

// Secrets of mcp.json (docs/MCP.md, "Secrets"): the values of headers and env entries whose
// names say they hold a credential are kept in the keychain, and the file holds a reference
// in their place, "${keychain:mcp.<server>.<field>}". This file knows no keychain: saving
// takes the values out of the text (extractSecrets), the caller stores them; starting a server
// asks a SecretReader for the values its references name (resolveSecrets).

// Authorization, Proxy-Authorization, X-Api-Key, Cookie, X-Auth-Token, ...: a header whose
// name contains auth, key, token, secret, cookie, password or credential (any case).
bool isSecretHeader(QStringView name);
// GITHUB_TOKEN, OPENAI_API_KEY, DB_PASSWORD, CLIENT_SECRET, APIKEY, ...: an env name with a
// word (split at '_', '-', '.') that is or ends with KEY, TOKEN, SECRET, PASSWORD, PASSWD,
// CREDENTIAL(S), or is PWD or AUTH (any case). Leans to yes: a false positive only moves a
// harmless value into the keychain.
bool isSecretEnv(QStringView name);

// "mcp.<server>.<field>", the keychain entry of one header or env value.
QString secretKey(const QString &server, const QString &field);
// "${keychain:<key>}".
QString secretReference(const QString &key);
// The keys of the references in one value ("Bearer ${keychain:mcp.a.token}" names one).
QStringList referencedKeys(QStringView value);

// Whether any header or env value, or the OAuth client secret, refers to the keychain.
bool hasReferences(const ServerConfig &config);

// One value taken out of the text on its way to the keychain. `value` is the secret.
struct MovedSecret
{
    enum class Field { Header, Env, OAuthClientSecret };

    QString server;
    Field field = Field::Header;
    QString name; // the header's or the variable's name
    QString key; // its keychain entry
    QString value;
};

struct SecretExtraction
{
    QByteArray json; // the text to write: unchanged, byte for byte, when nothing was moved
    QList<MovedSecret> secrets;
};

// Takes every secret header and env value (isSecretHeader, isSecretEnv) of a text that
// parseConfig() accepted out of it, disabled servers included; a value that already holds a
// reference, or is empty, stays. When something was moved the text is written again
// (indented, keys in order), each value replaced by its reference. Nullopt with one line
// naming the server and the field when a field cannot name a keychain entry.
std::optional<SecretExtraction> extractSecrets(const QByteArray &json, QString *error);

// What a keychain said of one key (the caller adapts its own store to this).
struct SecretLookup
{
    enum class Status { Found, NotFound, Failed };

    Status status = Status::Failed;
    QString value; // Found only; never logged
    QString problem; // Failed: the keychain's own words, for the local log only
};
// Asks for one key; `done` runs exactly once, later, on `context`'s thread, and not at all once
// `context` is gone.
using SecretReader = std::function<void(const QString &key, QObject *context,
                                        std::function<void(const SecretLookup &)> done)>;

struct ResolvedSecrets
{
    std::optional<ServerConfig> config; // the references replaced by their values
    QString reason; // otherwise: why the server cannot start, in staff's words, no secret
    QString detail; // otherwise: the same for the local log (keys, the keychain's words)
    QStringList values; // the secrets put in, for SecretRedactor
};

// Replaces the references in `config`'s header and env values with the values `reader`
// finds, asking once per key, all at once. Every key must be found: a missing entry, a
// keychain that fails or no reader at all (null) leave the config unresolved with a reason.
// `done` runs once, later (also when there is nothing to resolve), unless `context` goes.
void resolveSecrets(const ServerConfig &config, const SecretReader &reader, QObject *context,
                    std::function<void(const ResolvedSecrets &)> done);

// The values of a config's secret headers and env entries as they stand (resolved or typed in
// the file by hand): what a log line or an export must not show.
QStringList secretValues(const ServerConfig &config);

// Replaces every known secret value in a line of text with "[redacted]", and a cut line's end
// that is the start of one. Values shorter than kMinLength are not looked for.
class SecretRedactor final
{
public:
    static constexpr qsizetype kMinLength = 4;
    static QString placeholder() { return QStringLiteral("[redacted]"); }

    void add(const QString &value);
    void add(const QStringList &values);
    bool isEmpty() const { return m_values.isEmpty(); }
    QString redact(QString text) const;
    // `text` was cut at a bound: its end may be the first part of a secret.
    QString redactCut(QString text) const;

private:
    QStringList m_values; // longest first, so that a secret containing another goes whole
};

} // namespace AgentConsole::Mcp
