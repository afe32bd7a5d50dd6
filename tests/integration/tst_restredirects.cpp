// The REST backend never follows a redirect (DESIGN.md, "Bounds on everything from outside"):
// a 3xx from the support API on 127.0.0.1 pointing at 127.0.0.2 is a rejected lookup, not
// retried, and the second address receives nothing (no staff or tenant headers leave).
#include "fakeopenaiserver.h"

#include "core/resilience/toolexecutor.h"
#include "core/support/httpsupportbackend.h"
#include "core/support/supporttools.h"
#include "core/tools/toolregistry.h"

#include <QFutureWatcher>
#include <QLoggingCategory>
#include <QSignalSpy>
#include <QTest>

using namespace AgentConsole;
using namespace AgentConsole::Testing;

class tst_RestRedirects final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase()
    {
        QLoggingCategory::setFilterRules(QStringLiteral("agentconsole.*=false"));
    }
    void redirectIsRejected_data();
    void redirectIsRejected();
};

void tst_RestRedirects::redirectIsRejected_data()
{
    QTest::addColumn<int>("status");
    for (const int status : {301, 302, 303, 307, 308})
        QTest::addRow("%d", status) << status;
}

void tst_RestRedirects::redirectIsRejected()
{
    QFETCH(int, status);
    FakeOpenAiServer api;
    QVERIFY(api.listen());
    FakeOpenAiServer elsewhere;
    QVERIFY(elsewhere.listen(QHostAddress(QStringLiteral("127.0.0.2"))));
    FakeResponse moved = FakeResponse::json(status, QJsonObject{});
    moved.headers = {{"Location", elsewhere.rootUrl().toString().toUtf8()
                                      + "/api/v1/orders/A1001"}};
    for (int i = 0; i < 3; ++i)
        api.enqueue(moved);
    elsewhere.enqueue(FakeResponse::json(200, QJsonObject{{QStringLiteral("orderId"),
                                                           QStringLiteral("A1001")}}));

    ToolRegistry registry;
    registerSupportTools(registry, std::make_shared<HttpSupportBackend>(
                                       HttpBackendConfig{api.rootUrl(), 2000}),
                         nullptr);
    RetryPolicy policy;
    policy.attemptTimeout = std::chrono::milliseconds(2000);
    policy.initialDelay = std::chrono::milliseconds(5);
    policy.maxDelay = std::chrono::milliseconds(10);
    ToolExecutor executor;

    ToolCallRequest request;
    request.tool = registry.find(QStringLiteral("queryOrderStatus"));
    request.arguments = QJsonObject{{QStringLiteral("orderId"), QStringLiteral("A1001")}};
    request.context = {QStringLiteral("u-1001"), QStringLiteral("t-acme"),
                       QStringLiteral("c-redirect"), QStringLiteral("r-redirect"),
                       Language::English};
    request.policy = policy;
    QFutureWatcher<ToolCallOutcome> watcher;
    QSignalSpy finished(&watcher, &QFutureWatcherBase::finished);
    watcher.setFuture(executor.execute(std::move(request)));
    QVERIFY(watcher.isFinished() || finished.wait(20000));
    const ToolCallOutcome outcome = watcher.result();

    QCOMPARE(outcome.result.code, ResultCode::ToolRejected);
    QCOMPARE(outcome.attempts.size(), 1); // not retried
    QCOMPARE(api.requestCount(), 1);
    QCOMPARE(api.requests().at(0).headers.value("x-staff-id"), QByteArray("u-1001"));
    QCOMPARE(elsewhere.requestCount(), 0);
    QVERIFY(!outcome.result.message.contains(QLatin1String("127.0.0")));
}

QTEST_GUILESS_MAIN(tst_RestRedirects)
#include "tst_restredirects.moc"
