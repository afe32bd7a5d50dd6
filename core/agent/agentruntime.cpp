#include "agentruntime.h"

#include "../faults/faultplan.h"
#include "../ledger/idempotencyledger.h"
#include "../ledger/turnjournal.h"
#include "../llm/apikeysource.h"
#include "../llm/fallbackchatmodel.h"
#include "../llm/faultychatmodel.h"
#include "../support/offlinedemomodel.h"
#include "../llm/openaicompatiblemodel.h"
#include "../resilience/circuitbreaker.h"
#include "../resilience/toolexecutor.h"
#include "../telemetry/logging.h"
#include "../support/createtickettool.h"
#include "../support/httpsupportbackend.h"
#include "../support/httpticketbackend.h"
#include "../support/ticketbackend.h"
#include "../support/supportbackend.h"
#include "../support/supportstore.h"
#include "../support/supporttools.h"
#include "../tools/toolregistry.h"
#include "connectionsettings.h"

#include <QDir>
#include <QFutureWatcher>
#include <QFile>
#include <QFileInfo>
#include <QLockFile>
#include <QSaveFile>
#include <QSqlDatabase>
#include <QSqlError>
#include <QSqlQuery>
#include <QUuid>
#include <QThreadPool>
#include <QStandardPaths>
#include <QUrl>
#include <QtConcurrent/QtConcurrentRun>

namespace AgentConsole {
namespace {

// What the worker thread prepares before any part is wired on the owner's thread.
struct Preparation
{
    std::shared_ptr<SupportStore> store;
    std::shared_ptr<FaultPlan> faults;
    StaffMember staff;
    QString consoleId; // the ledger's owner: who claims this data directory's writes
    QString error;
};

// This data directory's console, stable across restarts so that a resumed turn can recover
// the claims its interrupted run left (LedgerOptions::owner). Made once, kept in console-id.
QString consoleIdOf(const QString &dataDirectory)
{
    QFile file(QDir(dataDirectory).filePath(QStringLiteral("console-id")));
    if (file.open(QIODevice::ReadOnly)) {
        const QString id = QString::fromLatin1(file.readAll()).trimmed();
        if (!QUuid::fromString(id).isNull())
            return id;
    }
    const QString id = QUuid::createUuid().toString(QUuid::WithoutBraces);
    QSaveFile out(file.fileName());
    if (!out.open(QIODevice::WriteOnly) || out.write(id.toLatin1() + '\n') < 0 || !out.commit())
        qCWarning(lcAgent).noquote() << "cannot keep the console id in" << file.fileName()
                                     << "- writes of this run cannot be recovered after a restart";
    return id;
}

// SQLite's own check of every page of `path` (quick_check: the b-trees, not the indexes'
// agreement with their tables); nullopt when it is sound. Costs a read of the whole file.
std::optional<QString> damagedPages(const QString &path)
{
    const QString connection = QStringLiteral("agentconsole-check-")
        + QUuid::createUuid().toString(QUuid::WithoutBraces);
    std::optional<QString> damage;
    {
        QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), connection);
        db.setDatabaseName(path);
        db.setConnectOptions(QStringLiteral("QSQLITE_BUSY_TIMEOUT=10000"));
        if (!db.open()) {
            damage = db.lastError().text();
        } else {
            QSqlQuery query(db);
            if (!query.exec(QStringLiteral("PRAGMA quick_check(1)")))
                damage = query.lastError().text();
            else if (!query.next() || query.value(0).toString() != QLatin1String("ok"))
                damage = query.value(0).toString();
            query.finish();
        }
        db.close();
    }
    QSqlDatabase::removeDatabase(connection);
    if (damage)
        qCWarning(lcAgent).noquote() << path << "failed its page check:" << *damage;
    return damage ? std::optional<QString>(QStringLiteral("its pages do not read back"))
                  : std::nullopt;
}

// A data directory that was in use (it has a console-id) must find its files as it left
// them: an empty or unreadable file would be recreated empty, and the ledger's SUCCEEDED rows,
// the interrupted turns or the tickets with it. One line naming the file and what to do.
std::optional<QString> damagedDataFile(const RuntimeOptions &options)
{
    const QDir directory(options.dataDirectory);
    if (!QFileInfo::exists(directory.filePath(QStringLiteral("console-id"))))
        return std::nullopt; // a fresh data directory: its files are made now
    QStringList names{QStringLiteral("support-store.sqlite"), QStringLiteral("turns.sqlite")};
    if (options.ledgerSpec.isEmpty())
        names.prepend(QStringLiteral("ledger.sqlite"));
    const QString remedy = QStringLiteral("restore it from a backup, or move it aside to start "
                                          "afresh (its records are then lost)");
    for (const QString &name : std::as_const(names)) {
        const QString path = QDir::toNativeSeparators(directory.filePath(name));
        const QFileInfo info(path);
        if (!info.exists())
            continue;
        if (!info.isFile())
            return QStringLiteral("%1 is not a file; remove it or choose another --data-dir")
                .arg(path);
        if (info.size() == 0)
            return QStringLiteral("%1 is empty although this data directory was in use; %2")
                .arg(path, remedy);
        QFile file(path);
        if (!file.open(QIODevice::ReadOnly))
            return QStringLiteral("%1 cannot be read (%2); give this user access to it")
                .arg(path, file.errorString());
        if (file.read(16) != QByteArray("SQLite format 3\0", 16))
            return QStringLiteral("%1 is damaged (not an SQLite database); %2").arg(path, remedy);
        // The store checks its own pages as it opens; the ledger and the journal would open
        // on damaged pages and fail later, one lookup or one checkpoint at a time.
        if (name == QLatin1String("support-store.sqlite"))
            continue;
        if (const std::optional<QString> damage = damagedPages(path))
            return QStringLiteral("%1 is damaged (%2); %3").arg(path, *damage, remedy);
    }
    return std::nullopt;
}

Preparation prepareOnThisThread(const RuntimeOptions &options);

// The tools a fault plan may name: those buildTools() registers (the backend changes none of
// their names), read from a registry of the same tools.
KnownTools registeredTools(const std::shared_ptr<SupportStore> &store)
{
    ToolRegistry registry;
    registerSupportTools(registry, std::make_shared<StoreSupportBackend>(store), nullptr);
    registerTicketTool(registry, std::make_shared<StoreTicketBackend>(store));
    KnownTools known;
    for (const ToolDescriptor &tool : registry.descriptors()) {
        known.names.append(tool.name);
        if (tool.hasSideEffects)
            known.writes.append(tool.name);
    }
    return known;
}

// Runs on a thread of the global pool, which the runtime does not own: the store's connection
// for this thread is closed before the thread goes back to the pool.
Preparation prepare(const RuntimeOptions &options)
{
    Preparation result = prepareOnThisThread(options);
    if (result.store)
        result.store->releaseThreadConnection();
    return result;
}

Preparation prepareOnThisThread(const RuntimeOptions &options)
{
    Preparation result;
    // Before anything opens a data file: one that was in use must not be recreated.
    if (const std::optional<QString> damaged = damagedDataFile(options)) {
        result.error = *damaged;
        return result;
    }
    const QString path
        = QDir(options.dataDirectory).filePath(QStringLiteral("support-store.sqlite"));
    result.store = std::make_shared<SupportStore>(path);
    if (!options.faultPlanFile.isEmpty()) {
        QString error;
        auto plan = FaultPlan::fromFile(options.faultPlanFile, &error,
                                        registeredTools(result.store));
        if (!plan) {
            result.error = error;
            return result;
        }
        result.faults = std::make_shared<FaultPlan>(std::move(*plan));
    }
    result.consoleId = consoleIdOf(options.dataDirectory);
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

class AgentRuntime::Private
{
public:
    explicit Private(AgentRuntime *q)
        : q(q)
    {
    }

    void openLedger(Preparation prepared);
    void openJournal(Preparation prepared);
    void readInterruptedTurns(Preparation prepared);
    // Asks the backend for keys owning several tickets; the figure is also stored with
    // `afterTurn` (conversation and request id of a turn that wrote), when given.
    void checkDuplicates(const QPair<QString, QString> &afterTurn = {});
    void lookUpKeyAndWire(Preparation prepared);
    void wire(Preparation prepared);
    void buildModels();
    void buildTools();
    QString dependencyName(const QString &kind, const QString &url) const;
    CircuitBreaker *toolBreaker(const QString &toolName) const;

    AgentRuntime *q;
    RuntimeOptions options;
    std::shared_ptr<SupportStore> store;
    std::shared_ptr<FaultPlan> faults;
    StaffMember staff;
    QString apiKey; // never logged
    ToolRegistry registry;
    bool ready = false;
    bool started = false;
    // Declared in dependency order: what is declared later uses what is declared earlier and
    // is destroyed first.
    // Held while this process owns the data directory; released last, after the ledger's and
    // the journal's queues have drained.
    std::unique_ptr<QLockFile> dataDirectoryLock;
    std::unique_ptr<IdempotencyLedger> ledger;
    std::unique_ptr<TurnJournal> journal;
    QList<TurnCheckpoint> interrupted;
    QList<SetAsideTurn> setAside;
    std::shared_ptr<const TicketBackend> tickets;
    int duplicateKeys = -1;
    // The duplicate check runs on a thread the runtime owns, so that it is over (cancelled if
    // need be) before the runtime and the application go away.
    std::unique_ptr<QThreadPool> checkPool;
    CancellationToken checkCancellation;
    bool duplicateCheckRunning = false;
    bool duplicateCheckWanted = false;  // asked for while one was running: run another
    QList<QPair<QString, QString>> turnsAwaitingDuplicates; // turns that wrote: the next figure
    std::unique_ptr<CircuitBreakerRegistry> breakers;
    std::unique_ptr<ToolExecutor> executor;
    std::unique_ptr<OfflineDemoModel> offlineModel;
    std::unique_ptr<OpenAiCompatibleModel> remoteModel;
    std::unique_ptr<OpenAiCompatibleModel> secondaryModel;
    std::unique_ptr<FaultyChatModel> faultyModel; // set when the fault plan has model faults
    std::unique_ptr<FallbackChatModel> fallbackModel;
    ChatModel *model = nullptr; // the one the loop talks to
    // The backend's part of each route breaker's name: "embedded" or "host:port".
    QString backendName;
    std::unique_ptr<AgentLoop> loop;
};

QString RuntimeOptions::defaultDataDirectory()
{
    return QStandardPaths::writableLocation(QStandardPaths::AppDataLocation);
}

QString AgentRuntime::Private::dependencyName(const QString &kind, const QString &url) const
{
    const QUrl parsed(url);
    const int defaultPort = parsed.scheme() == QLatin1String("https") ? 443 : 80;
    return QStringLiteral("%1:%2:%3").arg(kind, parsed.host()).arg(parsed.port(defaultPort));
}

void AgentRuntime::Private::buildModels()
{
    // The chain is rebuilt from scratch: the loop is pointed at the new one before the old
    // parts go.
    std::unique_ptr<OpenAiCompatibleModel> oldRemote = std::move(remoteModel);
    std::unique_ptr<OpenAiCompatibleModel> oldSecondary = std::move(secondaryModel);
    std::unique_ptr<FaultyChatModel> oldFaulty = std::move(faultyModel);
    std::unique_ptr<FallbackChatModel> oldFallback = std::move(fallbackModel);

    ChatModel *primary = offlineModel.get();
    CircuitBreaker *primaryBreaker = nullptr;
    const ModelOptions &settings = options.model;
    if (settings.provider == ModelOptions::Provider::OpenAiCompatible) {
        OpenAiConfig config;
        config.baseUrl = QUrl(settings.baseUrl);
        config.model = settings.model;
        config.apiKey = apiKey;
        config.stream = settings.stream;
        config.extraHeaders = settings.extraHeaders;
        remoteModel = std::make_unique<OpenAiCompatibleModel>(config);
        primary = remoteModel.get();
        primaryBreaker = breakers->breaker(dependencyName(QStringLiteral("model"),
                                                          settings.baseUrl));
    }
    if (faults && faults->modelFault()) {
        // The fault sits where the provider would fail, so a fallback can still answer.
        faultyModel = std::make_unique<FaultyChatModel>(primary, *faults->modelFault());
        primary = faultyModel.get();
    }
    QList<FallbackChatModel::Link> chain{{primary, primaryBreaker}};
    const bool remote = settings.provider != ModelOptions::Provider::Offline;
    if (remote && settings.hasSecondary()) {
        OpenAiConfig config;
        config.baseUrl = QUrl(settings.secondaryBaseUrl);
        config.model = settings.secondaryModel;
        config.apiKey = ApiKeySource::fromEnvironment(settings.secondaryApiKeyEnv);
        config.stream = settings.stream;
        config.extraHeaders = settings.extraHeaders;
        secondaryModel = std::make_unique<OpenAiCompatibleModel>(config);
        chain.append({secondaryModel.get(),
                      breakers->breaker(dependencyName(QStringLiteral("model"),
                                                       settings.secondaryBaseUrl))});
    }
    if (remote && settings.fallbackToOffline)
        chain.append({offlineModel.get(), nullptr});
    fallbackModel = std::make_unique<FallbackChatModel>(chain);
    model = fallbackModel.get();
    if (loop)
        loop->setModel(model);
}

void AgentRuntime::Private::buildTools()
{
    registry.clear();
    std::shared_ptr<const SupportBackend> backend;
    if (options.backend.kind == BackendOptions::Kind::Http) {
        HttpBackendConfig config;
        config.baseUrl = QUrl(options.backend.url);
        backend = std::make_shared<HttpSupportBackend>(config);
        backendName = dependencyName(QString(), options.backend.url).mid(1);
    } else {
        backend = std::make_shared<StoreSupportBackend>(store);
        backendName = QStringLiteral("embedded");
    }
    registerSupportTools(registry, backend, faults);
    if (options.backend.kind == BackendOptions::Kind::Http) {
        HttpBackendConfig config;
        config.baseUrl = QUrl(options.backend.url);
        tickets = std::make_shared<HttpTicketBackend>(config);
    } else {
        tickets = std::make_shared<StoreTicketBackend>(store);
    }
    registerTicketTool(registry, tickets, faults);
}

CircuitBreaker *AgentRuntime::Private::toolBreaker(const QString &toolName) const
{
    // One breaker per downstream service (DESIGN.md, "Circuit breakers"): five failed
    // logistics calls must not fail the inventory lookup or the ticket. Created on first use.
    if (!breakers || backendName.isEmpty())
        return nullptr;
    const std::shared_ptr<const AgentTool> tool = registry.find(toolName);
    const QString service = tool && !tool->descriptor().service.isEmpty()
                                ? tool->descriptor().service
                                : toolName;
    return breakers->breaker(service + QLatin1Char(':') + backendName);
}

void AgentRuntime::Private::wire(Preparation prepared)
{
    store = std::move(prepared.store);
    faults = std::move(prepared.faults);
    staff = prepared.staff;
    breakers = std::make_unique<CircuitBreakerRegistry>();

    ToolExecutor::Options executorOptions;
    executorOptions.workerThreads = std::max(2, options.toolWorkerThreads);
    executorOptions.defaultPolicy = options.toolPolicy.value_or(RetryPolicy::defaults());
    executor = std::make_unique<ToolExecutor>(executorOptions);
    offlineModel = std::make_unique<OfflineDemoModel>();
    buildModels();
    buildTools();
    loop = std::make_unique<AgentLoop>(model, &registry, executor.get());
    AgentLoop::TurnLimits limits = loop->turnLimits();
    limits.maxToolCallsPerMessage = options.maxToolCallsPerMessage;
    loop->setTurnLimits(limits);
    loop->setToolBreakers([this](const QString &toolName) { return toolBreaker(toolName); });
    loop->setBreakerRegistry(breakers.get());
    loop->setLedger(ledger.get());
    loop->setJournal(journal.get());
    loop->setSession({staff.userId, staff.tenantId, {}});
    QObject::connect(loop.get(), &AgentLoop::turnFinished, q, [this](const TurnResult &result) {
        // A resumed turn that finished is no longer interrupted (a failed answer is offered
        // again at the next start, from the journal).
        interrupted.removeIf([&](const TurnCheckpoint &turn) {
            return turn.conversationId == result.conversationId
                && turn.result.requestId == result.requestId;
        });
        const bool wrote = std::any_of(result.toolCalls.cbegin(), result.toolCalls.cend(),
                                       [this](const ToolCallRecord &call) {
            const auto tool = registry.find(call.name);
            return tool && tool->descriptor().hasSideEffects;
        });
        if (wrote)
            checkDuplicates({result.conversationId, result.requestId});
    });
    ready = true;
    checkDuplicates();
    qCInfo(lcAgent).noquote() << "runtime ready: store" << store->filePath() << "staff"
                              << staff.userId << "tenant" << staff.tenantId << "model"
                              << model->modelName();
    Q_EMIT q->ready();
}

AgentRuntime::AgentRuntime(const RuntimeOptions &options, QObject *parent)
    : QObject(parent)
    , d(std::make_unique<Private>(this))
{
    d->options = options;
    if (d->options.dataDirectory.isEmpty())
        d->options.dataDirectory = RuntimeOptions::defaultDataDirectory();
}

AgentRuntime::~AgentRuntime()
{
    if (d->checkPool) {
        d->checkCancellation.cancel();
        d->checkPool->waitForDone(); // a cancelled check returns within milliseconds
    }
}

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
        d->openLedger(std::move(prepared));
    });
    const RuntimeOptions options = d->options;
    watcher->setFuture(QtConcurrent::run([options] { return prepare(options); }));
}

// Writes never run without the ledger, so the console is ready only once it is open.
void AgentRuntime::Private::openLedger(Preparation prepared)
{
    LedgerOptions ledgerOptions;
    ledgerOptions.owner = prepared.consoleId;
    LedgerOpening opening
        = AgentConsole::openLedger(options.ledgerSpec, options.dataDirectory, ledgerOptions);
    if (!opening.ledger) {
        Q_EMIT q->failed(opening.error);
        return;
    }
    ledger = std::move(opening.ledger);
    auto *watcher = new QFutureWatcher<LedgerOpenResult>(q);
    QObject::connect(watcher, &QFutureWatcherBase::finished, q,
                     [this, watcher, prepared = std::move(prepared)]() mutable {
        watcher->deleteLater();
        const LedgerOpenResult opened = watcher->result();
        if (!opened.ready()) {
            qCWarning(lcAgent).noquote() << "the ledger did not open:" << opened.detail;
            Q_EMIT q->failed(opened.message);
            return;
        }
        openJournal(std::move(prepared));
    });
    watcher->setFuture(ledger->open());
}

void AgentRuntime::Private::openJournal(Preparation prepared)
{
    journal = std::make_unique<TurnJournal>(
        QDir(options.dataDirectory).filePath(QStringLiteral("turns.sqlite")));
    auto *watcher = new QFutureWatcher<JournalOpenResult>(q);
    QObject::connect(watcher, &QFutureWatcherBase::finished, q,
                     [this, watcher, prepared = std::move(prepared)]() mutable {
        watcher->deleteLater();
        const JournalOpenResult opened = watcher->result();
        if (!opened.ok) {
            qCWarning(lcAgent).noquote() << "the turn journal did not open:" << opened.detail;
            Q_EMIT q->failed(opened.message);
            return;
        }
        readInterruptedTurns(std::move(prepared));
    });
    watcher->setFuture(journal->open());
}

// Only one process may carry a data directory's interrupted turns on: two resuming one turn
// would both recover its writes. A lock left by a killed process is stale and taken over.
void AgentRuntime::Private::readInterruptedTurns(Preparation prepared)
{
    const QString lockPath = QDir(options.dataDirectory).filePath(QStringLiteral("console.lock"));
    const QFileInfo lockInfo(lockPath);
    if (lockInfo.exists() && !lockInfo.isFile()) {
        Q_EMIT q->failed(QStringLiteral("%1 is not a file; remove it so that the console can "
                                        "lock its data directory")
                             .arg(QDir::toNativeSeparators(lockPath)));
        return;
    }
    dataDirectoryLock = std::make_unique<QLockFile>(lockPath);
    if (!dataDirectoryLock->tryLock(0)
        && dataDirectoryLock->error() != QLockFile::LockFailedError) {
        const bool denied = dataDirectoryLock->error() == QLockFile::PermissionError;
        dataDirectoryLock.reset();
        Q_EMIT q->failed(QStringLiteral("cannot create the lock %1 (%2); make the data "
                                        "directory writable or choose another --data-dir")
                             .arg(QDir::toNativeSeparators(lockPath),
                                  denied ? QStringLiteral("permission denied")
                                         : QStringLiteral("unknown error")));
        return;
    }
    if (!dataDirectoryLock->isLocked()) {
        // Two processes on one data directory would each see the other's running turns as
        // interrupted, and could both recover one write.
        qint64 pid = 0;
        QString host;
        QString application;
        dataDirectoryLock->getLockInfo(&pid, &host, &application);
        dataDirectoryLock.reset();
        Q_EMIT q->failed(QStringLiteral("another Agent Console process (pid %1) is using the "
                                        "data directory %2; close it or choose another "
                                        "--data-dir")
                             .arg(pid)
                             .arg(QDir::toNativeSeparators(options.dataDirectory)));
        return;
    }
    auto *watcher = new QFutureWatcher<QList<JournalEntry>>(q);
    QObject::connect(watcher, &QFutureWatcherBase::finished, q,
                     [this, watcher, prepared = std::move(prepared)]() mutable {
        watcher->deleteLater();
        for (const JournalEntry &entry : watcher->result()) {
            QString error;
            std::optional<TurnCheckpoint> checkpoint = TurnCheckpoint::fromEntry(entry, &error);
            if (!checkpoint) {
                qCWarning(lcAgent).noquote() << error;
                setAside.append({SetAsideTurn::Reason::Damaged, entry.conversationId,
                                 entry.requestId});
                continue;
            }
            // Only the running session's turns: a row of another staff member or tenant (or
            // one edited to look like it) is never resumed, and its content never shown.
            if (checkpoint->userId != prepared.staff.userId
                || checkpoint->tenantId != prepared.staff.tenantId) {
                qCWarning(lcAgent).noquote() << "turn" << entry.requestId
                                             << "belongs to another staff member or tenant;"
                                                " not offered for resumption";
                setAside.append({SetAsideTurn::Reason::OtherSession, entry.conversationId,
                                 entry.requestId});
                continue;
            }
            interrupted.append(std::move(*checkpoint));
        }
        if (!interrupted.isEmpty())
            qCInfo(lcAgent).noquote() << interrupted.size() << "interrupted turn(s) found";
        lookUpKeyAndWire(std::move(prepared));
    });
    watcher->setFuture(journal->resumable());
}

void AgentRuntime::Private::checkDuplicates(const QPair<QString, QString> &afterTurn)
{
    if (!afterTurn.second.isEmpty())
        turnsAwaitingDuplicates.append(afterTurn);
    if (!tickets)
        return;
    if (duplicateCheckRunning) {
        duplicateCheckWanted = true; // a check that started before this turn's write ended
        return;
    }
    duplicateCheckRunning = true;
    auto *watcher = new QFutureWatcher<int>(q);
    QObject::connect(watcher, &QFutureWatcherBase::finished, q, [this, watcher] {
        watcher->deleteLater();
        duplicateCheckRunning = false;
        const int figure = watcher->result();
        // A check that could not reach the backend keeps the last figure: an alert must not
        // go away just because the backend stopped answering. The turns waiting for a figure
        // wait for the next check.
        if (figure < 0)
            qCWarning(lcAgent).noquote() << "the duplicate check could not reach the backend";
        else
            duplicateKeys = figure;
        if (figure > 0)
            qCCritical(lcAgent).noquote() << figure
                                          << "idempotency key(s) own more than one ticket";
        if (std::exchange(duplicateCheckWanted, false)) {
            checkDuplicates(); // the figure may predate a write: only the next one counts
        } else if (figure >= 0) {
            const auto turns = std::exchange(turnsAwaitingDuplicates, {});
            for (const auto &[conversationId, requestId] : turns) {
                if (journal)
                    journal->mergeCounters(conversationId, requestId,
                                           {{QStringLiteral("duplicate_business_object_count"),
                                             figure}});
            }
        }
        Q_EMIT q->duplicateBusinessObjectsChecked(duplicateKeys);
    });
    const TrustedContext context{staff.userId, staff.tenantId, {}, QStringLiteral("dup-check"),
                                 Language::English};
    if (!checkPool) {
        checkPool = std::make_unique<QThreadPool>();
        checkPool->setMaxThreadCount(1);
    }
    watcher->setFuture(QtConcurrent::run(checkPool.get(), [backend = tickets, store = store,
                                                          context,
                                                          cancel = checkCancellation] {
        const std::optional<int> count = backend->duplicateKeyCount(context, cancel);
        if (store)
            store->releaseThreadConnection();
        return count.value_or(-1);
    }));
}

void AgentRuntime::Private::lookUpKeyAndWire(Preparation prepared)
{
    const ModelOptions &model = options.model;
    if (model.provider == ModelOptions::Provider::Offline) {
        wire(std::move(prepared));
        return;
    }
    // The key: the environment first, then the OS keychain (asynchronous: it may prompt).
    auto *keys = new ApiKeySource(q);
    keys->setVariable(model.apiKeyEnv);
    QObject::connect(keys, &ApiKeySource::finished, q,
                     [this, keys, prepared = std::move(prepared)](
                         const QString &key, ApiKeySource::Origin origin) mutable {
                         keys->deleteLater();
                         apiKey = key;
                         if (origin == ApiKeySource::Origin::None)
                             qCWarning(lcAgent).noquote()
                                 << "no API key found in" << options.model.apiKeyEnv
                                 << "or the keychain; requests go without one";
                         wire(std::move(prepared));
                     });
    keys->lookup();
}

bool AgentRuntime::applyConnectionSettings(const ModelOptions &model,
                                           const BackendOptions &backend, QString *error)
{
    const auto fail = [error](const QString &reason) {
        if (error)
            *error = reason;
        return false;
    };
    if (!d->ready)
        return fail(QStringLiteral("the console is not ready yet"));
    if (d->loop->isBusy())
        return fail(QStringLiteral("wait until the running question is answered"));
    // Its caller is the settings dialog: the field's name, not the command-line option's.
    if (const auto problem = checkConnectionSettings(model, backend))
        return fail(problem->forStaff());
    const bool keyChanged = model.apiKeyEnv != d->options.model.apiKeyEnv;
    d->options.model = model;
    d->options.backend = backend;
    if (keyChanged || d->apiKey.isEmpty())
        d->apiKey = ApiKeySource::fromEnvironment(model.apiKeyEnv);
    d->buildModels();
    d->buildTools();
    qCInfo(lcAgent).noquote() << "settings applied: model" << d->model->modelName()
                              << "backend" << (backend.kind == BackendOptions::Kind::Http
                                                   ? QStringLiteral("http")
                                                   : QStringLiteral("embedded"));
    Q_EMIT settingsChanged();
    return true;
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
    return d->model;
}

CircuitBreakerRegistry *AgentRuntime::breakers() const
{
    return d->breakers.get();
}

QString AgentRuntime::storePath() const
{
    return d->store ? d->store->filePath() : QString();
}

QString AgentRuntime::backendSummary() const
{
    return d->options.backend.kind == BackendOptions::Kind::Http
        ? QStringLiteral("REST %1").arg(QUrl(d->options.backend.url).toDisplayString(
              QUrl::RemoveUserInfo | QUrl::RemoveQuery))
        : QStringLiteral("embedded store");
}

TurnJournal *AgentRuntime::journal() const
{
    return d->journal.get();
}

QList<TurnCheckpoint> AgentRuntime::interruptedTurns() const
{
    return d->interrupted;
}

QList<SetAsideTurn> AgentRuntime::setAsideTurns() const
{
    return d->setAside;
}

QString SetAsideTurn::describe() const
{
    // The id comes from the file: shown only when it is one the console could have made.
    const QString request = AgentLoop::isValidRequestId(requestId)
        ? requestId : QStringLiteral("(with an unreadable id)");
    switch (reason) {
    case Reason::OtherSession:
        return QStringLiteral("interrupted request %1 was saved by another staff member or "
                              "tenant: it is not resumed here and stays in the journal")
            .arg(request);
    case Reason::Damaged:
        break;
    }
    return QStringLiteral("the checkpoint of interrupted request %1 is damaged and cannot be "
                          "resumed; it stays in turns.sqlite (details in the local log)")
        .arg(request);
}

void AgentRuntime::dismissInterruptedTurn(const QString &conversationId,
                                          const QString &requestId)
{
    d->interrupted.removeIf([&](const TurnCheckpoint &turn) {
        if (turn.conversationId != conversationId || turn.result.requestId != requestId)
            return false;
        if (d->loop)
            d->loop->abandon(turn);
        if (d->journal)
            d->journal->dismiss(turn.conversationId, requestId);
        return true;
    });
}

QFuture<QJsonObject> AgentRuntime::counterTotals() const
{
    if (!d->journal)
        return QtFuture::makeReadyFuture(QJsonObject());
    // The duplicate count is the backend's figure now, not a sum over turns.
    const QString duplicates = QStringLiteral("duplicate_business_object_count");
    if (d->duplicateKeys >= 0)
        return d->journal->counterTotals({{duplicates, d->duplicateKeys}});
    return d->journal->counterTotals({}, {duplicates});
}

bool AgentRuntime::isCheckingDuplicates() const
{
    return d->duplicateCheckRunning;
}

int AgentRuntime::duplicateBusinessObjects() const
{
    return d->duplicateKeys;
}

QString AgentRuntime::faultPlanSummary() const
{
    return d->faults ? d->faults->summary() : QString();
}

} // namespace AgentConsole
