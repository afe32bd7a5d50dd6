#include "runtimeoptions.h"

#include "../ledger/postgresledger.h"

#include <QCoreApplication>
#include <QStandardPaths>
#include <QUrl>
#include <QUrlQuery>

namespace AgentConsole {

namespace {

struct TeamWords
{
    Q_DECLARE_TR_FUNCTIONS(AgentConsole::TeamDatabase)
};

} // namespace

QString RuntimeOptions::defaultDataDirectory()
{
    return QStandardPaths::writableLocation(QStandardPaths::AppDataLocation);
}

QString RuntimeOptions::teamSpecProblem(const QString &url)
{
    const QString trimmed = url.trimmed();
    if (!trimmed.startsWith(QLatin1String("postgresql://"))
        && !trimmed.startsWith(QLatin1String("postgres://")))
        return TeamWords::tr("a team's database is named postgresql://user@host:port/database");
    QString error;
    const std::optional<PostgresLocation> location = PostgresLocation::fromUrl(trimmed, &error);
    if (!location)
        return TeamWords::tr("a team's database is named postgresql://user@host:port/database");
    // Command lines are seen by every user of the machine and kept in shell histories.
    const QUrlQuery query{QUrl(trimmed)};
    if (!location->password.isEmpty() || query.hasQueryItem(QStringLiteral("password")))
        return TeamWords::tr("leave the password out of the address: the console reads it from "
                             "the keychain, ~/.pgpass or a PostgreSQL service file");
    return {};
}

namespace OptionWords {

namespace {

template <typename Value>
std::optional<Value> valueOf(const QStringList &words, const QString &word)
{
    const qsizetype index = words.indexOf(word);
    if (index < 0)
        return std::nullopt;
    return static_cast<Value>(index);
}

} // namespace

QStringList providers()
{
    return {QStringLiteral("offline"), QStringLiteral("openai")};
}

QStringList fallbacks()
{
    return {QStringLiteral("none"), QStringLiteral("offline")};
}

QStringList backends()
{
    return {QStringLiteral("embedded"), QStringLiteral("http")};
}

QString provider(ModelOptions::Provider provider)
{
    return providers().value(int(provider));
}

QString fallback(bool toOffline)
{
    return fallbacks().value(toOffline ? 1 : 0);
}

QString backend(BackendOptions::Kind kind)
{
    return backends().value(int(kind));
}

std::optional<ModelOptions::Provider> providerFrom(const QString &word)
{
    return valueOf<ModelOptions::Provider>(providers(), word);
}

std::optional<bool> fallbackFrom(const QString &word)
{
    const qsizetype index = fallbacks().indexOf(word);
    return index < 0 ? std::nullopt : std::optional<bool>(index == 1);
}

std::optional<BackendOptions::Kind> backendFrom(const QString &word)
{
    return valueOf<BackendOptions::Kind>(backends(), word);
}

QString choices(const QStringList &words)
{
    if (words.size() < 2)
        return words.value(0);
    return QStringList(words.mid(0, words.size() - 1)).join(QStringLiteral(", "))
        + QStringLiteral(" or ") + words.last();
}

} // namespace OptionWords

} // namespace AgentConsole
