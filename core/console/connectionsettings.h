#pragma once

#include "runtimeoptions.h"

#include <QList>
#include <QString>

#include <optional>

namespace AgentConsole {

// A documented starting point for an OpenAI-compatible provider.
struct ProviderPreset
{
    QString name;    // shown to staff
    QString baseUrl; // up to and including /v1 where the provider wants it
    QString model;
    bool needsKey = true;
    // ModelOptions::contextChars' default for this provider: well inside its model's context
    // window in tokens, counting a Chinese character as one token.
    int contextChars = ModelOptions::defaultContextChars;
};

// DeepSeek, OpenAI and a local Ollama, as README describes them.
QList<ProviderPreset> providerPresets();

// One problem with connection settings, said for each place it can come from: the command
// line names the option, the settings dialog names the field.
struct SettingsProblem
{
    QString commandLine; // "--base-url: not an http(s) URL"
    QString field;       // "Base URL (model)"
    QString sentence;    // "is not an http:// or https:// address"

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
