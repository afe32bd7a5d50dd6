// ActiveConnection: the model and the backend in force and the switch between turns, on a
// real runtime over a temporary data directory (no provider is asked: nothing is sent). What
// is refused and why, a switch done at once or after the keychain's answer, what it says of
// the backend, and the keys an export must not carry. The dialog's side is
// tst_settingsdialog's and tst_connectionsettings'.
#include "closedport.h"
#include "runtimestart.h"

#include "core/console/activeconnection.h"
#include "core/console/agentruntime.h"
#include "core/console/redaction.h"
#include "core/llm/apikeysource.h"
#include "core/llm/secretstore.h"
#include "core/tools/toolregistry.h"
#include "core/turn/agentloop.h"

#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include <memory>

using namespace AgentConsole;

namespace {

constexpr int timeoutMs = 20000;
// A variable no one sets: the key then comes from the keychain (the in-process store here).
const QByteArray kUnsetVariable = "AGENT_CONSOLE_TEST_ACTIVE_CONNECTION_KEY";

} // namespace

class tst_ActiveConnection final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void init();
    void cleanup();
    void beforeReadyNothingIsSwitched();
    void refused_data();
    void refused();
    void notSwitchedUnderARunningTurn();
    void theOfflineModelIsSwitchedToAtOnce();
    void anotherBackendIsSaid();
    void aKeychainKeyIsWaitedForAndNeverExported();

private:
    bool startRuntime();

    std::unique_ptr<QTemporaryDir> m_dir;
    std::shared_ptr<MemorySecretStore> m_secrets;
    std::unique_ptr<AgentRuntime> m_runtime;
};

void tst_ActiveConnection::init()
{
    qunsetenv(kUnsetVariable.constData());
    m_dir = std::make_unique<QTemporaryDir>();
    QVERIFY(m_dir->isValid());
    m_secrets = std::make_shared<MemorySecretStore>();
}

void tst_ActiveConnection::cleanup()
{
    m_runtime.reset();
    m_dir.reset();
}

bool tst_ActiveConnection::startRuntime()
{
    RuntimeOptions options;
    options.dataDirectory = m_dir->path();
    options.secrets = m_secrets;
    m_runtime = std::make_unique<AgentRuntime>(options);
    return Testing::startAndWait(*m_runtime, timeoutMs);
}

void tst_ActiveConnection::beforeReadyNothingIsSwitched()
{
    RuntimeOptions options;
    options.dataDirectory = m_dir->path();
    options.secrets = m_secrets;
    AgentRuntime runtime(options); // not started
    ActiveConnection *connection = runtime.connection();
    QCOMPARE(connection->secretStore(), std::shared_ptr<SecretStore>(m_secrets));
    QVERIFY(connection->modelName().isEmpty());
    QVERIFY(connection->storePath().isEmpty());
    QCOMPARE(connection->backendSummary(), QStringLiteral("embedded store"));
    QSignalSpy changed(connection, &ActiveConnection::settingsChanged);
    QString error;
    QVERIFY(!connection->apply(options.model, options.backend, &error));
    QCOMPARE(error, QStringLiteral("the console is not ready yet"));
    QVERIFY(changed.isEmpty());
}

void tst_ActiveConnection::refused_data()
{
    QTest::addColumn<QString>("baseUrl");
    QTest::addColumn<QString>("backendUrl");
    QTest::addColumn<QString>("reason");

    QTest::newRow("model address") << QStringLiteral("ftp://example") << QString()
                                   << QStringLiteral("Base URL (model)");
    QTest::newRow("backend address") << QString() << QStringLiteral("not a url")
                                     << QStringLiteral("Base URL (backend)");
}

// Checked as the command line checks them, worded with the dialog's field; nothing changes.
void tst_ActiveConnection::refused()
{
    QFETCH(QString, baseUrl);
    QFETCH(QString, backendUrl);
    QFETCH(QString, reason);

    QVERIFY(startRuntime());
    ActiveConnection *connection = m_runtime->connection();
    const QString modelBefore = connection->modelName();
    ModelOptions model = m_runtime->options().model;
    BackendOptions backend = m_runtime->options().backend;
    if (!baseUrl.isEmpty()) {
        model.provider = ModelOptions::Provider::OpenAiCompatible;
        model.baseUrl = baseUrl;
        model.model = QStringLiteral("some-model");
    }
    if (!backendUrl.isEmpty()) {
        backend.kind = BackendOptions::Kind::Http;
        backend.url = backendUrl;
    }
    QSignalSpy changed(connection, &ActiveConnection::settingsChanged);
    QString error;
    QVERIFY(!connection->apply(model, backend, &error));
    QVERIFY2(error.contains(reason, Qt::CaseInsensitive), qPrintable(error));
    QVERIFY(changed.isEmpty());
    QVERIFY(!connection->isApplying());
    QCOMPARE(connection->modelName(), modelBefore);
    QCOMPARE(connection->backend().kind, BackendOptions::Kind::Embedded);
}

void tst_ActiveConnection::notSwitchedUnderARunningTurn()
{
    QVERIFY(startRuntime());
    AgentLoop *loop = m_runtime->agentLoop();
    QSignalSpy finished(loop, &AgentLoop::turnFinished);
    QVERIFY(!loop->ask(QStringLiteral("Is SKU-200 in stock?")).isEmpty());
    QString error;
    QVERIFY(!m_runtime->connection()->apply(m_runtime->options().model,
                                            m_runtime->options().backend, &error));
    QCOMPARE(error, QStringLiteral("wait until the running question is answered"));
    QVERIFY(finished.wait(timeoutMs));
}

void tst_ActiveConnection::theOfflineModelIsSwitchedToAtOnce()
{
    QVERIFY(startRuntime());
    ActiveConnection *connection = m_runtime->connection();
    QVERIFY(!connection->modelName().isEmpty());
    QVERIFY(!connection->storePath().isEmpty());
    QVERIFY2(connection->storePath().startsWith(m_runtime->options().dataDirectory),
             qPrintable(connection->storePath()));
    QSignalSpy changed(connection, &ActiveConnection::settingsChanged);
    ModelOptions model = m_runtime->options().model;
    model.provider = ModelOptions::Provider::Offline;
    model.fallbackToOffline = false;
    QString error;
    QVERIFY2(connection->apply(model, m_runtime->options().backend, &error), qPrintable(error));
    QCOMPARE(changed.size(), 1); // no key needed: done on return
    QVERIFY(!connection->isApplying());
    QCOMPARE(connection->model().fallbackToOffline, false);
    QCOMPARE(m_runtime->options().model.fallbackToOffline, false);
    QCOMPARE(m_secrets->requestCount(), 0);
}

// A REST backend: said without its credentials or query, the tools built over it; and back.
void tst_ActiveConnection::anotherBackendIsSaid()
{
    QVERIFY(startRuntime());
    ActiveConnection *connection = m_runtime->connection();
    const Testing::ClosedPort nothing;
    QVERIFY(nothing.port());
    BackendOptions rest;
    rest.kind = BackendOptions::Kind::Http;
    rest.url = QStringLiteral("http://staff:secret@127.0.0.1:%1/?token=x").arg(nothing.port());
    const QStringList tools = m_runtime->tools()->names();
    QString error;
    QVERIFY2(connection->apply(m_runtime->options().model, rest, &error), qPrintable(error));
    QCOMPARE(connection->backend().kind, BackendOptions::Kind::Http);
    QCOMPARE(connection->backendSummary(),
             QStringLiteral("REST http://127.0.0.1:%1/").arg(nothing.port()));
    QCOMPARE(m_runtime->tools()->names(), tools); // the same tools, over the new backend

    QVERIFY(connection->apply(m_runtime->options().model, BackendOptions{}, &error));
    QCOMPARE(connection->backendSummary(), QStringLiteral("embedded store"));
}

// A provider whose key is in the keychain: the switch waits for it (isApplying), then the key
// is in use, and an export is redacted of it.
void tst_ActiveConnection::aKeychainKeyIsWaitedForAndNeverExported()
{
    const QString key = QStringLiteral("sk-kept-in-the-keychain-4711");
    QVERIFY(startRuntime());
    bool stored = false;
    m_secrets->write(ApiKeySource::primaryKeychainKey(), key, this,
                     [&stored](const SecretAnswer &) { stored = true; });
    QTRY_VERIFY(stored);
    ActiveConnection *connection = m_runtime->connection();
    ModelOptions model;
    model.provider = ModelOptions::Provider::OpenAiCompatible;
    model.baseUrl = QStringLiteral("http://127.0.0.1:9/v1");
    model.model = QStringLiteral("remote-model");
    model.apiKeyEnv = QString::fromLatin1(kUnsetVariable);
    QSignalSpy changed(connection, &ActiveConnection::settingsChanged);
    QString error;
    QVERIFY2(connection->apply(model, m_runtime->options().backend, &error), qPrintable(error));
    QVERIFY(connection->isApplying());
    QVERIFY(changed.isEmpty());
    QVERIFY(changed.wait(timeoutMs));
    QVERIFY(!connection->isApplying());
    QCOMPARE(connection->model().model, QStringLiteral("remote-model"));
    QVERIFY(connection->modelName().contains(QStringLiteral("remote-model")));
    QCOMPARE(connection->apiKey(), key);
    const QString redacted = connection->exportRedactor().redact(QStringLiteral("key ") + key);
    QVERIFY2(!redacted.contains(key), qPrintable(redacted));
}

QTEST_GUILESS_MAIN(tst_ActiveConnection)
#include "tst_activeconnection.moc"
