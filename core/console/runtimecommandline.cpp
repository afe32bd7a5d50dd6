#include "runtimecommandline.h"

#include "connectionsettings.h"
#include "settingkeys.h"

#include <QCommandLineParser>
#include <QFileInfo>

namespace AgentConsole {

RuntimeCommandLine::RuntimeCommandLine()
    : m_dataDir(QStringLiteral("data-dir"),
                QStringLiteral("Keep the embedded store and the local log in DIR (default: %1).")
                    .arg(RuntimeOptions::defaultDataDirectory()),
                QStringLiteral("DIR"))
    , m_faults(QStringLiteral("faults"),
               QStringLiteral("Inject faults from a JSON fault plan (docs/FAULTS.md)."),
               QStringLiteral("FILE"))
    , m_user(QStringLiteral("user"), QStringLiteral("Act as staff member ID."),
             QStringLiteral("ID"))
    , m_tenant(QStringLiteral("tenant"), QStringLiteral("Act within tenant ID."),
               QStringLiteral("ID"))
    , m_provider(QStringLiteral("provider"),
                 QStringLiteral("The model: offline (default, no key, no network) or openai "
                                "(any OpenAI-compatible server: DeepSeek, OpenAI, Ollama, vLLM, "
                                "llama.cpp)."),
                 OptionWords::providers().join(QLatin1Char('|')),
                 OptionWords::provider(ModelOptions::Provider::Offline))
    , m_baseUrl(QStringLiteral("base-url"),
                QStringLiteral("The provider's base URL, up to and including /v1."),
                QStringLiteral("URL"))
    , m_model(QStringLiteral("model"), QStringLiteral("The provider's model name."),
              QStringLiteral("NAME"))
    , m_apiKeyEnv(QStringLiteral("api-key-env"),
                  QStringLiteral("The environment variable holding the API key "
                                 "(default AGENT_CONSOLE_API_KEY)."),
                  QStringLiteral("VAR"), QStringLiteral("AGENT_CONSOLE_API_KEY"))
    , m_stream(QStringLiteral("stream"),
               QStringLiteral("Stream the answer (default on; some servers cannot stream tool "
                              "calls)."),
               QStringLiteral("on|off"), QStringLiteral("on"))
    , m_fallback(QStringLiteral("fallback"),
                 QStringLiteral("When the provider fails: answer with the offline model "
                                "(default) or not at all."),
                 OptionWords::fallbacks().join(QLatin1Char('|')), OptionWords::fallback(true))
    , m_backend(QStringLiteral("backend"),
                QStringLiteral("Where tools look things up: embedded (default) or http."),
                OptionWords::backends().join(QLatin1Char('|')),
                OptionWords::backend(BackendOptions::Kind::Embedded))
    , m_backendUrl(QStringLiteral("backend-url"),
                   QStringLiteral("The REST backend's base URL (with --backend http)."),
                   QStringLiteral("URL"))
    , m_header(QStringLiteral("header"),
               QStringLiteral("An extra header for every model request, \"Name: value\" "
                              "(repeatable; not for the API key)."),
               QStringLiteral("HEADER"))
    , m_ledger(QStringLiteral("ledger"),
               QStringLiteral("The idempotency ledger for writes: sqlite (default, in the data "
                              "directory) or postgresql://user@host:port/db to share one."),
               QStringLiteral("SPEC"))
    , m_team(QStringLiteral("team"),
             QStringLiteral("Work as one of a team on its PostgreSQL database: the ledger, the "
                            "turn journal with the history, and the audit trail "
                            "(postgresql://user@host:port/db; the password comes from the "
                            "keychain, ~/.pgpass or a service file, never from the URL)."),
             QStringLiteral("URL"))
    , m_aloneIfUnreachable(QStringLiteral("alone-if-unreachable"),
                           QStringLiteral("When the --team database cannot be reached at the "
                                          "start, work alone on this desk's own store (marked "
                                          "as such) instead of stopping."))
    , m_secondaryBaseUrl(QStringLiteral("secondary-base-url"),
                         QStringLiteral("A second OpenAI-compatible provider, asked when the "
                                        "first fails (before the offline model)."),
                         QStringLiteral("URL"))
    , m_secondaryModel(QStringLiteral("secondary-model"),
                       QStringLiteral("The second provider's model name."), QStringLiteral("NAME"))
    , m_secondaryApiKeyEnv(QStringLiteral("secondary-api-key-env"),
                           QStringLiteral("The variable holding the second provider's key "
                                          "(default AGENT_CONSOLE_SECONDARY_API_KEY)."),
                           QStringLiteral("VAR"),
                           QStringLiteral("AGENT_CONSOLE_SECONDARY_API_KEY"))
    , m_maxToolCalls(QStringLiteral("max-tool-calls"),
                     QStringLiteral(
                         "Run at most N tool calls of one model message (default %1, at most "
                         "%2); the calls beyond are answered TOOL_CALL_LIMIT and not run.")
                         .arg(RuntimeOptions::defaultMaxToolCalls)
                         .arg(RuntimeOptions::maxMaxToolCalls),
                     QStringLiteral("N"), QString::number(RuntimeOptions::defaultMaxToolCalls))
    , m_contextChars(QStringLiteral("context-chars"),
                     QStringLiteral(
                         "Send the model at most N characters of the conversation: the system "
                         "prompt and the current question always, earlier turns while they fit "
                         "(default: the provider's, %1 for the offline model; %2 to %3).")
                         .arg(ModelOptions::defaultContextChars)
                         .arg(ModelOptions::minContextChars)
                         .arg(ModelOptions::maxContextChars),
                     QStringLiteral("N"))
    , m_mcpConfig(QStringLiteral("mcp-config"),
                  QStringLiteral(
                      "Add the tools of the MCP servers in FILE ({\"mcpServers\": ...}, "
                      "docs/MCP.md; default: mcp.json in the data directory, if any)."),
                  QStringLiteral("FILE"))
    , m_mcpWait(QStringLiteral("mcp-wait"),
                QStringLiteral(
                    "A question asked while MCP servers are starting waits for them at most "
                    "MS milliseconds (default %1, at most %2), then goes on without the "
                    "ones not ready and names them.")
                    .arg(RuntimeOptions::defaultMcpReadyWaitMs)
                    .arg(RuntimeOptions::maxMcpReadyWaitMs),
                QStringLiteral("MS"), QString::number(RuntimeOptions::defaultMcpReadyWaitMs))
    , m_duplicateWindow(
          QStringLiteral("duplicate-window"),
          QStringLiteral("Before a ticket is confirmed, one of the same order and category made "
                         "in the last MINUTES minutes (default %1, at most %2; 0: never) is "
                         "told as a likely duplicate.")
              .arg(RuntimeOptions::defaultDuplicateWindowMinutes)
              .arg(RuntimeOptions::maxDuplicateWindowMinutes),
          QStringLiteral("MINUTES"),
          QString::number(RuntimeOptions::defaultDuplicateWindowMinutes))
{
}

void RuntimeCommandLine::addTo(QCommandLineParser &parser) const
{
    parser.addOptions({m_dataDir,
                       m_faults,
                       m_user,
                       m_tenant,
                       m_provider,
                       m_baseUrl,
                       m_model,
                       m_apiKeyEnv,
                       m_stream,
                       m_fallback,
                       m_backend,
                       m_backendUrl,
                       m_header,
                       m_secondaryBaseUrl,
                       m_secondaryModel,
                       m_secondaryApiKeyEnv,
                       m_ledger,
                       m_team,
                       m_aloneIfUnreachable,
                       m_maxToolCalls,
                       m_contextChars,
                       m_mcpConfig,
                       m_mcpWait,
                       m_duplicateWindow});
}

std::optional<RuntimeOptions> RuntimeCommandLine::read(const QCommandLineParser &parser,
                                                       QString *error,
                                                       const RuntimeOptions &base) const
{
    const auto fail = [error](const QString &message) {
        if (error)
            *error = message;
        return std::nullopt;
    };
    // What was given wins over the base (stored settings); what was not keeps the base's.
    RuntimeOptions options = base;
    const auto given = [&parser](const QCommandLineOption &option) {
        return parser.isSet(option);
    };
    if (given(m_dataDir))
        options.dataDirectory = parser.value(m_dataDir);
    if (options.dataDirectory.isEmpty())
        options.dataDirectory = RuntimeOptions::defaultDataDirectory();
    if (given(m_faults)) {
        const QFileInfo plan(parser.value(m_faults));
        if (!plan.isFile() || !plan.isReadable())
            return fail(QStringLiteral("cannot read the fault plan %1").arg(plan.filePath()));
        options.faultPlanFile = plan.absoluteFilePath();
    }
    if (given(m_mcpConfig)) {
        const QFileInfo config(parser.value(m_mcpConfig));
        if (!config.isFile() || !config.isReadable())
            return fail(QStringLiteral("--mcp-config: cannot read %1").arg(config.filePath()));
        options.mcpConfigFile = config.absoluteFilePath();
    }
    if (given(m_user))
        options.userId = parser.value(m_user);
    // One of the two on the command line wins over the other one stored.
    if (given(m_ledger)) {
        options.ledgerSpec = parser.value(m_ledger);
        if (!given(m_team))
            options.teamSpec.clear();
    }
    if (given(m_team)) {
        if (!given(m_ledger))
            options.ledgerSpec.clear();
        // Not echoed: a mistyped URL may still hold a password.
        const QString problem = RuntimeOptions::teamSpecProblem(parser.value(m_team));
        if (!problem.isEmpty())
            return fail(QStringLiteral("--team: ") + problem);
        options.teamSpec = parser.value(m_team).trimmed();
    }
    if (!options.teamSpec.isEmpty() && !options.ledgerSpec.isEmpty())
        return fail(QStringLiteral("--team holds the ledger too: leave --ledger out"));
    if (given(m_aloneIfUnreachable))
        options.whenTeamUnreachable = RuntimeOptions::WhenTeamUnreachable::RunAlone;
    if (given(m_tenant))
        options.tenantId = parser.value(m_tenant);

    if (given(m_provider)) {
        const auto provider = OptionWords::providerFrom(parser.value(m_provider));
        if (!provider)
            return fail(QStringLiteral("--provider: expected %1")
                            .arg(OptionWords::choices(OptionWords::providers())));
        options.model.provider = *provider;
    }
    if (given(m_baseUrl))
        options.model.baseUrl = parser.value(m_baseUrl);
    if (given(m_model))
        options.model.model = parser.value(m_model);
    if (given(m_apiKeyEnv))
        options.model.apiKeyEnv = parser.value(m_apiKeyEnv);
    if (given(m_header)) {
        options.model.extraHeaders.clear();
        for (const QString &header : parser.values(m_header)) {
            const qsizetype colon = header.indexOf(QLatin1Char(':'));
            if (colon <= 0)
                return fail(QStringLiteral("--header: expected \"Name: value\""));
            options.model.extraHeaders.append({header.left(colon).trimmed().toLatin1(),
                                               header.mid(colon + 1).trimmed().toUtf8()});
        }
    }
    if (given(m_secondaryBaseUrl))
        options.model.secondaryBaseUrl = parser.value(m_secondaryBaseUrl);
    if (given(m_secondaryModel))
        options.model.secondaryModel = parser.value(m_secondaryModel);
    if (given(m_secondaryApiKeyEnv))
        options.model.secondaryApiKeyEnv = parser.value(m_secondaryApiKeyEnv);
    if (options.model.provider == ModelOptions::Provider::Offline
        && (options.model.hasSecondary() || !options.model.extraHeaders.isEmpty()))
        return fail(QStringLiteral("--secondary-base-url and --header go with --provider openai"));

    if (given(m_stream)) {
        const QString stream = parser.value(m_stream);
        if (stream != QLatin1String("on") && stream != QLatin1String("off"))
            return fail(QStringLiteral("--stream: expected on or off"));
        options.model.stream = stream == QLatin1String("on");
    }
    if (given(m_fallback)) {
        const auto fallback = OptionWords::fallbackFrom(parser.value(m_fallback));
        if (!fallback)
            return fail(QStringLiteral("--fallback: expected offline or none"));
        options.model.fallbackToOffline = *fallback;
    }
    if (given(m_backend)) {
        const auto backend = OptionWords::backendFrom(parser.value(m_backend));
        if (!backend)
            return fail(QStringLiteral("--backend: expected %1")
                            .arg(OptionWords::choices(OptionWords::backends())));
        options.backend.kind = *backend;
    }
    if (given(m_backendUrl))
        options.backend.url = parser.value(m_backendUrl);
    bool isNumber = false;
    if (given(m_contextChars)) {
        options.model.contextChars = parser.value(m_contextChars).toInt(&isNumber);
        if (!isNumber || options.model.contextChars < ModelOptions::minContextChars
            || options.model.contextChars > ModelOptions::maxContextChars)
            return fail(QStringLiteral("--context-chars: expected a whole number from %1 to %2")
                            .arg(ModelOptions::minContextChars)
                            .arg(ModelOptions::maxContextChars));
    }
    options.maxToolCallsPerMessage = parser.value(m_maxToolCalls).toInt(&isNumber);
    if (!isNumber || options.maxToolCallsPerMessage < 1
        || options.maxToolCallsPerMessage > RuntimeOptions::maxMaxToolCalls)
        return fail(QStringLiteral("--max-tool-calls: expected a whole number from 1 to %1")
                        .arg(RuntimeOptions::maxMaxToolCalls));
    if (given(m_mcpWait)) {
        options.mcpReadyWaitMs = parser.value(m_mcpWait).toInt(&isNumber);
        if (!isNumber || options.mcpReadyWaitMs < 0
            || options.mcpReadyWaitMs > RuntimeOptions::maxMcpReadyWaitMs)
            return fail(QStringLiteral("--mcp-wait: expected milliseconds from 0 to %1")
                            .arg(RuntimeOptions::maxMcpReadyWaitMs));
    }
    if (given(m_duplicateWindow)) {
        options.duplicateWindowMinutes = parser.value(m_duplicateWindow).toInt(&isNumber);
        if (!isNumber || options.duplicateWindowMinutes < 0
            || options.duplicateWindowMinutes > RuntimeOptions::maxDuplicateWindowMinutes)
            return fail(QStringLiteral("--duplicate-window: expected minutes from 0 to %1")
                            .arg(RuntimeOptions::maxDuplicateWindowMinutes));
    }
    if (const auto problem = checkConnectionSettings(options.model, options.backend))
        return fail(problem->commandLine);
    // The settings given here, for a team's policy to refuse those it locks (docs/POLICY.md).
    const std::pair<const QCommandLineOption *, const QString *> settings[] = {
        {&m_provider, &SettingKeys::provider},
        {&m_baseUrl, &SettingKeys::baseUrl},
        {&m_model, &SettingKeys::model},
        {&m_apiKeyEnv, &SettingKeys::apiKeyVariable},
        {&m_stream, &SettingKeys::stream},
        {&m_fallback, &SettingKeys::fallback},
        {&m_contextChars, &SettingKeys::contextChars},
        {&m_secondaryBaseUrl, &SettingKeys::secondary},
        {&m_secondaryModel, &SettingKeys::secondary},
        {&m_secondaryApiKeyEnv, &SettingKeys::secondary},
        {&m_backend, &SettingKeys::backendKind},
        {&m_backendUrl, &SettingKeys::backendUrl},
        {&m_ledger, &SettingKeys::ledger},
        {&m_team, &SettingKeys::team},
        {&m_mcpConfig, &SettingKeys::mcpServers},
    };
    for (const auto &[option, key] : settings) {
        if (given(*option) && !options.commandLineSettings.contains(*key))
            options.commandLineSettings.insert(
                *key, QStringLiteral("--") + option->names().constFirst());
    }
    return options;
}

} // namespace AgentConsole
