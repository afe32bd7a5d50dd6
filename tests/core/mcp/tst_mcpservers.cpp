// McpServers: the console's MCP servers as a service of the runtime. Without mcp.json there is
// nothing to wait for or close; with one, the servers as the window lists them, their tools
// registered, their secrets known; staff's tool policies put in force from the next call (in
// the order the window is told), refused for a word that is not one or under a running turn;
// sign-in and answers refused for what is not there. Elicitation is tst_mcpelicitation's,
// sign-in itself tst_mcpoauth's, the policies' words tst_mcptoolpolicy's.
#include "core/console/agentruntime.h"
#include "core/console/mcpservers.h"
#include "core/console/toolpolicies.h"
#include "core/mcp/mcpserver.h" // ServerSet::hasSettled
#include "core/tools/toolregistry.h"
#include "core/turn/agentloop.h"

#include <QFile>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include <memory>

using namespace AgentConsole;

namespace {

constexpr int kWaitMs = 30000;

} // namespace

class tst_McpServers final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void init();
    void cleanup();
    void withoutServersNothingWaitsOrCloses();
    void storedPoliciesNotUnderstoodAreNotUsed();
    void serversAreListedWithTheirTools();
    void staffPoliciesApplyFromTheNextCall();
    void policiesRefused();
    void signInAndAnswersNeedSomethingToActOn();
    void closingEndsTheServers();

private:
    bool startRuntime(bool withServer, const QMap<QString, QString> &stored = {});

    std::unique_ptr<QTemporaryDir> m_dir;
    std::unique_ptr<AgentRuntime> m_runtime;
};

void tst_McpServers::init()
{
    m_dir = std::make_unique<QTemporaryDir>();
    QVERIFY(m_dir->isValid());
}

void tst_McpServers::cleanup()
{
    m_runtime.reset();
    m_dir.reset();
}

bool tst_McpServers::startRuntime(bool withServer, const QMap<QString, QString> &stored)
{
    RuntimeOptions options;
    options.dataDirectory = m_dir->filePath(QStringLiteral("data"));
    options.mcpToolPolicies = stored;
    if (withServer) {
        const QString config = m_dir->filePath(QStringLiteral("mcp.json"));
        QFile file(config);
        if (!file.open(QIODevice::WriteOnly))
            return false;
        file.write(QStringLiteral(R"({"mcpServers": {
            "fake": {"command": "%1", "args": ["normal"], "env": {"TOKEN": "s3cret-token"}}}})")
                       .arg(QStringLiteral(FAKE_MCP_SERVER))
                       .toUtf8());
        options.mcpConfigFile = config;
    }
    m_runtime = std::make_unique<AgentRuntime>(options);
    QSignalSpy settled(m_runtime->mcp(), &McpServers::settled);
    m_runtime->start();
    return settled.wait(kWaitMs) && m_runtime->isReady();
}

void tst_McpServers::withoutServersNothingWaitsOrCloses()
{
    QVERIFY(startRuntime(false));
    McpServers *mcp = m_runtime->mcp();
    QVERIFY(!mcp->servers());
    QVERIFY(mcp->status().isEmpty());
    QVERIFY(mcp->knownSecrets().isEmpty());
    bool closed = false;
    mcp->close(1000, this, [&closed] { closed = true; });
    QTRY_VERIFY(closed);
}

void tst_McpServers::storedPoliciesNotUnderstoodAreNotUsed()
{
    QTest::ignoreMessage(QtWarningMsg, QRegularExpression(QStringLiteral("MCP tool policy .*"
                                                                         "not understood")));
    QVERIFY(startRuntime(false, {{QStringLiteral("fake/echo"), QStringLiteral("confirm")},
                                 {QStringLiteral("fake/other"), QStringLiteral("maybe")}}));
    QCOMPARE(m_runtime->mcp()->toolPolicies(),
             (QMap<QString, QString>{{QStringLiteral("fake/echo"), QStringLiteral("confirm")}}));
}

void tst_McpServers::serversAreListedWithTheirTools()
{
    QVERIFY(startRuntime(true));
    McpServers *mcp = m_runtime->mcp();
    QVERIFY(mcp->servers());
    QVERIFY(mcp->servers()->hasSettled());
    const QList<McpServerStatus> servers = mcp->status();
    QCOMPARE(servers.size(), 1);
    QCOMPARE(servers.first().name, QStringLiteral("fake"));
    QCOMPARE(servers.first().state, McpServerStatus::State::Ready);
    QCOMPARE(servers.first().toolPolicies.size(), servers.first().tools);
    for (const McpServerStatus::Tool &tool : servers.first().toolPolicies) {
        QVERIFY2(m_runtime->tools()->find(tool.name), qPrintable(tool.name));
        QCOMPARE(tool.decidedBy, McpServerStatus::Decider::Annotations);
    }
    QVERIFY(mcp->knownSecrets().contains(QStringLiteral("s3cret-token")));
}

// Staff choose "confirm" for a read: from its next call it asks first and is never retried
// (the policy ToolPolicies gives). The window hears, in this order: the tools again, the
// policies (ToolPolicies, told by McpServers::toolPoliciesChanged), the status.
void tst_McpServers::staffPoliciesApplyFromTheNextCall()
{
    QVERIFY(startRuntime(true));
    McpServers *mcp = m_runtime->mcp();
    const QString echo = QStringLiteral("fake__echo");
    QCOMPARE(m_runtime->policies()->policy(echo).maxRetries, 2);
    QStringList heard;
    connect(m_runtime.get(), &AgentRuntime::toolsChanged, this,
            [&heard] { heard.append(QStringLiteral("tools")); });
    connect(m_runtime->policies(), &ToolPolicies::changed, this,
            [&heard] { heard.append(QStringLiteral("policies")); });
    connect(mcp, &McpServers::statusChanged, this,
            [&heard] { heard.append(QStringLiteral("status")); });

    QSignalSpy mcpChanged(mcp, &McpServers::toolPoliciesChanged);
    const QMap<QString, QString> chosen{{QStringLiteral("fake/echo"), QStringLiteral("confirm")}};
    QString error;
    QVERIFY2(mcp->setToolPolicies(chosen, &error), qPrintable(error));
    QCOMPARE(heard, (QStringList{QStringLiteral("tools"), QStringLiteral("policies"),
                                 QStringLiteral("status")}));
    QCOMPARE(mcpChanged.size(), 1);
    QCOMPARE(mcp->toolPolicies(), chosen);
    QCOMPARE(m_runtime->options().mcpToolPolicies, chosen);
    QVERIFY(m_runtime->tools()->find(echo)->descriptor().requiresConfirmation);
    QCOMPARE(m_runtime->policies()->policy(echo).maxRetries, 0);
    bool shown = false;
    // Held: a range-for over a member of status()'s temporary list would read freed memory.
    const QList<McpServerStatus> servers = mcp->status();
    QVERIFY(!servers.isEmpty());
    for (const McpServerStatus::Tool &tool : servers.first().toolPolicies) {
        if (tool.name != echo)
            continue;
        shown = true;
        QCOMPARE(tool.decidedBy, McpServerStatus::Decider::Staff);
    }
    QVERIFY(shown);

    // The same again changes nothing and says nothing.
    heard.clear();
    QVERIFY(mcp->setToolPolicies(chosen, &error));
    QVERIFY(heard.isEmpty());
}

void tst_McpServers::policiesRefused()
{
    QVERIFY(startRuntime(true));
    McpServers *mcp = m_runtime->mcp();
    QSignalSpy changed(mcp, &McpServers::toolPoliciesChanged);
    QString error;
    QVERIFY(!mcp->setToolPolicies({{QStringLiteral("fake/echo"), QStringLiteral("sometimes")}},
                                  &error));
    QCOMPARE(error, QStringLiteral("not a tool policy: fake/echo"));

    // A call planned under one policy must not run under another.
    AgentLoop *loop = m_runtime->agentLoop();
    QSignalSpy finished(loop, &AgentLoop::turnFinished);
    QVERIFY(!loop->ask(QStringLiteral("Is SKU-200 in stock?")).isEmpty());
    QVERIFY(!mcp->setToolPolicies({{QStringLiteral("fake/echo"), QStringLiteral("read")}},
                                  &error));
    QCOMPARE(error, QStringLiteral("wait until the running question is answered"));
    QVERIFY(finished.wait(kWaitMs));
    QVERIFY(changed.isEmpty());
    QVERIFY(mcp->toolPolicies().isEmpty());
}

void tst_McpServers::signInAndAnswersNeedSomethingToActOn()
{
    QVERIFY(startRuntime(true));
    McpServers *mcp = m_runtime->mcp();
    // "fake" signs in to nothing (no OAuth), "nobody" is no server at all.
    for (const QString &server : {QStringLiteral("fake"), QStringLiteral("nobody")}) {
        QVERIFY(!mcp->signIn(server));
        QVERIFY(!mcp->signOut(server));
        QVERIFY(!mcp->cancelSignIn(server));
    }
    QVERIFY(!mcp->answer(QStringLiteral("mcp-question-1"), McpAnswer::Accept));
}

void tst_McpServers::closingEndsTheServers()
{
    QVERIFY(startRuntime(true));
    McpServers *mcp = m_runtime->mcp();
    bool closed = false;
    mcp->close(5000, this, [&closed] { closed = true; });
    QTRY_VERIFY_WITH_TIMEOUT(closed, kWaitMs);
}

QTEST_GUILESS_MAIN(tst_McpServers)
#include "tst_mcpservers.moc"
