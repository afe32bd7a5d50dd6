#include "activeconnection.h"
#include "teampolicy.h"

#include "agentruntime.h"
#include "connectionsettings.h"
#include "mcpservers.h"
#include "modelchain.h"
#include "runtimeoptions.h"
#include "runtimewords.h"

#include "../llm/apikeysource.h"
#include "../llm/chatmodel.h"
#include "../telemetry/logging.h"
#include "../turn/agentloop.h"

#include <QUrl>

namespace AgentConsole {

ActiveConnection::ActiveConnection(
    AgentRuntime *runtime, std::shared_ptr<SecretStore> secrets,
    std::function<void(const ModelOptions &, const BackendOptions &)> switchTo,
    std::function<ModelChain *()> models, QObject *parent)
    : QObject(parent)
    , m_runtime(runtime)
    , m_secrets(std::move(secrets))
    , m_switchTo(std::move(switchTo))
    , m_models(std::move(models))
{
    Q_ASSERT(m_runtime && m_switchTo && m_models);
}

ActiveConnection::~ActiveConnection() = default;

void ActiveConnection::startWith(const QString &apiKey, const QString &storePath)
{
    m_apiKey = apiKey;
    m_storePath = storePath;
}

const ModelOptions &ActiveConnection::model() const
{
    return m_runtime->options().model;
}

const BackendOptions &ActiveConnection::backend() const
{
    return m_runtime->options().backend;
}

QString ActiveConnection::modelName() const
{
    const ModelChain *models = m_models();
    return models ? models->model()->modelName() : QString();
}

QString ActiveConnection::backendSummary() const
{
    return backend().kind == BackendOptions::Kind::Http ? QStringLiteral("REST %1").arg(
               QUrl(backend().url).toDisplayString(QUrl::RemoveUserInfo | QUrl::RemoveQuery))
                                                        : QStringLiteral("embedded store");
}

Redactor ActiveConnection::exportRedactor() const
{
    // The variables' values as they are now, and the primary key in use, which may have come
    // from the keychain (the secondary one is only ever read from its variable). And the
    // secrets the MCP servers run with (mcp.json's header and env values).
    return Redactor::forModel(model(), QStringList{m_apiKey} + m_runtime->mcp()->knownSecrets());
}

bool ActiveConnection::apply(const ModelOptions &requested, const BackendOptions &backend,
                             QString *error)
{
    const auto fail = [error](const QString &reason) {
        if (error)
            *error = reason;
        return false;
    };
    // What the team's policy locks stays as it is; its model retries stay in force.
    ModelOptions model = requested;
    if (const TeamPolicy *team = m_runtime->teamPolicy(); team->inForce()) {
        const QString refused = team->refusalOfChange(this->model(), this->backend(), model,
                                                      backend);
        if (!refused.isEmpty())
            return fail(refused);
        model.retry = this->model().retry;
    }
    if (!m_runtime->isReady())
        return fail(AgentRuntimeWords::tr("the console is not ready yet"));
    AgentLoop *loop = m_runtime->agentLoop();
    if (loop->isBusy())
        return fail(AgentRuntimeWords::tr("wait until the running question is answered"));
    // Its caller is the settings dialog: the field's name, not the command-line option's.
    if (const auto problem = checkConnectionSettings(model, backend))
        return fail(problem->forStaff());
    m_pendingKey.reset(); // a newer switch wins over one still waiting for the keychain
    // The variable wins when set, as at start; then the switch is done at once. Without a
    // provider no key is needed at all.
    const QString fromVariable = ApiKeySource::fromEnvironment(model.apiKeyEnv);
    if (model.provider == ModelOptions::Provider::Offline || !fromVariable.isEmpty()) {
        finish(model, backend, fromVariable);
        return true;
    }
    // Otherwise the keychain, as at start (today's key may have been stored in the dialog).
    m_pendingKey = std::make_unique<ApiKeySource>(m_secrets);
    m_pendingKey->setVariable(model.apiKeyEnv);
    connect(m_pendingKey.get(), &ApiKeySource::finished, this,
            [this, model, backend, loop](const QString &key, ApiKeySource::Origin origin) {
                // Deleted after this slot returns: its signal is still being delivered.
                m_pendingKey.release()->deleteLater();
                if (origin == ApiKeySource::Origin::None)
                    qCWarning(lcAgent).noquote() << "settings: no API key in the variable or the "
                                                    "keychain; requests go without one";
                if (loop->isBusy()) {
                    // Not expected (the window asks nothing while a switch is pending), but a
                    // model is never replaced under a running turn: the switch follows that turn.
                    auto once = std::make_shared<QMetaObject::Connection>();
                    *once = connect(loop, &AgentLoop::turnFinished, this,
                                    [this, model, backend, key, once] {
                                        QObject::disconnect(*once);
                                        finish(model, backend, key);
                                    });
                    return;
                }
                finish(model, backend, key);
            });
    m_pendingKey->lookup();
    return true;
}

void ActiveConnection::finish(const ModelOptions &model, const BackendOptions &backend,
                              const QString &key)
{
    m_apiKey = key;
    m_switchTo(model, backend);
    qCInfo(lcAgent).noquote() << "settings applied: model" << modelName() << "backend"
                              << (backend.kind == BackendOptions::Kind::Http
                                      ? QStringLiteral("http")
                                      : QStringLiteral("embedded"));
    Q_EMIT settingsChanged();
}

} // namespace AgentConsole
