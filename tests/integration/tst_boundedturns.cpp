// The bounds of DESIGN.md ("Bounds on everything from outside") as a staff member meets them
// through agent-cli: a model message with thousands of tool calls, a question naming hundreds
// of orders, tool arguments nested a thousand deep, a backend answer too large or too deep,
// and model text written to take over the terminal. Real agent-cli, real HTTP on 127.0.0.1;
// the fake OpenAI server stands in for the remote model (and, scripted, for a hostile REST
// backend).
#include "clirun.h"
#include "fakeopenaiserver.h"
#include "processmemory.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

#include <sys/resource.h>

using namespace AgentConsole::Testing;

namespace {

const QByteArray kKey = "sk-test-bounded-6d2a";

QStringList openAiArguments(const FakeOpenAiServer &model)
{
    return {QStringLiteral("--provider"), QStringLiteral("openai"), QStringLiteral("--base-url"),
            model.baseUrl().toString(), QStringLiteral("--model"), QStringLiteral("fake-model"),
            QStringLiteral("--fallback"), QStringLiteral("none")};
}

// One streamed model message that calls `count` tools, each in its own SSE event.
FakeResponse manyToolCalls(int count)
{
    QByteArray events = Sse::role();
    for (int i = 0; i < count; ++i) {
        events += Sse::toolCall(i, QStringLiteral("call_%1").arg(i),
                                QStringLiteral("queryOrderStatus"),
                                QStringLiteral("{\"orderId\":\"A1001\"}"));
    }
    events += Sse::finish(QStringLiteral("tool_calls")) + Sse::done();
    return FakeResponse::events({{events}});
}

QString nested(int depth)
{
    return QStringLiteral("{\"orderId\":") + QStringLiteral("[").repeated(depth)
           + QStringLiteral("\"A1001\"") + QStringLiteral("]").repeated(depth)
           + QStringLiteral("}");
}

// The largest resident set of any child this process has waited for, in MiB.
double largestChildRssMiB()
{
    rusage usage{};
    getrusage(RUSAGE_CHILDREN, &usage);
    return double(usage.ru_maxrss) / 1024.0; // ru_maxrss is in KiB on Linux
}

// The bound on a child's resident set: 200 MiB, widened under ASan (processmemory.h).
const double childRssBoundMiB = double(memoryBoundKiB(200 * 1024)) / 1024.0;

} // namespace

class tst_BoundedTurns : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void init();
    void cleanup();

    void threeThousandToolCallsInOneMessage();
    void aFloodOfToolCallsIsUnreadable_data();
    void aFloodOfToolCallsIsUnreadable();
    void aQuestionNamingHundredsOfOrdersHitsTheSameBound();
    void theBoundIsASetting();
    void deeplyNestedArgumentsAreInvalidAndTheOutputStaysReadable_data();
    void deeplyNestedArgumentsAreInvalidAndTheOutputStaysReadable();
    void aStoredTurnWithDeepArgumentsCanBeResumed();
    void aTenMegabyteArgumentIsRefusedInBoundedMemory();
    void aBackendAnswerTooLargeOrTooDeepIsUnavailable_data();
    void aBackendAnswerTooLargeOrTooDeepIsUnavailable();
    void plainOutputStripsTerminalControlSequences();
    void aBlankQuestionIsAUsageError();
    void aQuestionOverTheBoundIsNotAsked();
    void outcomeFollowsTheCalls_data();
    void outcomeFollowsTheCalls();

private:
    CliRun runCli(const QStringList &arguments, const QByteArray &killAt = {});
    // Feeds `json` (agent-cli's --json lines) to a reader with its default settings.
    void assertReadableBy(const QString &program, const QStringList &arguments,
                          const QByteArray &json);

    std::unique_ptr<QTemporaryDir> m_dir;
    std::unique_ptr<FakeOpenAiServer> m_model;
};

void tst_BoundedTurns::init()
{
    m_dir = std::make_unique<QTemporaryDir>();
    QVERIFY(m_dir->isValid());
    m_model = std::make_unique<FakeOpenAiServer>();
    QVERIFY(m_model->listen());
}

void tst_BoundedTurns::cleanup()
{
    m_model.reset();
    m_dir.reset();
}

// The fake server lives in this process: the CLI is waited for with the event loop running.
CliRun tst_BoundedTurns::runCli(const QStringList &arguments, const QByteArray &killAt)
{
    QProcess process;
    QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
    environment.insert(QStringLiteral("AGENT_CONSOLE_API_KEY"), QString::fromLatin1(kKey));
    environment.remove(QStringLiteral("AGENT_CONSOLE_KILL_AT"));
    if (!killAt.isEmpty())
        environment.insert(QStringLiteral("AGENT_CONSOLE_KILL_AT"), QString::fromLatin1(killAt));
    process.setProcessEnvironment(environment);
    QSignalSpy finished(&process, &QProcess::finished);
    process.start(QStringLiteral(AGENT_CLI_PATH),
                  QStringList{QStringLiteral("--data-dir"), m_dir->path()} + arguments);
    process.closeWriteChannel();
    if (!killAt.isEmpty()) {
        QByteArray err;
        const bool stopped = QTest::qWaitFor(
            [&] { return (err += process.readAllStandardError()).contains("kill point"); },
            60'000);
        process.kill();
        finished.wait(10'000);
        return {stopped ? -9 : -1, process.readAllStandardOutput(), err};
    }
    if (!finished.wait(90'000)) {
        process.kill();
        finished.wait(10'000);
        qFatal("agent-cli did not finish");
    }
    return {process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -1,
            process.readAllStandardOutput(), process.readAllStandardError()};
}

void tst_BoundedTurns::assertReadableBy(const QString &program, const QStringList &arguments,
                                        const QByteArray &json)
{
    const QString path = QStandardPaths::findExecutable(program);
    QVERIFY2(!path.isEmpty(), qPrintable(program + QStringLiteral(" is not installed")));
    QProcess reader;
    reader.start(path, arguments);
    QVERIFY(reader.waitForStarted(10'000));
    reader.write(json);
    reader.closeWriteChannel();
    QVERIFY(reader.waitForFinished(30'000));
    QVERIFY2(reader.exitStatus() == QProcess::NormalExit && reader.exitCode() == 0,
             qPrintable(program + QStringLiteral(": ")
                        + QString::fromUtf8(reader.readAllStandardError().left(400))));
}

// Today's numbers before the bound: 109 s, 4.4 GB, 2,924 false timeouts and an opened breaker.
void tst_BoundedTurns::threeThousandToolCallsInOneMessage()
{
    m_model->enqueue(manyToolCalls(3000));
    m_model->enqueue(FakeResponse::streamedAnswer(QStringLiteral("Order A1001 was paid.")));
    const CliRun run = runCli(openAiArguments(*m_model)
                              + QStringList{QStringLiteral("--json"),
                                            QStringLiteral("Where is order A1001?")});
    QCOMPARE(run.exitCode, 0);
    const QJsonObject turn = run.turn();
    QCOMPARE(turn.value(QLatin1String("status")).toString(), QStringLiteral("completed"));
    // 16 ran and answered; 2,984 did not run: not "answered".
    QCOMPARE(turn.value(QLatin1String("outcome")).toString(), QStringLiteral("partial"));
    QCOMPARE(turn.value(QLatin1String("toolCallsNotRun")).toInt(), 2984);
    const QJsonArray calls = turn.value(QLatin1String("toolCalls")).toArray();
    QCOMPARE(calls.size(), 3000);
    int ran = 0;
    for (const QJsonValue &value : calls) {
        const QJsonObject call = value.toObject();
        const QString code = call.value(QLatin1String("code")).toString();
        if (code == QLatin1String("OK")) {
            ++ran;
            QCOMPARE(call.value(QLatin1String("attempts")).toArray().size(), 1);
        } else {
            QCOMPARE(code, QStringLiteral("TOOL_CALL_LIMIT"));
            QVERIFY(call.value(QLatin1String("attempts")).toArray().isEmpty());
        }
    }
    QCOMPARE(ran, 16);
    const QJsonObject counters = turn.value(QLatin1String("counters")).toObject();
    QCOMPARE(counters.value(QLatin1String("tool_retry_count")).toInt(), 0);
    QCOMPARE(counters.value(QLatin1String("circuit_breaker_open_count")).toInt(), 0);
    // Well within the turn's 60 s deadline (the bound is what keeps it there).
    QVERIFY2(turn.value(QLatin1String("totalMs")).toInteger() < 60'000,
             qPrintable(QString::number(turn.value(QLatin1String("totalMs")).toInteger())));

    // The model was told, for every call it made, what became of it.
    QCOMPARE(m_model->requestCount(), 2);
    int limited = 0;
    int answeredCalls = 0;
    for (const QJsonValue &value :
         m_model->requests()[1].json.value(QLatin1String("messages")).toArray()) {
        const QJsonObject message = value.toObject();
        if (message.value(QLatin1String("role")).toString() != QLatin1String("tool"))
            continue;
        ++answeredCalls;
        if (message.value(QLatin1String("content")).toString().contains(
                QLatin1String("\"code\":\"TOOL_CALL_LIMIT\"")))
            ++limited;
    }
    QCOMPARE(answeredCalls, 3000);
    QCOMPARE(limited, 2984);

    const double rss = largestChildRssMiB();
    qInfo("3,000 tool calls: %lld ms, largest child resident set %.1f MiB",
          turn.value(QLatin1String("totalMs")).toInteger(), rss);
    QVERIFY2(rss < childRssBoundMiB, qPrintable(QStringLiteral("%1 MiB").arg(rss)));
}

void tst_BoundedTurns::aFloodOfToolCallsIsUnreadable_data()
{
    QTest::addColumn<bool>("streamed");
    QTest::newRow("streamed") << true;
    QTest::newRow("one message") << false;
}

// Past 4,096 calls a message is not a plan but a flood: unreadable as a whole, nothing of it
// kept, and the next model answers. (60,000 minimal calls fit well within 16 MiB: bounding
// only what runs would still build, store and send back a record for each.)
void tst_BoundedTurns::aFloodOfToolCallsIsUnreadable()
{
    QFETCH(bool, streamed);
    constexpr int count = 60'000;
    if (streamed) {
        m_model->enqueue(manyToolCalls(count));
    } else {
        QJsonArray calls;
        for (int i = 0; i < count; ++i) {
            calls.append(QJsonObject{
                {QStringLiteral("id"), QStringLiteral("c%1").arg(i)},
                {QStringLiteral("type"), QStringLiteral("function")},
                {QStringLiteral("function"),
                 QJsonObject{{QStringLiteral("name"), QStringLiteral("queryOrderStatus")},
                             {QStringLiteral("arguments"), QStringLiteral("{}")}}}});
        }
        const QJsonObject message{{QStringLiteral("role"), QStringLiteral("assistant")},
                                  {QStringLiteral("content"), QJsonValue::Null},
                                  {QStringLiteral("tool_calls"), calls}};
        m_model->enqueue(FakeResponse::json(
            200, QJsonObject{{QStringLiteral("model"), QStringLiteral("fake-model")},
                             {QStringLiteral("choices"),
                              QJsonArray{QJsonObject{
                                  {QStringLiteral("index"), 0},
                                  {QStringLiteral("message"), message},
                                  {QStringLiteral("finish_reason"),
                                   QStringLiteral("tool_calls")}}}}}));
    }
    QStringList arguments{QStringLiteral("--provider"), QStringLiteral("openai"),
                          QStringLiteral("--base-url"), m_model->baseUrl().toString(),
                          QStringLiteral("--model"), QStringLiteral("fake-model"),
                          QStringLiteral("--stream"),
                          streamed ? QStringLiteral("on") : QStringLiteral("off"),
                          QStringLiteral("--json"), QStringLiteral("Where is order A1001?")};
    const CliRun run = runCli(arguments);
    QCOMPARE(run.exitCode, 0);
    const QJsonObject turn = run.turn();
    // The offline model answered instead, with its own single lookup.
    QCOMPARE(turn.value(QLatin1String("model")).toString(), QStringLiteral("offline-demo"));
    QCOMPARE(turn.value(QLatin1String("toolCalls")).toArray().size(), 1);
    QCOMPARE(turn.value(QLatin1String("outcome")).toString(), QStringLiteral("answered"));
    QVERIFY(run.out.size() < 64 * 1024);
    QFileInfo journal(QDir(m_dir->path()).filePath(QStringLiteral("turns.sqlite")));
    QVERIFY2(journal.size() < 4 * 1024 * 1024, qPrintable(QString::number(journal.size())));
    QVERIFY2(largestChildRssMiB() < childRssBoundMiB,
             qPrintable(QStringLiteral("%1 MiB").arg(largestChildRssMiB())));
}

void tst_BoundedTurns::aQuestionNamingHundredsOfOrdersHitsTheSameBound()
{
    QStringList orders;
    for (int i = 0; i < 300; ++i)
        orders << QStringLiteral("A%1").arg(5000 + i);
    orders.prepend(QStringLiteral("A1001"));
    const CliRun run = runCli({QStringLiteral("--json"),
                               QStringLiteral("What is the status of orders ")
                                   + orders.join(QLatin1Char(' '))});
    QCOMPARE(run.exitCode, 0);
    const QJsonObject turn = run.turn();
    QCOMPARE(turn.value(QLatin1String("outcome")).toString(), QStringLiteral("partial"));
    QCOMPARE(turn.value(QLatin1String("toolCallsNotRun")).toInt(), 301 - 16);
    const QString text = turn.value(QLatin1String("answer")).toString();
    QVERIFY2(text.contains(QLatin1String("285 more lookups were not run")), qPrintable(text));
    // The refused calls are said once, not as 285 sentences.
    QVERIFY2(text.size() < 4000, qPrintable(QString::number(text.size())));
}

void tst_BoundedTurns::theBoundIsASetting()
{
    m_model->enqueue(manyToolCalls(5));
    m_model->enqueue(FakeResponse::streamedAnswer(QStringLiteral("Done.")));
    const CliRun run = runCli(openAiArguments(*m_model)
                              + QStringList{QStringLiteral("--max-tool-calls"),
                                            QStringLiteral("2"), QStringLiteral("--json"),
                                            QStringLiteral("Where is order A1001?")});
    QCOMPARE(run.exitCode, 0);
    QCOMPARE(run.turn().value(QLatin1String("toolCallsNotRun")).toInt(), 3);

    for (const char *bad : {"0", "257", "many", "-1"}) {
        const CliRun refused = runCli({QStringLiteral("--max-tool-calls"),
                                       QString::fromLatin1(bad), QStringLiteral("hi")});
        QCOMPARE(refused.exitCode, 2);
        QVERIFY2(refused.err.contains("--max-tool-calls"), refused.err.constData());
    }
}

void tst_BoundedTurns::deeplyNestedArgumentsAreInvalidAndTheOutputStaysReadable_data()
{
    QTest::addColumn<int>("depth");
    QTest::addColumn<QString>("code");
    // The object holding orderId is one level; the arrays inside it the rest.
    QTest::newRow("32 levels: checked by the schema") << 31 << QStringLiteral("INVALID_ARGUMENT");
    QTest::newRow("33 levels") << 32 << QStringLiteral("INVALID_ARGUMENT");
    QTest::newRow("1,000 levels") << 999 << QStringLiteral("INVALID_ARGUMENT");
    QTest::newRow("100,000 levels") << 99'999 << QStringLiteral("INVALID_ARGUMENT");
}

void tst_BoundedTurns::deeplyNestedArgumentsAreInvalidAndTheOutputStaysReadable()
{
    QFETCH(int, depth);
    QFETCH(QString, code);
    m_model->enqueue(
        FakeResponse::streamedToolCall(QStringLiteral("queryOrderStatus"), nested(depth)));
    m_model->enqueue(FakeResponse::streamedAnswer(QStringLiteral("I could not look that up.")));
    const CliRun run = runCli(openAiArguments(*m_model)
                              + QStringList{QStringLiteral("--json"),
                                            QStringLiteral("Where is order A1001?")});
    QCOMPARE(run.exitCode, 0);
    const QJsonObject call =
        run.turn().value(QLatin1String("toolCalls")).toArray().first().toObject();
    QCOMPARE(call.value(QLatin1String("code")).toString(), code);
    QVERIFY(call.value(QLatin1String("attempts")).toArray().isEmpty());
    if (depth > 31) {
        QVERIFY2(call.value(QLatin1String("message")).toString().size() > 0, "worded");
        // Never built into an object: what was sent is kept as text only.
        QVERIFY(call.value(QLatin1String("arguments")).toObject().isEmpty());
    }
    assertReadableBy(QStringLiteral("python3"),
                     {QStringLiteral("-c"),
                      QStringLiteral("import json,sys\nfor line in sys.stdin: json.loads(line)")},
                     run.out);
    assertReadableBy(QStringLiteral("jq"), {QStringLiteral("-e"), QStringLiteral(".outcome")},
                     run.out);
}

// One tool call whose arguments are 10 MB, streamed in 64 KiB pieces (issue #40: it cost
// 284 MB of peak memory, a 63 MB turns.sqlite and a 10.5 MB --json line). It is refused when
// planned, its arguments kept as an excerpt; the turn goes on to the model's answer at once
// (a round whose every call was refused when planned once waited out the turn's deadline).
void tst_BoundedTurns::aTenMegabyteArgumentIsRefusedInBoundedMemory()
{
    const qsizetype size = 10 * 1024 * 1024;
    const QString arguments = QStringLiteral("{\"orderId\":\"A1001\",\"note\":\"%1\"}")
                                  .arg(QString(size, QLatin1Char('x')));
    QByteArray events = Sse::role()
        + Sse::toolCall(0, QStringLiteral("call_0"), QStringLiteral("queryOrderStatus"), {});
    for (qsizetype at = 0; at < arguments.size(); at += 64 * 1024)
        events += Sse::toolArguments(0, arguments.mid(at, 64 * 1024));
    events += Sse::finish(QStringLiteral("tool_calls")) + Sse::done();
    m_model->enqueue(FakeResponse::events({{events}}));
    m_model->enqueue(FakeResponse::streamedAnswer(QStringLiteral("That was too long to use.")));

    QElapsedTimer clock;
    clock.start();
    const CliRun run = runCli(openAiArguments(*m_model)
                              + QStringList{QStringLiteral("--json"),
                                            QStringLiteral("Where is order A1001?")});
    QCOMPARE(run.exitCode, 0);
    QVERIFY2(clock.elapsed() < 30'000, "answered, not stopped at the turn's deadline");
    const QJsonObject turn = run.turn();
    QCOMPARE(turn.value(QLatin1String("answer")).toString(),
             QStringLiteral("That was too long to use."));
    const QJsonObject call = turn.value(QLatin1String("toolCalls")).toArray().first().toObject();
    QCOMPARE(call.value(QLatin1String("code")).toString(), QStringLiteral("INVALID_ARGUMENT"));
    QVERIFY(call.value(QLatin1String("attempts")).toArray().isEmpty());
    // Bounded: the line printed, the journal written and the memory used.
    QVERIFY2(run.out.size() < 64 * 1024, qPrintable(QString::number(run.out.size())));
    qint64 journalBytes = 0;
    for (const QFileInfo &file : QDir(m_dir->path()).entryInfoList({QStringLiteral("turns.sqlite*")}))
        journalBytes += file.size();
    QVERIFY2(journalBytes < 2 * 1024 * 1024, qPrintable(QString::number(journalBytes)));
    const double rssMiB = largestChildRssMiB();
    qInfo("10 MB argument: --json line %lld bytes, turns.sqlite %lld bytes, peak RSS of the "
          "largest child so far %.1f MiB",
          qlonglong(run.out.size()), qlonglong(journalBytes), rssMiB);
    QVERIFY2(rssMiB < childRssBoundMiB, qPrintable(QString::number(rssMiB)));
}

// Arguments a thousand deep used to be stored parsed and could not be read back to resume.
void tst_BoundedTurns::aStoredTurnWithDeepArgumentsCanBeResumed()
{
    m_model->enqueue(
        FakeResponse::streamedToolCall(QStringLiteral("queryOrderStatus"), nested(999)));
    const CliRun killed = runCli(openAiArguments(*m_model)
                                     + QStringList{QStringLiteral("--json"),
                                                   QStringLiteral("Where is order A1001?")},
                                 "checkpoint-TOOLS_EXECUTED");
    QCOMPARE(killed.exitCode, -9);

    m_model->enqueue(
        FakeResponse::streamedAnswer(QStringLiteral("That order number could not be read.")));
    const CliRun resumed = runCli(openAiArguments(*m_model)
                                  + QStringList{QStringLiteral("--json"),
                                                QStringLiteral("--resume")});
    QCOMPARE(resumed.exitCode, 0);
    const QJsonObject turn = resumed.turn();
    QCOMPARE(turn.value(QLatin1String("status")).toString(), QStringLiteral("completed"));
    QCOMPARE(turn.value(QLatin1String("toolCalls")).toArray().first().toObject()
                 .value(QLatin1String("code")).toString(),
             QStringLiteral("INVALID_ARGUMENT"));
    QCOMPARE(turn.value(QLatin1String("answer")).toString(),
             QStringLiteral("That order number could not be read."));
}

void tst_BoundedTurns::aBackendAnswerTooLargeOrTooDeepIsUnavailable_data()
{
    QTest::addColumn<QByteArray>("body");
    QByteArray large = "{\"orderId\":\"A1001\",\"status\":\"";
    large += QByteArray(8 * 1024 * 1024, 'x');
    large += "\"}";
    QTest::newRow("8 MiB") << large;
    QTest::newRow("nested 40 deep")
        << QByteArray("{\"orderId\":\"A1001\",\"items\":" + QByteArray(40, '[')
                      + QByteArray(40, ']') + "}");
}

// The fake server, scripted, plays a hostile REST backend; the offline model asks it.
void tst_BoundedTurns::aBackendAnswerTooLargeOrTooDeepIsUnavailable()
{
    QFETCH(QByteArray, body);
    for (int attempt = 0; attempt < 3; ++attempt) {
        FakeResponse response;
        response.headers.append(
            qMakePair(QByteArray("Content-Type"), QByteArray("application/json")));
        response.body = body;
        m_model->enqueue(response);
    }
    const CliRun run = runCli({QStringLiteral("--backend"), QStringLiteral("http"),
                               QStringLiteral("--backend-url"), m_model->rootUrl().toString(),
                               QStringLiteral("--json"),
                               QStringLiteral("What is the status of order A1001?")});
    QCOMPARE(run.exitCode, 0);
    const QJsonObject turn = run.turn();
    const QJsonObject call = turn.value(QLatin1String("toolCalls")).toArray().first().toObject();
    QCOMPARE(call.value(QLatin1String("code")).toString(), QStringLiteral("TOOL_UNAVAILABLE"));
    QVERIFY(!call.contains(QLatin1String("data")));
    QCOMPARE(turn.value(QLatin1String("outcome")).toString(), QStringLiteral("unanswered"));
    QVERIFY(run.out.size() < 64 * 1024);
    QVERIFY2(largestChildRssMiB() < childRssBoundMiB,
             qPrintable(QStringLiteral("%1 MiB").arg(largestChildRssMiB())));
}

void tst_BoundedTurns::plainOutputStripsTerminalControlSequences()
{
    const QString hostile = QStringLiteral(
        "\x1b[2J\x1b]0;owned\x07Order \x1b[31mA1001\x1b[0m is paid.\r\x1b]8;;http://x.example/"
        "\x1b\\link\x1b]8;;\x1b\\\u009b6n\u202e\b\x7f done");
    m_model->enqueue(FakeResponse::streamedAnswer(hostile));
    const CliRun run = runCli(openAiArguments(*m_model) + QStringList{QStringLiteral("hi")});
    QCOMPARE(run.exitCode, 0);
    const QString out = QString::fromUtf8(run.out);
    QVERIFY2(out.startsWith(QLatin1String("Order A1001 is paid.link done\n")),
             qPrintable(out.toUtf8().toPercentEncoding(" .\n")));
    static const QRegularExpression control(
        QStringLiteral("[\\x00-\\x08\\x0b-\\x1f\\x7f-\\x9f"
                       "\\x{202a}-\\x{202e}\\x{2066}-\\x{2069}]"));
    QVERIFY(!out.contains(control));

    // --json carries the text as the model sent it: JSON escapes it, a reader decides.
    m_model->enqueue(FakeResponse::streamedAnswer(hostile));
    const CliRun json = runCli(openAiArguments(*m_model)
                               + QStringList{QStringLiteral("--json"), QStringLiteral("hi")});
    QCOMPARE(json.turn().value(QLatin1String("answer")).toString(), hostile);
    QVERIFY(!json.out.contains('\x1b'));
}

void tst_BoundedTurns::aBlankQuestionIsAUsageError()
{
    for (const char *blank : {"   ", "\t", " \n "}) {
        const CliRun run = runCli({QString::fromLatin1(blank)});
        QCOMPARE(run.exitCode, 2);
        QVERIFY2(run.err.contains("the question is empty"), run.err.constData());
        QVERIFY(run.out.isEmpty());
    }
}

void tst_BoundedTurns::aQuestionOverTheBoundIsNotAsked()
{
    const QString longest = QStringLiteral("Where is order A1001? ").leftJustified(4000, u'.');
    const CliRun asked = runCli({QStringLiteral("--json"), longest});
    QCOMPARE(asked.exitCode, 0);
    const CliRun refused = runCli({QStringLiteral("--json"), longest + QLatin1Char('.')});
    QCOMPARE(refused.exitCode, 2);
    QVERIFY2(refused.err.contains("longer than 4000 characters"), refused.err.constData());
    QVERIFY(refused.out.isEmpty());
}

void tst_BoundedTurns::outcomeFollowsTheCalls_data()
{
    QTest::addColumn<QString>("question");
    QTest::addColumn<QString>("faults");
    QTest::addColumn<QString>("outcome");
    QTest::addColumn<QString>("status");
    const QString logisticsHang = QStringLiteral(
        R"({"seed":1,"tools":{"queryLogistics":{"hang":true}}})");
    const QString logisticsDown = QStringLiteral(
        R"({"seed":1,"tools":{"queryLogistics":{"transientFailures":9}}})");
    QTest::newRow("found") << QStringLiteral("Where is order A1001?") << QString()
                           << QStringLiteral("answered") << QStringLiteral("completed");
    QTest::newRow("not found is an answer")
        << QStringLiteral("Where is order A9999?") << QString() << QStringLiteral("answered")
        << QStringLiteral("completed");
    // Shown as a green "Completed" before: the turn completed, the question was not answered.
    QTest::newRow("the only lookup timed out")
        << QStringLiteral("Where is order A1001?") << logisticsHang
        << QStringLiteral("unanswered") << QStringLiteral("completed");
    QTest::newRow("one of two unavailable")
        << QStringLiteral("Where is order A1001 and is SKU-200 in stock?") << logisticsDown
        << QStringLiteral("partial") << QStringLiteral("completed");
    QTest::newRow("no tools needed") << QStringLiteral("hello") << QString()
                                     << QStringLiteral("answered") << QStringLiteral("completed");
}

void tst_BoundedTurns::outcomeFollowsTheCalls()
{
    QFETCH(QString, question);
    QFETCH(QString, faults);
    QFETCH(QString, outcome);
    QFETCH(QString, status);
    QStringList arguments{QStringLiteral("--json")};
    if (!faults.isEmpty()) {
        QFile file(m_dir->filePath(QStringLiteral("faults.json")));
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write(faults.toUtf8());
        file.close();
        arguments << QStringLiteral("--faults") << file.fileName();
    }
    const CliRun run = runCli(arguments + QStringList{question});
    QCOMPARE(run.exitCode, 0);
    QCOMPARE(run.turn().value(QLatin1String("status")).toString(), status);
    QCOMPARE(run.turn().value(QLatin1String("outcome")).toString(), outcome);
    if (QByteArray(QTest::currentDataTag()).startsWith("the only lookup"))
        return; // 6.6 s a run: the plain line is checked on the other rows
    // The plain line says the same.
    const CliRun plain = runCli(arguments.mid(1) + QStringList{question});
    QVERIFY2(plain.out.contains("  (" + outcome.toUtf8() + ", " + status.toUtf8() + ", model"),
             plain.out.constData());
}

QTEST_GUILESS_MAIN(tst_BoundedTurns)
#include "tst_boundedturns.moc"
