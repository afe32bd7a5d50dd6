#include "core/faults/livefaults.h"
#include "core/resilience/toolexecutor.h"
#include "core/support/supportfailures.h"
#include "core/support/supportstore.h"
#include "core/support/supporttools.h"
#include "core/tools/toolregistry.h"
#include "tests/support/resultcodeprinting.h"

#include <QFutureWatcher>
#include <QJsonArray>
#include <QJsonDocument>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QSqlDatabase>
#include <QSqlQuery>
#include <QTemporaryDir>
#include <QTest>

using namespace AgentConsole;

namespace {

RetryPolicy fastPolicy()
{
    RetryPolicy policy;
    policy.attemptTimeout = std::chrono::milliseconds(150);
    policy.initialDelay = std::chrono::milliseconds(5);
    policy.maxDelay = std::chrono::milliseconds(10);
    return policy;
}

const TrustedContext kAcme{QStringLiteral("u-1001"), QStringLiteral("t-acme"),
                           QStringLiteral("c-test"), QStringLiteral("r-test"), Language::English};

QJsonObject args(const char *key, const QString &value)
{
    return QJsonObject{{QString::fromLatin1(key), value}};
}

} // namespace

class tst_SupportTools : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void init();
    void cleanup();

    void storeIsCreatedOnceAndReopened();
    void storeRefusesAnUnknownSchemaVersion();
    void ordersAreScopedToTheTenant();
    void logisticsOfEveryDemoOrder_data();
    void logisticsOfEveryDemoOrder();
    void inventoryStatuses_data();
    void inventoryStatuses();
    void defaultStaffIsTheFirstTenants();
    void demoDataComesInBothLanguages_data();
    void demoDataComesInBothLanguages();

    void invalidArgumentsAreRejectedBeforeAnyAttempt_data();
    void invalidArgumentsAreRejectedBeforeAnyAttempt();
    void missingContextIsRejected();
    void descriptorsCarryTheirSchemas();

    void throughTheExecutor_data();
    void throughTheExecutor();
    void storeErrorsNeverReachTheResult();
    void injectedRejectionLogsItsStatus();

private:
    ToolCallOutcome run(const QString &tool, const QJsonObject &arguments,
                        const TrustedContext &context = kAcme);
    void useFaults(const QByteArray &json);

    std::unique_ptr<QTemporaryDir> m_dir;
    std::shared_ptr<SupportStore> m_store;
    std::unique_ptr<ToolRegistry> m_registry;
    std::unique_ptr<ToolExecutor> m_executor;
};

void tst_SupportTools::init()
{
    m_dir = std::make_unique<QTemporaryDir>();
    QVERIFY(m_dir->isValid());
    m_store = std::make_shared<SupportStore>(m_dir->filePath(QStringLiteral("store.sqlite")));
    QString error;
    QVERIFY2(m_store->prepare(&error), qPrintable(error));
    useFaults({});
}

void tst_SupportTools::cleanup()
{
    m_executor.reset();
    m_registry.reset();
    m_store.reset();
    m_dir.reset();
}

void tst_SupportTools::useFaults(const QByteArray &json)
{
    std::shared_ptr<LiveFaults> plan;
    if (!json.isEmpty()) {
        QString error;
        auto parsed = FaultPlan::fromJson(json, &error);
        QVERIFY2(parsed, qPrintable(error));
        plan = std::make_shared<LiveFaults>(*parsed);
    }
    m_executor.reset();
    m_registry = std::make_unique<ToolRegistry>();
    registerSupportTools(*m_registry, m_store, plan);
    m_executor = std::make_unique<ToolExecutor>();
}

ToolCallOutcome tst_SupportTools::run(const QString &tool, const QJsonObject &arguments,
                                      const TrustedContext &context)
{
    QFutureWatcher<ToolCallOutcome> watcher;
    QSignalSpy finished(&watcher, &QFutureWatcherBase::finished);
    ToolCallRequest request;
    request.tool = m_registry->find(tool);
    request.arguments = arguments;
    request.context = context;
    request.policy = fastPolicy();
    watcher.setFuture(m_executor->execute(std::move(request)));
    if (!watcher.isFinished() && !finished.wait(10'000))
        qFatal("tool call did not finish");
    return watcher.result();
}

void tst_SupportTools::storeIsCreatedOnceAndReopened()
{
    const QString path = m_store->filePath();
    SupportStore again(path);
    QString error;
    QVERIFY2(again.prepare(&error), qPrintable(error));
    QCOMPARE(again.order(QStringLiteral("t-acme"), QStringLiteral("A1001")).status,
             StoreAnswer::Status::Found);
}

void tst_SupportTools::storeRefusesAnUnknownSchemaVersion()
{
    const QString path = m_dir->filePath(QStringLiteral("future.sqlite"));
    {
        QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"),
                                                    QStringLiteral("future"));
        db.setDatabaseName(path);
        QVERIFY(db.open());
        QSqlQuery(db).exec(QStringLiteral("CREATE TABLE t (x)"));
        QSqlQuery(db).exec(QStringLiteral("PRAGMA user_version = 9"));
        db.close();
    }
    QSqlDatabase::removeDatabase(QStringLiteral("future"));
    SupportStore store(path);
    QString error;
    QVERIFY(!store.prepare(&error));
    QVERIFY2(error.contains(QLatin1String("schema version 9")), qPrintable(error));
}

void tst_SupportTools::ordersAreScopedToTheTenant()
{
    const StoreAnswer own = m_store->order(QStringLiteral("t-acme"), QStringLiteral("A1001"));
    QCOMPARE(own.status, StoreAnswer::Status::Found);
    QCOMPARE(own.data.value(QLatin1String("status")).toString(), QStringLiteral("SHIPPED"));
    QCOMPARE(own.data.value(QLatin1String("items")).toArray().size(), 2);
    // Another tenant's order is indistinguishable from no order at all.
    QCOMPARE(m_store->order(QStringLiteral("t-acme"), QStringLiteral("A2001")).status,
             StoreAnswer::Status::NotFound);
    QCOMPARE(m_store->logistics(QStringLiteral("t-acme"), QStringLiteral("A2001")).status,
             StoreAnswer::Status::NotFound);
    QCOMPARE(m_store->order(QStringLiteral("t-globex"), QStringLiteral("A2001")).status,
             StoreAnswer::Status::Found);
}

void tst_SupportTools::logisticsOfEveryDemoOrder_data()
{
    QTest::addColumn<QString>("orderId");
    QTest::addColumn<bool>("found");
    QTest::addColumn<QString>("tracking");
    QTest::addColumn<QString>("status");
    QTest::newRow("A1001 in transit") << "A1001" << true << "SF10010001" << "IN_TRANSIT";
    QTest::newRow("A1002 no logistics yet") << "A1002" << false << "" << "";
    QTest::newRow("A1003 delivered") << "A1003" << true << "SF10030003" << "DELIVERED";
    QTest::newRow("A9999 no such order") << "A9999" << false << "" << "";
}

void tst_SupportTools::logisticsOfEveryDemoOrder()
{
    QFETCH(QString, orderId);
    QFETCH(bool, found);
    QFETCH(QString, tracking);
    QFETCH(QString, status);
    const StoreAnswer answer = m_store->logistics(QStringLiteral("t-acme"), orderId);
    QCOMPARE(answer.status == StoreAnswer::Status::Found, found);
    if (found) {
        QCOMPARE(answer.data.value(QLatin1String("trackingNumber")).toString(), tracking);
        QCOMPARE(answer.data.value(QLatin1String("status")).toString(), status);
        QVERIFY(!answer.data.value(QLatin1String("events")).toArray().isEmpty());
    }
}

void tst_SupportTools::inventoryStatuses_data()
{
    QTest::addColumn<QString>("sku");
    QTest::addColumn<QString>("status");
    QTest::addColumn<int>("available");
    QTest::newRow("in stock") << "SKU-100" << "IN_STOCK" << 120;
    QTest::newRow("low stock") << "SKU-200" << "LOW_STOCK" << 3;
    QTest::newRow("out of stock") << "SKU-300" << "OUT_OF_STOCK" << 0;
}

void tst_SupportTools::inventoryStatuses()
{
    QFETCH(QString, sku);
    QFETCH(QString, status);
    QFETCH(int, available);
    const ToolCallOutcome outcome = run(QStringLiteral("queryInventory"), args("sku", sku));
    QVERIFY(outcome.result.success);
    QCOMPARE(outcome.result.code, ResultCode::Ok);
    const QJsonObject data = outcome.result.data.toObject();
    QCOMPARE(data.value(QLatin1String("status")).toString(), status);
    QCOMPARE(data.value(QLatin1String("available")).toInt(), available);
    QCOMPARE(outcome.attempts.size(), 1);
}

// Issue #41 §7, the contract the result cards read: words keep their English under their key
// and add the Chinese under the key + "Zh"; ids, statuses, codes, times and amounts have no
// sibling. The whole data object is compared, so a key added, renamed or lost fails here.
void tst_SupportTools::demoDataComesInBothLanguages_data()
{
    QTest::addColumn<QString>("tool");
    QTest::addColumn<QJsonObject>("arguments");
    QTest::addColumn<QJsonObject>("data");

    const auto item = [](const char *sku, const char *name, const char *nameZh, int quantity) {
        return QJsonObject{{QStringLiteral("sku"), QLatin1String(sku)},
                           {QStringLiteral("name"), QLatin1String(name)},
                           {QStringLiteral("nameZh"), QString::fromUtf8(nameZh)},
                           {QStringLiteral("quantity"), quantity}};
    };
    QTest::newRow("order A1001") << QStringLiteral("queryOrderStatus")
                                 << args("orderId", QStringLiteral("A1001"))
                                 << QJsonObject{
                                        {QStringLiteral("orderId"), QStringLiteral("A1001")},
                                        {QStringLiteral("status"), QStringLiteral("SHIPPED")},
                                        {QStringLiteral("createdAt"),
                                         QStringLiteral("2026-11-24")},
                                        {QStringLiteral("totalAmount"), QStringLiteral("299.00")},
                                        {QStringLiteral("currency"), QStringLiteral("CNY")},
                                        {QStringLiteral("items"),
                                         QJsonArray{item("SKU-100", "Ceramic mug set",
                                                         "陶瓷马克杯套装", 2),
                                                    item("SKU-200", "Bamboo cutting board",
                                                         "竹制砧板", 1)}}};

    const auto event = [](const char *time, const char *location, const char *locationZh,
                          const char *description, const char *descriptionZh) {
        return QJsonObject{{QStringLiteral("time"), QLatin1String(time)},
                           {QStringLiteral("location"), QLatin1String(location)},
                           {QStringLiteral("locationZh"), QString::fromUtf8(locationZh)},
                           {QStringLiteral("description"), QLatin1String(description)},
                           {QStringLiteral("descriptionZh"), QString::fromUtf8(descriptionZh)}};
    };
    QTest::newRow("logistics A1001")
        << QStringLiteral("queryLogistics") << args("orderId", QStringLiteral("A1001"))
        << QJsonObject{
               {QStringLiteral("orderId"), QStringLiteral("A1001")},
               {QStringLiteral("carrier"), QStringLiteral("SF Express")},
               {QStringLiteral("carrierZh"), QStringLiteral("顺丰速运")},
               {QStringLiteral("trackingNumber"), QStringLiteral("SF10010001")},
               {QStringLiteral("status"), QStringLiteral("IN_TRANSIT")},
               {QStringLiteral("currentLocation"), QStringLiteral("Shanghai Pudong Hub")},
               {QStringLiteral("currentLocationZh"), QStringLiteral("上海浦东转运中心")},
               {QStringLiteral("updatedAt"), QStringLiteral("2026-11-28T09:30:00")},
               {QStringLiteral("events"),
                QJsonArray{event("2026-11-25T18:00:00", "Suzhou Warehouse", "苏州仓",
                                 "Picked up by carrier", "承运商已揽收"),
                           event("2026-11-28T09:30:00", "Shanghai Pudong Hub",
                                 "上海浦东转运中心", "Arrived at sorting hub",
                                 "已到达分拣中心")}}};
    QTest::newRow("logistics A1003")
        << QStringLiteral("queryLogistics") << args("orderId", QStringLiteral("A1003"))
        << QJsonObject{
               {QStringLiteral("orderId"), QStringLiteral("A1003")},
               {QStringLiteral("carrier"), QStringLiteral("SF Express")},
               {QStringLiteral("carrierZh"), QStringLiteral("顺丰速运")},
               {QStringLiteral("trackingNumber"), QStringLiteral("SF10030003")},
               {QStringLiteral("status"), QStringLiteral("DELIVERED")},
               {QStringLiteral("currentLocation"), QStringLiteral("Hangzhou Xihu Service Point")},
               {QStringLiteral("currentLocationZh"), QStringLiteral("杭州西湖服务点")},
               {QStringLiteral("updatedAt"), QStringLiteral("2026-11-18T15:10:00")},
               {QStringLiteral("events"),
                QJsonArray{event("2026-11-16T10:00:00", "Suzhou Warehouse", "苏州仓",
                                 "Picked up by carrier", "承运商已揽收"),
                           event("2026-11-18T15:10:00", "Hangzhou Xihu Service Point",
                                 "杭州西湖服务点", "Delivered, signed by customer",
                                 "已送达，客户已签收")}}};
    QTest::newRow("stock SKU-200")
        << QStringLiteral("queryInventory") << args("sku", QStringLiteral("SKU-200"))
        << QJsonObject{{QStringLiteral("sku"), QStringLiteral("SKU-200")},
                       {QStringLiteral("name"), QStringLiteral("Bamboo cutting board")},
                       {QStringLiteral("nameZh"), QStringLiteral("竹制砧板")},
                       {QStringLiteral("available"), 3},
                       {QStringLiteral("status"), QStringLiteral("LOW_STOCK")},
                       {QStringLiteral("warehouse"), QStringLiteral("Suzhou Warehouse")},
                       {QStringLiteral("warehouseZh"), QStringLiteral("苏州仓")}};
}

void tst_SupportTools::demoDataComesInBothLanguages()
{
    QFETCH(QString, tool);
    QFETCH(QJsonObject, arguments);
    QFETCH(QJsonObject, data);
    const ToolCallOutcome outcome = run(tool, arguments);
    QCOMPARE(outcome.result.code, ResultCode::Ok);
    const QJsonObject actual = outcome.result.data.toObject();
    QCOMPARE(QJsonDocument(actual).toJson(), QJsonDocument(data).toJson());
}

void tst_SupportTools::defaultStaffIsTheFirstTenants()
{
    const auto staff = m_store->firstStaffMember();
    QVERIFY(staff);
    QCOMPARE(staff->tenantId, QStringLiteral("t-acme"));
    QCOMPARE(staff->userId, QStringLiteral("u-1001"));
    QCOMPARE(m_store->firstStaffMember(QStringLiteral("t-globex"))->userId,
             QStringLiteral("u-2001"));
    QVERIFY(!m_store->staffMember(QStringLiteral("nobody")));
}

void tst_SupportTools::invalidArgumentsAreRejectedBeforeAnyAttempt_data()
{
    QTest::addColumn<QString>("tool");
    QTest::addColumn<QByteArray>("arguments");
    QTest::newRow("too few digits") << "queryOrderStatus" << QByteArray(R"({"orderId":"A12"})");
    QTest::newRow("lower case") << "queryLogistics" << QByteArray(R"({"orderId":"a1001"})");
    QTest::newRow("wrong letter") << "queryLogistics" << QByteArray(R"({"orderId":"B1001"})");
    QTest::newRow("too many digits")
        << "queryOrderStatus" << QByteArray(R"({"orderId":"A12345678901"})");
    QTest::newRow("trailing text") << "queryOrderStatus" << QByteArray(R"({"orderId":"A1001 "})");
    QTest::newRow("number") << "queryOrderStatus" << QByteArray(R"({"orderId":1001})");
    QTest::newRow("missing") << "queryLogistics" << QByteArray(R"({})");
    QTest::newRow("extra property")
        << "queryLogistics" << QByteArray(R"({"orderId":"A1001","userId":"u-2001"})");
    QTest::newRow("bad sku") << "queryInventory" << QByteArray(R"({"sku":"200"})");
}

void tst_SupportTools::invalidArgumentsAreRejectedBeforeAnyAttempt()
{
    QFETCH(QString, tool);
    QFETCH(QByteArray, arguments);
    // A fault plan that would fail every attempt: an attempt must never be made.
    useFaults(R"({"tools": {"queryOrderStatus": {"permanentFailure": true},
                 "queryLogistics": {"permanentFailure": true},
                 "queryInventory": {"permanentFailure": true}}})");
    const ToolCallOutcome outcome = run(tool, QJsonDocument::fromJson(arguments).object());
    QCOMPARE(outcome.result.code, ResultCode::InvalidArgument);
    QVERIFY(!outcome.result.success);
    QCOMPARE(outcome.attempts.size(), 0);
    QVERIFY(!outcome.result.errors.isEmpty());
}

void tst_SupportTools::missingContextIsRejected()
{
    TrustedContext noUser = kAcme;
    noUser.userId.clear();
    const ToolCallOutcome outcome = run(QStringLiteral("queryOrderStatus"),
                                        args("orderId", QStringLiteral("A1001")), noUser);
    QCOMPARE(outcome.result.code, ResultCode::ContextMissing);
    QCOMPARE(outcome.attempts.size(), 0);
}

void tst_SupportTools::descriptorsCarryTheirSchemas()
{
    QCOMPARE(m_registry->names(), (QStringList{QStringLiteral("queryOrderStatus"),
                                               QStringLiteral("queryLogistics"),
                                               QStringLiteral("queryInventory"),
                                               QStringLiteral("listOrderTickets")}));
    for (const ToolDescriptor &descriptor : m_registry->descriptors()) {
        QVERIFY(!descriptor.description.isEmpty());
        QCOMPARE(descriptor.parameters.value(QLatin1String("type")).toString(),
                 QStringLiteral("object"));
        QVERIFY(!descriptor.hasSideEffects);
        const QJsonObject function = descriptor.toFunctionJson()
                                         .value(QLatin1String("function")).toObject();
        QCOMPARE(function.value(QLatin1String("name")).toString(), descriptor.name);
    }
}

void tst_SupportTools::throughTheExecutor_data()
{
    QTest::addColumn<QByteArray>("faults");
    QTest::addColumn<QString>("tool");
    QTest::addColumn<QString>("orderId");
    QTest::addColumn<ResultCode::Code>("code");
    QTest::addColumn<int>("attempts");
    QTest::newRow("found first time")
        << QByteArray() << "queryLogistics" << "A1001" << ResultCode::Ok << 1;
    QTest::newRow("no logistics is not retried")
        << QByteArray() << "queryLogistics" << "A1002" << SupportCode::LogisticsNotFound << 1;
    QTest::newRow("other tenant's order")
        << QByteArray() << "queryOrderStatus" << "A2001" << SupportCode::OrderNotFound << 1;
    QTest::newRow("transient twice then found")
        << QByteArray(R"({"tools":{"queryLogistics":{"transientFailures":2}}})")
        << "queryLogistics" << "A1001" << ResultCode::Ok << 3;
    QTest::newRow("transient always")
        << QByteArray(R"({"tools":{"queryLogistics":{"transientFailures":9}}})")
        << "queryLogistics" << "A1001" << ResultCode::ToolUnavailable << 3;
    QTest::newRow("hang times out every attempt")
        << QByteArray(R"({"tools":{"queryLogistics":{"hang":true}}})")
        << "queryLogistics" << "A1001" << ResultCode::ToolTimeout << 3;
    QTest::newRow("rejected is not retried")
        << QByteArray(R"({"tools":{"queryOrderStatus":{"permanentFailure":true}}})")
        << "queryOrderStatus" << "A1001" << ResultCode::ToolRejected << 1;
    QTest::newRow("access denied is not retried")
        << QByteArray(R"({"tools":{"queryOrderStatus":{"accessDenied":true}}})")
        << "queryOrderStatus" << "A1001" << ResultCode::ToolAccessDenied << 1;
    QTest::newRow("injected not found")
        << QByteArray(R"({"tools":{"queryOrderStatus":{"notFound":true}}})")
        << "queryOrderStatus" << "A1001" << SupportCode::OrderNotFound << 1;
    QTest::newRow("latency under the timeout")
        << QByteArray(R"({"tools":{"queryOrderStatus":{"latencyMs":20}}})")
        << "queryOrderStatus" << "A1001" << ResultCode::Ok << 1;
    QTest::newRow("the backend's fault for a tool without an entry")
        << QByteArray(R"({"backend":{"transientFailures":9}})")
        << "queryOrderStatus" << "A1001" << ResultCode::ToolUnavailable << 3;
    QTest::newRow("a tool's own entry instead of the backend's")
        << QByteArray(R"({"backend":{"accessDenied":true},"tools":{"queryLogistics":{}}})")
        << "queryLogistics" << "A1001" << ResultCode::Ok << 1;
    QTest::newRow("a rejection standing for 404 is still a rejection")
        << QByteArray(R"({"tools":{"queryOrderStatus":{"permanentFailure":true,
                                                       "permanentStatus":404}}})")
        << "queryOrderStatus" << "A1001" << ResultCode::ToolRejected << 1;
    QTest::newRow("a rejection standing for 422")
        << QByteArray(R"({"backend":{"permanentFailure":true,"permanentStatus":422}})")
        << "queryLogistics" << "A1001" << ResultCode::ToolRejected << 1;
    QTest::newRow("an injected bug is an internal error, not retried")
        << QByteArray(R"({"tools":{"queryLogistics":{"internalError":true}}})")
        << "queryLogistics" << "A1001" << ResultCode::InternalError << 1;
}

void tst_SupportTools::throughTheExecutor()
{
    QFETCH(QByteArray, faults);
    QFETCH(QString, tool);
    QFETCH(QString, orderId);
    QFETCH(ResultCode::Code, code);
    QFETCH(int, attempts);
    useFaults(faults);
    const ToolCallOutcome outcome = run(tool, args("orderId", orderId));
    QCOMPARE(outcome.result.code, code);
    QCOMPARE(outcome.attempts.size(), attempts);
    QCOMPARE(outcome.result.success, code == ResultCode::Ok);
    QVERIFY(!outcome.result.message.isEmpty());
    // Only a bug has an incident id; the injected exception's text stays in the log.
    QCOMPARE(!outcome.incidentId.isEmpty(), code == ResultCode::InternalError);
    const QByteArray shown = QJsonDocument(outcome.result.toJson()).toJson();
    QVERIFY2(!shown.contains("fault plan"), shown.constData());
}

void tst_SupportTools::injectedRejectionLogsItsStatus()
{
    useFaults(R"({"backend":{"permanentFailure":true,"permanentStatus":409}})");
    QTest::ignoreMessage(QtWarningMsg,
                         QRegularExpression(QStringLiteral("stands for HTTP 409")));
    const ToolCallOutcome outcome = run(QStringLiteral("queryOrderStatus"),
                                        args("orderId", QStringLiteral("A1001")));
    QCOMPARE(outcome.result.code, ResultCode::ToolRejected);
}

void tst_SupportTools::storeErrorsNeverReachTheResult()
{
    {
        QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"),
                                                    QStringLiteral("saboteur"));
        db.setDatabaseName(m_store->filePath());
        QVERIFY(db.open());
        QVERIFY(QSqlQuery(db).exec(QStringLiteral("DROP TABLE shipment_events")));
        db.close();
    }
    QSqlDatabase::removeDatabase(QStringLiteral("saboteur"));
    const ToolCallOutcome outcome = run(QStringLiteral("queryLogistics"),
                                        args("orderId", QStringLiteral("A1001")));
    QCOMPARE(outcome.result.code, ResultCode::ToolUnavailable);
    QCOMPARE(outcome.attempts.size(), 3);
    const QString visible = QString::fromUtf8(
        QJsonDocument(outcome.result.toJson()).toJson(QJsonDocument::Compact));
    for (const char *secret :
        {"shipment_events", "no such table", "sqlite", "SELECT", "store.sqlite"})
        QVERIFY2(!visible.contains(QLatin1String(secret), Qt::CaseInsensitive), secret);
}

QTEST_GUILESS_MAIN(tst_SupportTools)
#include "tst_supporttools.moc"
