// ManagedPolicy and its sources (docs/POLICY.md): a whole policy read, each way a policy is
// refused (with the field it names), the bounds, and the file source's directories: the
// system-wide file found through $XDG_CONFIG_DIRS, missing, refused when it is no file or too
// large. The directories are temporary ones: the suite never reads /etc.
#include "core/policy/managedpolicy.h"
#include "core/policy/policysource.h"

#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QTemporaryDir>
#include <QTest>

using namespace AgentConsole;
using namespace std::chrono_literals;

namespace {

const QStringList kLockable{QStringLiteral("model/name"), QStringLiteral("ledger/spec"),
                            QStringLiteral("tools/retryPolicies")};

// JSON's "\/" for "/" in the addresses: moc reads "//" in a raw string as a comment.
QByteArray fullPolicy()
{
    return R"({
        "version": "2026-12-01",
        "toolRetry": {
            "default": {"attemptTimeoutMs": 1500, "maxRetries": 1},
            "tools": {"getOrderStatus": {"maxRetries": 3, "jitter": "full"}}
        },
        "modelRetry": {"maxRetries": 4, "initialDelayMs": 250, "maxDelayMs": 8000},
        "mcpServers": {"allowed": ["docs", "crm"]},
        "providerChain": {
            "primary": {"provider": "openai", "baseUrl": "https:\/\/api.deepseek.com\/v1",
                        "model": "deepseek-chat", "apiKeyVariable": "TEAM_KEY"},
            "secondary": {"baseUrl": "http:\/\/127.0.0.1:11434\/v1", "model": "qwen"},
            "fallback": "offline"
        },
        "locked": ["model/name", "tools/retryPolicies"]
    })";
}

std::optional<ManagedPolicy> readPolicy(const QByteArray &json, QString *problem)
{
    return ManagedPolicy::read(json, QStringLiteral("/test/policy.json"), kLockable, problem);
}

void writeFile(const QString &path, const QByteArray &bytes)
{
    QVERIFY(QDir().mkpath(QFileInfo(path).path()));
    QFile file(path);
    QVERIFY(file.open(QIODevice::WriteOnly));
    QCOMPARE(file.write(bytes), bytes.size());
}

} // namespace

class tst_ManagedPolicy final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void init();
    void cleanup();
    void readsAWholePolicy();
    void aSmallPolicyLeavesTheRestToTheConsole();
    void refused_data();
    void refused();
    void boundsAreKept();
    void retryPoliciesRoundTrip();
    void fileSourceFollowsXdgConfigDirs();
    void noFileIsNoPolicy();
    void aFileThatCannotBeUsedIsUnreadable();
    void fixedSourceGivesItsText();

private:
    QByteArray m_savedDirs;
    bool m_hadDirs = false;
    std::unique_ptr<QTemporaryDir> m_dir;
};

void tst_ManagedPolicy::init()
{
    m_hadDirs = qEnvironmentVariableIsSet("XDG_CONFIG_DIRS");
    m_savedDirs = qgetenv("XDG_CONFIG_DIRS");
    m_dir = std::make_unique<QTemporaryDir>();
    QVERIFY(m_dir->isValid());
    // Never /etc: every test looks in its own directories.
    qputenv("XDG_CONFIG_DIRS", m_dir->filePath(QStringLiteral("none")).toUtf8());
}

void tst_ManagedPolicy::cleanup()
{
    if (m_hadDirs)
        qputenv("XDG_CONFIG_DIRS", m_savedDirs);
    else
        qunsetenv("XDG_CONFIG_DIRS");
    m_dir.reset();
}

void tst_ManagedPolicy::readsAWholePolicy()
{
    QString problem;
    const std::optional<ManagedPolicy> policy = readPolicy(fullPolicy(), &problem);
    QVERIFY2(policy, qPrintable(problem));
    QCOMPARE(policy->version, QStringLiteral("2026-12-01"));
    QCOMPARE(policy->origin, QStringLiteral("/test/policy.json"));
    QVERIFY(policy->toolDefault);
    QCOMPARE(policy->toolDefault->attemptTimeout, 1500ms);
    QCOMPARE(policy->toolDefault->maxRetries, 1);
    // What a tool's policy leaves out is the team's default, not the console's.
    const RetryPolicy lookUp = policy->toolPolicies.value(QStringLiteral("getOrderStatus"));
    QCOMPARE(lookUp.maxRetries, 3);
    QCOMPARE(lookUp.attemptTimeout, 1500ms);
    QCOMPARE(lookUp.jitter, JitterMode::Full);
    QVERIFY(policy->modelRetry);
    QCOMPARE(policy->modelRetry->maxAttempts(), 5);
    QCOMPARE(policy->modelRetry->initialDelay, 250ms);
    QCOMPARE(policy->allowedMcpServers,
             (QStringList{QStringLiteral("docs"), QStringLiteral("crm")}));
    QVERIFY(policy->allowsMcpServer(QStringLiteral("crm")));
    QVERIFY(!policy->allowsMcpServer(QStringLiteral("shell")));
    QVERIFY(policy->providerChain);
    QCOMPARE(policy->providerChain->provider, QStringLiteral("openai"));
    QCOMPARE(policy->providerChain->model, QStringLiteral("deepseek-chat"));
    QCOMPARE(policy->providerChain->apiKeyVariable, QStringLiteral("TEAM_KEY"));
    QCOMPARE(policy->providerChain->secondaryModel, QStringLiteral("qwen"));
    QCOMPARE(policy->providerChain->fallback, QStringLiteral("offline"));
    QCOMPARE(policy->locked,
             (QStringList{QStringLiteral("model/name"), QStringLiteral("tools/retryPolicies")}));
    QVERIFY(policy->isLocked(QStringLiteral("model/name")));
    QVERIFY(!policy->isLocked(QStringLiteral("ledger/spec")));
    QCOMPARE(policy->recorded(),
             (QJsonObject{{QStringLiteral("version"), QStringLiteral("2026-12-01")},
                          {QStringLiteral("origin"), QStringLiteral("/test/policy.json")}}));
}

void tst_ManagedPolicy::aSmallPolicyLeavesTheRestToTheConsole()
{
    QString problem;
    const std::optional<ManagedPolicy> policy = readPolicy(R"({"version": "v1"})", &problem);
    QVERIFY2(policy, qPrintable(problem));
    QVERIFY(!policy->toolDefault);
    QVERIFY(policy->toolPolicies.isEmpty());
    QVERIFY(!policy->modelRetry);
    QVERIFY(!policy->allowedMcpServers);
    QVERIFY(policy->allowsMcpServer(QStringLiteral("anything")));
    QVERIFY(!policy->providerChain);
    QVERIFY(policy->locked.isEmpty());
}

void tst_ManagedPolicy::refused_data()
{
    QTest::addColumn<QByteArray>("json");
    QTest::addColumn<QString>("named"); // what the problem must name

    QTest::newRow("not JSON") << QByteArray("{\"version\": ") << QStringLiteral("not JSON");
    QTest::newRow("not an object")
        << QByteArray("[1]") << QStringLiteral("expected a JSON object");
    QTest::newRow("no version") << QByteArray("{}") << QStringLiteral("version: is missing");
    QTest::newRow("empty version")
        << QByteArray(R"({"version": " "})") << QStringLiteral("version: is empty");
    QTest::newRow("version not text")
        << QByteArray(R"({"version": 2026})") << QStringLiteral("version: expected text");
    QTest::newRow("long version") << QJsonDocument(QJsonObject{{QStringLiteral("version"),
                                                                QString(65, QLatin1Char('v'))}})
                                         .toJson()
                                  << QStringLiteral("version: longer than 64 characters");
    QTest::newRow("unknown field") << QByteArray(R"({"version": "1", "lockd": []})")
                                   << QStringLiteral("lockd: is not a field of a policy");
    QTest::newRow("retries out of range")
        << QByteArray(
               R"({"version": "1", "toolRetry": {"tools": {"lookUp": {"maxRetries": 11}}}})")
        << QStringLiteral("toolRetry.tools.lookUp.maxRetries: retries: from 0 to 10");
    QTest::newRow("timeout out of range")
        << QByteArray(R"({"version": "1", "toolRetry": {"default": {"attemptTimeoutMs": 5}}})")
        << QStringLiteral("toolRetry.default.attemptTimeoutMs: attempt timeout");
    QTest::newRow("retries not whole")
        << QByteArray(R"({"version": "1", "modelRetry": {"maxRetries": 1.5}})")
        << QStringLiteral("modelRetry.maxRetries: expected a whole number");
    QTest::newRow("retries as text")
        << QByteArray(R"({"version": "1", "modelRetry": {"maxRetries": "2"}})")
        << QStringLiteral("modelRetry.maxRetries: expected a whole number");
    QTest::newRow("multiplier as text")
        << QByteArray(R"({"version": "1", "modelRetry": {"multiplier": "x2"}})")
        << QStringLiteral("modelRetry.multiplier: expected a number");
    QTest::newRow("unknown retry field")
        << QByteArray(R"({"version": "1", "modelRetry": {"retries": 2}})")
        << QStringLiteral("modelRetry.retries: is not a field of a policy");
    QTest::newRow("jitter word")
        << QByteArray(R"({"version": "1", "modelRetry": {"jitter": "some"}})")
        << QStringLiteral("modelRetry.jitter: expected none, full or decorrelated");
    QTest::newRow("tool policy not an object")
        << QByteArray(R"({"version": "1", "toolRetry": {"tools": {"lookUp": 3}}})")
        << QStringLiteral("toolRetry.tools.lookUp: expected an object");
    QTest::newRow("servers not a list")
        << QByteArray(R"({"version": "1", "mcpServers": {"allowed": "docs"}})")
        << QStringLiteral("mcpServers.allowed: expected a list of names");
    QTest::newRow("servers without allowed") << QByteArray(R"({"version": "1", "mcpServers": {}})")
                                             << QStringLiteral("mcpServers.allowed: is missing");
    QTest::newRow("server named twice")
        << QByteArray(R"({"version": "1", "mcpServers": {"allowed": ["docs", "docs"]}})")
        << QStringLiteral("\"docs\" is named twice");
    QTest::newRow("primary without provider")
        << QByteArray(R"({"version": "1", "providerChain": {"primary": {"model": "m"}}})")
        << QStringLiteral("providerChain.primary.provider: is missing");
    QTest::newRow("unknown chain field")
        << QByteArray(R"({"version": "1", "providerChain": {"tertiary": {}}})")
        << QStringLiteral("providerChain.tertiary: is not a field of a policy");
    QTest::newRow("locked unknown setting")
        << QByteArray(R"({"version": "1", "locked": ["model/colour"]})")
        << QStringLiteral("locked: \"model/colour\" is not a setting a policy can lock");
    QTest::newRow("locked not names") << QByteArray(R"({"version": "1", "locked": [1]})")
                                      << QStringLiteral("locked: expected a list of names");
}

void tst_ManagedPolicy::refused()
{
    QFETCH(QByteArray, json);
    QFETCH(QString, named);
    QString problem;
    QVERIFY(!readPolicy(json, &problem));
    QVERIFY2(problem.contains(named), qPrintable(problem));
}

void tst_ManagedPolicy::boundsAreKept()
{
    QString problem;
    // Size.
    QVERIFY(!readPolicy(QByteArray(ManagedPolicy::maxBytes + 1, ' '), &problem));
    QVERIFY2(problem.contains(QStringLiteral("1 MiB")), qPrintable(problem));
    // Depth: an unknown field nested past the bound is refused for its depth, not read.
    QByteArray deep = R"({"version": "1", "x": )";
    deep += QByteArray(ManagedPolicy::maxDepth + 2, '[')
        + QByteArray(ManagedPolicy::maxDepth + 2, ']');
    deep += "}";
    QVERIFY(!readPolicy(deep, &problem));
    QVERIFY2(problem.contains(QStringLiteral("nested deeper than 32")), qPrintable(problem));
    // Counts: servers, tools, locked settings.
    QJsonArray servers;
    for (int i = 0; i <= ManagedPolicy::maxMcpServers; ++i)
        servers.append(QStringLiteral("s%1").arg(i));
    const QJsonObject tooManyServers{{QStringLiteral("version"), QStringLiteral("1")},
                                     {QStringLiteral("mcpServers"),
                                      QJsonObject{{QStringLiteral("allowed"), servers}}}};
    QVERIFY(!readPolicy(QJsonDocument(tooManyServers).toJson(), &problem));
    QVERIFY2(problem.contains(QStringLiteral("mcpServers.allowed: more than 64 entries")),
             qPrintable(problem));
    QJsonObject tools;
    for (int i = 0; i <= ManagedPolicy::maxToolPolicies; ++i)
        tools.insert(QStringLiteral("t%1").arg(i), QJsonObject());
    const QJsonObject tooManyTools{{QStringLiteral("version"), QStringLiteral("1")},
                                   {QStringLiteral("toolRetry"),
                                    QJsonObject{{QStringLiteral("tools"), tools}}}};
    QVERIFY(!readPolicy(QJsonDocument(tooManyTools).toJson(), &problem));
    QVERIFY2(problem.contains(QStringLiteral("toolRetry.tools: more than 256 tools")),
             qPrintable(problem));
}

void tst_ManagedPolicy::retryPoliciesRoundTrip()
{
    RetryPolicy policy = RetryPolicy::defaults();
    policy.attemptTimeout = 900ms;
    policy.maxRetries = 4;
    policy.multiplier = 1.5;
    policy.jitter = JitterMode::Decorrelated;
    QString problem;
    const std::optional<RetryPolicy> back = retryPolicyFromJson(retryPolicyToJson(policy),
                                                                QStringLiteral("p"),
                                                                RetryPolicy::defaults(), &problem);
    QVERIFY2(back, qPrintable(problem));
    QCOMPARE(*back, policy);
}

void tst_ManagedPolicy::fileSourceFollowsXdgConfigDirs()
{
    const QString first = m_dir->filePath(QStringLiteral("first"));
    const QString second = m_dir->filePath(QStringLiteral("second"));
    qputenv("XDG_CONFIG_DIRS", (first + QStringLiteral(":relative/ignored:") + second).toUtf8());
    QCOMPARE(FilePolicySource::systemDirectories(), (QStringList{first, second}));
    // Only the second has one: it is found.
    writeFile(second + QStringLiteral("/AgentConsole/policy.json"), R"({"version": "2"})");
    PolicyText text = FilePolicySource::systemWide()->read();
    QCOMPARE(text.status, PolicyText::Status::Found);
    QCOMPARE(text.origin,
             QDir::toNativeSeparators(second + QStringLiteral("/AgentConsole/policy.json")));
    QCOMPARE(text.text, QByteArray(R"({"version": "2"})"));
    // The first directory's wins once it has one.
    writeFile(first + QStringLiteral("/AgentConsole/policy.json"), R"({"version": "1"})");
    text = FilePolicySource::systemWide()->read();
    QCOMPARE(text.text, QByteArray(R"({"version": "1"})"));
    // Unset, the specification's default.
    qunsetenv("XDG_CONFIG_DIRS");
    QCOMPARE(FilePolicySource::systemDirectories(), QStringList{QStringLiteral("/etc/xdg")});
}

void tst_ManagedPolicy::noFileIsNoPolicy()
{
    qputenv("XDG_CONFIG_DIRS", m_dir->path().toUtf8());
    const PolicyText text = FilePolicySource::systemWide()->read();
    QCOMPARE(text.status, PolicyText::Status::None);
    QVERIFY(text.problem.isEmpty());
}

void tst_ManagedPolicy::aFileThatCannotBeUsedIsUnreadable()
{
    qputenv("XDG_CONFIG_DIRS", m_dir->path().toUtf8());
    const QString path = m_dir->filePath(QStringLiteral("AgentConsole/policy.json"));
    // A directory where the file should be: refused, not skipped.
    QVERIFY(QDir().mkpath(path));
    PolicyText text = FilePolicySource::systemWide()->read();
    QCOMPARE(text.status, PolicyText::Status::Unreadable);
    QVERIFY2(text.problem.contains(QStringLiteral("is not a regular file")),
             qPrintable(text.problem));
    QVERIFY2(text.problem.contains(path), qPrintable(text.problem));
    QVERIFY(QDir(path).removeRecursively());
    // Larger than the bound.
    writeFile(path, QByteArray(ManagedPolicy::maxBytes + 1, ' '));
    text = FilePolicySource(path).read();
    QCOMPARE(text.status, PolicyText::Status::Unreadable);
    QVERIFY2(text.problem.contains(QStringLiteral("larger than 1 MiB")), qPrintable(text.problem));
}

void tst_ManagedPolicy::fixedSourceGivesItsText()
{
    PolicyText given;
    given.status = PolicyText::Status::Found;
    given.text = fullPolicy();
    given.origin = QStringLiteral("postgresql://team-db/agent_console");
    const PolicyText text = FixedPolicySource(given).read();
    QCOMPARE(text.status, PolicyText::Status::Found);
    QCOMPARE(text.origin, given.origin);
    QCOMPARE(text.text, given.text);
}

QTEST_GUILESS_MAIN(tst_ManagedPolicy)
#include "tst_managedpolicy.moc"
