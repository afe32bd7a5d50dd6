#pragma once

#include "redaction.h"

#include <QObject>
#include <QString>

#include <functional>
#include <memory>

namespace AgentConsole {

class AgentRuntime;
class ApiKeySource;
class ModelChain;
class SecretStore;
struct BackendOptions;
struct ModelOptions;

// The model and the tool backend in force, and the switch between turns (the settings
// dialog): the values are checked as the command line checks them; the API key is read as at
// start (its variable, else the keychain); the runtime then builds the model chain and the
// tools anew. Also what an export must not carry of them: the keys in use. Lives on the
// runtime's thread.
class ActiveConnection final : public QObject
{
    Q_OBJECT

public:
    // `runtime`: the front door this belongs to (whether it is ready, its loop, its options).
    // `secrets`: where the key is kept when its variable is not set. `switchTo`: the
    // runtime's; puts the settings in force (its options, the model chain with apiKey(), the
    // tools). `models`: the chain in force (null before the runtime is ready).
    ActiveConnection(AgentRuntime *runtime, std::shared_ptr<SecretStore> secrets,
                     std::function<void(const ModelOptions &, const BackendOptions &)> switchTo,
                     std::function<ModelChain *()> models, QObject *parent = nullptr);
    ~ActiveConnection() override;

    // Switches the model and the tool backend between turns. The values are checked as the
    // command line checks them; false with a one-line reason otherwise. The key is read as at
    // start: its variable when set (then the switch is done on return), else the keychain
    // (secretStore()), asynchronously: isApplying() holds until settingsChanged() says the new
    // model is in place. A later call supersedes one pending.
    bool apply(const ModelOptions &model, const BackendOptions &backend, QString *error);
    bool isApplying() const { return m_pendingKey != nullptr; }
    // Where the API key is kept when its variable is not set (RuntimeOptions::secrets, else
    // the OS keychain); the settings dialog stores a key there.
    std::shared_ptr<SecretStore> secretStore() const { return m_secrets; }

    // The settings in force (RuntimeOptions::model, ::backend).
    const ModelOptions &model() const;
    const BackendOptions &backend() const;
    // The model that answers ("deepseek-chat", "offline-demo"); empty before the runtime is
    // ready.
    QString modelName() const;
    // "embedded store" or "REST http://host:port".
    QString backendSummary() const;
    // The embedded store's file (the demo's data), valid once the runtime is ready.
    QString storePath() const { return m_storePath; }
    // What an export must not carry: the API keys in use (from the environment or the OS
    // keychain) and the secrets the MCP servers run with, inside a Redactor that never hands
    // them back (docs/EXPORT.md).
    Redactor exportRedactor() const;

    // The runtime's side: the key the start found, and the store it opened. The key is never
    // logged.
    void startWith(const QString &apiKey, const QString &storePath);
    QString apiKey() const { return m_apiKey; }

Q_SIGNALS:
    // The model or the backend changed (apply).
    void settingsChanged();

private:
    void finish(const ModelOptions &model, const BackendOptions &backend, const QString &key);

    AgentRuntime *m_runtime;
    const std::shared_ptr<SecretStore> m_secrets;
    std::function<void(const ModelOptions &, const BackendOptions &)> m_switchTo;
    std::function<ModelChain *()> m_models;
    QString m_apiKey; // never logged
    QString m_storePath;
    // A switch waiting for the keychain's answer (the newest one; older ones are dropped with
    // their source).
    std::unique_ptr<ApiKeySource> m_pendingKey;
};

} // namespace AgentConsole
