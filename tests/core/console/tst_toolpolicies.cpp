// ToolPolicies: the one owner of every tool's retry policy. The default (the options' or the
// jittered one), the jitter seed, the policies staff or a scenario set, an MCP tool's own
// (from the default in force now, never a copy made when it was registered), what a turn
// keeps of them; and, on a real runtime, that a call runs under exactly the policy it says.
#include "agentdoubles.h"
#include "runtimestart.h"

#include "core/console/agentruntime.h"
#include "core/console/toolpolicies.h"
#include "core/mcp/mcpsession.h"
#include "core/mcp/mcptool.h"
#include "core/tools/toolregistry.h"
#include "core/turn/agentloop.h"
#include "core/turn/turnresult.h"

#include <QFile>
#include <QJsonObject>
#include <QSet>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <chrono>
#include <memory>

using namespace AgentConsole;
using namespace AgentConsole::Testing;
using namespace std::chrono_literals;

namespace {

// An MCP server's tool as the runtime registers it; no session: nothing is called.
std::shared_ptr<Mcp::McpTool> mcpTool(const QString &name, bool readOnly)
{
    Mcp::ToolInfo info;
    info.name = name;
    info.inputSchema = QJsonObject{{QStringLiteral("type"), QStringLiteral("object")}};
    info.annotations.readOnly = readOnly;
    return std::make_shared<Mcp::McpTool>(nullptr, QStringLiteral("crm"), info,
                                          Mcp::McpTool::Settings{});
}

RetryPolicy quick()
{
    RetryPolicy policy = RetryPolicy::defaults();
    policy.attemptTimeout = 500ms;
    policy.maxRetries = 1;
    return policy;
}

} // namespace

class tst_ToolPolicies final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void init();
    void defaultIsJitteredFromTheSeed();
    void configuredDefaultIsUsedAsItIs();
    void jitterSeedChangesTheDefault();
    void aToolRunsUnderItsOwnPolicyElseTheDefault();
    void refused_data();
    void refused();
    void resetsSayWhatChanged();
    void mcpToolFollowsTheDefaultInForce();
    void conditionsAsATurnKeepsThem();
    void aCallRunsUnderThePolicySaid();
    void consolesRetryOutOfStep();

private:
    std::unique_ptr<ToolRegistry> m_registry;
};

void tst_ToolPolicies::init()
{
    m_registry = std::make_unique<ToolRegistry>();
    m_registry->add(answeringTool(QStringLiteral("lookUp")));
    m_registry->add(answeringTool(QStringLiteral("track")));
    m_registry->add(answeringTool(QStringLiteral("file"), true));
}

void tst_ToolPolicies::defaultIsJitteredFromTheSeed()
{
    const ToolPolicies policies(m_registry.get(), std::nullopt, 42);
    QCOMPARE(policies.jitterSeed(), std::uint64_t(42));
    QCOMPARE(policies.defaultPolicy(), RetryPolicy::jittered(42));
    // The seed article's figures and worst case, each backoff drawn up to the computed one.
    QCOMPARE(policies.defaultPolicy().worstCaseDuration(), 6600ms);
    QCOMPARE(policies.policy(QStringLiteral("track")), RetryPolicy::jittered(42));
    QCOMPARE(policies.tools(), (QStringList{QStringLiteral("lookUp"), QStringLiteral("track"),
                                            QStringLiteral("file")}));
}

void tst_ToolPolicies::configuredDefaultIsUsedAsItIs()
{
    ToolPolicies policies(m_registry.get(), quick(), 42);
    QCOMPARE(policies.defaultPolicy(), quick());
    QSignalSpy changed(&policies, &ToolPolicies::changed);
    policies.setJitterSeed(7);
    QCOMPARE(changed.size(), 1); // the seed changed; the configured policy did not
    QCOMPARE(policies.defaultPolicy(), quick());
    QCOMPARE(policies.policy(QStringLiteral("lookUp")), quick());
}

// A scenario runs on a fixed seed and puts the console's back: the default follows at once,
// and nothing is said when the seed stays.
void tst_ToolPolicies::jitterSeedChangesTheDefault()
{
    ToolPolicies policies(m_registry.get(), std::nullopt, 42);
    QSignalSpy changed(&policies, &ToolPolicies::changed);
    policies.setJitterSeed(0x5eed);
    QCOMPARE(changed.size(), 1);
    QCOMPARE(policies.jitterSeed(), std::uint64_t(0x5eed));
    QCOMPARE(policies.defaultPolicy(), RetryPolicy::jittered(0x5eed));
    QCOMPARE(policies.policy(QStringLiteral("file")), RetryPolicy::jittered(0x5eed));
    policies.setJitterSeed(0x5eed);
    QCOMPARE(changed.size(), 1);
}

void tst_ToolPolicies::aToolRunsUnderItsOwnPolicyElseTheDefault()
{
    ToolPolicies policies(m_registry.get(), std::nullopt, 42);
    QSignalSpy changed(&policies, &ToolPolicies::changed);
    QString error;
    QVERIFY2(policies.setPolicy(QStringLiteral("file"), quick(), &error), qPrintable(error));
    QVERIFY(policies.setPolicy(QStringLiteral("lookUp"), quick(), &error));
    QCOMPARE(changed.size(), 2);
    QCOMPARE(policies.policy(QStringLiteral("file")), quick());
    QCOMPARE(policies.policy(QStringLiteral("track")), policies.defaultPolicy());
    // In registry order, not the order they were set in.
    QCOMPARE(policies.toolsWithCustomPolicy(),
             (QStringList{QStringLiteral("lookUp"), QStringLiteral("file")}));

    // A policy set to what the default is flags nothing.
    QVERIFY(policies.setPolicy(QStringLiteral("track"), policies.defaultPolicy(), &error));
    QCOMPARE(policies.toolsWithCustomPolicy(),
             (QStringList{QStringLiteral("lookUp"), QStringLiteral("file")}));
}

void tst_ToolPolicies::refused_data()
{
    QTest::addColumn<QString>("tool");
    QTest::addColumn<int>("maxRetries");
    QTest::addColumn<QString>("reason");

    QTest::newRow("unknown tool") << QStringLiteral("nothing") << 1
                                  << QStringLiteral("no such tool: nothing");
    QTest::newRow("out of range") << QStringLiteral("track") << -1
                                  << QStringLiteral("retries: from 0 to 10");
}

void tst_ToolPolicies::refused()
{
    QFETCH(QString, tool);
    QFETCH(int, maxRetries);
    QFETCH(QString, reason);

    ToolPolicies policies(m_registry.get(), std::nullopt, 42);
    QSignalSpy changed(&policies, &ToolPolicies::changed);
    RetryPolicy policy = quick();
    policy.maxRetries = maxRetries;
    QString error;
    QVERIFY(!policies.setPolicy(tool, policy, &error));
    QVERIFY2(error.contains(reason), qPrintable(error));
    QCOMPARE(changed.size(), 0);
    QCOMPARE(policies.policy(tool), policies.defaultPolicy());
    QVERIFY(policies.toolsWithCustomPolicy().isEmpty());
}

void tst_ToolPolicies::resetsSayWhatChanged()
{
    ToolPolicies policies(m_registry.get(), std::nullopt, 42);
    QSignalSpy changed(&policies, &ToolPolicies::changed);
    policies.resetPolicy(QStringLiteral("track")); // none set: nothing changes
    policies.resetPolicies();
    QCOMPARE(changed.size(), 0);

    QVERIFY(policies.setPolicy(QStringLiteral("track"), quick(), nullptr));
    QVERIFY(policies.setPolicy(QStringLiteral("file"), quick(), nullptr));
    policies.resetPolicy(QStringLiteral("track"));
    QCOMPARE(changed.size(), 3);
    QCOMPARE(policies.policy(QStringLiteral("track")), policies.defaultPolicy());
    QCOMPARE(policies.toolsWithCustomPolicy(), QStringList{QStringLiteral("file")});
    policies.resetPolicies();
    QCOMPARE(changed.size(), 4);
    QVERIFY(policies.toolsWithCustomPolicy().isEmpty());
}

// An MCP tool runs under what its annotations make of the default in force now: a scenario's
// seed reaches it too (it once kept a copy of the default made when it was registered). A
// policy set by hand wins over the annotations'.
void tst_ToolPolicies::mcpToolFollowsTheDefaultInForce()
{
    const auto write = mcpTool(QStringLiteral("refund"), false);
    const auto read = mcpTool(QStringLiteral("find"), true);
    m_registry->add(write);
    m_registry->add(read);
    ToolPolicies policies(m_registry.get(), std::nullopt, 42);

    const RetryPolicy asWrite = policies.policy(write->name());
    QCOMPARE(asWrite, write->retryPolicy(policies.defaultPolicy()));
    QCOMPARE(asWrite.maxRetries, 0); // a write is never retried blindly
    QCOMPARE(asWrite.jitterSeed, std::uint64_t(42));
    QCOMPARE(policies.policy(read->name()).maxRetries, policies.defaultPolicy().maxRetries);

    policies.setJitterSeed(0x5eed);
    QCOMPARE(policies.policy(write->name()).jitterSeed, std::uint64_t(0x5eed));
    QCOMPARE(policies.policy(read->name()), read->retryPolicy(RetryPolicy::jittered(0x5eed)));

    QVERIFY(policies.setPolicy(read->name(), quick(), nullptr));
    QCOMPARE(policies.policy(read->name()), quick());
    policies.resetPolicy(read->name());
    QCOMPARE(policies.policy(read->name()), read->retryPolicy(policies.defaultPolicy()));
}

void tst_ToolPolicies::conditionsAsATurnKeepsThem()
{
    ToolPolicies policies(m_registry.get(), std::nullopt, 42);
    const QString fallback = RetryPolicy::jittered(42).describe();
    QCOMPARE(policies.conditions(), (QJsonObject{{QStringLiteral("default"), fallback}}));
    QVERIFY(policies.setPolicy(QStringLiteral("track"), quick(), nullptr));
    QCOMPARE(policies.conditions(),
             (QJsonObject{{QStringLiteral("default"), fallback},
                          {QStringLiteral("custom"),
                           QJsonObject{{QStringLiteral("track"), quick().describe()}}}}));
}

// On a real runtime: the policy ToolPolicies says is the one the call runs under (the card's
// figures and its attempts), with no other default anywhere on the way.
void tst_ToolPolicies::aCallRunsUnderThePolicySaid()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    RuntimeOptions options;
    options.dataDirectory = dir.path();
    options.jitterSeed = 42;
    AgentRuntime runtime(options);
    QVERIFY(startAndWait(runtime));
    ToolPolicies *policies = runtime.policies();
    RetryPolicy own = quick();
    own.attemptTimeout = 1500ms;
    own.maxRetries = 3;
    QVERIFY(policies->setPolicy(QStringLiteral("queryLogistics"), own, nullptr));

    QSignalSpy finished(runtime.agentLoop(), &AgentLoop::turnFinished);
    QVERIFY(!runtime.agentLoop()->ask(QStringLiteral("Where is order A1001?")).isEmpty());
    QVERIFY(finished.wait(20'000));
    const auto turn = finished.first().first().value<TurnResult>();
    QVERIFY(!turn.toolCalls.isEmpty());
    for (const ToolCallRecord &call : turn.toolCalls) {
        const RetryPolicy said = policies->policy(call.name);
        QCOMPARE(call.attemptTimeoutMs, said.attemptTimeout.count());
        QCOMPARE(call.maxAttempts, said.maxAttempts());
        QCOMPARE(call.worstCaseMs, said.effectiveDeadline().count());
    }
    const auto tracked = std::find_if(turn.toolCalls.cbegin(), turn.toolCalls.cend(),
                                      [](const ToolCallRecord &call) {
                                          return call.name == QLatin1String("queryLogistics");
                                      });
    QVERIFY(tracked != turn.toolCalls.cend());
    QCOMPARE(tracked->maxAttempts, 4);
    QCOMPARE(tracked->attemptTimeoutMs, qint64(1500));
}

// Issue #24 §3: three consoles of a team once waited exactly the same backoffs (a constant
// seed), so they retried a recovering backend in lockstep. Each runtime now draws its own seed
// unless given one; its default tool policy is jittered with the worst case shown; and three
// consoles seeded apart wait differently for the same failures, each wait within the policy's
// computed backoff. A policy given in the options is used as it is.
void tst_ToolPolicies::consolesRetryOutOfStep()
{
    QSet<std::uint64_t> seeds;
    for (int i = 0; i < 3; ++i) {
        RuntimeOptions options;
        options.dataDirectory = QStringLiteral("/nonexistent-not-started");
        const AgentRuntime runtime(options);
        const RetryPolicy policy = runtime.policies()->defaultPolicy();
        QCOMPARE(policy.jitter, JitterMode::Full);
        QCOMPARE(policy.worstCaseDuration(), RetryPolicy::defaults().worstCaseDuration());
        seeds.insert(policy.jitterSeed);
    }
    QCOMPARE(seeds.size(), 3); // 64-bit draws from the system's source

    // The same failures on three consoles (fixed seeds, so that the run is repeatable).
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString plan = dir.filePath(QStringLiteral("faults.json"));
    {
        QFile file(plan);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write(R"({"tools": {"queryLogistics": {"transientFailures": 2}}})");
    }
    QList<QList<qint64>> waits;
    for (const std::uint64_t seed : {0x1001ULL, 0x2002ULL, 0x3003ULL}) {
        RuntimeOptions options;
        options.dataDirectory = dir.filePath(QString::number(seed));
        options.faultPlanFile = plan;
        options.jitterSeed = seed;
        AgentRuntime runtime(options);
        QSignalSpy ready(&runtime, &AgentRuntime::ready);
        runtime.start();
        QVERIFY(ready.wait(20'000));
        QCOMPARE(runtime.policies()->defaultPolicy().jitterSeed, seed);
        QSignalSpy finished(runtime.agentLoop(), &AgentLoop::turnFinished);
        QVERIFY(!runtime.agentLoop()->ask(QStringLiteral("Where is order A1001?")).isEmpty());
        QVERIFY(finished.wait(20'000));
        const auto turn = finished.first().first().value<TurnResult>();
        const auto call = std::find_if(turn.toolCalls.cbegin(), turn.toolCalls.cend(),
                                       [](const ToolCallRecord &c) {
                                           return c.name == QLatin1String("queryLogistics");
                                       });
        QVERIFY(call != turn.toolCalls.cend());
        QCOMPARE(call->result.code, ResultCode::Ok);
        QCOMPARE(call->attempts.size(), 3);
        const RetryPolicy policy = runtime.policies()->defaultPolicy();
        QList<qint64> delays;
        for (int retry = 1; retry <= 2; ++retry) {
            const qint64 delay = call->attempts.at(retry - 1).nextDelayMs;
            QVERIFY2(delay >= 0 && delay <= policy.computedDelay(retry).count(),
                     qPrintable(QString::number(delay)));
            delays.append(delay);
        }
        waits.append(delays);
    }
    QVERIFY2(waits.at(0) != waits.at(1) && waits.at(1) != waits.at(2) && waits.at(0) != waits.at(2),
             qPrintable(QStringLiteral("%1 / %2 / %3")
                            .arg(waits.at(0).at(0)).arg(waits.at(1).at(0)).arg(waits.at(2).at(0))));

    RuntimeOptions given;
    given.dataDirectory = QStringLiteral("/nonexistent-not-started");
    given.toolPolicy = RetryPolicy::defaults();
    QCOMPARE(AgentRuntime(given).policies()->defaultPolicy(), RetryPolicy::defaults());
}

QTEST_GUILESS_MAIN(tst_ToolPolicies)
#include "tst_toolpolicies.moc"
