#include "core/async/await.h"

#include <QPromise>
#include <QSignalSpy>
#include <QTest>
#include <QThread>
#include <QtConcurrent/QtConcurrentRun>

#include <memory>

using namespace AgentConsole;

class tst_Await : public QObject
{
    Q_OBJECT

private slots:
    void deliversTheResultOnTheContextThread();
    void runsAVoidHandler();
    void aDestroyedContextGetsNothing();
    void takesMoveOnlyHandlers();
};

void tst_Await::deliversTheResultOnTheContextThread()
{
    QObject context;
    int result = 0;
    QThread *deliveredOn = nullptr;
    QThread *ranOn = nullptr;
    await(QtConcurrent::run([&ranOn] {
              ranOn = QThread::currentThread();
              return 42;
          }),
          &context, [&](int value) {
              result = value;
              deliveredOn = QThread::currentThread();
          });
    QTRY_COMPARE(result, 42);
    QCOMPARE(deliveredOn, QThread::currentThread());
    QVERIFY(ranOn != QThread::currentThread());
    // The watcher goes once it has delivered.
    QTRY_COMPARE(context.findChildren<QFutureWatcherBase *>().size(), 0);
}

void tst_Await::runsAVoidHandler()
{
    QObject context;
    bool ran = false;
    QPromise<void> promise;
    await(promise.future(), &context, [&ran] { ran = true; });
    promise.start();
    QCoreApplication::processEvents();
    QVERIFY(!ran); // not before the future finishes
    promise.finish();
    QTRY_VERIFY(ran);
}

void tst_Await::aDestroyedContextGetsNothing()
{
    auto context = std::make_unique<QObject>();
    bool ran = false;
    QPromise<int> promise;
    promise.start();
    await(promise.future(), context.get(), [&ran](int) { ran = true; });
    context.reset();
    promise.addResult(7);
    promise.finish();
    // A second await on a live context, started after, proves the event loop has turned.
    QObject witness;
    bool witnessed = false;
    QPromise<int> second;
    second.start();
    await(second.future(), &witness, [&witnessed](int) { witnessed = true; });
    second.addResult(1);
    second.finish();
    QTRY_VERIFY(witnessed);
    QVERIFY(!ran);
}

void tst_Await::takesMoveOnlyHandlers()
{
    QObject context;
    auto owned = std::make_unique<int>(5);
    int seen = 0;
    QPromise<int> promise;
    promise.start();
    await(promise.future(), &context,
          [owned = std::move(owned), &seen](int value) mutable { seen = *owned + value; });
    promise.addResult(2);
    promise.finish();
    QTRY_COMPARE(seen, 7);
}

QTEST_GUILESS_MAIN(tst_Await)
#include "tst_await.moc"
