#include "ticketrequest.h"

#include <QRegularExpression>

namespace AgentConsole {

const QStringList &TicketRequest::categories()
{
    static const QStringList categories{QStringLiteral("RETURN"),       QStringLiteral("EXCHANGE"),
                                        QStringLiteral("REFUND"),       QStringLiteral("DAMAGED"),
                                        QStringLiteral("MISSING_ITEM"), QStringLiteral("OTHER")};
    return categories;
}

QJsonObject TicketRequest::toJson() const
{
    return QJsonObject{{QStringLiteral("orderId"), orderId},
                       {QStringLiteral("category"), category},
                       {QStringLiteral("description"), description}};
}

TicketRequest TicketRequest::fromJson(const QJsonObject &json)
{
    return {json.value(QLatin1String("orderId")).toString(),
            json.value(QLatin1String("category")).toString(),
            json.value(QLatin1String("description")).toString()};
}

QString TicketRequest::problem() const
{
    static const QRegularExpression orderPattern(QStringLiteral("^A\\d{4,10}$"));
    if (!orderPattern.match(orderId).hasMatch())
        return QStringLiteral("orderId is not A followed by 4 to 10 digits");
    if (!categories().contains(category))
        return QStringLiteral("category is not one of %1")
            .arg(categories().join(QLatin1Char(' ')));
    // Characters, not UTF-16 units: SQLite's length() counts the same way. It also stops at a
    // NUL, so a text with one fails the store's CHECK (found by fuzzing): refused here instead.
    const qsizetype length = description.toUcs4().size();
    if (description.trimmed().isEmpty() || length > kMaxDescriptionLength
        || description.contains(QChar(0)))
        return QStringLiteral("description must have 1 to %1 characters, not only blanks, "
                              "and no NUL")
            .arg(kMaxDescriptionLength);
    return {};
}

QString TicketRequest::keyProblem(const QString &idempotencyKey)
{
    if (idempotencyKey.isEmpty() || idempotencyKey.size() > kMaxIdempotencyKeyLength
        || idempotencyKey.contains(QChar(0)))
        return QStringLiteral("the idempotency key must have 1 to %1 characters and no NUL")
            .arg(kMaxIdempotencyKeyLength);
    return {};
}

} // namespace AgentConsole
