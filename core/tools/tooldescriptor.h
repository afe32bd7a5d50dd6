#pragma once

#include <QJsonObject>
#include <QList>
#include <QString>
#include <QStringList>

namespace AgentConsole {

// What staff see of a tool's calls. The texts are English source strings marked in core with
// QT_TRANSLATE_NOOP(ToolLabels::TranslationContext, ...); the window translates them there.
struct ToolLabels
{
    static constexpr const char *TranslationContext = "ToolLabels";

    struct Value
    {
        QString value; // as the schema has it, e.g. "DAMAGED"
        QString label; // what a staff member reads, e.g. "Damaged item"
    };

    struct Argument
    {
        QString key; // the argument's name in the schema
        QString label; // what a staff member reads, e.g. "Order"
        // Staff words for an enumerated argument's values; a value not listed shows as it is.
        QList<Value> values = {};
    };

    QString title; // e.g. "Create an after-sales ticket"; empty: show the tool's name
    bool write = false; // the tool has side effects: "Try again" never asks it again
    QString confirmTitle; // heads a write's confirmation, e.g. "Confirm: create a ticket"
    QString confirmAction; // the button that approves a write, e.g. "Create ticket"
    QList<Argument> arguments; // in the order staff read them; others follow under their key
    // What a write made, named by a field of its result's data, e.g. {"ticketId", "Ticket"}:
    // shown as a field on its card and offered for copying. Empty key: nothing to show.
    Argument created;

    // What a successful call found, for the first line of its card and what staff copy: a
    // template whose {key} are fields of the result's data ({key#}: how many items the array
    // `key` holds), e.g. "{status} · {currentLocation}". A field with a sibling "<key>Zh"
    // is shown in Chinese from it in a Chinese window. Empty: the card tells no finding.
    QString finding;
    // Staff words for enumerated fields of the result, e.g. status IN_TRANSIT "In transit".
    QList<Argument> resultValues;

    // Heads what a write's PriorWritesCheck found, e.g. "This order's tickets"; and the
    // sentence of a likely duplicate: %1 the lookup's subject (the order), %2 the staff
    // label of the last of sameFields' values ("Damaged item"), %3 the earlier write's id,
    // e.g. "%1 already has a “%2” ticket %3".
    QString priorWrites;
    QString likelyDuplicate;

    // Who chose how the tool's calls run, for its card. The console itself for a built-in
    // tool; for a tool from outside (an MCP server), its own hints, which nobody verified,
    // or staff over them. Plain words: "read", "idempotent-write" or "write".
    struct PolicyOrigin
    {
        enum class Source { Console, Hints, Staff };
        Source source = Source::Console;
        QString policy; // how its calls run
        QString hinted; // what the tool's hints said (the same as policy unless Staff)
        // The hints took a safeguard away: retried (read-only, idempotent) and unconfirmed.
        bool hintsRelaxSafeguard() const
        {
            return source == Source::Hints && !policy.isEmpty() && policy != u"write";
        }
    };
    PolicyOrigin policyOrigin;
};

// A write that may repeat one made before (a second ticket for an order that has one). Before
// staff confirm it, the console asks `lookup` (a read tool, given those of the write's
// arguments named in lookupArguments) what exists, and reads each object of the lookup's data
// array `listKey` as an earlier write; it also reads the idempotency ledger's recent successes
// of the write. An earlier write whose `sameFields` all equal the write's arguments and that
// was made within the console's duplicate window reads as a likely duplicate. It only informs
// staff: idempotency rules stay as they are.
struct PriorWritesCheck
{
    QString lookup; // empty: the write is not checked
    QStringList lookupArguments;
    QString listKey;
    QString idKey;
    QStringList sameFields;
    QString createdAtKey = QStringLiteral("createdAt"); // ISO 8601
    QString createdByKey = QStringLiteral("createdBy"); // a staff user id; may be absent
    // The idempotency key an earlier write was made under: one made under this write's own
    // key is this very request made before (a replay, a resume), never a duplicate of it.
    QString keyField = QStringLiteral("idempotencyKey");

    bool isSet() const { return !lookup.isEmpty(); }
};

// What the model is told about a tool (an OpenAI-style function description whose
// `parameters` is the JSON Schema the executor validates arguments against), and what the
// console needs to run and show its calls.
struct ToolDescriptor
{
    QString name;
    QString description;
    QJsonObject parameters; // JSON Schema (draft 7 subset that valijson understands)
    bool hasSideEffects = false; // a write: confirmed by staff, guarded by the ledger
    // A write staff need not confirm: one whose repetition is harmless (an MCP tool marked
    // idempotent), so it is retried under one idempotency key and still claimed in the ledger.
    bool requiresConfirmation = true;
    // A write that may have acted without an answer can still be found out: its backend
    // answers for an idempotency key (createTicket's status query), or sending it again is
    // harmless (an MCP tool marked idempotent). Its ledger row stays retryable and the next
    // claim asks first. False for a destructive MCP tool: the protocol has no status query,
    // so such an outcome is settled OUTCOME_UNKNOWN and the write is never sent again.
    bool outcomeCanBeLearned = true;
    // The downstream service the tool calls: tools that share one share a circuit breaker.
    // Empty: the tool is its own service.
    QString service;
    ToolLabels labels;
    PriorWritesCheck priorWrites; // writes only

    QJsonObject toFunctionJson() const
    {
        return QJsonObject{{QStringLiteral("type"), QStringLiteral("function")},
                           {QStringLiteral("function"),
                            QJsonObject{{QStringLiteral("name"), name},
                                        {QStringLiteral("description"), description},
                                        {QStringLiteral("parameters"), parameters}}}};
    }
};

} // namespace AgentConsole
