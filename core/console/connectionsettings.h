#pragma once

#include "runtimeoptions.h"

#include <QList>
#include <QString>

#include <optional>

namespace AgentConsole {

// A documented starting point for an OpenAI-compatible provider.
struct ProviderPreset
{
    QString name; // shown to staff
    QString baseUrl; // up to and including /v1 where the provider wants it; empty: custom
    QString model;
    bool needsKey = true;
    // A server staff run themselves, named as a sentence names it ("is Ollama running?");
    // empty for a provider's service.
    QString localServer;
    // ModelOptions::contextChars' default for this provider: well inside its model's context
    // window in tokens, counting a Chinese character as one token.
    int contextChars = ModelOptions::defaultContextChars;
};

// DeepSeek, OpenAI, and the local servers Ollama, LM Studio, vLLM and llama.cpp's
// llama-server, each at its usual address, then "Custom" (no address: staff type it).
QList<ProviderPreset> providerPresets();
// The preset whose base URL has the host and port of `baseUrl` (the first one), if any.
std::optional<ProviderPreset> presetFor(const QString &baseUrl);
// The local server usually found at `baseUrl`'s host and port ("Ollama"), or empty.
QString localServerName(const QString &baseUrl);

// One problem with connection settings, said for each place it can come from: the command
// line names the option, the settings dialog names the field.
struct SettingsProblem
{
    QString commandLine; // "--base-url: not an http(s) URL"
    QString field; // "Base URL (model)"
    QString sentence; // "is not an http:// or https:// address"

    // "Base URL (model): is not an http:// or https:// address", in the language installed
    // (field and sentence are English source texts of the AgentConsole::SettingsProblem
    // context).
    QString forStaff() const;
};

// The first problem with these settings, or nothing when they are valid. Shared by the
// command line and the settings dialog so both accept exactly the same values.
std::optional<SettingsProblem> checkModelOptions(const ModelOptions &options);
std::optional<SettingsProblem> checkBackendOptions(const BackendOptions &options);
// Both, model first.
std::optional<SettingsProblem> checkConnectionSettings(const ModelOptions &model,
                                                       const BackendOptions &backend);

// Whether the key's environment variable is set. Says nothing about the key itself.
bool apiKeyVariableIsSet(const QString &variable);

} // namespace AgentConsole
