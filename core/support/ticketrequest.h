#pragma once

#include <QJsonObject>
#include <QString>
#include <QStringList>

namespace AgentConsole {

// The arguments of one after-sales ticket, as the staff member confirmed them.
struct TicketRequest
{
    static constexpr int kMaxDescriptionLength = 500; // characters (code points)
    static constexpr int kMaxIdempotencyKeyLength = 200;

    QString orderId;
    QString category; // one of categories()
    QString description; // 1 to 500 characters, not only blanks

    static const QStringList &categories();

    // {orderId, category, description}: the body of POST /api/v1/tickets.
    QJsonObject toJson() const;
    static TicketRequest fromJson(const QJsonObject &json);

    // Why this cannot become a ticket, in fixed English words for the local log and a 400
    // body; empty when it can. The tool checks its arguments before any attempt; backends
    // check again because they cannot trust their callers.
    QString problem() const;
    static QString keyProblem(const QString &idempotencyKey);

    friend bool operator==(const TicketRequest &, const TicketRequest &) = default;
};

// The REST API's answer to GET /api/v1/tickets?idempotencyKey=<key> for a key no ticket has:
// 404 {"error": "TICKET_NOT_FOUND"}. An answer of the API, not a result code: the console
// reads it as "not committed" (HttpTicketBackend::status), support-sim sends it.
inline constexpr char kTicketNotFoundError[] = "TICKET_NOT_FOUND";

} // namespace AgentConsole
