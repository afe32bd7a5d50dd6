#include "agentdoubles.h"

#include "core/turn/agentloop.h"
#include "core/console/consolesettings.h"
#include "core/turn/turnresult.h"
#include "core/mcp/mcpsession.h"
#include "core/mcp/mcptool.h"
#include "core/mcp/mcptoolinfo.h"
#include "core/mcp/mcptoolpolicy.h"
#include "core/mcp/stdiotransport.h"
#include "core/resilience/resultcode.h"
#include "core/resilience/toolexecutor.h"

#include <QSettings>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

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

// Staff's policy over an MCP tool's annotations (docs/MCP.md, "Staff policy overrides"): the
// stored words and what is refused, and the override decides confirmation and retries the
// way the annotations would have, through the real agent loop and executor against the fake
// server.
class tst_McpToolPolicy : public QObject
{
    Q_OBJECT

private slots:
    void init();
    void cleanup();
    void storedWords();
    void overridesFromStored();
    void badStoredValuesAreReportedNotUsed();
    void savedPoliciesReadBack();
    void overrideKeepsTheToolAndNamesStaff();
    void readOverriddenToConfirmAsksAndIsNeverRetried();
    void writeOverriddenToReadIsRetriedUnconfirmed();
    void idempotentOverriddenToConfirmIsDeclinable();

private:
    TurnResult ask(const QString &tool, const QString &arguments, bool confirm = true,
                   int *confirmations = nullptr);
    void registerWith(const ToolPolicyOverrides &overrides);

    std::unique_ptr<QTemporaryDir> m_dir;
    std::unique_ptr<Session> m_session;
    ToolRegistry m_registry;
    QList<std::shared_ptr<McpTool>> m_listed;
};

void tst_McpToolPolicy::init()
{
    m_dir = std::make_unique<QTemporaryDir>();
    StdioTransport::Options transport;
    transport.serverName = QStringLiteral("fake");
    transport.program = QStringLiteral(FAKE_MCP_SERVER);
    transport.arguments = {QStringLiteral("normal")};
    m_session = std::make_unique<Session>(std::make_unique<StdioTransport>(transport),
                                          Session::Options{});
    QSignalSpy ready(m_session.get(), &Session::ready);
    m_session->start();
    QVERIFY(ready.wait(kWaitMs));
    ToolLister lister(m_session.get());
    QSignalSpy listed(&lister, &ToolLister::finished);
    lister.list();
    QVERIFY(listed.wait(kWaitMs));
    auto handle = std::make_shared<SessionHandle>(m_session.get());
    McpTool::Settings settings;
    settings.idleTimeoutMs = 300;
    settings.hardMaximumMs = 1000;
    m_listed.clear();
    for (const ToolInfo &info : listed.first().first().value<QList<ToolInfo>>()) {
        QString problem;
        if (auto tool = McpTool::create(handle, QStringLiteral("fake"), info, settings, &problem))
            m_listed.append(tool);
    }
    QVERIFY(!m_listed.isEmpty());
}

void tst_McpToolPolicy::cleanup()
{
    m_registry.clear();
    m_listed.clear();
    m_session.reset();
    m_dir.reset();
}

void tst_McpToolPolicy::registerWith(const ToolPolicyOverrides &overrides)
{
    m_registry.clear();
    for (const auto &tool : std::as_const(m_listed))
        m_registry.add(overrides.apply(tool));
}

TurnResult tst_McpToolPolicy::ask(const QString &tool, const QString &arguments, bool confirm,
                                  int *confirmations)
{
    ToolExecutor executor;
    ScriptedModel model;
    model.script = {toolCalls({{QStringLiteral("c1"),
                                McpTool::exposedName(QStringLiteral("fake"), tool), arguments}}),
                    answer()};
    const std::unique_ptr<IdempotencyLedger> ledger = openTestLedger(m_dir->path());
    // As AgentRuntime gives them: each tool's own retry policy, from the policy in force.
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
    loop.setSession({QStringLiteral("u-1"), QStringLiteral("t-1"), {}});
    int asked = 0;
    connect(&loop, &AgentLoop::confirmationRequested, this,
            [&](const QString &, const ToolCallRecord &write) {
                ++asked;
                loop.confirm(write.operationId, confirm);
            });
    QSignalSpy finished(&loop, &AgentLoop::turnFinished);
    loop.ask(QStringLiteral("use the tool"));
    if (!finished.wait(kWaitMs))
        return {};
    if (confirmations)
        *confirmations = asked;
    return finished.first().first().value<TurnResult>();
}

void tst_McpToolPolicy::storedWords()
{
    for (const ToolPolicy policy :
         {ToolPolicy::Read, ToolPolicy::IdempotentWrite, ToolPolicy::Write})
        QCOMPARE(ToolPolicyWords::fromStored(ToolPolicyWords::stored(policy)).value_or(
                     ToolPolicy(-1)), policy);
    QCOMPARE(ToolPolicyWords::stored(ToolPolicy::Write), QStringLiteral("confirm"));
    QCOMPARE(ToolPolicyWords::status(ToolPolicy::Write), QStringLiteral("write"));
    QCOMPARE(ToolPolicyWords::storedWords(),
             QStringList({"read", "idempotent-write", "confirm"}));
    // The status word is not a stored one, nor is anything near a stored one.
    for (const char *word : {"write", "Read", " read", "idempotent", "", "confirm first"})
        QVERIFY2(!ToolPolicyWords::fromStored(QString::fromLatin1(word)), word);
}

void tst_McpToolPolicy::overridesFromStored()
{
    QStringList problems;
    const ToolPolicyOverrides overrides = ToolPolicyOverrides::fromStored(
        {{"fake/echo", "confirm"},
         {"my server/v2/write_thing", "read"}, // the server's name may hold a '/'
         {"fake/flaky", "sometimes"},
         {"noslash", "read"},
         {"fake/", "read"},
         {"/echo", "read"}},
        &problems);
    QCOMPARE(overrides.size(), 2);
    QCOMPARE(overrides.find("fake", "echo").value_or(ToolPolicy::Read), ToolPolicy::Write);
    QCOMPARE(overrides.find("my server/v2", "write_thing").value_or(ToolPolicy::Write),
             ToolPolicy::Read);
    QVERIFY(!overrides.find("fake", "flaky"));
    problems.sort();
    QCOMPARE(problems, QStringList({"/echo", "fake/", "fake/flaky", "noslash"}));
    QCOMPARE(overrides.toStored(),
             (QMap<QString, QString>{{"fake/echo", "confirm"},
                                     {"my server/v2/write_thing", "read"}}));
}

void tst_McpToolPolicy::badStoredValuesAreReportedNotUsed()
{
    const QString file = m_dir->filePath(QStringLiteral("console.ini"));
    {
        QSettings ini(file, QSettings::IniFormat);
        ini.setValue(QStringLiteral("mcpPolicies/fake/echo"), QStringLiteral("confirm"));
        ini.setValue(QStringLiteral("mcpPolicies/fake/flaky"), QStringLiteral("always"));
        ini.setValue(QStringLiteral("mcpPolicies/fake/write_thing"), QStringLiteral("write"));
        ini.setValue(QStringLiteral("mcpPolicies/lonely"), QStringLiteral("read"));
        ini.setValue(QStringLiteral("ui/language"), QStringLiteral("en"));
    }
    ConsoleSettings settings(file);
    settings.load();
    QCOMPARE(settings.settings().mcpToolPolicies,
             (QMap<QString, QString>{{"fake/echo", "confirm"}}));
    QCOMPARE(settings.settings().language, QStringLiteral("en")); // the rest is read as ever
    const QString problems = settings.problems().join(QLatin1Char('\n'));
    QCOMPARE(settings.problems().size(), 3);
    QVERIFY2(problems.contains("mcpPolicies/fake/flaky: expected read or idempotent-write or "
                               "confirm; the default is used"), qPrintable(problems));
    QVERIFY2(problems.contains("mcpPolicies/fake/write_thing: expected"), qPrintable(problems));
    QVERIFY2(problems.contains("mcpPolicies/lonely: expected <server>/<tool>"),
             qPrintable(problems));
    QVERIFY(!problems.contains("fake/echo"));
    // What the runtime starts with: only what was understood.
    QCOMPARE(settings.startOptions().mcpToolPolicies,
             (QMap<QString, QString>{{"fake/echo", "confirm"}}));
}

void tst_McpToolPolicy::savedPoliciesReadBack()
{
    const QString file = m_dir->filePath(QStringLiteral("console.ini"));
    ConsoleSettings settings(file);
    settings.load();
    QString error;
    QVERIFY(!settings.saveMcpToolPolicies({{"fake/echo", "maybe"}}, &error));
    QVERIFY2(error.contains("fake/echo"), qPrintable(error));
    QVERIFY(settings.saveMcpToolPolicies({{"fake/echo", "confirm"}, {"fake/flaky", "read"}},
                                         &error));
    // Replaced whole: an entry staff set back to "as annotated" goes.
    QVERIFY(settings.saveMcpToolPolicies({{"fake/echo", "idempotent-write"}}, &error));
    ConsoleSettings again(file);
    again.load();
    QVERIFY2(again.problems().isEmpty(), qPrintable(again.problems().join('\n')));
    QCOMPARE(again.settings().mcpToolPolicies,
             (QMap<QString, QString>{{"fake/echo", "idempotent-write"}}));
}

void tst_McpToolPolicy::overrideKeepsTheToolAndNamesStaff()
{
    std::shared_ptr<McpTool> echo;
    for (const auto &tool : std::as_const(m_listed)) {
        if (tool->info().name == QLatin1String("echo"))
            echo = tool;
    }
    QVERIFY(echo);
    QCOMPARE(echo->policy(), ToolPolicy::Read);
    QCOMPARE(echo->descriptor().labels.policyOrigin.source,
             ToolLabels::PolicyOrigin::Source::Hints);
    QVERIFY(echo->descriptor().labels.policyOrigin.hintsRelaxSafeguard());

    const auto confirmed = echo->withOverride(ToolPolicy::Write);
    QCOMPARE(confirmed->policy(), ToolPolicy::Write);
    QCOMPARE(confirmed->annotatedPolicy(), ToolPolicy::Read);
    QVERIFY(confirmed->isOverridden());
    const ToolDescriptor descriptor = confirmed->descriptor();
    QCOMPARE(descriptor.name, echo->descriptor().name);
    QCOMPARE(descriptor.service, QStringLiteral("mcp:fake"));
    QVERIFY(descriptor.hasSideEffects);
    QVERIFY(descriptor.requiresConfirmation);
    QVERIFY(!descriptor.labels.confirmTitle.isEmpty());
    QCOMPARE(descriptor.labels.policyOrigin.source, ToolLabels::PolicyOrigin::Source::Staff);
    QCOMPARE(descriptor.labels.policyOrigin.policy, QStringLiteral("write"));
    QCOMPARE(descriptor.labels.policyOrigin.hinted, QStringLiteral("read"));
    QVERIFY(!descriptor.labels.policyOrigin.hintsRelaxSafeguard());
    QCOMPARE(confirmed->retryPolicy(RetryPolicy::defaults()).maxRetries, 0);
    // The original is untouched: it is what the server listed.
    QCOMPARE(echo->policy(), ToolPolicy::Read);
    // Validation stays whatever the policy.
    QVERIFY(confirmed->precheck(QJsonObject{}, TrustedContext{}));
    QVERIFY(!confirmed->precheck(QJsonObject{{"text", "hi"}}, TrustedContext{}));
}

void tst_McpToolPolicy::readOverriddenToConfirmAsksAndIsNeverRetried()
{
    // Annotated read-only, so retried as a lookup... until staff say it must be confirmed.
    {
        registerWith({});
        int confirmations = -1;
        const TurnResult turn = ask(QStringLiteral("flaky"), QStringLiteral("{}"), true,
                                    &confirmations);
        QCOMPARE(confirmations, 0);
        QCOMPARE(turn.toolCalls.size(), 1);
        QCOMPARE(turn.toolCalls[0].result.code, ResultCode::Ok); // failed once, then retried
        QCOMPARE(turn.toolCalls[0].attempts.size(), 2);
    }
    ToolPolicyOverrides overrides;
    overrides.set(QStringLiteral("fake"), QStringLiteral("flaky"), ToolPolicy::Write);
    registerWith(overrides);
    int confirmations = -1;
    const TurnResult turn = ask(QStringLiteral("flaky"), QStringLiteral("{}"), true,
                                &confirmations);
    QCOMPARE(confirmations, 1);
    QCOMPARE(turn.toolCalls.size(), 1);
    const ToolCallRecord &call = turn.toolCalls[0];
    // Its third call fails (the fake fails every odd one): a write is not tried again.
    QCOMPARE(call.attempts.size(), 1);
    QVERIFY(call.result.code != ResultCode::Ok);
    QCOMPARE(call.labels.policyOrigin.source, ToolLabels::PolicyOrigin::Source::Staff);
}

void tst_McpToolPolicy::writeOverriddenToReadIsRetriedUnconfirmed()
{
    ToolPolicyOverrides overrides;
    overrides.set(QStringLiteral("fake"), QStringLiteral("write_thing"), ToolPolicy::Read);
    registerWith(overrides);
    int confirmations = -1;
    // "hang": silent past its idle timeout, each attempt.
    const TurnResult turn = ask(QStringLiteral("write_thing"),
                                QStringLiteral("{\"title\":\"hang\"}"), true, &confirmations);
    QCOMPARE(confirmations, 0);
    QCOMPARE(turn.toolCalls.size(), 1);
    const ToolCallRecord &call = turn.toolCalls[0];
    QCOMPARE(call.attempts.size(), RetryPolicy::defaults().maxRetries + 1);
    QCOMPARE(call.result.code, ResultCode::ToolTimeout); // a lookup's timeout, not "unknown"
    QCOMPARE(turn.unknownExecutionStatus, 0);
    // Validation still applies: no title, no attempt.
    const TurnResult invalid = ask(QStringLiteral("write_thing"), QStringLiteral("{}"));
    QCOMPARE(invalid.toolCalls[0].result.code, ResultCode::InvalidArgument);
    QVERIFY(invalid.toolCalls[0].attempts.isEmpty());
}

void tst_McpToolPolicy::idempotentOverriddenToConfirmIsDeclinable()
{
    ToolPolicyOverrides overrides;
    overrides.set(QStringLiteral("fake"), QStringLiteral("idempotent_thing"), ToolPolicy::Write);
    registerWith(overrides);
    int confirmations = -1;
    const TurnResult turn = ask(QStringLiteral("idempotent_thing"), QStringLiteral("{}"), false,
                                &confirmations);
    QCOMPARE(confirmations, 1);
    QCOMPARE(turn.toolCalls[0].result.code, ResultCode::ConfirmationDeclined);
    QVERIFY(turn.toolCalls[0].attempts.isEmpty());
}

QTEST_GUILESS_MAIN(tst_McpToolPolicy)
#include "tst_mcptoolpolicy.moc"
