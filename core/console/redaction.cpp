#include "redaction.h"

#include "../llm/apikeysource.h"
#include "../telemetry/logsecrets.h"
#include "runtimeoptions.h"

#include <QRegularExpression>
#include <QSet>
#include <QUuid>

#include <algorithm>

namespace AgentConsole {
namespace {

// The names of fields and query parameters that hold a credential, compared without case and
// without '-' and '_' (api_key, apiKey, API-KEY, x-api-key ...).
const QSet<QString> &secretFieldNames()
{
    static const QSet<QString> names{
        QStringLiteral("apikey"),        QStringLiteral("xapikey"),
        QStringLiteral("token"),         QStringLiteral("accesstoken"),
        QStringLiteral("refreshtoken"),  QStringLiteral("idtoken"),
        QStringLiteral("authtoken"),     QStringLiteral("sessiontoken"),
        QStringLiteral("password"),      QStringLiteral("passwd"),
        QStringLiteral("pwd"),           QStringLiteral("secret"),
        QStringLiteral("clientsecret"),  QStringLiteral("privatekey"),
        QStringLiteral("authorization"), QStringLiteral("proxyauthorization"),
    };
    return names;
}

// The same names as a pattern, for text (a query string, JSON inside a string, a log line).
constexpr auto kFieldNames = "(?:x[-_]?)?api[-_]?key|apikey|access[-_]?token|refresh[-_]?token"
                             "|id[-_]?token|auth[-_]?token|session[-_]?token|token|password"
                             "|passwd|pwd|client[-_]?secret|secret|private[-_]?key";

// Not inside a longer word: "tokens" or "my_password_hint" are other words.
constexpr auto kBefore = "(?<![A-Za-z0-9_-])";

struct Rule
{
    QRegularExpression pattern;
    QString replacement;
};

QRegularExpression caseless(const QString &pattern)
{
    return QRegularExpression(pattern, QRegularExpression::CaseInsensitiveOption);
}

const QList<Rule> &rules()
{
    const QString names = QLatin1String(kFieldNames);
    const QString before = QLatin1String(kBefore);
    static const QList<Rule> all{
        // A URL's user:password@ (the user goes too: it is half of the credential).
        {QRegularExpression(
             QStringLiteral(R"(\b([A-Za-z][A-Za-z0-9+.-]*://)[^/\s:@"'<>]+:[^/\s@"'<>]*@)")),
         QStringLiteral("\\1[redacted]@")},
        // Authorization: <scheme> <value>, as a header line, a JSON field or key=value.
        {caseless(
             before
             + QStringLiteral(
                 R"(((?:proxy-)?authorization["']?\s*[:=]\s*["']?)(?:[A-Za-z]+\s+)?[^\s"',;&]+)")),
         QStringLiteral("\\1[redacted]")},
        {caseless(before + QStringLiteral(R"((bearer\s+)[A-Za-z0-9._~+/-]{8,}=*)")),
         QStringLiteral("\\1[redacted]")},
        // Provider keys by their prefix: OpenAI/DeepSeek sk-..., Stripe sk_live_, GitHub,
        // Slack, AWS access key ids.
        {QRegularExpression(
             before
             + QStringLiteral(R"((?:sk-[A-Za-z0-9_-]{8,}|sk_(?:live|test)_[A-Za-z0-9]{8,})"
                              R"(|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})"
                              R"(|xox[abprs]-[A-Za-z0-9-]{10,}|AKIA[0-9A-Z]{16}))")),
         QStringLiteral("[redacted]")},
        // "api_key": "..." (JSON as text: tool arguments the model sent unparsed, a body).
        {caseless(QStringLiteral(R"re("(%1)"\s*:\s*"(?:[^"\\]|\\.)*")re").arg(names)),
         QStringLiteral("\"\\1\": \"[redacted]\"")},
        {caseless(QStringLiteral(R"re("(%1)"\s*:\s*-?[0-9][0-9.eE+-]*)re").arg(names)),
         QStringLiteral("\"\\1\": \"[redacted]\"")},
        // api_key=..., token: ... (a query string, a config line).
        {caseless(
             before
             + QStringLiteral(R"((%1)(\s*[=:]\s*)(?!\[redacted\])[^\s&#"'<>,;]+)").arg(names)),
         QStringLiteral("\\1\\2[redacted]")},
    };
    return all;
}

bool isUuid(QStringView token)
{
    static const QRegularExpression uuid(QStringLiteral(
        "^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$"));
    return uuid.match(token.toString()).hasMatch();
}

// A long token looks like a secret when one of its pieces (between '-' and '_') is long and
// mixes letters with digits: a key, a hash, a JWT part. Words joined by '-' or '_', however
// long, and UUIDs do not.
bool looksLikeSecret(QStringView token)
{
    if (isUuid(token))
        return false;
    qsizetype length = 0;
    bool digit = false;
    bool letter = false;
    for (qsizetype i = 0; i <= token.size(); ++i) {
        const QChar c = i < token.size() ? token.at(i) : QLatin1Char('-');
        if (c == QLatin1Char('-') || c == QLatin1Char('_')) {
            if (length >= 16 && digit && letter)
                return true;
            length = 0;
            digit = letter = false;
            continue;
        }
        ++length;
        digit = digit || c.isDigit();
        letter = letter || c.isLetter();
    }
    return false;
}

QString redactLongTokens(const QString &text)
{
    static const QRegularExpression token(
        QStringLiteral("(?<![A-Za-z0-9_-])[A-Za-z0-9_-]{32,}(?![A-Za-z0-9_-])"));
    QString out;
    qsizetype from = 0;
    for (auto it = token.globalMatch(text); it.hasNext();) {
        const QRegularExpressionMatch match = it.next();
        if (!looksLikeSecret(match.capturedView()))
            continue;
        out += QStringView(text).mid(from, match.capturedStart() - from);
        out += Redactor::placeholder();
        from = match.capturedEnd();
    }
    if (from == 0)
        return text;
    out += QStringView(text).mid(from);
    return out;
}

QString normalisedFieldName(QStringView name)
{
    QString normalised;
    for (const QChar c : name) {
        if (c != QLatin1Char('-') && c != QLatin1Char('_'))
            normalised += c.toLower();
    }
    return normalised;
}

} // namespace

Redactor Redactor::forModel(const ModelOptions &model, const QStringList &extraSecrets)
{
    Redactor redactor;
    redactor.addSecret(ApiKeySource::fromEnvironment(model.apiKeyEnv));
    redactor.addSecret(ApiKeySource::fromEnvironment(model.secondaryApiKeyEnv));
    for (const QString &secret : extraSecrets)
        redactor.addSecret(secret);
    return redactor;
}

void Redactor::addSecret(const QString &value)
{
    LogSecrets::add(value); // what an export must not show, the local log must not either
    const QString secret = value.trimmed();
    if (secret.size() < kMinSecretLength || m_secrets.contains(secret))
        return;
    m_secrets.append(secret);
    std::sort(m_secrets.begin(), m_secrets.end(),
              [](const QString &a, const QString &b) { return a.size() > b.size(); });
}

QString Redactor::redact(const QString &text) const
{
    if (text.isEmpty())
        return text;
    QString out = text;
    // The known values first: whatever their shape, they go.
    for (const QString &secret : m_secrets)
        out.replace(secret, placeholder());
    for (const Rule &rule : rules())
        out.replace(rule.pattern, rule.replacement);
    return redactLongTokens(out);
}

bool Redactor::isSecretFieldName(QStringView name)
{
    return secretFieldNames().contains(normalisedFieldName(name));
}

QJsonValue Redactor::redact(const QJsonValue &value) const
{
    switch (value.type()) {
    case QJsonValue::String:
        return redact(value.toString());
    case QJsonValue::Object:
        return redact(value.toObject());
    case QJsonValue::Array:
        return redact(value.toArray());
    default:
        return value;
    }
}

QJsonObject Redactor::redact(const QJsonObject &object) const
{
    QJsonObject out;
    for (auto it = object.constBegin(); it != object.constEnd(); ++it) {
        // A field named for a credential loses its value whole, and a key that is itself a
        // secret (a map keyed by token) is redacted like any text.
        const bool secretField = isSecretFieldName(it.key()) && !it.value().isNull()
            && !it.value().isUndefined();
        out.insert(redact(it.key()), secretField ? QJsonValue(placeholder()) : redact(*it));
    }
    return out;
}

QJsonArray Redactor::redact(const QJsonArray &array) const
{
    QJsonArray out;
    for (const QJsonValue &value : array)
        out.append(redact(value));
    return out;
}

} // namespace AgentConsole
