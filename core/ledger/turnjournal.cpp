#include "turnjournal.h"

#include "databaseworker.h"
#include "internal/journalschema.h"
#include "internal/journalsegments.h"
#include "ledgerschema.h"
#include "postgresledger.h"
#include "storagefull.h"
#include "core/telemetry/logging.h"

#include <QAtomicInteger>
#include <QCoreApplication>
#include <QCryptographicHash>
#include <QtEndian>
#include <QDir>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QHash>
#include <QJsonDocument>
#include <QSqlError>
#include <QSqlQuery>
#include <QSqlRecord>

#include <algorithm>
#include <optional>

namespace AgentConsole {
namespace Internal {

struct JournalConnection
{
    QString name;
    bool open = false;
    // A team's journal (PostgreSQL): how to connect, and the one owner whose rows it reads and
    // writes. A desk's file has neither.
    std::optional<SqlStoreRecipe> team;
    QString owner;
    JournalDesk desk;
    qint64 deskLock = 0; // the session-level advisory lock that says this desk is running
    // Set on the database thread when a statement failed: the connection may be gone (a
    // server restarted), checked before the operation is given up.
    bool failed = false;
    // Written on the database thread, read from any.
    QAtomicInteger<qint64> saves;
    QAtomicInteger<qint64> savedBytes;
    QAtomicInteger<qint64> appends;
    QAtomicInteger<qint64> appendedBytes;
    QAtomicInteger<qint64> earlierParts;
    QAtomicInteger<qint64> earlierPartBytes;
};

} // namespace Internal

namespace {

using Internal::JournalConnection;

// PostgreSQL's SQLSTATE for a server whose disk is full (disk_full, class 53).
constexpr QLatin1String PostgresDiskFull("53100");

// A checkpoint that could not be written; one that failed for want of room says so.
JournalWrite failedWrite(const QSqlError &error, const QSqlDatabase &db)
{
    JournalWrite write{false, error.text()};
    write.diskFull = db.driverName() == QLatin1String("QPSQL")
        ? error.nativeErrorCode() == PostgresDiskFull
        : sqliteReportsFullDisk(error) || diskIsFull(db.databaseName());
    return write;
}

// " AND owner = ?" (the column after `prefix`) in a team's journal, whose statements read and
// write one owner's rows; nothing in a desk's file. bindOwner() binds it.
QString ownerAnd(const JournalConnection &connection, QLatin1String prefix = QLatin1String(""))
{
    return connection.owner.isEmpty() ? QString() : QStringLiteral(" AND %1owner = ?").arg(prefix);
}

void bindOwner(QSqlQuery &query, const JournalConnection &connection)
{
    if (!connection.owner.isEmpty())
        query.addBindValue(connection.owner);
}

// The order rows were first saved in: SQLite's rowid, a team journal's identity column.
QString insertionOrder(const JournalConnection &connection,
                       QLatin1String prefix = QLatin1String(""))
{
    return prefix + (connection.team ? QLatin1String("seq") : QLatin1String("rowid"));
}

// The key a row is replaced by: a team's rows are each their owner's.
QString conflictKey(const JournalConnection &connection, QLatin1String columns)
{
    return connection.team ? QStringLiteral("owner, ") + columns : QString(columns);
}

// Why the journal cannot be opened, in the window's language (docs/TRANSLATIONS.md); agent-cli
// installs no translator and keeps the English source.
struct JournalWords
{
    Q_DECLARE_TR_FUNCTIONS(AgentConsole::TurnJournal)
};

QString connectionName()
{
    static QAtomicInteger<quint64> counter;
    return QStringLiteral("agentconsole-journal-%1").arg(counter.fetchAndAddRelaxed(1) + 1);
}

QString compact(const QJsonObject &object)
{
    return QString::fromUtf8(QJsonDocument(object).toJson(QJsonDocument::Compact));
}

QJsonObject parsed(const QVariant &value)
{
    return QJsonDocument::fromJson(value.toString().toUtf8()).object();
}

std::optional<QJsonObject> storedObject(const QVariant &value)
{
    return storedJsonObject(value.toString());
}

QString nowText()
{
    return QDateTime::currentDateTimeUtc().toString(Qt::ISODateWithMs);
}

// A turn's row as read: its entry, and the segment that holds its own messages.
struct StoredTurn
{
    JournalEntry entry;
    int segment = 0;
};

// Where the desk columns begin in kSelectColumnsWithDesk.
constexpr int kDeskColumn = 14;

// The columns of kSelectColumns (or the same list in another select), in that order.
StoredTurn storedTurnOf(const QSqlQuery &query)
{
    JournalRow row;
    row.requestId = query.value(0).toString();
    row.conversationId = query.value(1).toString();
    row.stage = query.value(2).toString();
    row.resumable = query.value(3).toInt();
    row.stateJson = query.value(4).toString();
    row.countersJson = query.value(5).toString();
    row.createdAt = query.value(6).toString();
    row.updatedAt = query.value(7).toString();
    StoredTurn turn{journalEntryFromRow(row), query.value(13).toInt()};
    JournalEntry &entry = turn.entry;
    entry.owner = query.value(8).toString();
    entry.title = query.value(9).toString();
    entry.outcome = query.value(10).toString();
    entry.searchText = query.value(11).toString();
    entry.scenario = query.value(12).toString();
    return turn;
}

// `text` as a LIKE pattern that matches it anywhere, its wildcards taken literally.
QString containsPattern(const QString &text)
{
    QString escaped;
    escaped.reserve(text.size() + 2);
    for (const QChar c : text) {
        if (c == QLatin1Char('%') || c == QLatin1Char('_') || c == QLatin1Char('\\'))
            escaped.append(QLatin1Char('\\'));
        escaped.append(c);
    }
    return QLatin1Char('%') + escaped + QLatin1Char('%');
}

// The results appended to `entry` since its checkpoint: the turn as it stands.
void readAppendedResults(const QSqlDatabase &db, JournalConnection &connection,
                         JournalEntry *entry)
{
    QSqlQuery query(db);
    query.setForwardOnly(true);
    query.prepare(QStringLiteral("SELECT call_index, record_json FROM turn_tool_results "
                                 "WHERE conversation_id = ? AND request_id = ?%1 "
                                 "ORDER BY call_index")
                      .arg(ownerAnd(connection)));
    query.addBindValue(entry->conversationId);
    query.addBindValue(entry->requestId);
    bindOwner(query, connection);
    if (!query.exec()) {
        connection.failed = true;
        entry->damage = QStringLiteral("its tool results cannot be read: ")
            + query.lastError().text();
        return;
    }
    while (query.next()) {
        const std::optional<QJsonObject> record = storedObject(query.value(1));
        if (!record) {
            entry->damage = QStringLiteral("tool result %1 is not readable JSON")
                                .arg(query.value(0).toInt());
            return;
        }
        entry->appendedResults.insert(query.value(0).toInt(), *record);
    }
}

// Puts the turn's whole conversation back into its state: the messages of the segments
// before its own, then its own (a row saved by a console before schema version 5, or one that
// could not be split, holds it already).
void readConversationInto(const QSqlDatabase &db, const JournalConnection &connection, int segment,
                          JournalEntry *entry)
{
    // A row saved as it was given (no list of messages to split) reads as it was saved.
    const QLatin1String key("conversation");
    if (entry->state.contains(key) || segment <= 0)
        return;
    const Internal::SegmentRead read = Internal::readConversation(db, entry->conversationId,
                                                                  connection.owner, segment);
    if (!read.messages) {
        entry->damage = read.error;
        return;
    }
    if (entry->state.value(QLatin1String("turnStart")).toInteger(-1) != read.ownStart) {
        entry->damage = QStringLiteral("its conversation does not begin its turn where its "
                                       "state says");
        return;
    }
    entry->state.insert(key, *read.messages);
}

// The rows an executed query selected, each with the tool results appended since its last
// checkpoint and its whole conversation (a damaged row is kept as it was read). The top-level
// keys of the state named in `omitted` are left out; the conversation is then not read.
QList<JournalEntry> readEntries(QSqlQuery &query, JournalConnection &connection,
                                const QStringList &omitted = {})
{
    QList<StoredTurn> turns;
    // With the desk columns (kSelectColumnsWithDesk), read in the same statement: a turn
    // another desk holds is named as such, never taken for this desk's.
    const bool withDesk = connection.team && query.record().count() > kDeskColumn + 1;
    while (query.next()) {
        StoredTurn turn = storedTurnOf(query);
        if (withDesk && query.value(kDeskColumn).toString() != connection.desk.id)
            turn.entry.heldBy = query.value(kDeskColumn + 1).toString();
        turns.append(std::move(turn));
    }
    query.finish();
    const QSqlDatabase db = QSqlDatabase::database(connection.name, false);
    const bool withConversation = !omitted.contains(QLatin1String("conversation"));
    QList<JournalEntry> entries;
    entries.reserve(turns.size());
    for (StoredTurn &turn : turns) {
        JournalEntry &entry = turn.entry;
        if (entry.damage.isEmpty())
            readAppendedResults(db, connection, &entry);
        if (entry.damage.isEmpty() && withConversation)
            readConversationInto(db, connection, turn.segment, &entry);
        for (const QString &key : omitted)
            entry.state.remove(key);
        entries.append(std::move(entry));
    }
    return entries;
}

// Connects a team's journal to its database and sets its session up; the reason in the log
// when it cannot.
QString connectTeam(const JournalConnection &connection)
{
    const Internal::SqlStoreRecipe &recipe = *connection.team;
    QSqlDatabase db = Internal::addConnection(recipe, connection.name);
    if (!db.isValid())
        return QStringLiteral("the Qt Sql driver %1 is missing").arg(recipe.driver);
    if (!db.open())
        return db.lastError().text();
    QSqlQuery session(db);
    for (const QString &sql : recipe.sessionStatements) {
        if (!session.exec(sql))
            return sql + QStringLiteral(": ") + session.lastError().text();
    }
    // Held while this connection lives: other desks see this one running. Still held by a
    // session of this desk that the server has not yet noticed is gone: that one lets go soon.
    if (!session.exec(QStringLiteral("SELECT pg_try_advisory_lock(%1)").arg(connection.deskLock)))
        return session.lastError().text();
    if (session.next() && !session.value(0).toBool())
        qCWarning(lcLedger).noquote() << "this desk's lock is still held by an earlier session";
    return {};
}

// Whether the advisory lock in the column `lockColumn` is held by a session of this database:
// the desk that holds a turn is running (its journal's connection took it when it connected).
QString deskIsRunning(QLatin1String lockColumn)
{
    return QStringLiteral("EXISTS (SELECT 1 FROM pg_locks l WHERE l.locktype = 'advisory' "
                          "AND l.granted AND l.objsubid = 1 AND l.database = (SELECT oid FROM "
                          "pg_database WHERE datname = current_database()) "
                          "AND l.classid::bigint = (%1 >> 32) & 4294967295 "
                          "AND l.objid::bigint = %1 & 4294967295)")
        .arg(lockColumn);
}

void disconnect(const JournalConnection &connection)
{
    if (QSqlDatabase::contains(connection.name)) {
        QSqlDatabase::database(connection.name, false).close();
        QSqlDatabase::removeDatabase(connection.name);
    }
}

// After a failed statement of a team's journal: whether its connection was lost and has been
// made again (or tried: the next statement then fails at once and says so). False when the
// connection is fine: the statement itself failed.
bool reconnectIfLost(JournalConnection &connection)
{
    {
        QSqlDatabase db = QSqlDatabase::database(connection.name, false);
        QSqlQuery probe(db);
        if (db.isOpen() && probe.exec(QStringLiteral("SELECT 1")) && probe.next())
            return false;
    }
    qCWarning(lcLedger).noquote() << "the connection to the" << connection.team->description
                                  << "was lost; connecting again";
    disconnect(connection);
    const QString failed = connectTeam(connection);
    if (!failed.isEmpty())
        qCWarning(lcLedger).noquote() << "still cannot reach the" << connection.team->description
                                      << "- the next operation tries again:" << failed;
    return true;
}

template <typename T> bool operationFailed(const T &)
{
    return false;
}
bool operationFailed(const JournalWrite &write)
{
    return !write.ok;
}

// Runs one operation of the journal on its database thread. In a team's journal a failed
// statement may mean that the connection is gone (the server restarted, the network cut):
// it is made again and the operation runs once more. Every operation may: a checkpoint
// replaces its row with the same content, an appended result its own row, a deletion deletes
// what is left, and a read reads again.
template <typename Operation> auto onConnection(JournalConnection &connection, Operation operation)
{
    if (connection.team && connection.open
        && !QSqlDatabase::database(connection.name, false).isOpen())
        reconnectIfLost(connection);
    connection.failed = false;
    auto result = operation();
    if (connection.team && (connection.failed || operationFailed(result))
        && reconnectIfLost(connection)) {
        connection.failed = false;
        result = operation();
    }
    return result;
}

// Claims for this desk, in one statement, the owner's resumable turns that no running desk
// holds: of two desks claiming at once, PostgreSQL lets one update a row and the other then
// finds it held (its WHERE is checked again against the row the first one committed).
bool claimResumable(JournalConnection &connection)
{
    QSqlQuery claim(QSqlDatabase::database(connection.name, false));
    claim.prepare(QStringLiteral("UPDATE turn_checkpoints SET desk = ?, desk_name = ?, "
                                 "desk_lock = ? WHERE owner = ? AND resumable = 1 AND "
                                 "(desk IS NULL OR desk = ? OR NOT %1)")
                      .arg(deskIsRunning(QLatin1String("desk_lock"))));
    claim.addBindValue(connection.desk.id);
    claim.addBindValue(connection.desk.name);
    claim.addBindValue(connection.deskLock);
    claim.addBindValue(connection.owner);
    claim.addBindValue(connection.desk.id);
    if (!claim.exec()) {
        connection.failed = true;
        qCWarning(lcLedger).noquote()
            << "interrupted turns not claimed:" << claim.lastError().text();
        return false;
    }
    return true;
}

const QString kSelectColumns = QStringLiteral(
    "SELECT request_id, conversation_id, stage, resumable, state_json, counters_json, "
    "created_at, updated_at, owner, title, outcome, search_text, scenario, segment "
    "FROM turn_checkpoints ");
// The same, then the desk that holds the turn and its name (a team's journal).
const QString kSelectColumnsWithDesk = QStringLiteral(
    "SELECT request_id, conversation_id, stage, resumable, state_json, counters_json, "
    "created_at, updated_at, owner, title, outcome, search_text, scenario, segment, desk, "
    "desk_name FROM turn_checkpoints ");

} // namespace

std::optional<QJsonObject> storedJsonObject(const QString &text)
{
    QJsonParseError error;
    const QJsonDocument document = QJsonDocument::fromJson(text.toUtf8(), &error);
    if (error.error != QJsonParseError::NoError || !document.isObject())
        return std::nullopt;
    return document.object();
}

JournalEntry journalEntryFromRow(const JournalRow &row)
{
    JournalEntry entry;
    entry.requestId = row.requestId;
    entry.conversationId = row.conversationId;
    entry.stage = row.stage;
    entry.resumable = row.resumable != 0;
    const std::optional<QJsonObject> state = storedJsonObject(row.stateJson);
    const std::optional<QJsonObject> counters = storedJsonObject(row.countersJson);
    entry.state = state.value_or(QJsonObject());
    entry.counters = counters.value_or(QJsonObject());
    if (!state)
        entry.damage = QStringLiteral("its state is not readable JSON");
    else if (!counters)
        entry.damage = QStringLiteral("its counters are not readable JSON");
    entry.createdAt = QDateTime::fromString(row.createdAt, Qt::ISODateWithMs);
    entry.updatedAt = QDateTime::fromString(row.updatedAt, Qt::ISODateWithMs);
    return entry;
}

TurnJournal::TurnJournal(const QString &filePath)
    : m_filePath(QFileInfo(filePath).absoluteFilePath())
    , m_connection(std::make_shared<JournalConnection>())
    , m_worker(std::make_unique<Internal::DatabaseWorker>(QStringLiteral("journal-db")))
{
    m_connection->name = connectionName();
}

TurnJournal::TurnJournal(const PostgresLocation &location, const QString &owner,
                         const JournalDesk &desk)
    : m_filePath(location.safeName())
    , m_connection(std::make_shared<JournalConnection>())
    , m_worker(std::make_unique<Internal::DatabaseWorker>(QStringLiteral("journal-db")))
{
    m_connection->name = connectionName();
    Internal::SqlStoreRecipe recipe = postgresStoreRecipe(location);
    recipe.description = QStringLiteral("team turn journal %1").arg(location.safeName());
    m_connection->team = std::move(recipe);
    m_connection->owner = owner;
    m_connection->desk = desk;
    // A 64-bit advisory lock key of the desk's id: the first 8 bytes of its SHA-256.
    const QByteArray hash = QCryptographicHash::hash(
        QByteArrayLiteral("agentconsole-desk:") + desk.id.toUtf8(), QCryptographicHash::Sha256);
    m_connection->deskLock = qFromBigEndian<qint64>(hash.constData());
}

TurnJournal::~TurnJournal()
{
    m_worker->run([connection = m_connection] {
        disconnect(*connection);
        return true;
    });
}

bool TurnJournal::isTeamJournal() const
{
    return m_connection->team.has_value();
}

JournalActivity TurnJournal::activity() const
{
    JournalActivity activity;
    activity.saves = m_connection->saves.loadRelaxed();
    activity.savedBytes = m_connection->savedBytes.loadRelaxed();
    activity.appends = m_connection->appends.loadRelaxed();
    activity.appendedBytes = m_connection->appendedBytes.loadRelaxed();
    activity.earlierParts = m_connection->earlierParts.loadRelaxed();
    activity.earlierPartBytes = m_connection->earlierPartBytes.loadRelaxed();
    return activity;
}

namespace {

// A team's journal: connected, its schema made or brought up to date by the team journal's
// migrations (each applied once, by one console, whichever starts first).
JournalOpenResult openTeamJournal(JournalConnection &connection, const QString &safeName)
{
    if (connection.open)
        return JournalOpenResult{true, {}, {}};
    const QString failed = connectTeam(connection);
    if (!failed.isEmpty()) {
        disconnect(connection);
        qCWarning(lcLedger).noquote()
            << "cannot reach the" << connection.team->description << failed;
        return JournalOpenResult{
            false, JournalWords::tr("cannot reach the team database %1").arg(safeName), failed};
    }
    QSqlDatabase db = QSqlDatabase::database(connection.name, false);
    const QList<Internal::SchemaMigration> migrations = Internal::teamJournalMigrations();
    const Internal::MigrationResult migration = Internal::migrateSchema(
        db, Internal::SqlDialect::Postgres, migrations, QStringLiteral("journal_schema_version"));
    if (migration.outcome != Internal::MigrationResult::Outcome::Migrated) {
        db = QSqlDatabase(); // let go of before the connection is removed
        disconnect(connection);
    }
    if (migration.outcome == Internal::MigrationResult::Outcome::TooNew) {
        return JournalOpenResult{
            false,
            JournalWords::tr("the turn journal in the team database %1 has schema version %2, "
                             "newer than this Agent Console knows (%3): update the console; the "
                             "database was left as it is")
                .arg(safeName)
                .arg(migration.version)
                .arg(migrations.constLast().version),
            QStringLiteral("schema too new: ") + migration.detail};
    }
    if (migration.outcome != Internal::MigrationResult::Outcome::Migrated) {
        qCWarning(lcLedger).noquote()
            << "the team turn journal's schema was not updated:" << migration.detail;
        return JournalOpenResult{false,
                                 JournalWords::tr(
                                     "cannot update the turn journal in the team database %1")
                                     .arg(safeName),
                                 migration.detail};
    }
    if (migration.previous < migration.version)
        qCInfo(lcLedger).noquote() << "team turn journal" << safeName << "migrated from schema"
                                   << migration.previous << "to" << migration.version;
    // An agent's own database role says who the agent is (team_members): a console started as
    // someone else is refused here rather than by every statement after.
    QSqlQuery member(db);
    if (!member.exec(QStringLiteral(
            "SELECT session_user, m.tenant_id || '/' || m.staff_id, "
            // Bound by row-level security: an agent's role, not the tables' owner (nor a
            // superuser, who is a member of every role).
            "pg_has_role(session_user, 'agentconsole_staff', 'MEMBER') AND NOT "
            "pg_has_role(session_user, (SELECT tableowner FROM pg_tables WHERE tablename = "
            "'turn_checkpoints' AND schemaname = current_schema()), 'MEMBER') "
            "FROM (SELECT 1) AS one LEFT JOIN team_members m ON m.role_name = session_user"))
        || !member.next()) {
        const QString detail = member.lastError().text();
        member = QSqlQuery();
        db = QSqlDatabase();
        disconnect(connection);
        return JournalOpenResult{
            false, JournalWords::tr("cannot read the team's members in %1").arg(safeName), detail};
    }
    const QString role = member.value(0).toString();
    const QString agent = member.value(1).toString();
    const bool agentRole = member.value(2).toBool();
    member = QSqlQuery();
    if ((agentRole && agent.isEmpty()) || (!agent.isEmpty() && agent != connection.owner)) {
        db = QSqlDatabase();
        disconnect(connection);
        const QString message = agent.isEmpty()
            ? JournalWords::tr("the database role %1 is not in the team's members: a "
                               "database administrator adds it to team_members (docs/TEAM.md)")
                  .arg(role)
            : JournalWords::tr("the database role %1 belongs to %2, not to %3: sign in with "
                               "your own role")
                  .arg(role, agent, connection.owner);
        qCWarning(lcLedger).noquote() << message;
        return JournalOpenResult{false, message, QStringLiteral("not this agent's role")};
    }
    connection.open = true;
    return JournalOpenResult{true, {}, {}};
}

} // namespace

QFuture<JournalOpenResult> TurnJournal::open()
{
    if (m_connection->team)
        return m_worker->run([name = m_filePath, connection = m_connection] {
            return openTeamJournal(*connection, name);
        });
    return m_worker->run([path = m_filePath, connection = m_connection] {
        const QString message
            = JournalWords::tr("cannot open the turn journal %1; if it is damaged, restore it "
                               "from a backup or move it aside (its interrupted turns are "
                               "then lost)")
                  .arg(QDir::toNativeSeparators(path));
        if (connection->open)
            return JournalOpenResult{true, {}, {}};
        QDir().mkpath(QFileInfo(path).absolutePath());
        QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), connection->name);
        db.setDatabaseName(path);
        db.setConnectOptions(QStringLiteral("QSQLITE_BUSY_TIMEOUT=10000"));
        auto fail = [&](const QString &detail) {
            qCWarning(lcLedger).noquote() << message << detail;
            db = QSqlDatabase();
            QSqlDatabase::removeDatabase(connection->name);
            return JournalOpenResult{false, message, detail};
        };
        if (!db.open())
            return fail(db.lastError().text());
        QSqlQuery pragma(db);
        for (const char *sql : {"PRAGMA journal_mode = WAL", "PRAGMA synchronous = FULL"}) {
            if (!pragma.exec(QString::fromLatin1(sql)))
                return fail(pragma.lastError().text());
        }
        pragma.finish();
        QElapsedTimer migrating;
        migrating.start();
        const QList<Internal::SchemaMigration> migrations = Internal::journalMigrations();
        const Internal::MigrationResult migration = Internal::migrateSchema(
            db, Internal::SqlDialect::Sqlite, migrations);
        if (migration.outcome == Internal::MigrationResult::Outcome::TooNew) {
            // Left as it is: a newer console's journal is not for this one to read or change.
            const QString newer = JournalWords::tr(
                                      "the turn journal %1 has schema version %2, newer than this "
                                      "Agent Console knows (%3): update the console; the file was "
                                      "left as it is")
                                      .arg(QDir::toNativeSeparators(path))
                                      .arg(migration.version)
                                      .arg(migrations.constLast().version);
            qCWarning(lcLedger).noquote() << newer << migration.detail;
            db = QSqlDatabase();
            QSqlDatabase::removeDatabase(connection->name);
            return JournalOpenResult{false, newer,
                                     QStringLiteral("schema too new: ") + migration.detail};
        }
        if (migration.outcome != Internal::MigrationResult::Outcome::Migrated)
            return fail(migration.detail);
        if (migration.previous > 0 && migration.previous < migration.version) {
            qCInfo(lcLedger).noquote()
                << "turn journal" << path << "migrated from schema version" << migration.previous
                << "to" << migration.version << "in" << migrating.elapsed() << "ms";
            // Before version 5 each row held its whole conversation: most of the file is free
            // pages now, given back to the disk once. The journal works without it.
            if (migration.previous < 5) {
                QSqlQuery vacuum(db);
                if (!vacuum.exec(QStringLiteral("VACUUM")))
                    qCWarning(lcLedger).noquote()
                        << "turn journal" << path
                        << "not compacted after its migration:" << vacuum.lastError().text();
            }
        }
        connection->open = true;
        return JournalOpenResult{true, {}, {}};
    });
}

QFuture<JournalWrite> TurnJournal::save(const JournalEntry &entry)
{
    return save([entry] { return entry; });
}

namespace {

// One checkpoint, on the database thread (TurnJournal::save).
JournalWrite saveEntry(JournalConnection &connection, const JournalEntry &entry)
{
    QSqlDatabase db = QSqlDatabase::database(connection.name, false);
    const auto fail = [&](const QSqlQuery &query) {
        const QString detail = query.lastError().text();
        qCWarning(lcLedger).noquote()
            << "checkpoint of" << entry.requestId << entry.stage << "not saved:" << detail;
        db.rollback();
        return failedWrite(query.lastError(), db);
    };
    // The row, its part of the conversation and the removal of the results it now holds
    // are one commit: a crash leaves either the old row with its appended results or the
    // new row alone.
    if (!db.transaction())
        return failedWrite(db.lastError(), db);
    QJsonObject state = entry.state;
    int segment = 0;
    qint64 conversationBytes = 0;
    qint64 earlierPartBytes = 0;
    const QJsonValue conversation = state.value(QLatin1String("conversation"));
    const qsizetype turnStart = state.value(QLatin1String("turnStart")).toInteger(-1);
    // A state without a list of messages and a turnStart inside it is stored as it is (and
    // read back as such: not resumable).
    if (conversation.isArray() && turnStart >= 0 && turnStart <= conversation.toArray().size()) {
        const QJsonArray messages = conversation.toArray();
        QSqlQuery current(db);
        current.prepare(QStringLiteral("SELECT segment FROM turn_checkpoints "
                                       "WHERE conversation_id = ? AND request_id = ?")
                        + ownerAnd(connection));
        current.addBindValue(entry.conversationId);
        current.addBindValue(entry.requestId);
        bindOwner(current, connection);
        if (!current.exec())
            return fail(current);
        const int currentSegment = current.next() ? current.value(0).toInt() : 0;
        current.finish();
        const Internal::SegmentWrite written = Internal::writeTurnSegment(
            db, entry.conversationId, connection.owner, messages,
            entry.conversationHashes.size() == messages.size() ? entry.conversationHashes
                                                               : Internal::runningHashes(messages),
            turnStart, currentSegment);
        if (written.error.isValid()) {
            qCWarning(lcLedger).noquote() << "checkpoint of" << entry.requestId << entry.stage
                                          << "not saved:" << written.error.text();
            db.rollback();
            return failedWrite(written.error, db);
        }
        segment = written.segment;
        conversationBytes = written.bytes;
        earlierPartBytes = written.earlierPartBytes;
        state.remove(QLatin1String("conversation"));
    }
    // In a team's journal the checkpoint also says which desk holds the turn, and is refused
    // when another running desk has claimed the turn since (resumable()).
    const bool team = connection.team.has_value();
    QSqlQuery query(db);
    query.prepare(
        QStringLiteral(
            "INSERT INTO turn_checkpoints (request_id, conversation_id, stage, resumable, "
            "state_json, counters_json, created_at, updated_at, owner, title, outcome, "
            "search_text, scenario, segment%2) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
            "?%3) ON CONFLICT (%1) DO UPDATE SET stage = excluded.stage, "
            "resumable = excluded.resumable, state_json = excluded.state_json, "
            "counters_json = excluded.counters_json, updated_at = excluded.updated_at, "
            "owner = excluded.owner, title = excluded.title, outcome = excluded.outcome, "
            "search_text = excluded.search_text, scenario = excluded.scenario, "
            "segment = excluded.segment%4")
            .arg(conflictKey(connection, QLatin1String("conversation_id, request_id")),
                 team ? QStringLiteral(", desk, desk_name, desk_lock") : QString(),
                 team ? QStringLiteral(", ?, ?, ?") : QString(),
                 // An unfinished turn is written by the desk that holds it only (another takes
                 // it over by claiming it, resumable()); a finished one may be asked again
                 // anywhere once its desk is gone.
                 team ? QStringLiteral(", desk = excluded.desk, desk_name = excluded.desk_name, "
                                       "desk_lock = excluded.desk_lock WHERE "
                                       "turn_checkpoints.desk IS NULL OR turn_checkpoints.desk "
                                       "= excluded.desk OR (turn_checkpoints.resumable = 0 AND "
                                       "NOT ")
                         + deskIsRunning(QLatin1String("turn_checkpoints.desk_lock"))
                         + QLatin1Char(')')
                      : QString()));
    const QString now = nowText();
    const QString stateText = compact(state);
    const QString counters = compact(entry.counters);
    query.addBindValue(entry.requestId);
    query.addBindValue(entry.conversationId);
    query.addBindValue(entry.stage);
    query.addBindValue(entry.resumable ? 1 : 0);
    query.addBindValue(stateText);
    query.addBindValue(counters);
    query.addBindValue(now);
    query.addBindValue(now);
    // Never a null QString: Qt Sql binds that as NULL, which the columns refuse.
    const auto text = [](const QString &value) {
        return value.isNull() ? QStringLiteral("") : value;
    };
    query.addBindValue(text(entry.owner));
    query.addBindValue(text(entry.title));
    query.addBindValue(text(entry.outcome));
    query.addBindValue(text(entry.searchText));
    query.addBindValue(text(entry.scenario));
    query.addBindValue(segment);
    if (team) {
        query.addBindValue(connection.desk.id);
        query.addBindValue(connection.desk.name);
        query.addBindValue(connection.deskLock);
    }
    if (!query.exec())
        return fail(query);
    if (team && query.numRowsAffected() == 0) {
        query.finish();
        db.rollback();
        QSqlQuery holder(db);
        holder.prepare(QStringLiteral("SELECT desk_name FROM turn_checkpoints WHERE owner = ? "
                                      "AND conversation_id = ? AND request_id = ?"));
        holder.addBindValue(connection.owner);
        holder.addBindValue(entry.conversationId);
        holder.addBindValue(entry.requestId);
        JournalWrite refused{false, QStringLiteral("the turn is held by another desk")};
        refused.heldBy = holder.exec() && holder.next() ? holder.value(0).toString()
                                                        : QStringLiteral("?");
        qCWarning(lcLedger).noquote() << "checkpoint of" << entry.requestId << entry.stage
                                      << "refused: the turn is carried on at another desk";
        return refused;
    }
    QSqlQuery folded(db);
    folded.prepare(QStringLiteral("DELETE FROM turn_tool_results "
                                  "WHERE conversation_id = ? AND request_id = ?")
                   + ownerAnd(connection));
    folded.addBindValue(entry.conversationId);
    folded.addBindValue(entry.requestId);
    bindOwner(folded, connection);
    if (!folded.exec())
        return fail(folded);
    if (!db.commit()) {
        const JournalWrite failed = failedWrite(db.lastError(), db);
        qCWarning(lcLedger).noquote() << "checkpoint of" << entry.requestId << entry.stage
                                      << "not committed:" << failed.detail;
        db.rollback();
        return failed;
    }
    const qint64 bytes = stateText.toUtf8().size() + counters.toUtf8().size() + conversationBytes;
    connection.saves.fetchAndAddRelaxed(1);
    connection.savedBytes.fetchAndAddRelaxed(bytes);
    if (earlierPartBytes > 0) {
        connection.earlierParts.fetchAndAddRelaxed(1);
        connection.earlierPartBytes.fetchAndAddRelaxed(earlierPartBytes);
    }
    return JournalWrite{true, {}, bytes};
}

} // namespace

QFuture<JournalWrite> TurnJournal::save(std::function<JournalEntry()> makeEntry)
{
    return m_worker->run([connection = m_connection, makeEntry = std::move(makeEntry)] {
        if (!connection->open)
            return JournalWrite{false, QStringLiteral("the journal is not open")};
        const JournalEntry entry = makeEntry();
        // A team's journal keeps one owner's turns: another's is refused, never written.
        if (connection->team && entry.owner != connection->owner)
            return JournalWrite{false, QStringLiteral("a turn of another owner")};
        return onConnection(*connection, [&] { return saveEntry(*connection, entry); });
    });
}

QFuture<JournalWrite> TurnJournal::appendToolResult(const QString &conversationId,
                                                    const QString &requestId, int callIndex,
                                                    const QJsonObject &record)
{
    return appendToolResult(conversationId, requestId, callIndex, [record] { return record; });
}

QFuture<JournalWrite> TurnJournal::appendToolResult(const QString &conversationId,
                                                    const QString &requestId, int callIndex,
                                                    std::function<QJsonObject()> makeRecord)
{
    return m_worker->run([connection = m_connection, conversationId, requestId, callIndex,
                          makeRecord = std::move(makeRecord)] {
        if (!connection->open)
            return JournalWrite{false, QStringLiteral("the journal is not open")};
        const QString json = compact(makeRecord());
        return onConnection(*connection, [&] {
            QSqlQuery query(QSqlDatabase::database(connection->name, false));
            query.prepare(
                QStringLiteral("INSERT INTO turn_tool_results (conversation_id, request_id, "
                               "call_index, record_json, created_at%1) VALUES (?, ?, ?, ?, ?%2) "
                               "ON CONFLICT (%3) DO UPDATE SET "
                               "record_json = excluded.record_json")
                    .arg(connection->team ? QStringLiteral(", owner") : QString(),
                         connection->team ? QStringLiteral(", ?") : QString(),
                         conflictKey(*connection,
                                     QLatin1String("conversation_id, request_id, call_index"))));
            query.addBindValue(conversationId);
            query.addBindValue(requestId);
            query.addBindValue(callIndex);
            query.addBindValue(json);
            query.addBindValue(nowText());
            bindOwner(query, *connection);
            if (!query.exec()) {
                const QString detail = query.lastError().text();
                qCWarning(lcLedger).noquote()
                    << "tool result" << callIndex << "of" << requestId << "not saved:" << detail;
                return JournalWrite{false, detail};
            }
            const qint64 bytes = json.toUtf8().size();
            connection->appends.fetchAndAddRelaxed(1);
            connection->appendedBytes.fetchAndAddRelaxed(bytes);
            return JournalWrite{true, {}, bytes};
        });
    });
}

QFuture<QList<JournalEntry>> TurnJournal::resumable()
{
    return m_worker->run([connection = m_connection] {
        QList<JournalEntry> entries;
        if (!connection->open)
            return entries;
        // A team's journal: this owner's, asked at whichever desk, claimed for this one.
        return onConnection(*connection, [&] {
            if (connection->team && !claimResumable(*connection))
                return QList<JournalEntry>();
            QSqlQuery query(QSqlDatabase::database(connection->name, false));
            query.prepare((connection->team ? kSelectColumnsWithDesk : kSelectColumns)
                          + QStringLiteral("WHERE resumable = 1%1 ORDER BY created_at, %2")
                                .arg(ownerAnd(*connection), insertionOrder(*connection)));
            bindOwner(query, *connection);
            if (!query.exec()) {
                connection->failed = true;
                qCWarning(lcLedger).noquote()
                    << "resumable turns not read:" << query.lastError().text();
                return QList<JournalEntry>();
            }
            return readEntries(query, *connection);
        });
    });
}

QFuture<std::optional<JournalEntry>> TurnJournal::entry(const QString &conversationId,
                                                        const QString &requestId)
{
    return m_worker->run([connection = m_connection, conversationId, requestId] {
        std::optional<JournalEntry> found;
        if (!connection->open)
            return found;
        return onConnection(*connection, [&] {
            QSqlQuery query(QSqlDatabase::database(connection->name, false));
            query.prepare(kSelectColumns
                          + QStringLiteral("WHERE conversation_id = ? AND request_id = ?")
                          + ownerAnd(*connection));
            query.addBindValue(conversationId);
            query.addBindValue(requestId);
            bindOwner(query, *connection);
            std::optional<JournalEntry> read;
            if (!query.exec()) {
                connection->failed = true;
                return read;
            }
            const QList<JournalEntry> entries = readEntries(query, *connection);
            if (!entries.isEmpty())
                read = entries.constFirst();
            return read;
        });
    });
}

QFuture<JournalWrite> TurnJournal::dismiss(const QString &conversationId, const QString &requestId)
{
    return m_worker->run([connection = m_connection, conversationId, requestId] {
        if (!connection->open)
            return JournalWrite{false, QStringLiteral("the journal is not open")};
        return onConnection(*connection, [&] {
            QSqlQuery query(QSqlDatabase::database(connection->name, false));
            query.prepare(
                QStringLiteral("UPDATE turn_checkpoints SET resumable = 0, updated_at = ? "
                               "WHERE conversation_id = ? AND request_id = ?")
                + ownerAnd(*connection));
            query.addBindValue(nowText());
            query.addBindValue(conversationId);
            query.addBindValue(requestId);
            bindOwner(query, *connection);
            if (!query.exec())
                return JournalWrite{false, query.lastError().text()};
            return JournalWrite{true, {}};
        });
    });
}

QFuture<JournalWrite> TurnJournal::mergeCounters(const QString &conversationId,
                                                 const QString &requestId,
                                                 const QJsonObject &counters)
{
    return m_worker->run([connection = m_connection, conversationId, requestId, counters] {
        if (!connection->open)
            return JournalWrite{false, QStringLiteral("the journal is not open")};
        // One database thread runs every statement of this journal, so nothing of this
        // console can come between the read and the write (in a team's journal another desk
        // writes a turn only once it has claimed it).
        return onConnection(*connection, [&] {
            QSqlDatabase db = QSqlDatabase::database(connection->name, false);
            QSqlQuery read(db);
            read.prepare(QStringLiteral("SELECT counters_json FROM turn_checkpoints "
                                        "WHERE conversation_id = ? AND request_id = ?")
                         + ownerAnd(*connection));
            read.addBindValue(conversationId);
            read.addBindValue(requestId);
            bindOwner(read, *connection);
            if (!read.exec())
                return JournalWrite{false, read.lastError().text()};
            if (!read.next())
                return JournalWrite{false, QStringLiteral("no such turn")};
            QJsonObject merged = parsed(read.value(0));
            read.finish();
            for (auto it = counters.constBegin(); it != counters.constEnd(); ++it)
                merged.insert(it.key(), it.value());
            QSqlQuery write(db);
            write.prepare(QStringLiteral("UPDATE turn_checkpoints SET counters_json = ? "
                                         "WHERE conversation_id = ? AND request_id = ?")
                          + ownerAnd(*connection));
            write.addBindValue(compact(merged));
            write.addBindValue(conversationId);
            write.addBindValue(requestId);
            bindOwner(write, *connection);
            if (!write.exec())
                return JournalWrite{false, write.lastError().text()};
            return JournalWrite{true, {}};
        });
    });
}

namespace {

QList<JournalConversation> listConversations(JournalConnection &connection, const QString &sql,
                                             const JournalConversationQuery &request)
{
    QList<JournalConversation> found;
    QSqlQuery query(QSqlDatabase::database(connection.name, false));
    query.setForwardOnly(true);
    query.prepare(sql);
    query.addBindValue(request.owner);
    if (!request.contains.isEmpty()) {
        query.addBindValue(request.owner);
        query.addBindValue(containsPattern(request.contains));
    }
    query.addBindValue(request.limit + 1);
    query.addBindValue(std::max(0, request.offset));
    if (!query.exec()) {
        connection.failed = true;
        qCWarning(lcLedger).noquote() << "conversations not listed:" << query.lastError().text();
        return found;
    }
    while (query.next()) {
        JournalConversation conversation;
        conversation.conversationId = query.value(0).toString();
        conversation.startedAt = QDateTime::fromString(query.value(1).toString(),
                                                       Qt::ISODateWithMs);
        conversation.updatedAt = QDateTime::fromString(query.value(2).toString(),
                                                       Qt::ISODateWithMs);
        conversation.turns = query.value(3).toInt();
        conversation.resumable = query.value(4).toInt() != 0;
        conversation.title = query.value(5).toString();
        conversation.latestOutcome = query.value(6).toString();
        conversation.scenario = query.value(7).toString();
        found.append(conversation);
    }
    return found;
}

} // namespace

QFuture<QList<JournalConversation>> TurnJournal::conversations(
    const JournalConversationQuery &request)
{
    return m_worker->run([connection = m_connection, request] {
        QList<JournalConversation> found;
        if (!connection->open || request.owner.isEmpty() || request.limit <= 0)
            return found;
        // A team's journal lists its own owner's conversations only.
        if (connection->team && request.owner != connection->owner)
            return found;
        const QLatin1String f("f."), l("l."), t("t.");
        // Grouped per conversation; the title is the first turn's, the outcome the latest's.
        QString sql = QStringLiteral(
                          "SELECT t.conversation_id, MIN(t.created_at), MAX(t.updated_at), "
                          "COUNT(*), MAX(t.resumable), "
                          "(SELECT f.title FROM turn_checkpoints f WHERE f.owner = t.owner AND "
                          " f.conversation_id = t.conversation_id ORDER BY f.created_at, %1 "
                          " LIMIT 1), "
                          "(SELECT l.outcome FROM turn_checkpoints l WHERE l.owner = t.owner AND "
                          " l.conversation_id = t.conversation_id "
                          " ORDER BY l.created_at DESC, %2 DESC LIMIT 1), MAX(t.scenario) "
                          "FROM turn_checkpoints t WHERE t.owner = ? ")
                          .arg(insertionOrder(*connection, f), insertionOrder(*connection, l));
        // SQLite's LIKE ignores the case of ASCII letters; PostgreSQL's ILIKE does so too.
        if (!request.contains.isEmpty())
            sql += QStringLiteral("AND t.conversation_id IN (SELECT s.conversation_id FROM "
                                  "turn_checkpoints s WHERE s.owner = ? AND s.search_text "
                                  "%1 ? ESCAPE '\\') ")
                       .arg(connection->team ? QLatin1String("ILIKE") : QLatin1String("LIKE"));
        // Saves within one millisecond tie on the time: the latest inserted turn decides. The
        // owner is one, grouped by so that the title's and outcome's subqueries may name it.
        sql += QStringLiteral("GROUP BY t.conversation_id, t.owner ");
        if (request.withoutScenarios)
            sql += QStringLiteral("HAVING MAX(t.scenario) = '' ");
        sql += QStringLiteral("ORDER BY MAX(t.updated_at) DESC, MAX(%1) DESC LIMIT ? OFFSET ?")
                   .arg(insertionOrder(*connection, t));
        return onConnection(*connection,
                            [&] { return listConversations(*connection, sql, request); });
    });
}

QFuture<QList<JournalEntry>> TurnJournal::turns(const QString &conversationId,
                                                const QString &owner, int limit,
                                                const QStringList &omittedStateKeys)
{
    return m_worker->run([connection = m_connection, conversationId, owner, limit,
                          omittedStateKeys] {
        QList<JournalEntry> entries;
        if (!connection->open || owner.isEmpty() || limit <= 0)
            return entries;
        if (connection->team && owner != connection->owner)
            return entries;
        const QString order = insertionOrder(*connection);
        return onConnection(*connection, [&] {
            QSqlQuery query(QSqlDatabase::database(connection->name, false));
            query.setForwardOnly(true);
            query.prepare(
                QStringLiteral(
                    "SELECT * FROM (SELECT request_id, conversation_id, stage, resumable, "
                    "state_json, counters_json, created_at, updated_at, owner, title, outcome, "
                    "search_text, scenario, segment, %1 AS r FROM turn_checkpoints "
                    "WHERE conversation_id = ? AND owner = ? ORDER BY created_at DESC, %1 DESC "
                    "LIMIT ?) AS latest ORDER BY created_at, r")
                    .arg(order));
            query.addBindValue(conversationId);
            query.addBindValue(owner);
            query.addBindValue(limit);
            if (!query.exec()) {
                connection->failed = true;
                qCWarning(lcLedger).noquote()
                    << "turns of a conversation not read:" << query.lastError().text();
                return QList<JournalEntry>();
            }
            return readEntries(query, *connection, omittedStateKeys);
        });
    });
}

namespace {

JournalWrite removeOnThread(JournalConnection &connection, const QString &conversationId,
                            const QString &owner)
{
    QSqlDatabase db = QSqlDatabase::database(connection.name, false);
    if (!db.transaction())
        return JournalWrite{false, db.lastError().text()};
    const auto fail = [&](const QString &detail) {
        qCWarning(lcLedger).noquote() << "conversation not deleted:" << detail;
        db.rollback();
        return JournalWrite{false, detail};
    };
    // The results first, while their turns still say whose they are.
    QSqlQuery results(db);
    results.prepare(
        QStringLiteral(
            "DELETE FROM turn_tool_results WHERE conversation_id = ?%1 AND request_id IN "
            "(SELECT request_id FROM turn_checkpoints WHERE conversation_id = ? AND owner = ?)")
            .arg(ownerAnd(connection)));
    results.addBindValue(conversationId);
    bindOwner(results, connection);
    results.addBindValue(conversationId);
    results.addBindValue(owner);
    if (!results.exec())
        return fail(results.lastError().text());
    QSqlQuery turns(db);
    turns.prepare(QStringLiteral("DELETE FROM turn_checkpoints "
                                 "WHERE conversation_id = ? AND owner = ?"));
    turns.addBindValue(conversationId);
    turns.addBindValue(owner);
    if (!turns.exec())
        return fail(turns.lastError().text());
    // Their messages, unless another staff member's turns of a conversation of the same
    // name go on from them.
    const QString segments = Internal::removeUnusedSegments(db, conversationId, connection.owner);
    if (!segments.isEmpty())
        return fail(segments);
    if (!db.commit())
        return fail(db.lastError().text());
    return JournalWrite{true, {}};
}

} // namespace

QFuture<JournalWrite> TurnJournal::removeConversation(const QString &conversationId,
                                                      const QString &owner)
{
    return m_worker->run([connection = m_connection, conversationId, owner] {
        if (!connection->open)
            return JournalWrite{false, QStringLiteral("the journal is not open")};
        if (connection->team && owner != connection->owner)
            return JournalWrite{false, QStringLiteral("a conversation of another owner")};
        return onConnection(*connection,
                            [&] { return removeOnThread(*connection, conversationId, owner); });
    });
}

QFuture<QJsonObject> TurnJournal::counterTotals(const QJsonObject &figures,
                                                const QStringList &omitted)
{
    return m_worker->run([connection = m_connection, figures, omitted] {
        QJsonObject totals;
        if (!connection->open)
            return totals;
        // A team's journal: this owner's turns.
        const QHash<QString, qint64> sums = onConnection(*connection, [&] {
            QHash<QString, qint64> added;
            QSqlQuery query(QSqlDatabase::database(connection->name, false));
            query.setForwardOnly(true);
            query.prepare(QStringLiteral("SELECT counters_json FROM turn_checkpoints WHERE 1 = 1")
                          + ownerAnd(*connection));
            bindOwner(query, *connection);
            if (!query.exec()) {
                connection->failed = true;
                return added;
            }
            while (query.next()) {
                const QJsonObject counters = parsed(query.value(0));
                for (auto it = counters.constBegin(); it != counters.constEnd(); ++it)
                    added[it.key()] += it.value().toInteger();
            }
            return added;
        });
        for (auto it = sums.constBegin(); it != sums.constEnd(); ++it)
            totals.insert(it.key(), it.value());
        for (auto it = figures.constBegin(); it != figures.constEnd(); ++it)
            totals.insert(it.key(), it.value());
        for (const QString &name : omitted)
            totals.remove(name);
        return totals;
    });
}

} // namespace AgentConsole
