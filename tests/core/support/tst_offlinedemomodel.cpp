#include "offlinemodeltesting.h"

#include "core/support/offlinedemomodel.h"
#include "core/resilience/toolresult.h"
#include "core/support/supportfailures.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QPointer>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QTest>
#include <QTextBlock>
#include <QTextDocument>
#include <QTextList>

#include <memory>

using namespace AgentConsole;
using AgentConsole::Testing::supportTools;

Q_DECLARE_METATYPE(AgentConsole::ChatRequest)

namespace {

ChatRequest planningRequest(const QString &question, QList<ToolDescriptor> tools = supportTools())
{
    return {{ChatMessage::system(QStringLiteral("You are a support agent.")),
             ChatMessage::user(question)},
            std::move(tools),
            {}};
}

// "queryLogistics(A1001)" for a call whose arguments are {"orderId":"A1001"};
// "createTicket(A1001|DAMAGED|the mug arrived broken)" for a ticket.
QString describeCall(const ModelToolCall &call)
{
    const QJsonObject arguments = QJsonDocument::fromJson(call.arguments.toUtf8()).object();
    if (call.name == QLatin1String("createTicket")) {
        return QStringLiteral("createTicket(%1|%2|%3)")
            .arg(arguments.value(QStringLiteral("orderId")).toString(),
                 arguments.value(QStringLiteral("category")).toString(),
                 arguments.value(QStringLiteral("description")).toString());
    }
    QString value = arguments.value(QStringLiteral("orderId")).toString();
    if (value.isEmpty())
        value = arguments.value(QStringLiteral("sku")).toString();
    return call.name + QLatin1Char('(') + value + QLatin1Char(')');
}

ModelToolCall parseCall(const QString &description, int index)
{
    static const QRegularExpression shape(QStringLiteral("^(\\w+)\\((.*)\\)$"));
    const QRegularExpressionMatch match = shape.match(description);
    Q_ASSERT(match.hasMatch());
    const QString name = match.captured(1);
    const QString key = name == QLatin1String("queryInventory") ? QStringLiteral("sku")
                                                                  : QStringLiteral("orderId");
    return {QStringLiteral("call_%1").arg(index), name,
            QString::fromUtf8(QJsonDocument(QJsonObject{{key, match.captured(2)}})
                                  .toJson(QJsonDocument::Compact))};
}

QString toolJson(const ToolResult &result)
{
    return QString::fromUtf8(QJsonDocument(result.toJson()).toJson(QJsonDocument::Compact));
}

QJsonObject orderA1001()
{
    return QJsonObject{
        {QStringLiteral("orderId"), QStringLiteral("A1001")},
        {QStringLiteral("status"), QStringLiteral("SHIPPED")},
        {QStringLiteral("createdAt"), QStringLiteral("2026-11-20")},
        {QStringLiteral("totalAmount"), QStringLiteral("299.00")},
        {QStringLiteral("currency"), QStringLiteral("CNY")},
        {QStringLiteral("items"),
         QJsonArray{QJsonObject{{QStringLiteral("sku"), QStringLiteral("SKU-100")},
                                {QStringLiteral("name"), QStringLiteral("Ceramic mug set")},
                                {QStringLiteral("quantity"), 2}}}}};
}

QJsonObject logisticsA1001()
{
    return QJsonObject{
        {QStringLiteral("orderId"), QStringLiteral("A1001")},
        {QStringLiteral("carrier"), QStringLiteral("SF Express")},
        {QStringLiteral("trackingNumber"), QStringLiteral("SF10010001")},
        {QStringLiteral("status"), QStringLiteral("IN_TRANSIT")},
        {QStringLiteral("currentLocation"), QStringLiteral("Shanghai Pudong Hub")},
        {QStringLiteral("updatedAt"), QStringLiteral("2026-11-28T09:30:00")},
        {QStringLiteral("events"),
         QJsonArray{QJsonObject{{QStringLiteral("time"), QStringLiteral("2026-11-27T18:00:00")},
                                {QStringLiteral("location"), QStringLiteral("Suzhou")},
                                {QStringLiteral("description"), QStringLiteral("Picked up")}},
                    QJsonObject{{QStringLiteral("time"), QStringLiteral("2026-11-28T09:30:00")},
                                {QStringLiteral("location"),
                                 QStringLiteral("Shanghai Pudong Hub")},
                                {QStringLiteral("description"),
                                 QStringLiteral("Arrived at sorting hub")}}}}};
}

QJsonObject inventorySku200()
{
    return QJsonObject{{QStringLiteral("sku"), QStringLiteral("SKU-200")},
                       {QStringLiteral("name"), QStringLiteral("Bamboo cutting board")},
                       {QStringLiteral("available"), 3},
                       {QStringLiteral("status"), QStringLiteral("LOW_STOCK")},
                       {QStringLiteral("warehouse"), QStringLiteral("Suzhou Warehouse")}};
}

// The fixtures as the demo store sends them since issue #41 §7: every value in words with its
// Chinese under the key + "Zh". Above, the same data as a REST backend that has no Chinese.
QJsonObject orderA1001Bilingual()
{
    QJsonObject order = orderA1001();
    QJsonObject item = order.value(QLatin1String("items")).toArray().first().toObject();
    item.insert(QStringLiteral("nameZh"), QStringLiteral("陶瓷马克杯套装"));
    order.insert(QStringLiteral("items"), QJsonArray{item});
    return order;
}

QJsonObject logisticsA1001Bilingual()
{
    QJsonObject data = logisticsA1001();
    data.insert(QStringLiteral("carrierZh"), QStringLiteral("顺丰速运"));
    data.insert(QStringLiteral("currentLocationZh"), QStringLiteral("上海浦东转运中心"));
    QJsonArray events = data.value(QLatin1String("events")).toArray();
    QJsonObject picked = events.at(0).toObject();
    picked.insert(QStringLiteral("locationZh"), QStringLiteral("苏州"));
    picked.insert(QStringLiteral("descriptionZh"), QStringLiteral("已揽收"));
    QJsonObject arrived = events.at(1).toObject();
    arrived.insert(QStringLiteral("locationZh"), QStringLiteral("上海浦东转运中心"));
    arrived.insert(QStringLiteral("descriptionZh"), QStringLiteral("已到达分拣中心"));
    data.insert(QStringLiteral("events"), QJsonArray{picked, arrived});
    return data;
}

QJsonObject inventorySku200Bilingual()
{
    QJsonObject data = inventorySku200();
    data.insert(QStringLiteral("nameZh"), QStringLiteral("竹制砧板"));
    data.insert(QStringLiteral("warehouseZh"), QStringLiteral("苏州仓"));
    return data;
}

QString ok(const QJsonObject &data)
{
    return toolJson(ToolResult::ok(QStringLiteral("OK"), data));
}

QString failed(ResultCode::Code code)
{
    return toolJson(ToolResult::failure(code, Language::English));
}

// The ticket the backends return; `replayed` marks the answer to a repeated identical request.
QString ticketCreated(bool replayed = false)
{
    QJsonObject ticket{{QStringLiteral("ticketId"), QStringLiteral("T-000001")},
                       {QStringLiteral("orderId"), QStringLiteral("A1001")},
                       {QStringLiteral("category"), QStringLiteral("DAMAGED")},
                       {QStringLiteral("description"), QStringLiteral("the mug arrived broken")},
                       {QStringLiteral("status"), QStringLiteral("OPEN")},
                       {QStringLiteral("createdAt"), QStringLiteral("2026-11-28T10:00:00")}};
    if (replayed)
        ticket.insert(QStringLiteral("replayed"), true);
    return ok(ticket);
}

bool hasHan(const QString &text)
{
    static const QRegularExpression han(QStringLiteral("[\\x{4E00}-\\x{9FFF}]"));
    return han.match(text).hasMatch();
}

// Everything one reply did, in order: "delta:<text>" and "finished".
struct Delivery
{
    QStringList events;
    QStringList deltas;
    ChatResponse response;
    bool finishedBeforeEventLoop = false;
    int finishedCount = 0;
};

} // namespace

class tst_OfflineDemoModel : public QObject
{
    Q_OBJECT

private:
    // Runs one request to completion through the event loop.
    bool deliver(const ChatRequest &request, Delivery *delivery);
    QString answerFor(const QString &question, const QStringList &calls,
                      const QStringList &results);

private slots:
    void modelName();

    void planning_data();
    void planning();
    void planningCallShape();
    void planningOnlyOfferedTools_data();
    void planningOnlyOfferedTools();
    void noIdentifiers_data();
    void noIdentifiers();
    void ticketPlanning_data();
    void ticketPlanning();
    void ticketPlanningWithoutTicket_data();
    void ticketPlanningWithoutTicket();

    void answers_data();
    void answers();
    void answerMatchesResultsByCallId();
    void severalFactsAreAMarkdownList();
    void answerAfterSeveralRounds();
    void answeringNeverLoops();
    void answerWithoutAnyUserMessage();
    void ticketAnswers_data();
    void ticketAnswers();

    void determinism_data();
    void determinism();
    void asyncDelivery_data();
    void asyncDelivery();

    void slowerStreaming();
    void abortBeforeFirstChunk();
    void abortFromDeltaSlot();
    void abortAfterFinishedIsNoOp();
    void deleteFromDeltaSlot();
};

bool tst_OfflineDemoModel::deliver(const ChatRequest &request, Delivery *delivery)
{
    OfflineDemoModel model;
    std::unique_ptr<ChatReply> reply(model.complete(request));
    connect(reply.get(), &ChatReply::contentDelta, this, [delivery](const QString &text) {
        delivery->events.append(QStringLiteral("delta:") + text);
        delivery->deltas.append(text);
    });
    connect(reply.get(), &ChatReply::finished, this, [delivery] {
        delivery->events.append(QStringLiteral("finished"));
        ++delivery->finishedCount;
    });
    delivery->finishedBeforeEventLoop = reply->isFinished() || !delivery->events.isEmpty();
    // A reply that (wrongly) finished inside complete() is reported by asyncDelivery, not
    // by a 5 s timeout in every other test.
    QSignalSpy finished(reply.get(), &ChatReply::finished);
    if (!delivery->finishedBeforeEventLoop && !finished.wait(5000))
        return false;
    delivery->response = reply->response();
    return true;
}

QString tst_OfflineDemoModel::answerFor(const QString &question, const QStringList &calls,
                                        const QStringList &results)
{
    QList<ModelToolCall> toolCalls;
    for (const QString &call : calls)
        toolCalls.append(parseCall(call, int(toolCalls.size()) + 1));
    ChatRequest request = planningRequest(question);
    request.messages.append(ChatMessage::assistant(QString(), toolCalls));
    for (qsizetype i = 0; i < results.size(); ++i) {
        request.messages.append(
            ChatMessage::toolResult(toolCalls.at(i).id, toolCalls.at(i).name, results.at(i)));
    }
    Delivery delivery;
    if (!deliver(request, &delivery))
        return QStringLiteral("<no answer>");
    if (delivery.response.finishReason != FinishReason::Stop
        || !delivery.response.toolCalls.isEmpty()) {
        return QStringLiteral("<not a final answer>");
    }
    return delivery.response.content;
}

void tst_OfflineDemoModel::modelName()
{
    OfflineDemoModel model;
    QCOMPARE(model.modelName(), QStringLiteral("offline-demo"));
    Delivery delivery;
    QVERIFY(deliver(planningRequest(QStringLiteral("A1001")), &delivery));
    QCOMPARE(delivery.response.model, QStringLiteral("offline-demo"));
}

void tst_OfflineDemoModel::planning_data()
{
    QTest::addColumn<QString>("question");
    QTest::addColumn<QStringList>("calls");

    const auto row = [](const char *name, const QString &question, const QStringList &calls) {
        QTest::newRow(name) << question << calls;
    };
    const QString logistics = QStringLiteral("queryLogistics(%1)");
    const QString status = QStringLiteral("queryOrderStatus(%1)");
    const QString stock = QStringLiteral("queryInventory(%1)");
    const auto L = [&](const char *id) { return logistics.arg(QLatin1String(id)); };
    const auto S = [&](const char *id) { return status.arg(QLatin1String(id)); };
    const auto I = [&](const char *sku) { return stock.arg(QLatin1String(sku)); };

    // The two examples of DESIGN.md and the brief.
    row("en: where + in stock", QStringLiteral("Where is order A1001 and is SKU-200 in stock?"),
        {L("A1001"), I("SKU-200")});
    row("zh: logistics location", QStringLiteral("查询订单 A1001 的物流位置"), {L("A1001")});
    row("zh: status and logistics", QStringLiteral("A1001 的订单状态和物流"),
        {S("A1001"), L("A1001")});

    // English.
    row("en: status", QStringLiteral("What's the status of order A1001?"), {S("A1001")});
    row("en: bare id", QStringLiteral("A1001"), {S("A1001")});
    row("en: order keyword only", QStringLiteral("Check order A1002 please"), {S("A1002")});
    row("en: delivered", QStringLiteral("Has my package A1003 been delivered?"), {L("A1003")});
    row("en: tracking", QStringLiteral("tracking for A1001"), {L("A1001")});
    row("en: shipped is status", QStringLiteral("Has A1004 shipped yet?"), {S("A1004")});
    row("en: status and location", QStringLiteral("What is the status and location of A1001?"),
        {S("A1001"), L("A1001")});
    row("en: sku lower case", QStringLiteral("Is sku-300 available?"), {I("SKU-300")});
    row("en: elliptical follow-up", QStringLiteral("Where is A1001? And A1002?"),
        {L("A1001"), L("A1002")});
    row("en: two orders, own words",
        QStringLiteral("Where is A1001 and what is the status of A1002?"),
        {L("A1001"), S("A1002")});
    row("en: two orders share words", QStringLiteral("Check A1001 and A1002 shipping"),
        {L("A1001"), L("A1002")});
    row("en: leading bare list", QStringLiteral("A1001, A1002 and A1003 tracking please"),
        {L("A1001"), L("A1002"), L("A1003")});
    row("en: three intents",
        QStringLiteral("Where's A1001 and is SKU-200 in stock, and what's the status of A1004?"),
        {L("A1001"), I("SKU-200"), S("A1004")});
    row("en: id without sku word", QStringLiteral("A1001 and SKU-100"),
        {S("A1001"), I("SKU-100")});
    row("en: duplicates", QStringLiteral("Order A1001, A1001 again: status?"), {S("A1001")});
    row("en: duplicate skus", QStringLiteral("SKU-100, SKU-200 and sku-100 stock"),
        {I("SKU-100"), I("SKU-200")});
    row("en: words after the id", QStringLiteral("Status of A1001. Also where is it?"),
        {S("A1001"), L("A1001")});

    // Chinese.
    row("zh: where", QStringLiteral("订单A1001到哪了？"), {L("A1001")});
    row("zh: status", QStringLiteral("A1002 的订单状态"), {S("A1002")});
    row("zh: stock", QStringLiteral("SKU-200 还有货吗？"), {I("SKU-200")});
    row("zh: logistics and stock", QStringLiteral("A1001 的物流，以及 SKU-200 有没有库存"),
        {L("A1001"), I("SKU-200")});
    row("zh: elliptical follow-up", QStringLiteral("A1001 到哪了？A1002 呢？"),
        {L("A1001"), L("A1002")});
    row("zh: two orders share words", QStringLiteral("帮我看看 A1001 和 A1002 的物流"),
        {L("A1001"), L("A1002")});
    row("zh: two orders, own words", QStringLiteral("A1001 的状态和 A1002 的物流"),
        {S("A1001"), L("A1002")});
    row("zh: words before the id", QStringLiteral("查一下物流，订单 A1001"), {L("A1001")});
    row("zh: words in a later clause", QStringLiteral("A1001 到哪了，还有订单状态"),
        {S("A1001"), L("A1001")});
    row("zh: signed", QStringLiteral("A1001 签收了吗"), {L("A1001")});
    row("zh: status of both", QStringLiteral("A1001 和 A1002 的订单状态和物流"),
        {S("A1001"), L("A1001"), S("A1002"), L("A1002")});

    // Mixed language.
    row("mixed: where", QStringLiteral("A1001 where 到了?"), {L("A1001")});
    row("mixed: stock and status", QStringLiteral("SKU-200 stock 还有吗, order A1001 status"),
        {I("SKU-200"), S("A1001")});

    // Ids in another case or with a space or a dash are normalised to the form the tools take
    // (issue #24 §5).
    row("normalised: lower case", QStringLiteral("Where is a1001?"), {L("A1001")});
    row("normalised: zh lower case", QStringLiteral("订单 a1001 的状态"), {S("A1001")});
    row("normalised: sku without dash", QStringLiteral("Is SKU200 in stock?"), {I("SKU-200")});
    row("normalised and valid", QStringLiteral("Where are A1001 and a1002?"),
        {L("A1001"), L("A1002")});

    // Near-misses still pass through as written, for the executor to reject
    // (INVALID_ARGUMENT).
    row("invalid: too short", QStringLiteral("Status of A12"), {S("A12")});
    row("invalid: lower case, too short", QStringLiteral("Status of a12"), {S("a12")});
    row("invalid: too long", QStringLiteral("订单 A12345678901 的状态"), {S("A12345678901")});
    row("invalid: sku too long", QStringLiteral("Is sku-12345678901 in stock?"),
        {I("SKU-12345678901")});
}

void tst_OfflineDemoModel::planning()
{
    QFETCH(QString, question);
    QFETCH(QStringList, calls);

    Delivery delivery;
    QVERIFY(deliver(planningRequest(question), &delivery));
    QCOMPARE(delivery.response.finishReason, FinishReason::ToolCalls);
    QVERIFY(delivery.response.content.isEmpty());
    QVERIFY(delivery.deltas.isEmpty());
    QStringList actual;
    for (const ModelToolCall &call : delivery.response.toolCalls)
        actual.append(describeCall(call));
    QCOMPARE(actual, calls);
}

void tst_OfflineDemoModel::planningCallShape()
{
    Delivery delivery;
    QVERIFY(deliver(planningRequest(QStringLiteral("A1001 的订单状态和物流，SKU-200 有货吗")),
                    &delivery));
    const QList<ModelToolCall> expected{
        {QStringLiteral("call_1"), QStringLiteral("queryOrderStatus"),
         QStringLiteral(R"({"orderId":"A1001"})")},
        {QStringLiteral("call_2"), QStringLiteral("queryLogistics"),
         QStringLiteral(R"({"orderId":"A1001"})")},
        {QStringLiteral("call_3"), QStringLiteral("queryInventory"),
         QStringLiteral(R"({"sku":"SKU-200"})")}};
    QCOMPARE(delivery.response.toolCalls, expected);
    QVERIFY(!delivery.response.isError());
}

void tst_OfflineDemoModel::planningOnlyOfferedTools_data()
{
    QTest::addColumn<QString>("question");
    QTest::addColumn<QStringList>("offered");
    QTest::addColumn<QStringList>("calls");
    QTest::addColumn<QString>("answerContains");

    const QString question = QStringLiteral("Where is order A1001 and is SKU-200 in stock?");
    QTest::newRow("some offered") << question << QStringList{QStringLiteral("queryInventory")}
                                  << QStringList{QStringLiteral("queryInventory(SKU-200)")}
                                  << QString();
    QTest::newRow("none offered")
        << question << QStringList{QStringLiteral("queryOrderStatus")} << QStringList()
        << QStringLiteral("no logistics lookup");
    QTest::newRow("no tools at all")
        << QStringLiteral("A1001 的物流") << QStringList() << QStringList()
        << QStringLiteral("未提供物流查询工具");
}

void tst_OfflineDemoModel::planningOnlyOfferedTools()
{
    QFETCH(QString, question);
    QFETCH(QStringList, offered);
    QFETCH(QStringList, calls);
    QFETCH(QString, answerContains);

    QList<ToolDescriptor> tools;
    for (const ToolDescriptor &tool : supportTools()) {
        if (offered.contains(tool.name))
            tools.append(tool);
    }
    Delivery delivery;
    QVERIFY(deliver(planningRequest(question, tools), &delivery));
    QStringList actual;
    for (const ModelToolCall &call : delivery.response.toolCalls)
        actual.append(describeCall(call));
    QCOMPARE(actual, calls);
    if (calls.isEmpty()) {
        QCOMPARE(delivery.response.finishReason, FinishReason::Stop);
        QVERIFY2(delivery.response.content.contains(answerContains),
                 qPrintable(delivery.response.content));
    } else {
        QCOMPARE(delivery.response.finishReason, FinishReason::ToolCalls);
    }
}

void tst_OfflineDemoModel::noIdentifiers_data()
{
    QTest::addColumn<QString>("question");
    QTest::addColumn<bool>("chinese");
    QTest::addColumn<QStringList>("contains");

    QTest::newRow("en: where is my order")
        << QStringLiteral("Where is my order?") << false
        << QStringList{QStringLiteral("order number"), QStringLiteral("A1001")};
    QTest::newRow("en: digits only")
        << QStringLiteral("Order 1001 status") << false
        << QStringList{QStringLiteral("4–10 digits")};
    QTest::newRow("en: stock without sku")
        << QStringLiteral("Is the mug in stock?") << false
        << QStringList{QStringLiteral("SKU"), QStringLiteral("SKU-100")};
    QTest::newRow("en: empty") << QString() << false
                               << QStringList{QStringLiteral("A1001"), QStringLiteral("SKU-100")};
    QTest::newRow("zh: parcel") << QStringLiteral("我的快递到哪了？") << true
                                << QStringList{QStringLiteral("订单号"), QStringLiteral("A1001")};
    QTest::newRow("zh: stock") << QStringLiteral("还有库存吗") << true
                               << QStringList{QStringLiteral("SKU")};
    QTest::newRow("zh: hello")
        << QStringLiteral("你好") << true
        << QStringList{QStringLiteral("订单号"), QStringLiteral("SKU-100")};
}

void tst_OfflineDemoModel::noIdentifiers()
{
    QFETCH(QString, question);
    QFETCH(bool, chinese);
    QFETCH(QStringList, contains);

    Delivery delivery;
    QVERIFY(deliver(planningRequest(question), &delivery));
    QCOMPARE(delivery.response.finishReason, FinishReason::Stop);
    QVERIFY(delivery.response.toolCalls.isEmpty());
    QCOMPARE(hasHan(delivery.response.content), chinese);
    for (const QString &part : contains) {
        QVERIFY2(delivery.response.content.contains(part),
                 qPrintable(delivery.response.content));
    }
}

void tst_OfflineDemoModel::ticketPlanning_data()
{
    QTest::addColumn<QString>("question");
    QTest::addColumn<QStringList>("calls");

    const auto row = [](const char *name, const QString &question, const QStringList &calls) {
        QTest::newRow(name) << question << calls;
    };
    const auto T = [](const char *id, const char *category, const QString &description) {
        return QStringLiteral("createTicket(%1|%2|%3)")
            .arg(QLatin1String(id), QLatin1String(category), description);
    };
    // A ticket without a stated reason is described by the whole question.
    const auto whole = [&](const char *name, const QString &question, const char *id,
                           const char *category) {
        row(name, question, {T(id, category, question)});
    };

    // The examples of the brief.
    row("en: damaged, reason after colon",
        QStringLiteral("Create an after-sales ticket for order A1001: the mug arrived broken"),
        {T("A1001", "DAMAGED", QStringLiteral("the mug arrived broken"))});
    row("zh: damaged, reason after full-width colon",
        QStringLiteral("为订单 A1001 创建售后工单：商品破损"),
        {T("A1001", "DAMAGED", QStringLiteral("商品破损"))});
    whole("en: refund, order in another clause",
          QStringLiteral("A1002 customer wants a refund, open a ticket"), "A1002", "REFUND");
    row("zh: return, reason marker", QStringLiteral("给 A1003 提交退货工单，原因：尺码不合适"),
        {T("A1003", "RETURN", QStringLiteral("尺码不合适"))});

    // Each category, in both languages.
    row("en: exchange, 'reason:'",
        QStringLiteral("Please file a ticket for A1004, reason: exchange for a larger size"),
        {T("A1004", "EXCHANGE", QStringLiteral("exchange for a larger size"))});
    whole("zh: exchange", QStringLiteral("A1004 申请售后换货"), "A1004", "EXCHANGE");
    row("en: missing item, logistics words in the reason",
        QStringLiteral("Open a ticket for A1005: one item is missing from the parcel"),
        {T("A1005", "MISSING_ITEM", QStringLiteral("one item is missing from the parcel"))});
    row("zh: missing item, 原因是",
        QStringLiteral("为 A1005 新建工单，原因是漏发了一个杯子"),
        {T("A1005", "MISSING_ITEM", QStringLiteral("漏发了一个杯子"))});
    row("en: other", QStringLiteral("Create a ticket for A1001: customer needs a new invoice"),
        {T("A1001", "OTHER", QStringLiteral("customer needs a new invoice"))});
    row("zh: other", QStringLiteral("帮 A1001 开个售后工单：发票抬头写错了"),
        {T("A1001", "OTHER", QStringLiteral("发票抬头写错了"))});
    whole("zh: refund, no reason", QStringLiteral("A1002 要退款，帮忙提交工单"), "A1002",
          "REFUND");
    whole("en: return, past tense", QStringLiteral("Customer returned A1003, create a ticket"),
          "A1003", "RETURN");
    row("en: first category named wins",
        QStringLiteral("Create a refund ticket for A1001: the mug arrived broken"),
        {T("A1001", "REFUND", QStringLiteral("the mug arrived broken"))});
    whole("zh: 退货退款 is a return", QStringLiteral("A1003 退货退款，创建售后工单"), "A1003",
          "RETURN");

    // Ids are normalised; near-misses pass through as written, for the executor to reject.
    row("normalised: lower case", QStringLiteral("Create a ticket for order a1001: broken lid"),
        {T("A1001", "DAMAGED", QStringLiteral("broken lid"))});
    row("invalid: too short", QStringLiteral("为 A12 创建售后工单：商品损坏"),
        {T("A12", "DAMAGED", QStringLiteral("商品损坏"))});

    // Details of the reason.
    whole("a time is not a reason marker",
          QStringLiteral("Open a ticket for A1001, delivered at 10:30 with a cracked lid"),
          "A1001", "DAMAGED");
    whole("empty reason falls back to the question",
          QStringLiteral("Create a ticket for A1001 (damaged):"), "A1001", "DAMAGED");
    row("reason cut at 500 characters",
        QStringLiteral("Create a ticket for A1001: ") + QString(600, QLatin1Char('x')),
        {T("A1001", "OTHER", QString(500, QLatin1Char('x')))});
    row("trimmed", QStringLiteral("  Create a ticket for A1001:   lid cracked  \n"),
        {T("A1001", "DAMAGED", QStringLiteral("lid cracked"))});

    // A lookup only when another clause asks for one in so many words; reads come first.
    row("the reason runs to the end, lookups in it included",
        QStringLiteral("Create a refund ticket for A1001: wrong colour. Where is A1002?"),
        {T("A1001", "REFUND", QStringLiteral("wrong colour. Where is A1002?"))});
    row("en: lookup clause before the ticket",
        QStringLiteral("Where is A1002? Also open a return ticket for A1001"),
        {QStringLiteral("queryLogistics(A1002)"),
         T("A1001", "RETURN",
           QStringLiteral("Where is A1002? Also open a return ticket for A1001"))});
    row("en: lookup words for the ticket's order",
        QStringLiteral("Open a return ticket for A1001, and what is its status?"),
        {QStringLiteral("queryOrderStatus(A1001)"),
         T("A1001", "RETURN",
           QStringLiteral("Open a return ticket for A1001, and what is its status?"))});
    row("zh: status clause and ticket",
        QStringLiteral("A1001 的订单状态？另外给它提交换货工单，原因：尺码偏小"),
        {QStringLiteral("queryOrderStatus(A1001)"),
         T("A1001", "EXCHANGE", QStringLiteral("尺码偏小"))});
    // With no reason at all the model asks what the ticket is for (offline_questions.json).
    whole("en: ticket order named in a bare clause",
          QStringLiteral("For A1001, please open a ticket, the colour is wrong"), "A1001",
          "OTHER");
}

void tst_OfflineDemoModel::ticketPlanning()
{
    QFETCH(QString, question);
    QFETCH(QStringList, calls);

    Delivery delivery;
    QVERIFY(deliver(planningRequest(question), &delivery));
    QCOMPARE(delivery.response.finishReason, FinishReason::ToolCalls);
    QVERIFY(delivery.deltas.isEmpty());
    QStringList actual;
    for (const ModelToolCall &call : delivery.response.toolCalls)
        actual.append(describeCall(call));
    QCOMPARE(actual, calls);
    for (qsizetype i = 0; i < delivery.response.toolCalls.size(); ++i)
        QCOMPARE(delivery.response.toolCalls.at(i).id, QStringLiteral("call_%1").arg(i + 1));
}

void tst_OfflineDemoModel::ticketPlanningWithoutTicket_data()
{
    QTest::addColumn<QString>("question");
    QTest::addColumn<bool>("ticketOffered");
    QTest::addColumn<QStringList>("calls");
    QTest::addColumn<QString>("answerContains");

    // Ticket words without a creating word, or the other way round, stay read-only.
    QTest::newRow("ticket noun only")
        << QStringLiteral("What's the status of the ticket for A1001?") << true
        << QStringList{QStringLiteral("queryOrderStatus(A1001)")} << QString();
    QTest::newRow("zh: 售后 without a verb")
        << QStringLiteral("A1001 的售后进度") << true
        << QStringList{QStringLiteral("queryOrderStatus(A1001)")} << QString();
    QTest::newRow("open without a ticket")
        << QStringLiteral("Is order A1001 still open?") << true
        << QStringList{QStringLiteral("queryOrderStatus(A1001)")} << QString();
    QTest::newRow("zh: 开始 is not 开")
        << QStringLiteral("A1001 的售后开始处理了吗") << true
        << QStringList{QStringLiteral("queryOrderStatus(A1001)")} << QString();

    // No createTicket tool: no write, and the reply says why.
    QTest::newRow("not offered")
        << QStringLiteral("Create an after-sales ticket for order A1001: the mug arrived broken")
        << false << QStringList() << QStringLiteral("no ticket tool");
    QTest::newRow("zh: not offered") << QStringLiteral("为订单 A1001 创建售后工单：商品破损")
                                     << false << QStringList()
                                     << QStringLiteral("未提供售后工单工具");
    QTest::newRow("not offered, other clause still looked up")
        << QStringLiteral("Where is A1002? Also open a return ticket for A1001") << false
        << QStringList{QStringLiteral("queryLogistics(A1002)")} << QString();

    // No order to file the ticket for.
    QTest::newRow("no order") << QStringLiteral("Create a ticket: the mug arrived broken")
                              << true << QStringList() << QStringLiteral("order number");
    QTest::newRow("zh: no order") << QStringLiteral("帮我创建一个售后工单") << true
                                  << QStringList() << QStringLiteral("创建售后工单需要订单号");
}

void tst_OfflineDemoModel::ticketPlanningWithoutTicket()
{
    QFETCH(QString, question);
    QFETCH(bool, ticketOffered);
    QFETCH(QStringList, calls);
    QFETCH(QString, answerContains);

    QList<ToolDescriptor> tools = supportTools();
    if (!ticketOffered) {
        tools.removeIf(
            [](const ToolDescriptor &tool) { return tool.name == QLatin1String("createTicket"); });
    }
    Delivery delivery;
    QVERIFY(deliver(planningRequest(question, tools), &delivery));
    QStringList actual;
    for (const ModelToolCall &call : delivery.response.toolCalls)
        actual.append(describeCall(call));
    QCOMPARE(actual, calls);
    if (calls.isEmpty()) {
        QCOMPARE(delivery.response.finishReason, FinishReason::Stop);
        QVERIFY2(delivery.response.content.contains(answerContains),
                 qPrintable(delivery.response.content));
        QCOMPARE(hasHan(delivery.response.content), hasHan(question));
    } else {
        QCOMPARE(delivery.response.finishReason, FinishReason::ToolCalls);
    }
}

void tst_OfflineDemoModel::answers_data()
{
    QTest::addColumn<QString>("question");
    QTest::addColumn<QStringList>("calls");
    QTest::addColumn<QStringList>("results");
    QTest::addColumn<QStringList>("contains");
    QTest::addColumn<QStringList>("excludes");

    const QString where = QStringLiteral("Where is order A1001 and is SKU-200 in stock?");
    const QString whereZh = QStringLiteral("查询订单 A1001 的物流位置");
    const QString both = QStringLiteral("What is the status and location of order A1001?");
    const QString bothZh = QStringLiteral("A1001 的订单状态和物流");
    const QString logisticsCall = QStringLiteral("queryLogistics(A1001)");
    const QString statusCall = QStringLiteral("queryOrderStatus(A1001)");
    const QString stockCall = QStringLiteral("queryInventory(SKU-200)");
    // Words that only the logistics fixture could supply: a failed logistics lookup must not
    // produce any of them.
    const QStringList inventedLogistics{
        QStringLiteral("SF"), QStringLiteral("Shanghai"), QStringLiteral("in transit"),
        QStringLiteral("运输中"), QStringLiteral("当前位置"), QStringLiteral("Current location")};

    QTest::newRow("en: logistics")
        << QStringLiteral("Where is order A1001?") << QStringList{logisticsCall}
        << QStringList{ok(logisticsA1001())}
        << QStringList{QStringLiteral("Order A1001 is in transit with SF Express "
                                      "(tracking number SF10010001)."),
                       QStringLiteral("Current location: Shanghai Pudong Hub "
                                      "(updated 2026-11-28 09:30)."),
                       // time and place of the latest event were said just before
                       QStringLiteral("Latest event: Arrived at sorting hub.")}
        << QStringList{QStringLiteral("Picked up"), QStringLiteral("try again")};
    QTest::newRow("zh: logistics")
        << whereZh << QStringList{logisticsCall} << QStringList{ok(logisticsA1001())}
        << QStringList{QStringLiteral("订单 A1001 运输中，承运商 SF Express，运单号 SF10010001。"),
                       QStringLiteral("当前位置：Shanghai Pudong Hub（更新于 2026-11-28 09:30）。")}
        << QStringList{QStringLiteral("稍后重试")};
    QTest::newRow("en: order status")
        << QStringLiteral("Status of A1001?") << QStringList{statusCall}
        << QStringList{ok(orderA1001())}
        << QStringList{QStringLiteral("Order A1001 has been shipped."),
                       QStringLiteral("- Placed on 2026-11-20."), QStringLiteral("- Total: 299.00 CNY."),
                       QStringLiteral("Ceramic mug set (SKU-100) × 2")}
        << QStringList();
    QTest::newRow("zh: order status")
        << QStringLiteral("A1001 的订单状态") << QStringList{statusCall}
        << QStringList{ok(orderA1001())}
        << QStringList{QStringLiteral("订单 A1001 已发货。"), QStringLiteral("- 金额：299.00 CNY。")}
        << QStringList();
    QTest::newRow("en: low stock")
        << QStringLiteral("Is SKU-200 in stock?") << QStringList{stockCall}
        << QStringList{ok(inventorySku200())}
        << QStringList{QStringLiteral("SKU-200 (Bamboo cutting board) is low on stock: only 3 "
                                      "left (warehouse: Suzhou Warehouse).")}
        << QStringList();
    QTest::newRow("zh: low stock")
        << QStringLiteral("SKU-200 还有货吗") << QStringList{stockCall}
        << QStringList{ok(inventorySku200())}
        << QStringList{QStringLiteral("商品 SKU-200（Bamboo cutting board）库存紧张，仅剩 3 件")}
        << QStringList();
    // The demo store's Chinese (issue #41 §7): a Chinese answer takes the *Zh values, an
    // English one never does; a value with no Chinese is shown as it came.
    const QStringList english{QStringLiteral("Shanghai"), QStringLiteral("SF Express"),
                              QStringLiteral("Arrived"), QStringLiteral("Ceramic"),
                              QStringLiteral("Bamboo"), QStringLiteral("Suzhou")};
    const QStringList chinese{QStringLiteral("上海"), QStringLiteral("顺丰"),
                              QStringLiteral("分拣"), QStringLiteral("陶瓷"),
                              QStringLiteral("竹制"), QStringLiteral("苏州")};
    QTest::newRow("zh: logistics in Chinese")
        << whereZh << QStringList{logisticsCall} << QStringList{ok(logisticsA1001Bilingual())}
        << QStringList{QStringLiteral("订单 A1001 运输中，承运商 顺丰速运，运单号 SF10010001。"),
                       QStringLiteral("当前位置：上海浦东转运中心（更新于 2026-11-28 09:30）。"),
                       QStringLiteral("最新动态：已到达分拣中心。")}
        << english;
    QTest::newRow("en: logistics with Chinese beside it")
        << QStringLiteral("Where is order A1001?") << QStringList{logisticsCall}
        << QStringList{ok(logisticsA1001Bilingual())}
        << QStringList{QStringLiteral("Order A1001 is in transit with SF Express "
                                      "(tracking number SF10010001)."),
                       QStringLiteral("Current location: Shanghai Pudong Hub "
                                      "(updated 2026-11-28 09:30)."),
                       QStringLiteral("Latest event: Arrived at sorting hub.")}
        << chinese;
    QTest::newRow("zh: order items in Chinese")
        << QStringLiteral("A1001 的订单状态") << QStringList{statusCall}
        << QStringList{ok(orderA1001Bilingual())}
        << QStringList{QStringLiteral("商品：陶瓷马克杯套装（SKU-100）× 2")} << english;
    QTest::newRow("zh: stock in Chinese")
        << QStringLiteral("SKU-200 还有货吗") << QStringList{stockCall}
        << QStringList{ok(inventorySku200Bilingual())}
        << QStringList{QStringLiteral("商品 SKU-200（竹制砧板）库存紧张，仅剩 3 件（仓库：苏州仓）。")}
        << english;
    QTest::newRow("en: stock with Chinese beside it")
        << QStringLiteral("Is SKU-200 in stock?") << QStringList{stockCall}
        << QStringList{ok(inventorySku200Bilingual())}
        << QStringList{QStringLiteral("SKU-200 (Bamboo cutting board) is low on stock: only 3 "
                                      "left (warehouse: Suzhou Warehouse).")}
        << chinese;
    {
        QJsonObject half = logisticsA1001();
        half.insert(QStringLiteral("carrierZh"), QStringLiteral("顺丰速运"));
        half.insert(QStringLiteral("currentLocationZh"), QString()); // empty: as if absent
        QTest::newRow("zh: Chinese only where the backend has it")
            << whereZh << QStringList{logisticsCall} << QStringList{ok(half)}
            << QStringList{QStringLiteral("承运商 顺丰速运"),
                           QStringLiteral("当前位置：Shanghai Pudong Hub"),
                           QStringLiteral("最新动态：Arrived at sorting hub。")}
            << QStringList{QStringLiteral("SF Express")};
    }
    // A lookup asked together with a ticket that gives no reason: the lookup is answered,
    // then the ticket's question is asked (the next message may answer it).
    QTest::newRow("en: lookup answered, then what is the ticket for")
        << QStringLiteral("Where is A1001? Open a ticket for it") << QStringList{logisticsCall}
        << QStringList{ok(logisticsA1001())}
        << QStringList{QStringLiteral("Order A1001 is in transit"),
                       QStringLiteral("To file the ticket for order A1001 I need to know what it "
                                      "is about"),
                       QStringLiteral("What is the ticket for?")}
        << QStringList{QStringLiteral("was created")};
    QTest::newRow("zh: lookup answered, then what is the ticket for")
        << QStringLiteral("A1001 到哪了？给它开个工单") << QStringList{logisticsCall}
        << QStringList{ok(logisticsA1001Bilingual())}
        << QStringList{QStringLiteral("当前位置：上海浦东转运中心"),
                       QStringLiteral("请问这张工单是什么问题？")}
        << QStringList{QStringLiteral("已创建")};
    QTest::newRow("en: success and both succeed")
        << where << QStringList{logisticsCall, stockCall}
        << QStringList{ok(logisticsA1001()), ok(inventorySku200())}
        << QStringList{QStringLiteral("SF10010001"), QStringLiteral("only 3 left")}
        << QStringList{QStringLiteral("temporarily")};

    // Partial failure: the successful part stays, the failed part is named, nothing invented.
    QTest::newRow("en: partial, logistics timed out")
        << where << QStringList{logisticsCall, stockCall}
        << QStringList{failed(ResultCode::ToolTimeout), ok(inventorySku200())}
        << QStringList{QStringLiteral("SKU-200 (Bamboo cutting board) is low on stock: only 3 "
                                      "left"),
                       QStringLiteral("The logistics lookup for order A1001 timed out, so it is "
                                      "temporarily unavailable."),
                       QStringLiteral("Please try again later.")}
        << inventedLogistics;
    QTest::newRow("zh: partial, logistics timed out")
        << bothZh << QStringList{statusCall, logisticsCall}
        << QStringList{ok(orderA1001()), failed(ResultCode::ToolTimeout)}
        << QStringList{QStringLiteral("订单 A1001 已发货。"),
                       QStringLiteral("订单 A1001 的物流查询超时，暂时无法查询。"),
                       QStringLiteral("请稍后重试。")}
        << inventedLogistics;
    QTest::newRow("en: partial, status unavailable")
        << both << QStringList{statusCall, logisticsCall}
        << QStringList{failed(ResultCode::ToolUnavailable), ok(logisticsA1001())}
        << QStringList{QStringLiteral("in transit"),
                       QStringLiteral("The status lookup for order A1001 is temporarily "
                                      "unavailable."),
                       QStringLiteral("Please try again later.")}
        << QStringList{QStringLiteral("shipped"), QStringLiteral("299.00"),
                       QStringLiteral("Ceramic")};
    QTest::newRow("en: all three outcomes")
        << QStringLiteral("Status and location of A1001, and is SKU-200 in stock?")
        << QStringList{statusCall, logisticsCall, stockCall}
        << QStringList{ok(orderA1001()), failed(ResultCode::ToolTimeout),
                       failed(SupportCode::SkuNotFound)}
        << QStringList{QStringLiteral("Order A1001 has been shipped."),
                       QStringLiteral("temporarily unavailable"),
                       QStringLiteral("No product with SKU SKU-200 was found.")}
        << (inventedLogistics + QStringList{QStringLiteral("Bamboo")});

    // Not found.
    QTest::newRow("en: order not found")
        << QStringLiteral("Status of A9999")
        << QStringList{QStringLiteral("queryOrderStatus(A9999)")}
        << QStringList{failed(SupportCode::OrderNotFound)}
        << QStringList{QStringLiteral("Order A9999 was not found.")}
        << QStringList{QStringLiteral("try again"), QStringLiteral("shipped")};
    QTest::newRow("zh: order not found twice, said once")
        << QStringLiteral("A9999 的订单状态和物流")
        << QStringList{QStringLiteral("queryOrderStatus(A9999)"),
                       QStringLiteral("queryLogistics(A9999)")}
        << QStringList{failed(SupportCode::OrderNotFound), failed(SupportCode::OrderNotFound)}
        << QStringList{QStringLiteral("未找到订单 A9999。")} << QStringList();
    QTest::newRow("en: no logistics yet")
        << QStringLiteral("Where is A1002?")
        << QStringList{QStringLiteral("queryLogistics(A1002)")}
        << QStringList{failed(SupportCode::LogisticsNotFound)}
        << QStringList{QStringLiteral("There is no logistics record for order A1002 yet.")}
        << inventedLogistics;
    QTest::newRow("zh: no logistics yet")
        << QStringLiteral("查询订单 A1002 的物流位置")
        << QStringList{QStringLiteral("queryLogistics(A1002)")}
        << QStringList{failed(SupportCode::LogisticsNotFound)}
        << QStringList{QStringLiteral("订单 A1002 暂无物流记录。")} << inventedLogistics;
    QTest::newRow("zh: sku not found")
        << QStringLiteral("SKU-999 有货吗") << QStringList{QStringLiteral("queryInventory(SKU-999)")}
        << QStringList{failed(SupportCode::SkuNotFound)}
        << QStringList{QStringLiteral("未找到商品 SKU-999。")} << QStringList();

    // Invalid arguments.
    QTest::newRow("en: invalid order id")
        << QStringLiteral("Where is a1001?")
        << QStringList{QStringLiteral("queryLogistics(a1001)")}
        << QStringList{failed(ResultCode::InvalidArgument)}
        << QStringList{QStringLiteral("“a1001” is not a valid order number"),
                       QStringLiteral("the letter A followed by 4–10 digits")}
        << inventedLogistics;
    QTest::newRow("zh: invalid order id")
        << QStringLiteral("订单 A12 的状态")
        << QStringList{QStringLiteral("queryOrderStatus(A12)")}
        << QStringList{failed(ResultCode::InvalidArgument)}
        << QStringList{QStringLiteral("“A12”不是有效的订单号"), QStringLiteral("4–10 位数字")}
        << QStringList();
    QTest::newRow("en: invalid sku")
        << QStringLiteral("Is SKU200 in stock?")
        << QStringList{QStringLiteral("queryInventory(SKU200)")}
        << QStringList{failed(ResultCode::InvalidArgument)}
        << QStringList{QStringLiteral("“SKU200” is not a valid SKU")} << QStringList();
    QTest::newRow("en: one invalid among valid")
        << QStringLiteral("Where are A1001 and a1002?")
        << QStringList{logisticsCall, QStringLiteral("queryLogistics(a1002)")}
        << QStringList{ok(logisticsA1001()), failed(ResultCode::InvalidArgument)}
        << QStringList{QStringLiteral("SF10010001"),
                       QStringLiteral("“a1002” is not a valid order number")}
        << QStringList{QStringLiteral("try again")};

    // The other failure codes: one plain sentence each.
    const auto failure = [&](const char *name, ResultCode::Code code, const QString &sentence) {
        QTest::newRow(name) << QStringLiteral("Where is A1001?") << QStringList{logisticsCall}
                            << QStringList{failed(code)} << QStringList{sentence}
                            << inventedLogistics;
    };
    failure("en: context missing", ResultCode::ContextMissing,
            QStringLiteral("The logistics lookup for order A1001 could not run because the "
                           "session's staff context is missing."));
    failure("en: unknown tool", ResultCode::UnknownTool,
            QStringLiteral("could not run because no such tool exists."));
    failure("en: rejected", ResultCode::ToolRejected,
            QStringLiteral("The backend rejected the logistics lookup for order A1001."));
    failure("en: access denied", ResultCode::ToolAccessDenied,
            QStringLiteral("The console is not allowed to run the logistics lookup"));
    failure("en: cancelled", ResultCode::Cancelled,
            QStringLiteral("The logistics lookup for order A1001 was cancelled."));
    failure("en: internal error", ResultCode::InternalError,
            QStringLiteral("stopped because of an internal error."));
    failure("en: unknown code", ResultCode::ExecutionStatusUnknown,
            QStringLiteral("failed, so I cannot tell you anything about it."));
    QTest::newRow("zh: access denied")
        << whereZh << QStringList{logisticsCall}
        << QStringList{failed(ResultCode::ToolAccessDenied)}
        << QStringList{QStringLiteral("控制台无权执行订单 A1001 的物流查询。")} << inventedLogistics;

    // Content that is not a ToolResult is a failed lookup, never a fact and never a crash.
    const auto malformed = [&](const char *name, const QString &content) {
        QTest::newRow(name) << where << QStringList{logisticsCall, stockCall}
                            << QStringList{content, ok(inventorySku200())}
                            << QStringList{QStringLiteral("only 3 left"),
                                           QStringLiteral("The logistics lookup for order A1001 "
                                                          "returned a result I cannot read")}
                            << inventedLogistics;
    };
    malformed("malformed: html", QStringLiteral("<html>502 Bad Gateway</html>"));
    malformed("malformed: empty", QString());
    malformed("malformed: array", QStringLiteral("[1,2,3]"));
    malformed("malformed: no success", QStringLiteral(R"({"code":"OK","data":{"x":1}})"));
    malformed("malformed: truncated", ok(logisticsA1001()).left(40));
    QTest::newRow("zh: malformed")
        << whereZh << QStringList{logisticsCall} << QStringList{QStringLiteral("not json")}
        << QStringList{QStringLiteral("订单 A1001 的物流查询返回了无法识别的结果")}
        << inventedLogistics;

    // Success with odd data: say only what is there.
    QTest::newRow("en: success without data")
        << QStringLiteral("Where is A1001?") << QStringList{logisticsCall}
        << QStringList{QStringLiteral(R"({"success":true,"code":"OK","message":"OK",)"
                                      R"("data":null,"errors":[]})")}
        << QStringList{QStringLiteral("succeeded but returned no details")}
        << inventedLogistics;
    QTest::newRow("en: sparse order")
        << QStringLiteral("Status of A1001?") << QStringList{statusCall}
        << QStringList{ok(QJsonObject{{QStringLiteral("orderId"), QStringLiteral("A1001")}})}
        << QStringList{QStringLiteral("Order A1001 was found, but the result does not include "
                                      "its status.")}
        << QStringList{QStringLiteral("Details")};
    QTest::newRow("en: unknown order status shown as given")
        << QStringLiteral("Status of A1001?") << QStringList{statusCall}
        << QStringList{ok(QJsonObject{{QStringLiteral("status"), QStringLiteral("ON_HOLD")}})}
        << QStringList{QStringLiteral("Order A1001 has the status ON_HOLD.")} << QStringList();
    QTest::newRow("zh: out of stock, numeric strings")
        << QStringLiteral("SKU-300 有货吗") << QStringList{QStringLiteral("queryInventory(SKU-300)")}
        << QStringList{ok(QJsonObject{{QStringLiteral("sku"), QStringLiteral("SKU-300")},
                                      {QStringLiteral("available"), QStringLiteral("0")},
                                      {QStringLiteral("status"),
                                       QStringLiteral("OUT_OF_STOCK")}})}
        << QStringList{QStringLiteral("商品 SKU-300 目前缺货。")} << QStringList();
}

void tst_OfflineDemoModel::answers()
{
    QFETCH(QString, question);
    QFETCH(QStringList, calls);
    QFETCH(QStringList, results);
    QFETCH(QStringList, contains);
    QFETCH(QStringList, excludes);

    for (const QString &result : results) {
        const QJsonDocument document = QJsonDocument::fromJson(result.toUtf8());
        if (!document.isObject() || !document.object().value(QStringLiteral("success")).isBool())
            QTest::ignoreMessage(QtWarningMsg, QRegularExpression(QStringLiteral("unreadable")));
    }
    const QString answer = answerFor(question, calls, results);
    for (const QString &part : contains)
        QVERIFY2(answer.contains(part), qPrintable(QStringLiteral("missing «%1» in: %2")
                                                       .arg(part, answer)));
    for (const QString &part : excludes)
        QVERIFY2(!answer.contains(part), qPrintable(QStringLiteral("unexpected «%1» in: %2")
                                                        .arg(part, answer)));
    // Codes are for the console, not for the customer-facing sentence.
    QVERIFY2(!answer.contains(QStringLiteral("TOOL_")) && !answer.contains(QStringLiteral("_NOT_"))
                 && !answer.contains(QStringLiteral("INVALID_ARGUMENT")),
             qPrintable(answer));
    QCOMPARE(hasHan(answer), hasHan(question));
}

// Up to three facts about one thing read as sentences; more are a Markdown list (#41 §4): a
// lookup's details
// under its first sentence, several lookups a bullet each, "try again later" after the list.
void tst_OfflineDemoModel::severalFactsAreAMarkdownList()
{
    const QString stock = answerFor(QStringLiteral("Is SKU-200 in stock?"),
                                    {QStringLiteral("queryInventory(SKU-200)")},
                                    {ok(inventorySku200())});
    QVERIFY2(!stock.contains(QLatin1Char('\n')) && !stock.startsWith(QLatin1String("- ")),
             qPrintable(stock));
    const QString where = answerFor(QStringLiteral("Where is order A1001?"),
                                    {QStringLiteral("queryLogistics(A1001)")},
                                    {ok(logisticsA1001())});
    QVERIFY2(!where.contains(QLatin1Char('\n')), qPrintable(where)); // three facts

    const QString order = answerFor(QStringLiteral("Status of A1001?"),
                                    {QStringLiteral("queryOrderStatus(A1001)")},
                                    {ok(orderA1001())});
    QCOMPARE(order.section(QLatin1Char('\n'), 0, 1),
             QStringLiteral("Order A1001 has been shipped.\n"));
    QCOMPARE(order.count(QStringLiteral("\n- ")), 3); // placed on, total, items

    const QString two = answerFor(
        QStringLiteral("Where is A1001 and is SKU-200 in stock? And the status of A1002?"),
        {QStringLiteral("queryLogistics(A1001)"), QStringLiteral("queryInventory(SKU-200)"),
         QStringLiteral("queryOrderStatus(A1002)")},
        {ok(logisticsA1001()), ok(inventorySku200()), failed(ResultCode::ToolUnavailable)});
    const QStringList lines = two.split(QLatin1Char('\n'));
    QVERIFY2(lines.value(0).startsWith(QLatin1String("- Order A1001 is in transit")),
             qPrintable(two));
    QVERIFY2(lines.value(1).startsWith(QLatin1String("  - Current location:")), qPrintable(two));
    QVERIFY2(two.contains(QLatin1String("\n- SKU-200")), qPrintable(two));
    QVERIFY2(two.contains(QLatin1String("\n- The status lookup for order A1002")),
             qPrintable(two));
    QVERIFY2(two.endsWith(QLatin1String("\n\nPlease try again later.")), qPrintable(two));

    // The list reads as one in the window: Markdown makes items of it.
    QTextDocument document;
    document.setMarkdown(two);
    int items = 0;
    for (QTextBlock block = document.begin(); block.isValid(); block = block.next())
        items += block.textList() ? 1 : 0;
    QVERIFY2(items >= 5, qPrintable(QString::number(items)));
}

void tst_OfflineDemoModel::answerMatchesResultsByCallId()
{
    // Results arrive in another order than the calls: they are matched by id, not position.
    const QList<ModelToolCall> calls{
        {QStringLiteral("call_1"), QStringLiteral("queryOrderStatus"),
         QStringLiteral(R"({"orderId":"A1001"})")},
        {QStringLiteral("call_2"), QStringLiteral("queryLogistics"),
         QStringLiteral(R"({"orderId":"A1002"})")}};
    ChatRequest request =
        planningRequest(QStringLiteral("Where is A1001 and what is the status of A1002?"));
    request.messages.append(ChatMessage::assistant(QString(), calls));
    request.messages.append(ChatMessage::toolResult(QStringLiteral("call_2"),
                                                    QStringLiteral("queryLogistics"),
                                                    failed(ResultCode::ToolTimeout)));
    request.messages.append(ChatMessage::toolResult(
        QStringLiteral("call_1"), QStringLiteral("queryOrderStatus"), ok(orderA1001())));

    Delivery delivery;
    QVERIFY(deliver(request, &delivery));
    const QString &answer = delivery.response.content;
    QVERIFY2(answer.startsWith(QStringLiteral("- Order A1001 has been shipped.")),
             qPrintable(answer));
    QVERIFY2(answer.contains(QStringLiteral("The logistics lookup for order A1002 timed out")),
             qPrintable(answer));
}

void tst_OfflineDemoModel::answerAfterSeveralRounds()
{
    // An earlier question's tools do not leak into this answer; a lookup repeated in a later
    // round of this question takes the later result; a call left unanswered is named.
    ChatRequest request = planningRequest(QStringLiteral("Where is A1009?"));
    request.messages.append(ChatMessage::assistant(
        QString(), {{QStringLiteral("call_1"), QStringLiteral("queryLogistics"),
                     QStringLiteral(R"({"orderId":"A1009"})")}}));
    request.messages.append(ChatMessage::toolResult(
        QStringLiteral("call_1"), QStringLiteral("queryLogistics"), ok(logisticsA1001())));
    request.messages.append(ChatMessage::assistant(QStringLiteral("It is in transit.")));
    request.messages.append(
        ChatMessage::user(QStringLiteral("What about A1001 and is SKU-200 in stock?")));
    request.messages.append(ChatMessage::assistant(
        QString(), {{QStringLiteral("call_1"), QStringLiteral("queryOrderStatus"),
                     QStringLiteral(R"({"orderId":"A1001"})")},
                    {QStringLiteral("call_2"), QStringLiteral("queryInventory"),
                     QStringLiteral(R"({"sku":"SKU-200"})")}}));
    request.messages.append(ChatMessage::toolResult(
        QStringLiteral("call_1"), QStringLiteral("queryOrderStatus"),
        failed(ResultCode::ToolUnavailable)));
    request.messages.append(ChatMessage::assistant(
        QString(), {{QStringLiteral("call_3"), QStringLiteral("queryOrderStatus"),
                     QStringLiteral(R"({"orderId":"A1001"})")}}));
    request.messages.append(ChatMessage::toolResult(
        QStringLiteral("call_3"), QStringLiteral("queryOrderStatus"), ok(orderA1001())));

    Delivery delivery;
    QVERIFY(deliver(request, &delivery));
    const QString &answer = delivery.response.content;
    QCOMPARE(delivery.response.finishReason, FinishReason::Stop);
    QVERIFY2(answer.startsWith(QStringLiteral("- Order A1001 has been shipped.")),
             qPrintable(answer));
    QVERIFY2(answer.contains(QStringLiteral("The stock lookup for SKU-200 returned no result")),
             qPrintable(answer));
    QVERIFY2(!answer.contains(QStringLiteral("SF")) && !answer.contains(QStringLiteral("A1009"))
                 && !answer.contains(QStringLiteral("temporarily")),
             qPrintable(answer));
}

void tst_OfflineDemoModel::answeringNeverLoops()
{
    // Asked again with the same results (the agent loop allows up to 5 rounds), the model
    // answers every time instead of asking for the same tools again.
    ChatRequest request = planningRequest(QStringLiteral("A1001 的订单状态和物流"));
    Delivery planned;
    QVERIFY(deliver(request, &planned));
    QCOMPARE(planned.response.toolCalls.size(), 2);
    request.messages.append(ChatMessage::assistant(QString(), planned.response.toolCalls));
    request.messages.append(ChatMessage::toolResult(QStringLiteral("call_1"),
                                                    QStringLiteral("queryOrderStatus"),
                                                    ok(orderA1001())));
    request.messages.append(ChatMessage::toolResult(QStringLiteral("call_2"),
                                                    QStringLiteral("queryLogistics"),
                                                    ok(logisticsA1001())));
    for (int round = 0; round < 5; ++round) {
        Delivery delivery;
        QVERIFY(deliver(request, &delivery));
        QCOMPARE(delivery.response.finishReason, FinishReason::Stop);
        QVERIFY(delivery.response.toolCalls.isEmpty());
        QVERIFY(delivery.response.content.contains(QStringLiteral("已发货")));
        request.messages.append(ChatMessage::assistant(delivery.response.content));
    }
}

void tst_OfflineDemoModel::answerWithoutAnyUserMessage()
{
    const ChatRequest request{{ChatMessage::system(QStringLiteral("x")),
                               ChatMessage::toolResult(QStringLiteral("call_7"),
                                                       QStringLiteral("queryInventory"),
                                                       failed(ResultCode::Cancelled))},
                              supportTools(),
                              {}};
    Delivery delivery;
    QVERIFY(deliver(request, &delivery));
    QCOMPARE(delivery.response.finishReason, FinishReason::Stop);
    QCOMPARE(delivery.response.content, QStringLiteral("The stock lookup was cancelled."));
}

void tst_OfflineDemoModel::ticketAnswers_data()
{
    QTest::addColumn<QString>("question");
    QTest::addColumn<QStringList>("calls");
    QTest::addColumn<QStringList>("results");
    QTest::addColumn<QStringList>("contains");
    QTest::addColumn<QStringList>("excludes");

    const QString en = QStringLiteral("Create an after-sales ticket for order A1001: broken mug");
    const QString zh = QStringLiteral("为订单 A1001 创建售后工单：商品破损");
    const QStringList ticket{QStringLiteral("createTicket(A1001)")};
    // Words that state an outcome: an answer that does not know the outcome uses none.
    const QStringList outcomeEn{QStringLiteral("created"), QStringLiteral("try again later"),
                                QStringLiteral("T-000001")};
    const QStringList outcomeZh{QStringLiteral("已创建"), QStringLiteral("未创建"),
                                QStringLiteral("稍后重试"), QStringLiteral("T-000001")};
    const auto row = [&](const char *name, bool chinese, const QString &result,
                         const QStringList &contains, const QStringList &excludes) {
        QTest::newRow(name) << (chinese ? zh : en) << ticket << QStringList{result} << contains
                            << excludes;
    };

    row("en: created", false, ticketCreated(),
        {QStringLiteral("Ticket T-000001 was created for order A1001 (damaged item).")},
        {QStringLiteral("already"), QStringLiteral("try again")});
    row("zh: created", true, ticketCreated(),
        {QStringLiteral("已为订单 A1001 创建售后工单 T-000001（商品破损）。")},
        {QStringLiteral("此前"), QStringLiteral("重试")});
    row("en: replayed", false, ticketCreated(true),
        {QStringLiteral("Ticket T-000001 for order A1001 already existed; no new ticket was "
                        "created.")},
        {QStringLiteral("was created for")});
    row("zh: replayed", true, ticketCreated(true),
        {QStringLiteral("订单 A1001 的售后工单 T-000001 此前已创建，本次没有新建工单。")},
        {QStringLiteral("已为订单")});
    row("en: created without a ticket number", false,
        ok(QJsonObject{{QStringLiteral("orderId"), QStringLiteral("A1001")},
                       {QStringLiteral("category"), QStringLiteral("OTHER")}}),
        {QStringLiteral("A ticket was created for order A1001 (other issue)."),
         QStringLiteral("does not include the ticket number")},
        {});

    row("en: declined", false, failed(ResultCode::ConfirmationDeclined),
        {QStringLiteral("No ticket was created: the staff member declined.")},
        {QStringLiteral("try again")});
    row("zh: declined", true, failed(ResultCode::ConfirmationDeclined),
        {QStringLiteral("未创建工单：客服已拒绝。")}, {QStringLiteral("已创建")});
    row("en: conflict", false, failed(ResultCode::IdempotencyConflict),
        {QStringLiteral("already made with different details"),
         QStringLiteral("no new ticket was created for order A1001")},
        {QStringLiteral("T-000001")});
    row("zh: conflict", true, failed(ResultCode::IdempotencyConflict),
        {QStringLiteral("不同的内容"), QStringLiteral("本次没有为订单 A1001 新建工单")},
        {QStringLiteral("已创建")});
    row("en: status unknown", false, failed(ResultCode::ExecutionStatusUnknown),
        {QStringLiteral("It is not known whether the ticket request for order A1001 went "
                        "through."),
         QStringLiteral("check the tickets of order A1001 before trying again")},
        outcomeEn);
    row("zh: status unknown", true, failed(ResultCode::ExecutionStatusUnknown),
        {QStringLiteral("无法确认是否已为订单 A1001 提交售后工单"),
         QStringLiteral("请先查看订单 A1001 的工单")},
        outcomeZh);
    row("en: in progress", false, failed(ResultCode::OperationInProgress),
        {QStringLiteral("still being processed")}, {QStringLiteral("was created")});
    row("zh: in progress", true, failed(ResultCode::OperationInProgress),
        {QStringLiteral("仍在处理中")}, {QStringLiteral("已创建")});
    row("en: order not found", false, failed(SupportCode::OrderNotFound),
        {QStringLiteral("Order A1001 was not found, so no ticket was created.")},
        {QStringLiteral("try again")});
    row("zh: order not found", true, failed(SupportCode::OrderNotFound),
        {QStringLiteral("未找到订单 A1001，未创建工单。")}, {});
    row("en: invalid details", false, failed(ResultCode::InvalidArgument),
        {QStringLiteral("the category or the description is invalid")}, {});
    QTest::newRow("en: invalid order number")
        << QStringLiteral("Create a ticket for order a1001: broken lid")
        << QStringList{QStringLiteral("createTicket(a1001)")}
        << QStringList{failed(ResultCode::InvalidArgument)}
        << QStringList{QStringLiteral("No ticket was created: “a1001” is not a valid order "
                                      "number")}
        << QStringList();
    row("en: unavailable", false, failed(ResultCode::ToolUnavailable),
        {QStringLiteral("The ticket service is temporarily unavailable; no ticket was created "
                        "for order A1001."),
         QStringLiteral("Please try again later.")},
        {QStringLiteral("not known")});
    row("zh: unavailable", true, failed(ResultCode::ToolUnavailable),
        {QStringLiteral("工单服务暂时不可用，未为订单 A1001 创建工单。"),
         QStringLiteral("请稍后重试。")},
        {});
    // A write that timed out may have been committed: its fate is unknown, not "not created".
    row("en: timed out", false, failed(ResultCode::ToolTimeout),
        {QStringLiteral("not known"), QStringLiteral("before trying again")}, outcomeEn);
    row("zh: timed out", true, failed(ResultCode::ToolTimeout),
        {QStringLiteral("无法确认")}, outcomeZh);
    row("en: unreadable result", false, QStringLiteral("<html>502</html>"),
        {QStringLiteral("not known")}, outcomeEn);

    // Mixed turns: the read's facts first, then the ticket, each part stated on its own.
    const QString mixed = QStringLiteral("Where is A1001? Also open a damaged-item ticket for it");
    const QStringList both{QStringLiteral("queryLogistics(A1001)"),
                           QStringLiteral("createTicket(A1001)")};
    QTest::newRow("mixed: both succeed")
        << mixed << both << QStringList{ok(logisticsA1001()), ticketCreated()}
        << QStringList{QStringLiteral("Order A1001 is in transit"),
                       QStringLiteral("Ticket T-000001 was created for order A1001")}
        << QStringList{QStringLiteral("try again")};
    QTest::newRow("mixed: lookup timed out, ticket created")
        << mixed << both << QStringList{failed(ResultCode::ToolTimeout), ticketCreated()}
        << QStringList{QStringLiteral("Ticket T-000001 was created for order A1001"),
                       QStringLiteral("The logistics lookup for order A1001 timed out"),
                       QStringLiteral("Please try again later.")}
        << QStringList{QStringLiteral("SF Express")};
    QTest::newRow("mixed: lookup timed out, ticket unknown")
        << mixed << both
        << QStringList{failed(ResultCode::ToolTimeout),
                       failed(ResultCode::ExecutionStatusUnknown)}
        << QStringList{QStringLiteral("timed out"), QStringLiteral("It is not known whether"),
                       QStringLiteral("The lookups that failed can be tried again later.")}
        << QStringList{QStringLiteral("Please try again later."), QStringLiteral("created")};
    QTest::newRow("zh: mixed, lookup ok, ticket declined")
        << QStringLiteral("A1001 的订单状态？另外给它提交换货工单，原因：尺码偏小")
        << QStringList{QStringLiteral("queryOrderStatus(A1001)"),
                       QStringLiteral("createTicket(A1001)")}
        << QStringList{ok(orderA1001()), failed(ResultCode::ConfirmationDeclined)}
        << QStringList{QStringLiteral("订单 A1001 已发货。"),
                       QStringLiteral("未创建工单：客服已拒绝。")}
        << QStringList{QStringLiteral("稍后重试")};
}

void tst_OfflineDemoModel::ticketAnswers()
{
    QFETCH(QString, question);
    QFETCH(QStringList, calls);
    QFETCH(QStringList, results);
    QFETCH(QStringList, contains);
    QFETCH(QStringList, excludes);

    for (const QString &result : results) {
        if (!QJsonDocument::fromJson(result.toUtf8()).isObject())
            QTest::ignoreMessage(QtWarningMsg, QRegularExpression(QStringLiteral("unreadable")));
    }
    const QString answer = answerFor(question, calls, results);
    for (const QString &part : contains)
        QVERIFY2(answer.contains(part), qPrintable(QStringLiteral("missing «%1» in: %2")
                                                       .arg(part, answer)));
    for (const QString &part : excludes)
        QVERIFY2(!answer.contains(part, Qt::CaseInsensitive),
                 qPrintable(QStringLiteral("unexpected «%1» in: %2").arg(part, answer)));
    static const QRegularExpression code(QStringLiteral("\\b[A-Z]+_[A-Z_]+\\b"));
    QVERIFY2(!code.match(answer).hasMatch(), qPrintable(answer));
    QCOMPARE(hasHan(answer), hasHan(question));
}

void tst_OfflineDemoModel::determinism_data()
{
    QTest::addColumn<ChatRequest>("request");

    QTest::newRow("planning") << planningRequest(
        QStringLiteral("Where's A1001 and is SKU-200 in stock, and what's the status of A1004?"));
    QTest::newRow("asking") << planningRequest(QStringLiteral("我的快递到哪了？"));
    QTest::newRow("ticket") << planningRequest(
        QStringLiteral("A1001 的订单状态？另外给它提交换货工单，原因：尺码偏小"));
    ChatRequest answering = planningRequest(QStringLiteral("A1001 的订单状态和物流，SKU-200 呢"));
    answering.messages.append(ChatMessage::assistant(
        QString(), {parseCall(QStringLiteral("queryOrderStatus(A1001)"), 1),
                    parseCall(QStringLiteral("queryLogistics(A1001)"), 2),
                    parseCall(QStringLiteral("queryInventory(SKU-200)"), 3)}));
    answering.messages.append(ChatMessage::toolResult(
        QStringLiteral("call_1"), QStringLiteral("queryOrderStatus"), ok(orderA1001())));
    answering.messages.append(ChatMessage::toolResult(
        QStringLiteral("call_2"), QStringLiteral("queryLogistics"),
        failed(ResultCode::ToolTimeout)));
    answering.messages.append(ChatMessage::toolResult(
        QStringLiteral("call_3"), QStringLiteral("queryInventory"), ok(inventorySku200())));
    QTest::newRow("answering") << answering;
}

void tst_OfflineDemoModel::determinism()
{
    QFETCH(ChatRequest, request);

    Delivery first;
    QVERIFY(deliver(request, &first));
    for (int run = 0; run < 3; ++run) {
        Delivery again;
        QVERIFY(deliver(request, &again));
        QCOMPARE(again.events, first.events);
        QCOMPARE(again.response.content, first.response.content);
        QCOMPARE(again.response.toolCalls, first.response.toolCalls);
        QCOMPARE(again.response.finishReason, first.response.finishReason);
        QCOMPARE(again.response.model, first.response.model);
    }
}

void tst_OfflineDemoModel::asyncDelivery_data()
{
    QTest::addColumn<ChatRequest>("request");
    QTest::addColumn<int>("minimumDeltas");

    QTest::newRow("tool calls") << planningRequest(QStringLiteral("A1001")) << 0;
    QTest::newRow("asking, zh") << planningRequest(QStringLiteral("你好")) << 2;
    ChatRequest answering = planningRequest(QStringLiteral("Where is A1001?"));
    answering.messages.append(ChatMessage::assistant(
        QString(), {parseCall(QStringLiteral("queryLogistics(A1001)"), 1)}));
    answering.messages.append(ChatMessage::toolResult(
        QStringLiteral("call_1"), QStringLiteral("queryLogistics"), ok(logisticsA1001())));
    QTest::newRow("answer, en") << answering << 3;
}

void tst_OfflineDemoModel::asyncDelivery()
{
    QFETCH(ChatRequest, request);
    QFETCH(int, minimumDeltas);

    Delivery delivery;
    QVERIFY(deliver(request, &delivery));
    QVERIFY2(!delivery.finishedBeforeEventLoop, "the reply finished inside complete()");
    QCOMPARE(delivery.finishedCount, 1);
    QCOMPARE(delivery.events.last(), QStringLiteral("finished"));
    QVERIFY(delivery.deltas.size() >= minimumDeltas);
    QCOMPARE(delivery.deltas.join(QString()), delivery.response.content);
    QCOMPARE(delivery.events.size(), delivery.deltas.size() + 1);

    // Each chunk needs its own pass through the event loop: one turn never delivers two.
    OfflineDemoModel model;
    std::unique_ptr<ChatReply> reply(model.complete(request));
    QSignalSpy deltas(reply.get(), &ChatReply::contentDelta);
    QSignalSpy finished(reply.get(), &ChatReply::finished);
    int turns = 0;
    while (finished.isEmpty() && turns < 1000) {
        const qsizetype before = deltas.size();
        QCoreApplication::processEvents();
        QVERIFY(deltas.size() - before <= 1);
        ++turns;
    }
    QCOMPARE(finished.size(), 1);
    QVERIFY(turns > deltas.size());
}

void tst_OfflineDemoModel::slowerStreaming()
{
    // A demo may pace the chunks; the events stay the same, only later.
    const ChatRequest request = planningRequest(QStringLiteral("Where is my order?"));
    Delivery fast;
    QVERIFY(deliver(request, &fast));

    OfflineDemoModel model;
    model.setChunkInterval(std::chrono::milliseconds(5));
    QCOMPARE(model.chunkInterval(), std::chrono::milliseconds(5));
    std::unique_ptr<ChatReply> reply(model.complete(request));
    QStringList events;
    connect(reply.get(), &ChatReply::contentDelta, this,
            [&events](const QString &text) { events.append(QStringLiteral("delta:") + text); });
    connect(reply.get(), &ChatReply::finished, this,
            [&events] { events.append(QStringLiteral("finished")); });
    QSignalSpy finished(reply.get(), &ChatReply::finished);
    QVERIFY(finished.wait(5000));
    QCOMPARE(events, fast.events);
}

void tst_OfflineDemoModel::abortBeforeFirstChunk()
{
    OfflineDemoModel model;
    std::unique_ptr<ChatReply> reply(model.complete(planningRequest(QStringLiteral("你好"))));
    QSignalSpy deltas(reply.get(), &ChatReply::contentDelta);
    QSignalSpy finished(reply.get(), &ChatReply::finished);
    reply->abort();
    QCOMPARE(finished.size(), 1);
    QVERIFY(reply->isFinished());
    QCOMPARE(reply->response().finishReason, FinishReason::Error);
    QCOMPARE(reply->response().errorCode, QStringLiteral("CANCELLED"));
    QVERIFY(!reply->response().errorMessage.isEmpty());
    QVERIFY(reply->response().toolCalls.isEmpty());
    reply->abort(); // idempotent
    for (int turn = 0; turn < 20; ++turn)
        QCoreApplication::processEvents();
    QCOMPARE(finished.size(), 1);
    QCOMPARE(deltas.size(), 0);
}

void tst_OfflineDemoModel::abortFromDeltaSlot()
{
    OfflineDemoModel model;
    std::unique_ptr<ChatReply> reply(model.complete(planningRequest(QStringLiteral("你好"))));
    QStringList events;
    connect(reply.get(), &ChatReply::contentDelta, this, [&events, &reply](const QString &) {
        events.append(QStringLiteral("delta"));
        reply->abort();
    });
    connect(reply.get(), &ChatReply::finished, this,
            [&events] { events.append(QStringLiteral("finished")); });
    QSignalSpy finished(reply.get(), &ChatReply::finished);
    QVERIFY(finished.wait(5000));
    for (int turn = 0; turn < 20; ++turn)
        QCoreApplication::processEvents();
    QCOMPARE(events, (QStringList{QStringLiteral("delta"), QStringLiteral("finished")}));
    QCOMPARE(reply->response().errorCode, QStringLiteral("CANCELLED"));
    QVERIFY(reply->response().content.isEmpty());
}

void tst_OfflineDemoModel::abortAfterFinishedIsNoOp()
{
    OfflineDemoModel model;
    std::unique_ptr<ChatReply> reply(model.complete(planningRequest(QStringLiteral("A1001"))));
    QSignalSpy finished(reply.get(), &ChatReply::finished);
    QVERIFY(finished.wait(5000));
    reply->abort();
    QCOMPARE(finished.size(), 1);
    QCOMPARE(reply->response().finishReason, FinishReason::ToolCalls);
    QCOMPARE(reply->response().toolCalls.size(), 1);
}

void tst_OfflineDemoModel::deleteFromDeltaSlot()
{
    // The caller may drop the reply mid-stream (deleteLater() from a slot, as ChatReply's
    // contract says); no timer of the reply outlives it.
    OfflineDemoModel model;
    QPointer<ChatReply> reply = model.complete(planningRequest(QStringLiteral("你好")));
    int deltas = 0;
    connect(reply, &ChatReply::contentDelta, this, [&deltas, &reply](const QString &) {
        ++deltas;
        reply->deleteLater();
    });
    QTRY_VERIFY_WITH_TIMEOUT(reply.isNull(), 5000);
    for (int turn = 0; turn < 20; ++turn)
        QCoreApplication::processEvents();
    QVERIFY(deltas >= 1);
}

QTEST_GUILESS_MAIN(tst_OfflineDemoModel)

#include "tst_offlinedemomodel.moc"
