#include "runtimestartup.h"

#include "../async/await.h"
#include "../async/fileworkpool.h"
#include "../faults/faultplan.h"
#include "../ledger/idempotencyledger.h"
#include "../ledger/ledgeropening.h"
#include "../ledger/postgresledger.h"
#include "../ledger/storagefull.h"
#include "../ledger/turnjournal.h"
#include "../llm/apikeysource.h"
#include "../support/createtickettool.h"
#include "../support/supportbackend.h"
#include "../support/supporttools.h"
#include "../support/ticketbackend.h"
#include "../telemetry/logging.h"
#include "../tools/toolregistry.h"
#include "../turn/turncheckpoint.h"
#include "../policy/policysource.h"
#include "teampolicy.h"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QLockFile>
#include <QSaveFile>
#include <QSqlDatabase>
#include <QSqlError>
#include <QSqlQuery>
#include <QSysInfo>
#include <QUuid>
#include <QtConcurrent/QtConcurrentRun>

#include <iterator>

namespace AgentConsole {

namespace {

// Why the console cannot start, worded in the window's language where it is found
// (docs/TRANSLATIONS.md); agent-cli installs no translator and keeps the English source.
struct RuntimeStartupWords
{
    Q_DECLARE_TR_FUNCTIONS(AgentConsole::RuntimeStartup)
};

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

// What SQLite's own check of a data file found.
struct PageCheck
{
    enum class Verdict { Sound, Damaged, DiskFull, NotChecked };
    Verdict verdict = Verdict::Sound;
    QString detail; // the driver's words, for the log only
};

// The verdict on an error SQLite gave while opening or checking: only its own words for a
// damaged file (SQLITE_CORRUPT, SQLITE_NOTADB) say damaged; a full disk (SQLITE_FULL, or an
// I/O error on a disk with no room left) is not damage, nor is any other error.
PageCheck::Verdict verdictOf(const QSqlError &error, const QString &path)
{
    const int code = error.nativeErrorCode().toInt() & 0xff; // the primary result code
    constexpr int kSqliteCorrupt = 11;
    constexpr int kSqliteNotADatabase = 26;
    if (code == kSqliteCorrupt || code == kSqliteNotADatabase)
        return PageCheck::Verdict::Damaged;
    if (sqliteReportsFullDisk(error) || diskIsFull(path))
        return PageCheck::Verdict::DiskFull;
    return PageCheck::Verdict::NotChecked;
}

// SQLite's own check of every page of `path` (quick_check: the b-trees, not the indexes'
// agreement with their tables). Costs a read of the whole file.
PageCheck checkPages(const QString &path)
{
    const QString connection = QStringLiteral("agentconsole-check-")
        + QUuid::createUuid().toString(QUuid::WithoutBraces);
    PageCheck check;
    {
        QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), connection);
        db.setDatabaseName(path);
        db.setConnectOptions(QStringLiteral("QSQLITE_BUSY_TIMEOUT=10000"));
        if (!db.open()) {
            check = {verdictOf(db.lastError(), path), db.lastError().text()};
        } else {
            QSqlQuery query(db);
            if (!query.exec(QStringLiteral("PRAGMA quick_check(1)")))
                check = {verdictOf(query.lastError(), path), query.lastError().text()};
            else if (!query.next() || query.value(0).toString() != QLatin1String("ok"))
                check = {PageCheck::Verdict::Damaged, query.value(0).toString()};
            query.finish();
        }
        db.close();
    }
    QSqlDatabase::removeDatabase(connection);
    if (check.verdict != PageCheck::Verdict::Sound)
        qCWarning(lcAgent).noquote() << path << "failed its page check:" << check.detail;
    return check;
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
    const QString remedy = RuntimeStartupWords::tr(
        "restore it from a backup, or move it aside to start "
        "afresh (its records are then lost)");
    for (const QString &name : std::as_const(names)) {
        const QString path = QDir::toNativeSeparators(directory.filePath(name));
        const QFileInfo info(path);
        if (!info.exists())
            continue;
        if (!info.isFile())
            return RuntimeStartupWords::tr(
                       "%1 is not a file; remove it or choose another --data-dir")
                .arg(path);
        if (info.size() == 0)
            return RuntimeStartupWords::tr(
                       "%1 is empty although this data directory was in use; %2")
                .arg(path, remedy);
        QFile file(path);
        if (!file.open(QIODevice::ReadOnly))
            return RuntimeStartupWords::tr("%1 cannot be read (%2); give this user access to it")
                .arg(path, file.errorString());
        if (file.read(16) != QByteArray("SQLite format 3\0", 16))
            return RuntimeStartupWords::tr("%1 is damaged (not an SQLite database); %2")
                .arg(path, remedy);
        // The store checks its own pages as it opens; the ledger and the journal would open
        // on damaged pages and fail later, one lookup or one checkpoint at a time.
        if (name == QLatin1String("support-store.sqlite"))
            continue;
        // Advice to move a file aside only when SQLite says it is damaged: a full disk, or
        // an error that is not about the file, loses nothing by waiting.
        switch (checkPages(path).verdict) {
        case PageCheck::Verdict::Sound:
            break;
        case PageCheck::Verdict::Damaged:
            return RuntimeStartupWords::tr("%1 is damaged (%2); %3")
                .arg(path, RuntimeStartupWords::tr("its pages do not read back"), remedy);
        case PageCheck::Verdict::DiskFull:
            return RuntimeStartupWords::tr("the disk holding %1 is full: free space and try "
                                           "again; nothing was lost")
                .arg(QDir::toNativeSeparators(options.dataDirectory));
        case PageCheck::Verdict::NotChecked:
            return RuntimeStartupWords::tr("%1 could not be checked (see the local log); "
                                           "nothing was changed: check the disk and try again")
                .arg(path);
        }
    }
    return std::nullopt;
}

Preparation prepareOnThisThread(const RuntimeOptions &options);

// Runs on a thread of the console's file pool, which the runtime does not own: the store's
// connection for this thread is closed before the thread goes back to the pool.
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
    const QString path = QDir(options.dataDirectory)
                             .filePath(QStringLiteral("support-store.sqlite"));
    result.store = std::make_shared<SupportStore>(path);
    if (!options.faultPlanFile.isEmpty()) {
        QString error;
        auto plan = FaultPlan::fromFile(options.faultPlanFile, &error, supportKnownTools());
        if (!plan) {
            result.error = error;
            return result;
        }
        result.faults = std::make_shared<FaultPlan>(std::move(*plan));
    }
    // A new data directory is made here, not by whoever opens the first file in it: the
    // console id goes in before any store does (a failure is the store's to report, below).
    QDir().mkpath(options.dataDirectory);
    result.consoleId = consoleIdOf(options.dataDirectory);
    if (!result.store->prepare(&result.error))
        return result;

    std::optional<StaffMember> staff;
    if (!options.userId.isEmpty()) {
        staff = result.store->staffMember(options.userId);
        if (!staff) {
            result.error = RuntimeStartupWords::tr("unknown staff member '%1'")
                               .arg(options.userId);
            return result;
        }
        if (!options.tenantId.isEmpty() && staff->tenantId != options.tenantId) {
            result.error = RuntimeStartupWords::tr(
                               "staff member '%1' does not belong to tenant '%2'")
                               .arg(options.userId, options.tenantId);
            return result;
        }
    } else {
        staff = result.store->firstStaffMember(options.tenantId);
        if (!staff) {
            result.error = options.tenantId.isEmpty()
                ? RuntimeStartupWords::tr("the store has no staff members")
                : RuntimeStartupWords::tr("unknown tenant '%1'").arg(options.tenantId);
            return result;
        }
    }
    result.staff = *staff;
    return result;
}

} // namespace

StartedParts::StartedParts() = default;
StartedParts::StartedParts(StartedParts &&) noexcept = default;
StartedParts &StartedParts::operator=(StartedParts &&) noexcept = default;
StartedParts::~StartedParts() = default;

RuntimeStartup::RuntimeStartup(const RuntimeOptions &options, QObject *parent)
    : QObject(parent)
    , m_options(options)
{
}

RuntimeStartup::~RuntimeStartup() = default;

void RuntimeStartup::start()
{
    next();
}

StartedParts RuntimeStartup::takeParts()
{
    return std::move(m_parts);
}

void RuntimeStartup::next()
{
    using Step = void (RuntimeStartup::*)();
    static constexpr Step steps[] = {
        &RuntimeStartup::readTeamPolicy, // its values decide the ledger and the models
        &RuntimeStartup::prepareDataDirectory, &RuntimeStartup::lookUpTeamPassword,
        &RuntimeStartup::openLedger, // writes never run without it: ready only once it is open
        &RuntimeStartup::openJournal,          &RuntimeStartup::lockDataDirectory,
        &RuntimeStartup::readInterruptedTurns, &RuntimeStartup::lookUpApiKey,
    };
    if (m_nextStep == std::size(steps)) {
        Q_EMIT ready();
        return;
    }
    (this->*steps[m_nextStep++])();
}

void RuntimeStartup::fail(const QString &reason)
{
    Q_EMIT failed(reason);
}

// No source, or no policy in it: the console as it always was. A policy that is there but
// cannot be read or used fails the start: an admin's policy is never silently ignored.
void RuntimeStartup::readTeamPolicy()
{
    const std::shared_ptr<const PolicySource> source = m_options.policySource;
    if (!source)
        return next();
    struct Read
    {
        std::optional<ManagedPolicy> policy;
        QString problem;
    };
    await(QtConcurrent::run(fileWorkPool(),
                            [source] {
                                Read read;
                                read.policy = TeamPolicy::read(source->read(), &read.problem);
                                return read;
                            }),
          this, [this](const Read &read) {
              if (!read.problem.isEmpty()) {
                  qCWarning(lcAgent).noquote() << "runtime failed to start:" << read.problem;
                  return fail(read.problem);
              }
              if (read.policy) {
                  QString problem;
                  if (!TeamPolicy::applyTo(*read.policy, &m_options, &problem)) {
                      qCWarning(lcAgent).noquote() << "runtime failed to start:" << problem;
                      return fail(problem);
                  }
                  m_parts.policy = read.policy;
              }
              next();
          });
}

void RuntimeStartup::prepareDataDirectory()
{
    const RuntimeOptions options = m_options;
    await(QtConcurrent::run(fileWorkPool(), [options] { return prepare(options); }), this,
          [this](const Preparation &prepared) {
              if (!prepared.error.isEmpty()) {
                  qCWarning(lcAgent).noquote() << "runtime failed to start:" << prepared.error;
                  return fail(prepared.error);
              }
              m_parts.store = prepared.store;
              m_parts.faults = prepared.faults;
              m_parts.staff = prepared.staff;
              m_parts.consoleId = prepared.consoleId;
              next();
          });
}

// A team's password: the OS keychain's entry for the database, if there is one; else libpq
// reads ~/.pgpass or the service file when it connects. Never from the URL (teamSpecProblem).
void RuntimeStartup::lookUpTeamPassword()
{
    if (m_options.teamSpec.isEmpty())
        return next();
    QString error;
    const std::optional<PostgresLocation> location = PostgresLocation::fromUrl(m_options.teamSpec,
                                                                               &error);
    if (!location)
        return fail(error);
    m_team = std::make_unique<PostgresLocation>(*location);
    m_parts.team.database = location->safeName();
    auto *keys = new ApiKeySource(m_options.secrets, this);
    keys->setVariable(QString()); // the keychain only: no variable holds it
    keys->setKeychainKey(teamKeychainKey(m_parts.team.database));
    connect(keys, &ApiKeySource::finished, this,
            [this, keys](const QString &password, ApiKeySource::Origin) {
                keys->deleteLater();
                m_team->password = password;
                next();
            });
    keys->lookup();
}

QString teamKeychainKey(const QString &database)
{
    return QStringLiteral("team-database ") + database;
}

void RuntimeStartup::openLedger()
{
    if (!m_team)
        return openLocalLedger();
    LedgerOptions ledgerOptions;
    ledgerOptions.owner = m_parts.consoleId;
    ledgerOptions.keptCompletionsPath = QDir(m_options.dataDirectory)
                                            .filePath(QStringLiteral("ledger-kept.json"));
    m_parts.ledger = std::make_unique<PostgresLedger>(*m_team, ledgerOptions);
    await(m_parts.ledger->open(), this, [this](const LedgerOpenResult &opened) {
        if (opened.outcome == LedgerOpenResult::Outcome::Unreachable) {
            m_parts.ledger.reset();
            return onTeamUnreachable(opened.message);
        }
        if (!opened.ready()) {
            qCWarning(lcAgent).noquote() << "the team's ledger did not open:" << opened.detail;
            return fail(opened.message);
        }
        next();
    });
}

void RuntimeStartup::onTeamUnreachable(const QString &ledgerMessage)
{
    qCWarning(lcAgent).noquote() << "the team database" << m_parts.team.database
                                 << "cannot be reached:" << ledgerMessage;
    const QString reason = RuntimeStartupWords::tr("Cannot reach the team's database %1.")
                               .arg(m_parts.team.database);
    m_parts.team.reason = reason;
    switch (m_options.whenTeamUnreachable) {
    case RuntimeOptions::WhenTeamUnreachable::RunAlone:
        return runAlone();
    case RuntimeOptions::WhenTeamUnreachable::Ask:
        m_waitingForTeamAnswer = true;
        Q_EMIT teamUnreachable(reason);
        return;
    case RuntimeOptions::WhenTeamUnreachable::Refuse:
        break;
    }
    fail(RuntimeStartupWords::tr("%1 Start again when it is back, or with "
                                 "--alone-if-unreachable to work alone on this desk's own store.")
             .arg(reason));
}

void RuntimeStartup::runAlone()
{
    if (m_parts.team.database.isEmpty() || m_parts.ledger)
        return;
    m_waitingForTeamAnswer = false;
    m_parts.team.alone = true;
    qCWarning(lcAgent).noquote() << "working alone on this desk's own store: the team database"
                                 << m_parts.team.database << "is out of reach";
    openLocalLedger();
}

void RuntimeStartup::giveUp()
{
    if (!m_waitingForTeamAnswer)
        return;
    m_waitingForTeamAnswer = false;
    fail(m_parts.team.reason);
}

void RuntimeStartup::openLocalLedger()
{
    LedgerOptions ledgerOptions;
    ledgerOptions.owner = m_parts.consoleId;
    const RuntimeOptions &options = m_options;
    LedgerOpening opening = AgentConsole::openLedger(options.ledgerSpec, options.dataDirectory,
                                                     ledgerOptions);
    if (!opening.ledger)
        return fail(opening.error);
    m_parts.ledger = std::move(opening.ledger);
    await(m_parts.ledger->open(), this, [this](const LedgerOpenResult &opened) {
        if (!opened.ready()) {
            qCWarning(lcAgent).noquote() << "the ledger did not open:" << opened.detail;
            return fail(opened.message);
        }
        next();
    });
}

void RuntimeStartup::openJournal()
{
    if (!m_parts.team.database.isEmpty() && !m_parts.team.alone) {
        // The team's journal holds this agent's turns, asked at any desk.
        m_parts.journal = std::make_unique<TurnJournal>(
            *m_team, conversationOwner(m_parts.staff.tenantId, m_parts.staff.userId),
            JournalDesk{m_parts.consoleId, QSysInfo::machineHostName()});
    } else {
        m_parts.journal = std::make_unique<TurnJournal>(
            QDir(m_options.dataDirectory).filePath(QStringLiteral("turns.sqlite")));
    }
    await(m_parts.journal->open(), this, [this](const JournalOpenResult &opened) {
        if (!opened.ok) {
            qCWarning(lcAgent).noquote() << "the turn journal did not open:" << opened.detail;
            return fail(opened.message);
        }
        next();
    });
}

// Only one process may carry a data directory's interrupted turns on: two resuming one turn
// would both recover its writes. A lock left by a killed process is stale and taken over.
void RuntimeStartup::lockDataDirectory()
{
    const QString lockPath = QDir(m_options.dataDirectory)
                                 .filePath(QStringLiteral("console.lock"));
    const QFileInfo lockInfo(lockPath);
    if (lockInfo.exists() && !lockInfo.isFile()) {
        return fail(RuntimeStartupWords::tr("%1 is not a file; remove it so that the console can "
                                            "lock its data directory")
                        .arg(QDir::toNativeSeparators(lockPath)));
    }
    std::unique_ptr<QLockFile> &lock = m_parts.dataDirectoryLock;
    lock = std::make_unique<QLockFile>(lockPath);
    if (!lock->tryLock(0) && lock->error() != QLockFile::LockFailedError) {
        const bool denied = lock->error() == QLockFile::PermissionError;
        lock.reset();
        return fail(RuntimeStartupWords::tr("cannot create the lock %1 (%2); make the data "
                                            "directory writable or choose another --data-dir")
                        .arg(QDir::toNativeSeparators(lockPath),
                             denied ? RuntimeStartupWords::tr("permission denied")
                                    : RuntimeStartupWords::tr("unknown error")));
    }
    if (!lock->isLocked()) {
        // Two processes on one data directory would each see the other's running turns as
        // interrupted, and could both recover one write.
        qint64 pid = 0;
        QString host;
        QString application;
        lock->getLockInfo(&pid, &host, &application);
        lock.reset();
        return fail(RuntimeStartupWords::tr("another Agent Console process (pid %1) is using the "
                                            "data directory %2; close it or choose another "
                                            "--data-dir")
                        .arg(pid)
                        .arg(QDir::toNativeSeparators(m_options.dataDirectory)));
    }
    next();
}

void RuntimeStartup::readInterruptedTurns()
{
    await(m_parts.journal->resumable(), this, [this](const QList<JournalEntry> &entries) {
        m_parts.interrupted.sortOut(entries, m_parts.staff.userId, m_parts.staff.tenantId);
        next();
    });
}

// The key: the environment first, then the OS keychain (asynchronous: it may prompt).
void RuntimeStartup::lookUpApiKey()
{
    if (m_options.model.provider == ModelOptions::Provider::Offline)
        return next();
    auto *keys = new ApiKeySource(m_options.secrets, this);
    keys->setVariable(m_options.model.apiKeyEnv);
    connect(keys, &ApiKeySource::finished, this,
            [this, keys](const QString &key, ApiKeySource::Origin origin) {
                keys->deleteLater();
                m_parts.apiKey = key;
                if (origin == ApiKeySource::Origin::None)
                    qCWarning(lcAgent).noquote()
                        << "no API key found in" << m_options.model.apiKeyEnv
                        << "or the keychain; requests go without one";
                next();
            });
    keys->lookup();
}

} // namespace AgentConsole
