#include "agentdoubles.h"

#include "core/turn/agentloop.h"
#include "core/turn/turnresult.h"
#include "core/mcp/mcpsession.h"
#include "core/mcp/mcptool.h"
#include "core/mcp/mcptoolinfo.h"
#include "core/mcp/stdiotransport.h"
#include "core/resilience/resultcode.h"
#include "core/resilience/toolexecutor.h"

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

private:
    TurnResult ask(const QString &tool, const QString &arguments, bool confirm = true,
                   int *confirmations = nullptr,
                   const std::function<void(AgentLoop *)> &wire = {});
    void addAskTool();
    std::shared_ptr<McpTool> find(const QString &name) const;

    std::unique_ptr<QTemporaryDir> m_dir;
    std::unique_ptr<Session> m_session;
    std::shared_ptr<SessionHandle> m_handle;
    ToolRegistry m_registry;
    QList<std::shared_ptr<McpTool>> m_tools;
};

void tst_McpAgentLoop::init()
{
    m_dir = std::make_unique<QTemporaryDir>();
    StdioTransport::Options transport;
    transport.serverName = QStringLiteral("fake");
    transport.program = QStringLiteral(FAKE_MCP_SERVER);
    transport.arguments = {QStringLiteral("normal")};
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
                                 const std::function<void(AgentLoop *)> &wire)
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
                    .toolPolicies = [this](const QString &name) -> std::optional<RetryPolicy> {
                        const auto made = m_registry.find(name);
                        const auto *mcp = dynamic_cast<const McpTool *>(made.get());
                        RetryPolicy base = RetryPolicy::defaults();
                        base.initialDelay = std::chrono::milliseconds(10);
                        return mcp ? std::optional<RetryPolicy>(mcp->retryPolicy(base)) : std::nullopt;
                    }});
    loop.setSession({QStringLiteral("u-1"), QStringLiteral("t-1"), {}});
    int asked = 0;
    connect(&loop, &AgentLoop::confirmationRequested, this,
            [&](const QString &, const ToolCallRecord &write) {
                ++asked;
                loop.confirm(write.operationId, confirm);
            });
    if (wire)
        wire(&loop);
    QSignalSpy finished(&loop, &AgentLoop::turnFinished);
    loop.ask(QStringLiteral("use the tool"));
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
void tst_McpAgentLoop::addAskTool()
{
    ToolInfo info;
    info.name = QStringLiteral("ask");
    info.inputSchema = {{"type", "object"}, {"properties", QJsonObject{}}};
    info.annotations.readOnly = true;
    McpTool::Settings settings;
    settings.idleTimeoutMs = 300;
    settings.hardMaximumMs = 1000;
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
    // Nobody answered: each attempt's idle timeout (300 ms) ended its wait; nothing extended
    // it. The card keeps what happened.
    QCOMPARE(call.result.code, ResultCode::ToolTimeout);
    QCOMPARE(questions, call.attempts.size());
    QCOMPARE(call.question, ToolCallRecord::Question::Withdrawn);
}

QTEST_GUILESS_MAIN(tst_McpAgentLoop)
#include "tst_mcpagentloop.moc"
