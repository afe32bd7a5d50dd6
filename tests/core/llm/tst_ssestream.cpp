#include "core/http/ssestream.h"

#include <QTest>

using namespace AgentConsole;

Q_DECLARE_METATYPE(AgentConsole::SseEvent)

namespace AgentConsole {
char *toString(const SseEvent &event)
{
    return qstrdup(("{event=" + event.event + " data=" + event.data + "}").constData());
}
} // namespace AgentConsole

class tst_SseStream : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void events_data();
    void events();
    void sameEventsForEverySplit();
    void progress_data();
    void progress();
    void finishDispatchesCompleteLinesOnly();
    void overlongLineIsRefused_data();
    void overlongLineIsRefused();
};

void tst_SseStream::events_data()
{
    QTest::addColumn<QByteArray>("input");
    QTest::addColumn<QList<SseEvent>>("expected");

    QTest::newRow("one event") << QByteArray("data: {\"a\":1}\n\n")
                               << QList<SseEvent>{{{}, "{\"a\":1}"}};
    QTest::newRow("crlf") << QByteArray("data: x\r\n\r\ndata: y\r\n\r\n")
                          << QList<SseEvent>{{{}, "x"}, {{}, "y"}};
    QTest::newRow("cr only") << QByteArray("data: x\r\rdata: y\r\r")
                             << QList<SseEvent>{{{}, "x"}, {{}, "y"}};
    QTest::newRow("multi-line data") << QByteArray("data: line 1\ndata: line 2\n\n")
                                     << QList<SseEvent>{{{}, "line 1\nline 2"}};
    QTest::newRow("no space after colon") << QByteArray("data:x\n\n")
                                          << QList<SseEvent>{{{}, "x"}};
    QTest::newRow("only one space stripped") << QByteArray("data:  x\n\n")
                                             << QList<SseEvent>{{{}, " x"}};
    QTest::newRow("comments ignored")
        << QByteArray(": keep-alive\n\n: keep-alive\ndata: x\n: inside\n\n")
        << QList<SseEvent>{{{}, "x"}};
    QTest::newRow("blank lines alone dispatch nothing") << QByteArray("\n\n\r\n\n")
                                                        << QList<SseEvent>{};
    QTest::newRow("event name") << QByteArray("event: error\ndata: {}\n\n")
                                << QList<SseEvent>{{"error", "{}"}};
    QTest::newRow("id and retry ignored") << QByteArray("id: 7\nretry: 10\ndata: x\n\n")
                                          << QList<SseEvent>{{{}, "x"}};
    QTest::newRow("done") << QByteArray("data: [DONE]\n\n") << QList<SseEvent>{{{}, "[DONE]"}};
    QTest::newRow("empty data is an event") << QByteArray("data:\n\n")
                                            << QList<SseEvent>{{{}, ""}};
    QTest::newRow("unterminated event waits") << QByteArray("data: x\n") << QList<SseEvent>{};
    QTest::newRow("utf-8") << QByteArray("data: 你好\n\n")
                           << QList<SseEvent>{{{}, QByteArray("你好")}};
}

void tst_SseStream::events()
{
    QFETCH(QByteArray, input);
    QFETCH(QList<SseEvent>, expected);
    SseStream stream;
    QCOMPARE(stream.feed(input).events, expected);
}

// However the bytes are cut into reads (inside "\r\n" too), the same events come out.
void tst_SseStream::sameEventsForEverySplit()
{
    const QByteArray input = ": keep-alive\r\n\r\ndata: {\"x\": \"一二\"}\r\ndata: 2\r\n\r\n"
                             "data: [DONE]\r\n\r\n";
    const QList<SseEvent> expected{{{}, QByteArray("{\"x\": \"一二\"}\n2")}, {{}, "[DONE]"}};
    for (qsizetype first = 0; first <= input.size(); ++first) {
        for (qsizetype second = first; second <= input.size(); second += 3) {
            SseStream stream;
            QList<SseEvent> events = stream.feed(input.left(first)).events;
            events += stream.feed(input.mid(first, second - first)).events;
            events += stream.feed(input.mid(second)).events;
            QVERIFY2(events == expected, qPrintable(QStringLiteral("split at %1 and %2")
                                                        .arg(first)
                                                        .arg(second)));
        }
    }
    // And byte by byte.
    SseStream stream;
    QList<SseEvent> events;
    for (const char c : input)
        events += stream.feed(QByteArray(1, c)).events;
    QCOMPARE(events, expected);
}

void tst_SseStream::progress_data()
{
    QTest::addColumn<QByteArrayList>("reads");
    QTest::addColumn<QList<bool>>("progress");

    QTest::newRow("keep-alives are not progress")
        << QByteArrayList{": keep-alive\n\n", ": keep-alive\r\n\r\n", "\n"}
        << QList<bool>{false, false, false};
    QTest::newRow("data is progress") << QByteArrayList{"data: x\n\n"} << QList<bool>{true};
    QTest::newRow("a comment split over reads")
        << QByteArrayList{": keep", "-alive", "\n\n"} << QList<bool>{false, false, false};
    QTest::newRow("a data line split over reads")
        << QByteArrayList{"da", "ta: {\"a", "\":1}", "\n", "\n"}
        << QList<bool>{true, true, true, true, false}; // the end of a data line is progress
    QTest::newRow("comment then data in one read")
        << QByteArrayList{": keep-alive\n\ndata: x\n\n"} << QList<bool>{true};
}

void tst_SseStream::progress()
{
    QFETCH(QByteArrayList, reads);
    QFETCH(QList<bool>, progress);
    SseStream stream;
    QList<bool> actual;
    for (const QByteArray &read : reads)
        actual.append(stream.feed(read).progress);
    QCOMPARE(actual, progress);
}

void tst_SseStream::finishDispatchesCompleteLinesOnly()
{
    SseStream complete;
    QVERIFY(complete.feed("data: [DONE]\n").events.isEmpty());
    QCOMPARE(complete.finish(), (QList<SseEvent>{{{}, "[DONE]"}}));

    SseStream cut;
    QVERIFY(cut.feed("data: {\"choi").events.isEmpty());
    QVERIFY(cut.finish().isEmpty());
}

void tst_SseStream::overlongLineIsRefused_data()
{
    QTest::addColumn<QByteArray>("input");
    QTest::addColumn<int>("eventsBefore"); // complete events before the bound was passed
    // A limit of 16 bytes stands for the 1 MiB of the real stream.
    QTest::newRow("one long line") << QByteArray("data: ") + QByteArray(40, 'x') << 0;
    QTest::newRow("long comment") << QByteArray(": ") + QByteArray(40, 'x') + "\n" << 0;
    QTest::newRow("event after a good one")
        << QByteArray("data: ok\n\ndata: ") + QByteArray(40, 'x') + "\n\n" << 1;
    QTest::newRow("many short data lines of one event")
        << QByteArray("data: 12345\n").repeated(5) + "\n" << 0;
}

void tst_SseStream::overlongLineIsRefused()
{
    QFETCH(QByteArray, input);
    QFETCH(int, eventsBefore);
    SseStream stream(16);
    const SseChunk chunk = stream.feed(input);
    QVERIFY(chunk.overflow);
    QVERIFY(stream.hasOverflowed());
    QCOMPARE(chunk.events.size(), eventsBefore);
    // Nothing more is read, and nothing is dispatched at the end.
    const SseChunk later = stream.feed("data: late\n\n");
    QVERIFY(later.overflow);
    QVERIFY(later.events.isEmpty());
    QVERIFY(stream.finish().isEmpty());

    // Right at the bound is still fine.
    SseStream exact(16);
    const SseChunk fits = exact.feed(QByteArray("data: 0123456789\n\n"));
    QVERIFY(!fits.overflow);
    QCOMPARE(fits.events.size(), 1);
}

QTEST_GUILESS_MAIN(tst_SseStream)
#include "tst_ssestream.moc"
