#pragma once

#include <QDateTime>
#include <QFuture>
#include <QJsonObject>
#include <QList>
#include <QMetaType>
#include <QObject>
#include <QString>
#include <QStringList>

#include <functional>
#include <optional>

namespace AgentConsole {

// One row of the audit trail of writes (docs/AUDIT.md): appended once, never changed. A write
// gets a row when staff confirm it (or, for a write that needs no confirmation, when it
// starts), then a row with its outcome; an outcome an earlier run left unknown that a later
// one learns (a resumed turn, the same request asked again: both ask the backend by the
// idempotency key) is a row of its own, a settlement.
struct AuditEntry
{
    Q_GADGET
public:
    enum class Event {
        Confirmed, // staff confirmed these exact arguments
        Started, // a write that needs no confirmation (an idempotent MCP write) started
        Outcome, // how the write ended in the turn that ran it
        Settlement, // a later run learned what an earlier one left unknown
    };
    Q_ENUM(Event)
    enum class Outcome {
        None, // Confirmed and Started rows
        Succeeded, // objectId: what the backend made, when the tool names it
        Failed, // resultCode: why; the write did not act
        Unknown, // EXECUTION_STATUS_UNKNOWN: it may or may not have acted
    };
    Q_ENUM(Outcome)
    // Who or what gave the outcome.
    enum class Via {
        None, // Confirmed and Started rows
        Backend, // the write ran (or was refused on its way) in this turn
        Ledger, // the ledger answered without running it: a replay, a conflict, in progress
        Stopped, // the turn stopped (cancel, its deadline, a checkpoint not saved) around it
        Dismissed, // staff dismissed the interrupted turn it was under way in
        Resume, // a settlement: the interrupted turn, resumed, asked the backend
        Replay, // a settlement: the same request, asked again, asked the backend
    };
    Q_ENUM(Via)

    qint64 id = 0; // the store's: a later row has a larger id
    QDateTime at; // when, by the store's clock (UTC), as the ledger's rows are stamped
    Event event = Event::Confirmed;
    // The trusted session's, never the model's.
    QString staffId;
    QString tenantId;
    QString conversationId;
    QString requestId;
    QString operationId;
    QString toolName;
    QString idempotencyKey;
    QJsonObject arguments; // as confirmed, secrets redacted before they were stored
    Outcome outcome = Outcome::None;
    QString resultCode; // Failed and Unknown: the result code's wire name
    QString objectId; // Succeeded: the backend's id of what the write made, when known
    Via via = Via::None;
    QString consoleId; // the console that appended it (the ledger's owner)

    // The names stored and exported: "CONFIRMED", "SUCCEEDED", "backend", ...
    static QString eventName(Event event);
    static std::optional<Event> eventFromName(const QString &name);
    static QString outcomeName(Outcome outcome); // empty for None
    static std::optional<Outcome> outcomeFromName(const QString &name);
    static QString viaName(Via via); // empty for None
    static std::optional<Via> viaFromName(const QString &name);

    // {"id", "at", "event", "staffId", "tenantId", "conversationId", "requestId",
    //  "operationId", "tool", "idempotencyKey", "arguments", ["outcome"], ["resultCode"],
    //  ["objectId"], ["via"], ["consoleId"]}
    QJsonObject toJson() const;
    // Strict: every field of toJson() with its type; nullopt and the first problem otherwise.
    static std::optional<AuditEntry> fromJson(const QJsonObject &json, QString *problem);

    friend bool operator==(const AuditEntry &, const AuditEntry &) = default;
};

// A turn, by the ids that name it together (request ids are unique within a conversation).
struct AuditTurn
{
    QString conversationId;
    QString requestId;
};

// Which rows to read, newest first. Every filter given must hold.
struct AuditQuery
{
    static constexpr int defaultPageSize = 50;
    static constexpr int maxPageSize = 500;
    // Turns one query reads at most (an export's); more are refused.
    static constexpr int maxTurns = 10000;

    QString tenantId; // empty: every tenant
    QString staffId; // empty: anyone
    // An argument's value at the top level of the arguments, compared exactly as text: the
    // order id A1001 finds every write about that order, whatever the argument is called.
    QString argumentValue;
    QDateTime from; // invalid: no lower bound; compared with `at`, inclusive
    QDateTime to; // invalid: no upper bound; exclusive
    QString conversationId; // empty: any
    QList<AuditTurn> turns; // empty: any; else the rows of these turns only (an export's)
    qint64 beforeId = 0; // paging: only rows older than this one; 0 from the newest
    int limit = defaultPageSize; // held to 1..maxPageSize
};

// The answer to AuditTrail::read().
struct AuditPage
{
    Q_GADGET
public:
    enum class Outcome { Found, Unavailable, StoreError };
    Q_ENUM(Outcome)

    Outcome outcome = Outcome::StoreError;
    QList<AuditEntry> rows; // newest first
    bool more = false; // older rows match too: ask again with beforeId = rows.last().id
    QString detail; // local log only

    bool ok() const { return outcome == Outcome::Found; }
};

// The answer to AuditTrail::append().
struct AuditAppend
{
    Q_GADGET
public:
    // Kept: the store could not take it now; it is appended before the ledger's next
    // operation that reaches the store (in memory only: a console that exits first loses it,
    // and its local log has the row's line).
    enum class Outcome { Appended, Kept, StoreError };
    Q_ENUM(Outcome)

    Outcome outcome = Outcome::StoreError;
    qint64 id = 0; // Appended: the row's id
    QString detail; // local log only
};

// The audit trail of writes: append-only, in the ledger's store (the same database, its
// database thread, the same engine), so that the trail of a team's PostgreSQL ledger is the
// team's. The store refuses UPDATE and DELETE on it (triggers, and on PostgreSQL no grant
// either), so even a console that tried could not rewrite it. Asynchronous as the ledger is:
// every operation runs on the database thread, in the order called.
class AuditTrail
{
public:
    // Takes the arguments of a row out of what may be stored: a copy, run on the database
    // thread (so that a large argument is never redacted on the GUI thread).
    using Redaction = std::function<QJsonObject(const QJsonObject &)>;

    virtual ~AuditTrail() = default;

    // Appends `entry`; its id, `at` and consoleId are the store's. `redact`, when given,
    // replaces entry.arguments first.
    virtual QFuture<AuditAppend> append(AuditEntry entry, Redaction redact = {}) = 0;
    virtual QFuture<AuditPage> read(const AuditQuery &query) = 0;
};

} // namespace AgentConsole

Q_DECLARE_METATYPE(AgentConsole::AuditEntry)
Q_DECLARE_METATYPE(AgentConsole::AuditPage)
