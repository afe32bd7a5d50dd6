#include "core/mcp/mcpsession.h"
#include "core/oauth/signinerror.h"
#include "core/mcp/mcptool.h"
#include "core/mcp/mcptoolinfo.h"
#include "core/mcp/stdiotransport.h"
#include "core/resilience/resultcode.h"
#include "core/resilience/toolexecutor.h"

#include <QFutureWatcher>
#include <QJsonArray>
#include <QSignalSpy>
#include <QTest>

using namespace AgentConsole;
using namespace AgentConsole::Mcp;

namespace {

constexpr int kWaitMs = 15000;
const QString kServer = QStringLiteral("fake");

} // namespace

// The adapter under the real executor: annotations deciding retries, validation before any
// attempt, failures classified, results summarised, cancellation reaching the server.
class tst_McpTool : public QObject
{
    Q_OBJECT

private slots:
    void init();
    void cleanup();
    void policiesFromAnnotations();
    void exposedNames();
    void readToolAnswersWithASummary();
    void invalidArgumentsAreNeverSent_data();
    void invalidArgumentsAreNeverSent();
    void readToolIsRetriedOnATransientError();
    void writeIsNeverRetried();
    void isErrorIsClassifiedNotRetried();
    void resultsAreSummarisedWithABound();
    void oversizedResultIsRejected();
    void crashedServerIsUnavailable();
    void executorTimeoutSendsCancelled();
    void progressOutlivesTheIdleTimeout();
    void unsupportedSchemasAreRefused_data();
    void unsupportedSchemasAreRefused();
    void goneSessionIsUnavailable();
    void typedResultsAreCheckedAgainstTheOutputSchema();
    void onlyASignInFaultCountsAgainstTheBreaker_data();
    void onlyASignInFaultCountsAgainstTheBreaker();
    void hungCallsHoldNoPoolThread();

private:
    std::shared_ptr<McpTool> tool(const QString &name, McpTool::Settings settings = {});
    ToolCallOutcome run(const std::shared_ptr<McpTool> &tool, const QJsonObject &arguments,
                        std::optional<RetryPolicy> policy = {});
    QJsonObject stats();

    std::unique_ptr<Session> m_session;
    std::shared_ptr<SessionHandle> m_handle;
    QList<ToolInfo> m_tools;
    std::unique_ptr<ToolExecutor> m_executor;
    RetryPolicy m_fast; // the base of every call's policy (McpTool::retryPolicy)
};

void tst_McpTool::init()
{
    StdioTransport::Options transport;
    transport.serverName = kServer;
    transport.program = QStringLiteral(FAKE_MCP_SERVER);
    transport.arguments = {QStringLiteral("normal")};
    transport.terminateAfterMs = 300;
    m_session = std::make_unique<Session>(std::make_unique<StdioTransport>(transport),
                                          Session::Options{});
    QSignalSpy ready(m_session.get(), &Session::ready);
    m_session->start();
    QVERIFY(ready.wait(kWaitMs));
    ToolLister lister(m_session.get());
    QSignalSpy listed(&lister, &ToolLister::finished);
    lister.list();
    QVERIFY(listed.wait(kWaitMs));
    m_tools = listed.first().first().value<QList<ToolInfo>>();
    QVERIFY(!m_tools.isEmpty());
    m_handle = std::make_shared<SessionHandle>(m_session.get());
    ToolExecutor::Options options;
    options.workerThreads = 4;
    m_fast = RetryPolicy::defaults();
    m_fast.initialDelay = std::chrono::milliseconds(20);
    m_executor = std::make_unique<ToolExecutor>(options);
}

void tst_McpTool::cleanup()
{
    m_executor.reset();
    m_session.reset();
    m_handle.reset();
}

std::shared_ptr<McpTool> tst_McpTool::tool(const QString &name, McpTool::Settings settings)
{
    for (const ToolInfo &info : std::as_const(m_tools)) {
        if (info.name == name) {
            QString problem;
            auto made = McpTool::create(m_handle, kServer, info, settings, &problem);
            if (!made)
                qWarning() << problem;
            return made;
        }
    }
    return nullptr;
}

ToolCallOutcome tst_McpTool::run(const std::shared_ptr<McpTool> &tool,
                                 const QJsonObject &arguments, std::optional<RetryPolicy> policy)
{
    ToolCallRequest request;
    request.tool = tool;
    request.arguments = arguments;
    request.context = {QStringLiteral("staff-1"), QStringLiteral("tenant-1"),
                       QStringLiteral("conv"), QStringLiteral("req"), Language::English};
    request.policy = policy ? *policy : tool->retryPolicy(m_fast);
    if (tool->descriptor().hasSideEffects)
        request.idempotencyKey = QStringLiteral("tenant-1:conv:req:%1:0").arg(tool->name());
    QFutureWatcher<ToolCallOutcome> watcher;
    QSignalSpy finished(&watcher, &QFutureWatcher<ToolCallOutcome>::finished);
    watcher.setFuture(m_executor->execute(std::move(request)));
    if (!finished.wait(kWaitMs))
        return {};
    return watcher.result();
}

QJsonObject tst_McpTool::stats()
{
    const ToolCallOutcome outcome = run(tool(QStringLiteral("stats")), {});
    return outcome.result.data.toObject().value(QStringLiteral("structuredContent")).toObject();
}

void tst_McpTool::policiesFromAnnotations()
{
    const auto echo = tool(QStringLiteral("echo"));
    QCOMPARE(echo->policy(), ToolPolicy::Read);
    QVERIFY(!echo->descriptor().hasSideEffects);
    QCOMPARE(echo->descriptor().service, QStringLiteral("mcp:fake"));
    QCOMPARE(echo->retryPolicy(RetryPolicy::defaults()).maxRetries, 2);

    const auto write = tool(QStringLiteral("write_thing"));
    QCOMPARE(write->policy(), ToolPolicy::Write);
    QVERIFY(write->descriptor().hasSideEffects);
    QVERIFY(write->descriptor().requiresConfirmation);
    QCOMPARE(write->retryPolicy(RetryPolicy::defaults()).maxRetries, 0);
    QVERIFY(!write->descriptor().labels.confirmTitle.isEmpty());

    const auto idempotent = tool(QStringLiteral("idempotent_thing"));
    QCOMPARE(idempotent->policy(), ToolPolicy::IdempotentWrite);
    QVERIFY(idempotent->descriptor().hasSideEffects); // claimed in the ledger
    QVERIFY(!idempotent->descriptor().requiresConfirmation);
    QCOMPARE(idempotent->retryPolicy(RetryPolicy::defaults()).maxRetries, 2);
    // One breaker for the whole server.
    QCOMPARE(idempotent->descriptor().service, echo->descriptor().service);
    // The deadline is never the hints' to switch off: the hard maximum bounds every attempt.
    QCOMPARE(echo->retryPolicy(RetryPolicy::defaults()).attemptTimeout.count(), 16000);
}

void tst_McpTool::exposedNames()
{
    QCOMPARE(McpTool::exposedName(QStringLiteral("files"), QStringLiteral("read.file")),
             QStringLiteral("files__read_file"));
    const QString longName = McpTool::exposedName(QString(40, QLatin1Char('s')),
                                                  QString(40, QLatin1Char('t')));
    QCOMPARE(longName.size(), 64);
    QVERIFY(longName != McpTool::exposedName(QString(40, QLatin1Char('s')),
                                             QString(41, QLatin1Char('t'))));
    QCOMPARE(McpTool::exposedName(QStringLiteral("客服"), QStringLiteral("x")),
             QStringLiteral("____x"));
}

void tst_McpTool::readToolAnswersWithASummary()
{
    const ToolCallOutcome outcome = run(tool(QStringLiteral("echo")),
                                        {{QStringLiteral("text"), QStringLiteral("hello")}});
    QVERIFY2(outcome.result.success, qPrintable(outcome.result.codeName()));
    QCOMPARE(outcome.result.code, ResultCode::Ok);
    QCOMPARE(outcome.result.data[QStringLiteral("text")].toString(), QStringLiteral("hello"));
    QCOMPARE(outcome.attempts.size(), 1);
}

void tst_McpTool::invalidArgumentsAreNeverSent_data()
{
    QTest::addColumn<QJsonObject>("arguments");
    QTest::newRow("missing") << QJsonObject{};
    QTest::newRow("wrong type") << QJsonObject{{"text", 5}};
    QTest::newRow("too long") << QJsonObject{{"text", QString(101, QLatin1Char('a'))}};
}

void tst_McpTool::invalidArgumentsAreNeverSent()
{
    QFETCH(QJsonObject, arguments);
    const ToolCallOutcome outcome = run(tool(QStringLiteral("echo")), arguments);
    QCOMPARE(outcome.result.code, ResultCode::InvalidArgument);
    QVERIFY(outcome.attempts.isEmpty());
}

void tst_McpTool::readToolIsRetriedOnATransientError()
{
    // The fake fails odd calls with -32603: the first attempt fails, the retry answers.
    const ToolCallOutcome outcome = run(tool(QStringLiteral("flaky")), {});
    QVERIFY2(outcome.result.success, qPrintable(outcome.result.codeName()));
    QCOMPARE(outcome.attempts.size(), 2);
    QCOMPARE(outcome.attempts.first().outcome, AttemptOutcome::TransientFailure);
}

void tst_McpTool::writeIsNeverRetried()
{
    McpTool::Settings settings;
    settings.idleTimeoutMs = 200;
    settings.hardMaximumMs = 1000;
    const ToolCallOutcome outcome = run(tool(QStringLiteral("write_thing"), settings),
                                        {{QStringLiteral("title"), QStringLiteral("hang")}});
    // The loop's write guard turns this into EXECUTION_STATUS_UNKNOWN (settleWriteResult).
    QCOMPARE(outcome.result.code, ResultCode::ToolTimeout);
    QCOMPARE(outcome.attempts.size(), 1);
    QCOMPARE(outcome.attempts.first().outcome, AttemptOutcome::TimedOut);
    QCOMPARE(stats().value(QStringLiteral("cancelled")).toArray().size(), 1);
}

void tst_McpTool::isErrorIsClassifiedNotRetried()
{
    const ToolCallOutcome outcome = run(tool(QStringLiteral("is_error")), {});
    QCOMPARE(outcome.result.code, ResultCode::ToolRejected);
    QCOMPARE(outcome.attempts.size(), 1);
    QVERIFY(outcome.result.data[QStringLiteral("text")].toString().contains(
        QStringLiteral("disk quota")));
}

void tst_McpTool::resultsAreSummarisedWithABound()
{
    const ToolCallOutcome outcome = run(tool(QStringLiteral("structured")), {});
    QVERIFY(outcome.result.success);
    const QJsonObject data = outcome.result.data.toObject();
    QVERIFY(data.value(QStringLiteral("text")).toString().size() <= 8000 + 10);
    QCOMPARE(data.value(QStringLiteral("truncated")).toBool(), true);
    QCOMPARE(data[QStringLiteral("structuredContent")][QStringLiteral("unit")].toString(),
             QStringLiteral("C"));
    const QJsonArray blocks = data.value(QStringLiteral("content")).toArray();
    QCOMPARE(blocks.size(), 2);
    QCOMPARE(blocks[0][QStringLiteral("uri")].toString(), QStringLiteral("file:///tmp/report.txt"));
    QCOMPARE(blocks[1][QStringLiteral("omitted")].toBool(), true);
}

void tst_McpTool::oversizedResultIsRejected()
{
    const ToolCallOutcome outcome = run(tool(QStringLiteral("oversized")), {});
    QCOMPARE(outcome.result.code, ResultCode::ToolRejected);
    QCOMPARE(outcome.attempts.size(), 1);
}

void tst_McpTool::crashedServerIsUnavailable()
{
    const ToolCallOutcome outcome = run(tool(QStringLiteral("crash")), {});
    QCOMPARE(outcome.result.code, ResultCode::ToolUnavailable);
    QCOMPARE(outcome.attempts.size(), 3); // transient, so retried: the dead session refuses fast
}

void tst_McpTool::executorTimeoutSendsCancelled()
{
    RetryPolicy policy = RetryPolicy::defaults();
    policy.attemptTimeout = std::chrono::milliseconds(300);
    policy.maxRetries = 0;
    const ToolCallOutcome outcome = run(tool(QStringLiteral("hang")), {}, policy);
    QCOMPARE(outcome.result.code, ResultCode::ToolTimeout);
    QTRY_COMPARE_WITH_TIMEOUT(stats().value(QStringLiteral("cancelled")).toArray().size(), 1,
                              kWaitMs);
}

void tst_McpTool::progressOutlivesTheIdleTimeout()
{
    McpTool::Settings settings;
    settings.idleTimeoutMs = 600; // eight steps of 100 ms: 900 ms, never 600 ms without progress
    settings.hardMaximumMs = 5000;
    const ToolCallOutcome outcome = run(tool(QStringLiteral("slow_progress"), settings),
                                        {{QStringLiteral("steps"), 8},
                                         {QStringLiteral("intervalMs"), 100}});
    QVERIFY2(outcome.result.success, qPrintable(outcome.result.codeName()));
    QCOMPARE(outcome.attempts.size(), 1);
    QVERIFY(outcome.attempts.first().durationMs > 600);
}

void tst_McpTool::unsupportedSchemasAreRefused_data()
{
    QTest::addColumn<QJsonObject>("schema");
    QTest::addColumn<bool>("usable");
    const auto object = [](const QJsonObject &extra) {
        QJsonObject schema{{"type", "object"}};
        for (auto it = extra.begin(); it != extra.end(); ++it)
            schema.insert(it.key(), it.value());
        return schema;
    };
    QTest::newRow("plain") << object({{"properties", QJsonObject{{"a", QJsonObject{{"type", "string"}}}}}}) << true;
    QTest::newRow("local ref") << object({{"properties", QJsonObject{{"a", QJsonObject{{"$ref", "#/$defs/x"}}}}},
                                          {"$defs", QJsonObject{{"x", QJsonObject{{"type", "string"}}}}}}) << true;
    QTest::newRow("prefixItems") << object({{"properties", QJsonObject{{"a", QJsonObject{{"type", "array"}, {"prefixItems", QJsonArray{}}}}}}}) << false;
    QTest::newRow("unevaluatedProperties") << object({{"unevaluatedProperties", false}}) << false;
    QTest::newRow("dependentRequired") << object({{"dependentRequired", QJsonObject{}}}) << false;
    QTest::newRow("remote ref") << object({{"properties", QJsonObject{{"a", QJsonObject{{"$ref", "https://example.com/s.json"}}}}}}) << false;
    // valijson 1.0 checks nothing under propertyNames (argumentschema.cpp says why).
    QTest::newRow("propertyNames") << object({{"propertyNames", QJsonObject{{"maxLength", 3}}}}) << false;
    // Bounds the validator would crash or freeze on (issue #40 §2; tst_argumentschema has
    // each bound): refused with the reason, the server's other tools still offered.
    QTest::newRow("$ref cycle") << object({{"$ref", "#"}}) << false;
    QTest::newRow("backreference") << object({{"properties", QJsonObject{{"a", QJsonObject{{"pattern", "(a)\\1"}}}}}}) << false;
    QTest::newRow("linear pattern") << object({{"properties", QJsonObject{{"a", QJsonObject{{"pattern", "^(a+)+$"}}}}}}) << true;
}

void tst_McpTool::unsupportedSchemasAreRefused()
{
    QFETCH(QJsonObject, schema);
    QFETCH(bool, usable);
    ToolInfo info;
    info.name = QStringLiteral("t");
    info.inputSchema = schema;
    QString problem;
    const auto made = McpTool::create(m_handle, kServer, info, {}, &problem);
    QCOMPARE(bool(made), usable);
    QCOMPARE(problem.isEmpty(), usable);
}

void tst_McpTool::goneSessionIsUnavailable()
{
    const auto echo = tool(QStringLiteral("echo"));
    m_session.reset();
    const ToolCallOutcome outcome = run(echo, {{QStringLiteral("text"), QStringLiteral("x")}});
    QCOMPARE(outcome.result.code, ResultCode::ToolUnavailable);
}

// A tool that declares an outputSchema (MCP's typed results): structuredContent of that shape
// is data for the model; any other answer is TOOL_REJECTED, never retried, and nothing of it
// reaches the model. A schema the validator cannot enforce refuses the tool.
void tst_McpTool::typedResultsAreCheckedAgainstTheOutputSchema()
{
    const auto typed = [this](const QString &name, const QJsonObject &outputSchema) {
        ToolInfo info;
        for (const ToolInfo &listed : std::as_const(m_tools)) {
            if (listed.name == name)
                info = listed;
        }
        info.outputSchema = outputSchema;
        QString problem;
        auto made = McpTool::create(m_handle, kServer, info, {}, &problem);
        if (!made)
            qWarning() << problem;
        return made;
    };
    const auto temperatureOf = [](const char *type) {
        return QJsonObject{{"type", "object"},
                           {"properties", QJsonObject{{"temperature", QJsonObject{{"type", type}}},
                                                      {"unit", QJsonObject{{"type", "string"}}}}},
                           {"required", QJsonArray{"temperature"}}};
    };
    // "structured" answers {"temperature": 21.5, "unit": "C"}.
    const ToolCallOutcome fits = run(typed(QStringLiteral("structured"), temperatureOf("number")), {});
    QVERIFY2(fits.result.success, qPrintable(fits.result.codeName()));
    QCOMPARE(fits.result.data[QStringLiteral("structuredContent")][QStringLiteral("temperature")]
                 .toDouble(), 21.5);

    const ToolCallOutcome wrongType =
        run(typed(QStringLiteral("structured"), temperatureOf("string")), {});
    QCOMPARE(wrongType.result.code, ResultCode::ToolRejected);
    QCOMPARE(wrongType.attempts.size(), 1);
    QVERIFY(wrongType.result.data.isUndefined() || wrongType.result.data.isNull());
    QVERIFY2(wrongType.result.errors.join(u' ').contains(QStringLiteral("shape it declares")),
             qPrintable(wrongType.result.errors.join(u' ')));

    // "echo" answers text only: a typed tool must give structuredContent.
    const ToolCallOutcome untyped = run(typed(QStringLiteral("echo"), temperatureOf("number")),
                                        {{QStringLiteral("text"), QStringLiteral("hi")}});
    QCOMPARE(untyped.result.code, ResultCode::ToolRejected);
    QVERIFY(untyped.result.data.isUndefined() || untyped.result.data.isNull());

    QJsonObject unenforceable = temperatureOf("number");
    unenforceable.insert("unevaluatedProperties", false);
    QVERIFY(!typed(QStringLiteral("structured"), unenforceable));
}

void tst_McpTool::onlyASignInFaultCountsAgainstTheBreaker_data()
{
    QTest::addColumn<int>("signIn");
    QTest::addColumn<FailureKind>("kind");
    using OAuth::SignInFailure;
    QTest::newRow("not signed in") << int(SignInFailure::NotSignedIn) << FailureKind::AccessDenied;
    QTest::newRow("cancelled") << int(SignInFailure::Cancelled) << FailureKind::AccessDenied;
    QTest::newRow("refused") << int(SignInFailure::Refused) << FailureKind::AccessDenied;
    QTest::newRow("too many") << int(SignInFailure::TooManyAttempts) << FailureKind::AccessDenied;
    // The authorization server's side is broken: a fault, which the breaker counts.
    QTest::newRow("unreachable") << int(SignInFailure::Unreachable) << FailureKind::Transient;
    QTest::newRow("malformed") << int(SignInFailure::Malformed) << FailureKind::Transient;
}

// Whatever the reason, a call refused for want of a sign-in ends SIGN_IN_REQUIRED; only an
// authorization server that did not answer (or answered nonsense) is a fault of the server's
// side (FailureKind::Transient is what the executor tells the breaker as a failure).
void tst_McpTool::onlyASignInFaultCountsAgainstTheBreaker()
{
    QFETCH(int, signIn);
    QFETCH(FailureKind, kind);
    Reply reply;
    reply.error = Error::of(Failure::AuthRequired, QStringLiteral("detail"), signIn);
    const AttemptResult result = attemptResultFor(reply, ToolPolicy::Read, Language::English);
    QCOMPARE(result.failure, kind);
    QCOMPARE(result.code, std::optional<ResultCode::Code>(ResultCode::Code::SignInRequired));
}

namespace {

// A built-in lookup as the executor runs it: a body on a pool thread that answers at once.
class QuickLookup final : public ToolOperation
{
public:
    QString name() const override { return QStringLiteral("quickLookup"); }
    std::optional<ToolResult> precheck(const QJsonObject &, const TrustedContext &) const override
    {
        return std::nullopt;
    }
    AttemptResult attempt(const QJsonObject &, const TrustedContext &,
                          const AttemptContext &) const override
    {
        return AttemptResult::completed(ToolResult::ok(QStringLiteral("found"), QJsonObject{}));
    }
};

} // namespace

// Eight MCP calls that the server never answers, beside three built-in lookups, on an
// executor of two pool threads whose bulkhead would let all eight run at once: the calls hold
// no thread while they wait (issue #40 §3), so every lookup answers at its first attempt
// while all eight are still waiting (before, two of them held both threads and the lookups
// timed out, 3 x 2 s).
void tst_McpTool::hungCallsHoldNoPoolThread()
{
    ToolExecutor::Options options;
    options.workerThreads = 2;
    options.bulkheadPerTool = 8;
    ToolExecutor executor(options);
    McpTool::Settings settings;
    settings.idleTimeoutMs = 60000;
    settings.hardMaximumMs = 60000;
    const std::shared_ptr<McpTool> hang = tool(QStringLiteral("hang"), settings);
    QVERIFY(hang);
    const TrustedContext context{QStringLiteral("staff-1"), QStringLiteral("tenant-1"),
                                 QStringLiteral("conv"), QStringLiteral("req"),
                                 Language::English};
    QList<QFuture<ToolCallOutcome>> hung;
    for (int i = 0; i < 8; ++i) {
        ToolCallRequest request;
        request.tool = hang;
        request.context = context;
        request.policy = hang->retryPolicy(RetryPolicy::defaults());
        hung.append(executor.execute(std::move(request)));
    }
    QTRY_COMPARE_WITH_TIMEOUT(executor.activeCalls(), 8, kWaitMs);
    const auto lookup = std::make_shared<QuickLookup>();
    for (int i = 0; i < 3; ++i) {
        ToolCallRequest request;
        request.tool = lookup;
        request.context = context;
        RetryPolicy policy = RetryPolicy::defaults();
        policy.maxRetries = 0; // one attempt: it answers, or the test fails
        request.policy = policy;
        QFutureWatcher<ToolCallOutcome> watcher;
        QSignalSpy finished(&watcher, &QFutureWatcher<ToolCallOutcome>::finished);
        watcher.setFuture(executor.execute(std::move(request)));
        QVERIFY(finished.wait(kWaitMs));
        QCOMPARE(watcher.result().result.code, ResultCode::Ok);
        QCOMPARE(watcher.result().attempts.size(), 1);
        QCOMPARE(watcher.result().attempts.first().outcome, AttemptOutcome::Succeeded);
    }
    for (const QFuture<ToolCallOutcome> &call : std::as_const(hung))
        QVERIFY(!call.isFinished());
    QCOMPARE(executor.activeCalls(), 8);
    QCOMPARE(executor.abandonedBodies(), 0);
    QCOMPARE(executor.threadLimit(), 2); // no thread added to make up for them
    executor.cancelAll();
}

QTEST_GUILESS_MAIN(tst_McpTool)
#include "tst_mcptool.moc"
