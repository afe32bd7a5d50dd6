// An MCP write killed anywhere acts at most once (issue #40 §1). agent-cli runs a destructive
// MCP tool (no annotations) of the fake stdio server and is killed with SIGKILL at each point
// of the write: claimed, before send, sent (the server acted and has not answered), answered
// (the answer is in, the ledger not), recorded. Then the turn is carried on, by --resume or
// by asking the same request again (a replay), and --resume once more. The server counts
// what it did. Whatever the point: the write acted at most once; an answer that is not its
// success says "unknown" (or, for a replay racing the interrupted turn, "in progress"), never
// "try again"; and the ledger row ends settled, never PROCESSING or FAILED_RETRYABLE.
#include "clirun.h"
#include "fakeopenaiserver.h"

#include "core/ledger/idempotencyledger.h"
#include "core/ledger/ledgeropening.h"
#include "core/mcp/mcpsession.h"
#include "core/mcp/mcptool.h"
#include "core/telemetry/killpoint.h"

#include <QFile>
#include <QJsonArray>
#include <QProcess>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

using namespace AgentConsole;
using namespace AgentConsole::Testing;

namespace {

constexpr int kWaitMs = 30000;
const QByteArray kKey = "sk-test-kills-5d21";
const QString kConversation = QStringLiteral("c-kills");
const QString kRequest = QStringLiteral("r-kills");

} // namespace

class tst_McpWriteKills : public QObject
{
    Q_OBJECT

private slots:
    void init();
    void cleanup();
    void aWriteKilledAnywhereActsAtMostOnce_data();
    void aWriteKilledAnywhereActsAtMostOnce();
    void aResumedWriteWhoseServerIsGoneIsSettledUnknown();

private:
    QProcessEnvironment environment() const;
    QStringList commonArguments() const;
    CliRun run(const QStringList &arguments);
    // The turn asks for the write, then answers: what the fake model says for one run.
    void scriptTurn(const QString &title);
    int effects() const;
    std::optional<LedgerRow> ledgerRow(const QString &operationId) const;

    std::unique_ptr<QTemporaryDir> m_dir;
    std::unique_ptr<FakeOpenAiServer> m_model;
    QString m_config;
};

void tst_McpWriteKills::init()
{
    m_dir = std::make_unique<QTemporaryDir>();
    m_model = std::make_unique<FakeOpenAiServer>();
    QVERIFY(m_model->listen());
    m_config = m_dir->filePath(QStringLiteral("mcp.json"));
    QFile file(m_config);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write(QStringLiteral("{\"mcpServers\": {\"fake\": {\"command\": \"%1\", "
                              "\"env\": {\"FAKE_MCP_EFFECTS\": \"%2\"}, "
                              "\"idleTimeoutMs\": 1000, \"hardMaximumMs\": 1000}}}")
                   .arg(QStringLiteral(FAKE_MCP_SERVER),
                        m_dir->filePath(QStringLiteral("effects.txt")))
                   .toUtf8());
}

void tst_McpWriteKills::cleanup()
{
    m_model.reset();
    m_dir.reset();
}

QProcessEnvironment tst_McpWriteKills::environment() const
{
    QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
    environment.insert(QStringLiteral("AGENT_CONSOLE_API_KEY"), QString::fromLatin1(kKey));
    environment.insert(QStringLiteral("HOME"), m_dir->path());
    environment.remove(QStringLiteral("AGENT_CONSOLE_KILL_AT"));
    return environment;
}

QStringList tst_McpWriteKills::commonArguments() const
{
    return {QStringLiteral("--data-dir"), m_dir->filePath(QStringLiteral("data")),
            QStringLiteral("--provider"), QStringLiteral("openai"),
            QStringLiteral("--base-url"), m_model->baseUrl().toString(),
            QStringLiteral("--model"), QStringLiteral("fake-model"),
            QStringLiteral("--fallback"), QStringLiteral("none"),
            QStringLiteral("--mcp-config"), m_config, QStringLiteral("--yes"),
            QStringLiteral("--json")};
}

CliRun tst_McpWriteKills::run(const QStringList &arguments)
{
    QProcess process;
    process.setProcessEnvironment(environment());
    QSignalSpy finished(&process, &QProcess::finished);
    process.start(QStringLiteral(AGENT_CLI_PATH), commonArguments() + arguments);
    process.closeWriteChannel();
    if (!finished.wait(90'000)) {
        process.kill();
        finished.wait(10'000);
        return {};
    }
    return {process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -1,
            process.readAllStandardOutput(), process.readAllStandardError()};
}

void tst_McpWriteKills::scriptTurn(const QString &title)
{
    const QString tool = Mcp::McpTool::exposedName(QStringLiteral("fake"),
                                                   QStringLiteral("write_thing"));
    m_model->enqueue(FakeResponse::streamedToolCall(
        tool, QStringLiteral("{\"title\": \"%1\"}").arg(title)));
    m_model->enqueue(FakeResponse::streamedAnswer(QStringLiteral("Done.")));
}

int tst_McpWriteKills::effects() const
{
    QFile file(m_dir->filePath(QStringLiteral("effects.txt")));
    return file.open(QIODevice::ReadOnly) ? int(file.readAll().count("write ")) : 0;
}

std::optional<LedgerRow> tst_McpWriteKills::ledgerRow(const QString &operationId) const
{
    const std::unique_ptr<IdempotencyLedger> ledger
        = openLedger(QString(), m_dir->filePath(QStringLiteral("data"))).ledger;
    QFuture<LedgerOpenResult> opened = ledger->open();
    opened.waitForFinished(); // the ledger's own thread; nothing else runs in this test
    if (!opened.result().ready())
        return std::nullopt;
    QFuture<LedgerLookup> found = ledger->lookup(operationId);
    found.waitForFinished();
    return found.result().row;
}

void tst_McpWriteKills::aWriteKilledAnywhereActsAtMostOnce_data()
{
    QTest::addColumn<QString>("point");
    QTest::addColumn<QString>("title");   // "hang": the server acts and never answers
    QTest::addColumn<bool>("replay");     // carried on by asking again, not by --resume
    QTest::addColumn<int>("acted");       // what the server did before the kill
    QTest::addColumn<QString>("settled"); // the ledger row in the end

    struct Point
    {
        const char *name;
        const char *title;
        int acted;
        const char *settled;
    };
    // Killed before anything reached the server, the write may still have: the claim alone
    // cannot tell, and MCP cannot be asked. Once its success is recorded, it is that success.
    const Point points[] = {
        {KillPoints::WriteClaimed, "x", 0, "OUTCOME_UNKNOWN"},
        {KillPoints::WriteBeforeSend, "x", 0, "OUTCOME_UNKNOWN"},
        {"sent", "hang", 1, "OUTCOME_UNKNOWN"},
        {KillPoints::WriteAnswered, "x", 1, "OUTCOME_UNKNOWN"},
        {KillPoints::WriteRecorded, "x", 1, "SUCCEEDED"},
    };
    for (const Point &point : points) {
        for (const bool replay : {false, true}) {
            QTest::addRow("%s, %s", point.name, replay ? "replayed" : "resumed")
                << QString::fromLatin1(point.name) << QString::fromLatin1(point.title) << replay
                << point.acted << QString::fromLatin1(point.settled);
        }
    }
}

void tst_McpWriteKills::aWriteKilledAnywhereActsAtMostOnce()
{
    QFETCH(QString, point);
    QFETCH(QString, title);
    QFETCH(bool, replay);
    QFETCH(int, acted);
    QFETCH(QString, settled);
    const QStringList question{QStringLiteral("--conversation"), kConversation,
                               QStringLiteral("--request-id"), kRequest,
                               QStringLiteral("Write it, please.")};

    // 1. The first run, killed at its point ("sent": once the server has acted).
    scriptTurn(title);
    QProcess first;
    QProcessEnvironment killed = environment();
    if (point != QLatin1String("sent"))
        killed.insert(QStringLiteral("AGENT_CONSOLE_KILL_AT"), point);
    first.setProcessEnvironment(killed);
    first.start(QStringLiteral(AGENT_CLI_PATH), commonArguments() + question);
    first.closeWriteChannel();
    QByteArray said;
    QTRY_VERIFY_WITH_TIMEOUT(point == QLatin1String("sent")
                                 ? effects() == 1
                                 : (said += first.readAllStandardError()).contains("kill point"),
                             kWaitMs);
    first.kill();
    QVERIFY(first.waitForFinished(kWaitMs));
    QCOMPARE(effects(), acted);

    // 2. Carried on: a replay of the same request, or --resume; then --resume once more, so
    //    that whatever the replay left to resume is resumed too.
    QList<CliRun> runs;
    if (replay) {
        scriptTurn(title);
        runs.append(run(question));
    }
    scriptTurn(title); // only asked if the resumed turn still needs its model
    runs.append(run({QStringLiteral("--resume")}));
    runs.append(run({QStringLiteral("--resume")}));

    QString operationId;
    for (const CliRun &after : std::as_const(runs)) {
        QVERIFY2(after.exitCode == 0, after.err.constData());
        for (const QJsonObject &turn : after.turns()) {
            for (const QJsonValue &call : turn.value(QStringLiteral("toolCalls")).toArray()) {
                operationId = call[QStringLiteral("operationId")].toString();
                const QString code = call[QStringLiteral("code")].toString();
                // Success (answered from the ledger), unknown, or in progress while the
                // interrupted turn holds the claim: never an invitation to try again.
                QVERIFY2(code == QLatin1String("OK")
                             || code == QLatin1String("EXECUTION_STATUS_UNKNOWN")
                             || code == QLatin1String("OPERATION_IN_PROGRESS"),
                         qPrintable(code));
                if (code == QLatin1String("OK"))
                    QCOMPARE(effects(), 1); // told done only when it was
            }
        }
    }
    QCOMPARE(effects(), acted); // nothing was sent after the kill
    QVERIFY(!operationId.isEmpty()); // the interrupted turn was carried on and told
    const std::optional<LedgerRow> row = ledgerRow(operationId);
    QVERIFY(row);
    QCOMPARE(LedgerState::name(row->status), settled);
}

// Killed with the write claimed; its server does not come back for the resume (its command
// is gone). The write may have reached it, and nothing can ask: the resumed turn tells
// "unknown" and settles the row so, rather than UNKNOWN_TOOL with the row claimed for ever.
void tst_McpWriteKills::aResumedWriteWhoseServerIsGoneIsSettledUnknown()
{
    scriptTurn(QStringLiteral("x"));
    QProcess first;
    QProcessEnvironment killed = environment();
    killed.insert(QStringLiteral("AGENT_CONSOLE_KILL_AT"),
                  QString::fromLatin1(KillPoints::WriteClaimed));
    first.setProcessEnvironment(killed);
    first.start(QStringLiteral(AGENT_CLI_PATH),
                commonArguments() + QStringList{QStringLiteral("--conversation"), kConversation,
                                                QStringLiteral("--request-id"), kRequest,
                                                QStringLiteral("Write it, please.")});
    first.closeWriteChannel();
    QByteArray said;
    QTRY_VERIFY_WITH_TIMEOUT((said += first.readAllStandardError()).contains("kill point"),
                             kWaitMs);
    first.kill();
    QVERIFY(first.waitForFinished(kWaitMs));

    QFile file(m_config);
    QVERIFY(file.open(QIODevice::WriteOnly | QIODevice::Truncate));
    file.write(QStringLiteral("{\"mcpServers\": {\"fake\": {\"command\": \"%1\"}}}")
                   .arg(m_dir->filePath(QStringLiteral("no-such-server")))
                   .toUtf8());
    file.close();
    scriptTurn(QStringLiteral("x")); // only asked if the resumed turn still needs its model
    const CliRun resumed = run({QStringLiteral("--resume")});
    QVERIFY2(resumed.exitCode == 0, resumed.err.constData());
    const QJsonArray calls = resumed.turn().value(QStringLiteral("toolCalls")).toArray();
    QCOMPARE(calls.size(), 1);
    QCOMPARE(calls[0][QStringLiteral("code")].toString(),
             QStringLiteral("EXECUTION_STATUS_UNKNOWN"));
    QCOMPARE(effects(), 0);
    const std::optional<LedgerRow> row
        = ledgerRow(calls[0][QStringLiteral("operationId")].toString());
    QVERIFY(row);
    QCOMPARE(row->status, LedgerStatus::OutcomeUnknown);
}

QTEST_GUILESS_MAIN(tst_McpWriteKills)
#include "tst_mcpwritekills.moc"
