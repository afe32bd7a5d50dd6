#include "agentruntime.h"

#include "../faults/faultplan.h"
#include "../llm/faultychatmodel.h"
#include "../llm/offlinedemomodel.h"
#include "../resilience/toolexecutor.h"
#include "../telemetry/logging.h"
#include "../tools/supportstore.h"
#include "../tools/supporttools.h"
#include "../tools/toolregistry.h"

#include <QDir>
#include <QFutureWatcher>
#include <QStandardPaths>
#include <QtConcurrent/QtConcurrentRun>

namespace AgentConsole {
namespace {

// What the worker thread prepares before any part is wired on the owner's thread.
struct Preparation
{
    std::shared_ptr<SupportStore> store;
    std::shared_ptr<FaultPlan> faults;
    StaffMember staff;
    QString error;
};

Preparation prepare(const RuntimeOptions &options)
{
    Preparation result;
    if (!options.faultPlanFile.isEmpty()) {
        QString error;
        auto plan = FaultPlan::fromFile(options.faultPlanFile, &error);
        if (!plan) {
            result.error = error;
            return result;
        }
        result.faults = std::make_shared<FaultPlan>(std::move(*plan));
    }
    const QString path = QDir(options.dataDirectory).filePath(QStringLiteral("support-store.sqlite"));
    result.store = std::make_shared<SupportStore>(path);
    if (!result.store->prepare(&result.error))
        return result;

    std::optional<StaffMember> staff;
    if (!options.userId.isEmpty()) {
        staff = result.store->staffMember(options.userId);
        if (!staff) {
            result.error = QStringLiteral("unknown staff member '%1'").arg(options.userId);
            return result;
        }
        if (!options.tenantId.isEmpty() && staff->tenantId != options.tenantId) {
            result.error = QStringLiteral("staff member '%1' does not belong to tenant '%2'")
                               .arg(options.userId, options.tenantId);
            return result;
        }
    } else {
        staff = result.store->firstStaffMember(options.tenantId);
        if (!staff) {
            result.error = options.tenantId.isEmpty()
                ? QStringLiteral("the store has no staff members")
                : QStringLiteral("unknown tenant '%1'").arg(options.tenantId);
            return result;
        }
    }
    result.staff = *staff;
    return result;
}

} // namespace

QString RuntimeOptions::defaultDataDirectory()
{
    return QStandardPaths::writableLocation(QStandardPaths::AppDataLocation);
}

class AgentRuntime::Private
{
public:
    RuntimeOptions options;
    std::shared_ptr<SupportStore> store;
    std::shared_ptr<FaultPlan> faults;
    ToolRegistry registry;
    // Declared in dependency order: the loop, which uses the executor and the model, goes first.
    std::unique_ptr<ToolExecutor> executor;
    std::unique_ptr<OfflineDemoModel> offlineModel;
    std::unique_ptr<FaultyChatModel> faultyModel; // set when the fault plan has model faults
    std::unique_ptr<AgentLoop> loop;
    bool ready = false;
    bool started = false;
};

AgentRuntime::AgentRuntime(const RuntimeOptions &options, QObject *parent)
    : QObject(parent)
    , d(std::make_unique<Private>())
{
    d->options = options;
    if (d->options.dataDirectory.isEmpty())
        d->options.dataDirectory = RuntimeOptions::defaultDataDirectory();
}

AgentRuntime::~AgentRuntime() = default;

void AgentRuntime::start()
{
    if (d->started)
        return;
    d->started = true;
    auto *watcher = new QFutureWatcher<Preparation>(this);
    connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher] {
        watcher->deleteLater();
        Preparation prepared = watcher->result();
        if (!prepared.error.isEmpty()) {
            qCWarning(lcAgent).noquote() << "runtime failed to start:" << prepared.error;
            Q_EMIT failed(prepared.error);
            return;
        }
        d->store = std::move(prepared.store);
        d->faults = std::move(prepared.faults);
        registerSupportTools(d->registry, d->store, d->faults);

        ToolExecutor::Options executorOptions;
        executorOptions.workerThreads = std::max(2, d->options.toolWorkerThreads);
        executorOptions.defaultPolicy = d->options.toolPolicy.value_or(RetryPolicy::defaults());
        d->executor = std::make_unique<ToolExecutor>(executorOptions);
        d->offlineModel = std::make_unique<OfflineDemoModel>();
        ChatModel *model = d->offlineModel.get();
        if (d->faults && d->faults->modelFault()) {
            d->faultyModel = std::make_unique<FaultyChatModel>(model, *d->faults->modelFault());
            model = d->faultyModel.get();
        }
        d->loop = std::make_unique<AgentLoop>(model, &d->registry, d->executor.get());
        d->loop->setSession({prepared.staff.userId, prepared.staff.tenantId, {}});
        d->ready = true;
        qCInfo(lcAgent).noquote() << "runtime ready: store" << d->store->filePath() << "staff"
                                  << prepared.staff.userId << "tenant" << prepared.staff.tenantId;
        Q_EMIT ready();
    });
    const RuntimeOptions options = d->options;
    watcher->setFuture(QtConcurrent::run([options] { return prepare(options); }));
}

bool AgentRuntime::isReady() const
{
    return d->ready;
}

const RuntimeOptions &AgentRuntime::options() const
{
    return d->options;
}

AgentLoop *AgentRuntime::agentLoop() const
{
    return d->loop.get();
}

ToolExecutor *AgentRuntime::executor() const
{
    return d->executor.get();
}

const ToolRegistry *AgentRuntime::tools() const
{
    return &d->registry;
}

ChatModel *AgentRuntime::model() const
{
    return d->loop ? d->loop->model() : nullptr;
}

QString AgentRuntime::storePath() const
{
    return d->store ? d->store->filePath() : QString();
}

QString AgentRuntime::faultPlanSummary() const
{
    return d->faults ? d->faults->summary() : QString();
}

} // namespace AgentConsole
