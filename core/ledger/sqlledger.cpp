#include "sqlledger.h"

#include "keptcompletions.h"
#include "ledgerstatements.h"
#include "settledrows.h"
#include "core/telemetry/logging.h"

#include <QAtomicInteger>
#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QJsonDocument>
#include <QSqlError>
#include <QSqlQuery>
#include <QThread>

namespace AgentConsole::Internal {

struct ConnectionState
{
    QString connectionName;
    bool opened = false; // open() succeeded once: a lost connection may be made again
    std::unique_ptr<LedgerStatements> statements; // set while connected
    // This ledger's claims not yet completed: what a completion settles, for SettledRows.
    QHash<QString, std::pair<QString, QByteArray>> claimed; // key -> tool name, request hash
    std::unique_ptr<KeptCompletions> kept; // read from its file at the first open()
    bool keptLoaded = false;
    // Audit rows the store could not take, oldest first, with their arguments serialized:
    // appended before the next operation that reaches the store. In memory only.
    QList<std::pair<AuditEntry, QByteArray>> keptAudit;
};

// At most this many audit rows wait for the store; beyond it the oldest is given up (its line
// is in the local log).
constexpr qsizetype MaxKeptAuditRows = 10000;

QSqlDatabase addConnection(const SqlStoreRecipe &recipe, const QString &connectionName)
{
    QSqlDatabase db = QSqlDatabase::addDatabase(recipe.driver, connectionName);
    if (!db.isValid())
        return db;
    db.setDatabaseName(recipe.databaseName);
    if (!recipe.hostName.isEmpty())
        db.setHostName(recipe.hostName);
    if (recipe.port > 0)
        db.setPort(recipe.port);
    if (!recipe.userName.isEmpty())
        db.setUserName(recipe.userName);
    if (!recipe.password.isEmpty())
        db.setPassword(recipe.password);
    db.setConnectOptions(recipe.connectOptions);
    return db;
}

namespace {

// Worded where it is found, in the window's language (docs/TRANSLATIONS.md); agent-cli
// installs no translator and keeps the English source. The detail (the driver's own text)
// goes to the log only.
struct SqlLedgerWords
{
    Q_DECLARE_TR_FUNCTIONS(AgentConsole::Ledger)
};

QString newConnectionName()
{
    static QAtomicInteger<quint64> counter;
    return QStringLiteral("agentconsole-ledger-%1").arg(counter.fetchAndAddRelaxed(1) + 1);
}

LedgerOpenResult failed(LedgerOpenResult::Outcome outcome, const QString &message,
                        const QString &detail)
{
    qCWarning(lcLedger).noquote() << message << "-" << detail;
    return {outcome, 0, message, detail};
}

QString runSessionStatements(QSqlDatabase &db, const QStringList &statements)
{
    for (const QString &entry : statements) {
        const qsizetype arrow = entry.indexOf(QLatin1String("=>"));
        const QString sql = arrow < 0 ? entry : entry.left(arrow);
        QSqlQuery query(db);
        // Switching a new SQLite file to WAL needs it to itself: when another process is
        // opening (or migrating) it at the same moment, SQLite answers "locked" at once rather
        // than waiting out the busy timeout. Wait here instead (the database thread, never the
        // GUI's), for up to about ten seconds.
        for (int attempt = 0; !query.exec(sql); ++attempt) {
            const bool locked = query.lastError().text().contains(QLatin1String("locked"));
            if (!locked || attempt >= 200)
                return sql + QStringLiteral(": ") + query.lastError().text();
            QThread::msleep(50);
        }
        if (arrow >= 0) {
            const QString expected = entry.mid(arrow + 2);
            const QString got = query.next() ? query.value(0).toString() : QString();
            if (got.compare(expected, Qt::CaseInsensitive) != 0)
                return sql + QStringLiteral(" answered '%1', not '%2'").arg(got, expected);
        }
    }
    return {};
}

LedgerOpenResult openOnThread(const SqlStoreRecipe &recipe, ConnectionState &state)
{
    using Outcome = LedgerOpenResult::Outcome;
    if (state.statements)
        return {Outcome::Ready, ledgerMigrations(recipe.dialect).constLast().version, {}, {}};

    // Qt's SQLite driver creates the file but not a missing data directory.
    if (recipe.dialect == SqlDialect::Sqlite)
        QDir().mkpath(QFileInfo(recipe.databaseName).absolutePath());

    QSqlDatabase db = addConnection(recipe, state.connectionName);
    if (!db.isValid())
        return failed(Outcome::StoreError,
                      SqlLedgerWords::tr("The %1 cannot be used: the Qt Sql driver %2 is missing.")
                          .arg(recipe.shownName, recipe.driver),
                      db.lastError().text());
    if (!db.open()) {
        const bool remote = recipe.dialect == SqlDialect::Postgres;
        // The server answered, and refused who the console says it is: not an outage, and
        // working alone would not mend it. (libpq's words; a server set to another language
        // for its messages is told as out of reach.)
        const QString why = db.lastError().text();
        if (remote
            && (why.contains(QLatin1String("password authentication failed"))
                || why.contains(QLatin1String("no password supplied"))
                || why.contains(QLatin1String("authentication failed"))))
            return failed(Outcome::StoreError,
                          SqlLedgerWords::tr("The %1 refused the sign-in of its user: put the "
                                             "password in the keychain, ~/.pgpass or a "
                                             "PostgreSQL service file (docs/TEAM.md).")
                              .arg(recipe.shownName),
                          why);
        return failed(remote ? Outcome::Unreachable : Outcome::StoreError,
                      (remote ? SqlLedgerWords::tr("Cannot reach the %1.")
                              : SqlLedgerWords::tr("Cannot open the %1."))
                          .arg(recipe.shownName),
                      db.lastError().text());
    }

    const QString sessionError = runSessionStatements(db, recipe.sessionStatements);
    if (!sessionError.isEmpty())
        return failed(Outcome::StoreError,
                      SqlLedgerWords::tr("Cannot set up the %1.").arg(recipe.shownName),
                      sessionError);

    const MigrationResult migration = migrateSchema(db, recipe.dialect,
                                                    ledgerMigrations(recipe.dialect));
    if (migration.outcome == MigrationResult::Outcome::TooNew)
        return failed(Outcome::SchemaTooNew,
                      SqlLedgerWords::tr("The %1 has schema version %2, newer than this "
                                         "Agent Console knows; update the console.")
                          .arg(recipe.shownName)
                          .arg(migration.version),
                      migration.detail);
    if (migration.outcome == MigrationResult::Outcome::Failed)
        return failed(
            Outcome::StoreError,
            SqlLedgerWords::tr("Cannot update the schema of the %1.").arg(recipe.shownName),
            migration.detail);

    auto statements = std::make_unique<LedgerStatements>(db, recipe.dialect, recipe.owner);
    if (!statements->prepareError().isEmpty())
        return failed(Outcome::StoreError,
                      SqlLedgerWords::tr("Cannot use the %1.").arg(recipe.shownName),
                      statements->prepareError());
    state.statements = std::move(statements);
    qCInfo(lcLedger).noquote() << "opened the" << recipe.description << "at schema version"
                               << migration.version;
    return {Outcome::Ready, migration.version, {}, {}};
}

// A claim's answer on the database thread: what SettledRows learns from it.
void noteClaim(ConnectionState &state, SettledRows &settled, const QString &key,
               const QString &toolName, const QByteArray &requestHash, const LedgerClaim &claim,
               const std::optional<SettledRow> &settledRow)
{
    if (claim.outcome == LedgerClaim::Outcome::Claimed) {
        // Bounded like SettledRows: claims left open by a store error are forgotten at once.
        if (state.claimed.size() >= SettledRows::MaxRows)
            state.claimed.clear();
        state.claimed.insert(key, {toolName, requestHash});
    } else if (settledRow) {
        settled.remember(key, *settledRow);
    }
}

QString notOpen()
{
    return QStringLiteral("the ledger is not open");
}

// After a failed statement: if the connection itself is gone (a PostgreSQL server restarted,
// a network cut), drop it and connect again, so that the next operation works. False when
// the connection was fine (the statement itself failed).
bool reconnectIfLost(const SqlStoreRecipe &recipe, ConnectionState &state)
{
    {
        QSqlDatabase db = QSqlDatabase::database(state.connectionName, false);
        QSqlQuery probe(db);
        if (db.isOpen() && probe.exec(QStringLiteral("SELECT 1")) && probe.next())
            return false;
    }
    qCWarning(lcLedger).noquote() << "the connection to the" << recipe.description
                                  << "was lost; connecting again";
    state.statements.reset();
    QSqlDatabase::database(state.connectionName, false).close();
    QSqlDatabase::removeDatabase(state.connectionName);
    const LedgerOpenResult reopened = openOnThread(recipe, state);
    if (!reopened.ready()) {
        if (QSqlDatabase::contains(state.connectionName))
            QSqlDatabase::removeDatabase(state.connectionName);
        qCWarning(lcLedger).noquote() << "still cannot reach the" << recipe.description
                                      << "- the next operation tries again";
    }
    return true;
}

// Whether an operation may simply run again after its connection was lost. A claim may not:
// whether its statement committed is unknown, so it answers StoreError and its write is not
// run. A completion may: it only moves this owner's PROCESSING row, so running it twice
// changes nothing, and giving up would leave a finished write reading "in progress".
enum class AfterLoss { Fail, RunAgain };

// Runs `operation` on the open statements, connecting again first if an earlier failure
// lost the connection, and checking the connection after a failure of its own.
template <typename Result, typename Operation>
Result withConnection(const SqlStoreRecipe &recipe, ConnectionState &state, bool opened,
                      Operation operation, Result notConnected, AfterLoss afterLoss)
{
    if (!opened)
        return notConnected;
    if (!state.statements)
        reconnectIfLost(recipe, state);
    if (!state.statements)
        return notConnected;
    Result result = operation(*state.statements);
    if (result.outcome == decltype(result.outcome)::StoreError && reconnectIfLost(recipe, state)
        && state.statements && afterLoss == AfterLoss::RunAgain)
        result = operation(*state.statements);
    return result;
}

// Records what was kept while the store was out, before the operation that follows: a replay
// of a write whose completion was kept then reads the stored result, not "in progress".
qsizetype recordKeptOnThread(const SqlStoreRecipe &recipe, ConnectionState &state)
{
    const qsizetype keptNow = state.kept->size() + state.keptAudit.size();
    if (keptNow == 0 || !state.opened)
        return keptNow;
    if (!state.statements)
        reconnectIfLost(recipe, state);
    if (!state.statements)
        return keptNow;
    const qsizetype left = state.kept->recordWith([&state](const KeptCompletions::Entry &entry) {
        return state.statements->complete(
            entry.key, entry.status, QJsonDocument(entry.result).toJson(QJsonDocument::Compact));
    });
    // The audit rows after the completions, in the order they were made.
    while (left == 0 && !state.keptAudit.isEmpty() && state.statements) {
        const auto &[entry, argumentsJson] = state.keptAudit.constFirst();
        if (state.statements->audit().append(entry, argumentsJson).outcome
            != AuditAppend::Outcome::Appended)
            break;
        state.keptAudit.removeFirst();
    }
    if (left > 0 || !state.keptAudit.isEmpty())
        reconnectIfLost(recipe, state); // the next try connects afresh if this one was lost
    return left + state.keptAudit.size();
}

} // namespace

SqlLedger::SqlLedger(SqlStoreRecipe recipe)
    : m_recipe(std::move(recipe))
    , m_state(std::make_shared<ConnectionState>())
    , m_settled(std::make_shared<SettledRows>())
    , m_worker(QStringLiteral("ledger-db"))
{
    m_state->connectionName = newConnectionName();
    m_state->kept = std::make_unique<KeptCompletions>(m_recipe.keptPath);
}

SqlLedger::~SqlLedger()
{
    // Queued behind every pending operation, on the thread that owns the connection. The
    // statements must go before the connection, and every QSqlDatabase copy before
    // removeDatabase(), or Qt warns that the connection is still in use.
    m_worker.run([state = m_state] {
        state->statements.reset();
        if (QSqlDatabase::contains(state->connectionName)) {
            QSqlDatabase::database(state->connectionName, false).close();
            QSqlDatabase::removeDatabase(state->connectionName);
        }
        return true;
    });
}

QFuture<LedgerOpenResult> SqlLedger::open()
{
    return m_worker.run([recipe = m_recipe, state = m_state] {
        if (!state->keptLoaded) {
            state->kept->load();
            state->keptLoaded = true;
        }
        LedgerOpenResult result = openOnThread(recipe, *state);
        // A failed open leaves nothing behind, so that open() may simply be called again.
        if (!result.ready() && QSqlDatabase::contains(state->connectionName))
            QSqlDatabase::removeDatabase(state->connectionName);
        state->opened = state->opened || result.ready();
        recordKeptOnThread(recipe, *state);
        return result;
    });
}

QFuture<LedgerClaim> SqlLedger::begin(const QString &key, const QString &toolName,
                                      const QByteArray &requestHash)
{
    if (std::optional<LedgerClaim> answer = m_settled->claim(key, toolName, requestHash))
        return QtFuture::makeReadyFuture(*answer);
    return m_worker.run(
        [recipe = m_recipe, state = m_state, settled = m_settled, key, toolName, requestHash] {
            recordKeptOnThread(recipe, *state);
            std::optional<SettledRow> settledRow;
            LedgerClaim claim = withConnection(
                recipe, *state, state->opened,
                [&](LedgerStatements &statements) {
                    return statements.begin(key, toolName, requestHash, &settledRow);
                },
                LedgerClaim{LedgerClaim::Outcome::StoreError, {}, notOpen()}, AfterLoss::Fail);
            if (claim.outcome == LedgerClaim::Outcome::StoreError)
                qCWarning(lcLedger).noquote() << "begin" << key << "failed:" << claim.detail;
            noteClaim(*state, *settled, key, toolName, requestHash, claim, settledRow);
            return claim;
        });
}

QFuture<LedgerClaim> SqlLedger::recover(const QString &key, const QString &toolName,
                                        const QByteArray &requestHash)
{
    // A settled row is answered alike by begin() and recover(): only PROCESSING differs.
    if (std::optional<LedgerClaim> answer = m_settled->claim(key, toolName, requestHash))
        return QtFuture::makeReadyFuture(*answer);
    return m_worker.run(
        [recipe = m_recipe, state = m_state, settled = m_settled, key, toolName, requestHash] {
            recordKeptOnThread(recipe, *state);
            std::optional<SettledRow> settledRow;
            LedgerClaim claim = withConnection(
                recipe, *state, state->opened,
                [&](LedgerStatements &statements) {
                    return statements.recover(key, toolName, requestHash, &settledRow);
                },
                LedgerClaim{LedgerClaim::Outcome::StoreError, {}, notOpen()}, AfterLoss::Fail);
            if (claim.outcome == LedgerClaim::Outcome::StoreError)
                qCWarning(lcLedger).noquote() << "recover" << key << "failed:" << claim.detail;
            else if (claim.mayHaveRun)
                qCInfo(lcLedger).noquote() << "recover" << key << "took over:" << claim.detail;
            noteClaim(*state, *settled, key, toolName, requestHash, claim, settledRow);
            return claim;
        });
}

QFuture<LedgerCompletion> SqlLedger::complete(const QString &key, LedgerStatus status,
                                              const QJsonObject &result)
{
    return m_worker.run([recipe = m_recipe, state = m_state, settled = m_settled, key, status,
                         result] {
        recordKeptOnThread(recipe, *state);
        // Serialized once: for the statement and for what SettledRows may keep.
        const QByteArray resultJson = QJsonDocument(result).toJson(QJsonDocument::Compact);
        LedgerCompletion completion = withConnection(
            recipe, *state, state->opened,
            [&](LedgerStatements &statements) {
                return statements.complete(key, status, resultJson);
            },
            LedgerCompletion{LedgerCompletion::Outcome::StoreError, notOpen()},
            AfterLoss::RunAgain);
        // The write ran; its row must not read "in progress" for ever because the store was
        // out when its answer came (only a store that was opened once: one that never was
        // holds no claim of ours).
        if (completion.outcome == LedgerCompletion::Outcome::StoreError && state->opened
            && status != LedgerStatus::Processing) {
            state->kept->keep({key, status, result});
            qCWarning(lcLedger).noquote() << "complete" << key << "->" << LedgerState::name(status)
                                          << "kept until the store is back:" << completion.detail;
            completion.outcome = LedgerCompletion::Outcome::Kept;
        } else if (completion.outcome != LedgerCompletion::Outcome::Completed)
            qCWarning(lcLedger).noquote() << "complete" << key << "->" << LedgerState::name(status)
                                          << "refused:" << completion.detail;
        // Remembered only once the store holds it: its commit is done.
        const auto claimed = state->claimed.constFind(key);
        if (claimed != state->claimed.cend()) {
            if (completion.completed() && isSettled(status))
                settled->remember(key, {claimed->first, claimed->second, status, result},
                                  resultJson.size());
            state->claimed.erase(claimed);
        }
        return completion;
    });
}

QFuture<LedgerLookup> SqlLedger::lookup(const QString &key)
{
    return m_worker.run([recipe = m_recipe, state = m_state, key] {
        recordKeptOnThread(recipe, *state);
        LedgerLookup found = withConnection(
            recipe, *state, state->opened,
            [&](LedgerStatements &statements) { return statements.lookup(key); },
            LedgerLookup{LedgerLookup::Outcome::StoreError, std::nullopt, notOpen()},
            AfterLoss::RunAgain);
        if (found.outcome == LedgerLookup::Outcome::StoreError)
            qCWarning(lcLedger).noquote() << "lookup" << key << "failed:" << found.detail;
        return found;
    });
}

QFuture<LedgerRecent> SqlLedger::recentSuccesses(const QString &keyPrefix, const QString &toolName,
                                                 std::chrono::seconds window, int limit)
{
    return m_worker.run([recipe = m_recipe, state = m_state, keyPrefix, toolName, window, limit] {
        recordKeptOnThread(recipe, *state);
        LedgerRecent recent = withConnection(
            recipe, *state, state->opened,
            [&](LedgerStatements &statements) {
                return statements.recentSuccesses(keyPrefix, toolName, window, limit);
            },
            LedgerRecent{LedgerRecent::Outcome::StoreError, {}, notOpen()}, AfterLoss::RunAgain);
        if (recent.outcome == LedgerRecent::Outcome::StoreError)
            qCWarning(lcLedger).noquote()
                << "recent writes of" << toolName << "not read:" << recent.detail;
        return recent;
    });
}

QFuture<qsizetype> SqlLedger::recordKept()
{
    return m_worker.run(
        [recipe = m_recipe, state = m_state] { return recordKeptOnThread(recipe, *state); });
}

QFuture<AuditAppend> SqlLedger::append(AuditEntry entry, Redaction redact)
{
    return m_worker.run([recipe = m_recipe, state = m_state, entry = std::move(entry),
                         redact = std::move(redact)]() mutable {
        // Rows kept earlier go first; while any is still kept, this one waits behind them.
        const bool behindKept = recordKeptOnThread(recipe, *state) > 0
            && !state->keptAudit.isEmpty();
        if (redact)
            entry.arguments = redact(entry.arguments);
        const QByteArray argumentsJson = QJsonDocument(entry.arguments)
                                             .toJson(QJsonDocument::Compact);
        AuditAppend appended{AuditAppend::Outcome::StoreError, 0,
                             behindKept ? QStringLiteral("behind the rows kept earlier")
                                        : notOpen()};
        if (!behindKept)
            appended = withConnection(
                recipe, *state, state->opened,
                [&](LedgerStatements &statements) {
                    return statements.audit().append(entry, argumentsJson);
                },
                appended, AfterLoss::Fail);
        // A row lost with its connection may have been committed: kept all the same, a
        // row twice is better than a write without its row.
        if (appended.outcome == AuditAppend::Outcome::StoreError && state->opened) {
            if (state->keptAudit.size() >= MaxKeptAuditRows) {
                const AuditEntry &dropped = state->keptAudit.constFirst().first;
                qCWarning(lcLedger).noquote()
                    << "audit row given up (too many kept):" << dropped.operationId
                    << AuditEntry::eventName(dropped.event)
                    << AuditEntry::outcomeName(dropped.outcome) << dropped.resultCode
                    << dropped.objectId;
                state->keptAudit.removeFirst();
            }
            state->keptAudit.append({entry, argumentsJson});
            appended.outcome = AuditAppend::Outcome::Kept;
        }
        if (appended.outcome != AuditAppend::Outcome::Appended)
            qCWarning(lcLedger).noquote()
                << "audit row" << entry.operationId << AuditEntry::eventName(entry.event)
                << AuditEntry::outcomeName(entry.outcome) << entry.resultCode << entry.objectId
                << (appended.outcome == AuditAppend::Outcome::Kept
                        ? "kept until the store is back:"
                        : "not appended:")
                << appended.detail;
        return appended;
    });
}

QFuture<AuditPage> SqlLedger::read(const AuditQuery &query)
{
    return m_worker.run([recipe = m_recipe, state = m_state, query] {
        recordKeptOnThread(recipe, *state);
        AuditPage page = withConnection(
            recipe, *state, state->opened,
            [&](LedgerStatements &statements) { return statements.audit().read(query); },
            AuditPage{AuditPage::Outcome::StoreError, {}, false, notOpen()}, AfterLoss::RunAgain);
        if (page.outcome == AuditPage::Outcome::StoreError)
            qCWarning(lcLedger).noquote() << "audit trail not read:" << page.detail;
        return page;
    });
}

} // namespace AgentConsole::Internal
