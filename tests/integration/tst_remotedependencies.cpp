// agent-cli end to end against real parts on loopback: the OpenAI-compatible provider talking
// to a fake OpenAI server (the one stand-in: a remote LLM cannot run here), and the HTTP tool
// backend talking to support-sim.
#include "clirun.h"
#include "fakeopenaiserver.h"
#include "supportsimprocess.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

using namespace AgentConsole::Testing;

namespace {

const QString kQuestion = QStringLiteral("Where is order A1001 and is SKU-200 in stock?");
const QByteArray kKey = "sk-test-4f1c2e9a7b";

// The model asks for both lookups in one streamed reply, the arguments split across chunks.
FakeResponse plannedToolCalls()
{
    return FakeResponse::events({
        {Sse::role()},
        {Sse::toolCall(0, QStringLiteral("call_a"), QStringLiteral("queryLogistics"),
                       QStringLiteral("{\"orderId\":"))},
        {Sse::toolArguments(0, QStringLiteral("\"A1001\"}"))},
        {Sse::toolCall(1, QStringLiteral("call_b"), QStringLiteral("queryInventory"),
                       QStringLiteral("{\"sku\":\"SKU-200\"}"))},
        {Sse::finish(QStringLiteral("tool_calls"))},
        {Sse::done()},
    });
}

FakeResponse streamedAnswer(const QStringList &pieces)
{
    QList<FakeChunk> chunks{{Sse::role()}};
    for (const QString &piece : pieces)
        chunks.append({Sse::content(piece)});
    chunks.append({Sse::keepAlive()});
    chunks.append({Sse::finish(QStringLiteral("stop"))});
    chunks.append({Sse::done()});
    return FakeResponse::events(chunks);
}

} // namespace

class tst_RemoteDependencies : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void init();
    void cleanup();

    void openAiProviderAnswersThroughTheTools();
    void aProviderThatIsDownFallsBackToTheOfflineModel();
    void insufficientQuotaIsNotRetried();
    void withoutFallbackAFailingProviderFailsTheTurn();
    void aSecondaryProviderAnswersBeforeTheOfflineModel();
    void supportSimServesTheTools();
    void supportSimFaultsGivePartialSuccess();
    void aTicketCommittedButUnansweredIsCreatedOnce();

private:
    CliRun runCli(const QStringList &arguments);
    QUrl startSupportSim(const QByteArray &faults = {});

    std::unique_ptr<QTemporaryDir> m_dir;
    std::unique_ptr<FakeOpenAiServer> m_model;
    std::unique_ptr<SupportSimProcess> m_sim;
};

void tst_RemoteDependencies::init()
{
    m_dir = std::make_unique<QTemporaryDir>();
    QVERIFY(m_dir->isValid());
    m_model = std::make_unique<FakeOpenAiServer>();
    QVERIFY(m_model->listen());
}

void tst_RemoteDependencies::cleanup()
{
    m_sim.reset(); // stops it
    m_model.reset();
    m_dir.reset();
}

// The fake server lives in this process, so the CLI is waited for with the event loop
// running, never with a blocking wait.
CliRun tst_RemoteDependencies::runCli(const QStringList &arguments)
{
    QProcess process;
    QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
    environment.insert(QStringLiteral("AGENT_CONSOLE_API_KEY"), QString::fromLatin1(kKey));
    process.setProcessEnvironment(environment);
    QSignalSpy finished(&process, &QProcess::finished);
    const QStringList cliArguments =
        QStringList{QStringLiteral("--data-dir"), m_dir->path(), QStringLiteral("--json")}
        + arguments;
    process.start(QStringLiteral(AGENT_CLI_PATH), cliArguments);
    process.closeWriteChannel();
    if (!finished.wait(60'000)) {
        process.kill();
        process.waitForFinished(5'000);
        qFatal("agent-cli did not finish");
    }
    CliRun run{process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -1,
               process.readAllStandardOutput(), process.readAllStandardError()};
    if (run.exitCode != 0)
        qInfo().noquote() << "agent-cli exited with" << run.exitCode << "stderr:" << run.err;
    return run;
}

QUrl tst_RemoteDependencies::startSupportSim(const QByteArray &faults)
{
    m_sim = std::make_unique<SupportSimProcess>();
    QStringList arguments;
    if (!faults.isEmpty()) {
        QFile file(m_dir->filePath(QStringLiteral("sim-faults.json")));
        if (!file.open(QIODevice::WriteOnly))
            qFatal("cannot write the sim's faults");
        file.write(faults);
        arguments << QStringLiteral("--faults") << file.fileName();
    }
    QString error;
    if (!m_sim->start(arguments, &error))
        qFatal("support-sim did not start: %s", qPrintable(error));
    return m_sim->baseUrl();
}

void tst_RemoteDependencies::openAiProviderAnswersThroughTheTools()
{
    m_model->enqueue(plannedToolCalls());
    m_model->enqueue(streamedAnswer({QStringLiteral("Order A1001 is at Shanghai Pudong Hub. "),
                                     QStringLiteral("SKU-200 is low on stock (3 left).")}));
    const CliRun run = runCli({QStringLiteral("--provider"), QStringLiteral("openai"),
                               QStringLiteral("--base-url"), m_model->baseUrl().toString(),
                               QStringLiteral("--model"), QStringLiteral("fake-model"),
                               kQuestion});
    QCOMPARE(run.exitCode, 0);
    const QJsonObject turn = run.turn();
    QCOMPARE(turn.value(QLatin1String("model")).toString(), QStringLiteral("fake-model"));
    QCOMPARE(turn.value(QLatin1String("answer")).toString(),
        QStringLiteral(
            "Order A1001 is at Shanghai Pudong Hub. SKU-200 is low on stock (3 left)."));
    const QJsonArray calls = turn.value(QLatin1String("toolCalls")).toArray();
    QCOMPARE(calls.size(), 2);
    QCOMPARE(calls[0].toObject().value(QLatin1String("toolCallId")).toString(),
             QStringLiteral("call_a"));
    QCOMPARE(calls[0].toObject().value(QLatin1String("code")).toString(), QStringLiteral("OK"));
    QCOMPARE(calls[1].toObject().value(QLatin1String("toolCallId")).toString(),
             QStringLiteral("call_b"));
    // The operation is named by the app; the model's id is only a trace field.
    QVERIFY(calls[0].toObject().value(QLatin1String("operationId")).toString()
                .endsWith(QLatin1String(":queryLogistics:0")));
    QCOMPARE(turn.value(QLatin1String("attemptsByLayer")).toObject()
                 .value(QLatin1String("model")).toInt(), 2);

    // What went over the wire: the key as a bearer token, the tools, then the real results.
    QCOMPARE(m_model->requestCount(), 2);
    QCOMPARE(m_model->requests()[0].headers.value("authorization"), "Bearer " + kKey);
    // the four lookups (listOrderTickets among them) and createTicket
    QCOMPARE(m_model->requests()[0].json.value(QLatin1String("tools")).toArray().size(), 5);
    const QJsonArray messages = m_model->requests()[1].json.value(QLatin1String("messages"))
                                    .toArray();
    QStringList answered;
    for (const QJsonValue &message : messages) {
        if (message.toObject().value(QLatin1String("role")).toString() == QLatin1String("tool")) {
            answered << message.toObject().value(QLatin1String("tool_call_id")).toString();
            QVERIFY(message.toObject().value(QLatin1String("content")).toString()
                        .contains(QLatin1String("\"success\":true")));
        }
    }
    QCOMPARE(answered, (QStringList{QStringLiteral("call_a"), QStringLiteral("call_b")}));

    // The key never reaches the output or the local log.
    QFile log(QDir(m_dir->path()).filePath(QStringLiteral("logs/agent-console.log")));
    QVERIFY(log.open(QIODevice::ReadOnly));
    QVERIFY(!log.readAll().contains(kKey));
    QVERIFY(!run.out.contains(kKey));
    QVERIFY(!run.err.contains(kKey));
}

void tst_RemoteDependencies::aProviderThatIsDownFallsBackToTheOfflineModel()
{
    // Three attempts in the tool round; the answer round does not ask the provider again
    // (one retry series per provider per turn). Six are queued, so a second series would show.
    for (int i = 0; i < 6; ++i)
        m_model->enqueue(FakeResponse::error(503, QStringLiteral("server_overloaded"),
                                             QStringLiteral("internal detail 10.1.2.3")));
    const CliRun run = runCli({QStringLiteral("--provider"), QStringLiteral("openai"),
                               QStringLiteral("--base-url"), m_model->baseUrl().toString(),
                               QStringLiteral("--model"), QStringLiteral("fake-model"),
                               kQuestion});
    QCOMPARE(run.exitCode, 0);
    const QJsonObject turn = run.turn();
    QCOMPARE(turn.value(QLatin1String("status")).toString(), QStringLiteral("completed"));
    QCOMPARE(turn.value(QLatin1String("model")).toString(), QStringLiteral("offline-demo"));
    QVERIFY(turn.value(QLatin1String("answer")).toString().contains(QLatin1String("Shanghai")));
    const QJsonObject counters = turn.value(QLatin1String("counters")).toObject();
    QCOMPARE(counters.value(QLatin1String("fallback_model_count")).toInt(), 2);
    QCOMPARE(m_model->requestCount(), 3);
    QVERIFY(!run.out.contains("10.1.2.3"));
}

void tst_RemoteDependencies::insufficientQuotaIsNotRetried()
{
    m_model->enqueue(FakeResponse::error(429, QStringLiteral("insufficient_quota"),
                                         QStringLiteral("You exceeded your current quota")));
    const CliRun run = runCli({QStringLiteral("--provider"), QStringLiteral("openai"),
                               QStringLiteral("--base-url"), m_model->baseUrl().toString(),
                               QStringLiteral("--model"), QStringLiteral("fake-model"),
                               kQuestion});
    QCOMPARE(run.exitCode, 0);
    // No retry, straight to the next model; and the exhausted provider is out of the chain
    // for the rest of the turn: the answer round does not ask it again.
    QCOMPARE(m_model->requestCount(), 1);
    QCOMPARE(run.turn().value(QLatin1String("counters")).toObject()
                 .value(QLatin1String("model_retry_count")).toInt(), 0);
    QCOMPARE(run.turn().value(QLatin1String("model")).toString(), QStringLiteral("offline-demo"));
}

void tst_RemoteDependencies::withoutFallbackAFailingProviderFailsTheTurn()
{
    m_model->enqueue(FakeResponse::error(401, QStringLiteral("invalid_api_key"),
                                         QStringLiteral("Incorrect API key provided: sk-te***")));
    const CliRun run = runCli({QStringLiteral("--provider"), QStringLiteral("openai"),
                               QStringLiteral("--base-url"), m_model->baseUrl().toString(),
                               QStringLiteral("--model"), QStringLiteral("fake-model"),
                               QStringLiteral("--fallback"), QStringLiteral("none"), kQuestion});
    QCOMPARE(run.exitCode, 3);
    QCOMPARE(m_model->requestCount(), 1);
    const QJsonObject turn = run.turn();
    QCOMPARE(turn.value(QLatin1String("status")).toString(), QStringLiteral("failed"));
    QVERIFY(!turn.value(QLatin1String("answer")).toString().contains(QLatin1String("sk-te")));
}

void tst_RemoteDependencies::aSecondaryProviderAnswersBeforeTheOfflineModel()
{
    FakeOpenAiServer secondary;
    QVERIFY(secondary.listen());
    m_model->enqueue(FakeResponse::error(429, QStringLiteral("insufficient_quota"),
                                         QStringLiteral("quota")));
    secondary.enqueue(plannedToolCalls());
    secondary.enqueue(streamedAnswer({QStringLiteral("Answered by the second provider.")}));
    const CliRun run = runCli({QStringLiteral("--provider"), QStringLiteral("openai"),
                               QStringLiteral("--base-url"), m_model->baseUrl().toString(),
                               QStringLiteral("--model"), QStringLiteral("primary-model"),
                               QStringLiteral("--secondary-base-url"),
                               secondary.baseUrl().toString(), QStringLiteral("--secondary-model"),
                               QStringLiteral("secondary-model"), QStringLiteral("--header"),
                               QStringLiteral("X-Org: support-team"), kQuestion});
    QCOMPARE(run.exitCode, 0);
    const QJsonObject turn = run.turn();
    QCOMPARE(turn.value(QLatin1String("model")).toString(), QStringLiteral("secondary-model"));
    QCOMPARE(turn.value(QLatin1String("answer")).toString(),
             QStringLiteral("Answered by the second provider."));
    QCOMPARE(turn.value(QLatin1String("counters")).toObject()
                 .value(QLatin1String("fallback_model_count")).toInt(), 2);
    QCOMPARE(m_model->requestCount(), 1); // out of quota: not asked again in the turn
    QCOMPARE(secondary.requestCount(), 2);
    QCOMPARE(m_model->requests()[0].headers.value("x-org"), QByteArray("support-team"));
    QCOMPARE(secondary.requests()[0].headers.value("x-org"), QByteArray("support-team"));
}

void tst_RemoteDependencies::supportSimServesTheTools()
{
    const QUrl sim = startSupportSim();
    const CliRun run = runCli({QStringLiteral("--backend"), QStringLiteral("http"),
                               QStringLiteral("--backend-url"), sim.toString(), kQuestion});
    QCOMPARE(run.exitCode, 0);
    const QJsonObject turn = run.turn();
    const QJsonArray calls = turn.value(QLatin1String("toolCalls")).toArray();
    QCOMPARE(calls.size(), 2);
    for (const QJsonValue &call : calls)
        QCOMPARE(call.toObject().value(QLatin1String("code")).toString(), QStringLiteral("OK"));
    QVERIFY(turn.value(QLatin1String("answer")).toString().contains(QLatin1String("SF10010001")));
}

void tst_RemoteDependencies::supportSimFaultsGivePartialSuccess()
{
    const QUrl sim = startSupportSim(R"({"routes": {"logistics": {"status": 503}}})");
    const CliRun run = runCli({QStringLiteral("--backend"), QStringLiteral("http"),
                               QStringLiteral("--backend-url"), sim.toString(), kQuestion});
    QCOMPARE(run.exitCode, 0);
    const QJsonObject turn = run.turn();
    QVERIFY(turn.value(QLatin1String("partialSuccess")).toBool());
    const QJsonArray calls = turn.value(QLatin1String("toolCalls")).toArray();
    const QJsonObject logistics = calls[0].toObject();
    QCOMPARE(
        logistics.value(QLatin1String("code")).toString(), QStringLiteral("TOOL_UNAVAILABLE"));
    QCOMPARE(logistics.value(QLatin1String("attempts")).toArray().size(), 3);
    QCOMPARE(calls[1].toObject().value(QLatin1String("code")).toString(), QStringLiteral("OK"));
    const QString everything = QString::fromUtf8(run.out);
    QVERIFY(!everything.contains(sim.host() + QLatin1Char(':') + QString::number(sim.port())));
}

void tst_RemoteDependencies::aTicketCommittedButUnansweredIsCreatedOnce()
{
    // The backend commits the ticket, then drops the connection before answering.
    const QUrl sim = startSupportSim(R"({"routes": {"tickets": {"commitThenDrop": true}}})");
    const CliRun run = runCli({QStringLiteral("--backend"), QStringLiteral("http"),
                               QStringLiteral("--backend-url"), sim.toString(),
                               QStringLiteral("--yes"),
                               QStringLiteral("为订单 A1001 创建售后工单：商品破损")});
    QCOMPARE(run.exitCode, 0);
    const QJsonObject turn = run.turn();
    const QJsonObject call = turn.value(QLatin1String("toolCalls")).toArray()[0].toObject();
    QCOMPARE(call.value(QLatin1String("code")).toString(), QStringLiteral("OK"));
    QCOMPARE(call.value(QLatin1String("attempts")).toArray().size(), 1);
    QCOMPARE(turn.value(QLatin1String("counters")).toObject()
                 .value(QLatin1String("unknown_execution_status_count")).toInt(), 0);

    // Exactly one ticket for the key at the backend.
    const QJsonObject stats = m_sim->stats();
    QCOMPARE(stats.value(QLatin1String("ticketsCreated")).toInt(), 1);
    QCOMPARE(stats.value(QLatin1String("duplicateTickets")).toInt(), 0);
}

QTEST_GUILESS_MAIN(tst_RemoteDependencies)
#include "tst_remotedependencies.moc"
