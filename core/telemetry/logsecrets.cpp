#include "logsecrets.h"

#include <QJsonDocument>
#include <QJsonValue>
#include <QJsonArray>
#include <QUrl>

#include <algorithm>
#include <mutex>

namespace AgentConsole::LogSecrets {

namespace {

struct Known
{
    std::mutex mutex;
    QStringList forms; // every value and its escaped forms, longest first
};

// Never destroyed: the log writes its last lines while the process exits.
Known &known()
{
    static Known *const instance = new Known;
    return *instance;
}

// How a value appears when a server echoes it inside JSON (quotes, backslashes and controls
// escaped) or a URL (percent-encoded).
QStringList formsOf(const QString &value)
{
    QStringList forms{value};
    const QByteArray json = QJsonDocument(QJsonArray{value}).toJson(QJsonDocument::Compact);
    const QString inJson = QString::fromUtf8(json.mid(2, json.size() - 4)); // ["..."]
    if (inJson != value)
        forms.append(inJson);
    const QString inUrl = QString::fromLatin1(QUrl::toPercentEncoding(value));
    if (inUrl != value)
        forms.append(inUrl);
    return forms;
}

} // namespace

void add(const QString &value)
{
    const QString trimmed = value.trimmed();
    if (trimmed.size() < kMinLength)
        return;
    // "Bearer <token>": a server that echoes it may echo the token alone.
    for (const QLatin1StringView scheme :
         {QLatin1StringView("Bearer "), QLatin1StringView("Basic "),
          QLatin1StringView("Token ")}) {
        if (trimmed.startsWith(scheme, Qt::CaseInsensitive))
            add(trimmed.mid(scheme.size()));
    }
    Known &k = known();
    const std::lock_guard lock(k.mutex);
    if (k.forms.contains(trimmed))
        return;
    k.forms += formsOf(trimmed);
    k.forms.removeDuplicates();
    std::sort(k.forms.begin(), k.forms.end(),
              [](const QString &a, const QString &b) { return a.size() > b.size(); });
}

void add(const QStringList &values)
{
    for (const QString &value : values)
        add(value);
}

QString redact(const QString &text)
{
    QStringList forms;
    {
        Known &k = known();
        const std::lock_guard lock(k.mutex);
        forms = k.forms; // shared, not copied
    }
    if (forms.isEmpty())
        return text;
    QString out = text;
    for (const QString &form : std::as_const(forms))
        out.replace(form, QStringLiteral("[redacted]"));
    return out;
}

} // namespace AgentConsole::LogSecrets
