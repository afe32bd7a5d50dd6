#pragma once

#include "../../resilience/toolresult.h"

#include <QList>
#include <QString>

#include <optional>

namespace AgentConsole::Internal {

// The read-only lookups the offline demo model knows how to ask for.
enum class LookupKind { OrderStatus, Logistics, Inventory };

QString toolNameFor(LookupKind kind);
// The one argument each lookup takes: "orderId" or "sku".
QString argumentNameFor(LookupKind kind);
std::optional<LookupKind> lookupKindForTool(const QString &toolName);

using AgentConsole::languageOf; // resilience/toolresult.h

struct PlannedLookup
{
    LookupKind kind = LookupKind::OrderStatus;
    QString subject; // the order id or SKU, normalised (see SupportQuestion)

    friend bool operator==(const PlannedLookup &, const PlannedLookup &) = default;
};

// An order id or SKU that a text names, normalised as SupportQuestion describes.
struct NamedSubject
{
    QString subject;
    bool isOrder = false; // else a SKU

    friend bool operator==(const NamedSubject &, const NamedSubject &) = default;
};

// What `text` names, in the order it names them, without duplicates.
QList<NamedSubject> subjectsNamedIn(const QString &text);

// The write tool the offline demo model knows how to ask for.
QString createTicketToolName(); // "createTicket"

// The arguments of one createTicket call, as the question wrote them (the order id
// normalised).
struct PlannedTicket
{
    QString orderId; // the first order the ticket part names; empty when it names none
    QString category; // RETURN, EXCHANGE, REFUND, DAMAGED, MISSING_ITEM or OTHER
    QString description; // 1-500 characters: the stated reason, else the whole question
    // False when the question says nothing of what the ticket is about ("open a ticket for
    // A1001"): the model asks, and takes the next message as the reason (ticketReasonIn).
    bool reasonGiven = true;

    friend bool operator==(const PlannedTicket &, const PlannedTicket &) = default;
};

// What one support question asks for, read from keywords and identifiers only, English
// keywords with a slip forgiven (keywordtypos.h). Identifiers are normalised to the form the
// tools take when that form is valid: "a1001", "A 1001" and "A-1001" are A1001, "sku200",
// "SKU 200" and "sku-200" are SKU-200. The rest stay as written, "A12" or "A12345678901", so
// that the executor's argument validation rejects them visibly (INVALID_ARGUMENT) instead of
// the planner "fixing" them. A separated form only counts with the 4-10 digits of an order id
// ("a 10 minute wait" names no order), and "a 1001" is an article before a number, not A1001.
struct SupportQuestion
{
    Language language = Language::English;
    QList<PlannedLookup> lookups; // in the order the question mentions them, no duplicates
    bool asksAboutLogistics = false; // logistics words anywhere
    bool asksAboutStatus = false; // status words anywhere
    bool asksAboutStock = false; // stock words anywhere
    // Words that point back at an earlier subject: "its logistics", "that order", "那它的物流呢".
    bool refersBack = false;
    // Names orders but no intent word and no ticket, and is a follow-up ("and A1001?",
    // "那 A1001 呢？", "same for A1003") or the bare ids ("A1002?"): it asks what the earlier
    // turn asked (carryIntent). Until then `lookups` holds the status fallback.
    bool namesOnlyOrders = false;
    // A follow-up that could mean any of these (the earlier turn named several): ask which.
    QList<NamedSubject> ambiguousSubjects;
    // Set when the question asks to create an after-sales ticket. Then `lookups` holds only
    // what other clauses ask for in so many words: an order named for the ticket is not also
    // looked up.
    std::optional<PlannedTicket> ticket;

    bool asksAboutOrders() const { return asksAboutLogistics || asksAboutStatus; }
    // Names nothing to look up or file a ticket for, but points back at an earlier turn.
    bool isFollowUp() const { return refersBack && lookups.isEmpty() && !ticket; }

    static SupportQuestion parse(const QString &text);

    // Gives a follow-up ("and its logistics?") the subject of the conversation's latest turn
    // that named any: `earlier` is what that turn named. It takes the one order, or the one
    // SKU for stock; when that turn named none of the kind asked about, nothing is planned,
    // and when it named several, `ambiguousSubjects` lists them: the model asks back, never
    // guesses. Does nothing to a question that is not a follow-up.
    void resolveFollowUp(const QList<NamedSubject> &earlier);

    // Gives a question that names only orders (namesOnlyOrders) the lookups the conversation's
    // latest turn that named any subject made for its orders: `earlierKinds` (status, logistics
    // or both). Empty when that turn looked up no order, or different things for different
    // orders: then the status fallback stays. A write is never carried over.
    void carryIntent(const QList<LookupKind> &earlierKinds);

    // `text`, the message after a ticket request that named its order but no reason, read as
    // that reason: the ticket for `orderId` with the category its words name. Nothing when
    // the message asks something ("where is it now?"), names another order or SKU, asks for a
    // ticket of its own, or takes the request back ("never mind", "算了").
    static std::optional<PlannedTicket> ticketReasonIn(const QString &text,
                                                       const QString &orderId);
};

} // namespace AgentConsole::Internal
