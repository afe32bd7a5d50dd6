#pragma once

#include "resultcode.h"
#include "toolresult.h"

#include <QObject>
#include <QString>
#include <QStringList>
#include <QStringView>

#include <optional>
#include <span>
#include <vector>

namespace AgentConsole {

// DESIGN.md's failure taxonomy as data: one row per result code, read by everything that
// retries, records, words or colours a result (the executor, the loop's write path, the
// answer writer, the window). No place spells its own if-chain over the codes.
//
// There is one table. Its rows are written where their codes are made: the mechanism's here
// (mechanismRows(): timeouts, unavailable, rejected, writes, bounds, and the two rows that say
// how a code nobody here recognises is told), a domain's with the domain, which numbers its
// codes from ResultCode::firstDomainCode and joins its rows to the table (join()): the
// support domain's (ORDER_NOT_FOUND, LOGISTICS_NOT_FOUND, SKU_NOT_FOUND) in
// core/support/supportfailures.*. So the floors stay one-way (nothing below support knows
// what an order is) while every floor reads one table: the loop and the window read support's
// rows without including support. tst_failuretable checks that every code has exactly one row.
class FailureTable
{
    Q_GADGET
public:
    // How a result reads at a glance; ui/ turns it into a colour in one switch.
    enum class Severity {
        Success, // the call answered
        Neutral, // an expected answer: nothing found, declined, cancelled
        Info, // still going somewhere else (an operation in progress)
        Warning, // may be better later, or not known: timed out, unavailable, outcome unknown
        Error, // will not get better by waiting: refused, invalid, a bug
    };
    Q_ENUM(Severity)

    // What a write's idempotency-ledger row becomes when its call ends with the code
    // (the ledger's own names: SUCCEEDED, FAILED_RETRYABLE, FAILED_FINAL).
    enum class LedgerRow {
        Succeeded,
        FailedRetryable, // a later run asks the backend for the key's status first
        FailedFinal,
    };
    Q_ENUM(LedgerRow)

    // A fixed sentence in both languages the console speaks (UTF-8). Null when a row has none.
    struct Sentence
    {
        const char *english = nullptr;
        const char *chinese = nullptr;

        bool isNull() const { return english == nullptr; }
        QString in(Language language) const;
    };

    struct Row
    {
        ResultCode::Code code;
        // The wire name (resultcode.h), ASCII. Null for Unrecognized and
        // UnrecognizedNotFound: each such result keeps the name it came with.
        const char *wire;
        // Worth trying again later: the executor's retryable failures end with these codes,
        // the model gets the retry hint, and the answer says "try again later".
        bool retryable;
        // An answer that nothing matched (DESIGN.md's "nothing found"): the call answered.
        // Its attempt is a business answer, not held against the dependency's breaker, and a
        // turn whose calls all answered so is answered.
        bool nothingFound;
        LedgerRow ledger;
        Severity severity;
        // The card's status word for staff: English source text, translated by ui/ in the
        // context "AgentConsole::ToolCallText". Null: the card shows the wire name as given
        // (only the row of a code nobody here recognises: staff never read a name of ours).
        const char *label;
        // The answer's sentence for staff about a call that ended so; "%1", where it appears,
        // is the call's name ("the logistics lookup for order A1001"). Null: the answer
        // writer words it itself (it knows the arguments) or says the call failed.
        Sentence staff;
        // The same when the call names its subject (an order number, a SKU); "%1" is the
        // subject. Null: `staff` is said either way.
        Sentence staffAboutSubject;
        // ToolResult::message: what the model reads (and the card shows as the reason).
        Sentence model;
    };

    // The table: the mechanism's rows and those of every domain that joined.
    static const FailureTable &instance();
    // Adds a domain's rows: its codes, numbered from ResultCode::firstDomainCode, each with
    // its wire name. Called before main() by a namespace-scope variable in the domain's
    // header (core/support/supportfailures.h), so that every program that can name one of
    // the domain's codes reads, writes and words it by its row. Returns true, for that
    // variable to hold.
    static bool join(std::span<const Row> rows);

    // Null for a code the table has no row for.
    const Row *find(ResultCode::Code code) const;
    // Every code a result can be made with (all but Unrecognized and UnrecognizedNotFound),
    // by number: the mechanism's, then each domain's.
    QList<ResultCode::Code> codes() const;
    // The row's wire name; empty without one (ResultCode::wireName()).
    const QString &wireName(ResultCode::Code code) const;
    // The code whose row has this wire name (ResultCode::fromWireName()).
    std::optional<ResultCode::Code> codeOf(QStringView wireName) const;

    // A failure worded by `code`'s row: its message for the model, `errors`, and the retry
    // hint when the code is retryable.
    ToolResult failure(ResultCode::Code code, Language language,
                       const QStringList &errors = {}) const;
    // The row's message for the model; a general sentence for a code without one.
    QString message(ResultCode::Code code, Language language) const;
    // The sentence added to a retryable failure's errors; empty for other codes.
    QString retryHint(ResultCode::Code code, Language language) const;
    // The row says nothing was found; false for a code without a row.
    bool isNothingFound(ResultCode::Code code) const;

    // The rows of the codes the mechanism produces (and reads: the unrecognised ones).
    static std::span<const Row> mechanismRows();

private:
    FailureTable();
    static FailureTable &table();
    void add(std::span<const Row> rows);

    struct Slot
    {
        const Row *row = nullptr;
        QString wire;
    };
    std::vector<Slot> m_slots; // by code
};

} // namespace AgentConsole
