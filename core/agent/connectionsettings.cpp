#include "connectionsettings.h"

#include <QRegularExpression>
#include <QUrl>

namespace AgentConsole {
namespace {

bool isHttpUrl(const QString &text)
{
    const QUrl url(text, QUrl::StrictMode);
    return url.isValid() && !url.host().isEmpty()
        && (url.scheme() == QLatin1String("http") || url.scheme() == QLatin1String("https"));
}

} // namespace

QList<ProviderPreset> providerPresets()
{
    return {
        {QStringLiteral("DeepSeek"), QStringLiteral("https://api.deepseek.com"),
         QStringLiteral("deepseek-chat"), true},
        {QStringLiteral("OpenAI"), QStringLiteral("https://api.openai.com/v1"),
         QStringLiteral("gpt-4o-mini"), true},
        {QStringLiteral("Ollama (local)"), QStringLiteral("http://127.0.0.1:11434/v1"),
         QStringLiteral("llama3.1"), false},
    };
}

QString validateModelOptions(const ModelOptions &options)
{
    static const QRegularExpression variableName(QStringLiteral("^[A-Za-z_][A-Za-z0-9_]*$"));
    if (!variableName.match(options.apiKeyEnv).hasMatch())
        return QStringLiteral("--api-key-env: expected an environment variable name");
    if (options.provider == ModelOptions::Provider::Offline)
        return {};
    if (options.baseUrl.isEmpty())
        return QStringLiteral("--provider openai needs --base-url");
    if (!isHttpUrl(options.baseUrl))
        return QStringLiteral("--base-url: not an http(s) URL");
    if (options.model.trimmed().isEmpty())
        return QStringLiteral("--provider openai needs --model");
    return {};
}

QString validateBackendOptions(const BackendOptions &options)
{
    if (options.kind == BackendOptions::Kind::Embedded)
        return {};
    if (options.url.isEmpty())
        return QStringLiteral("--backend http needs --backend-url");
    if (!isHttpUrl(options.url))
        return QStringLiteral("--backend-url: not an http(s) URL");
    return {};
}

bool apiKeyVariableIsSet(const QString &variable)
{
    return !variable.isEmpty() && !qEnvironmentVariableIsEmpty(variable.toLocal8Bit().constData());
}

} // namespace AgentConsole
