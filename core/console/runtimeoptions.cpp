#include "runtimeoptions.h"

#include <QStandardPaths>

namespace AgentConsole {

QString RuntimeOptions::defaultDataDirectory()
{
    return QStandardPaths::writableLocation(QStandardPaths::AppDataLocation);
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
