#include "turnjournal.h"

#include "databaseworker.h"
#include "internal/journalschema.h"
#include "internal/journalsegments.h"
#include "ledgerschema.h"
#include "storagefull.h"
#include "core/telemetry/logging.h"

#include <QAtomicInteger>
#include <QCoreApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QHash>
#include <QJsonDocument>
#include <QSqlError>
#include <QSqlQuery>

#include <algorithm>
#include <optional>

namespace AgentConsole {
namespace Internal {

struct JournalConnection
{
    QString name;
    bool open = false;
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

// A checkpoint that could not be written; one that failed for want of room says so.
JournalWrite failedWrite(const QSqlError &error, const QSqlDatabase &db)
{
    JournalWrite write{false, error.text()};
    write.diskFull = sqliteReportsFullDisk(error) || diskIsFull(db.databaseName());
    return write;
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
void readAppendedResults(const QSqlDatabase &db, JournalEntry *entry)
{
    QSqlQuery query(db);
    query.setForwardOnly(true);
    query.prepare(QStringLiteral("SELECT call_index, record_json FROM turn_tool_results "
                                 "WHERE conversation_id = ? AND request_id = ? "
                                 "ORDER BY call_index"));
    query.addBindValue(entry->conversationId);
    query.addBindValue(entry->requestId);
    if (!query.exec()) {
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
void readConversationInto(const QSqlDatabase &db, int segment, JournalEntry *entry)
{
    // A row saved as it was given (no list of messages to split) reads as it was saved.
    const QLatin1String key("conversation");
    if (entry->state.contains(key) || segment <= 0)
        return;
    const Internal::SegmentRead read = Internal::readConversation(db, entry->conversationId,
                                                                  segment);
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
QList<JournalEntry> readEntries(QSqlQuery &query, const QString &connectionName,
                                const QStringList &omitted = {})
{
    QList<StoredTurn> turns;
    while (query.next())
        turns.append(storedTurnOf(query));
    query.finish();
    const QSqlDatabase db = QSqlDatabase::database(connectionName, false);
    const bool withConversation = !omitted.contains(QLatin1String("conversation"));
    QList<JournalEntry> entries;
    entries.reserve(turns.size());
    for (StoredTurn &turn : turns) {
        JournalEntry &entry = turn.entry;
        if (entry.damage.isEmpty())
            readAppendedResults(db, &entry);
        if (entry.damage.isEmpty() && withConversation)
            readConversationInto(db, turn.segment, &entry);
        for (const QString &key : omitted)
            entry.state.remove(key);
        entries.append(std::move(entry));
    }
    return entries;
}

const QString kSelectColumns = QStringLiteral(
    "SELECT request_id, conversation_id, stage, resumable, state_json, counters_json, "
    "created_at, updated_at, owner, title, outcome, search_text, scenario, segment "
    "FROM turn_checkpoints ");

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

TurnJournal::~TurnJournal()
{
    m_worker->run([connection = m_connection] {
        if (QSqlDatabase::contains(connection->name)) {
            QSqlDatabase::database(connection->name, false).close();
            QSqlDatabase::removeDatabase(connection->name);
        }
        return true;
    });
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

QFuture<JournalOpenResult> TurnJournal::open()
{
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

QFuture<JournalWrite> TurnJournal::save(std::function<JournalEntry()> makeEntry)
{
    return m_worker->run([connection = m_connection, makeEntry = std::move(makeEntry)] {
        if (!connection->open)
            return JournalWrite{false, QStringLiteral("the journal is not open")};
        const JournalEntry entry = makeEntry();
        QSqlDatabase db = QSqlDatabase::database(connection->name, false);
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
        if (conversation.isArray() && turnStart >= 0
            && turnStart <= conversation.toArray().size()) {
            const QJsonArray messages = conversation.toArray();
            QSqlQuery current(db);
            current.prepare(QStringLiteral("SELECT segment FROM turn_checkpoints "
                                           "WHERE conversation_id = ? AND request_id = ?"));
            current.addBindValue(entry.conversationId);
            current.addBindValue(entry.requestId);
            if (!current.exec())
                return fail(current);
            const int currentSegment = current.next() ? current.value(0).toInt() : 0;
            current.finish();
            const Internal::SegmentWrite written = Internal::writeTurnSegment(
                db, entry.conversationId, messages,
                entry.conversationHashes.size() == messages.size()
                    ? entry.conversationHashes
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
        QSqlQuery query(db);
        query.prepare(QStringLiteral(
            "INSERT INTO turn_checkpoints (request_id, conversation_id, stage, resumable, "
            "state_json, counters_json, created_at, updated_at, owner, title, outcome, "
            "search_text, scenario, segment) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT (conversation_id, request_id) DO UPDATE SET stage = excluded.stage, "
            "resumable = excluded.resumable, state_json = excluded.state_json, "
            "counters_json = excluded.counters_json, updated_at = excluded.updated_at, "
            "owner = excluded.owner, title = excluded.title, outcome = excluded.outcome, "
            "search_text = excluded.search_text, scenario = excluded.scenario, "
            "segment = excluded.segment"));
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
        query.addBindValue(entry.owner);
        query.addBindValue(entry.title);
        query.addBindValue(entry.outcome);
        query.addBindValue(entry.searchText);
        // Never a null QString: Qt Sql binds that as NULL.
        query.addBindValue(entry.scenario.isNull() ? QStringLiteral("") : entry.scenario);
        query.addBindValue(segment);
        if (!query.exec())
            return fail(query);
        QSqlQuery folded(db);
        folded.prepare(QStringLiteral("DELETE FROM turn_tool_results "
                                      "WHERE conversation_id = ? AND request_id = ?"));
        folded.addBindValue(entry.conversationId);
        folded.addBindValue(entry.requestId);
        if (!folded.exec())
            return fail(folded);
        if (!db.commit()) {
            const JournalWrite failed = failedWrite(db.lastError(), db);
            qCWarning(lcLedger).noquote() << "checkpoint of" << entry.requestId << entry.stage
                                          << "not committed:" << failed.detail;
            db.rollback();
            return failed;
        }
        const qint64 bytes = stateText.toUtf8().size() + counters.toUtf8().size()
            + conversationBytes;
        connection->saves.fetchAndAddRelaxed(1);
        connection->savedBytes.fetchAndAddRelaxed(bytes);
        if (earlierPartBytes > 0) {
            connection->earlierParts.fetchAndAddRelaxed(1);
            connection->earlierPartBytes.fetchAndAddRelaxed(earlierPartBytes);
        }
        return JournalWrite{true, {}, bytes};
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
        const QJsonObject record = makeRecord();
        QSqlQuery query(QSqlDatabase::database(connection->name, false));
        query.prepare(QStringLiteral(
            "INSERT INTO turn_tool_results (conversation_id, request_id, call_index, "
            "record_json, created_at) VALUES (?, ?, ?, ?, ?) "
            "ON CONFLICT (conversation_id, request_id, call_index) DO UPDATE SET "
            "record_json = excluded.record_json"));
        const QString json = compact(record);
        query.addBindValue(conversationId);
        query.addBindValue(requestId);
        query.addBindValue(callIndex);
        query.addBindValue(json);
        query.addBindValue(nowText());
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
}

QFuture<QList<JournalEntry>> TurnJournal::resumable()
{
    return m_worker->run([connection = m_connection] {
        QList<JournalEntry> entries;
        if (!connection->open)
            return entries;
        QSqlQuery query(QSqlDatabase::database(connection->name, false));
        if (!query.exec(kSelectColumns
                        + QStringLiteral("WHERE resumable = 1 ORDER BY created_at, rowid"))) {
            qCWarning(lcLedger).noquote()
                << "resumable turns not read:" << query.lastError().text();
            return entries;
        }
        return readEntries(query, connection->name);
    });
}

QFuture<std::optional<JournalEntry>> TurnJournal::entry(const QString &conversationId,
                                                        const QString &requestId)
{
    return m_worker->run([connection = m_connection, conversationId, requestId] {
        std::optional<JournalEntry> found;
        if (!connection->open)
            return found;
        QSqlQuery query(QSqlDatabase::database(connection->name, false));
        query.prepare(kSelectColumns
                      + QStringLiteral("WHERE conversation_id = ? AND request_id = ?"));
        query.addBindValue(conversationId);
        query.addBindValue(requestId);
        if (!query.exec())
            return found;
        const QList<JournalEntry> entries = readEntries(query, connection->name);
        if (!entries.isEmpty())
            found = entries.constFirst();
        return found;
    });
}

QFuture<JournalWrite> TurnJournal::dismiss(const QString &conversationId, const QString &requestId)
{
    return m_worker->run([connection = m_connection, conversationId, requestId] {
        if (!connection->open)
            return JournalWrite{false, QStringLiteral("the journal is not open")};
        QSqlQuery query(QSqlDatabase::database(connection->name, false));
        query.prepare(QStringLiteral("UPDATE turn_checkpoints SET resumable = 0, updated_at = ? "
                                     "WHERE conversation_id = ? AND request_id = ?"));
        query.addBindValue(nowText());
        query.addBindValue(conversationId);
        query.addBindValue(requestId);
        if (!query.exec())
            return JournalWrite{false, query.lastError().text()};
        return JournalWrite{true, {}};
    });
}

QFuture<JournalWrite> TurnJournal::mergeCounters(const QString &conversationId,
                                                 const QString &requestId,
                                                 const QJsonObject &counters)
{
    return m_worker->run([connection = m_connection, conversationId, requestId, counters] {
        if (!connection->open)
            return JournalWrite{false, QStringLiteral("the journal is not open")};
        // One database thread runs every statement of this journal, so nothing can come
        // between the read and the write.
        QSqlDatabase db = QSqlDatabase::database(connection->name, false);
        QSqlQuery read(db);
        read.prepare(QStringLiteral("SELECT counters_json FROM turn_checkpoints "
                                    "WHERE conversation_id = ? AND request_id = ?"));
        read.addBindValue(conversationId);
        read.addBindValue(requestId);
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
                                     "WHERE conversation_id = ? AND request_id = ?"));
        write.addBindValue(compact(merged));
        write.addBindValue(conversationId);
        write.addBindValue(requestId);
        if (!write.exec())
            return JournalWrite{false, write.lastError().text()};
        return JournalWrite{true, {}};
    });
}

QFuture<QList<JournalConversation>> TurnJournal::conversations(
    const JournalConversationQuery &request)
{
    return m_worker->run([connection = m_connection, request] {
        QList<JournalConversation> found;
        if (!connection->open || request.owner.isEmpty() || request.limit <= 0)
            return found;
        // Grouped per conversation; the title is the first turn's, the outcome the latest's.
        QString sql = QStringLiteral(
            "SELECT t.conversation_id, MIN(t.created_at), MAX(t.updated_at), COUNT(*), "
            "MAX(t.resumable), "
            "(SELECT f.title FROM turn_checkpoints f WHERE f.owner = t.owner AND "
            " f.conversation_id = t.conversation_id ORDER BY f.created_at, f.rowid LIMIT 1), "
            "(SELECT l.outcome FROM turn_checkpoints l WHERE l.owner = t.owner AND "
            " l.conversation_id = t.conversation_id ORDER BY l.created_at DESC, l.rowid DESC "
            " LIMIT 1), MAX(t.scenario) "
            "FROM turn_checkpoints t WHERE t.owner = ? ");
        if (!request.contains.isEmpty())
            sql += QStringLiteral("AND t.conversation_id IN (SELECT s.conversation_id FROM "
                                  "turn_checkpoints s WHERE s.owner = ? AND s.search_text "
                                  "LIKE ? ESCAPE '\\') ");
        // Saves within one millisecond tie on the time: the latest inserted turn decides.
        sql += QStringLiteral("GROUP BY t.conversation_id ");
        if (request.withoutScenarios)
            sql += QStringLiteral("HAVING MAX(t.scenario) = '' ");
        sql += QStringLiteral("ORDER BY MAX(t.updated_at) DESC, "
                              "MAX(t.rowid) DESC LIMIT ? OFFSET ?");
        QSqlQuery query(QSqlDatabase::database(connection->name, false));
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
            qCWarning(lcLedger).noquote()
                << "conversations not listed:" << query.lastError().text();
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
        QSqlQuery query(QSqlDatabase::database(connection->name, false));
        query.setForwardOnly(true);
        query.prepare(QStringLiteral(
            "SELECT * FROM (SELECT request_id, conversation_id, stage, resumable, state_json, "
            "counters_json, created_at, updated_at, owner, title, outcome, search_text, "
            "scenario, segment, rowid AS r FROM turn_checkpoints WHERE conversation_id = ? "
            "AND owner = ? ORDER BY created_at DESC, rowid DESC LIMIT ?) ORDER BY created_at, r"));
        query.addBindValue(conversationId);
        query.addBindValue(owner);
        query.addBindValue(limit);
        if (!query.exec()) {
            qCWarning(lcLedger).noquote()
                << "turns of a conversation not read:" << query.lastError().text();
            return entries;
        }
        return readEntries(query, connection->name, omittedStateKeys);
    });
}

QFuture<JournalWrite> TurnJournal::removeConversation(const QString &conversationId,
                                                      const QString &owner)
{
    return m_worker->run([connection = m_connection, conversationId, owner] {
        if (!connection->open)
            return JournalWrite{false, QStringLiteral("the journal is not open")};
        QSqlDatabase db = QSqlDatabase::database(connection->name, false);
        if (!db.transaction())
            return JournalWrite{false, db.lastError().text()};
        const auto fail = [&](const QString &detail) {
            qCWarning(lcLedger).noquote() << "conversation not deleted:" << detail;
            db.rollback();
            return JournalWrite{false, detail};
        };
        // The results first, while their turns still say whose they are.
        QSqlQuery results(db);
        results.prepare(QStringLiteral(
            "DELETE FROM turn_tool_results WHERE conversation_id = ? AND request_id IN "
            "(SELECT request_id FROM turn_checkpoints WHERE conversation_id = ? AND owner = ?)"));
        results.addBindValue(conversationId);
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
        const QString segments = Internal::removeUnusedSegments(db, conversationId);
        if (!segments.isEmpty())
            return fail(segments);
        if (!db.commit())
            return fail(db.lastError().text());
        return JournalWrite{true, {}};
    });
}

QFuture<QJsonObject> TurnJournal::counterTotals(const QJsonObject &figures,
                                                const QStringList &omitted)
{
    return m_worker->run([connection = m_connection, figures, omitted] {
        QJsonObject totals;
        if (!connection->open)
            return totals;
        QSqlQuery query(QSqlDatabase::database(connection->name, false));
        query.setForwardOnly(true);
        if (!query.exec(QStringLiteral("SELECT counters_json FROM turn_checkpoints")))
            return totals;
        QHash<QString, qint64> sums;
        while (query.next()) {
            const QJsonObject counters = parsed(query.value(0));
            for (auto it = counters.constBegin(); it != counters.constEnd(); ++it)
                sums[it.key()] += it.value().toInteger();
        }
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
