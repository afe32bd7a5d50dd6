#include "lookupanswerwriter.h"

#include "../chinesefields.h"
#include "../supportfailures.h"

#include <QJsonArray>
#include <QJsonObject>
#include <QRegularExpression>

#include <algorithm>
#include <cmath>

namespace AgentConsole::Internal {
namespace {

// Backends send numbers as strings ("299.00") or as JSON numbers; both are shown as given.
QString valueText(const QJsonValue &value)
{
    if (value.isString())
        return value.toString().trimmed();
    if (value.isDouble()) {
        const double number = value.toDouble();
        if (std::floor(number) == number && std::abs(number) < 1e15)
            return QString::number(qint64(number));
        return QString::number(number, 'g', 15);
    }
    return {};
}

QString field(const QJsonObject &object, const char *key)
{
    return valueText(object.value(QLatin1String(key)));
}

// "2026-11-28T09:30:00" reads better as "2026-11-28 09:30". Done textually, not through
// QDateTime, so that neither the time zone nor the locale of the machine changes the answer.
QString timeText(const QString &time)
{
    static const QRegularExpression iso(
        QStringLiteral("^(\\d{4}-\\d{2}-\\d{2})[T ](\\d{2}:\\d{2})(?::\\d{2}(?:\\.\\d+)?)?$"));
    const QRegularExpressionMatch match = iso.match(time);
    if (!match.hasMatch())
        return time;
    return match.captured(1) + QLatin1Char(' ') + match.captured(2);
}

QString capitalized(QString sentence)
{
    if (!sentence.isEmpty())
        sentence[0] = sentence.at(0).toUpper();
    return sentence;
}

bool isTicket(const LookupOutcome &outcome)
{
    return outcome.toolName == createTicketToolName();
}

// "Try again later" is only said when trying again cannot make a second ticket: a write that
// timed out may have been applied, so it gets "check first" instead (describeTicketFailure).
bool isRetryable(const LookupOutcome &outcome)
{
    if (outcome.state != LookupOutcome::State::Answered || outcome.result.success)
        return false;
    if (isTicket(outcome))
        return outcome.result.code == ResultCode::ToolUnavailable;
    const FailureTable::Row *row = FailureTable::instance().find(outcome.result.code);
    return row && row->retryable;
}

// The executor's rule for order ids; a ticket refused for any other reason names no order.
bool isValidOrderId(const QString &orderId)
{
    static const QRegularExpression re(QStringLiteral("^A\\d{4,10}$"));
    return re.match(orderId).hasMatch();
}

// The most recent event by its timestamp text (ISO times sort as text); the later one in
// the list wins a tie, since backends append events as they happen.
QJsonObject latestEvent(const QJsonArray &events)
{
    QJsonObject latest;
    for (const QJsonValue &value : events) {
        const QJsonObject event = value.toObject();
        if (event.isEmpty())
            continue;
        if (latest.isEmpty() || field(event, "time") >= field(latest, "time"))
            latest = event;
    }
    return latest;
}

} // namespace

QString LookupAnswerWriter::shown(const QJsonObject &object, const char *key) const
{
    const QString english = field(object, key);
    const QString zh = valueText(object.value(ChineseFields::keyFor(QLatin1String(key))));
    if (chinese())
        return zh.isEmpty() ? english : zh;
    return english.isEmpty() ? zh : english;
}

QString LookupAnswerWriter::text(const char *en, const char *zh) const
{
    return QString::fromUtf8(chinese() ? zh : en);
}

QStringList LookupAnswerWriter::chunks(const QStringList &sentences) const
{
    QStringList result;
    for (const QString &sentence : sentences) {
        if (!result.isEmpty() && !chinese())
            result.append(QLatin1Char(' ') + sentence);
        else
            result.append(sentence);
    }
    return result;
}

QStringList LookupAnswerWriter::chunks(const Answer &answer) const
{
    qsizetype facts = 0;
    for (const QStringList &block : answer.blocks)
        facts += block.size();
    if (facts <= 3 && answer.blocks.size() <= 1) {
        QStringList sentences = answer.blocks.value(0);
        sentences += answer.closing;
        return chunks(sentences);
    }
    QStringList result;
    const auto line = [&result](const QString &text) {
        result.append(result.isEmpty() ? text : QLatin1Char('\n') + text);
    };
    if (answer.blocks.size() == 1) {
        const QStringList &block = answer.blocks.first();
        line(block.first());
        line(QString()); // the list is a paragraph of its own
        for (const QString &detail : block.mid(1))
            line(QStringLiteral("- ") + detail);
    } else {
        for (const QStringList &block : answer.blocks) {
            line(QStringLiteral("- ") + block.first());
            for (const QString &detail : block.mid(1))
                line(QStringLiteral("  - ") + detail);
        }
    }
    if (!answer.closing.isEmpty()) {
        line(QString());
        const QStringList closing = chunks(answer.closing);
        result.append(QLatin1Char('\n') + closing.first());
        result.append(closing.mid(1));
    }
    return result;
}

QString LookupAnswerWriter::lookupName(const LookupOutcome &outcome) const
{
    const QString &subject = outcome.subject;
    const bool has = !subject.isEmpty();
    if (const std::optional<LookupKind> kind = lookupKindForTool(outcome.toolName)) {
        switch (*kind) {
        case LookupKind::OrderStatus:
            return has ? text("the status lookup for order %1", "订单 %1 的状态查询").arg(subject)
                       : text("the order status lookup", "订单状态查询");
        case LookupKind::Logistics:
            return has
                ? text("the logistics lookup for order %1", "订单 %1 的物流查询").arg(subject)
                : text("the logistics lookup", "物流查询");
        case LookupKind::Inventory:
            return has ? text("the stock lookup for %1", "商品 %1 的库存查询").arg(subject)
                       : text("the stock lookup", "库存查询");
        }
    }
    if (isTicket(outcome)) {
        return has ? text("the ticket request for order %1", "订单 %1 的售后工单请求").arg(subject)
                   : text("the ticket request", "售后工单请求");
    }
    if (outcome.toolName.isEmpty())
        return text("a tool call", "一次工具调用");
    return text("the %1 call", "工具 %1 的调用").arg(outcome.toolName);
}

LookupAnswerWriter::Answer LookupAnswerWriter::answer(const QList<LookupOutcome> &outcomes) const
{
    // Facts first, then each part that could not be looked up in a sentence of its own, so
    // that a failure never reads as part of a fact.
    QList<QStringList> facts;
    QStringList failures;
    bool retryLater = false;
    // A ticket whose fate is unknown must not be covered by a general "try again later".
    bool ticketToCheck = false;
    // Calls refused by the bound on calls per message are said once, as one sentence: a
    // question naming hundreds of orders must not become hundreds of sentences.
    int notRun = 0;
    for (const LookupOutcome &outcome : outcomes) {
        if (outcome.state == LookupOutcome::State::Answered
            && outcome.result.code == ResultCode::ToolCallLimit) {
            ++notRun;
            continue;
        }
        const bool succeeded = outcome.state == LookupOutcome::State::Answered
            && outcome.result.success;
        if (isTicket(outcome) && succeeded)
            facts.append(describeTicket(outcome));
        else if (isTicket(outcome))
            failures.append(describeTicketFailure(outcome));
        else if (succeeded)
            facts.append(describeSuccess(outcome));
        else
            failures.append(describeFailure(outcome));
        retryLater = retryLater || isRetryable(outcome);
        ticketToCheck = ticketToCheck
            || (isTicket(outcome) && !outcome.result.success && !isRetryable(outcome));
    }

    Answer written;
    written.blocks = facts;
    QStringList said;
    for (const QString &sentence : std::as_const(failures)) {
        if (said.contains(sentence)) // "order not found" from two lookups is said once
            continue;
        said.append(sentence);
        written.blocks.append({sentence});
    }
    QStringList &sentences = written.closing;
    if (notRun > 0) {
        sentences.append(
            (notRun == 1 ? text("One more lookup was not run: the question asked for more "
                                "than the console looks up at once.",
                                "还有 1 项查询未执行：该问题一次要求的查询超过了控制台的上限。")
                         : text("%1 more lookups were not run: the question asked for more "
                                "than the console looks up at once.",
                                "还有 %1 项查询未执行：该问题一次要求的查询超过了控制台的上限。")
                               .arg(notRun))
            + (chinese() ? QString() : QStringLiteral(" "))
            + text("Please ask about fewer orders or products at a time.",
                   "请分几次询问，每次少问几个订单或商品。"));
    }
    if (retryLater && ticketToCheck)
        sentences.append(text("The lookups that failed can be tried again later.",
                              "查询失败的部分可以稍后重试。"));
    else if (retryLater)
        sentences.append(text("Please try again later.", "请稍后重试。"));
    if (written.blocks.isEmpty() && sentences.isEmpty())
        sentences.append(text("I have no lookup results to answer with.", "没有可用的查询结果。"));
    return written;
}

QStringList LookupAnswerWriter::describeSuccess(const LookupOutcome &outcome) const
{
    const std::optional<LookupKind> kind = lookupKindForTool(outcome.toolName);
    if (!kind)
        return {capitalized(text("%1 succeeded.", "%1已成功。").arg(lookupName(outcome)))};
    const QJsonObject data = outcome.result.data.toObject();
    if (data.isEmpty()) {
        return {capitalized(
            text("%1 succeeded but returned no details.", "%1成功，但没有返回详细信息。")
                .arg(lookupName(outcome)))};
    }
    switch (*kind) {
    case LookupKind::OrderStatus:
        return describeOrder(data, outcome.subject);
    case LookupKind::Logistics:
        return describeLogistics(data, outcome.subject);
    case LookupKind::Inventory:
        return describeInventory(data, outcome.subject);
    }
    return {};
}

QStringList LookupAnswerWriter::describeOrder(const QJsonObject &data,
                                              const QString &subject) const
{
    QString id = field(data, "orderId");
    if (id.isEmpty())
        id = subject;
    const QString status = field(data, "status");

    QString state;
    if (status == QLatin1String("PENDING_PAYMENT"))
        state = text("is awaiting payment", "待付款");
    else if (status == QLatin1String("PAID"))
        state = text("has been paid and is waiting to be shipped", "已付款，等待发货");
    else if (status == QLatin1String("SHIPPED"))
        state = text("has been shipped", "已发货");
    else if (status == QLatin1String("DELIVERED"))
        state = text("has been delivered", "已送达");
    else if (status == QLatin1String("CANCELLED"))
        state = text("has been cancelled", "已取消");
    else if (!status.isEmpty())
        state = text("has the status %1", "的状态为 %1").arg(status);

    QStringList sentences;
    const QString order = id.isEmpty() ? text("The order", "该订单")
                                       : text("Order %1", "订单 %1 ").arg(id);
    if (!state.isEmpty()) {
        sentences.append(chinese() ? order + state + QStringLiteral("。")
                                   : order + QLatin1Char(' ') + state + QLatin1Char('.'));
    } else {
        sentences.append(id.isEmpty()
                             ? text("The order was found, but the result does not include its "
                                    "status.",
                                    "已查到该订单，但结果中没有状态信息。")
                             : text("Order %1 was found, but the result does not include its "
                                    "status.",
                                    "已查到订单 %1，但结果中没有状态信息。")
                                   .arg(id));
    }

    QStringList details;
    if (const QString created = field(data, "createdAt"); !created.isEmpty())
        details.append(text("placed on %1", "下单时间：%1").arg(timeText(created)));
    if (const QString total = field(data, "totalAmount"); !total.isEmpty()) {
        const QString currency = field(data, "currency");
        const QString amount = currency.isEmpty() ? total : total + QLatin1Char(' ') + currency;
        details.append(text("total: %1", "金额：%1").arg(amount));
    }
    QStringList items;
    for (const QJsonValue &value : data.value(QLatin1String("items")).toArray()) {
        const QJsonObject item = value.toObject();
        const QString name = shown(item, "name");
        const QString sku = field(item, "sku");
        QString line = name.isEmpty() ? sku : name;
        if (!name.isEmpty() && !sku.isEmpty())
            line += text(" (%1)", "（%1）").arg(sku);
        if (const QString quantity = field(item, "quantity"); !quantity.isEmpty())
            line += text(" × %1", "× %1").arg(quantity);
        if (!line.isEmpty())
            items.append(line);
    }
    if (!items.isEmpty()) {
        details.append(
            text("items: %1", "商品：%1")
                .arg(items.join(chinese() ? QStringLiteral("、") : QStringLiteral(", "))));
    }
    for (const QString &detail : std::as_const(details))
        sentences.append(capitalized(detail) + text(".", "。"));
    return sentences;
}

QStringList LookupAnswerWriter::describeLogistics(const QJsonObject &data,
                                                  const QString &subject) const
{
    QString id = field(data, "orderId");
    if (id.isEmpty())
        id = subject;
    const QString status = field(data, "status");
    const QString carrier = shown(data, "carrier");
    const QString tracking = field(data, "trackingNumber");

    QString state;
    if (status == QLatin1String("IN_TRANSIT"))
        state = text("is in transit", "运输中");
    else if (status == QLatin1String("OUT_FOR_DELIVERY"))
        state = text("is out for delivery", "派送中");
    else if (status == QLatin1String("DELIVERED"))
        state = text("has been delivered", "已签收");
    else if (!status.isEmpty())
        state = text("has the logistics status %1", "的物流状态为 %1").arg(status);
    else
        state = text("has a logistics record", "已有物流记录");

    QStringList sentences;
    QString first = id.isEmpty() ? text("The order", "该订单")
                                 : text("Order %1", "订单 %1 ").arg(id);
    first += chinese() ? state : QLatin1Char(' ') + state;
    if (!carrier.isEmpty())
        first += text(" with %1", "，承运商 %1").arg(carrier);
    if (!tracking.isEmpty())
        first += text(" (tracking number %1)", "，运单号 %1").arg(tracking);
    sentences.append(first + text(".", "。"));

    const QString location = shown(data, "currentLocation");
    const QString updated = timeText(field(data, "updatedAt"));
    if (!location.isEmpty()) {
        QString where = text("Current location: %1", "当前位置：%1").arg(location);
        if (!updated.isEmpty())
            where += text(" (updated %1)", "（更新于 %1）").arg(updated);
        sentences.append(where + text(".", "。"));
    } else if (!updated.isEmpty()) {
        sentences.append(text("Last updated %1.", "最近更新于 %1。").arg(updated));
    }

    const QJsonObject event = latestEvent(data.value(QLatin1String("events")).toArray());
    if (const QString description = shown(event, "description"); !description.isEmpty()) {
        // Time and place are left out when the sentence before already said them.
        QStringList when;
        const QString time = timeText(field(event, "time"));
        if (!time.isEmpty() && time != updated)
            when.append(time);
        if (const QString place = shown(event, "location"); !place.isEmpty() && place != location)
            when.append(place);
        QString sentence = text("Latest event", "最新动态");
        if (!when.isEmpty()) {
            sentence += chinese()
                ? QStringLiteral("（") + when.join(QStringLiteral("，")) + QStringLiteral("）")
                : QStringLiteral(" (") + when.join(QStringLiteral(", ")) + QLatin1Char(')');
        }
        sentences.append(sentence + text(": %1.", "：%1。").arg(description));
    }
    return sentences;
}

QStringList LookupAnswerWriter::describeInventory(const QJsonObject &data,
                                                  const QString &subject) const
{
    QString sku = field(data, "sku");
    if (sku.isEmpty())
        sku = subject;
    const QString name = shown(data, "name");
    const QString available = field(data, "available");
    const QString status = field(data, "status");
    const QString warehouse = shown(data, "warehouse");

    QString label;
    if (chinese()) {
        label = QStringLiteral("商品");
        if (!sku.isEmpty())
            label += QLatin1Char(' ') + sku;
        label += name.isEmpty() ? QStringLiteral(" ") : QStringLiteral("（%1）").arg(name);
    } else {
        label = sku.isEmpty() ? (name.isEmpty() ? QStringLiteral("The product") : name) : sku;
        if (!sku.isEmpty() && !name.isEmpty())
            label += QStringLiteral(" (%1)").arg(name);
    }

    QString sentence;
    if (status == QLatin1String("IN_STOCK")) {
        sentence = label + text(" is in stock", "有货");
        if (!available.isEmpty())
            sentence += text(": %1 available", "，可用库存 %1 件").arg(available);
    } else if (status == QLatin1String("LOW_STOCK")) {
        sentence = label + text(" is low on stock", "库存紧张");
        if (!available.isEmpty())
            sentence += text(": only %1 left", "，仅剩 %1 件").arg(available);
    } else if (status == QLatin1String("OUT_OF_STOCK")) {
        sentence = label + text(" is out of stock", "目前缺货");
    } else if (!status.isEmpty()) {
        sentence = label + text(" has the stock status %1", "的库存状态为 %1").arg(status);
        if (!available.isEmpty())
            sentence += text(", %1 available", "，可用 %1 件").arg(available);
    } else if (!available.isEmpty()) {
        sentence = label + text(": %1 available", "可用库存 %1 件").arg(available);
    } else {
        sentence = chinese()
            ? QStringLiteral("已查到%1，但结果中没有库存数据").arg(label.trimmed())
            : label
                + QStringLiteral(" was found, but the result does not "
                                 "include stock figures");
    }
    if (!warehouse.isEmpty())
        sentence += text(" (warehouse: %1)", "（仓库：%1）").arg(warehouse);
    return {sentence + text(".", "。")};
}

QString LookupAnswerWriter::describeInvalidArgument(const LookupOutcome &outcome) const
{
    const std::optional<LookupKind> kind = lookupKindForTool(outcome.toolName);
    const QString &subject = outcome.subject;
    if (!kind) {
        return capitalized(
            text("The arguments of %1 were invalid.", "%1的参数无效。").arg(lookupName(outcome)));
    }
    if (*kind == LookupKind::Inventory) {
        return subject.isEmpty() ? text("The SKU given is not valid (SKUs look like SKU-100).",
                                        "提供的商品 SKU 无效（格式如 SKU-100）。")
                                 : text("“%1” is not a valid SKU (SKUs look like SKU-100).",
                                        "“%1”不是有效的商品 SKU（格式如 SKU-100）。")
                                       .arg(subject);
    }
    const QString rule = text("order numbers are the letter A followed by 4–10 digits, "
                              "for example A1001",
                              "订单号为大写字母 A 加 4–10 位数字，例如 A1001");
    return subject.isEmpty()
        ? text("The order number given is not valid: %1.", "提供的订单号无效：%1。").arg(rule)
        : text("“%1” is not a valid order number: %2.", "“%1”不是有效的订单号：%2。")
              .arg(subject, rule);
}

QString LookupAnswerWriter::describeFailure(const LookupOutcome &outcome) const
{
    const QString name = lookupName(outcome);
    const QString &subject = outcome.subject;
    const auto sentence = [&](const char *en, const char *zh) {
        return capitalized(text(en, zh).arg(name));
    };

    switch (outcome.state) {
    case LookupOutcome::State::Malformed:
        return sentence("%1 returned a result I cannot read, so I cannot tell you anything "
                        "about it.",
                        "%1返回了无法识别的结果，无法提供相关信息。");
    case LookupOutcome::State::Missing:
        return sentence("%1 returned no result, so I cannot tell you anything about it.",
                        "%1没有返回结果，无法提供相关信息。");
    case LookupOutcome::State::Answered:
        break;
    }

    // The failure table's staff column: "%1" is the call's name, or its subject when the
    // row has a sentence about one.
    const FailureTable::Row *row = FailureTable::instance().find(outcome.result.code);
    if (row && row->code == ResultCode::InvalidArgument)
        return describeInvalidArgument(outcome);
    if (row && !row->staffAboutSubject.isNull() && !subject.isEmpty())
        return row->staffAboutSubject.in(m_language).arg(subject);
    if (row && !row->staff.isNull()) {
        const QString staff = row->staff.in(m_language);
        return staff.contains(QLatin1String("%1")) ? capitalized(staff.arg(name)) : staff;
    }
    if (row && row->nothingFound) // a code this console does not know that says so
        return sentence("%1 found nothing.", "%1没有查到记录。");
    return sentence("%1 failed, so I cannot tell you anything about it.",
                    "%1失败，无法提供相关信息。");
}

QString LookupAnswerWriter::categoryName(const QString &category) const
{
    if (category == QLatin1String("DAMAGED"))
        return text("damaged item", "商品破损");
    if (category == QLatin1String("REFUND"))
        return text("refund", "退款");
    if (category == QLatin1String("RETURN"))
        return text("return", "退货");
    if (category == QLatin1String("EXCHANGE"))
        return text("exchange", "换货");
    if (category == QLatin1String("MISSING_ITEM"))
        return text("missing item", "商品缺件");
    if (category == QLatin1String("OTHER"))
        return text("other issue", "其他问题");
    return category;
}

QStringList LookupAnswerWriter::describeTicket(const LookupOutcome &outcome) const
{
    const QJsonObject data = outcome.result.data.toObject();
    QString order = field(data, "orderId");
    if (order.isEmpty())
        order = outcome.subject;
    const QString ticketId = field(data, "ticketId");
    const QString category = categoryName(field(data, "category"));
    const QString forOrder = order.isEmpty() ? QString()
                                             : text(" for order %1", "订单 %1 的").arg(order);

    // A replay returns the ticket an identical earlier request made: saying "created" would
    // make the staff member believe there are now two.
    if (data.value(QLatin1String("replayed")).toBool()) {
        if (ticketId.isEmpty()) {
            return {text("The ticket%1 already existed; no new ticket was created.",
                         "%1售后工单此前已创建，本次没有新建工单。")
                        .arg(forOrder)};
        }
        return {chinese() ? QStringLiteral("%1售后工单 %2 此前已创建，本次没有新建工单。")
                                .arg(forOrder, ticketId)
                          : QStringLiteral("Ticket %1%2 already existed; no new ticket was "
                                           "created.")
                                .arg(ticketId, forOrder)};
    }

    QString sentence;
    if (chinese()) {
        sentence = order.isEmpty() ? QStringLiteral("已创建售后工单")
                                   : QStringLiteral("已为订单 %1 创建售后工单").arg(order);
        if (!ticketId.isEmpty())
            sentence += QLatin1Char(' ') + ticketId;
        if (!category.isEmpty())
            sentence += QStringLiteral("（%1）").arg(category);
        sentence += QStringLiteral("。");
    } else {
        sentence = ticketId.isEmpty() ? QStringLiteral("A ticket was created")
                                      : QStringLiteral("Ticket %1 was created").arg(ticketId);
        if (!order.isEmpty())
            sentence += QStringLiteral(" for order %1").arg(order);
        if (!category.isEmpty())
            sentence += QStringLiteral(" (%1)").arg(category);
        sentence += QLatin1Char('.');
    }
    QStringList sentences{sentence};
    if (ticketId.isEmpty()) {
        sentences.append(
            text("The result does not include the ticket number.", "结果中没有工单号。"));
    }
    return sentences;
}

// A failed write is told by what it proves: refused before anything was applied ("no ticket
// was created"), or not known either way ("check before trying again"). Whatever does not
// prove the first is the second, so that a retry never makes a second ticket unnoticed.
QString LookupAnswerWriter::describeTicketFailure(const LookupOutcome &outcome) const
{
    const QString &order = outcome.subject;
    const QString forOrder = order.isEmpty() ? QString()
                                             : text(" for order %1", "为订单 %1 ").arg(order);
    const QString orderTickets = order.isEmpty()
        ? text("the order's tickets", "该订单的工单")
        : text("the tickets of order %1", "订单 %1 的工单").arg(order);
    const QString unknown
        = text("It is not known whether the ticket request%1 went through. Please check %2 "
               "before trying again.",
               "无法确认是否已%1提交售后工单。请先查看%2，再决定是否重试。")
              .arg(forOrder, orderTickets);
    if (outcome.state != LookupOutcome::State::Answered)
        return unknown; // an unreadable or missing result says nothing about the write

    using Code = ResultCode::Code;
    const Code code = outcome.result.code;
    if (code == SupportCode::OrderNotFound) {
        return order.isEmpty() ? text("The order was not found, so no ticket was created.",
                                      "未找到该订单，未创建工单。")
                               : text("Order %1 was not found, so no ticket was created.",
                                      "未找到订单 %1，未创建工单。")
                                     .arg(order);
    }
    // The mechanism's codes; any other (a support code a write does not answer with, a code
    // this console does not know) proves nothing either way.
    switch (code) {
    case Code::ConfirmationDeclined:
        if (outcome.result.nobodyWasAsked())
            return text("No ticket was created: nobody could be asked to confirm it.",
                        "未创建工单：无法请客服确认。");
        return text("No ticket was created: the staff member declined.",
                    "未创建工单：客服已拒绝。");
    case Code::IdempotencyConflict:
        return text("This ticket request was already made with different details, so no new "
                    "ticket was created%1.",
                    "该工单请求此前已以不同的内容提交，本次没有%1新建工单。")
            .arg(forOrder);
    case Code::OperationInProgress:
        return text("The same ticket request%1 is still being processed, so it was not sent "
                    "again. Please check %2 in a moment.",
                    "%1提交的相同工单请求仍在处理中，本次没有重复提交。请稍后查看%2。")
            .arg(forOrder, orderTickets);
    case Code::InvalidArgument:
        if (!isValidOrderId(order)) {
            const QString rule = text("order numbers are the letter A followed by 4–10 digits, "
                                      "for example A1001",
                                      "订单号为大写字母 A 加 4–10 位数字，例如 A1001");
            return order.isEmpty()
                ? text("No ticket was created: the order number given is not valid (%1).",
                       "未创建工单：提供的订单号无效（%1）。")
                      .arg(rule)
                : text("No ticket was created: “%1” is not a valid order number (%2).",
                       "未创建工单：“%1”不是有效的订单号（%2）。")
                      .arg(order, rule);
        }
        return text(
                   "The ticket request%1 was not accepted: the category or the description "
                   "is invalid (the description takes 1–500 characters). No ticket was "
                   "created.",
                   "%1提交的售后工单未被接受：类别或描述无效（描述为 1–500 个字符）。未创建工单。")
            .arg(forOrder);
    // The executor returns TOOL_UNAVAILABLE for a write only when nothing was sent or the
    // backend refused it before processing; the retry hint is added by answer().
    case Code::ToolUnavailable:
        return text("The ticket service is temporarily unavailable; no ticket was created%1.",
                    "工单服务暂时不可用，未%1创建工单。")
            .arg(forOrder);
    case Code::ContextMissing:
    case Code::UnknownTool:
    case Code::ToolAccessDenied:
    case Code::SignInRequired:
    case Code::ToolRejected:
        return capitalized(text("%1 could not be carried out, so no ticket was created.",
                                "%1未能执行，未创建工单。")
                               .arg(lookupName(outcome)));
    // EXECUTION_STATUS_UNKNOWN, and a timeout, a cancellation or an internal error that may
    // have struck after the backend committed the ticket; and anything else a write cannot
    // answer, which proves nothing either way.
    case Code::ExecutionStatusUnknown:
    case Code::ToolTimeout:
    case Code::Cancelled:
    case Code::InternalError:
    case Code::Ok:
    case Code::ToolCallLimit:
    case Code::Unrecognized:
    case Code::UnrecognizedNotFound:
        break;
    }
    return unknown;
}

QStringList LookupAnswerWriter::askForIdentifiers(const SupportQuestion &question) const
{
    if (question.asksAboutStock && !question.asksAboutOrders()) {
        return {text("To check stock I need a SKU, for example SKU-100.",
                     "查询库存需要商品 SKU，例如 SKU-100。"),
                text("Which SKU should I look up?", "请问要查询哪个 SKU？")};
    }
    if (question.asksAboutOrders() && !question.asksAboutStock) {
        return {text("To look that up I need an order number: the letter A followed by 4–10 "
                     "digits, for example A1001.",
                     "查询订单需要订单号：大写字母 A 加 4–10 位数字，例如 A1001。"),
                text("Which order is it?", "请问是哪个订单？")};
    }
    return {
        text("I can look up order status, logistics and stock.",
             "我可以查询订单状态、物流和库存。"),
        text("Please give me an order number (the letter A followed by 4–10 digits, for "
             "example A1001) or a SKU (for example SKU-100).",
             "请提供订单号（大写字母 A 加 4–10 位数字，例如 A1001）或商品 SKU（例如 SKU-100）。")};
}

QStringList LookupAnswerWriter::askWhichSubject(const QList<NamedSubject> &candidates) const
{
    QStringList names;
    for (const NamedSubject &candidate : candidates)
        names.append(candidate.subject);
    const bool orders = std::all_of(candidates.cbegin(), candidates.cend(),
                                    [](const NamedSubject &c) { return c.isOrder; });
    const bool skus = std::none_of(candidates.cbegin(), candidates.cend(),
                                   [](const NamedSubject &c) { return c.isOrder; });
    const QString listed = names.join(text(", ", "、"));
    QString earlier;
    if (orders) {
        earlier = text("More than one order came up earlier: %1.", "之前提到了多个订单：%1。");
    } else if (skus) {
        earlier = text("More than one SKU came up earlier: %1.", "之前提到了多个 SKU：%1。");
    } else {
        earlier = text("More than one order or SKU came up earlier: %1.",
                       "之前提到了多个订单或 SKU：%1。");
    }
    return {earlier.arg(listed), text("Which one do you mean?", "请问指的是哪一个？")};
}

QStringList LookupAnswerWriter::ticketNotOffered() const
{
    return {text("This console offers no ticket tool, so I cannot create a ticket here.",
                 "当前控制台未提供售后工单工具，无法在这里创建工单。")};
}

QStringList LookupAnswerWriter::askForTicketOrder() const
{
    return {text("To create an after-sales ticket I need the order number: the letter A "
                 "followed by 4–10 digits, for example A1001.",
                 "创建售后工单需要订单号：大写字母 A 加 4–10 位数字，例如 A1001。"),
            text("Which order is the ticket for?", "请问要为哪个订单创建工单？")};
}

QStringList LookupAnswerWriter::askForTicketReason(const QString &orderId) const
{
    return {text("To file the ticket for order %1 I need to know what it is about, for example a "
                 "damaged item, a return, a refund, an exchange or a missing item.",
                 "为订单 %1 创建售后工单需要说明问题，例如商品破损、退货、退款、换货或缺件。")
                .arg(orderId),
            text("What is the ticket for?", "请问这张工单是什么问题？")};
}

QStringList LookupAnswerWriter::lookupsNotOffered(const QList<PlannedLookup> &lookups) const
{
    QList<LookupKind> kinds;
    for (const PlannedLookup &lookup : lookups) {
        if (!kinds.contains(lookup.kind))
            kinds.append(lookup.kind);
    }
    QStringList sentences;
    for (const LookupKind kind : std::as_const(kinds)) {
        QString what;
        switch (kind) {
        case LookupKind::OrderStatus:
            what = text("order status", "订单状态");
            break;
        case LookupKind::Logistics:
            what = text("logistics", "物流");
            break;
        case LookupKind::Inventory:
            what = text("stock", "库存");
            break;
        }
        sentences.append(text("This console offers no %1 lookup, so I cannot look that up.",
                              "当前控制台未提供%1查询工具，无法查询这部分。")
                             .arg(what));
    }
    return sentences;
}

} // namespace AgentConsole::Internal
