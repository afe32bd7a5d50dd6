#pragma once

#include "resultcode.h"
#include "toolresult.h"

#include <QObject>
#include <QString>
#include <QStringList>
#include <QStringView>

#include <array>
#include <initializer_list>
#include <span>

namespace AgentConsole {

// DESIGN.md's failure taxonomy as data: one row per result code, read by everything that
// retries, records, words or colours a result (the executor, the loop's write path, the
// answer writer, the window). No place spells its own if-chain over the codes any more.
//
// The floors stay one-way (agent -> support -> llm -> tools -> faults -> resilience ->
// telemetry): the enum and its wire names are here (resultcode.h), as are the rows of the
// codes the mechanism itself produces (mechanismRows(): timeouts, unavailable, rejected,
// writes, bounds...). A domain adds the rows of its own codes from its own floor; the
// support wing's rows (ORDER_NOT_FOUND, LOGISTICS_NOT_FOUND, SKU_NOT_FOUND) are in
// core/support/supportfailures.cpp. A table is composed from such parts by whoever knows
// them all (support's supportFailureTable(), which agent/ hands to the window as
// failureTable()); nothing registers itself into a global, so a floor only ever reads rows
// it can see, and a table that misses a row is caught by tst_failuretable.
class FailureTable
{
    Q_GADGET
public:
    // How a result reads at a glance; ui/ turns it into a colour in one switch.
    enum class Severity {
        Success, // the call answered
        Neutral, // an expected answer: nothing found, declined, cancelled
        Info,    // still going somewhere else (an operation in progress)
        Warning, // may be better later, or not known: timed out, unavailable, outcome unknown
        Error,   // will not get better by waiting: refused, invalid, a bug
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
        // Worth trying again later: the executor's retryable failures end with these codes,
        // the model gets the retry hint, and the answer says "try again later".
        bool retryable;
        LedgerRow ledger;
        Severity severity;
        // The card's status word for staff: English source text, translated by ui/ in the
        // context "AgentConsole::ToolCallText". Null: the card shows the wire name itself
        // (every row of ours has one: staff never read a wire name).
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

    FailureTable(std::initializer_list<std::span<const Row>> parts);

    // Null for a code the table has no row for (a wire name this console does not know).
    const Row *find(ResultCode::Code code) const;
    const Row *find(QStringView wireName) const;

    // A failure worded by `code`'s row: its message for the model, `errors`, and the retry
    // hint when the code is retryable.
    ToolResult failure(ResultCode::Code code, Language language,
                       const QStringList &errors = {}) const;
    // The row's message for the model; a general sentence for a code without a row.
    QString message(QStringView wireName, Language language) const;
    // The sentence added to a retryable failure's errors; empty for other codes.
    QString retryHint(QStringView wireName, Language language) const;

    // The rows of the codes the mechanism produces; the table of just these.
    static std::span<const Row> mechanismRows();
    static const FailureTable &mechanism();

private:
    std::array<const Row *, ResultCode::codeCount> m_rows{};
};

} // namespace AgentConsole
