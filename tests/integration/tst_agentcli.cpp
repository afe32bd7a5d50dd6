#include "core/ledger/turnjournal.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <memory>

using namespace AgentConsole;

namespace {

struct CliRun
{
    int exitCode = -1;
    QByteArray out;
    QByteArray err;

    QList<QJsonObject> turns() const
    {
        QList<QJsonObject> all;
        for (const QByteArray &line : out.split('\n')) {
            if (!line.trimmed().isEmpty())
                all.append(QJsonDocument::fromJson(line).object());
        }
        return all;
    }
};

} // namespace

class tst_AgentCli : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void init();

    void answersTheExampleQuestionsAsJson_data();
    void answersTheExampleQuestionsAsJson();
    void readsOneTurnPerLineFromStdin();
    void anOpenLogisticsCircuitLeavesInventoryAnswering();
    void textOutputListsEveryToolCall();
    void partialSuccessStillExitsZero();
    void aFailedTurnExitsThree();
    void usageErrors_data();
    void usageErrors();
    void anotherTenantSeesOnlyItsOrders();
    void createsATicketOnlyWhenConfirmed();
    void aReplayedRequestDoesNotWriteTwice();
    void resumeCarriesOnAKilledTurn();
    void oneProcessPerDataDirectory();
    void theWindowRefusesBadOptionsWithoutADisplay_data();
    void theWindowRefusesBadOptionsWithoutADisplay();

private:
    CliRun run(const QStringList &arguments, const QByteArray &input = {});
    // agent-cli on this data directory, stopped at kill point `point` (it announced it on
    // stderr); null when it never got there.
    std::unique_ptr<QProcess> startStoppedAt(const QString &point, const QStringList &arguments);
    QString writeFile(const QString &name, const QByteArray &content);

    std::unique_ptr<QTemporaryDir> m_dir;
};

void tst_AgentCli::init()
{
    m_dir = std::make_unique<QTemporaryDir>();
    QVERIFY(m_dir->isValid());
}

CliRun tst_AgentCli::run(const QStringList &arguments, const QByteArray &input)
{
    QProcess process;
    process.start(QStringLiteral(AGENT_CLI_PATH),
                  QStringList{QStringLiteral("--data-dir"), m_dir->path()} + arguments);
    if (!process.waitForStarted(10'000))
        qFatal("agent-cli did not start");
    process.write(input);
    process.closeWriteChannel();
    if (!process.waitForFinished(30'000)) {
        process.kill();
        qFatal("agent-cli did not finish");
    }
    return {process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -1,
            process.readAllStandardOutput(), process.readAllStandardError()};
}

std::unique_ptr<QProcess> tst_AgentCli::startStoppedAt(const QString &point,
                                                       const QStringList &arguments)
{
    auto process = std::make_unique<QProcess>();
    QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
    environment.insert(QStringLiteral("AGENT_CONSOLE_KILL_AT"), point);
    process->setProcessEnvironment(environment);
    process->start(QStringLiteral(AGENT_CLI_PATH),
                   QStringList{QStringLiteral("--data-dir"), m_dir->path()} + arguments);
    QByteArray err;
    if (!QTest::qWaitFor([&] { return (err += process->readAllStandardError())
                                   .contains("kill point"); },
                         20'000)) {
        process->kill();
        process->waitForFinished(10'000);
        return nullptr;
    }
    return process;
}

QString tst_AgentCli::writeFile(const QString &name, const QByteArray &content)
{
    QFile file(m_dir->filePath(name));
    if (!file.open(QIODevice::WriteOnly))
        qFatal("cannot write a test file");
    file.write(content);
    return file.fileName();
}

void tst_AgentCli::answersTheExampleQuestionsAsJson_data()
{
    QTest::addColumn<QString>("question");
    QTest::addColumn<QStringList>("tools");
    QTest::addColumn<QString>("fact");
    QTest::newRow("zh logistics") << QStringLiteral("查询订单 A1001 的物流位置")
                                  << QStringList{QStringLiteral("queryLogistics")}
                                  << QStringLiteral("SF10010001");
    QTest::newRow("en multi-intent")
        << QStringLiteral("Where is order A1001 and is SKU-200 in stock?")
        << QStringList{QStringLiteral("queryLogistics"), QStringLiteral("queryInventory")}
        << QStringLiteral("Shanghai Pudong Hub");
}

void tst_AgentCli::answersTheExampleQuestionsAsJson()
{
    QFETCH(QString, question);
    QFETCH(QStringList, tools);
    QFETCH(QString, fact);
    const CliRun result = run({QStringLiteral("--json"), question});
    QCOMPARE(result.exitCode, 0);
    const QList<QJsonObject> turns = result.turns();
    QCOMPARE(turns.size(), 1);
    const QJsonObject turn = turns.first();
    QCOMPARE(turn.value(QLatin1String("status")).toString(), QStringLiteral("completed"));
    QCOMPARE(turn.value(QLatin1String("model")).toString(), QStringLiteral("offline-demo"));
    QVERIFY(turn.value(QLatin1String("answer")).toString().contains(fact));
    const QJsonArray calls = turn.value(QLatin1String("toolCalls")).toArray();
    QCOMPARE(calls.size(), tools.size());
    for (int i = 0; i < calls.size(); ++i) {
        const QJsonObject call = calls[i].toObject();
        QCOMPARE(call.value(QLatin1String("name")).toString(), tools[i]);
        QVERIFY(call.value(QLatin1String("arguments")).isObject());
        QCOMPARE(call.value(QLatin1String("success")).toBool(), true);
        QCOMPARE(call.value(QLatin1String("code")).toString(), QStringLiteral("OK"));
        const QJsonArray attempts = call.value(QLatin1String("attempts")).toArray();
        QCOMPARE(attempts.size(), 1);
        QCOMPARE(attempts[0].toObject().value(QLatin1String("outcome")).toString(),
                 QStringLiteral("succeeded"));
        QVERIFY(attempts[0].toObject().value(QLatin1String("ms")).isDouble());
    }
}

void tst_AgentCli::readsOneTurnPerLineFromStdin()
{
    const CliRun result = run({QStringLiteral("--json")},
                              "where is A1001\n\nis SKU-300 in stock?\nA1002 status\n");
    QCOMPARE(result.exitCode, 0);
    const QList<QJsonObject> turns = result.turns();
    QCOMPARE(turns.size(), 3);
    QStringList requestIds;
    for (const QJsonObject &turn : turns)
        requestIds << turn.value(QLatin1String("requestId")).toString();
    requestIds.removeDuplicates();
    QCOMPARE(requestIds.size(), 3);
    // one conversation: every operationId carries the same conversation id
    QSet<QString> conversations;
    for (const QJsonObject &turn : turns) {
        for (const QJsonValue &call : turn.value(QLatin1String("toolCalls")).toArray()) {
            const QString operationId =
                call.toObject().value(QLatin1String("operationId")).toString();
            conversations.insert(operationId.section(QLatin1Char(':'), 1, 1));
        }
    }
    QCOMPARE(conversations.size(), 1);
}

// One breaker per route, seen from --json and --counters: logistics' opens after its tenth
// failed attempt (4th turn) and refuses the 5th turn's call, saying circuit_open; inventory
// still answers in the 6th.
void tst_AgentCli::anOpenLogisticsCircuitLeavesInventoryAnswering()
{
    const QString faults = writeFile(QStringLiteral("logistics-fails.json"),
        R"({"tools": {"queryLogistics": {"transientFailures": 99}}})");
    const CliRun result = run({QStringLiteral("--json"), QStringLiteral("--faults"), faults},
                              QByteArray("where is A1001\n").repeated(5)
                                  + "is SKU-200 in stock?\n");
    QCOMPARE(result.exitCode, 0);
    const QList<QJsonObject> turns = result.turns();
    QCOMPARE(turns.size(), 6);
    const auto callOf = [&turns](int turn) {
        return turns[turn].value(QLatin1String("toolCalls")).toArray().at(0).toObject();
    };
    const auto opensIn = [&turns](int turn) {
        return turns[turn].value(QLatin1String("counters")).toObject()
            .value(QLatin1String("circuit_breaker_open_count")).toInt(-1);
    };
    for (int turn = 0; turn < 3; ++turn) {
        QCOMPARE(callOf(turn).value(QLatin1String("attempts")).toArray().size(), 3);
        QVERIFY(!callOf(turn).contains(QLatin1String("reason"))); // a 503 is not a refusal
    }
    QCOMPARE(opensIn(3), 1);
    const QJsonArray opening = callOf(3).value(QLatin1String("attempts")).toArray();
    QCOMPARE(opening.last().toObject().value(QLatin1String("outcome")).toString(),
             QStringLiteral("circuit_open"));
    QCOMPARE(opening.last().toObject().value(QLatin1String("made")).toBool(true), false);

    const QJsonObject refused = callOf(4);
    QCOMPARE(refused.value(QLatin1String("code")).toString(), QStringLiteral("TOOL_UNAVAILABLE"));
    QCOMPARE(refused.value(QLatin1String("reason")).toString(), QStringLiteral("circuit_open"));
    QVERIFY(refused.value(QLatin1String("circuitCooldownLeftMs")).toInteger() > 0);
    QVERIFY(refused.value(QLatin1String("attempts")).toArray().isEmpty());
    QCOMPARE(opensIn(4), 0);

    const QJsonObject stock = callOf(5);
    QCOMPARE(stock.value(QLatin1String("name")).toString(), QStringLiteral("queryInventory"));
    QCOMPARE(stock.value(QLatin1String("code")).toString(), QStringLiteral("OK"));
    QCOMPARE(stock.value(QLatin1String("attempts")).toArray().size(), 1);

    const CliRun counters = run({QStringLiteral("--counters")});
    QCOMPARE(counters.exitCode, 0);
    const QJsonObject totals = QJsonDocument::fromJson(counters.out).object();
    QCOMPARE(totals.value(QLatin1String("circuit_breaker_open_count")).toInt(-1), 1);
}

void tst_AgentCli::textOutputListsEveryToolCall()
{
    const CliRun result = run({QStringLiteral("A1002 的物流")});
    QCOMPARE(result.exitCode, 0);
    const QString text = QString::fromUtf8(result.out);
    QVERIFY2(text.contains(QLatin1String("[LOGISTICS_NOT_FOUND] queryLogistics")),
             qPrintable(text));
    QVERIFY(text.contains(QLatin1String("1 attempt ")));
}

void tst_AgentCli::partialSuccessStillExitsZero()
{
    const QString plan = writeFile(QStringLiteral("plan.json"),
                                   R"({"tools":{"queryInventory":{"permanentFailure":true}}})");
    const CliRun result = run({QStringLiteral("--json"), QStringLiteral("--faults"), plan,
                               QStringLiteral("Where is order A1001 and is SKU-200 in stock?")});
    QCOMPARE(result.exitCode, 0);
    const QJsonObject turn = result.turns().first();
    QVERIFY(turn.value(QLatin1String("partialSuccess")).toBool());
    const QJsonArray calls = turn.value(QLatin1String("toolCalls")).toArray();
    QCOMPARE(calls[1].toObject().value(QLatin1String("code")).toString(),
             QStringLiteral("TOOL_REJECTED"));
}

void tst_AgentCli::aFailedTurnExitsThree()
{
    const QString plan
        = writeFile(QStringLiteral("plan.json"), R"({"model":{"unavailable":true}})");
    const CliRun result = run({QStringLiteral("--json"), QStringLiteral("--faults"), plan,
                               QStringLiteral("where is A1001")});
    QCOMPARE(result.exitCode, 3);
    QCOMPARE(result.turns().first().value(QLatin1String("status")).toString(),
             QStringLiteral("failed"));
}

void tst_AgentCli::usageErrors_data()
{
    QTest::addColumn<QStringList>("arguments");
    QTest::addColumn<QByteArray>("planContent");
    QTest::addColumn<QString>("message");
    QTest::newRow("unknown flag") << QStringList{QStringLiteral("--bogus")} << QByteArray()
                                  << QStringLiteral("Unknown option 'bogus'");
    QTest::newRow("missing value") << QStringList{QStringLiteral("--user")} << QByteArray()
                                   << QStringLiteral("Missing value after '--user'");
    QTest::newRow("unreadable plan")
        << QStringList{QStringLiteral("--faults"), QStringLiteral("/nonexistent/plan.json"),
                       QStringLiteral("q")}
        << QByteArray() << QStringLiteral("cannot read the fault plan");
    QTest::newRow("broken plan") << QStringList{QStringLiteral("--faults"),
        QStringLiteral("@plan"), QStringLiteral("q")}
                                 << QByteArray(R"({"tools":{"queryLogistics":{"hang":1}}})")
                                 << QStringLiteral(
                                        "tools.queryLogistics.hang: expected true or false");
    QTest::newRow("openai without a base url")
        << QStringList{QStringLiteral("--provider"), QStringLiteral("openai"), QStringLiteral("q")}
        << QByteArray() << QStringLiteral("--provider openai needs --base-url");
    QTest::newRow("unknown provider")
        << QStringList{QStringLiteral("--provider"), QStringLiteral("gpt"), QStringLiteral("q")}
        << QByteArray() << QStringLiteral("--provider: expected offline or openai");
    QTest::newRow("not a url")
        << QStringList{QStringLiteral("--provider"), QStringLiteral("openai"),
                       QStringLiteral("--base-url"), QStringLiteral("localhost:11434"),
                       QStringLiteral("--model"), QStringLiteral("m"), QStringLiteral("q")}
        << QByteArray() << QStringLiteral("--base-url: not an http(s) URL");
    QTest::newRow("bad stream value")
        << QStringList{QStringLiteral("--stream"), QStringLiteral("yes"), QStringLiteral("q")}
        << QByteArray() << QStringLiteral("--stream: expected on or off");
    QTest::newRow("bad fallback") << QStringList{QStringLiteral("--fallback"),
        QStringLiteral("deepseek"), QStringLiteral("q")}
                                  << QByteArray()
                                  << QStringLiteral("--fallback: expected offline or none");
    QTest::newRow("bad request id")
        << QStringList{QStringLiteral("--request-id"), QStringLiteral("r 1/../x"),
                       QStringLiteral("q")}
        << QByteArray() << QStringLiteral("--request-id: use 1 to 64 letters, digits");
    QTest::newRow("bad conversation id")
        << QStringList{QStringLiteral("--conversation"), QString(QLatin1Char('c')).repeated(65),
                       QStringLiteral("q")}
        << QByteArray() << QStringLiteral("--conversation: use 1 to 64 letters, digits");
    QTest::newRow("http backend without a url")
        << QStringList{QStringLiteral("--backend"), QStringLiteral("http"), QStringLiteral("q")}
        << QByteArray() << QStringLiteral("--backend http needs --backend-url");
    QTest::newRow("key in a header")
        << QStringList{QStringLiteral("--provider"), QStringLiteral("openai"),
                       QStringLiteral("--base-url"), QStringLiteral("http://127.0.0.1:9/v1"),
                       QStringLiteral("--model"), QStringLiteral("m"), QStringLiteral("--header"),
                       QStringLiteral("Authorization: Bearer sk-1"), QStringLiteral("q")}
        << QByteArray() << QStringLiteral("the API key comes from --api-key-env");
    QTest::newRow("malformed header")
        << QStringList{QStringLiteral("--provider"), QStringLiteral("openai"),
                       QStringLiteral("--base-url"), QStringLiteral("http://127.0.0.1:9/v1"),
                       QStringLiteral("--model"), QStringLiteral("m"), QStringLiteral("--header"),
                       QStringLiteral("no colon"), QStringLiteral("q")}
        << QByteArray() << QStringLiteral("--header: expected");
    QTest::newRow("secondary without model")
        << QStringList{QStringLiteral("--provider"), QStringLiteral("openai"),
               QStringLiteral("--base-url"), QStringLiteral("http://127.0.0.1:9/v1"),
               QStringLiteral("--model"), QStringLiteral("m"),
               QStringLiteral("--secondary-base-url"), QStringLiteral("http://127.0.0.1:8/v1"),
               QStringLiteral("q")}
        << QByteArray() << QStringLiteral("--secondary-base-url needs --secondary-model");
    QTest::newRow("unknown user")
        << QStringList{QStringLiteral("--user"), QStringLiteral("u-404"), QStringLiteral("q")}
        << QByteArray() << QStringLiteral("unknown staff member 'u-404'");
    QTest::newRow("user of another tenant")
        << QStringList{QStringLiteral("--user"), QStringLiteral("u-1001"),
                       QStringLiteral("--tenant"), QStringLiteral("t-globex"), QStringLiteral("q")}
        << QByteArray() << QStringLiteral("does not belong to tenant 't-globex'");
}

void tst_AgentCli::usageErrors()
{
    QFETCH(QStringList, arguments);
    QFETCH(QByteArray, planContent);
    QFETCH(QString, message);
    if (!planContent.isEmpty())
        arguments.replaceInStrings(QStringLiteral("@plan"),
                                   writeFile(QStringLiteral("plan.json"), planContent));
    const CliRun result = run(arguments);
    QCOMPARE(result.exitCode, 2);
    const QString err = QString::fromUtf8(result.err).trimmed();
    QVERIFY2(err.contains(message), qPrintable(err));
    QCOMPARE(err.count(QLatin1Char('\n')), 0); // one clear line
    QVERIFY(result.out.isEmpty());
}

void tst_AgentCli::anotherTenantSeesOnlyItsOrders()
{
    const CliRun own = run({QStringLiteral("--json"), QStringLiteral("--tenant"),
                            QStringLiteral("t-globex"), QStringLiteral("where is A2001")});
    QCOMPARE(own.exitCode, 0);
    QCOMPARE(own.turns().first().value(QLatin1String("toolCalls")).toArray()[0].toObject()
                 .value(QLatin1String("code")).toString(),
             QStringLiteral("OK"));
    const CliRun other = run({QStringLiteral("--json"), QStringLiteral("where is A2001")});
    QCOMPARE(other.turns().first().value(QLatin1String("toolCalls")).toArray()[0].toObject()
                 .value(QLatin1String("code")).toString(),
             QStringLiteral("LOGISTICS_NOT_FOUND"));
}

void tst_AgentCli::createsATicketOnlyWhenConfirmed()
{
    const QString question =
        QStringLiteral("Create an after-sales ticket for order A1001: the mug arrived broken");
    const CliRun confirmed = run({QStringLiteral("--json"), QStringLiteral("--yes"), question});
    QCOMPARE(confirmed.exitCode, 0);
    const QJsonObject turn = confirmed.turns().first();
    const QJsonObject call = turn.value(QLatin1String("toolCalls")).toArray()[0].toObject();
    QCOMPARE(call.value(QLatin1String("name")).toString(), QStringLiteral("createTicket"));
    QCOMPARE(call.value(QLatin1String("code")).toString(), QStringLiteral("OK"));
    QCOMPARE(call.value(QLatin1String("arguments")).toObject()
                 .value(QLatin1String("category")).toString(),
             QStringLiteral("DAMAGED"));
    QVERIFY(turn.value(QLatin1String("answer")).toString().contains(QLatin1String("T-000001")));
    QVERIFY(QString::fromUtf8(confirmed.err).contains(QLatin1String("confirmed createTicket")));
    // The turn is in the journal with its counters, the backend's duplicate figure included.
    TurnJournal journal(m_dir->filePath(QStringLiteral("turns.sqlite")));
    QFuture<JournalOpenResult> opened = journal.open();
    opened.waitForFinished();
    QVERIFY(opened.result().ok);
    QFuture<std::optional<JournalEntry>> entry
        = journal.entry(turn.value(QLatin1String("conversationId")).toString(),
                        turn.value(QLatin1String("requestId")).toString());
    entry.waitForFinished();
    QVERIFY(entry.result());
    QCOMPARE(entry.result()->stage, QStringLiteral("COMPLETED"));
    const QJsonObject counters = entry.result()->counters;
    QCOMPARE(counters.value(QLatin1String("duplicate_business_object_count")).toInt(-1), 0);
    QCOMPARE(counters.value(QLatin1String("agent_restart_count")).toInt(-1), 0);
    QCOMPARE(counters.value(QLatin1String("idempotency_hit_count")).toInt(-1), 0);
    // The write went through the ledger in the data directory.
    QVERIFY(QFile::exists(m_dir->filePath(QStringLiteral("idempotency-ledger.sqlite")))
            || !QDir(m_dir->path()).entryList({QStringLiteral("*ledger*")}).isEmpty());
}

// The same --conversation and --request-id make the same operationIds: asking again is a
// replay, answered from the ledger.
void tst_AgentCli::aReplayedRequestDoesNotWriteTwice()
{
    const QStringList arguments{
        QStringLiteral("--json"), QStringLiteral("--yes"), QStringLiteral("--conversation"),
        QStringLiteral("c-front-desk"), QStringLiteral("--request-id"), QStringLiteral("r-42"),
        QStringLiteral("Create an after-sales ticket for order A1001: the mug arrived broken")};
    const CliRun first = run(arguments);
    const CliRun replay = run(arguments);
    QCOMPARE(first.exitCode, 0);
    QCOMPARE(replay.exitCode, 0);
    const QJsonObject firstTurn = first.turns().first();
    const QJsonObject replayTurn = replay.turns().first();
    QCOMPARE(firstTurn.value(QLatin1String("requestId")).toString(), QStringLiteral("r-42"));
    const auto call = [](const QJsonObject &turn) {
        return turn.value(QLatin1String("toolCalls")).toArray()[0].toObject();
    };
    QCOMPARE(call(firstTurn).value(QLatin1String("operationId")).toString(),
             QStringLiteral("t-acme:c-front-desk:r-42:createTicket:0"));
    QCOMPARE(call(replayTurn).value(QLatin1String("operationId")),
             call(firstTurn).value(QLatin1String("operationId")));
    const auto ticketOf = [&](const QJsonObject &turn) {
        return call(turn).value(QLatin1String("data")).toObject()
            .value(QLatin1String("ticketId")).toString();
    };
    QCOMPARE(ticketOf(firstTurn), QStringLiteral("T-000001"));
    QCOMPARE(ticketOf(replayTurn), QStringLiteral("T-000001"));
    QCOMPARE(replayTurn.value(QLatin1String("counters")).toObject()
                 .value(QLatin1String("idempotency_hit_count")).toInt(), 1);
    // The same ticket both times, said to have existed already, and no second one.
    const QString replayAnswer = replayTurn.value(QLatin1String("answer")).toString();
    QVERIFY2(replayAnswer.contains(QLatin1String("T-000001"))
                 && replayAnswer.contains(QLatin1String("already existed")),
             qPrintable(replayAnswer));
    const CliRun next = run({QStringLiteral("--json"), QStringLiteral("--yes"),
                             QStringLiteral("Open a ticket for order A1003: wrong colour")});
    QVERIFY(next.turns().first().value(QLatin1String("answer")).toString()
                .contains(QLatin1String("T-000002")));
}

// A turn killed right after its plan was saved is carried on by --resume, once, and the
// counters of all turns say it was restarted.
void tst_AgentCli::resumeCarriesOnAKilledTurn()
{
    const auto killed = startStoppedAt(QStringLiteral("checkpoint-PLANNED"),
                                       {QStringLiteral("--json"),
                                        QStringLiteral("Where is order A1001?")});
    QVERIFY(killed);
    killed->kill();
    QVERIFY(killed->waitForFinished(10'000));

    const CliRun resumed = run({QStringLiteral("--json"), QStringLiteral("--resume")});
    QCOMPARE(resumed.exitCode, 0);
    QCOMPARE(resumed.turns().size(), 1);
    const QJsonObject turn = resumed.turns().first();
    QCOMPARE(turn.value(QLatin1String("question")).toString(),
             QStringLiteral("Where is order A1001?"));
    QCOMPARE(turn.value(QLatin1String("status")).toString(), QStringLiteral("completed"));
    QCOMPARE(turn.value(QLatin1String("counters")).toObject()
                 .value(QLatin1String("agent_restart_count")).toInt(), 1);
    QVERIFY(turn.value(QLatin1String("answer")).toString().contains(QLatin1String("SF10010001")));

    const CliRun again = run({QStringLiteral("--json"), QStringLiteral("--resume")});
    QCOMPARE(again.exitCode, 0);
    QVERIFY(again.turns().isEmpty()); // nothing left to resume

    const CliRun counters = run({QStringLiteral("--counters")});
    QCOMPARE(counters.exitCode, 0);
    const QJsonObject totals = QJsonDocument::fromJson(counters.out).object();
    QCOMPARE(totals.value(QLatin1String("agent_restart_count")).toInt(), 1);
    QCOMPARE(totals.value(QLatin1String("duplicate_business_object_count")).toInt(-1), 0);
}

// A second process on the same data directory would see the first one's running turn as
// interrupted: it refuses to start, and says who holds the directory.
void tst_AgentCli::oneProcessPerDataDirectory()
{
    const auto holder = startStoppedAt(QStringLiteral("checkpoint-RECEIVED"),
                                       {QStringLiteral("A1001?")});
    QVERIFY(holder);
    const QByteArray holderPid = "(pid " + QByteArray::number(holder->processId()) + ")";
    const CliRun second = run({QStringLiteral("--json"), QStringLiteral("Where is A1001?")});
    holder->kill();
    QVERIFY(holder->waitForFinished(10'000));
    QCOMPARE(second.exitCode, 2);
    QVERIFY2(second.err.contains("is using the data directory")
                 && second.err.contains(holderPid),
             second.err.constData());
    QVERIFY(second.out.isEmpty());
    // Once the holder is gone its lock is stale: the next process starts and resumes.
    const CliRun after = run({QStringLiteral("--json"), QStringLiteral("--resume")});
    QCOMPARE(after.exitCode, 0);
    QCOMPARE(after.turns().size(), 1);
}

void tst_AgentCli::theWindowRefusesBadOptionsWithoutADisplay_data()
{
    QTest::addColumn<QStringList>("arguments");
    QTest::addColumn<QString>("message");
    QTest::newRow("unknown flag") << QStringList{QStringLiteral("--bogus")}
                                  << QStringLiteral("agent-console: Unknown option 'bogus'.");
    QTest::newRow("bad value") << QStringList{QStringLiteral("--stream"), QStringLiteral("maybe")}
                               << QStringLiteral("agent-console: --stream: expected on or off");
}

// The window's options are read before any display is needed: a bad one is one clear line,
// not an abort in the platform plugin.
void tst_AgentCli::theWindowRefusesBadOptionsWithoutADisplay()
{
    QFETCH(QStringList, arguments);
    QFETCH(QString, message);
    QProcess window;
    QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
    environment.remove(QStringLiteral("DISPLAY"));
    environment.remove(QStringLiteral("WAYLAND_DISPLAY"));
    environment.remove(QStringLiteral("QT_QPA_PLATFORM"));
    window.setProcessEnvironment(environment);
    window.start(QStringLiteral(AGENT_CONSOLE_PATH),
                 QStringList{QStringLiteral("--data-dir"), m_dir->path()} + arguments);
    QVERIFY(window.waitForFinished(20'000));
    QCOMPARE(window.exitStatus(), QProcess::NormalExit);
    QCOMPARE(window.exitCode(), 2);
    QCOMPARE(QString::fromLocal8Bit(window.readAllStandardError()).trimmed(), message);
}

QTEST_GUILESS_MAIN(tst_AgentCli)
#include "tst_agentcli.moc"
