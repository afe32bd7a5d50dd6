// The turn journal's storage of conversations (schema version 5, issue #43 §1): a checkpoint
// stores what its turn adds and a conversation is read back from its turns' parts, whole and
// the same as it was given; a journal written before (schema version 4, a fixture made by the
// console of that time) is migrated when opened with nothing lost; a newer one is refused and
// left alone. The parts' SQL also runs on PostgreSQL (the postgresql row needs
// AGENT_CONSOLE_TEST_PG and fails without it, as a missing required server must).

#include "core/ledger/internal/journalschema.h"
#include "core/ledger/internal/journalsegments.h"
#include "core/ledger/postgresledger.h"
#include "core/ledger/turnjournal.h"
#include "testdatabases.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QSqlDatabase>
#include <QSqlError>
#include <QSqlQuery>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <map>
#include <optional>

using namespace AgentConsole;

namespace {

const QString kOwner = QStringLiteral("t-1/u-1");

template <typename T> T await(QFuture<T> future)
{
    future.waitForFinished(); // the journal's own database thread; nothing else waits here
    return future.result();
}

QJsonObject message(int role, const QString &content)
{
    return {{QStringLiteral("role"), role}, {QStringLiteral("content"), content}};
}

// What one turn adds to its conversation when it runs its tools: the question, the model's
// call, the tool's result, the answer; each about as long at any turn.
QJsonArray turnMessages(int turn)
{
    const QString order = QStringLiteral("A%1").arg(1000 + turn % 100);
    return {
        message(1, QStringLiteral("Where is order %1?").arg(order)),
        QJsonObject{{QStringLiteral("role"), 2},
                    {QStringLiteral("content"), QString()},
                    {QStringLiteral("toolCalls"),
                     QJsonArray{QJsonObject{
                         {QStringLiteral("id"), QStringLiteral("call-%1").arg(turn % 100)},
                         {QStringLiteral("name"), QStringLiteral("queryLogistics")},
                         {QStringLiteral("arguments"),
                          QStringLiteral("{\"orderId\":\"%1\"}").arg(order)}}}}},
        QJsonObject{
            {QStringLiteral("role"), 3},
            {QStringLiteral("content"),
             QStringLiteral("{\"success\":true,\"message\":\"%1 is in Shanghai\"}").arg(order)},
            {QStringLiteral("toolCallId"), QStringLiteral("call-%1").arg(turn % 100)},
            {QStringLiteral("toolName"), QStringLiteral("queryLogistics")}},
        message(2, QStringLiteral("Order %1 is at the Shanghai hub.").arg(order))};
}

QJsonArray joined(QJsonArray first, const QJsonArray &second)
{
    for (const QJsonValue &value : second)
        first.append(value);
    return first;
}

QJsonArray firstOf(const QJsonArray &messages, qsizetype count)
{
    QJsonArray part;
    for (qsizetype i = 0; i < count && i < messages.size(); ++i)
        part.append(messages.at(i));
    return part;
}

// A checkpoint as the agent loop saves one: the journal reads only "conversation" and
// "turnStart" of its state.
JournalEntry checkpoint(const QString &conversationId, const QString &requestId,
                        const QString &stage, const QJsonArray &conversation, qsizetype turnStart,
                        const QString &owner = kOwner)
{
    JournalEntry entry;
    entry.conversationId = conversationId;
    entry.requestId = requestId;
    entry.stage = stage;
    entry.resumable = stage != QLatin1String("COMPLETED") && stage != QLatin1String("FAILED");
    entry.state = {{QStringLiteral("format"), 1},
                   {QStringLiteral("question"), QStringLiteral("question of %1").arg(requestId)},
                   {QStringLiteral("conversation"), conversation},
                   {QStringLiteral("turnStart"), turnStart}};
    entry.counters = {{QStringLiteral("tool_retry_count"), 0}};
    entry.owner = owner;
    entry.title = entry.state.value(QLatin1String("question")).toString();
    entry.searchText = entry.title;
    entry.outcome = QStringLiteral("answered");
    return entry;
}

// The running hashes as the agent loop keeps them, message by message.
QList<QByteArray> hashesOf(const QJsonArray &messages)
{
    QList<QByteArray> hashes;
    for (const QJsonValue &value : messages)
        hashes.append(journalMessageHash(hashes.isEmpty() ? QByteArray() : hashes.constLast(),
                                         value.toObject()));
    return hashes;
}

QString compact(const QJsonObject &object)
{
    return QString::fromUtf8(QJsonDocument(object).toJson(QJsonDocument::Compact));
}

// Runs `sql` on a connection of the test's own (not the journal's).
QVariant rawValue(const QString &path, const QString &sql)
{
    QVariant value;
    {
        QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"),
                                                    QStringLiteral("raw"));
        db.setDatabaseName(path);
        if (db.open()) {
            QSqlQuery query(db);
            if (query.exec(sql) && query.next())
                value = query.value(0);
        }
        db.close();
    }
    QSqlDatabase::removeDatabase(QStringLiteral("raw"));
    return value;
}

bool rawExec(const QString &path, const QString &sql)
{
    bool ok = false;
    {
        QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"),
                                                    QStringLiteral("raw"));
        db.setDatabaseName(path);
        ok = db.open() && QSqlQuery(db).exec(sql);
        db.close();
    }
    QSqlDatabase::removeDatabase(QStringLiteral("raw"));
    return ok;
}

// Every row of a journal as a reader of schema version 4 saw it, read straight from the file
// (journalEntryFromRow and the appended results, as TurnJournal read them), in the order of
// saving.
struct RawRow
{
    JournalEntry entry;
    qint64 rowid = 0;
    QString stateJson;
};

QList<RawRow> rawRows(const QString &path)
{
    QList<RawRow> rows;
    {
        QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"),
                                                    QStringLiteral("raw"));
        db.setDatabaseName(path);
        if (db.open()) {
            QSqlQuery query(db);
            query.exec(QStringLiteral(
                "SELECT request_id, conversation_id, stage, resumable, state_json, "
                "counters_json, created_at, updated_at, owner, title, outcome, search_text, "
                "scenario, rowid FROM turn_checkpoints ORDER BY created_at, rowid"));
            while (query.next()) {
                JournalRow row;
                row.requestId = query.value(0).toString();
                row.conversationId = query.value(1).toString();
                row.stage = query.value(2).toString();
                row.resumable = query.value(3).toInt();
                row.stateJson = query.value(4).toString();
                row.countersJson = query.value(5).toString();
                row.createdAt = query.value(6).toString();
                row.updatedAt = query.value(7).toString();
                RawRow raw{journalEntryFromRow(row), query.value(13).toLongLong(), row.stateJson};
                raw.entry.owner = query.value(8).toString();
                raw.entry.title = query.value(9).toString();
                raw.entry.outcome = query.value(10).toString();
                raw.entry.searchText = query.value(11).toString();
                raw.entry.scenario = query.value(12).toString();
                rows.append(raw);
            }
            for (RawRow &raw : rows) {
                QSqlQuery results(db);
                results.prepare(
                    QStringLiteral("SELECT call_index, record_json FROM turn_tool_results WHERE "
                                   "conversation_id = ? AND request_id = ? ORDER BY call_index"));
                results.addBindValue(raw.entry.conversationId);
                results.addBindValue(raw.entry.requestId);
                results.exec();
                while (results.next())
                    raw.entry.appendedResults.insert(
                        results.value(0).toInt(),
                        storedJsonObject(results.value(1).toString()).value_or(QJsonObject()));
            }
        }
        db.close();
    }
    QSqlDatabase::removeDatabase(QStringLiteral("raw"));
    return rows;
}

// What differs between two entries; empty when they are the same turn.
QString differences(const JournalEntry &actual, const JournalEntry &expected)
{
    QStringList differ;
    const auto check = [&differ](bool same, const char *what) {
        if (!same)
            differ.append(QLatin1String(what));
    };
    check(actual.requestId == expected.requestId, "requestId");
    check(actual.conversationId == expected.conversationId, "conversationId");
    check(actual.stage == expected.stage, "stage");
    check(actual.resumable == expected.resumable, "resumable");
    check(actual.state == expected.state, "state");
    check(actual.counters == expected.counters, "counters");
    check(actual.appendedResults == expected.appendedResults, "appendedResults");
    check(actual.damage == expected.damage, "damage");
    check(actual.createdAt == expected.createdAt, "createdAt");
    check(actual.updatedAt == expected.updatedAt, "updatedAt");
    check(actual.owner == expected.owner, "owner");
    check(actual.title == expected.title, "title");
    check(actual.outcome == expected.outcome, "outcome");
    check(actual.searchText == expected.searchText, "searchText");
    check(actual.scenario == expected.scenario, "scenario");
    if (differ.isEmpty())
        return {};
    return QStringLiteral("%1/%2 differs in %3")
        .arg(expected.conversationId, expected.requestId, differ.join(QStringLiteral(", ")));
}

} // namespace

class tst_TurnJournal : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void init();
    void cleanup();

    void aCheckpointStoresWhatItsTurnAdds_data();
    void aCheckpointStoresWhatItsTurnAdds();
    void aFailedTurnIsLeftOutOfTheNextOne();
    void aRequestAskedAgainKeepsWhatLaterTurnsRead();
    void aConversationPutTogetherElsewhereIsStoredOnce();
    void deletingAConversationDeletesItsMessages();
    void aMissingPartIsDamageNotAShorterConversation();
    void aRowSavedBySchemaFourReadsAsItWas();
    void turnsLeaveTheConversationOutWhenAsked();
    void aSchemaFourJournalIsMigratedWithNothingLost();
    void aLongConversationOfSchemaFourShrinksToWhatItsTurnsAdded();
    void aMigrationThatFailsLeavesTheFileAsItWas();
    void aNewerJournalIsRefusedAndLeftAlone();
    void thePartsSqlRunsOnBothDatabases_data();
    void thePartsSqlRunsOnBothDatabases();

private:
    // The fixture journal (tests/core/ledger/data/README.md) copied where it may be changed.
    QString copyOfFixture();
    std::unique_ptr<TurnJournal> openJournal(const QString &path);

    std::unique_ptr<QTemporaryDir> m_dir;
    QString m_path;
    std::unique_ptr<TurnJournal> m_journal;
    Testing::TestDatabases m_databases{QStringLiteral("journal_test")};
};

void tst_TurnJournal::init()
{
    m_dir = std::make_unique<QTemporaryDir>();
    QVERIFY(m_dir->isValid());
    m_path = m_dir->filePath(QStringLiteral("turns.sqlite"));
    m_journal = openJournal(m_path);
    QVERIFY(m_journal);
}

void tst_TurnJournal::cleanup()
{
    m_journal.reset();
    m_dir.reset();
    m_databases.dropAll();
}

std::unique_ptr<TurnJournal> tst_TurnJournal::openJournal(const QString &path)
{
    auto journal = std::make_unique<TurnJournal>(path);
    const JournalOpenResult opened = await(journal->open());
    if (!opened.ok) {
        qWarning().noquote() << opened.message << opened.detail;
        return nullptr;
    }
    return journal;
}

QString tst_TurnJournal::copyOfFixture()
{
    const QString copy = m_dir->filePath(QStringLiteral("fixture-turns.sqlite"));
    QFile::remove(copy);
    if (!QFile::copy(QStringLiteral(JOURNAL_FIXTURE), copy))
        return {};
    QFile::setPermissions(copy, QFile::ReadOwner | QFile::WriteOwner);
    return copy;
}

void tst_TurnJournal::aCheckpointStoresWhatItsTurnAdds_data()
{
    QTest::addColumn<bool>("withHashes");
    QTest::newRow("hashes kept by the saver") << true; // as the agent loop saves
    QTest::newRow("hashes made by the journal") << false;
}

// Issue #43 §1: every checkpoint stored the whole conversation again, so a journal grew with
// its square. A turn's checkpoints now cost the same at turn 120 as at turn 10, and each turn
// reads back whole.
void tst_TurnJournal::aCheckpointStoresWhatItsTurnAdds()
{
    QFETCH(bool, withHashes);
    constexpr int kTurns = 120;
    QJsonArray conversation;
    QList<QJsonArray> expected; // each turn's whole conversation after it
    QList<qint64> bytes; // what each turn's last checkpoint stored
    for (int turn = 1; turn <= kTurns; ++turn) {
        const QString requestId = QStringLiteral("r-%1").arg(turn);
        const qsizetype turnStart = conversation.size();
        const QJsonArray own = turnMessages(turn);
        JournalWrite write;
        // RECEIVED, PLANNED, TOOLS_EXECUTED, COMPLETED: the turn's part grows.
        const QList<std::pair<const char *, int>> stages{
            {"RECEIVED", 1}, {"PLANNED", 2}, {"TOOLS_EXECUTED", 3}, {"COMPLETED", 4}};
        for (const auto &[stage, count] : stages) {
            const QJsonArray now = joined(conversation, firstOf(own, count));
            JournalEntry entry = checkpoint(QStringLiteral("c-long"), requestId,
                                            QLatin1String(stage), now, turnStart);
            if (withHashes)
                entry.conversationHashes = hashesOf(now);
            write = await(m_journal->save(entry));
            QVERIFY2(write.ok, qPrintable(write.detail));
        }
        conversation = joined(conversation, own);
        expected.append(conversation);
        bytes.append(write.bytes);
    }
    // The bytes of the last turn's checkpoint are turn 10's (the turn numbers' digits aside).
    QVERIFY2(bytes.at(kTurns - 1) <= bytes.at(9) + 32,
             qPrintable(QStringLiteral("turn 10: %1 bytes, turn %2: %3 bytes")
                            .arg(bytes.at(9))
                            .arg(kTurns)
                            .arg(bytes.at(kTurns - 1))));
    QCOMPARE(m_journal->activity().earlierParts, qint64(0));
    // One part per turn: a turn's checkpoints rewrite its own.
    QCOMPARE(
        rawValue(m_path, QStringLiteral("SELECT COUNT(*) FROM conversation_segments")).toInt(),
        kTurns);
    for (int turn = 1; turn <= kTurns; ++turn) {
        const auto entry = await(
            m_journal->entry(QStringLiteral("c-long"), QStringLiteral("r-%1").arg(turn)));
        QVERIFY(entry);
        QVERIFY2(entry->damage.isEmpty(), qPrintable(entry->damage));
        QCOMPARE(entry->state.value(QLatin1String("conversation")).toArray(),
                 expected.at(turn - 1));
        QCOMPARE(entry->state.value(QLatin1String("turnStart")).toInteger(), qint64(turn - 1) * 4);
    }
}

// A turn that failed is left out of what the model sees next: the next turn goes on from the
// turn before it. Each reads back as it was saved.
void tst_TurnJournal::aFailedTurnIsLeftOutOfTheNextOne()
{
    const QJsonArray first = turnMessages(1);
    QVERIFY(await(m_journal->save(checkpoint(QStringLiteral("c-1"), QStringLiteral("r-1"),
                                             QStringLiteral("COMPLETED"), first, 0)))
                .ok);
    const QJsonArray failed = joined(first, firstOf(turnMessages(2), 3));
    QVERIFY(await(m_journal->save(checkpoint(QStringLiteral("c-1"), QStringLiteral("r-2"),
                                             QStringLiteral("FAILED"), failed, 4)))
                .ok);
    const QJsonArray third = joined(first, turnMessages(3));
    QVERIFY(await(m_journal->save(checkpoint(QStringLiteral("c-1"), QStringLiteral("r-3"),
                                             QStringLiteral("COMPLETED"), third, 4)))
                .ok);
    QCOMPARE(m_journal->activity().earlierParts, qint64(0));
    const QList<JournalEntry> turns = await(m_journal->turns(QStringLiteral("c-1"), kOwner, 10));
    QCOMPARE(turns.size(), 3);
    QCOMPARE(turns.at(0).state.value(QLatin1String("conversation")).toArray(), first);
    QCOMPARE(turns.at(1).state.value(QLatin1String("conversation")).toArray(), failed);
    QCOMPARE(turns.at(2).state.value(QLatin1String("conversation")).toArray(), third);
}

// A request asked again under its id (agent-cli --request-id, the soak's replays) replaces its
// row, as it always did; what later turns read of the earlier run stays theirs.
void tst_TurnJournal::aRequestAskedAgainKeepsWhatLaterTurnsRead()
{
    const QString c = QStringLiteral("c-replay");
    const QJsonArray first = turnMessages(1);
    QVERIFY(await(m_journal->save(
                      checkpoint(c, QStringLiteral("r-1"), QStringLiteral("COMPLETED"), first, 0)))
                .ok);
    const QJsonArray second = joined(first, turnMessages(2));
    QVERIFY(await(m_journal->save(checkpoint(c, QStringLiteral("r-2"), QStringLiteral("COMPLETED"),
                                             second, 4)))
                .ok);
    // r-2 again, in the conversation that already holds its first run.
    const QJsonArray again = joined(second, turnMessages(22));
    for (const int count : {1, 4}) {
        QVERIFY(
            await(m_journal->save(checkpoint(c, QStringLiteral("r-2"), QStringLiteral("COMPLETED"),
                                             joined(second, firstOf(turnMessages(22), count)), 8)))
                .ok);
    }
    const QJsonArray third = joined(again, turnMessages(3));
    QVERIFY(await(m_journal->save(checkpoint(c, QStringLiteral("r-3"), QStringLiteral("COMPLETED"),
                                             third, 12)))
                .ok);
    // And r-3 again from the conversation before it (its first run failed and was left out).
    const QJsonArray thirdAgain = joined(again, turnMessages(33));
    QVERIFY(await(m_journal->save(checkpoint(c, QStringLiteral("r-3"), QStringLiteral("COMPLETED"),
                                             thirdAgain, 12)))
                .ok);
    const QJsonArray fourth = joined(thirdAgain, turnMessages(4));
    QVERIFY(await(m_journal->save(checkpoint(c, QStringLiteral("r-4"), QStringLiteral("COMPLETED"),
                                             fourth, 16)))
                .ok);
    QCOMPARE(m_journal->activity().earlierParts, qint64(0));
    const auto conversationOf = [&](const char *requestId) {
        const auto entry = await(m_journal->entry(c, QLatin1String(requestId)));
        return entry ? entry->state.value(QLatin1String("conversation")).toArray() : QJsonArray();
    };
    QCOMPARE(conversationOf("r-1"), first);
    QCOMPARE(conversationOf("r-2"), again);
    QCOMPARE(conversationOf("r-3"), thirdAgain);
    QCOMPARE(conversationOf("r-4"), fourth);
    // r-3's first run, which nothing goes on from, is gone; r-2's first run is r-2's second's
    // beginning: 1, 2 (first run), 2 (again), 3 (second run), 4.
    QCOMPARE(
        rawValue(m_path, QStringLiteral("SELECT COUNT(*) FROM conversation_segments")).toInt(), 5);
}

// A conversation that no stored turn ends with (put together elsewhere, or whose last turn's
// final checkpoint was never saved) has that earlier part stored once; the turns after go on
// from it.
void tst_TurnJournal::aConversationPutTogetherElsewhereIsStoredOnce()
{
    const QJsonArray earlier = joined(turnMessages(1), turnMessages(2));
    const QJsonArray first = joined(earlier, turnMessages(3));
    QVERIFY(await(m_journal->save(checkpoint(QStringLiteral("c-1"), QStringLiteral("r-3"),
                                             QStringLiteral("COMPLETED"), first, 8)))
                .ok);
    QCOMPARE(m_journal->activity().earlierParts, qint64(1));
    const qint64 earlierBytes = m_journal->activity().earlierPartBytes;
    QVERIFY(earlierBytes > 0);
    const QJsonArray second = joined(first, turnMessages(4));
    QVERIFY(await(m_journal->save(checkpoint(QStringLiteral("c-1"), QStringLiteral("r-4"),
                                             QStringLiteral("COMPLETED"), second, 12)))
                .ok);
    // From the middle: what the earlier part ends with.
    const QJsonArray branch = joined(earlier, turnMessages(5));
    QVERIFY(await(m_journal->save(checkpoint(QStringLiteral("c-1"), QStringLiteral("r-5"),
                                             QStringLiteral("COMPLETED"), branch, 8)))
                .ok);
    QCOMPARE(m_journal->activity().earlierParts, qint64(1));
    QCOMPARE(m_journal->activity().earlierPartBytes, earlierBytes);
    const QList<JournalEntry> turns = await(m_journal->turns(QStringLiteral("c-1"), kOwner, 10));
    QCOMPARE(turns.size(), 3);
    QCOMPARE(turns.at(0).state.value(QLatin1String("conversation")).toArray(), first);
    QCOMPARE(turns.at(1).state.value(QLatin1String("conversation")).toArray(), second);
    QCOMPARE(turns.at(2).state.value(QLatin1String("conversation")).toArray(), branch);
}

// Deleting a conversation deletes its messages, but not those another staff member's turns of
// a conversation of the same name go on from.
void tst_TurnJournal::deletingAConversationDeletesItsMessages()
{
    const QString c = QStringLiteral("c-shared-name");
    const QString other = QStringLiteral("t-1/u-2");
    const QJsonArray first = turnMessages(1);
    const QJsonArray second = joined(first, turnMessages(2));
    QVERIFY(await(m_journal->save(
                      checkpoint(c, QStringLiteral("r-1"), QStringLiteral("COMPLETED"), first, 0)))
                .ok);
    QVERIFY(await(m_journal->save(checkpoint(c, QStringLiteral("r-2"), QStringLiteral("COMPLETED"),
                                             second, 4)))
                .ok);
    // Another staff member, the same messages so far: their turn goes on from r-1's part.
    const QJsonArray theirs = joined(first, turnMessages(9));
    QVERIFY(await(m_journal->save(checkpoint(c, QStringLiteral("r-9"), QStringLiteral("COMPLETED"),
                                             theirs, 4, other)))
                .ok);
    QVERIFY(await(m_journal->removeConversation(c, kOwner)).ok);
    QVERIFY(await(m_journal->turns(c, kOwner, 10)).isEmpty());
    const QList<JournalEntry> kept = await(m_journal->turns(c, other, 10));
    QCOMPARE(kept.size(), 1);
    QVERIFY2(kept.first().damage.isEmpty(), qPrintable(kept.first().damage));
    QCOMPARE(kept.first().state.value(QLatin1String("conversation")).toArray(), theirs);
    QCOMPARE(
        rawValue(m_path, QStringLiteral("SELECT COUNT(*) FROM conversation_segments")).toInt(),
        2); // r-1's and r-9's; r-2's went
    QVERIFY(await(m_journal->removeConversation(c, other)).ok);
    QCOMPARE(
        rawValue(m_path, QStringLiteral("SELECT COUNT(*) FROM conversation_segments")).toInt(), 0);
}

// An earlier part gone from the file (edited, damaged) makes the turn damaged: never read as a
// shorter conversation, and so never resumed with what the model did not see.
void tst_TurnJournal::aMissingPartIsDamageNotAShorterConversation()
{
    const QJsonArray first = turnMessages(1);
    QVERIFY(await(m_journal->save(checkpoint(QStringLiteral("c-1"), QStringLiteral("r-1"),
                                             QStringLiteral("COMPLETED"), first, 0)))
                .ok);
    QVERIFY(await(m_journal->save(checkpoint(QStringLiteral("c-1"), QStringLiteral("r-2"),
                                             QStringLiteral("PLANNED"),
                                             joined(first, firstOf(turnMessages(2), 2)), 4)))
                .ok);
    QVERIFY(rawExec(m_path,
                    QStringLiteral("DELETE FROM conversation_segments "
                                   "WHERE segment = 1")));
    const QList<JournalEntry> offered = await(m_journal->resumable());
    QCOMPARE(offered.size(), 1);
    QVERIFY2(offered.first().damage.contains(QLatin1String("not stored whole")),
             qPrintable(offered.first().damage));
    // A part whose text is not a list of its messages.
    QVERIFY(rawExec(m_path,
                    QStringLiteral("UPDATE conversation_segments SET messages_json = "
                                   "'[{' WHERE segment = 2")));
    const auto damaged = await(m_journal->entry(QStringLiteral("c-1"), QStringLiteral("r-2")));
    QVERIFY(damaged && !damaged->damage.isEmpty());
}

// A row saved the old way (its whole conversation in its state), by a console of schema 4 that
// still runs on the file, reads as it was; a turn going on from it stores that part once.
void tst_TurnJournal::aRowSavedBySchemaFourReadsAsItWas()
{
    const QJsonArray conversation = joined(turnMessages(1), turnMessages(2));
    const JournalEntry old = checkpoint(QStringLiteral("c-old"), QStringLiteral("r-2"),
                                        QStringLiteral("COMPLETED"), conversation, 4);
    QVERIFY(rawExec(m_path,
                    QStringLiteral("INSERT INTO turn_checkpoints (request_id, conversation_id, "
                                   "stage, resumable, state_json, counters_json, created_at, "
                                   "updated_at, owner, title, outcome) VALUES ('r-2', 'c-old', "
                                   "'COMPLETED', 0, '%1', '{}', '2026-01-01T00:00:00.000Z', "
                                   "'2026-01-01T00:00:00.000Z', '%2', 't', 'answered')")
                        .arg(compact(old.state), kOwner)));
    auto entry = await(m_journal->entry(QStringLiteral("c-old"), QStringLiteral("r-2")));
    QVERIFY(entry);
    QVERIFY2(entry->damage.isEmpty(), qPrintable(entry->damage));
    QCOMPARE(entry->state, old.state);
    const QJsonArray next = joined(conversation, turnMessages(3));
    QVERIFY(await(m_journal->save(checkpoint(QStringLiteral("c-old"), QStringLiteral("r-3"),
                                             QStringLiteral("COMPLETED"), next, 8)))
                .ok);
    QCOMPARE(m_journal->activity().earlierParts, qint64(1));
    entry = await(m_journal->entry(QStringLiteral("c-old"), QStringLiteral("r-3")));
    QCOMPARE(entry->state.value(QLatin1String("conversation")).toArray(), next);
}

// A reader that does not need each turn's conversation (the history's list of a conversation's
// turns) does not read it.
void tst_TurnJournal::turnsLeaveTheConversationOutWhenAsked()
{
    const QJsonArray first = turnMessages(1);
    const JournalEntry saved = checkpoint(QStringLiteral("c-1"), QStringLiteral("r-1"),
                                          QStringLiteral("COMPLETED"), first, 0);
    QVERIFY(await(m_journal->save(saved)).ok);
    const QList<JournalEntry> without = await(
        m_journal->turns(QStringLiteral("c-1"), kOwner, 10, {QStringLiteral("conversation")}));
    QCOMPARE(without.size(), 1);
    QJsonObject expected = saved.state;
    expected.remove(QLatin1String("conversation"));
    QCOMPARE(without.first().state, expected);
    const QList<JournalEntry> with = await(m_journal->turns(QStringLiteral("c-1"), kOwner, 10));
    QCOMPARE(with.first().state, saved.state);
}

// The console of schema version 4 (each row holding its whole conversation) wrote the fixture
// (tests/core/ledger/data/README.md): opened now, it is migrated, and every turn, every
// conversation the history lists and every interrupted turn reads back as that console read
// it; a conversation of it then goes on without its earlier part stored again.
void tst_TurnJournal::aSchemaFourJournalIsMigratedWithNothingLost()
{
    const QString path = copyOfFixture();
    QVERIFY(!path.isEmpty());
    QCOMPARE(rawValue(path, QStringLiteral("PRAGMA user_version")).toInt(), 4);
    const QList<RawRow> before = rawRows(path);
    QVERIFY(before.size() >= 15);

    const auto journal = openJournal(path);
    QVERIFY(journal);
    QCOMPARE(rawValue(path, QStringLiteral("PRAGMA user_version")).toInt(), 5);
    // Every row was split: none holds its conversation in its state any more.
    QCOMPARE(rawValue(path,
                      QStringLiteral("SELECT COUNT(*) FROM turn_checkpoints WHERE "
                                     "segment = 0 OR state_json LIKE '%\"conversation\"%'"))
                 .toInt(),
             0);

    // Every turn.
    for (const RawRow &raw : before) {
        const auto entry = await(journal->entry(raw.entry.conversationId, raw.entry.requestId));
        QVERIFY(entry);
        const QString differ = differences(*entry, raw.entry);
        QVERIFY2(differ.isEmpty(), qPrintable(differ));
    }
    // Every interrupted turn, in the order they are offered.
    QList<JournalEntry> interrupted;
    for (const RawRow &raw : before) {
        if (raw.entry.resumable)
            interrupted.append(raw.entry);
    }
    QCOMPARE(interrupted.size(), 2);
    const QList<JournalEntry> offered = await(journal->resumable());
    QCOMPARE(offered.size(), interrupted.size());
    for (qsizetype i = 0; i < offered.size(); ++i) {
        const QString differ = differences(offered.at(i), interrupted.at(i));
        QVERIFY2(differ.isEmpty(), qPrintable(differ));
    }
    QCOMPARE(offered.at(1).appendedResults.size(), qsizetype(1)); // killed in its round

    // Every conversation: its turns in order, and its line in the history's list.
    QStringList owners;
    for (const RawRow &raw : before) {
        if (!owners.contains(raw.entry.owner))
            owners.append(raw.entry.owner);
    }
    QCOMPARE(owners.size(), 2);
    for (const QString &owner : std::as_const(owners)) {
        std::map<QString, QList<JournalEntry>> byConversation;
        for (const RawRow &raw : before) {
            if (raw.entry.owner == owner)
                byConversation[raw.entry.conversationId].append(raw.entry);
        }
        JournalConversationQuery query;
        query.owner = owner;
        const QList<JournalConversation> listed = await(journal->conversations(query));
        QCOMPARE(listed.size(), qsizetype(byConversation.size()));
        QDateTime previous;
        for (const JournalConversation &conversation : listed) {
            const QList<JournalEntry> &expected = byConversation[conversation.conversationId];
            QVERIFY(!expected.isEmpty());
            QCOMPARE(qsizetype(conversation.turns), expected.size());
            QCOMPARE(conversation.title, expected.constFirst().title);
            QCOMPARE(conversation.latestOutcome, expected.constLast().outcome);
            QCOMPARE(conversation.scenario, expected.constLast().scenario);
            QCOMPARE(conversation.startedAt, expected.constFirst().createdAt);
            QCOMPARE(conversation.resumable,
                     std::any_of(expected.begin(), expected.end(),
                                 [](const JournalEntry &e) { return e.resumable; }));
            QDateTime updated;
            for (const JournalEntry &e : expected)
                updated = std::max(updated, e.updatedAt);
            QCOMPARE(conversation.updatedAt, updated);
            QVERIFY(!previous.isValid() || updated <= previous); // newest first
            previous = updated;
            const QList<JournalEntry> turns = await(
                journal->turns(conversation.conversationId, owner, 1000));
            QCOMPARE(turns.size(), expected.size());
            for (qsizetype i = 0; i < turns.size(); ++i) {
                const QString differ = differences(turns.at(i), expected.at(i));
                QVERIFY2(differ.isEmpty(), qPrintable(differ));
            }
        }
    }

    // A conversation of it goes on: the next turn's earlier part is found, not stored again.
    const auto latest = std::find_if(before.rbegin(), before.rend(), [](const RawRow &raw) {
        return raw.entry.conversationId == QLatin1String("c-fixture-1")
            && raw.entry.stage == QLatin1String("COMPLETED");
    });
    QVERIFY(latest != before.rend());
    const QJsonArray conversation = latest->entry.state.value(QLatin1String("conversation"))
                                        .toArray();
    QVERIFY(conversation.size() > 10);
    const QJsonArray next = joined(conversation, turnMessages(7));
    QVERIFY(await(journal->save(checkpoint(QStringLiteral("c-fixture-1"), QStringLiteral("r-next"),
                                           QStringLiteral("COMPLETED"), next, conversation.size(),
                                           latest->entry.owner)))
                .ok);
    QCOMPARE(journal->activity().earlierParts, qint64(0));
    const auto continued = await(
        journal->entry(QStringLiteral("c-fixture-1"), QStringLiteral("r-next")));
    QCOMPARE(continued->state.value(QLatin1String("conversation")).toArray(), next);
}

// A journal of schema version 4 held a long conversation's messages again in every turn's row:
// migrated, it keeps them once (and gives the room back), and every turn reads the same.
void tst_TurnJournal::aLongConversationOfSchemaFourShrinksToWhatItsTurnsAdded()
{
    constexpr int kTurns = 150;
    const QString path = m_dir->filePath(QStringLiteral("long-v4.sqlite"));
    QList<JournalEntry> saved;
    {
        QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"),
                                                    QStringLiteral("v4"));
        db.setDatabaseName(path);
        QVERIFY(db.open());
        QSqlQuery query(db);
        QVERIFY(query.exec(QStringLiteral("BEGIN")));
        for (const Internal::SchemaMigration &migration : Internal::journalMigrations()) {
            if (migration.version > 4)
                break;
            for (const QString &sql : migration.statements)
                QVERIFY2(query.exec(sql), qPrintable(query.lastError().text()));
        }
        QVERIFY(query.exec(QStringLiteral("PRAGMA user_version = 4")));
        QJsonArray conversation;
        for (int turn = 1; turn <= kTurns; ++turn) {
            const qsizetype turnStart = conversation.size();
            conversation = joined(conversation, turnMessages(turn));
            JournalEntry entry = checkpoint(QStringLiteral("c-long"),
                                            QStringLiteral("r-%1").arg(turn, 3, 10,
                                                                       QLatin1Char('0')),
                                            QStringLiteral("COMPLETED"), conversation, turnStart);
            entry.createdAt = QDateTime(QDate(2026, 1, 1), QTime(9, 0), Qt::UTC).addSecs(turn);
            entry.updatedAt = entry.createdAt;
            query.prepare(QStringLiteral(
                "INSERT INTO turn_checkpoints (request_id, conversation_id, stage, resumable, "
                "state_json, counters_json, created_at, updated_at, owner, title, outcome) "
                "VALUES (?, ?, ?, 0, ?, ?, ?, ?, ?, ?, ?)"));
            for (const QVariant &value :
                 QVariantList{entry.requestId, entry.conversationId, entry.stage,
                              compact(entry.state), compact(entry.counters),
                              entry.createdAt.toString(Qt::ISODateWithMs),
                              entry.updatedAt.toString(Qt::ISODateWithMs), entry.owner,
                              entry.title, entry.outcome})
                query.addBindValue(value);
            QVERIFY2(query.exec(), qPrintable(query.lastError().text()));
            saved.append(entry);
        }
        QVERIFY(query.exec(QStringLiteral("COMMIT")));
        db.close();
    }
    QSqlDatabase::removeDatabase(QStringLiteral("v4"));
    const auto usedBytes = [&path] {
        return rawValue(path,
                        QStringLiteral("SELECT (page_count - freelist_count) * page_size "
                                       "FROM pragma_page_count, pragma_freelist_count, "
                                       "pragma_page_size"))
            .toLongLong();
    };
    const qint64 before = usedBytes();

    const auto journal = openJournal(path);
    QVERIFY(journal);
    const qint64 after = usedBytes();
    // 150 turns of 4 messages: the rows held 4 + 8 + ... + 600 messages, 45,300; now 600.
    QVERIFY2(after * 20 < before,
             qPrintable(QStringLiteral("%1 -> %2 bytes in use").arg(before).arg(after)));
    QCOMPARE(rawValue(path, QStringLiteral("PRAGMA freelist_count")).toInt(), 0); // compacted
    const QList<JournalEntry> turns = await(
        journal->turns(QStringLiteral("c-long"), kOwner, kTurns));
    QCOMPARE(turns.size(), qsizetype(kTurns));
    for (int i = 0; i < kTurns; ++i) {
        QCOMPARE(turns.at(i).requestId, saved.at(i).requestId);
        QCOMPARE(turns.at(i).state, saved.at(i).state);
    }
}

// A migration is one transaction: one that fails half-way leaves the file as it was, still
// readable by the console that wrote it.
void tst_TurnJournal::aMigrationThatFailsLeavesTheFileAsItWas()
{
    const QString path = copyOfFixture();
    QVERIFY(!path.isEmpty());
    // A table of that name already there: the migration's first statement fails.
    QVERIFY(rawExec(path, QStringLiteral("CREATE TABLE conversation_segments (x TEXT)")));
    const QList<RawRow> before = rawRows(path);
    TurnJournal journal(path);
    const JournalOpenResult opened = await(journal.open());
    QVERIFY(!opened.ok);
    QVERIFY2(opened.message.contains(QLatin1String("cannot open the turn journal")),
             qPrintable(opened.message));
    QCOMPARE(rawValue(path, QStringLiteral("PRAGMA user_version")).toInt(), 4);
    QVERIFY(!rawValue(path,
                      QStringLiteral("SELECT 1 FROM pragma_table_info('turn_checkpoints') "
                                     "WHERE name = 'segment'"))
                 .isValid());
    const QList<RawRow> after = rawRows(path);
    QCOMPARE(after.size(), before.size());
    for (qsizetype i = 0; i < after.size(); ++i) {
        QCOMPARE(after.at(i).rowid, before.at(i).rowid);
        QCOMPARE(after.at(i).stateJson, before.at(i).stateJson);
    }
}

// A journal of a newer console is refused, saying so, and not touched.
void tst_TurnJournal::aNewerJournalIsRefusedAndLeftAlone()
{
    QVERIFY(await(m_journal->save(checkpoint(QStringLiteral("c-1"), QStringLiteral("r-1"),
                                             QStringLiteral("COMPLETED"), turnMessages(1), 0)))
                .ok);
    m_journal.reset();
    QVERIFY(rawExec(m_path, QStringLiteral("PRAGMA user_version = 6")));
    const QString stateBefore
        = rawValue(m_path, QStringLiteral("SELECT state_json FROM turn_checkpoints")).toString();
    TurnJournal journal(m_path);
    const JournalOpenResult opened = await(journal.open());
    QVERIFY(!opened.ok);
    QVERIFY2(opened.message.contains(QLatin1String("schema version 6, newer than"))
                 && opened.message.contains(QLatin1String("knows (5)"))
                 && opened.message.contains(QLatin1String("update the console")),
             qPrintable(opened.message));
    QVERIFY(!opened.message.contains(QLatin1String("move it aside"))); // not damage
    QCOMPARE(rawValue(m_path, QStringLiteral("PRAGMA user_version")).toInt(), 6);
    QCOMPARE(
        rawValue(m_path, QStringLiteral("SELECT state_json FROM turn_checkpoints")).toString(),
        stateBefore);
    QVERIFY(!await(journal.save(checkpoint(QStringLiteral("c-1"), QStringLiteral("r-2"),
                                           QStringLiteral("COMPLETED"), turnMessages(2), 0)))
                 .ok);
}

void tst_TurnJournal::thePartsSqlRunsOnBothDatabases_data()
{
    QTest::addColumn<QString>("backend");
    QTest::newRow("sqlite") << QStringLiteral("sqlite");
    QTest::newRow("postgresql") << QStringLiteral("postgresql");
}

// The statements that keep a conversation's parts run on a desk's SQLite file (every owner's
// parts together) and on a team's PostgreSQL journal (each owner's apart, issue #43 §2): the
// schema, a turn's parts written, rewritten, found and read back, and deleted.
void tst_TurnJournal::thePartsSqlRunsOnBothDatabases()
{
    QFETCH(QString, backend);
    const QString name = QStringLiteral("parts-") + backend;
    const bool team = backend == QLatin1String("postgresql");
    const QString owner = team ? kOwner : QString();
    QSqlDatabase db;
    if (backend == QLatin1String("sqlite")) {
        db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), name);
        db.setDatabaseName(m_dir->filePath(QStringLiteral("parts.sqlite")));
    } else {
        QString error;
        const QString url = m_databases.create(&error);
        if (url.isEmpty())
            QFAIL(qPrintable(error));
        const std::optional<PostgresLocation> location = PostgresLocation::fromUrl(url, &error);
        QVERIFY2(location, qPrintable(error));
        db = QSqlDatabase::addDatabase(QStringLiteral("QPSQL"), name);
        db.setHostName(location->host);
        db.setPort(location->port);
        db.setUserName(location->userName);
        db.setPassword(location->password);
        db.setDatabaseName(location->database);
    }
    const auto closeAtEnd = qScopeGuard([&db, name] {
        db.close();
        db = QSqlDatabase();
        QSqlDatabase::removeDatabase(name);
    });
    QVERIFY2(db.open(), qPrintable(db.lastError().text()));
    // The tables (the team's row-level security needs the version table of a real start).
    for (const Internal::SchemaMigration &migration :
         team ? Internal::teamJournalMigrations().mid(0, 1) : Internal::journalMigrations()) {
        for (const QString &sql : migration.statements) {
            QSqlQuery query(db);
            QVERIFY2(query.exec(sql),
                     qPrintable(sql + QStringLiteral(": ") + query.lastError().text()));
        }
    }
    const QString c = QStringLiteral("c-1");
    const auto write = [&](const QJsonArray &messages, qsizetype turnStart, int current) {
        return Internal::writeTurnSegment(db, c, owner, messages,
                                          Internal::runningHashes(messages), turnStart, current);
    };
    const auto row = [&](const QString &requestId, int segment) {
        QSqlQuery query(db);
        query.prepare(
            QStringLiteral("INSERT INTO turn_checkpoints (conversation_id, request_id, stage, "
                           "resumable, state_json, counters_json, created_at, updated_at, "
                           "segment, owner) VALUES "
                           "(?, ?, 'COMPLETED', 0, '{}', '{}', '2026', '2026', ?, ?) ON CONFLICT "
                           "(%1conversation_id, request_id) DO UPDATE SET segment = "
                           "excluded.segment")
                .arg(team ? QStringLiteral("owner, ") : QString()));
        query.addBindValue(c);
        query.addBindValue(requestId);
        query.addBindValue(segment);
        query.addBindValue(kOwner);
        if (!query.exec())
            qWarning().noquote() << query.lastError().text();
        return !query.lastError().isValid();
    };
    // Turn 1 in two checkpoints (its part rewritten), turn 2 after it, turn 3 after turn 1.
    const QJsonArray first = turnMessages(1);
    Internal::SegmentWrite one = write(firstOf(first, 2), 0, 0);
    QVERIFY2(!one.error.isValid(), qPrintable(one.error.text()));
    one = write(first, 0, one.segment);
    QVERIFY2(!one.error.isValid(), qPrintable(one.error.text()));
    QCOMPARE(one.segment, 1);
    QVERIFY(row(QStringLiteral("r-1"), one.segment));
    const QJsonArray second = joined(first, turnMessages(2));
    const Internal::SegmentWrite two = write(second, 4, 0);
    QVERIFY2(!two.error.isValid(), qPrintable(two.error.text()));
    QCOMPARE(two.earlierPartBytes, qint64(0));
    QVERIFY(row(QStringLiteral("r-2"), two.segment));
    const QJsonArray third = joined(first, turnMessages(3));
    const Internal::SegmentWrite three = write(third, 4, 0);
    QVERIFY(row(QStringLiteral("r-3"), three.segment));
    QCOMPARE(three.earlierPartBytes, qint64(0));
    // r-1 asked again after what went on from it: a part of its own, r-1's first stays.
    const Internal::SegmentWrite again = write(turnMessages(11), 0, one.segment);
    QVERIFY2(!again.error.isValid(), qPrintable(again.error.text()));
    QVERIFY(again.segment != one.segment);
    QVERIFY(row(QStringLiteral("r-1"), again.segment));

    const auto read = [&](int segment) {
        return Internal::readConversation(db, c, owner, segment);
    };
    QCOMPARE(read(two.segment).messages.value_or(QJsonArray()), second);
    QCOMPARE(read(two.segment).ownStart, qsizetype(4));
    QCOMPARE(read(three.segment).messages.value_or(QJsonArray()), third);
    QCOMPARE(read(again.segment).messages.value_or(QJsonArray()), turnMessages(11));
    QVERIFY(!read(99).messages);

    // r-2 and r-3 gone: r-1's first run is no longer needed, r-1's second is.
    QVERIFY(QSqlQuery(db).exec(QStringLiteral("DELETE FROM turn_checkpoints WHERE request_id "
                                              "IN ('r-2', 'r-3')")));
    QCOMPARE(Internal::removeUnusedSegments(db, c, owner), QString());
    QSqlQuery left(db);
    QVERIFY(left.exec(QStringLiteral("SELECT segment FROM conversation_segments")));
    QVERIFY(left.next());
    QCOMPARE(left.value(0).toInt(), again.segment);
    QVERIFY(!left.next());
}

QTEST_GUILESS_MAIN(tst_TurnJournal)
#include "tst_turnjournal.moc"
