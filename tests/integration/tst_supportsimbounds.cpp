// support-sim's bounds (docs/SUPPORT-SIM.md, "Bounds"): fault files only regular and small;
// request bodies over 1 MiB refused with 413 before they are buffered (announced or streamed),
// with the real executable's peak memory measured; idle connections closed, held answers not.
#include "app/support-sim/requestmeter.h"
#include "processmemory.h"
#include "supportsimprocess.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QSignalSpy>
#include <QTcpSocket>
#include <QTemporaryDir>
#include <QTest>

#include <sys/stat.h>

using namespace AgentConsole;
using namespace AgentConsole::Testing;

namespace {

constexpr qint64 kMiB = 1024 * 1024;

// The peak resident memory of a process so far (VmHWM), in bytes; -1 when unknown.
qint64 peakMemory(qint64 pid)
{
    const qint64 kib = peakResidentKiB(pid);
    return kib < 0 ? -1 : kib * 1024;
}

// What a raw connection got back: everything the sim sent before it closed.
struct RawExchange
{
    QByteArray received;
    qint64 sent = 0;
    bool closedBySim = false;

    int status() const
    {
        if (!received.startsWith("HTTP/1.1 "))
            return 0;
        return received.mid(9, 3).toInt();
    }
    // The status of the last answer: a request without a body may be answered (by
    // QHttpServer) before or after the sim refuses the bytes that follow it.
    int lastStatus() const
    {
        const qsizetype at = received.lastIndexOf("HTTP/1.1 ");
        return at < 0 ? 0 : received.mid(at + 9, 3).toInt();
    }
    QJsonObject body() const
    {
        const qsizetype start = received.indexOf("\r\n\r\n");
        return start < 0 ? QJsonObject()
                         : QJsonDocument::fromJson(received.mid(start + 4)).object();
    }
};

} // namespace

class tst_SupportSimBounds : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void cleanup();

    void meterFramesRequests_data();
    void meterFramesRequests();
    void faultFilesAreBounded_data();
    void faultFilesAreBounded();
    void announcedBodyOverTheLimitIsAnsweredUnread();
    void streamedBodyIsCutOffWithBoundedMemory_data();
    void streamedBodyIsCutOffWithBoundedMemory();
    void pipelinedBytesAreMeteredOnce();
    void controlApiTakesBodiesUpToTheLimit();
    void idleConnectionsAreClosed_data();
    void idleConnectionsAreClosed();

private:
    void startSim(const QStringList &arguments = {});
    // Connects, writes `head`, then up to `streamBytes` more in 64 KiB pieces of `piece`
    // while the sim has not closed, and reads until the sim closes (or 10 s pass).
    RawExchange exchange(const QByteArray &head, qint64 streamBytes = 0,
                         const QByteArray &piece = {});

    std::unique_ptr<SupportSimProcess> m_sim;
};

void tst_SupportSimBounds::cleanup()
{
    if (m_sim)
        QVERIFY(m_sim->stop());
    m_sim.reset();
}

void tst_SupportSimBounds::startSim(const QStringList &arguments)
{
    m_sim = std::make_unique<SupportSimProcess>();
    QString error;
    QVERIFY2(m_sim->start(arguments, &error), qPrintable(error));
}

RawExchange tst_SupportSimBounds::exchange(const QByteArray &head, qint64 streamBytes,
                                           const QByteArray &piece)
{
    RawExchange result;
    QTcpSocket socket;
    socket.connectToHost(QHostAddress::LocalHost, quint16(m_sim->baseUrl().port()));
    if (!socket.waitForConnected(5000))
        qFatal("cannot connect to the sim");
    socket.write(head);
    result.sent = head.size();
    QElapsedTimer clock;
    clock.start();
    // Stream until the sim answers that it closes (a refusal), reading as it answers. Not
    // until its first byte: a request without a body (no length, no chunks) is answered by
    // QHttpServer at once, and the bytes after it are refused only once they pass the head
    // limit; stopping at that first answer could leave them exactly at the limit, which is
    // rightly no refusal, and the exchange would wait for the idle timeout.
    while (result.sent - head.size() < streamBytes && clock.elapsed() < 10'000) {
        result.received += socket.readAll();
        if (socket.state() != QAbstractSocket::ConnectedState
            || result.received.contains("\r\nConnection: close\r\n")) {
            break;
        }
        if (socket.bytesToWrite() < 256 * 1024) {
            socket.write(piece);
            result.sent += piece.size();
        }
        socket.waitForBytesWritten(100);
        socket.waitForReadyRead(0);
    }
    while (socket.state() == QAbstractSocket::ConnectedState && clock.elapsed() < 10'000) {
        if (!socket.waitForReadyRead(200) && socket.error() != QAbstractSocket::SocketTimeoutError)
            break;
        result.received += socket.readAll();
    }
    result.received += socket.readAll();
    result.closedBySim = socket.state() != QAbstractSocket::ConnectedState;
    return result;
}

void tst_SupportSimBounds::meterFramesRequests_data()
{
    using V = RequestMeter::Verdict;
    QTest::addColumn<QByteArray>("bytes");
    QTest::addColumn<RequestMeter::Verdict>("verdict");
    QTest::addColumn<int>("completed");
    QTest::addColumn<bool>("midRequest");
    const QByteArray get = "GET /api/v1/orders/A1001 HTTP/1.1\r\nHost: sim\r\n\r\n";
    const QByteArray post = "POST /api/v1/tickets HTTP/1.1\r\nHost: sim\r\n";
    const QByteArray chunked = post + "Transfer-Encoding: chunked\r\n\r\n";
    // The limit is 16 bytes of body here.
    QTest::newRow("a GET") << get << V::Continue << 1 << false;
    QTest::newRow("keep-alive GETs, blank line between") << get + "\r\n" + get << V::Continue
                                                         << 2 << false;
    QTest::newRow("body at the limit")
        << post + "Content-Length: 16\r\n\r\n" + QByteArray(16, 'x') + get << V::Continue << 2
        << false;
    QTest::newRow("length over the limit, no body yet")
        << post + "Content-Length: 17\r\n\r\n" << V::BodyTooLarge << 0 << true;
    QTest::newRow("length of 50 MB") << post + "content-length: 52428800\r\n\r\n"
                                     << V::BodyTooLarge << 0 << true;
    QTest::newRow("chunked within the limit")
        << chunked + "5\r\nhello\r\nB;ext=1\r\nhello world\r\n0\r\n\r\n" + get << V::Continue
        << 2 << false;
    QTest::newRow("chunked with trailers")
        << chunked + "3\r\nabc\r\n0\r\nX-Checksum: 1\r\n\r\n" << V::Continue << 1 << false;
    QTest::newRow("chunked over the limit")
        << chunked + "10\r\n" + QByteArray(16, 'x') + "\r\n1\r\n" << V::BodyTooLarge << 0
        << true;
    QTest::newRow("half a head") << QByteArray("GET / HTTP/1.1\r\nHo") << V::Continue << 0
                                 << true;
    QTest::newRow("half a body") << post + "Content-Length: 10\r\n\r\nabc" << V::Continue << 0
                                 << true;
    QTest::newRow("bad chunk size") << chunked + "zz\r\n" << V::Malformed << 0 << true;
    // Found by tests/fuzz (sim_requests): 16 hex digits overflowed a qint64 as they were read.
    QTest::newRow("chunk size of 15 hex digits") << chunked + QByteArray(15, 'f') + "\r\n"
                                                 << V::BodyTooLarge << 0 << true;
    QTest::newRow("chunk size of 16 hex digits") << chunked + QByteArray(16, 'f') + "\r\n"
                                                 << V::Malformed << 0 << true;
    // 2^64 wrapped to 0 and read as the last chunk.
    QTest::newRow("chunk size of 2^64") << chunked + "10000000000000000\r\n" << V::Malformed
                                        << 0 << true;
    QTest::newRow("chunk-size line without end") << chunked + QByteArray(2000, '1')
                                                 << V::Malformed << 0 << true;
    QTest::newRow("lengths that differ")
        << post + "Content-Length: 3\r\nContent-Length: 4\r\n\r\n" << V::Malformed << 0 << true;
    QTest::newRow("length not a number") << post + "Content-Length: 1e3\r\n\r\n"
                                         << V::Malformed << 0 << true;
    QTest::newRow("length and chunks at once")
        << post + "Content-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n" << V::Malformed << 0
        << true;
    QTest::newRow("unknown transfer coding") << post + "Transfer-Encoding: gzip\r\n\r\n"
                                             << V::Malformed << 0 << true;
    // With neither length nor chunks a request has no body: what follows is the next head.
    QTest::newRow("unannounced body past the head limit")
        << post + "\r\n" + QByteArray(RequestMeter::kMaxHeadBytes + 1, 'x') << V::HeadTooLarge
        << 1 << true;
}

void tst_SupportSimBounds::meterFramesRequests()
{
    QFETCH(QByteArray, bytes);
    QFETCH(RequestMeter::Verdict, verdict);
    QFETCH(int, completed);
    QFETCH(bool, midRequest);
    // Whole, and one byte at a time: where the reads split must not matter.
    RequestMeter whole(16);
    QCOMPARE(whole.feed(bytes), verdict);
    QCOMPARE(whole.completedRequests(), completed);
    QCOMPARE(whole.midRequest(), midRequest);
    // A stopped meter stays stopped.
    QCOMPARE(whole.feed("GET / HTTP/1.1\r\n\r\n"), verdict);
    RequestMeter bytewise(16);
    RequestMeter::Verdict last = RequestMeter::Verdict::Continue;
    for (qsizetype i = 0; i < bytes.size() && last == RequestMeter::Verdict::Continue; ++i)
        last = bytewise.feed(QByteArrayView(bytes).sliced(i, 1));
    QCOMPARE(last, verdict);
    QCOMPARE(bytewise.completedRequests(), completed);
}

void tst_SupportSimBounds::faultFilesAreBounded_data()
{
    QTest::addColumn<QString>("kind");
    QTest::addColumn<QString>("reason");
    QTest::newRow("device that never ends") << "/dev/zero" << "not a regular file";
    QTest::newRow("FIFO without a writer") << "fifo" << "not a regular file";
    QTest::newRow("directory") << "directory" << "not a regular file";
    QTest::newRow("over 1 MiB") << "large" << "larger than 1 MiB";
    QTest::newRow("missing") << "missing" << "cannot open it (No such file or directory)";
}

void tst_SupportSimBounds::faultFilesAreBounded()
{
    QFETCH(QString, kind);
    QFETCH(QString, reason);
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    QString path = kind.startsWith(QLatin1Char('/')) ? kind : dir.filePath(kind);
    if (kind == QLatin1String("fifo")) {
        QVERIFY(::mkfifo(QFile::encodeName(path).constData(), 0600) == 0);
    } else if (kind == QLatin1String("directory")) {
        QVERIFY(QDir(dir.path()).mkdir(kind));
    } else if (kind == QLatin1String("large")) {
        QFile file(path);
        QVERIFY(file.open(QIODevice::WriteOnly));
        QVERIFY(file.resize(kMiB + 1));
    }
    QProcess sim;
    sim.start(QStringLiteral(SUPPORT_SIM_PATH),
              {QStringLiteral("--port"), QStringLiteral("0"), QStringLiteral("--faults"), path});
    // Refused at once: before the fix /dev/zero aborted the sim and a FIFO blocked it.
    QVERIFY(sim.waitForFinished(10'000));
    QCOMPARE(sim.exitStatus(), QProcess::NormalExit);
    QCOMPARE(sim.exitCode(), 2);
    QCOMPARE(sim.readAllStandardOutput(), QByteArray());
    QCOMPARE(QString::fromUtf8(sim.readAllStandardError()),
             QStringLiteral("support-sim: --faults %1: %2\n").arg(path, reason));
}

void tst_SupportSimBounds::announcedBodyOverTheLimitIsAnsweredUnread()
{
    startSim();
    // Only the head is sent: the answer must come without waiting for the 50 MB announced.
    const RawExchange reply = exchange(
        "POST /api/v1/tickets HTTP/1.1\r\nHost: sim\r\nX-Staff-Id: u-1001\r\n"
        "X-Tenant-Id: t-acme\r\nIdempotency-Key: k-1\r\nContent-Type: application/json\r\n"
        "Content-Length: 52428800\r\n\r\n");
    QCOMPARE(reply.status(), 413);
    QVERIFY(reply.closedBySim);
    QCOMPARE(reply.body().value(QLatin1String("error")).toString(),
             QStringLiteral("PAYLOAD_TOO_LARGE"));
    QCOMPARE(reply.body().value(QLatin1String("detail")).toString(),
             QStringLiteral("request bodies are limited to 1048576 bytes"));
    const QJsonObject stats = m_sim->stats();
    QCOMPARE(stats.value(QLatin1String("refused")).toInt(), 1);
    // Refused before routing: no write was attempted.
    QCOMPARE(stats.value(QLatin1String("requests")).toObject()
                 .value(QLatin1String("tickets")).toInt(), 0);
    QCOMPARE(m_sim->control("GET", QStringLiteral("/api/v1/orders/A1001"), {},
                            {{"X-Staff-Id", "u-1001"}, {"X-Tenant-Id", "t-acme"}})
                 .status,
             200);
}

void tst_SupportSimBounds::streamedBodyIsCutOffWithBoundedMemory_data()
{
    QTest::addColumn<QByteArray>("head");
    QTest::addColumn<QByteArray>("piece");
    QTest::addColumn<int>("status");
    const QByteArray post = "PUT /sim/faults HTTP/1.1\r\nHost: sim\r\n";
    // 64 KiB chunks, announced one by one: the total is only known as it arrives.
    QTest::newRow("chunked") << post + "Transfer-Encoding: chunked\r\n\r\n"
                             << "10000\r\n" + QByteArray(0x10000, ' ') + "\r\n" << 413;
    // No length at all: the bytes after the head are read as the next head, bounded too.
    QTest::newRow("unannounced") << post + "\r\n" << QByteArray(0x10000, 'x') << 431;
}

void tst_SupportSimBounds::streamedBodyIsCutOffWithBoundedMemory()
{
    QFETCH(QByteArray, head);
    QFETCH(QByteArray, piece);
    QFETCH(int, status);
    startSim();
    const qint64 before = peakMemory(m_sim->processId());
    QVERIFY(before > 0);
    const RawExchange reply = exchange(head, 50 * kMiB, piece);
    QCOMPARE(reply.lastStatus(), status);
    QVERIFY(reply.closedBySim);
    // The sim stopped the stream near the limit, not after 50 MB ...
    QVERIFY2(reply.sent < 16 * kMiB, qPrintable(QString::number(reply.sent)));
    // ... and never held it: QHttpServer alone would have buffered all of it, twice.
    const qint64 after = peakMemory(m_sim->processId());
    qInfo("sent %lld bytes; peak memory %lld -> %lld", reply.sent, before, after);
    QVERIFY2(after - before < 12 * kMiB,
             qPrintable(QStringLiteral("peak memory %1 -> %2 bytes").arg(before).arg(after)));
    QCOMPARE(m_sim->stats().value(QLatin1String("refused")).toInt(), 1);
}

void tst_SupportSimBounds::pipelinedBytesAreMeteredOnce()
{
    startSim();
    QTcpSocket socket;
    socket.connectToHost(QHostAddress::LocalHost, quint16(m_sim->baseUrl().port()));
    QVERIFY(socket.waitForConnected(5000));
    // A request and 40 KiB of the next one's head at once: QHttpServer answers the first and
    // leaves the rest unread for its next turn, when the sim must not count it again (twice
    // 40 KiB would pass the 64 KiB head limit and refuse a request within it).
    const QByteArray get = "GET /sim/faults HTTP/1.1\r\nHost: sim\r\n\r\n";
    QByteArray second = get.chopped(2);
    for (int i = 0; i < 10; ++i)
        second += "X-Pad-" + QByteArray::number(i) + ": " + QByteArray(4000, 'a') + "\r\n";
    socket.write(get + second);
    QByteArray received;
    QTRY_VERIFY_WITH_TIMEOUT((received += socket.readAll()).contains("\r\n\r\n{"), 5000);
    socket.write("\r\n");
    QTRY_COMPARE_WITH_TIMEOUT((received += socket.readAll()).count("HTTP/1.1 200 "), 2, 5000);
    QVERIFY(!received.contains("431"));
    QCOMPARE(m_sim->stats().value(QLatin1String("refused")).toInt(), 0);
}

void tst_SupportSimBounds::controlApiTakesBodiesUpToTheLimit()
{
    startSim();
    QString error;
    QVERIFY2(m_sim->putFaults(R"({"routes":{"orders":{"status":503}}})", &error),
             qPrintable(error));
    // Over the limit: a worded 413, and the faults stay as they were.
    QByteArray tooLarge = R"({"routes":{},"description":")";
    tooLarge += QByteArray(kMiB, ' ') + "\"}";
    const SimControlReply refused = m_sim->control("PUT", QStringLiteral("/sim/faults"),
                                                   tooLarge);
    QCOMPARE(refused.status, 413);
    QCOMPARE(refused.body.value(QLatin1String("error")).toString(),
             QStringLiteral("PAYLOAD_TOO_LARGE"));
    QCOMPARE(m_sim->control("GET", QStringLiteral("/sim/faults"))
                 .body.value(QLatin1String("routes")).toObject()
                 .value(QLatin1String("orders")).toObject()
                 .value(QLatin1String("status")).toInt(),
             503);
    // Exactly at the limit: read whole and applied.
    QByteArray atLimit = R"({"routes":{},"description":")";
    atLimit += QByteArray(kMiB - atLimit.size() - 2, ' ') + "\"}";
    QCOMPARE(atLimit.size(), kMiB);
    const SimControlReply applied = m_sim->control("PUT", QStringLiteral("/sim/faults"),
                                                   atLimit);
    QCOMPARE(applied.status, 200);
    QVERIFY(applied.body.value(QLatin1String("routes")).toObject().isEmpty());
}

void tst_SupportSimBounds::idleConnectionsAreClosed_data()
{
    QTest::addColumn<QByteArray>("faults");
    QTest::addColumn<QByteArray>("request");
    QTest::addColumn<int>("status");    // of the one answer; 0: none
    QTest::addColumn<int>("minimumMs"); // the connection lasts at least this long
    const QByteArray order = "GET /api/v1/orders/A1001 HTTP/1.1\r\nHost: sim\r\n"
                             "X-Staff-Id: u-1001\r\nX-Tenant-Id: t-acme\r\n\r\n";
    QTest::newRow("silent") << QByteArray() << QByteArray() << 0 << 250;
    QTest::newRow("keep-alive after an answer") << QByteArray() << order << 200 << 250;
    QTest::newRow("half a request") << QByteArray() << order.left(30) << 408 << 250;
    // A held answer is not idleness: the hang limit ends it, not the idle timeout.
    QTest::newRow("answer held by a hang")
        << QByteArray(R"({"hangLimitMs":1500,"routes":{"orders":{"hang":true}}})") << order << 0
        << 1400;
}

void tst_SupportSimBounds::idleConnectionsAreClosed()
{
    QFETCH(QByteArray, faults);
    QFETCH(QByteArray, request);
    QFETCH(int, status);
    QFETCH(int, minimumMs);
    startSim({QStringLiteral("--idle-timeout-ms"), QStringLiteral("300")});
    if (!faults.isEmpty()) {
        QString error;
        QVERIFY2(m_sim->putFaults(faults, &error), qPrintable(error));
    }
    QElapsedTimer clock;
    clock.start();
    const RawExchange reply = exchange(request);
    const qint64 lasted = clock.elapsed();
    QVERIFY(reply.closedBySim);
    QCOMPARE(reply.status(), status);
    QVERIFY2(lasted >= minimumMs && lasted < 8'000, qPrintable(QString::number(lasted)));
    if (status == 408)
        QCOMPARE(reply.body().value(QLatin1String("error")).toString(),
                 QStringLiteral("REQUEST_TIMEOUT"));
    // Counted (the control API's own keep-alive connections may be among them).
    if (faults.isEmpty())
        QVERIFY(m_sim->stats().value(QLatin1String("idleClosed")).toInt() >= 1);
}

QTEST_GUILESS_MAIN(tst_SupportSimBounds)
#include "tst_supportsimbounds.moc"
