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
    static const QRegularExpression headerName(QStringLiteral("^[A-Za-z0-9!#$%&'*+.^_`|~-]+$"));
    for (const auto &header : options.extraHeaders) {
        if (!headerName.match(QString::fromLatin1(header.first)).hasMatch())
            return QStringLiteral("--header: expected \"Name: value\"");
        // Keys come from the environment or the keychain, never from a command line that any
        // process listing shows.
        if (header.first.compare("Authorization", Qt::CaseInsensitive) == 0)
            return QStringLiteral("--header: the API key comes from --api-key-env, not a header");
    }
    if (options.hasSecondary()) {
        if (!isHttpUrl(options.secondaryBaseUrl))
            return QStringLiteral("--secondary-base-url: not an http(s) URL");
        if (options.secondaryModel.trimmed().isEmpty())
            return QStringLiteral("--secondary-base-url needs --secondary-model");
        if (!variableName.match(options.secondaryApiKeyEnv).hasMatch())
            return QStringLiteral(
                "--secondary-api-key-env: expected an environment variable name");
    } else if (!options.secondaryModel.isEmpty()) {
        return QStringLiteral("--secondary-model needs --secondary-base-url");
    }
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
