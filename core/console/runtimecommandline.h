#pragma once

#include "runtimeoptions.h"

#include <QCommandLineOption>
#include <QList>

#include <optional>

class QCommandLineParser;

namespace AgentConsole {

// The options agent-console and agent-cli share: where the data lives, who is asking, fault
// plans, and which model and backend to use. Reading them checks every value and reports the
// first problem as one line that names the option.
class RuntimeCommandLine final
{
public:
    RuntimeCommandLine();

    void addTo(QCommandLineParser &parser) const;
    // `base` is what the options start from (agent-console's stored settings,
    // ConsoleSettings::startOptions()); an option given on the command line wins over it.
    std::optional<RuntimeOptions> read(const QCommandLineParser &parser, QString *error,
                                       const RuntimeOptions &base = {}) const;

private:
    QCommandLineOption m_dataDir;
    QCommandLineOption m_faults;
    QCommandLineOption m_user;
    QCommandLineOption m_tenant;
    QCommandLineOption m_provider;
    QCommandLineOption m_baseUrl;
    QCommandLineOption m_model;
    QCommandLineOption m_apiKeyEnv;
    QCommandLineOption m_stream;
    QCommandLineOption m_fallback;
    QCommandLineOption m_backend;
    QCommandLineOption m_backendUrl;
    QCommandLineOption m_header;
    QCommandLineOption m_ledger;
    QCommandLineOption m_team;
    QCommandLineOption m_aloneIfUnreachable;
    QCommandLineOption m_secondaryBaseUrl;
    QCommandLineOption m_secondaryModel;
    QCommandLineOption m_secondaryApiKeyEnv;
    QCommandLineOption m_maxToolCalls;
    QCommandLineOption m_contextChars;
    QCommandLineOption m_mcpConfig;
    QCommandLineOption m_mcpWait;
    QCommandLineOption m_duplicateWindow;
};

} // namespace AgentConsole
