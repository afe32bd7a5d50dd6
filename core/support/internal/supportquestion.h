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
    QString subject; // the order id or SKU as the question wrote it (SKUs upper-cased)

    friend bool operator==(const PlannedLookup &, const PlannedLookup &) = default;
};

// The write tool the offline demo model knows how to ask for.
QString createTicketToolName(); // "createTicket"

// The arguments of one createTicket call, as the question wrote them.
struct PlannedTicket
{
    QString orderId;     // the first order the ticket part names; empty when it names none
    QString category;    // RETURN, EXCHANGE, REFUND, DAMAGED, MISSING_ITEM or OTHER
    QString description; // 1-500 characters: the stated reason, else the whole question

    friend bool operator==(const PlannedTicket &, const PlannedTicket &) = default;
};

// What one support question asks for, read from keywords and identifiers only. Identifiers
// are taken as written: "a1001" or "A12" stay as they are, so that the executor's argument
// validation rejects them visibly (INVALID_ARGUMENT) instead of the planner "fixing" them.
struct SupportQuestion
{
    Language language = Language::English;
    QList<PlannedLookup> lookups; // in the order the question mentions them, no duplicates
    bool asksAboutOrders = false; // status or logistics words anywhere
    bool asksAboutStock = false;  // stock words anywhere
    // Set when the question asks to create an after-sales ticket. Then `lookups` holds only
    // what other clauses ask for in so many words: an order named for the ticket is not also
    // looked up.
    std::optional<PlannedTicket> ticket;

    static SupportQuestion parse(const QString &text);
};

} // namespace AgentConsole::Internal
