#include "clirun.h"
#include "pseudoterminal.h"

#include "core/console/runtimeoptions.h"
#include "core/ledger/turnjournal.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <QScopeGuard>
#include <QSqlDatabase>
#include <QSqlError>
#include <QSqlQuery>
#include <QTemporaryDir>
#include <QTest>

#include <sys/mount.h>

#include <cerrno>
#include <cstring>

#include <memory>

#include <unistd.h>

using namespace AgentConsole;
using namespace AgentConsole::Testing;

namespace {

// A tmpfs of 8 MiB, mounted for one test (root only) and unmounted when it goes: a disk that
// can be filled to its last byte.
class SmallDisk
{
public:
    SmallDisk()
    {
        if (!m_mountPoint.isValid())
            m_error = QStringLiteral("no temporary directory");
        else if (::mount("tmpfs", qPrintable(m_mountPoint.path()), "tmpfs", 0, "size=8m") != 0)
            m_error = QString::fromLocal8Bit(std::strerror(errno));
        else
            m_mounted = true;
    }
    ~SmallDisk()
    {
        if (m_mounted)
            ::umount2(qPrintable(m_mountPoint.path()), 0);
    }
    SmallDisk(const SmallDisk &) = delete;
    SmallDisk &operator=(const SmallDisk &) = delete;

    bool isMounted() const { return m_mounted; }
    QString error() const { return m_error; }
    QString filePath(const QString &name) const { return m_mountPoint.filePath(name); }
    // Takes every byte left with one file; makeRoom() removes it.
    bool fill()
    {
        QFile file(filePath(QStringLiteral("fill")));
        if (!file.open(QIODevice::WriteOnly))
            return false;
        const QByteArray block(64 * 1024, '\0');
        while (file.write(block) == block.size() && file.flush()) { }
        return true;
    }
    bool makeRoom() { return QFile::remove(filePath(QStringLiteral("fill"))); }

private:
    QTemporaryDir m_mountPoint;
    bool m_mounted = false;
    QString m_error;
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
    void stdinTurnsKeepToTheConversationBudget();
    void anOpenLogisticsCircuitLeavesInventoryAnswering();
    void textOutputListsEveryToolCall();
    void partialSuccessStillExitsZero();
    void aFailedTurnExitsThree();
    void usageErrors_data();
    void usageErrors();
    void anotherTenantSeesOnlyItsOrders();
    void createsATicketOnlyWhenConfirmed();
    void aWriteNobodyCanConfirmIsNotRun();
    void closingTheTerminalLeavesAWriteUnconfirmed();
    void aReplayedRequestDoesNotWriteTwice();
    void resumeCarriesOnAKilledTurn();
    void aKilledRunLeavesNoTemporaryDirectory();
    void oneProcessPerDataDirectory();
    void theWindowRefusesBadOptionsWithoutADisplay_data();
    void theWindowRefusesBadOptionsWithoutADisplay();
    void helpShowsTheRealDefaultDataDirectory_data();
    void helpShowsTheRealDefaultDataDirectory();
    void anotherSessionsTurnIsReportedNotResumed();
    void anEditedJournalReadsNoOtherTenantsData();
    void aDamagedCheckpointFailsResume();
    void aDataFileOfADirectoryInUseIsNeverRecreated_data();
    void aDataFileOfADirectoryInUseIsNeverRecreated();
    void aDamagedDataFileIsCalledDamaged_data();
    void aDamagedDataFileIsCalledDamaged();
    void aFullDiskIsCalledAFullDisk();
    void aDiskThatFillsDuringATurnIsCalledFull();
    void theWindowEndsItsServersCleanly();
    void pathsThatCannotBeUsedAreNamed_data();
    void pathsThatCannotBeUsedAreNamed();
    void aLikelyDuplicateIsToldAndNotMadeUnderYes();
    void staysEnglishOnAChineseSystem_data();
    void staysEnglishOnAChineseSystem();
    void auditPrintsTheTrailOfWrites();
    void auditOptionsAreChecked_data();
    void auditOptionsAreChecked();
    void aTeamPolicyIsKeptWithEachTurn();
    void anOptionTheTeamPolicyLocksIsRefused_data();
    void anOptionTheTeamPolicyLocksIsRefused();
    void aTeamPolicyThatCannotBeUsedStopsTheStart();
    void aServerTheTeamPolicyDoesNotAllowIsListedRefused();

private:
    // A team policy in a configuration directory of this test's own (never /etc), and the
    // environment that points agent-cli at it.
    QProcessEnvironment withTeamPolicy(const QByteArray &json);
    CliRun run(const QStringList &arguments, const QByteArray &input = {},
               const QProcessEnvironment &environment = QProcessEnvironment::systemEnvironment());
    // agent-cli on this data directory, stopped at kill point `point` (it announced it on
    // stderr); null when it never got there.
    std::unique_ptr<QProcess> startStoppedAt(const QString &point, const QStringList &arguments);
    QString writeFile(const QString &name, const QByteArray &content);
    // A turn of the demo's first staff member stopped right after its plan was saved.
    bool leaveInterruptedTurn();
    // Runs `sql` on this data directory's turns.sqlite (an edited or damaged journal).
    bool editJournal(const QString &sql);

    std::unique_ptr<QTemporaryDir> m_dir;
};

void tst_AgentCli::init()
{
    m_dir = std::make_unique<QTemporaryDir>();
    QVERIFY(m_dir->isValid());
}

CliRun tst_AgentCli::run(const QStringList &arguments, const QByteArray &input,
                         const QProcessEnvironment &environment)
{
    QProcess process;
    process.setProcessEnvironment(environment);
    // As in CI, whatever terminal the test has: a session of its own, no controlling terminal.
    process.setChildProcessModifier([] { ::setsid(); });
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
    if (!QTest::qWaitFor(
            [&] { return (err += process->readAllStandardError()).contains("kill point"); },
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

bool tst_AgentCli::leaveInterruptedTurn()
{
    const auto killed = startStoppedAt(QStringLiteral("checkpoint-PLANNED"),
                                       {QStringLiteral("--json"), QStringLiteral("--request-id"),
                                        QStringLiteral("r-held"),
                                        QStringLiteral("Where is order A1001?")});
    if (!killed)
        return false;
    killed->kill();
    return killed->waitForFinished(10'000);
}

bool tst_AgentCli::editJournal(const QString &sql)
{
    bool done = false;
    {
        QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"),
                                                    QStringLiteral("editor"));
        db.setDatabaseName(m_dir->filePath(QStringLiteral("turns.sqlite")));
        QSqlQuery query(db);
        done = db.open() && query.exec(sql) && query.numRowsAffected() > 0;
        if (!done)
            qWarning("edit failed: %s", qPrintable(query.lastError().text()));
        query.finish();
        db.close();
    }
    QSqlDatabase::removeDatabase(QStringLiteral("editor"));
    return done;
}

void tst_AgentCli::answersTheExampleQuestionsAsJson_data()
{
    QTest::addColumn<QString>("question");
    QTest::addColumn<QStringList>("tools");
    QTest::addColumn<QString>("fact");
    // Words of the other language's demo data that the answer must not show (issue #41 §7).
    QTest::addColumn<QStringList>("absent");
    const QStringList englishData{QStringLiteral("Shanghai"),    QStringLiteral("SF Express"),
                                  QStringLiteral("sorting hub"), QStringLiteral("Bamboo"),
                                  QStringLiteral("Ceramic"),     QStringLiteral("Suzhou")};
    QTest::newRow("zh logistics") << QStringLiteral("查询订单 A1001 的物流位置")
                                  << QStringList{QStringLiteral("queryLogistics")}
                                  << QStringLiteral("SF10010001") << englishData;
    QTest::newRow("zh logistics, the place in Chinese")
        << QStringLiteral("A1001 到哪了？") << QStringList{QStringLiteral("queryLogistics")}
        << QStringLiteral("当前位置：上海浦东转运中心") << englishData;
    QTest::newRow("zh order, the products in Chinese")
        << QStringLiteral("A1001 的订单状态") << QStringList{QStringLiteral("queryOrderStatus")}
        << QStringLiteral("陶瓷马克杯套装（SKU-100）× 2、竹制砧板（SKU-200）× 1") << englishData;
    QTest::newRow("zh stock, the product and warehouse in Chinese")
        << QStringLiteral("SKU-200 还有货吗") << QStringList{QStringLiteral("queryInventory")}
        << QStringLiteral("商品 SKU-200（竹制砧板）库存紧张，仅剩 3 件（仓库：苏州仓）")
        << englishData;
    QTest::newRow("en multi-intent")
        << QStringLiteral("Where is order A1001 and is SKU-200 in stock?")
        << QStringList{QStringLiteral("queryLogistics"), QStringLiteral("queryInventory")}
        << QStringLiteral("Shanghai Pudong Hub")
        << QStringList{QStringLiteral("上海"), QStringLiteral("竹制"), QStringLiteral("苏州")};
}

void tst_AgentCli::answersTheExampleQuestionsAsJson()
{
    QFETCH(QString, question);
    QFETCH(QStringList, tools);
    QFETCH(QString, fact);
    QFETCH(QStringList, absent);
    const CliRun result = run({QStringLiteral("--json"), question});
    QCOMPARE(result.exitCode, 0);
    const QList<QJsonObject> turns = result.turns();
    QCOMPARE(turns.size(), 1);
    const QJsonObject turn = turns.first();
    QCOMPARE(turn.value(QLatin1String("status")).toString(), QStringLiteral("completed"));
    QCOMPARE(turn.value(QLatin1String("model")).toString(), QStringLiteral("offline-demo"));
    const QString answer = turn.value(QLatin1String("answer")).toString();
    QVERIFY2(answer.contains(fact), qPrintable(answer));
    for (const QString &word : std::as_const(absent))
        QVERIFY2(!answer.contains(word), qPrintable(word + QStringLiteral(" in: ") + answer));
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
            const QString operationId
                = call.toObject().value(QLatin1String("operationId")).toString();
            conversations.insert(operationId.section(QLatin1Char(':'), 1, 1));
        }
    }
    QCOMPARE(conversations.size(), 1);
}

// Issue #24 §4: stdin's turns are one conversation, and what goes to the model is bounded as
// in the window: with --context-chars at its least, the later turns leave the earliest out and
// say how many; a turn that fits everything says nothing. A budget out of range is refused.
void tst_AgentCli::stdinTurnsKeepToTheConversationBudget()
{
    QByteArray questions;
    for (int i = 0; i < 8; ++i)
        questions += "where is A1001? " + QByteArray(400, 'x') + "\n";
    const CliRun result = run({QStringLiteral("--json"), QStringLiteral("--context-chars"),
                               QString::number(ModelOptions::minContextChars)},
                              questions);
    QCOMPARE(result.exitCode, 0);
    const QList<QJsonObject> turns = result.turns();
    QCOMPARE(turns.size(), 8);
    QVERIFY(!turns.first().contains(QLatin1String("turnsLeftOut")));
    const int lastLeftOut = turns.last().value(QLatin1String("turnsLeftOut")).toInt();
    QVERIFY2(lastLeftOut >= 3 && lastLeftOut <= 7, qPrintable(QString::number(lastLeftOut)));
    for (const QJsonObject &turn : turns)
        QCOMPARE(turn.value(QLatin1String("status")).toString(), QStringLiteral("completed"));

    const CliRun whole = run({QStringLiteral("--json")}, questions);
    QCOMPARE(whole.exitCode, 0);
    QVERIFY(!whole.turns().last().contains(QLatin1String("turnsLeftOut"))); // 32,000 fits all

    const CliRun refused = run({QStringLiteral("--context-chars"), QStringLiteral("10")},
                               "where is A1001\n");
    QCOMPARE(refused.exitCode, 2);
    QVERIFY2(refused.err.contains("--context-chars"), refused.err.constData());
}

// One breaker per route, seen from --json and --counters: logistics' opens after its tenth
// failed attempt (4th turn) and refuses the 5th turn's call, saying circuit_open; inventory
// still answers in the 6th.
void tst_AgentCli::anOpenLogisticsCircuitLeavesInventoryAnswering()
{
    const QString faults = writeFile(
        QStringLiteral("logistics-fails.json"),
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
        return turns[turn]
            .value(QLatin1String("counters"))
            .toObject()
            .value(QLatin1String("circuit_breaker_open_count"))
            .toInt(-1);
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
    const QString plan = writeFile(QStringLiteral("plan.json"),
                                   R"({"model":{"unavailable":true}})");
    // Without the offline fallback, which would answer in the faulted offline model's place.
    const CliRun result = run({QStringLiteral("--json"), QStringLiteral("--fallback"),
                               QStringLiteral("none"), QStringLiteral("--faults"), plan,
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
    QTest::newRow("not a url") << QStringList{QStringLiteral("--provider"),
                                              QStringLiteral("openai"),
                                              QStringLiteral("--base-url"),
                                              QStringLiteral("localhost:11434"),
                                              QStringLiteral("--model"),
                                              QStringLiteral("m"),
                                              QStringLiteral("q")}
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
                       QStringLiteral("--model"),    QStringLiteral("m"),
                       QStringLiteral("--header"),   QStringLiteral("Authorization: Bearer sk-1"),
                       QStringLiteral("q")}
        << QByteArray() << QStringLiteral("the API key comes from --api-key-env");
    QTest::newRow("malformed header")
        << QStringList{QStringLiteral("--provider"), QStringLiteral("openai"),
                       QStringLiteral("--base-url"), QStringLiteral("http://127.0.0.1:9/v1"),
                       QStringLiteral("--model"),    QStringLiteral("m"),
                       QStringLiteral("--header"),   QStringLiteral("no colon"),
                       QStringLiteral("q")}
        << QByteArray() << QStringLiteral("--header: expected");
    QTest::newRow("secondary without model")
        << QStringList{QStringLiteral("--provider"),
                       QStringLiteral("openai"),
                       QStringLiteral("--base-url"),
                       QStringLiteral("http://127.0.0.1:9/v1"),
                       QStringLiteral("--model"),
                       QStringLiteral("m"),
                       QStringLiteral("--secondary-base-url"),
                       QStringLiteral("http://127.0.0.1:8/v1"),
                       QStringLiteral("q")}
        << QByteArray() << QStringLiteral("--secondary-base-url needs --secondary-model");
    QTest::newRow("unknown user") << QStringList{QStringLiteral("--user"), QStringLiteral("u-404"),
                                                 QStringLiteral("q")}
                                  << QByteArray()
                                  << QStringLiteral("unknown staff member 'u-404'");
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
    QCOMPARE(own.turns()
                 .first()
                 .value(QLatin1String("toolCalls"))
                 .toArray()[0]
                 .toObject()
                 .value(QLatin1String("code"))
                 .toString(),
             QStringLiteral("OK"));
    // Another tenant's order is no order at all: its shipment is "no such order", never
    // "no logistics yet", which would tell that the order exists.
    const CliRun other = run({QStringLiteral("--json"), QStringLiteral("where is A2001")});
    QCOMPARE(other.turns()
                 .first()
                 .value(QLatin1String("toolCalls"))
                 .toArray()[0]
                 .toObject()
                 .value(QLatin1String("code"))
                 .toString(),
             QStringLiteral("ORDER_NOT_FOUND"));
}

// #41 §1: agent-cli says what the order already has before a ticket is confirmed; --yes
// keeps an earlier ticket of the same order and category rather than making a second one,
// unless --allow-duplicate.
void tst_AgentCli::aLikelyDuplicateIsToldAndNotMadeUnderYes()
{
    const QString question = QStringLiteral(
        "Create an after-sales ticket for order A1001: the mug arrived broken");
    const CliRun first = run({QStringLiteral("--json"), QStringLiteral("--yes"), question});
    QCOMPARE(first.exitCode, 0);
    QVERIFY(first.turns()
                .first()
                .value(QLatin1String("answer"))
                .toString()
                .contains(QLatin1String("T-000001")));

    const CliRun second = run({QStringLiteral("--json"), QStringLiteral("--yes"), question});
    const QString said = QString::fromUtf8(second.err);
    QVERIFY2(said.contains(QStringLiteral("likely a duplicate: A1001 already has a "
                                          "\u201cDamaged item\u201d T-000001, created")),
             qPrintable(said));
    QVERIFY2(said.contains(QLatin1String("not run: it looks like T-000001")), qPrintable(said));
    const QJsonObject kept
        = second.turns().first().value(QLatin1String("toolCalls")).toArray().at(0).toObject();
    QCOMPARE(kept.value(QLatin1String("code")).toString(),
             QStringLiteral("CONFIRMATION_DECLINED"));
    QVERIFY(!second.turns()
                 .first()
                 .value(QLatin1String("answer"))
                 .toString()
                 .contains(QLatin1String("T-000002")));

    const CliRun anyway = run({QStringLiteral("--json"), QStringLiteral("--yes"),
                               QStringLiteral("--allow-duplicate"), question});
    QCOMPARE(anyway.exitCode, 0);
    QVERIFY(QString::fromUtf8(anyway.err).contains(QLatin1String("likely a duplicate")));
    QVERIFY(anyway.turns()
                .first()
                .value(QLatin1String("answer"))
                .toString()
                .contains(QLatin1String("T-000002")));
}

void tst_AgentCli::createsATicketOnlyWhenConfirmed()
{
    const QString question = QStringLiteral(
        "Create an after-sales ticket for order A1001: the mug arrived broken");
    const CliRun confirmed = run({QStringLiteral("--json"), QStringLiteral("--yes"), question});
    QCOMPARE(confirmed.exitCode, 0);
    const QJsonObject turn = confirmed.turns().first();
    const QJsonObject call = turn.value(QLatin1String("toolCalls")).toArray()[0].toObject();
    QCOMPARE(call.value(QLatin1String("name")).toString(), QStringLiteral("createTicket"));
    QCOMPARE(call.value(QLatin1String("code")).toString(), QStringLiteral("OK"));
    QCOMPARE(call.value(QLatin1String("arguments"))
                 .toObject()
                 .value(QLatin1String("category"))
                 .toString(),
             QStringLiteral("DAMAGED"));
    QVERIFY(turn.value(QLatin1String("answer")).toString().contains(QLatin1String("T-000001")));
    QVERIFY(QString::fromUtf8(confirmed.err).contains(QLatin1String("confirmed createTicket")));
    // The turn is in the journal with its counters, the backend's duplicate figure included.
    TurnJournal journal(m_dir->filePath(QStringLiteral("turns.sqlite")));
    QFuture<JournalOpenResult> opened = journal.open();
    opened.waitForFinished();
    QVERIFY(opened.result().ok);
    QFuture<std::optional<JournalEntry>> entry = journal.entry(
        turn.value(QLatin1String("conversationId")).toString(),
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

// Without --yes and without a terminal to ask on, nobody can confirm the write: it is not run,
// and neither the call nor the answer says a staff member declined it.
void tst_AgentCli::aWriteNobodyCanConfirmIsNotRun()
{
    const CliRun result = run(
        {QStringLiteral("--json"),
         QStringLiteral("Create an after-sales ticket for order A1001: the mug arrived broken")});
    QCOMPARE(result.exitCode, 0);
    const QJsonObject turn = result.turns().first();
    const QJsonObject call = turn.value(QLatin1String("toolCalls")).toArray()[0].toObject();
    QCOMPARE(call.value(QLatin1String("name")).toString(), QStringLiteral("createTicket"));
    QCOMPARE(call.value(QLatin1String("code")).toString(),
             QStringLiteral("CONFIRMATION_DECLINED"));
    QCOMPARE(call.value(QLatin1String("message")).toString(),
             QStringLiteral("Nobody could be asked to confirm this action, so it was not run"));
    const QString answer = turn.value(QLatin1String("answer")).toString();
    QVERIFY2(answer.contains(QLatin1String("nobody could be asked to confirm it"))
                 && !answer.contains(QLatin1String("declined")),
             qPrintable(answer));
    const QString err = QString::fromUtf8(result.err);
    QVERIFY2(err.contains(QLatin1String("no terminal to ask on"))
                 && err.contains(QLatin1String("pass --yes to confirm")),
             qPrintable(err));
    QVERIFY2(!err.contains(QLatin1String("declined by the staff member")), qPrintable(err));
}

// Asked on its terminal, the staff member ends the input (Ctrl-D) instead of answering: the
// write is not run and agent-cli finishes (before, it waited for an answer that could not come).
void tst_AgentCli::closingTheTerminalLeavesAWriteUnconfirmed()
{
    AgentConsole::Testing::PseudoTerminal terminal;
    QVERIFY(terminal.isOpen());
    QProcess process;
    terminal.attach(process);
    process.start(QStringLiteral(AGENT_CLI_PATH),
                  {QStringLiteral("--data-dir"), m_dir->path(), QStringLiteral("--json"),
                   QStringLiteral("Create an after-sales ticket for order A1001: the mug "
                                  "arrived broken")});
    QVERIFY(process.waitForStarted(10'000));
    process.closeWriteChannel();
    QVERIFY2(terminal.waitForShown("? [y/N] ", 30'000), terminal.shown().constData());
    QVERIFY(terminal.shown().contains("Run createTicket"));
    QVERIFY(terminal.type("\x04")); // Ctrl-D: the end of the input
    QVERIFY(process.waitForFinished(30'000));
    QCOMPARE(process.exitCode(), 0);
    const CliRun result{process.exitCode(), process.readAllStandardOutput(),
                        process.readAllStandardError()};
    const QJsonObject call
        = result.turns().first().value(QLatin1String("toolCalls")).toArray()[0].toObject();
    QCOMPARE(call.value(QLatin1String("code")).toString(),
             QStringLiteral("CONFIRMATION_DECLINED"));
    QCOMPARE(call.value(QLatin1String("message")).toString(),
             QStringLiteral("Nobody could be asked to confirm this action, so it was not run"));
    QVERIFY2(result.err.contains("the terminal closed before 1 action(s) were confirmed"),
             result.err.constData());
}

// The same --conversation and --request-id make the same operationIds: asking again is a
// replay, answered from the ledger.
void tst_AgentCli::aReplayedRequestDoesNotWriteTwice()
{
    const QStringList arguments{
        QStringLiteral("--json"),
        QStringLiteral("--yes"),
        QStringLiteral("--conversation"),
        QStringLiteral("c-front-desk"),
        QStringLiteral("--request-id"),
        QStringLiteral("r-42"),
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
        return call(turn)
            .value(QLatin1String("data"))
            .toObject()
            .value(QLatin1String("ticketId"))
            .toString();
    };
    QCOMPARE(ticketOf(firstTurn), QStringLiteral("T-000001"));
    QCOMPARE(ticketOf(replayTurn), QStringLiteral("T-000001"));
    QCOMPARE(replayTurn.value(QLatin1String("counters"))
                 .toObject()
                 .value(QLatin1String("idempotency_hit_count"))
                 .toInt(),
             1);
    // The same ticket both times, said to have existed already, and no second one.
    const QString replayAnswer = replayTurn.value(QLatin1String("answer")).toString();
    QVERIFY2(replayAnswer.contains(QLatin1String("T-000001"))
                 && replayAnswer.contains(QLatin1String("already existed")),
             qPrintable(replayAnswer));
    const CliRun next = run({QStringLiteral("--json"), QStringLiteral("--yes"),
                             QStringLiteral("Open a ticket for order A1003: wrong colour")});
    QVERIFY(next.turns()
                .first()
                .value(QLatin1String("answer"))
                .toString()
                .contains(QLatin1String("T-000002")));
}

// A turn killed right after its plan was saved is carried on by --resume, once, and the
// counters of all turns say it was restarted.
// A run killed at a kill point leaves nothing in the temporary directory (the crash-injection
// suites kill hundreds): agent-cli makes a directory there only for a scenario run without
// --data-dir, and removes it at the end.
void tst_AgentCli::aKilledRunLeavesNoTemporaryDirectory()
{
    const QString temporary = m_dir->filePath(QStringLiteral("tmp"));
    QVERIFY(QDir().mkpath(temporary));
    const QByteArray before = qgetenv("TMPDIR");
    qputenv("TMPDIR", temporary.toUtf8());
    const auto restore = qScopeGuard([&before] {
        if (before.isEmpty())
            qunsetenv("TMPDIR");
        else
            qputenv("TMPDIR", before);
    });
    const auto left = [&temporary] {
        return QDir(temporary).entryList(QDir::AllEntries | QDir::NoDotAndDotDot | QDir::Hidden);
    };
    QVERIFY(leaveInterruptedTurn()); // killed at a kill point
    QVERIFY2(left().isEmpty(), qPrintable(left().join(QLatin1Char(' '))));

    QProcess scenario;
    scenario.start(QStringLiteral(AGENT_CLI_PATH),
                   {QStringLiteral("--scenario"), QStringLiteral("all-good"),
                    QStringLiteral("--json")});
    QVERIFY(scenario.waitForFinished(30'000));
    QCOMPARE(scenario.exitCode(), 0);
    QVERIFY2(left().isEmpty(), qPrintable(left().join(QLatin1Char(' '))));
}

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
    QCOMPARE(turn.value(QLatin1String("counters"))
                 .toObject()
                 .value(QLatin1String("agent_restart_count"))
                 .toInt(),
             1);
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
    QVERIFY2(second.err.contains("is using the data directory") && second.err.contains(holderPid),
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

void tst_AgentCli::helpShowsTheRealDefaultDataDirectory_data()
{
    QTest::addColumn<QString>("program");
    QTest::newRow("agent-console") << QStringLiteral(AGENT_CONSOLE_PATH);
    QTest::newRow("agent-cli") << QStringLiteral(AGENT_CLI_PATH);
}

// Both name the directory they would really use: the application's own folder under
// XDG_DATA_HOME, not the generic data folder (the console once made its options before its
// names). Without a display, as --help must work anywhere.
void tst_AgentCli::helpShowsTheRealDefaultDataDirectory()
{
    QFETCH(QString, program);
    QProcess help;
    QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
    environment.insert(QStringLiteral("XDG_DATA_HOME"), m_dir->path());
    environment.remove(QStringLiteral("DISPLAY"));
    environment.remove(QStringLiteral("WAYLAND_DISPLAY"));
    environment.remove(QStringLiteral("QT_QPA_PLATFORM"));
    help.setProcessEnvironment(environment);
    help.start(program, {QStringLiteral("--help")});
    QVERIFY(help.waitForFinished(20'000));
    QCOMPARE(help.exitCode(), 0);
    // The help wraps its lines; the path itself has no spaces, so it is read whole.
    QString text = QString::fromLocal8Bit(help.readAllStandardOutput()).simplified();
    text.remove(QLatin1Char(' '));
    const QString expected = m_dir->path() + QStringLiteral("/AgentConsole/agent-console");
    QVERIFY2(text.contains(QStringLiteral("(default:") + expected + QStringLiteral(")")),
             qPrintable(text));
}

// A turn saved under another staff member is not this session's to carry on: it is not run,
// and stderr says so (naming the request, nothing of its content) instead of dropping it.
void tst_AgentCli::anotherSessionsTurnIsReportedNotResumed()
{
    QVERIFY(leaveInterruptedTurn());
    const CliRun other = run({QStringLiteral("--json"), QStringLiteral("--user"),
                              QStringLiteral("u-1002"), QStringLiteral("--resume")});
    QCOMPARE(other.exitCode, 0);
    QVERIFY(other.turns().isEmpty());
    QVERIFY2(other.err.contains("r-held") && other.err.contains("another staff member"),
             other.err.constData());
    QVERIFY(!other.err.contains("A1001"));
    // Its own staff member still can.
    const CliRun own = run({QStringLiteral("--json"), QStringLiteral("--resume")});
    QCOMPARE(own.exitCode, 0);
    QCOMPARE(own.turns().size(), 1);
    QVERIFY(own.err.isEmpty());
}

// Someone edits the journal so that Acme's interrupted turn claims to be Globex's, or another
// Acme staff member's: nothing of it runs or is shown to the running session.
void tst_AgentCli::anEditedJournalReadsNoOtherTenantsData()
{
    QVERIFY(leaveInterruptedTurn());
    // Another staff member of the same tenant named in the row: not this session's.
    QVERIFY(
        editJournal(QStringLiteral("UPDATE turn_checkpoints SET state_json = replace(state_json, "
                                   "'\"userId\":\"u-1001\"', '\"userId\":\"u-1002\"')")));
    const CliRun staff = run({QStringLiteral("--json"), QStringLiteral("--resume")});
    QCOMPARE(staff.exitCode, 0);
    QVERIFY(staff.turns().isEmpty());
    QVERIFY2(staff.err.contains("r-held") && staff.err.contains("another staff member"),
             staff.err.constData());

    // Globex named in the row: its plan's keys are still Acme's, so the row is damaged for
    // everyone; for Globex too, and a key of another tenant never reaches the ledger.
    QVERIFY(editJournal(
        QStringLiteral("UPDATE turn_checkpoints SET state_json = replace(replace(state_json, "
                       "'\"userId\":\"u-1002\"', '\"userId\":\"u-2001\"'), "
                       "'\"tenantId\":\"t-acme\"', '\"tenantId\":\"t-globex\"')")));
    for (const QStringList &session :
         {QStringList(), QStringList{QStringLiteral("--tenant"), QStringLiteral("t-globex")}}) {
        const CliRun resumed = run(
            QStringList{QStringLiteral("--json"), QStringLiteral("--resume")} + session);
        QCOMPARE(resumed.exitCode, 3);
        QVERIFY(resumed.turns().isEmpty());
        QVERIFY2(resumed.err.contains("r-held") && resumed.err.contains("damaged"),
                 resumed.err.constData());
        QVERIFY(!resumed.out.contains("SF10010001") && !resumed.err.contains("SF10010001"));
        QVERIFY(!resumed.err.contains("A1001")); // nothing of the turn is shown
    }
}

// A checkpoint that cannot be read is not skipped with exit 0: --resume says which, and fails.
void tst_AgentCli::aDamagedCheckpointFailsResume()
{
    QVERIFY(leaveInterruptedTurn());
    QVERIFY(
        editJournal(QStringLiteral("UPDATE turn_checkpoints SET state_json = '{\"format\":'")));
    const CliRun resumed = run({QStringLiteral("--json"), QStringLiteral("--resume")});
    QCOMPARE(resumed.exitCode, 3);
    QVERIFY(resumed.turns().isEmpty());
    QVERIFY2(resumed.err.contains("r-held") && resumed.err.contains("damaged"),
             resumed.err.constData());
    // Other questions still work, and the damage is still said.
    const CliRun asked = run({QStringLiteral("--json"), QStringLiteral("Is SKU-200 in stock?")});
    QCOMPARE(asked.exitCode, 0);
    QCOMPARE(asked.turns().size(), 1);
    QVERIFY(asked.err.contains("r-held"));
}

void tst_AgentCli::aDataFileOfADirectoryInUseIsNeverRecreated_data()
{
    QTest::addColumn<QString>("file");
    QTest::addColumn<QByteArray>("content");
    QTest::addColumn<QString>("problem");
    for (const char *name : {"ledger.sqlite", "turns.sqlite", "support-store.sqlite"}) {
        QTest::addRow("%s empty", name)
            << QString::fromLatin1(name) << QByteArray() << QStringLiteral("is empty");
        QTest::addRow("%s not SQLite", name)
            << QString::fromLatin1(name) << QByteArray(4096, 'x') << QStringLiteral("damaged");
    }
}

// Issue #8: an empty or unreadable data file in a directory that was in use was recreated,
// and the SUCCEEDED ledger rows, the interrupted turn or the tickets went with it. Now the
// console refuses with one line naming the file and what to do, and leaves it as it is.
void tst_AgentCli::aDataFileOfADirectoryInUseIsNeverRecreated()
{
    QFETCH(QString, file);
    QFETCH(QByteArray, content);
    QFETCH(QString, problem);
    const CliRun fresh = run({QStringLiteral("--json"), QStringLiteral("Is SKU-200 in stock?")});
    QCOMPARE(fresh.exitCode, 0); // a fresh data directory starts normally
    QVERIFY(QFile::exists(m_dir->filePath(QStringLiteral("console-id"))));
    for (const QString &suffix : {QStringLiteral("-wal"), QStringLiteral("-shm")})
        QFile::remove(m_dir->filePath(file + suffix));
    writeFile(file, content);

    const CliRun refused = run({QStringLiteral("--json"), QStringLiteral("Is SKU-200 in stock?")});
    QCOMPARE(refused.exitCode, 2);
    QVERIFY(refused.out.isEmpty());
    const QString err = QString::fromLocal8Bit(refused.err).trimmed();
    QVERIFY2(!err.contains(QLatin1Char('\n')), qPrintable(err)); // one line
    QVERIFY2(err.contains(m_dir->filePath(file)) && err.contains(problem)
                 && err.contains(QLatin1String("restore it from a backup")),
             qPrintable(err));
    QFile kept(m_dir->filePath(file));
    QVERIFY(kept.open(QIODevice::ReadOnly));
    QCOMPARE(kept.readAll(), content); // not recreated
}

void tst_AgentCli::aDamagedDataFileIsCalledDamaged_data()
{
    QTest::addColumn<QString>("file");
    for (const char *name : {"ledger.sqlite", "turns.sqlite", "support-store.sqlite"})
        QTest::newRow(name) << QString::fromLatin1(name);
}

// A file whose pages are damaged still has a readable header: the console does not start on
// it, and says "damaged" with the file's name (not "no staff members", not an empty list of
// interrupted turns).
void tst_AgentCli::aDamagedDataFileIsCalledDamaged()
{
    QFETCH(QString, file);
    QVERIFY(leaveInterruptedTurn()); // every file has rows
    QCOMPARE(run({QStringLiteral("--json"), QStringLiteral("--resume")}).exitCode, 0);
    const QString path = m_dir->filePath(file);
    QVERIFY(!QFile::exists(path + QStringLiteral("-wal"))
            || QFileInfo(path + QStringLiteral("-wal")).size() == 0);
    QFile damaged(path);
    QVERIFY(damaged.open(QIODevice::ReadWrite));
    const qint64 size = damaged.size();
    QVERIFY2(size > 4096, qPrintable(QString::number(size)));
    QVERIFY(damaged.seek(4096)); // everything after the first page: the tables' pages
    QVERIFY(damaged.write(QByteArray(size - 4096, '\xA5')) == size - 4096);
    damaged.close();

    const CliRun refused = run({QStringLiteral("--json"), QStringLiteral("Is SKU-200 in stock?")});
    QCOMPARE(refused.exitCode, 2);
    QVERIFY(refused.out.isEmpty());
    const QString err = QString::fromLocal8Bit(refused.err).trimmed();
    QVERIFY2(err.contains(path) && err.contains(QLatin1String("damaged"))
                 && !err.contains(QLatin1String("no staff members")),
             qPrintable(err));
}

// The disk holding a data directory in use is full at start (a tmpfs of 8 MiB, filled): the
// console says so and that nothing was lost, never "damaged" with advice to move the ledger
// aside (which threw it away, issue #40 §6); the files are as they were, and once there is
// room again it starts on them.
void tst_AgentCli::aFullDiskIsCalledAFullDisk()
{
    if (::geteuid() != 0)
        QSKIP("mounting a small file system needs root (CI runs as root)");
    SmallDisk disk;
    QVERIFY2(disk.isMounted(), qPrintable(disk.error()));
    m_dir = std::make_unique<QTemporaryDir>(disk.filePath(QStringLiteral("data-XXXXXX")));
    QVERIFY(m_dir->isValid());
    QCOMPARE(run({QStringLiteral("Where is order A1001?")}).exitCode, 0);
    const QByteArray ledger = [this] {
        QFile file(m_dir->filePath(QStringLiteral("ledger.sqlite")));
        return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
    }();
    QVERIFY(!ledger.isEmpty());

    // Filled to the last byte.
    QVERIFY(disk.fill());

    const CliRun full = run({QStringLiteral("Where is order A1001?")});
    QCOMPARE(full.exitCode, 2);
    const QString err = QString::fromLocal8Bit(full.err).trimmed();
    QVERIFY2(err.contains(QLatin1String("is full")) && err.contains(m_dir->path())
                 && err.contains(QLatin1String("nothing was lost"))
                 && !err.contains(QLatin1String("damaged"))
                 && !err.contains(QLatin1String("move it aside")),
             qPrintable(err));
    QFile after(m_dir->filePath(QStringLiteral("ledger.sqlite")));
    QVERIFY(after.open(QIODevice::ReadOnly));
    QCOMPARE(after.readAll(), ledger);
    after.close();

    QVERIFY(disk.makeRoom());
    QCOMPARE(run({QStringLiteral("Where is order A1001?")}).exitCode, 0);
    m_dir.reset(); // before the file system it lives on goes
}

// The disk fills while agent-cli runs (stdin mode): the next question's plan cannot be saved,
// so nothing of it runs, and its answer says the disk is full, not that something broke.
void tst_AgentCli::aDiskThatFillsDuringATurnIsCalledFull()
{
    if (::geteuid() != 0)
        QSKIP("mounting a small file system needs root (CI runs as root)");
    SmallDisk disk;
    QVERIFY2(disk.isMounted(), qPrintable(disk.error()));
    m_dir = std::make_unique<QTemporaryDir>(disk.filePath(QStringLiteral("data-XXXXXX")));
    QVERIFY(m_dir->isValid());

    QProcess cli;
    cli.start(QStringLiteral(AGENT_CLI_PATH),
              {QStringLiteral("--data-dir"), m_dir->path(), QStringLiteral("--json")});
    QVERIFY(cli.waitForStarted(10'000));
    cli.write("Where is order A1001?\n");
    QByteArray out;
    QTRY_VERIFY_WITH_TIMEOUT((out += cli.readAllStandardOutput()).contains('\n'), 30'000);

    QVERIFY(disk.fill());

    cli.write("Where is order A1002?\n");
    cli.closeWriteChannel();
    QVERIFY(cli.waitForFinished(30'000));
    out += cli.readAllStandardOutput();
    const QList<QByteArray> lines = out.trimmed().split('\n');
    QCOMPARE(lines.size(), 2);
    const QJsonObject second = QJsonDocument::fromJson(lines.last()).object();
    const QString answer = second.value(QStringLiteral("answer")).toString();
    QVERIFY2(answer.contains(QLatin1String("is full")) && answer.contains(m_dir->path())
                 && answer.contains(QLatin1String("nothing was lost"))
                 && !answer.contains(QLatin1String("damaged")),
             qPrintable(answer));
    QVERIFY(second.value(QStringLiteral("toolCalls")).toArray().isEmpty()
            || second.value(QStringLiteral("toolCalls"))
                   .toArray()
                   .at(0)[QStringLiteral("attempts")]
                   .toArray()
                   .isEmpty()); // nothing ran
    QVERIFY(disk.makeRoom());
    m_dir.reset(); // before the file system it lives on goes
}

// The window ends (here by SIGTERM, as a logout or `kill` ends it; closing it takes the same
// way out of the event loop): its MCP server gets the specification's goodbye, its stdin
// closed, rather than being killed with the process (issue #40 §4).
void tst_AgentCli::theWindowEndsItsServersCleanly()
{
    const QString config = m_dir->filePath(QStringLiteral("mcp.json"));
    const QString effects = m_dir->filePath(QStringLiteral("effects.txt"));
    QFile file(config);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write(QStringLiteral(R"({"mcpServers": {
        "fake": {"command": "%1", "args": ["normal"], "env": {"FAKE_MCP_EFFECTS": "%2"}}}})")
                   .arg(QStringLiteral(FAKE_MCP_SERVER), effects)
                   .toUtf8());
    file.close();
    const QString data = m_dir->filePath(QStringLiteral("data"));
    QProcess window;
    QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
    environment.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen"));
    environment.insert(QStringLiteral("HOME"), m_dir->path());
    environment.insert(QStringLiteral("XDG_CONFIG_HOME"),
                       m_dir->filePath(QStringLiteral("config")));
    environment.remove(QStringLiteral("QT_LOGGING_RULES")); // ctest's would hide "ready"
    window.setProcessEnvironment(environment);
    window.start(QStringLiteral(AGENT_CONSOLE_PATH),
                 {QStringLiteral("--data-dir"), data, QStringLiteral("--mcp-config"), config});
    QVERIFY(window.waitForStarted(10'000));
    // Ready: the window's local log says so.
    QTRY_VERIFY_WITH_TIMEOUT(
        [&data] {
            QFile log(QDir(data).filePath(QStringLiteral("logs/agent-console.log")));
            return log.open(QIODevice::ReadOnly) && log.readAll().contains("server fake ready");
        }(),
        30'000);
    window.terminate(); // SIGTERM
    QVERIFY(window.waitForFinished(30'000));
    QCOMPARE(window.exitStatus(), QProcess::NormalExit);
    QCOMPARE(window.exitCode(), 0);
    QFile seen(effects);
    QVERIFY(seen.open(QIODevice::ReadOnly));
    QCOMPARE(seen.readAll(), QByteArray("stdin closed\n"));
}

void tst_AgentCli::pathsThatCannotBeUsedAreNamed_data()
{
    QTest::addColumn<QString>("directory"); // made a directory where a file belongs
    QTest::addColumn<QString>("file"); // made a file where a directory belongs
    QTest::addColumn<QString>("message");
    QTest::newRow("console.lock is a directory") << QStringLiteral("console.lock") << QString()
                                                 << QStringLiteral("console.lock is not a file");
    QTest::newRow("logs is a file") << QString() << QStringLiteral("logs")
                                    << QStringLiteral("cannot create the log directory");
}

// Not "another process is using the data directory" nor silence: the path that is in the way.
void tst_AgentCli::pathsThatCannotBeUsedAreNamed()
{
    QFETCH(QString, directory);
    QFETCH(QString, file);
    QFETCH(QString, message);
    if (!directory.isEmpty())
        QVERIFY(QDir(m_dir->path()).mkpath(directory));
    if (!file.isEmpty())
        writeFile(file, "not a directory");
    const CliRun refused = run({QStringLiteral("--json"), QStringLiteral("Is SKU-200 in stock?")});
    QCOMPARE(refused.exitCode, 2);
    const QString err = QString::fromLocal8Bit(refused.err).trimmed();
    QVERIFY2(err.contains(message)
                 && err.contains(m_dir->filePath(directory.isEmpty() ? file : directory)),
             qPrintable(err));
    QVERIFY(!err.contains(QLatin1String("another Agent Console process")));
}

void tst_AgentCli::staysEnglishOnAChineseSystem_data()
{
    QTest::addColumn<QStringList>("arguments");
    QTest::addColumn<QByteArray>("planContent");
    QTest::addColumn<QString>("message");
    QTest::newRow("plan not JSON")
        << QStringList{QStringLiteral("--faults"), QStringLiteral("@plan"), QStringLiteral("q")}
        << QByteArray("{\"tools\": {") << QStringLiteral("fault plan: not valid JSON at offset");
    QTest::newRow("plan key misspelt")
        << QStringList{QStringLiteral("--faults"), QStringLiteral("@plan"), QStringLiteral("q")}
        << QByteArray(R"({"tools":{"queryLogistics":{"latncyMs":5}}})")
        << QStringLiteral("fault plan: tools.queryLogistics.latncyMs: unknown key");
    QTest::newRow("ledger without a file")
        << QStringList{QStringLiteral("--ledger"), QStringLiteral("sqlite:"), QStringLiteral("q")}
        << QByteArray() << QStringLiteral("The ledger spec 'sqlite:' names no file.");
    QTest::newRow("unknown user") << QStringList{QStringLiteral("--user"), QStringLiteral("u-404"),
                                                 QStringLiteral("q")}
                                  << QByteArray()
                                  << QStringLiteral("unknown staff member 'u-404'");
}

// The window words core's problems in its language; agent-cli installs no translator, so on a
// Chinese system it still says them in English, as scripts and the log expect.
void tst_AgentCli::staysEnglishOnAChineseSystem()
{
    QFETCH(QStringList, arguments);
    QFETCH(QByteArray, planContent);
    QFETCH(QString, message);
    if (!planContent.isEmpty())
        arguments.replaceInStrings(QStringLiteral("@plan"),
                                   writeFile(QStringLiteral("plan.json"), planContent));
    QProcessEnvironment chinese = QProcessEnvironment::systemEnvironment();
    for (const char *variable : {"LANG", "LC_ALL", "LC_MESSAGES", "LANGUAGE"})
        chinese.insert(QLatin1String(variable), QStringLiteral("zh_CN.UTF-8"));
    const CliRun result = run(arguments, {}, chinese);
    QCOMPARE(result.exitCode, 2);
    const QString err = QString::fromUtf8(result.err).trimmed();
    QVERIFY2(err.contains(message), qPrintable(err));
    static const QRegularExpression cjk(QStringLiteral("[\\x{4e00}-\\x{9fff}]"));
    QVERIFY2(!err.contains(cjk), qPrintable(err));
}

// --audit (docs/AUDIT.md): the trail of writes newest first, as text and --json, filtered by
// order, staff member and day; the tenant's rows only; a declined write leaves none.
void tst_AgentCli::auditPrintsTheTrailOfWrites()
{
    const auto ask = [&](const QString &order, const QStringList &extra = {}) {
        return run(QStringList{QStringLiteral("--json")} + extra
                   + QStringList{QStringLiteral("Create an after-sales ticket for order %1: the "
                                                "mug arrived broken")
                                     .arg(order)});
    };
    QCOMPARE(ask(QStringLiteral("A1001"), {QStringLiteral("--yes")}).exitCode, 0);
    QCOMPARE(ask(QStringLiteral("A1002"), {QStringLiteral("--yes")}).exitCode, 0);
    QCOMPARE(ask(QStringLiteral("A1003")).exitCode, 0); // nobody to confirm: not run, no row

    const CliRun json = run({QStringLiteral("--audit"), QStringLiteral("--json")});
    QCOMPARE(json.exitCode, 0);
    const QJsonObject root = QJsonDocument::fromJson(json.out).object();
    QCOMPARE(root.value(u"more").toBool(true), false);
    const QJsonArray rows = root.value(u"audit").toArray();
    QCOMPARE(rows.size(), 4);
    const QJsonObject newest = rows.at(0).toObject();
    QCOMPARE(newest.value(u"event").toString(), QStringLiteral("OUTCOME"));
    QCOMPARE(newest.value(u"outcome").toString(), QStringLiteral("SUCCEEDED"));
    QCOMPARE(newest.value(u"objectId").toString(), QStringLiteral("T-000002"));
    QCOMPARE(newest.value(u"via").toString(), QStringLiteral("backend"));
    QCOMPARE(newest.value(u"staffId").toString(), QStringLiteral("u-1001"));
    QCOMPARE(newest.value(u"tenantId").toString(), QStringLiteral("t-acme"));
    QCOMPARE(newest.value(u"tool").toString(), QStringLiteral("createTicket"));
    QCOMPARE(newest.value(u"arguments").toObject().value(u"orderId").toString(),
             QStringLiteral("A1002"));
    QCOMPARE(newest.value(u"idempotencyKey"), newest.value(u"operationId"));
    const QJsonObject confirmed = rows.at(3).toObject();
    QCOMPARE(confirmed.value(u"event").toString(), QStringLiteral("CONFIRMED"));
    QVERIFY(!confirmed.contains(QLatin1String("outcome")));
    QVERIFY(confirmed.value(u"arguments").toObject().contains(QLatin1String("description")));
    // One object on one line, read by the default readers.
    QCOMPARE(json.out.count('\n'), 1);

    // As text: a line per row, newest first, what the write made in its tool's word.
    const CliRun text = run({QStringLiteral("--audit")});
    QCOMPARE(text.exitCode, 0);
    const QStringList lines = QString::fromUtf8(text.out).trimmed().split(QLatin1Char('\n'));
    QCOMPARE(lines.size(), 4);
    QVERIFY2(lines[0].contains(QLatin1String("\tOUTCOME\tu-1001\tcreateTicket\t"))
                 && lines[0].endsWith(QLatin1String("SUCCEEDED Ticket T-000002 (backend)")),
             qPrintable(lines[0]));
    QVERIFY2(lines[3].contains(QLatin1String("\tCONFIRMED\t"))
                 && lines[3].contains(QLatin1String("\"orderId\":\"A1001\"")),
             qPrintable(lines[3]));

    const auto count = [&](const QStringList &filters) {
        const CliRun filtered = run(
            QStringList{QStringLiteral("--audit"), QStringLiteral("--json")} + filters);
        if (filtered.exitCode != 0)
            return -1;
        return int(
            QJsonDocument::fromJson(filtered.out).object().value(u"audit").toArray().size());
    };
    QCOMPARE(count({QStringLiteral("--order"), QStringLiteral("A1001")}), 2);
    QCOMPARE(count({QStringLiteral("--order"), QStringLiteral("A1003")}), 0);
    QCOMPARE(count({QStringLiteral("--staff"), QStringLiteral("u-1001")}), 4);
    QCOMPARE(count({QStringLiteral("--staff"), QStringLiteral("u-1002")}), 0);
    const QString today = QDate::currentDate().toString(Qt::ISODate);
    QCOMPARE(count({QStringLiteral("--day"), today}), 4);
    QCOMPARE(count({QStringLiteral("--day"), QStringLiteral("2020-01-01")}), 0);
    QCOMPARE(count({QStringLiteral("--order"), QStringLiteral("A1002"), QStringLiteral("--day"),
                    today, QStringLiteral("--staff"), QStringLiteral("u-1001")}),
             2);
    // Another tenant's console reads none of them.
    QCOMPARE(count({QStringLiteral("--tenant"), QStringLiteral("t-globex")}), 0);
    const CliRun none = run(
        {QStringLiteral("--audit"), QStringLiteral("--order"), QStringLiteral("A9999")});
    QCOMPARE(none.exitCode, 0);
    QVERIFY(none.out.isEmpty());
    QVERIFY2(none.err.contains("no audit rows match"), none.err.constData());

    // An export carries its turns' rows when asked.
    const QString exportPath = m_dir->filePath(QStringLiteral("with-audit.json"));
    QCOMPARE(run({QStringLiteral("--yes"), QStringLiteral("--export"), exportPath,
                  QStringLiteral("--export-audit"),
                  QStringLiteral("Open a ticket for order A1003: wrong colour")})
                 .exitCode,
             0);
    QFile exported(exportPath);
    QVERIFY(exported.open(QIODevice::ReadOnly));
    const QJsonArray exportedRows = QJsonDocument::fromJson(exported.readAll())
                                        .object()
                                        .value(u"audit")
                                        .toObject()
                                        .value(u"rows")
                                        .toArray();
    QCOMPARE(exportedRows.size(), 2); // that turn's only
    for (const QJsonValue &row : exportedRows)
        QCOMPARE(row.toObject().value(u"arguments").toObject().value(u"orderId").toString(),
                 QStringLiteral("A1003"));
}

void tst_AgentCli::auditOptionsAreChecked_data()
{
    QTest::addColumn<QStringList>("arguments");
    QTest::addColumn<QString>("message");
    QTest::newRow("a filter without --audit")
        << QStringList{QStringLiteral("--order"), QStringLiteral("A1001"), QStringLiteral("q")}
        << QStringLiteral("--order goes with --audit");
    QTest::newRow("a day that is no day")
        << QStringList{QStringLiteral("--audit"), QStringLiteral("--day"),
                       QStringLiteral("07/12/2026")}
        << QStringLiteral("--day: use YYYY-MM-DD");
    QTest::newRow("a question with --audit")
        << QStringList{QStringLiteral("--audit"), QStringLiteral("Where is A1001?")}
        << QStringLiteral("--audit prints the trail and exits");
    QTest::newRow("--export-audit without --export")
        << QStringList{QStringLiteral("--export-audit"), QStringLiteral("q")}
        << QStringLiteral("--export-audit goes with --export");
}

void tst_AgentCli::auditOptionsAreChecked()
{
    QFETCH(QStringList, arguments);
    QFETCH(QString, message);
    const CliRun result = run(arguments);
    QCOMPARE(result.exitCode, 2);
    const QString err = QString::fromUtf8(result.err).trimmed();
    QVERIFY2(err.contains(message), qPrintable(err));
    QCOMPARE(err.count(QLatin1Char('\n')), 0);
    QVERIFY(result.out.isEmpty());
}

QProcessEnvironment tst_AgentCli::withTeamPolicy(const QByteArray &json)
{
    const QString directory = m_dir->filePath(QStringLiteral("xdg"));
    QDir().mkpath(directory + QStringLiteral("/AgentConsole"));
    QFile file(directory + QStringLiteral("/AgentConsole/policy.json"));
    if (!file.open(QIODevice::WriteOnly) || file.write(json) != json.size())
        qFatal("cannot write the team policy");
    QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
    environment.insert(QStringLiteral("XDG_CONFIG_DIRS"), directory);
    return environment;
}

namespace {

const QByteArray kLockingPolicy = R"({
    "version": "2026-12-01",
    "toolRetry": {"default": {"attemptTimeoutMs": 1500, "maxRetries": 1}},
    "locked": ["model/provider", "model/name", "ledger/spec", "tools/retryPolicies"]
})";

} // namespace

// docs/POLICY.md: the policy in force goes with every turn, in --json as in the journal.
void tst_AgentCli::aTeamPolicyIsKeptWithEachTurn()
{
    const QProcessEnvironment environment = withTeamPolicy(kLockingPolicy);
    const CliRun result = run({QStringLiteral("--json"), QStringLiteral("Where is order A1001?")},
                              {}, environment);
    QVERIFY2(result.exitCode == 0, result.err.constData());
    const QList<QJsonObject> turns = result.turns();
    QCOMPARE(turns.size(), 1);
    const QJsonObject policy = turns.first().value(QLatin1String("teamPolicy")).toObject();
    QCOMPARE(policy.value(QLatin1String("version")).toString(), QStringLiteral("2026-12-01"));
    QCOMPARE(policy.value(QLatin1String("origin")).toString(),
             m_dir->filePath(QStringLiteral("xdg/AgentConsole/policy.json")));
    // Without a policy: "none", said as plainly.
    const CliRun without = run(
        {QStringLiteral("--json"), QStringLiteral("Where is order A1001?")});
    QVERIFY2(without.exitCode == 0, without.err.constData());
    QCOMPARE(without.turns().first().value(QLatin1String("teamPolicy")).toString(),
             QStringLiteral("none"));
}

void tst_AgentCli::anOptionTheTeamPolicyLocksIsRefused_data()
{
    QTest::addColumn<QStringList>("arguments");
    QTest::addColumn<QString>("message");
    QTest::newRow("--model") << QStringList{QStringLiteral("--model"), QStringLiteral("mine")}
                             << QStringLiteral("--model is locked by your team's policy "
                                               "(version 2026-12-01)");
    QTest::newRow("--provider") << QStringList{QStringLiteral("--provider"),
                                               QStringLiteral("offline")}
                                << QStringLiteral("--provider is locked by your team's policy "
                                                  "(version 2026-12-01)");
    QTest::newRow("--ledger") << QStringList{QStringLiteral("--ledger"), QStringLiteral("sqlite")}
                              << QStringLiteral("--ledger is locked by your team's policy "
                                                "(version 2026-12-01)");
}

void tst_AgentCli::anOptionTheTeamPolicyLocksIsRefused()
{
    QFETCH(QStringList, arguments);
    QFETCH(QString, message);
    const CliRun result = run(arguments + QStringList{QStringLiteral("Where is order A1001?")}, {},
                              withTeamPolicy(kLockingPolicy));
    QCOMPARE(result.exitCode, 2);
    const QString err = QString::fromUtf8(result.err).trimmed();
    QVERIFY2(err.contains(message), qPrintable(err));
    QVERIFY(result.out.isEmpty());
    // An option the policy does not lock is taken.
    const CliRun unlocked = run({QStringLiteral("--stream"), QStringLiteral("off"),
                                 QStringLiteral("Where is order A1001?")},
                                {}, withTeamPolicy(kLockingPolicy));
    QVERIFY2(unlocked.exitCode == 0, unlocked.err.constData());
}

void tst_AgentCli::aTeamPolicyThatCannotBeUsedStopsTheStart()
{
    const CliRun result = run({QStringLiteral("Where is order A1001?")}, {},
                              withTeamPolicy(
                                  R"({"version": "7", "modelRetry": {"maxRetries": 50}})"));
    QCOMPARE(result.exitCode, 2);
    const QString err = QString::fromUtf8(result.err).trimmed();
    QVERIFY2(err.contains(
                 QStringLiteral("The team policy %1 cannot be used: modelRetry.maxRetries: "
                                "retries: from 0 to 10")
                     .arg(m_dir->filePath(QStringLiteral("xdg/AgentConsole/policy.json")))),
             qPrintable(err));
    QVERIFY(result.out.isEmpty());
}

// A server of mcp.json the policy does not allow is never started, and --list-tools says so.
void tst_AgentCli::aServerTheTeamPolicyDoesNotAllowIsListedRefused()
{
    const QString config = writeFile(
        QStringLiteral("mcp.json"),
        R"({"mcpServers": {"shell": {"command": "/nonexistent/mcp-shell"}}})");
    const CliRun result = run(
        {QStringLiteral("--mcp-config"), config, QStringLiteral("--list-tools"),
         QStringLiteral("--json")},
        {}, withTeamPolicy(R"({"version": "v2", "mcpServers": {"allowed": []}})"));
    QVERIFY2(result.exitCode == 0, result.err.constData());
    const QJsonObject listed = QJsonDocument::fromJson(result.out).object();
    const QJsonArray servers = listed.value(QLatin1String("mcpServers")).toArray();
    QCOMPARE(servers.size(), 1);
    const QJsonObject shell = servers.first().toObject();
    QCOMPARE(shell.value(QLatin1String("name")).toString(), QStringLiteral("shell"));
    QCOMPARE(shell.value(QLatin1String("state")).toString(), QStringLiteral("refused"));
    QCOMPARE(shell.value(QLatin1String("error")).toString(),
             QStringLiteral("The team's policy (version v2) does not allow the MCP server "
                            "\"shell\""));
}

QTEST_GUILESS_MAIN(tst_AgentCli)
#include "tst_agentcli.moc"
