// TeamPolicy and the runtime's services under a team's managed policy (docs/POLICY.md), on a
// real runtime: no policy leaves the console as it was; one that cannot be read or used, or a
// locked setting given on the command line, fails the start in words; a policy's values are in
// force (tools' retry policies, the model's retries, the provider chain, the MCP servers
// allowed) and what it locks is refused by every setter with its reason; each turn keeps the
// policy it ran under, in its result and its checkpoint's state.
#include "runtimestart.h"

#include "core/console/activeconnection.h"
#include "core/console/agentruntime.h"
#include "core/console/consolesettings.h"
#include "core/console/mcpconfigfile.h"
#include "core/console/mcpservers.h"
#include "core/console/settingkeys.h"
#include "core/console/teampolicy.h"
#include "core/console/toolpolicies.h"
#include "core/ledger/turnjournal.h"
#include "core/llm/secretstore.h"
#include "core/policy/policysource.h"
#include "core/turn/agentloop.h"
#include "core/turn/turncheckpoint.h"
#include "core/turn/turnresult.h"

#include <QFile>
#include <QJsonDocument>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

using namespace AgentConsole;
using namespace AgentConsole::Testing;
using namespace std::chrono_literals;

namespace {

const QString kOrigin = QStringLiteral("/test/xdg/AgentConsole/policy.json");

std::shared_ptr<const PolicySource> policyText(const QByteArray &json)
{
    PolicyText text;
    text.status = PolicyText::Status::Found;
    text.text = json;
    text.origin = kOrigin;
    return std::make_shared<FixedPolicySource>(text);
}

QByteArray lockingPolicy()
{
    return R"({
        "version": "2026-12-01",
        "toolRetry": {
            "default": {"attemptTimeoutMs": 1500, "maxRetries": 1},
            "tools": {"queryLogistics": {"maxRetries": 3}}
        },
        "modelRetry": {"maxRetries": 4, "initialDelayMs": 250, "maxDelayMs": 4000},
        "mcpServers": {"allowed": ["docs"]},
        "providerChain": {"primary": {"provider": "offline"}, "fallback": "offline"},
        "locked": ["model/provider", "model/name", "ledger/spec", "team/database",
                   "tools/retryPolicies", "mcpPolicies"]
    })";
}

} // namespace

class tst_TeamPolicy final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void init();
    void cleanup();
    void withoutAPolicyTheConsoleIsAsItWas();
    void aPolicyThatCannotBeUsedFailsTheStart_data();
    void aPolicyThatCannotBeUsedFailsTheStart();
    void aLockedSettingOnTheCommandLineFailsTheStart();
    void anUnlockedSettingOnTheCommandLineIsTaken();
    void theSystemWideFileIsRead();
    void retryPoliciesComeFromThePolicy();
    void lockedSettingsAreRefusedWithAReason();
    void consoleSettingsKeepLockedValues();
    void mcpServersNotAllowedAreShownRefused();
    void eachTurnKeepsThePolicy();
    void checkpointStateKeepsThePolicy();

private:
    RuntimeOptions options() const;
    std::unique_ptr<QTemporaryDir> m_dir;
};

void tst_TeamPolicy::init()
{
    m_dir = std::make_unique<QTemporaryDir>();
    QVERIFY(m_dir->isValid());
}

void tst_TeamPolicy::cleanup()
{
    m_dir.reset();
}

RuntimeOptions tst_TeamPolicy::options() const
{
    RuntimeOptions options;
    options.dataDirectory = m_dir->filePath(QStringLiteral("data"));
    options.jitterSeed = 7;
    options.secrets = std::make_shared<MemorySecretStore>();
    return options;
}

void tst_TeamPolicy::withoutAPolicyTheConsoleIsAsItWas()
{
    RuntimeOptions given = options();
    PolicyText none; // a source with no policy in it
    given.policySource = std::make_shared<FixedPolicySource>(none);
    AgentRuntime runtime(given);
    QVERIFY(startAndWait(runtime));
    const TeamPolicy *team = runtime.teamPolicy();
    QVERIFY(!team->inForce());
    QCOMPARE(team->record(), QJsonValue(QStringLiteral("none")));
    QCOMPARE(team->summary(), QStringLiteral("No team policy"));
    QVERIFY(!team->isLocked(SettingKeys::model));
    QCOMPARE(runtime.policies()->defaultPolicy(), RetryPolicy::jittered(7));
    QVERIFY(runtime.policies()->lockRefusal().isEmpty());
    QVERIFY(!runtime.options().model.retry);
}

void tst_TeamPolicy::aPolicyThatCannotBeUsedFailsTheStart_data()
{
    QTest::addColumn<QByteArray>("json");
    QTest::addColumn<QString>("reason");
    QTest::newRow("not JSON") << QByteArray("{") << QStringLiteral("not JSON");
    QTest::newRow("a field out of range")
        << QByteArray(R"({"version": "3", "modelRetry": {"maxRetries": 50}})")
        << QStringLiteral("modelRetry.maxRetries: retries: from 0 to 10");
    QTest::newRow("a provider the console does not know")
        << QByteArray(R"({"version": "3", "providerChain": {"primary": {"provider": "gpt"}}})")
        << QStringLiteral("providerChain.primary.provider: expected offline or openai");
    QTest::newRow("a remote provider without an address")
        << QByteArray(R"({"version": "3", "providerChain": {"primary": {"provider": "openai"}}})")
        << QStringLiteral("providerChain:");
}

void tst_TeamPolicy::aPolicyThatCannotBeUsedFailsTheStart()
{
    QFETCH(QByteArray, json);
    QFETCH(QString, reason);
    RuntimeOptions given = options();
    given.policySource = policyText(json);
    AgentRuntime runtime(given);
    QSignalSpy failed(&runtime, &AgentRuntime::failed);
    QSignalSpy ready(&runtime, &AgentRuntime::ready);
    QTest::ignoreMessage(QtWarningMsg,
                         QRegularExpression(QStringLiteral("runtime failed to start")));
    runtime.start();
    QVERIFY(failed.wait(20'000));
    const QString said = failed.first().first().toString();
    QVERIFY2(said.startsWith(QStringLiteral("The team policy %1 cannot be used: ").arg(kOrigin)),
             qPrintable(said));
    QVERIFY2(said.contains(reason), qPrintable(said));
    QVERIFY(ready.isEmpty());
    QVERIFY(!runtime.isReady());
    // Nothing was opened: the ledger is not in the data directory.
    QVERIFY(!QFile::exists(m_dir->filePath(QStringLiteral("data/ledger.sqlite"))));
}

void tst_TeamPolicy::aLockedSettingOnTheCommandLineFailsTheStart()
{
    RuntimeOptions given = options();
    given.policySource = policyText(lockingPolicy());
    given.model.model = QStringLiteral("mine");
    given.commandLineSettings.insert(SettingKeys::model, QStringLiteral("--model"));
    AgentRuntime runtime(given);
    QSignalSpy failed(&runtime, &AgentRuntime::failed);
    QTest::ignoreMessage(QtWarningMsg,
                         QRegularExpression(QStringLiteral("runtime failed to start")));
    runtime.start();
    QVERIFY(failed.wait(20'000));
    QCOMPARE(failed.first().first().toString(),
             QStringLiteral("--model is locked by your team's policy (version 2026-12-01)"));

    // The team database locked without a value: no team, and --team is refused (#43 §2, §6).
    RuntimeOptions team = options();
    team.policySource = policyText(lockingPolicy());
    team.teamSpec = QStringLiteral("postgresql://agent@127.0.0.1:1/team");
    team.commandLineSettings.insert(SettingKeys::team, QStringLiteral("--team"));
    AgentRuntime teamRuntime(team);
    QSignalSpy teamFailed(&teamRuntime, &AgentRuntime::failed);
    QTest::ignoreMessage(QtWarningMsg,
                         QRegularExpression(QStringLiteral("runtime failed to start")));
    teamRuntime.start();
    QVERIFY(teamFailed.wait(20'000));
    QCOMPARE(teamFailed.first().first().toString(),
             QStringLiteral("--team is locked by your team's policy (version 2026-12-01)"));
}

void tst_TeamPolicy::anUnlockedSettingOnTheCommandLineIsTaken()
{
    RuntimeOptions given = options();
    given.policySource = policyText(lockingPolicy());
    given.model.contextChars = 5000;
    given.commandLineSettings.insert(SettingKeys::contextChars, QStringLiteral("--context-chars"));
    AgentRuntime runtime(given);
    QVERIFY(startAndWait(runtime));
    QCOMPARE(runtime.options().model.contextChars, 5000);
}

void tst_TeamPolicy::theSystemWideFileIsRead()
{
    const QByteArray saved = qgetenv("XDG_CONFIG_DIRS");
    const QString config = m_dir->filePath(QStringLiteral("xdg"));
    QVERIFY(QDir().mkpath(config + QStringLiteral("/AgentConsole")));
    QFile file(config + QStringLiteral("/AgentConsole/policy.json"));
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write(R"({"version": "from-file"})");
    file.close();
    qputenv("XDG_CONFIG_DIRS", config.toUtf8());
    RuntimeOptions given = options();
    given.policySource = FilePolicySource::systemWide();
    AgentRuntime runtime(given);
    const bool started = startAndWait(runtime);
    qputenv("XDG_CONFIG_DIRS", saved);
    QVERIFY(started);
    QCOMPARE(runtime.teamPolicy()->version(), QStringLiteral("from-file"));
    QCOMPARE(runtime.teamPolicy()->origin(), file.fileName());
}

void tst_TeamPolicy::retryPoliciesComeFromThePolicy()
{
    RuntimeOptions given = options();
    given.policySource = policyText(lockingPolicy());
    AgentRuntime runtime(given);
    QVERIFY(startAndWait(runtime));
    ToolPolicies *policies = runtime.policies();
    QCOMPARE(policies->defaultPolicy().attemptTimeout, 1500ms);
    QCOMPARE(policies->defaultPolicy().maxRetries, 1);
    QCOMPARE(policies->policy(QStringLiteral("queryLogistics")).maxRetries, 3);
    QCOMPARE(policies->policy(QStringLiteral("queryLogistics")).attemptTimeout, 1500ms);
    QCOMPARE(policies->policy(QStringLiteral("queryOrder")).maxRetries, 1);
    QCOMPARE(policies->toolsWithTeamPolicy(), QStringList{QStringLiteral("queryLogistics")});
    // The model's retries reach the providers through the options the chain is built from.
    QVERIFY(runtime.options().model.retry);
    QCOMPARE(runtime.options().model.retry->maxAttempts(), 5);
    QCOMPARE(runtime.options().model.retry->initialDelay, 250ms);
}

void tst_TeamPolicy::lockedSettingsAreRefusedWithAReason()
{
    RuntimeOptions given = options();
    given.policySource = policyText(lockingPolicy());
    AgentRuntime runtime(given);
    QVERIFY(startAndWait(runtime));
    const TeamPolicy *team = runtime.teamPolicy();
    QVERIFY(team->inForce());
    QCOMPARE(team->lockReason(), QStringLiteral("Set by your team's policy (version 2026-12-01)"));
    QVERIFY(team->isLocked(SettingKeys::model));
    QVERIFY(!team->isLocked(SettingKeys::stream));

    // A tool's retry policy.
    QString error;
    RetryPolicy own = RetryPolicy::defaults();
    own.maxRetries = 5;
    QVERIFY(!runtime.policies()->setPolicy(QStringLiteral("queryOrder"), own, &error));
    QCOMPARE(error,
             QStringLiteral("The tool retry policies are locked by your team's policy (version "
                            "2026-12-01)"));
    QCOMPARE(runtime.policies()->policy(QStringLiteral("queryOrder")).maxRetries, 1);

    // The model, through the settings switch: refused; an unlocked one (streaming) is taken.
    ModelOptions model = runtime.connection()->model();
    model.model = QStringLiteral("another");
    QVERIFY(!runtime.connection()->apply(model, runtime.connection()->backend(), &error));
    QCOMPARE(error,
             QStringLiteral("The model is locked by your team's policy (version "
                            "2026-12-01)"));
    model = runtime.connection()->model();
    model.stream = !model.stream;
    QVERIFY2(runtime.connection()->apply(model, runtime.connection()->backend(), &error),
             qPrintable(error));
    QCOMPARE(runtime.connection()->model().stream, model.stream);
    QVERIFY(runtime.connection()->model().retry); // the team's retries stay

    // Staff's MCP tool policies.
    QVERIFY(!runtime.mcp()->setToolPolicies(
        {{QStringLiteral("docs/search"), QStringLiteral("confirm")}}, &error));
    QCOMPARE(error,
             QStringLiteral("The MCP tool policies are locked by your team's policy (version "
                            "2026-12-01)"));
}

void tst_TeamPolicy::consoleSettingsKeepLockedValues()
{
    RuntimeOptions given = options();
    given.policySource = policyText(lockingPolicy());
    AgentRuntime runtime(given);
    QVERIFY(startAndWait(runtime));
    ConsoleSettings settings(m_dir->filePath(QStringLiteral("agent-console.ini")));
    settings.load();
    QString error;
    QVERIFY(settings.saveLedger(QStringLiteral("sqlite:mine.sqlite"), &error));
    settings.lockTo(*runtime.teamPolicy()->policy(), runtime.options());
    QVERIFY(settings.isLocked(SettingKeys::ledger));
    QCOMPARE(settings.settings().ledgerSpec, QString()); // the policy's: the default
    QVERIFY(!settings.saveLedger(QStringLiteral("sqlite:other.sqlite"), &error));
    QCOMPARE(error,
             QStringLiteral("The ledger is locked by your team's policy (version "
                            "2026-12-01)"));
    // The value in force may be saved as it is (it is not written: the staff member's own
    // stays in the file); an unlocked setting as staff like.
    QVERIFY2(settings.saveLedger(QString(), &error), qPrintable(error));
    QVERIFY(settings.isLocked(SettingKeys::team));
    QVERIFY(!settings.saveTeam(QStringLiteral("postgresql://agent@db/team"), &error));
    QCOMPARE(error,
             QStringLiteral("The team database is locked by your team's policy (version "
                            "2026-12-01)"));
    QVERIFY2(settings.saveTeam(QString(), &error), qPrintable(error));
    QVERIFY2(settings.saveConnection(settings.settings().model, settings.settings().backend,
                                     &error),
             qPrintable(error));
    ConsoleSettings reread(settings.filePath());
    reread.load();
    QCOMPARE(reread.settings().ledgerSpec, QStringLiteral("sqlite:mine.sqlite"));
    QVERIFY2(settings.saveLanguage(QStringLiteral("zh_CN"), &error), qPrintable(error));
    ModelOptions model = settings.settings().model;
    model.model = QStringLiteral("another");
    QVERIFY(!settings.saveConnection(model, settings.settings().backend, &error));
    QCOMPARE(error,
             QStringLiteral("The model is locked by your team's policy (version "
                            "2026-12-01)"));
    QVERIFY(!settings.saveMcpToolPolicies(
        {{QStringLiteral("docs/search"), QStringLiteral("read")}}, &error));
}

void tst_TeamPolicy::mcpServersNotAllowedAreShownRefused()
{
    const QString config = m_dir->filePath(QStringLiteral("mcp.json"));
    QFile file(config);
    QVERIFY(file.open(QIODevice::WriteOnly));
    // A program that does not exist: were it started, the server would be down, not refused.
    file.write(R"({"mcpServers": {"shell": {"command": "/nonexistent/mcp-shell"}}})");
    file.close();
    RuntimeOptions given = options();
    given.mcpConfigFile = config;
    given.policySource = policyText(lockingPolicy());
    AgentRuntime runtime(given);
    QSignalSpy settled(runtime.mcp(), &McpServers::settled);
    QTest::ignoreMessage(QtWarningMsg,
                         QRegularExpression(QStringLiteral("MCP server .*shell.* not started")));
    QVERIFY(startAndWait(runtime));
    QVERIFY(settled.wait(10'000) || !settled.isEmpty());
    const QList<McpServerStatus> servers = runtime.mcp()->status();
    QCOMPARE(servers.size(), 1);
    QCOMPARE(servers.first().name, QStringLiteral("shell"));
    QCOMPARE(servers.first().state, McpServerStatus::State::Down);
    QCOMPARE(servers.first().problem, McpServerStatus::Problem::RefusedByPolicy);
    QCOMPARE(servers.first().lastError,
             QStringLiteral("The team's policy (version 2026-12-01) does not allow the MCP "
                            "server \"shell\""));

    // Added from the window: refused in words, the file left as it was.
    McpConfigFile edited(config, nullptr);
    edited.setPolicy(
        [&runtime](const QString &server) { return runtime.mcp()->refusalOf(server); }, QString());
    QSignalSpy refused(&edited, &McpConfigFile::refused);
    QVERIFY(edited.save(QStringLiteral(R"({"mcpServers": {"crm": {"command": "crm-mcp"}}})")));
    QVERIFY(refused.wait(5000));
    QCOMPARE(refused.first().first().toString(),
             QStringLiteral("The team's policy (version 2026-12-01) does not allow the MCP "
                            "server \"crm\""));
    QVERIFY(file.open(QIODevice::ReadOnly));
    QVERIFY(file.readAll().contains("shell"));
}

void tst_TeamPolicy::eachTurnKeepsThePolicy()
{
    RuntimeOptions given = options();
    given.policySource = policyText(lockingPolicy());
    AgentRuntime runtime(given);
    QVERIFY(startAndWait(runtime));
    QSignalSpy finished(runtime.agentLoop(), &AgentLoop::turnFinished);
    QVERIFY(!runtime.agentLoop()->ask(QStringLiteral("Where is order A1001?")).isEmpty());
    QVERIFY(finished.wait(20'000));
    const auto turn = finished.first().first().value<TurnResult>();
    const QJsonObject expected{{QStringLiteral("version"), QStringLiteral("2026-12-01")},
                               {QStringLiteral("origin"), kOrigin}};
    QCOMPARE(turn.teamPolicy, QJsonValue(expected));
    // As --json and exports write it, and read back.
    QCOMPARE(turn.toJson().value(QLatin1String("teamPolicy")), QJsonValue(expected));
    QString problem;
    const std::optional<TurnResult> back = TurnResult::fromJson(turn.toJson(), &problem);
    QVERIFY2(back, qPrintable(problem));
    QCOMPARE(back->teamPolicy, QJsonValue(expected));
    // A record that is neither is refused when read back.
    QJsonObject damaged = turn.toJson();
    damaged.insert(QStringLiteral("teamPolicy"), QJsonObject{{QStringLiteral("version"), 3}});
    QVERIFY(!TurnResult::fromJson(damaged, &problem));
    QVERIFY2(problem.contains(QStringLiteral("teamPolicy")), qPrintable(problem));
}

void tst_TeamPolicy::checkpointStateKeepsThePolicy()
{
    for (const QJsonValue &record :
         {QJsonValue(QStringLiteral("none")),
          QJsonValue(QJsonObject{{QStringLiteral("version"), QStringLiteral("v9")},
                                 {QStringLiteral("origin"), kOrigin}})}) {
        TurnCheckpoint checkpoint;
        checkpoint.userId = QStringLiteral("u-1");
        checkpoint.tenantId = QStringLiteral("t-1");
        checkpoint.conversationId = QStringLiteral("c-1");
        checkpoint.result.requestId = QStringLiteral("r-1");
        checkpoint.result.question = QStringLiteral("Where is order A1001?");
        checkpoint.result.teamPolicy = record;
        const JournalEntry entry = checkpoint.toEntry();
        QCOMPARE(entry.state.value(QLatin1String("teamPolicy")), record);
        QString error;
        const std::optional<TurnCheckpoint> back = TurnCheckpoint::fromEntry(entry, &error);
        QVERIFY2(back, qPrintable(error));
        QCOMPARE(back->result.teamPolicy, record);
    }
}

QTEST_GUILESS_MAIN(tst_TeamPolicy)
#include "tst_teampolicy.moc"
