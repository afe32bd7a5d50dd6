#pragma once

#include <QByteArray>
#include <QDateTime>
#include <QFuture>
#include <QJsonObject>
#include <QMetaType>
#include <QObject>
#include <QString>

#include <chrono>
#include <optional>

namespace AgentConsole {

class AuditTrail;

// The states of one ledger row (DESIGN.md, "Write tools and idempotency").
struct LedgerState
{
    Q_GADGET
public:
    // OutcomeUnknown: a write that may or may not have acted, of a tool that cannot learn which
    // (an MCP write: the protocol has no status query). Settled for good, like FailedFinal:
    // never sent again by a retry, a replay or a resume; writing again takes a new request.
    enum class Status { Processing, Succeeded, FailedRetryable, FailedFinal, OutcomeUnknown };
    Q_ENUM(Status)

    // The text stored in the status column: "PROCESSING", "SUCCEEDED", ...
    static QString name(Status status);
    static std::optional<Status> fromName(const QString &name);
};
using LedgerStatus = LedgerState::Status;

// One row of the ledger, as stored.
struct LedgerRow
{
    QString idempotencyKey;
    QString toolName;
    QByteArray requestHash;
    LedgerStatus status = LedgerStatus::Processing;
    QJsonObject result;
    QDateTime createdAt;
    QDateTime updatedAt;
};

// The answer to begin(): may the caller execute the write?
struct LedgerClaim
{
    Q_GADGET
public:
    enum class Outcome {
        Claimed, // a new key, or a FAILED_RETRYABLE row with the same hash re-claimed:
                 // execute, then complete()
        AlreadySucceeded, // an idempotency hit: storedResult is the earlier result; do not execute
        InProgress, // PROCESSING by someone (maybe a process that died): do not execute
        Conflict, // the key is stored with another request hash or tool: do not execute
        FailedFinal, // a final failure is stored (storedResult); do not execute
        OutcomeUnknown, // settled as unknown (storedResult): nobody knows whether it acted;
                        // do not execute
        StoreError, // the ledger could not be asked: do not execute
    };
    Q_ENUM(Outcome)

    Outcome outcome = Outcome::StoreError;
    // The stored result: the earlier one (a hit, a final failure), or, for a FAILED_RETRYABLE
    // row claimed again, what that earlier run recorded (empty for a PROCESSING row taken over).
    QJsonObject storedResult;
    QString detail; // for the local log only: may hold driver text
    // Claimed a row that an earlier run held (FAILED_RETRYABLE, or PROCESSING taken over by
    // recover()): that run may have reached the backend, so ask it before sending anything.
    bool mayHaveRun = false;

    bool mayExecute() const { return outcome == Outcome::Claimed; }
};

// The answer to complete(). Only a PROCESSING row moves; anything else is NotProcessing, so
// a late or repeated completion never overwrites a stored result. A completion the store
// cannot take (it is down, busy or its disk is full) is Kept: held by the ledger and recorded
// when the store is back (before the ledger's next operation, and by recordKept()).
struct LedgerCompletion
{
    Q_GADGET
public:
    enum class Outcome { Completed, NotProcessing, Kept, StoreError };
    Q_ENUM(Outcome)

    Outcome outcome = Outcome::StoreError;
    QString detail; // local log only

    bool completed() const { return outcome == Outcome::Completed; }
};

struct LedgerLookup
{
    Q_GADGET
public:
    enum class Outcome { Found, NotFound, StoreError };
    Q_ENUM(Outcome)

    Outcome outcome = Outcome::StoreError;
    std::optional<LedgerRow> row;
    QString detail; // local log only
};

// The answer to recentSuccesses(): the rows, newest first.
struct LedgerRecent
{
    Q_GADGET
public:
    enum class Outcome { Found, StoreError };
    Q_ENUM(Outcome)

    Outcome outcome = Outcome::StoreError;
    QList<LedgerRow> rows;
    QString detail; // local log only
};

// The answer to open(): connection made and schema migrated, or why not.
struct LedgerOpenResult
{
    Q_GADGET
public:
    enum class Outcome { Ready, Unreachable, SchemaTooNew, StoreError };
    Q_ENUM(Outcome)

    Outcome outcome = Outcome::StoreError;
    int schemaVersion = 0;
    QString message; // one line for staff: names the ledger, never a password or SQL
    QString detail; // local log only

    bool ready() const { return outcome == Outcome::Ready; }
};

// The idempotency ledger of write tools. Every operation is asynchronous: it is queued to the
// ledger's own database thread and its QFuture finishes there; watch it with a QFutureWatcher
// parented to the receiver. A claim on a row the ledger has seen settled for good (SUCCEEDED,
// FAILED_FINAL, OUTCOME_UNKNOWN: nothing moves those again) may come back already finished.
// Nothing here blocks the calling thread, and every method may be called from any thread.
// Operations run in the order they were called; those called before open() finished wait
// for it, and answer StoreError if it failed.
//
// The transitions are atomic across threads and processes sharing one store: begin() claims a
// key with one conditional statement (insert if absent, or re-claim a FAILED_RETRYABLE row of
// the same hash), so exactly one of any number of concurrent begin() calls gets Claimed.
class IdempotencyLedger
{
public:
    virtual ~IdempotencyLedger() = default;

    // Connects and applies the schema migrations. Call once, first.
    virtual QFuture<LedgerOpenResult> open() = 0;

    virtual QFuture<LedgerClaim> begin(const QString &key, const QString &toolName,
                                       const QByteArray &requestHash)
        = 0;

    // begin() for an operation this console itself started before it was interrupted (a
    // resumed turn): a PROCESSING row of the same tool and hash that this ledger's owner
    // claimed is an orphan of that run and is taken over as Claimed with mayHaveRun. Any other
    // row (another console's live claim included) answers as begin() would. The caller must
    // make sure one process per owner resumes turns.
    virtual QFuture<LedgerClaim> recover(const QString &key, const QString &toolName,
                                         const QByteArray &requestHash)
        = 0;

    // `status` must not be Processing. Moves the row only from PROCESSING, and only a row this
    // ledger's owner claimed (LedgerOptions::owner); any other answers NotProcessing.
    virtual QFuture<LedgerCompletion> complete(const QString &key, LedgerStatus status,
                                               const QJsonObject &result)
        = 0;

    virtual QFuture<LedgerLookup> lookup(const QString &key) = 0;

    // The SUCCEEDED rows of `toolName` whose key starts with `keyPrefix` (keys start with the
    // tenant: "t-acme:") and that were claimed within `window` by the store's clock, newest
    // first, at most `limit`: what a team's consoles wrote lately, whatever their backend
    // says now (a likely duplicate write is told to staff before they confirm it).
    virtual QFuture<LedgerRecent> recentSuccesses(const QString &keyPrefix,
                                                  const QString &toolName,
                                                  std::chrono::seconds window, int limit)
        = 0;

    // Records the completions kept while the store was out (and those a run before left), and
    // the audit rows kept with them, as far as the store takes them now; answers how many
    // are still kept. Every other operation does this first, so a replay after an outage
    // reads the stored result.
    virtual QFuture<qsizetype> recordKept() = 0;

    // The audit trail of writes kept in the same store, on the same database thread
    // (docs/AUDIT.md); null for a ledger without one. Valid as long as the ledger.
    virtual AuditTrail *auditTrail() { return nullptr; }

    // What the ledger is, for staff and logs: "SQLite ledger /path" or "PostgreSQL ledger
    // user@host:port/db" (never the password).
    virtual QString description() const = 0;
};

// How much durability each SQLite commit buys (WAL mode in both cases): Normal survives a
// crash or kill of the process, Full also a power loss or OS crash (one fsync per commit).
enum class SqliteSynchronous { Normal, Full };

struct LedgerOptions
{
    // Who claims: the console (one data directory) this ledger speaks for. A claim records
    // it, and only the same owner may complete the row or take it over after a restart, so
    // one console's recovery never touches another console's running write.
    QString owner;
    SqliteSynchronous synchronous = SqliteSynchronous::Full;
    // How long SQLite waits for another process's write lock before StoreError.
    std::chrono::milliseconds busyTimeout{10000};
    // How long PostgreSQL may take to accept the connection before Unreachable.
    std::chrono::seconds connectTimeout{5};
    // Where completions the store could not take are kept across a restart (openLedger puts
    // it in the data directory); empty: in memory only.
    QString keptCompletionsPath;
};

} // namespace AgentConsole

Q_DECLARE_METATYPE(AgentConsole::LedgerClaim)
Q_DECLARE_METATYPE(AgentConsole::LedgerCompletion)
Q_DECLARE_METATYPE(AgentConsole::LedgerLookup)
Q_DECLARE_METATYPE(AgentConsole::LedgerOpenResult)
