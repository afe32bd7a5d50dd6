#include "connectionsettings.h"

#include <QCoreApplication>
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

QString SettingsProblem::forStaff() const
{
    const auto translated = [](const QString &text) {
        return QCoreApplication::translate("AgentConsole::SettingsProblem",
                                           text.toUtf8().constData());
    };
    return QCoreApplication::translate("AgentConsole::SettingsProblem", "%1: %2")
        .arg(translated(field), translated(sentence));
}

QList<ProviderPreset> providerPresets()
{
    // The window translates the names in its dialog's context; the others are names.
    return {
        // DeepSeek V4's names (deepseek-chat and deepseek-reasoner were retired on 2026-07-24);
        // both think by default and want their reasoning back after tool calls, which the
        // provider does.
        {QStringLiteral("DeepSeek"),
         QStringLiteral("https://api.deepseek.com"),
         QStringLiteral("deepseek-v4-flash"),
         true,
         {},
         96'000},
        {QStringLiteral("DeepSeek Pro"),
         QStringLiteral("https://api.deepseek.com"),
         QStringLiteral("deepseek-v4-pro"),
         true,
         {},
         96'000},
        {QStringLiteral("OpenAI"),
         QStringLiteral("https://api.openai.com/v1"),
         QStringLiteral("gpt-4o-mini"),
         true,
         {},
         96'000},
        {QStringLiteral(
             QT_TRANSLATE_NOOP("AgentConsole::ConnectionSettingsDialog", "Ollama (local)")),
         QStringLiteral("http://127.0.0.1:11434/v1"),
         // Ollama gives a model a 2,048- or 4,096-token context unless told otherwise.
         QStringLiteral("llama3.1"), false, QStringLiteral("Ollama"), 6'000},
        // LM Studio's server (Developer tab, port 1234); its models load with 4,096 tokens of
        // context unless staff raise it. The model name is the one LM Studio lists.
        {QStringLiteral(
             QT_TRANSLATE_NOOP("AgentConsole::ConnectionSettingsDialog", "LM Studio (local)")),
         QStringLiteral("http://127.0.0.1:1234/v1"), QStringLiteral("qwen2.5-7b-instruct"), false,
         QStringLiteral("LM Studio"), 6'000},
        // `vllm serve MODEL` on port 8000; a key only when started with --api-key. It serves
        // the model's whole context by default.
        {QStringLiteral(QT_TRANSLATE_NOOP("AgentConsole::ConnectionSettingsDialog", "vLLM")),
         QStringLiteral("http://127.0.0.1:8000/v1"), QStringLiteral("Qwen/Qwen2.5-7B-Instruct"),
         false, QStringLiteral("vLLM"), ModelOptions::defaultContextChars},
        // llama.cpp's llama-server on port 8080; it answers with the one model it loaded,
        // whatever the name, and a context of 4,096 tokens unless started with -c.
        {QStringLiteral(
             QT_TRANSLATE_NOOP("AgentConsole::ConnectionSettingsDialog", "llama.cpp server")),
         QStringLiteral("http://127.0.0.1:8080/v1"), QStringLiteral("default"), false,
         QStringLiteral("llama-server"), 6'000},
        // Any other OpenAI-compatible server: the address and model are staff's to type, and
        // it may want a key.
        {QStringLiteral(QT_TRANSLATE_NOOP("AgentConsole::ConnectionSettingsDialog", "Custom")),
         QString(),
         QString(),
         true,
         {},
         ModelOptions::defaultContextChars},
    };
}

std::optional<ProviderPreset> presetFor(const QString &baseUrl)
{
    const QUrl url(baseUrl);
    if (url.host().isEmpty())
        return std::nullopt;
    for (const ProviderPreset &preset : providerPresets()) {
        const QUrl known(preset.baseUrl);
        if (!preset.baseUrl.isEmpty() && url.host() == known.host()
            && url.port(-1) == known.port(-1))
            return preset;
    }
    return std::nullopt;
}

QString localServerName(const QString &baseUrl)
{
    const std::optional<ProviderPreset> preset = presetFor(baseUrl);
    return preset ? preset->localServer : QString();
}

int ModelOptions::conversationBudget() const
{
    if (contextChars > 0)
        return contextChars;
    if (provider == Provider::OpenAiCompatible) {
        if (const std::optional<ProviderPreset> preset = presetFor(baseUrl))
            return preset->contextChars;
    }
    return defaultContextChars;
}

std::optional<SettingsProblem> checkModelOptions(const ModelOptions &options)
{
    const auto problem = [](const char *commandLine, const char *field, const char *sentence) {
        return SettingsProblem{QString::fromUtf8(commandLine), QString::fromUtf8(field),
                               QString::fromUtf8(sentence)};
    };
    static const QRegularExpression variableName(QStringLiteral("^[A-Za-z_][A-Za-z0-9_]*$"));
    if (!variableName.match(options.apiKeyEnv).hasMatch())
        return problem(
            "--api-key-env: expected an environment variable name",
            QT_TRANSLATE_NOOP("AgentConsole::SettingsProblem", "API key variable"),
            QT_TRANSLATE_NOOP("AgentConsole::SettingsProblem",
                              "is not the name of an environment variable (letters, digits, _)"));
    if (options.contextChars != 0
        && (options.contextChars < ModelOptions::minContextChars
            || options.contextChars > ModelOptions::maxContextChars))
        return problem(
            "--context-chars: expected a whole number from 2000 to 4000000",
            QT_TRANSLATE_NOOP("AgentConsole::SettingsProblem", "Conversation budget"),
            QT_TRANSLATE_NOOP(
                "AgentConsole::SettingsProblem",
                "is not 0 (the provider's default) or from 2,000 to 4,000,000 characters"));
    if (options.provider == ModelOptions::Provider::Offline)
        return std::nullopt;
    if (options.baseUrl.isEmpty())
        return problem("--provider openai needs --base-url",
                       QT_TRANSLATE_NOOP("AgentConsole::SettingsProblem", "Base URL (model)"),
                       QT_TRANSLATE_NOOP("AgentConsole::SettingsProblem",
                                         "is needed for an OpenAI-compatible provider"));
    if (!isHttpUrl(options.baseUrl))
        return problem("--base-url: not an http(s) URL",
                       QT_TRANSLATE_NOOP("AgentConsole::SettingsProblem", "Base URL (model)"),
                       QT_TRANSLATE_NOOP("AgentConsole::SettingsProblem",
                                         "is not an http:// or https:// address"));
    if (options.model.trimmed().isEmpty())
        return problem("--provider openai needs --model",
                       QT_TRANSLATE_NOOP("AgentConsole::SettingsProblem", "Model"),
                       QT_TRANSLATE_NOOP("AgentConsole::SettingsProblem",
                                         "is needed for an OpenAI-compatible provider"));
    static const QRegularExpression headerName(QStringLiteral("^[A-Za-z0-9!#$%&'*+.^_`|~-]+$"));
    for (const auto &header : options.extraHeaders) {
        if (!headerName.match(QString::fromLatin1(header.first)).hasMatch())
            return problem("--header: expected \"Name: value\"",
                           QT_TRANSLATE_NOOP("AgentConsole::SettingsProblem", "Extra header"),
                           QT_TRANSLATE_NOOP("AgentConsole::SettingsProblem",
                                             "is not written as \"Name: value\""));
        // Keys come from the environment or the keychain, never from a command line that any
        // process listing shows.
        if (header.first.compare("Authorization", Qt::CaseInsensitive) == 0)
            return problem("--header: the API key comes from --api-key-env, not a header",
                           QT_TRANSLATE_NOOP("AgentConsole::SettingsProblem", "Extra header"),
                           QT_TRANSLATE_NOOP(
                               "AgentConsole::SettingsProblem",
                               "may not carry the API key: it comes from the API key variable"));
    }
    if (options.hasSecondary()) {
        if (!isHttpUrl(options.secondaryBaseUrl))
            return problem("--secondary-base-url: not an http(s) URL",
                           QT_TRANSLATE_NOOP("AgentConsole::SettingsProblem",
                                             "Secondary base URL"),
                           QT_TRANSLATE_NOOP("AgentConsole::SettingsProblem",
                                             "is not an http:// or https:// address"));
        if (options.secondaryModel.trimmed().isEmpty())
            return problem("--secondary-base-url needs --secondary-model",
                           QT_TRANSLATE_NOOP("AgentConsole::SettingsProblem", "Secondary model"),
                           QT_TRANSLATE_NOOP("AgentConsole::SettingsProblem",
                                             "is needed when a secondary provider is set"));
        if (!variableName.match(options.secondaryApiKeyEnv).hasMatch())
            return problem("--secondary-api-key-env: expected an environment variable name",
                           QT_TRANSLATE_NOOP("AgentConsole::SettingsProblem",
                                             "Secondary API key variable"),
                           QT_TRANSLATE_NOOP(
                               "AgentConsole::SettingsProblem",
                               "is not the name of an environment variable (letters, digits, _)"));
    } else if (!options.secondaryModel.isEmpty()) {
        return problem("--secondary-model needs --secondary-base-url",
                       QT_TRANSLATE_NOOP("AgentConsole::SettingsProblem", "Secondary base URL"),
                       QT_TRANSLATE_NOOP("AgentConsole::SettingsProblem",
                                         "is needed when a secondary model is set"));
    }
    return std::nullopt;
}

std::optional<SettingsProblem> checkBackendOptions(const BackendOptions &options)
{
    if (options.kind == BackendOptions::Kind::Embedded)
        return std::nullopt;
    if (options.url.isEmpty())
        return SettingsProblem{QStringLiteral("--backend http needs --backend-url"),
                               QStringLiteral(QT_TRANSLATE_NOOP("AgentConsole::SettingsProblem",
                                                                "Base URL (backend)")),
                               QStringLiteral(QT_TRANSLATE_NOOP("AgentConsole::SettingsProblem",
                                                                "is needed for a REST backend"))};
    if (!isHttpUrl(options.url))
        return SettingsProblem{QStringLiteral("--backend-url: not an http(s) URL"),
                               QStringLiteral(QT_TRANSLATE_NOOP("AgentConsole::SettingsProblem",
                                                                "Base URL (backend)")),
                               QStringLiteral(
                                   QT_TRANSLATE_NOOP("AgentConsole::SettingsProblem",
                                                     "is not an http:// or https:// address"))};
    return std::nullopt;
}

std::optional<SettingsProblem> checkConnectionSettings(const ModelOptions &model,
                                                       const BackendOptions &backend)
{
    if (auto problem = checkModelOptions(model))
        return problem;
    return checkBackendOptions(backend);
}

bool apiKeyVariableIsSet(const QString &variable)
{
    return !variable.isEmpty() && !qEnvironmentVariableIsEmpty(variable.toLocal8Bit().constData());
}

} // namespace AgentConsole
