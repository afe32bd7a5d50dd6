#include "agentdoubles.h"

#include "core/turn/agentloop.h"
#include "core/turn/turnresult.h"
#include "core/mcp/mcpsession.h"
#include "core/mcp/mcptool.h"
#include "core/mcp/mcptoolinfo.h"
#include "core/mcp/stdiotransport.h"
#include "core/resilience/resultcode.h"
#include "core/resilience/toolexecutor.h"

#include <QElapsedTimer>
#include <QJsonArray>
#include <QJsonObject>
#include <QFile>
#include <QProcessEnvironment>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include <functional>

using namespace AgentConsole;
using namespace AgentConsole::Mcp;
using namespace AgentConsole::Testing;

namespace {

constexpr int kWaitMs = 15000;

ChatResponse answer()
{
    ChatResponse response;
    response.content = QStringLiteral("done");
    return response;
}

} // namespace

// MCP tools through the agent loop, as the console runs them: the annotations decide whether
// staff confirm, whether the ledger holds the call, and what a timeout means.
class tst_McpAgentLoop : public QObject
{
    Q_OBJECT

private slots:
    void init();
    void cleanup();
    void readToolRunsUnconfirmed();
    void writeAsksFirstAndATimeoutIsUnknown();
    void declinedWriteIsNeverSent();
    void idempotentWriteRunsUnconfirmedUnderTheLedger();
    void serversQuestionShowsOnItsCallsCard();
    void unansweredQuestionIsWithdrawnWithTheAttempt();
    void aQuestionKnowsWhenTheTurnEndsIt();
    void defaultsFitInsideTheTurn();
    void aHungReadStillGetsAPartialAnswer();
    void everyStoppedAttemptIsCancelledOnTheServer_data();
    void everyStoppedAttemptIsCancelledOnTheServer();
    void aWriteThatMayHaveRunIsNeverSentAgain_data();
    void aWriteThatMayHaveRunIsNeverSentAgain();

private:
    TurnResult ask(const QString &tool, const QString &arguments, bool confirm = true,
                   int *confirmations = nullptr,
                   const std::function<void(AgentLoop *)> &wire = {},
                   const QString &requestId = {});
    // A session with the fake server (its effects written to effectsPath()) and its tools.
    void startServer();
    QString effectsPath() const { return m_dir->filePath(QStringLiteral("effects.txt")); }
    QStringList effects() const;
    // Idle timeout and hard maximum: short, for the tests that wait them out.
    void addAskTool(int idleTimeoutMs = 300, int hardMaximumMs = 1000);
    std::shared_ptr<McpTool> find(const QString &name) const;
    // The request ids the fake server received notifications/cancelled for, so far.
    QJsonArray cancelledOnTheServer();
    // The "hang" tool (a read the fake never answers) and "echo", with `settings`.
    void remakeTools(McpTool::Settings settings);

    std::unique_ptr<QTemporaryDir> m_dir;
    std::unique_ptr<Session> m_session;
    std::shared_ptr<SessionHandle> m_handle;
    ToolRegistry m_registry;
    QList<std::shared_ptr<McpTool>> m_tools;
};

void tst_McpAgentLoop::init()
{
    m_dir = std::make_unique<QTemporaryDir>();
    startServer();
}

QStringList tst_McpAgentLoop::effects() const
{
    QFile file(effectsPath());
    if (!file.open(QIODevice::ReadOnly))
        return {};
    // The writes the server made ("write <title>"), leaving out what else it saw.
    QStringList titles;
    for (const QString &line : QString::fromUtf8(file.readAll()).split(QLatin1Char('\n'))) {
        if (line.startsWith(QLatin1String("write ")))
            titles.append(line.mid(6));
    }
    return titles;
}

void tst_McpAgentLoop::startServer()
{
    m_registry.clear();
    m_tools.clear();
    m_handle.reset();
    m_session.reset();
    StdioTransport::Options transport;
    transport.serverName = QStringLiteral("fake");
    transport.program = QStringLiteral(FAKE_MCP_SERVER);
    transport.arguments = {QStringLiteral("normal")};
    QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
    environment.insert(QStringLiteral("FAKE_MCP_EFFECTS"), effectsPath());
    transport.environment = environment;
    Session::Options sessionOptions;
    sessionOptions.elicitation = true; // only the "ask" tool asks anything
    m_session = std::make_unique<Session>(std::make_unique<StdioTransport>(transport),
                                          sessionOptions);
    QSignalSpy ready(m_session.get(), &Session::ready);
    m_session->start();
    QVERIFY(ready.wait(kWaitMs));
    ToolLister lister(m_session.get());
    QSignalSpy listed(&lister, &ToolLister::finished);
    lister.list();
    QVERIFY(listed.wait(kWaitMs));
    auto handle = std::make_shared<SessionHandle>(m_session.get());
    m_handle = handle;
    McpTool::Settings settings;
    settings.idleTimeoutMs = 300;
    settings.hardMaximumMs = 1000;
    m_registry.clear();
    m_tools.clear();
    for (const ToolInfo &info : listed.first().first().value<QList<ToolInfo>>()) {
        QString problem;
        if (auto tool = McpTool::create(handle, QStringLiteral("fake"), info, settings, &problem)) {
            m_tools.append(tool);
            m_registry.add(tool);
        }
    }
}

void tst_McpAgentLoop::cleanup()
{
    m_registry.clear();
    m_tools.clear();
    m_handle.reset();
    m_session.reset();
    m_dir.reset();
}

std::shared_ptr<McpTool> tst_McpAgentLoop::find(const QString &name) const
{
    for (const auto &tool : m_tools) {
        if (tool->info().name == name)
            return tool;
    }
    return nullptr;
}

TurnResult tst_McpAgentLoop::ask(const QString &tool, const QString &arguments, bool confirm,
                                 int *confirmations,
                                 const std::function<void(AgentLoop *)> &wire,
                                 const QString &requestId)
{
    ToolExecutor executor;
    ScriptedModel model;
    model.script = {toolCalls({{QStringLiteral("c1"), McpTool::exposedName(QStringLiteral("fake"), tool),
                                arguments}}),
                    answer()};
    const std::unique_ptr<IdempotencyLedger> ledger = openTestLedger(m_dir->path());
    AgentLoop loop({.model = &model,
                    .tools = &m_registry,
                    .executor = &executor,
                    .ledger = ledger.get(),
                    .toolPolicies = [this](const QString &name) {
                        const auto made = m_registry.find(name);
                        const auto *mcp = dynamic_cast<const McpTool *>(made.get());
                        RetryPolicy base = RetryPolicy::defaults();
                        base.initialDelay = std::chrono::milliseconds(10);
                        return mcp ? mcp->retryPolicy(base) : RetryPolicy::defaults();
                    }});
    loop.setSession({QStringLiteral("u-1"), QStringLiteral("t-1"), QStringLiteral("c-1")});
    int asked = 0;
    connect(&loop, &AgentLoop::confirmationRequested, this,
            [&](const QString &, const ToolCallRecord &write) {
                ++asked;
                loop.confirm(write.operationId, confirm);
            });
    if (wire)
        wire(&loop);
    QSignalSpy finished(&loop, &AgentLoop::turnFinished);
    if (loop.ask(QStringLiteral("use the tool"), requestId).isEmpty())
        return {};
    if (!finished.wait(kWaitMs))
        return {};
    if (confirmations)
        *confirmations = asked;
    return finished.first().first().value<TurnResult>();
}

void tst_McpAgentLoop::readToolRunsUnconfirmed()
{
    int confirmations = -1;
    const TurnResult turn = ask(QStringLiteral("echo"), QStringLiteral("{\"text\":\"hi\"}"), true,
                                &confirmations);
    QCOMPARE(turn.toolCalls.size(), 1);
    QCOMPARE(turn.toolCalls[0].result.code, ResultCode::Ok);
    QCOMPARE(confirmations, 0);
}

void tst_McpAgentLoop::writeAsksFirstAndATimeoutIsUnknown()
{
    int confirmations = -1;
    const TurnResult turn = ask(QStringLiteral("write_thing"),
                                QStringLiteral("{\"title\":\"hang\"}"), true, &confirmations);
    QCOMPARE(confirmations, 1);
    QCOMPARE(turn.toolCalls.size(), 1);
    const ToolCallRecord &call = turn.toolCalls[0];
    // Silent past its idle timeout: it may have been done, so it is not reported as failed,
    // and it is not tried again.
    QCOMPARE(call.result.code, ResultCode::ExecutionStatusUnknown);
    QCOMPARE(call.attempts.size(), 1);
    QCOMPARE(turn.unknownExecutionStatus, 1);
}

void tst_McpAgentLoop::declinedWriteIsNeverSent()
{
    const TurnResult turn = ask(QStringLiteral("write_thing"), QStringLiteral("{\"title\":\"x\"}"),
                                false);
    QCOMPARE(turn.toolCalls[0].result.code, ResultCode::ConfirmationDeclined);
    QVERIFY(turn.toolCalls[0].attempts.isEmpty());
}

void tst_McpAgentLoop::idempotentWriteRunsUnconfirmedUnderTheLedger()
{
    int confirmations = -1;
    const TurnResult turn = ask(QStringLiteral("idempotent_thing"), QStringLiteral("{}"), true,
                                &confirmations);
    QCOMPARE(confirmations, 0);
    QCOMPARE(turn.toolCalls[0].result.code, ResultCode::Ok);
    // Claimed and recorded under the operation's key like any write.
    const std::unique_ptr<IdempotencyLedger> ledger = openTestLedger(m_dir->path());
    QFuture<LedgerLookup> row = ledger->lookup(turn.toolCalls[0].operationId);
    row.waitForFinished(); // the ledger's own thread; this test thread waits for nothing else
    QCOMPARE(row.result().outcome, LedgerLookup::Outcome::Found);
    QCOMPARE(row.result().row->status, LedgerStatus::Succeeded);
}

// The fake server lists "ask" only in its "elicit" mode: this suite's server is "normal".
void tst_McpAgentLoop::addAskTool(int idleTimeoutMs, int hardMaximumMs)
{
    ToolInfo info;
    info.name = QStringLiteral("ask");
    info.inputSchema = {{"type", "object"}, {"properties", QJsonObject{}}};
    info.annotations.readOnly = true;
    McpTool::Settings settings;
    settings.idleTimeoutMs = idleTimeoutMs;
    settings.hardMaximumMs = hardMaximumMs;
    QString problem;
    auto tool = McpTool::create(m_handle, QStringLiteral("fake"), info, settings, &problem);
    QVERIFY2(tool, qPrintable(problem));
    m_tools.append(tool);
    m_registry.add(tool);
}

void tst_McpAgentLoop::serversQuestionShowsOnItsCallsCard()
{
    addAskTool();
    QString tag;
    QList<ToolCallRecord::Question> shown;
    const TurnResult turn = ask(QStringLiteral("ask"), QStringLiteral("{}"), true, nullptr,
                                [&](AgentLoop *loop) {
        // What the runtime does (AgentRuntime::askStaff): the call's card shows the wait,
        // then how staff answered.
        connect(loop, &AgentLoop::toolCallUpdated, this,
                [&](const QString &, const ToolCallRecord &call) {
            if (shown.isEmpty() || shown.last() != call.question)
                shown.append(call.question);
        });
        connect(m_session.get(), &Session::elicitationRequested, loop,
                [&, loop](PendingElicitation *question) {
            tag = question->relatedTag();
            QCOMPARE(loop->setToolCallQuestion(tag, QStringLiteral("fake"),
                                               ToolCallRecord::Question::Waiting),
                     QStringLiteral("ask"));
            question->answer(ElicitationAction::Decline);
            loop->setToolCallQuestion(tag, {}, ToolCallRecord::Question::Declined);
        });
    });
    QCOMPARE(turn.toolCalls.size(), 1);
    const ToolCallRecord &call = turn.toolCalls[0];
    // The question came tagged with the call's operation id, through executor and tool.
    QCOMPARE(tag, call.operationId);
    QCOMPARE(call.result.code, ResultCode::Ok);
    QCOMPARE(call.question, ToolCallRecord::Question::Declined);
    QCOMPARE(call.questionFrom, QStringLiteral("fake"));
    QVERIFY2(shown.contains(ToolCallRecord::Question::Waiting), "the wait was never shown");
}

void tst_McpAgentLoop::unansweredQuestionIsWithdrawnWithTheAttempt()
{
    addAskTool();
    int questions = 0;
    const TurnResult turn = ask(QStringLiteral("ask"), QStringLiteral("{}"), true, nullptr,
                                [&](AgentLoop *loop) {
        connect(m_session.get(), &Session::elicitationRequested, loop,
                [&, loop](PendingElicitation *question) {
            ++questions;
            loop->setToolCallQuestion(question->relatedTag(), QStringLiteral("fake"),
                                      ToolCallRecord::Question::Waiting);
        });
    });
    const ToolCallRecord &call = turn.toolCalls[0];
    // Nobody answered: each attempt's hard maximum (1 s; its 300 ms idle clock stands still
    // while a question is open) ended its wait; nothing extended it. The card keeps what
    // happened.
    QCOMPARE(call.result.code, ResultCode::ToolTimeout);
    QCOMPARE(questions, call.attempts.size());
    QCOMPARE(call.question, ToolCallRecord::Question::Withdrawn);
}

// What staff are told (McpServers::askStaff passes it on): a question is withdrawn at its
// call's hard maximum or at the turn's deadline, whichever comes first. The turn's deadline
// comes with the call (its budget, the attempt, the request), so the session asking the
// question knows it; nobody asks the loop.
void tst_McpAgentLoop::aQuestionKnowsWhenTheTurnEndsIt()
{
    // An idle timeout far beyond a loaded machine's delay in asking, a 3 s hard maximum.
    addAskTool(1500, 3000);
    qint64 answerByLeftMs = -1;
    const TurnResult turn = ask(QStringLiteral("ask"), QStringLiteral("{}"), true, nullptr,
                                [&](AgentLoop *loop) {
        AgentLoop::TurnLimits limits = loop->turnLimits();
        limits.deadline = std::chrono::milliseconds(2000); // before the call's 3 s maximum
        loop->setTurnLimits(limits);
        connect(m_session.get(), &Session::elicitationRequested, loop,
                [&](PendingElicitation *question) {
            answerByLeftMs = question->question().answerBy.remainingTime();
        });
    });
    // The turn's deadline is what staff must be shown, not the call's hard maximum.
    QVERIFY2(answerByLeftMs > 0 && answerByLeftMs <= 2000,
             qPrintable(QString::number(answerByLeftMs)));
    QCOMPARE(turn.toolCalls.size(), 1);
    QVERIFY(!turn.toolCalls[0].result.success); // ended by the turn's deadline, unanswered
}

QJsonArray tst_McpAgentLoop::cancelledOnTheServer()
{
    // Over the same stdio session: the server reads it after every notification sent before.
    const TurnResult turn = ask(QStringLiteral("stats"), QStringLiteral("{}"));
    if (turn.toolCalls.size() != 1)
        return {};
    return turn.toolCalls[0].result.data.toObject().value(u"structuredContent").toObject()
        .value(u"cancelled").toArray();
}

void tst_McpAgentLoop::remakeTools(McpTool::Settings settings)
{
    QList<std::shared_ptr<McpTool>> remade;
    m_registry.clear();
    for (const auto &tool : std::as_const(m_tools)) {
        QString problem;
        auto again = McpTool::create(m_handle, QStringLiteral("fake"), tool->info(), settings,
                                     &problem);
        QVERIFY2(again, qPrintable(problem));
        remade.append(again);
        m_registry.add(again);
    }
    m_tools = remade;
}

// Issue #24 §1: with the defaults, a read's worst case (every attempt at its limit, every
// backoff at its longest) ends well inside the turn's deadline, leaving the answer its time.
void tst_McpAgentLoop::defaultsFitInsideTheTurn()
{
    remakeTools({});
    const auto hang = find(QStringLiteral("hang"));
    QVERIFY(hang);
    QCOMPARE(hang->policy(), ToolPolicy::Read);
    const RetryPolicy read = hang->retryPolicy(RetryPolicy::defaults());
    QCOMPARE(read.maxAttempts(), 3);
    const auto deadline = AgentLoop::TurnLimits{}.deadline;
    QVERIFY2(read.worstCaseDuration() + std::chrono::seconds(10) <= deadline,
             qPrintable(read.describe()));
    QVERIFY(read.attemptTimeout < std::chrono::seconds(20));
}

namespace {

AgentLoop::ToolPolicies mcpPolicies(const ToolRegistry &registry, int maxRetries)
{
    return [&registry, maxRetries](const QString &name) {
        const auto made = registry.find(name);
        const auto *mcp = dynamic_cast<const McpTool *>(made.get());
        RetryPolicy base = RetryPolicy::defaults();
        base.initialDelay = std::chrono::milliseconds(10);
        base.maxRetries = maxRetries;
        return mcp ? mcp->retryPolicy(base) : RetryPolicy::defaults();
    };
}

} // namespace

// A read the server never answers, asked beside one that answers: its attempts end at their
// timeouts, the server is told of each (notifications/cancelled), and the turn ends in a
// partial answer well before its deadline.
void tst_McpAgentLoop::aHungReadStillGetsAPartialAnswer()
{
    const int before = int(cancelledOnTheServer().size());
    ToolExecutor executor;
    ScriptedModel model;
    model.script = {toolCalls({{QStringLiteral("c1"),
                                McpTool::exposedName(QStringLiteral("fake"), QStringLiteral("hang")),
                                QStringLiteral("{}")},
                               {QStringLiteral("c2"),
                                McpTool::exposedName(QStringLiteral("fake"), QStringLiteral("echo")),
                                QStringLiteral("{\"text\":\"hi\"}")}}),
                    answer()};
    AgentLoop loop({.model = &model,
                    .tools = &m_registry,
                    .executor = &executor,
                    .toolPolicies = mcpPolicies(m_registry, 2)});
    loop.setSession({QStringLiteral("u-1"), QStringLiteral("t-1"), {}});
    AgentLoop::TurnLimits limits;
    limits.deadline = std::chrono::milliseconds(10'000);
    loop.setTurnLimits(limits);
    QSignalSpy finished(&loop, &AgentLoop::turnFinished);
    QElapsedTimer clock;
    clock.start();
    loop.ask(QStringLiteral("use both tools"));
    QVERIFY(finished.wait(kWaitMs));
    const auto turn = finished.first().first().value<TurnResult>();
    QVERIFY2(clock.elapsed() < limits.deadline.count(),
             qPrintable(QString::number(clock.elapsed())));
    QCOMPARE(turn.outcome(), TurnOutcome::Partial);
    QCOMPARE(turn.toolCalls.size(), 2);
    QCOMPARE(turn.toolCalls[0].result.code, ResultCode::ToolTimeout);
    QCOMPARE(turn.toolCalls[0].attempts.size(), 3);
    // Its card draws the same bounds as a built-in tool's: each attempt's limit, the worst case.
    const auto *hang = dynamic_cast<const McpTool *>(m_registry.find(
        McpTool::exposedName(QStringLiteral("fake"), QStringLiteral("hang"))).get());
    QVERIFY(hang);
    RetryPolicy base = RetryPolicy::defaults();
    base.initialDelay = std::chrono::milliseconds(10);
    QCOMPARE(turn.toolCalls[0].attemptTimeoutMs, hang->retryPolicy(base).attemptTimeout.count());
    QCOMPARE(turn.toolCalls[0].worstCaseMs, hang->retryPolicy(base).worstCaseDuration().count());
    QCOMPARE(turn.toolCalls[1].result.code, ResultCode::Ok);
    QCOMPARE(turn.answer, QStringLiteral("done"));
    QTRY_COMPARE_WITH_TIMEOUT(int(cancelledOnTheServer().size()) - before, 3, kWaitMs);
}

void tst_McpAgentLoop::everyStoppedAttemptIsCancelledOnTheServer_data()
{
    QTest::addColumn<QString>("stop");
    QTest::newRow("its timeout") << "timeout";
    QTest::newRow("the turn's deadline") << "deadline";
    QTest::newRow("staff's Cancel") << "cancel";
}

// Whatever stops an attempt of a tool the server never answers, the server hears of it.
void tst_McpAgentLoop::everyStoppedAttemptIsCancelledOnTheServer()
{
    QFETCH(QString, stop);
    McpTool::Settings settings;
    settings.idleTimeoutMs = stop == QLatin1String("timeout") ? 300 : 20'000;
    settings.hardMaximumMs = stop == QLatin1String("timeout") ? 1000 : 30'000;
    remakeTools(settings);
    const int before = int(cancelledOnTheServer().size());
    ToolExecutor executor;
    ScriptedModel model;
    model.script = {toolCalls({{QStringLiteral("c1"),
                                McpTool::exposedName(QStringLiteral("fake"), QStringLiteral("hang")),
                                QStringLiteral("{}")}}),
                    answer()};
    AgentLoop loop({.model = &model,
                    .tools = &m_registry,
                    .executor = &executor,
                    .toolPolicies = mcpPolicies(m_registry, 0)});
    loop.setSession({QStringLiteral("u-1"), QStringLiteral("t-1"), {}});
    if (stop == QLatin1String("deadline")) {
        AgentLoop::TurnLimits limits;
        limits.deadline = std::chrono::milliseconds(800);
        loop.setTurnLimits(limits);
    }
    QSignalSpy finished(&loop, &AgentLoop::turnFinished);
    loop.ask(QStringLiteral("use the tool"));
    if (stop == QLatin1String("cancel")) {
        // Once the call is on its way: before, there is nothing to tell the server.
        QTRY_COMPARE_WITH_TIMEOUT(m_session->inFlight(), 1, kWaitMs);
        loop.cancel();
    }
    QVERIFY(!finished.isEmpty() || finished.wait(kWaitMs)); // a cancel may end it at once
    const auto turn = finished.first().first().value<TurnResult>();
    QCOMPARE(turn.toolCalls.size(), 1);
    QCOMPARE(turn.toolCalls[0].attempts.size(), 1);
    QTRY_COMPARE_WITH_TIMEOUT(int(cancelledOnTheServer().size()) - before, 1, kWaitMs);
}

// A destructive write (no annotations) whose answer was lost after the server acted: it timed
// out, or the server exited. MCP has no way to ask what became of it, so it is told as
// EXECUTION_STATUS_UNKNOWN, and the same request again (a replay: the same request id, so the
// same operation id and ledger row) is answered from what is known, never sent: one effect at
// the server, never two (issue #40 §1).
void tst_McpAgentLoop::aWriteThatMayHaveRunIsNeverSentAgain_data()
{
    QTest::addColumn<QString>("title");
    QTest::newRow("timed out") << QStringLiteral("hang");
    QTest::newRow("server exited after acting") << QStringLiteral("exit");
}

void tst_McpAgentLoop::aWriteThatMayHaveRunIsNeverSentAgain()
{
    QFETCH(QString, title);
    const QString arguments = QStringLiteral("{\"title\":\"%1\"}").arg(title);
    const QString requestId = QStringLiteral("r-replayed-write");
    const TurnResult first = ask(QStringLiteral("write_thing"), arguments, true, nullptr, {},
                                 requestId);
    QCOMPARE(first.toolCalls.size(), 1);
    QCOMPARE(first.toolCalls[0].result.code, ResultCode::ExecutionStatusUnknown);
    QCOMPARE(effects(), QStringList{title});
    // Settled as unknown, a state of its own: neither in progress nor worth a retry.
    const auto rowStatus = [this, &first] {
        const std::unique_ptr<IdempotencyLedger> ledger = openTestLedger(m_dir->path());
        QFuture<LedgerLookup> row = ledger->lookup(first.toolCalls[0].operationId);
        row.waitForFinished(); // the ledger's own thread
        return row.result().row ? std::optional(row.result().row->status) : std::nullopt;
    };
    QCOMPARE(rowStatus(), std::optional(LedgerStatus::OutcomeUnknown));

    startServer(); // a server that exited is started again, as the console would
    for (int replay = 0; replay < 2; ++replay) {
        int confirmations = -1;
        const TurnResult again = ask(QStringLiteral("write_thing"), arguments, true,
                                     &confirmations, {}, requestId);
        QCOMPARE(again.toolCalls.size(), 1);
        QCOMPARE(again.toolCalls[0].result.code, ResultCode::ExecutionStatusUnknown);
        QCOMPARE(effects(), QStringList{title});
        QCOMPARE(rowStatus(), std::optional(LedgerStatus::OutcomeUnknown));
    }
    // A new request (a new operation) is a new write: it is sent.
    const TurnResult fresh = ask(QStringLiteral("write_thing"),
                                 QStringLiteral("{\"title\":\"x\"}"));
    QCOMPARE(fresh.toolCalls[0].result.code, ResultCode::Ok);
    QCOMPARE(effects(), (QStringList{title, QStringLiteral("x")}));
}

QTEST_GUILESS_MAIN(tst_McpAgentLoop)
#include "tst_mcpagentloop.moc"
