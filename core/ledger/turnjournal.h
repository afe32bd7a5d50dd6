#pragma once

#include <QByteArray>
#include <QDateTime>
#include <QFuture>
#include <QJsonObject>
#include <QJsonValue>
#include <QList>
#include <QMap>
#include <QMetaType>
#include <QString>
#include <QStringList>

#include <functional>
#include <memory>
#include <optional>

namespace AgentConsole {

struct PostgresLocation;

namespace Internal {
class DatabaseWorker;
struct JournalConnection;
} // namespace Internal

// One turn's last checkpoint as stored. The journal does not interpret `state` or `stage`;
// the agent loop owns their meaning (core/turn/turncheckpoint.h).
struct JournalEntry
{
    QString requestId;
    QString conversationId;
    QString stage; // RECEIVED, PLANNED, ..., COMPLETED, FAILED
    bool resumable = false; // interrupted (or its answer failed) and not dismissed
    // The plan, the operationIds, every tool result, and the conversation so far: its
    // "conversation" (an array of messages) with "turnStart" (where this turn's own begin).
    // The journal stores only this turn's messages with the row, after the earlier turns'
    // (schema version 5, internal/journalsegments.h), and puts the whole array back on read.
    QJsonObject state;
    QJsonObject counters; // name -> integer, this turn's counters
    // The running hashes of state's "conversation" ([i]: journalMessageHash over messages
    // 0..i), when the saver keeps them as its conversation grows: the journal then finds the
    // earlier turns' part without hashing the whole conversation at every checkpoint. Made by
    // save() when missing. Empty on read.
    QList<QByteArray> conversationHashes;
    // Tool results appended since `state` was saved (appendToolResult), by call index; they
    // are newer than the same calls in `state`. Empty in an entry given to save().
    QMap<int, QJsonObject> appendedResults;
    // Set on read when a stored part of the row is not valid JSON: the row is damaged and
    // nothing of it is to be trusted. For the local log.
    QString damage;
    QDateTime createdAt;
    QDateTime updatedAt;
    // What a history list shows and searches of the turn, given by the agent with each save
    // and kept in columns of their own, so that listing never reads a whole turn. The journal
    // stores and matches them; it does not interpret them. Empty for rows saved before
    // schema version 3 (they are not listed).
    QString owner; // whose turn: only the owner's conversations are listed
    QString title; // a short line (the question)
    QString outcome; // a short label
    QString searchText; // what a search matches, bounded by the agent
    QString scenario; // the scenario run the turn belongs to; empty for staff's own
    // A team's journal: the desk (its machine's name) that holds this turn now, when another
    // desk that is running does; empty when this desk holds it (resumable()).
    QString heldBy = {};
};

// Which desk a team's journal speaks for: the console (its data directory's id) and its
// machine's name, as another desk names it to staff.
struct JournalDesk
{
    QString id;
    QString name;
};

// The running hash of a conversation after `message`, given the hash after the messages before
// it (empty before the first): SHA-256 over that hash and the message's compact JSON. How the
// journal finds where a stored conversation ends (JournalEntry::conversationHashes).
QByteArray journalMessageHash(const QByteArray &previous, const QJsonValue &message);

// One conversation as a history list shows it: its turns grouped, the first turn's title and
// the latest turn's outcome label.
struct JournalConversation
{
    QString conversationId;
    QString title;
    QString latestOutcome;
    QString scenario; // a scenario run's name; empty for a staff member's conversation
    int turns = 0;
    bool resumable = false; // one of its turns is offered for resumption
    QDateTime startedAt;
    QDateTime updatedAt;
};

// Which conversations to list: one owner's, newest first, a page at a time. `contains` (if
// not empty) keeps those with a turn whose search text contains it (case-insensitive for
// ASCII); `%`, `_` and `\` in it are matched literally.
struct JournalConversationQuery
{
    QString owner;
    QString contains;
    bool withoutScenarios = false; // leave scenario runs out
    int limit = 50;
    int offset = 0;
};

// One stored row of turn_checkpoints as its text columns, before anything of it is trusted.
struct JournalRow
{
    QString requestId;
    QString conversationId;
    QString stage;
    int resumable = 0;
    QString stateJson;
    QString countersJson;
    QString createdAt;
    QString updatedAt;
};

// The entry a stored row holds; `damage` says when its JSON columns are not JSON objects.
JournalEntry journalEntryFromRow(const JournalRow &row);
// A stored JSON object; nullopt when the text is not one (a damaged or edited row).
std::optional<QJsonObject> storedJsonObject(const QString &text);

struct JournalWrite
{
    bool ok = false;
    QString detail; // local log only
    qint64 bytes = 0; // JSON bytes this write stored: a checkpoint's cost
    bool diskFull = false; // failed for want of room (storagefull.h): told as a full disk
    // A team's journal: another running desk (its machine's name) has claimed the turn since;
    // this desk must not carry it on.
    QString heldBy = {};
};

// What the journal has written since it was made: the cost of checkpoints, for tests and the
// benchmark.
struct JournalActivity
{
    qint64 saves = 0; // whole-turn checkpoints (save)
    qint64 savedBytes = 0;
    qint64 appends = 0; // tool results appended on their own (appendToolResult)
    qint64 appendedBytes = 0;
    // Saves whose earlier conversation no stored turn ended with, so that it was stored with
    // them (a conversation put together elsewhere); of savedBytes. None while a console
    // carries its own conversations on: a turn's cost does not grow with what came before.
    qint64 earlierParts = 0;
    qint64 earlierPartBytes = 0;
};

struct JournalOpenResult
{
    bool ok = false;
    QString message; // one line for staff
    QString detail; // local log only
};

// Where turns are checkpointed: an SQLite file in the data directory (WAL, synchronous FULL:
// a checkpoint the loop waited for survives a power cut too), or a team's PostgreSQL database
// (docs/TEAM.md). Like the ledger, all SQL runs on one database thread in submission order,
// every call is asynchronous and may come from any thread, and a save that returned ok is on
// disk. A desk's file holds that desk's turns; a team's journal holds every agent's, and each
// TurnJournal reads and writes only its owner's rows (every statement says so), so that an
// agent's conversations and interrupted requests follow them from desk to desk.
class TurnJournal final
{
public:
    explicit TurnJournal(const QString &filePath);
    // A team's journal on PostgreSQL for one owner (conversationOwner: tenant/staff). Its
    // tables are made and migrated by the team journal's own migrations; a connection lost
    // mid-operation (a restarted server) is made again and the operation run once more.
    // A checkpoint of a turn another running desk has claimed since is refused (the turn stops
    // here: only one desk carries it on).
    TurnJournal(const PostgresLocation &location, const QString &owner, const JournalDesk &desk);
    ~TurnJournal();
    TurnJournal(const TurnJournal &) = delete;
    TurnJournal &operator=(const TurnJournal &) = delete;

    QFuture<JournalOpenResult> open();
    // A turn is named by its conversation and request ids (request ids are the conversation's;
    // a caller may choose them).
    // Inserts or replaces the turn's row: one checkpoint replaces the previous one, and the
    // results appended before it (it holds them). Its conversation's messages before
    // "turnStart" are not stored again: they are the earlier turns' (found by their running
    // hash), so a checkpoint costs what its turn adds, whatever the conversation's length.
    QFuture<JournalWrite> save(const JournalEntry &entry);
    // The same, with the entry made on the journal's thread: a turn's checkpoint is hundreds
    // of JSON values (its conversation, every call's attempts), which the thread that asks
    // (the agent loop's, the GUI thread) need not build. `makeEntry` must read only values it
    // owns (copies: Qt's shared containers may be copied across threads).
    QFuture<JournalWrite> save(std::function<JournalEntry()> makeEntry);
    // One finished tool call of a saved turn, stored as its own row: a result costs the same
    // whatever the turn already holds (save() would re-store the whole turn). Read back in
    // JournalEntry::appendedResults until the next save().
    QFuture<JournalWrite> appendToolResult(const QString &conversationId, const QString &requestId,
                                           int callIndex, const QJsonObject &record);
    // The same, with the record made on the journal's thread (as save() makes its entry).
    QFuture<JournalWrite> appendToolResult(const QString &conversationId, const QString &requestId,
                                           int callIndex, std::function<QJsonObject()> makeRecord);
    // Resumable turns, oldest first. A team's journal claims them for this desk at once, in
    // one statement: those no running desk holds (a desk holds the turns it saved or claimed
    // while it is connected), so that two desks never carry on one turn; those another running
    // desk holds come back with heldBy, to be told and not resumed.
    QFuture<QList<JournalEntry>> resumable();
    QFuture<std::optional<JournalEntry>> entry(const QString &conversationId,
                                               const QString &requestId);
    // Keeps the turn but stops offering it for resumption (the staff member dismissed it).
    QFuture<JournalWrite> dismiss(const QString &conversationId, const QString &requestId);
    // Sets some of a turn's counters, keeping the others (a figure learned after the turn).
    QFuture<JournalWrite> mergeCounters(const QString &conversationId, const QString &requestId,
                                        const QJsonObject &counters);
    // History (docs/HISTORY.md). Conversations of one owner, newest first, at most
    // query.limit + 1 of them (one more than asked says there is another page).
    QFuture<QList<JournalConversation>> conversations(const JournalConversationQuery &query);
    // The last `limit` turns of one owner's conversation, oldest first, with their appended
    // results. The top-level keys of a turn's state named in `omittedStateKeys` are left out;
    // "conversation" among them is not read at all (a reader that does not need each turn's
    // whole conversation: reading it for every turn costs the square of the conversation).
    QFuture<QList<JournalEntry>> turns(const QString &conversationId, const QString &owner,
                                       int limit, const QStringList &omittedStateKeys = {});
    // Deletes every turn of one owner's conversation and their results, in one commit.
    QFuture<JournalWrite> removeConversation(const QString &conversationId, const QString &owner);
    // Every turn's counters added up: the totals of DESIGN.md's counters. `figures` replace
    // the sums of their names (a figure that is not a sum), names in `omitted` are left out.
    QFuture<QJsonObject> counterTotals(const QJsonObject &figures = {},
                                       const QStringList &omitted = {});

    // The file; for a team's journal, its database as staff may read it (no password).
    QString filePath() const { return m_filePath; }
    bool isTeamJournal() const;
    JournalActivity activity() const; // any thread

private:
    QString m_filePath;
    std::shared_ptr<Internal::JournalConnection> m_connection;
    std::unique_ptr<Internal::DatabaseWorker> m_worker; // last: drained and stopped first
};

} // namespace AgentConsole

Q_DECLARE_METATYPE(AgentConsole::JournalEntry)
