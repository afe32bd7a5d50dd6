#include "mcpsecrets.h"

#include <QCoreApplication>
#include <QJsonDocument>
#include <QJsonObject>
#include <QObject>
#include <QRegularExpression>

#include <algorithm>
#include <memory>

namespace AgentConsole::Mcp {

namespace {

// Why a server's secrets could not be put in, in the window's language (docs/TRANSLATIONS.md);
// agent-cli installs no translator and keeps the English source.
struct McpSecretWords
{
    Q_DECLARE_TR_FUNCTIONS(AgentConsole::McpSecrets)
};

// A key is what a reference can carry: no space, no brace, no '$'; bounded.
const QRegularExpression &referencePattern()
{
    static const QRegularExpression pattern(
        QStringLiteral("\\$\\{keychain:([^\\s{}$]{1,256})\\}"));
    return pattern;
}

bool canNameAnEntry(const QString &key)
{
    static const QRegularExpression pattern(QStringLiteral("^[^\\s{}$]{1,256}$"));
    return pattern.match(key).hasMatch();
}

// "header "Authorization"" or "env "GITHUB_TOKEN"", as the reasons name a field.
QString fieldWords(MovedSecret::Field field, const QString &name)
{
    switch (field) {
    case MovedSecret::Field::Header:
        return McpSecretWords::tr("header \"%1\"").arg(name.left(64));
    case MovedSecret::Field::Env:
        return McpSecretWords::tr("env \"%1\"").arg(name.left(64));
    case MovedSecret::Field::OAuthClientSecret:
        break;
    }
    return McpSecretWords::tr("the OAuth client secret");
}

QString substitute(const QString &value, const QHash<QString, QString> &secrets)
{
    QString out;
    qsizetype from = 0;
    auto it = referencePattern().globalMatch(value);
    while (it.hasNext()) {
        const QRegularExpressionMatch match = it.next();
        out += QStringView(value).mid(from, match.capturedStart() - from);
        out += secrets.value(match.captured(1));
        from = match.capturedEnd();
    }
    out += QStringView(value).mid(from);
    return out;
}

} // namespace

bool isSecretHeader(QStringView name)
{
    static const QStringList words = {
        QStringLiteral("auth"),   QStringLiteral("key"),        QStringLiteral("token"),
        QStringLiteral("secret"), QStringLiteral("cookie"),     QStringLiteral("password"),
        QStringLiteral("passwd"), QStringLiteral("credential"),
    };
    return std::any_of(words.cbegin(), words.cend(), [name](const QString &word) {
        return name.contains(word, Qt::CaseInsensitive);
    });
}

bool isSecretEnv(QStringView name)
{
    static const QStringList endings = {
        QStringLiteral("KEY"),         QStringLiteral("TOKEN"),  QStringLiteral("SECRET"),
        QStringLiteral("PASSWORD"),    QStringLiteral("PASSWD"), QStringLiteral("CREDENTIAL"),
        QStringLiteral("CREDENTIALS"),
    };
    static const QStringList whole = {QStringLiteral("PWD"), QStringLiteral("AUTH")};
    static const QRegularExpression separators(QStringLiteral("[_.-]"));
    const QStringList parts = name.toString().split(separators, Qt::SkipEmptyParts);
    return std::any_of(parts.cbegin(), parts.cend(), [](const QString &part) {
        return std::any_of(endings.cbegin(), endings.cend(),
                           [&part](const QString &end) {
                               return part.endsWith(end, Qt::CaseInsensitive);
                           })
            || std::any_of(whole.cbegin(), whole.cend(), [&part](const QString &word) {
                   return part.compare(word, Qt::CaseInsensitive) == 0;
               });
    });
}

QString secretKey(const QString &server, const QString &field)
{
    return QStringLiteral("mcp.%1.%2").arg(server, field);
}

QString secretReference(const QString &key)
{
    return QStringLiteral("${keychain:%1}").arg(key);
}

QStringList referencedKeys(QStringView value)
{
    QStringList keys;
    auto it = referencePattern().globalMatch(value.toString());
    while (it.hasNext())
        keys.append(it.next().captured(1));
    return keys;
}

bool hasReferences(const ServerConfig &config)
{
    return std::any_of(config.headers.cbegin(), config.headers.cend(),
                       [](const auto &header) {
                           return !referencedKeys(QString::fromUtf8(header.second)).isEmpty();
                       })
        || std::any_of(config.env.cbegin(), config.env.cend(),
                       [](const auto &entry) { return !referencedKeys(entry.second).isEmpty(); })
        || !referencedKeys(config.oauth.clientSecret).isEmpty();
}

std::optional<SecretExtraction> extractSecrets(const QByteArray &json, QString *error)
{
    QJsonParseError parseError;
    const QJsonDocument document = QJsonDocument::fromJson(json, &parseError);
    if (parseError.error != QJsonParseError::NoError || !document.isObject()) {
        *error = McpSecretWords::tr("not JSON: %1").arg(parseError.errorString());
        return std::nullopt;
    }
    QJsonObject root = document.object();
    QJsonObject servers = root.value(QStringLiteral("mcpServers")).toObject();
    SecretExtraction extraction;
    const QStringList serverNames = servers.keys();
    for (const QString &server : serverNames) {
        QJsonObject entry = servers.value(server).toObject();
        for (const auto field : {MovedSecret::Field::Header, MovedSecret::Field::Env}) {
            const QString section = field == MovedSecret::Field::Header ? QStringLiteral("headers")
                                                                        : QStringLiteral("env");
            QJsonObject values = entry.value(section).toObject();
            bool changed = false;
            const QStringList names = values.keys();
            for (const QString &name : names) {
                const QString value = values.value(name).toString();
                const bool secret = field == MovedSecret::Field::Header ? isSecretHeader(name)
                                                                        : isSecretEnv(name);
                if (!secret || value.isEmpty() || !referencedKeys(value).isEmpty())
                    continue;
                const QString key = secretKey(server, name);
                if (!canNameAnEntry(key)) {
                    *error = McpSecretWords::tr("server \"%1\": %2 cannot name a keychain entry "
                                                "(no spaces, braces or '$')")
                                 .arg(server.left(64), fieldWords(field, name));
                    return std::nullopt;
                }
                extraction.secrets.append({server, field, name, key, value});
                values.insert(name, secretReference(key));
                changed = true;
            }
            if (changed)
                entry.insert(section, values);
        }
        // The OAuth client secret of a pre-registered client (docs/MCP.md).
        QJsonObject oauth = entry.value(QStringLiteral("oauth")).toObject();
        const QString clientSecret = oauth.value(QStringLiteral("clientSecret")).toString();
        if (!clientSecret.isEmpty() && referencedKeys(clientSecret).isEmpty()) {
            const QString name = QStringLiteral("oauthClientSecret");
            const QString key = secretKey(server, name);
            if (!canNameAnEntry(key)) {
                *error = McpSecretWords::tr("server \"%1\": %2 cannot name a keychain entry "
                                            "(no spaces, braces or '$')")
                             .arg(server.left(64),
                                  fieldWords(MovedSecret::Field::OAuthClientSecret, name));
                return std::nullopt;
            }
            extraction.secrets.append(
                {server, MovedSecret::Field::OAuthClientSecret, name, key, clientSecret});
            oauth.insert(QStringLiteral("clientSecret"), secretReference(key));
            entry.insert(QStringLiteral("oauth"), oauth);
        }
        servers.insert(server, entry);
    }
    if (extraction.secrets.isEmpty()) {
        extraction.json = json;
        return extraction;
    }
    root.insert(QStringLiteral("mcpServers"), servers);
    extraction.json = QJsonDocument(root).toJson(QJsonDocument::Indented);
    return extraction;
}

void resolveSecrets(const ServerConfig &config, const SecretReader &reader, QObject *context,
                    std::function<void(const ResolvedSecrets &)> done)
{
    // The fields that hold a reference, and the keys they name (each asked once).
    struct Reference
    {
        MovedSecret::Field field;
        QString name;
        QStringList keys;
    };
    QList<Reference> references;
    QStringList keys;
    for (const auto &[name, value] : config.headers) {
        const QStringList named = referencedKeys(QString::fromUtf8(value));
        if (!named.isEmpty())
            references.append({MovedSecret::Field::Header, QString::fromLatin1(name), named});
    }
    for (const auto &[name, value] : config.env) {
        const QStringList named = referencedKeys(value);
        if (!named.isEmpty())
            references.append({MovedSecret::Field::Env, name, named});
    }
    if (const QStringList named = referencedKeys(config.oauth.clientSecret); !named.isEmpty())
        references.append({MovedSecret::Field::OAuthClientSecret, QString(), named});
    for (const Reference &reference : std::as_const(references)) {
        for (const QString &key : reference.keys) {
            if (!keys.contains(key))
                keys.append(key);
        }
    }
    const auto later = [context, done](ResolvedSecrets result) {
        QMetaObject::invokeMethod(
            context, [done, result = std::move(result)] { done(result); }, Qt::QueuedConnection);
    };
    if (keys.isEmpty())
        return later({config, {}, {}, {}});
    if (!reader) {
        const Reference &first = references.first();
        return later({std::nullopt,
                      McpSecretWords::tr("no keychain is available for the secret of %1; the "
                                         "server was not started")
                          .arg(fieldWords(first.field, first.name)),
                      QStringLiteral("no keychain to read %1 from").arg(first.keys.first()),
                      {}});
    }

    struct Pending
    {
        int left = 0;
        QHash<QString, SecretLookup> answers;
    };
    auto pending = std::make_shared<Pending>();
    pending->left = int(keys.size());
    const auto finish = [config, references, pending, done] {
        // The first field in the file's order whose key was not found decides the reason.
        for (const Reference &reference : references) {
            for (const QString &key : reference.keys) {
                const SecretLookup answer = pending->answers.value(key);
                const QString field = fieldWords(reference.field, reference.name);
                if (answer.status == SecretLookup::Status::NotFound) {
                    return done({std::nullopt,
                                 McpSecretWords::tr("the secret of %1 is not in the keychain; "
                                                    "type it again in Settings › MCP servers")
                                     .arg(field),
                                 QStringLiteral("keychain entry %1 not found").arg(key),
                                 {}});
                }
                if (answer.status == SecretLookup::Status::Failed) {
                    return done({std::nullopt,
                                 McpSecretWords::tr("the keychain could not be read for the "
                                                    "secret of %1; the server was not started")
                                     .arg(field),
                                 QStringLiteral("keychain entry %1 could not be read: %2")
                                     .arg(key, answer.problem.left(300)),
                                 {}});
                }
                if (reference.field == MovedSecret::Field::Header
                    && (answer.value.contains(QLatin1Char('\r'))
                        || answer.value.contains(QLatin1Char('\n')))) {
                    return done({std::nullopt,
                                 McpSecretWords::tr("the secret of %1 in the keychain is not one "
                                                    "line; type it again in Settings › MCP "
                                                    "servers")
                                     .arg(field),
                                 QStringLiteral("keychain entry %1 holds a line break").arg(key),
                                 {}});
                }
            }
        }
        QHash<QString, QString> values;
        for (auto it = pending->answers.cbegin(); it != pending->answers.cend(); ++it)
            values.insert(it.key(), it->value);
        ResolvedSecrets resolved;
        ServerConfig filled = config;
        for (auto &[name, value] : filled.headers)
            value = substitute(QString::fromUtf8(value), values).toUtf8();
        for (auto &[name, value] : filled.env)
            value = substitute(value, values);
        filled.oauth.clientSecret = substitute(filled.oauth.clientSecret, values);
        resolved.config = std::move(filled);
        resolved.values = values.values();
        done(resolved);
    };
    for (const QString &key : std::as_const(keys)) {
        reader(key, context, [key, pending, finish](const SecretLookup &answer) {
            pending->answers.insert(key, answer);
            if (--pending->left == 0)
                finish();
        });
    }
}

QStringList secretValues(const ServerConfig &config)
{
    QStringList values;
    for (const auto &[name, value] : config.headers) {
        if (isSecretHeader(QString::fromLatin1(name)))
            values.append(QString::fromUtf8(value));
    }
    for (const auto &[name, value] : config.env) {
        if (isSecretEnv(name))
            values.append(value);
    }
    if (!config.oauth.clientSecret.isEmpty())
        values.append(config.oauth.clientSecret);
    return values;
}

void SecretRedactor::add(const QString &value)
{
    if (value.size() < kMinLength || m_values.contains(value))
        return;
    m_values.append(value);
    std::sort(m_values.begin(), m_values.end(),
              [](const QString &a, const QString &b) { return a.size() > b.size(); });
}

void SecretRedactor::add(const QStringList &values)
{
    for (const QString &value : values)
        add(value);
}

QString SecretRedactor::redact(QString text) const
{
    for (const QString &value : m_values)
        text.replace(value, placeholder());
    return text;
}

QString SecretRedactor::redactCut(QString text) const
{
    text = redact(text);
    // The longest start of a secret that the text ends with goes too.
    qsizetype cut = 0;
    for (const QString &value : m_values) {
        for (qsizetype length = std::min(value.size() - 1, text.size()); length >= kMinLength;
             --length) {
            if (length > cut && text.endsWith(QStringView(value).left(length))) {
                cut = length;
                break;
            }
        }
    }
    if (cut > 0)
        text = text.left(text.size() - cut) + placeholder();
    return text;
}

} // namespace AgentConsole::Mcp
