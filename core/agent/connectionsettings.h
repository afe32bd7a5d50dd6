#pragma once

#include "agentruntime.h"

#include <QList>
#include <QString>

namespace AgentConsole {

// A documented starting point for an OpenAI-compatible provider.
struct ProviderPreset
{
    QString name;    // shown to staff
    QString baseUrl; // up to and including /v1 where the provider wants it
    QString model;
    bool needsKey = true;
};

// DeepSeek, OpenAI and a local Ollama, as README describes them.
QList<ProviderPreset> providerPresets();

// The first problem with these settings as one line naming the setting, or empty when valid.
// Shared by the command line and the settings dialog so both accept exactly the same values.
QString validateModelOptions(const ModelOptions &options);
QString validateBackendOptions(const BackendOptions &options);

// Whether the key's environment variable is set. Says nothing about the key itself.
bool apiKeyVariableIsSet(const QString &variable);

} // namespace AgentConsole
