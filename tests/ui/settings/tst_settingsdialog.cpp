// Settings that stay and the key in the keychain, through the real window and dialog over the
// real core: a key typed in the masked field goes to the keychain (an in-process SecretStore
// here; tst_secretstore holds the real GNOME Keyring to the same contract) and the settings
// switch reads it from there; the key's variable wins and makes the field read-only; "Test
// connection" against the fake OpenAI server on 127.0.0.1 (connected, 401, a timeout); the
// dialog's values and the window's geometry stored and restored at the next start.
#include "fakeopenaiserver.h"
#include "screenshots.h"

#include "core/turn/agentloop.h"
#include "core/console/agentruntime.h"
#include "core/console/connectiontest.h"
#include "core/console/consolesettings.h"
#include "core/turn/turnresult.h"
#include "core/llm/modelerror.h"
#include "core/llm/secretstore.h"
#include "ui/window/mainwindow.h"
#include "ui/transcript/questioninput.h"
#include "ui/settings/settingsdialog.h"

#include <QAction>
#include <QApplication>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QElapsedTimer>
#include <QFile>
#include <QJsonArray>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QRadioButton>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include <memory>

using namespace AgentConsole;
using namespace AgentConsole::Testing;

namespace {

constexpr int waitMs = 20000;
const QByteArray keyVariable = "TST_SETTINGSDIALOG_KEY";
const QString typedKey = QStringLiteral("sk-typed-in-dialog-5e1f");

FakeResponse oneTokenCompletion()
{
    return FakeResponse::json(200, QJsonObject{
        {QStringLiteral("id"), QStringLiteral("c-1")},
        {QStringLiteral("model"), QStringLiteral("fake-model")},
        {QStringLiteral("choices"), QJsonArray{QJsonObject{
            {QStringLiteral("index"), 0},
            {QStringLiteral("message"), QJsonObject{{QStringLiteral("role"),
                                                     QStringLiteral("assistant")},
                                                    {QStringLiteral("content"),
                                                     QStringLiteral("p")}}},
            {QStringLiteral("finish_reason"), QStringLiteral("length")}}}}});
}

void retype(QLineEdit *edit, const QString &text)
{
    edit->setFocus();
    edit->selectAll();
    QTest::keyClick(edit, Qt::Key_Backspace);
    QTest::keyClicks(edit, text);
}

} // namespace

class tst_SettingsDialog final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void init();
    void cleanup();

    void typedKeyGoesToTheKeychainAndTheSwitchReadsIt();
    void variableWinsAndTheFieldSaysSo();
    void keychainFailureKeepsTheDialogOpen();
    void testConnection_data();
    void testConnection();
    void settingsAndWindowAreRestoredAtTheNextStart();

private:
    bool startConsole();
    ConnectionSettingsDialog *openSettings();
    // Points the dialog at the fake server with the given key variable.
    bool fillRemote(ConnectionSettingsDialog *dialog);

    std::unique_ptr<QTemporaryDir> m_dir;
    std::unique_ptr<FakeOpenAiServer> m_server;
    std::shared_ptr<MemorySecretStore> m_secrets;
    std::unique_ptr<ConsoleSettings> m_stored;
    std::unique_ptr<AgentRuntime> m_runtime;
    std::unique_ptr<ConsoleWindow> m_window;
};

void tst_SettingsDialog::initTestCase()
{
    qRegisterMetaType<AgentConsole::TurnResult>();
    qRegisterMetaType<AgentConsole::ConnectionTestResult>();
}

void tst_SettingsDialog::init()
{
    qunsetenv(keyVariable.constData());
    m_dir = std::make_unique<QTemporaryDir>();
    QVERIFY(m_dir->isValid());
    m_server = std::make_unique<FakeOpenAiServer>();
    QVERIFY(m_server->listen());
    m_secrets = std::make_shared<MemorySecretStore>();
    m_stored = std::make_unique<ConsoleSettings>(m_dir->filePath(QStringLiteral("agent-console.ini")));
    m_stored->load();
    QVERIFY(startConsole());
}

void tst_SettingsDialog::cleanup()
{
    m_window.reset();
    m_runtime.reset();
    m_stored.reset();
    m_server.reset();
    m_dir.reset();
    qunsetenv(keyVariable.constData());
}

bool tst_SettingsDialog::startConsole()
{
    RuntimeOptions options = m_stored->startOptions();
    options.dataDirectory = m_dir->filePath(QStringLiteral("data"));
    options.secrets = m_secrets;
    m_runtime = std::make_unique<AgentRuntime>(options);
    m_window = std::make_unique<ConsoleWindow>(m_runtime.get());
    m_window->useStoredSettings(m_stored.get());
    m_window->show();
    if (!QTest::qWaitForWindowExposed(m_window.get()))
        return false;
    QSignalSpy ready(m_runtime.get(), &AgentRuntime::ready);
    m_runtime->start();
    return ready.wait(waitMs);
}

ConnectionSettingsDialog *tst_SettingsDialog::openSettings()
{
    auto *action = m_window->findChild<QAction *>(QStringLiteral("connectionSettingsAction"));
    if (!action || !action->isEnabled())
        return nullptr;
    action->trigger();
    auto *dialog = m_window->findChild<ConnectionSettingsDialog *>();
    if (!dialog || !QTest::qWaitForWindowExposed(dialog))
        return nullptr;
    return dialog;
}

bool tst_SettingsDialog::fillRemote(ConnectionSettingsDialog *dialog)
{
    auto *openAi = dialog->findChild<QRadioButton *>(QStringLiteral("openAiProvider"));
    auto *baseUrl = dialog->findChild<QLineEdit *>(QStringLiteral("modelBaseUrl"));
    auto *model = dialog->findChild<QLineEdit *>(QStringLiteral("modelName"));
    auto *variable = dialog->findChild<QLineEdit *>(QStringLiteral("apiKeyVariable"));
    if (!openAi || !baseUrl || !model || !variable)
        return false;
    openAi->setChecked(true);
    retype(baseUrl, m_server->baseUrl().toString());
    retype(model, QStringLiteral("fake-model"));
    retype(variable, QString::fromLatin1(keyVariable));
    return dialog->problem().isEmpty();
}

void tst_SettingsDialog::typedKeyGoesToTheKeychainAndTheSwitchReadsIt()
{
    ConnectionSettingsDialog *dialog = openSettings();
    QVERIFY(dialog);
    QVERIFY(fillRemote(dialog));
    auto *key = dialog->findChild<QLineEdit *>(QStringLiteral("apiKey"));
    auto *state = dialog->findChild<QLabel *>(QStringLiteral("apiKeyState"));
    QVERIFY(key && state);
    QTRY_VERIFY(state->text().contains(QStringLiteral("no key is stored")));
    QVERIFY(!key->isReadOnly());
    QCOMPARE(key->echoMode(), QLineEdit::Password);
    key->setFocus();
    QTest::keyClicks(key, typedKey);
    // Masked: what is painted is not the key.
    QVERIFY(key->displayText() != typedKey);
    QVERIFY(!key->displayText().contains(QStringLiteral("sk-")));
    QVERIFY(!saveScreenshot(dialog, QStringLiteral("settings-dialog-key.png")).isEmpty());

    QSignalSpy changed(m_runtime.get(), &AgentRuntime::settingsChanged);
    auto *buttons = dialog->findChild<QDialogButtonBox *>(QStringLiteral("settingsButtons"));
    QTest::mouseClick(buttons->button(QDialogButtonBox::Ok), Qt::LeftButton);
    // Stored first, then the switch reads the keychain (asynchronously): Send waits for it.
    QTRY_VERIFY_WITH_TIMEOUT(m_secrets->contains(QStringLiteral("default")), waitMs);
    QVERIFY(changed.wait(waitMs) || !changed.isEmpty());
    QVERIFY(!m_runtime->isApplyingSettings());
    QCOMPARE(m_runtime->options().model.model, QStringLiteral("fake-model"));

    // The next model request carries the key from the keychain.
    m_server->enqueue(FakeResponse::events({{Sse::role()}, {Sse::content(QStringLiteral("Hi."))},
                                            {Sse::finish(QStringLiteral("stop"))},
                                            {Sse::done()}}));
    QSignalSpy finished(m_runtime->agentLoop(), &AgentLoop::turnFinished);
    m_window->questionInput()->setFocus();
    QTest::keyClicks(m_window->questionInput(), QStringLiteral("hello"));
    QTest::keyClick(m_window->questionInput(), Qt::Key_Return);
    QVERIFY(finished.wait(waitMs));
    QVERIFY(m_server->requestCount() >= 1);
    QCOMPARE(m_server->requests().first().headers.value("authorization"),
             QByteArray("Bearer ") + typedKey.toUtf8());

    // The key is in no settings file, only its variable's name.
    const QByteArray file = [this] {
        QFile f(m_stored->filePath());
        return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
    }();
    QVERIFY(file.contains("fake-model"));
    QVERIFY(!file.contains(typedKey.toUtf8()));
    QVERIFY(!file.contains("sk-"));

    // Opened again: the key is not read back into the field, which says one is stored.
    dialog = openSettings();
    QVERIFY(dialog);
    key = dialog->findChild<QLineEdit *>(QStringLiteral("apiKey"));
    state = dialog->findChild<QLabel *>(QStringLiteral("apiKeyState"));
    QTRY_VERIFY(state->text().contains(QStringLiteral("key stored in the OS keychain")));
    QVERIFY(key->text().isEmpty());
    dialog->reject();
}

void tst_SettingsDialog::variableWinsAndTheFieldSaysSo()
{
    qputenv(keyVariable.constData(), "sk-from-variable-77");
    ConnectionSettingsDialog *dialog = openSettings();
    QVERIFY(dialog);
    QVERIFY(fillRemote(dialog));
    auto *key = dialog->findChild<QLineEdit *>(QStringLiteral("apiKey"));
    auto *state = dialog->findChild<QLabel *>(QStringLiteral("apiKeyState"));
    QVERIFY(key->isReadOnly());
    QVERIFY2(state->text().contains(QStringLiteral("is set and wins")), qPrintable(state->text()));
    QCOMPARE(key->placeholderText(), QStringLiteral("from ") + QString::fromLatin1(keyVariable));
    QVERIFY(!saveScreenshot(dialog, QStringLiteral("settings-dialog-variable.png")).isEmpty());
    QSignalSpy changed(m_runtime.get(), &AgentRuntime::settingsChanged);
    dialog->accept();
    // The variable's key: applied at once, the keychain not asked for it.
    QCOMPARE(changed.size(), 1);
    QVERIFY(!m_secrets->contains(QStringLiteral("default")));
}

void tst_SettingsDialog::keychainFailureKeepsTheDialogOpen()
{
    m_secrets->failWith(QStringLiteral("The Secret Service is locked"));
    ConnectionSettingsDialog *dialog = openSettings();
    QVERIFY(dialog);
    QVERIFY(fillRemote(dialog));
    auto *state = dialog->findChild<QLabel *>(QStringLiteral("apiKeyState"));
    QTRY_VERIFY(state->text().contains(QStringLiteral("not available")));
    auto *key = dialog->findChild<QLineEdit *>(QStringLiteral("apiKey"));
    QTest::keyClicks(key, typedKey);
    QSignalSpy changed(m_runtime.get(), &AgentRuntime::settingsChanged);
    QSignalSpy accepted(dialog, &QDialog::accepted);
    dialog->accept();
    auto *problem = dialog->findChild<QWidget *>(QStringLiteral("settingsProblem"));
    QTRY_VERIFY(problem->isVisible());
    QVERIFY(dialog->isVisible());
    QCOMPARE(accepted.size(), 0);
    QCOMPARE(changed.size(), 0);
    dialog->reject();
}

void tst_SettingsDialog::testConnection_data()
{
    QTest::addColumn<int>("kind");
    QTest::addColumn<QString>("code");
    QTest::addColumn<QString>("expected");
    QTest::newRow("connected") << 0 << QString() << QStringLiteral("Connected: fake-model answered.");
    QTest::newRow("401") << 1 << ModelError::AuthFailed
                         << QStringLiteral("The model service did not accept the credentials.");
    QTest::newRow("timeout") << 2 << ModelError::Timeout
                             << QStringLiteral("The model did not respond in time.");
}

void tst_SettingsDialog::testConnection()
{
    QFETCH(int, kind);
    QFETCH(QString, code);
    QFETCH(QString, expected);
    if (kind == 0)
        m_server->enqueue(oneTokenCompletion());
    else if (kind == 1)
        m_server->enqueue(FakeResponse::error(401, QStringLiteral("invalid_api_key"),
                                              QStringLiteral("Incorrect API key provided")));
    else {
        FakeResponse silent;
        silent.headerDelayMs = -1; // never answers
        m_server->enqueue(silent);
    }
    ConnectionSettingsDialog *dialog = openSettings();
    QVERIFY(dialog);
    QVERIFY(fillRemote(dialog));
    dialog->setConnectionTestTimeoutMs(400);
    auto *key = dialog->findChild<QLineEdit *>(QStringLiteral("apiKey"));
    QTest::keyClicks(key, typedKey); // a key typed, not stored yet, is the one tested
    auto *button = dialog->findChild<QPushButton *>(QStringLiteral("testConnection"));
    auto *result = dialog->findChild<QLabel *>(QStringLiteral("connectionTestResult"));
    QVERIFY(button && result && button->isEnabled());
    QElapsedTimer clock;
    clock.start();
    QTest::mouseClick(button, Qt::LeftButton);
    QVERIFY(!button->isEnabled()); // one test at a time; the window keeps painting meanwhile
    QTRY_VERIFY_WITH_TIMEOUT(button->isEnabled(), waitMs);
    QVERIFY2(result->text().contains(expected), qPrintable(result->text()));
    QCOMPARE(result->property("code").toString(), code);
    QCOMPARE(result->property("connected").toBool(), kind == 0);
    if (!code.isEmpty())
        QVERIFY(result->text().contains(code));
    QVERIFY(result->text().contains(QStringLiteral("key typed here")));
    if (kind == 2)
        QVERIFY2(clock.elapsed() < 5000, "the test is bounded by its timeout");

    // One cheap request: a one-token completion, unstreamed, with the typed key.
    QCOMPARE(m_server->requestCount(), 1);
    const RecordedRequest &request = m_server->requests().first();
    QCOMPARE(request.path, QByteArray("/v1/chat/completions"));
    QCOMPARE(request.json.value(QStringLiteral("max_tokens")).toInt(), 1);
    QCOMPARE(request.json.value(QStringLiteral("stream")).toBool(), false);
    QCOMPARE(request.headers.value("authorization"), QByteArray("Bearer ") + typedKey.toUtf8());
    // The test stores nothing and changes nothing.
    QVERIFY(!m_secrets->contains(QStringLiteral("default")));
    QCOMPARE(m_runtime->options().model.provider, ModelOptions::Provider::Offline);
    const QString name = QStringLiteral("settings-dialog-test-%1.png")
                             .arg(QString::fromLatin1(QTest::currentDataTag()).replace(QLatin1Char(' '), QLatin1Char('-')));
    QVERIFY(!saveScreenshot(dialog, name).isEmpty());
    dialog->reject();
}

void tst_SettingsDialog::settingsAndWindowAreRestoredAtTheNextStart()
{
    qputenv(keyVariable.constData(), "sk-from-variable-77");
    ConnectionSettingsDialog *dialog = openSettings();
    QVERIFY(dialog);
    QVERIFY(fillRemote(dialog));
    auto *stream = dialog->findChild<QWidget *>(QStringLiteral("streamAnswers"));
    QVERIFY(stream);
    dialog->findChild<QLineEdit *>(QStringLiteral("ledgerSpec"))->setText(QStringLiteral("sqlite"));
    auto *language = dialog->findChild<QComboBox *>(QStringLiteral("language"));
    language->setCurrentIndex(language->findData(QStringLiteral("zh_CN")));
    dialog->accept();
    QCOMPARE(m_runtime->options().model.model, QStringLiteral("fake-model"));
    m_window->resize(720, 530);
    m_window->close(); // saves the geometry and the docks

    // The next start, from the same file.
    m_window.reset();
    m_runtime.reset();
    m_stored = std::make_unique<ConsoleSettings>(m_dir->filePath(QStringLiteral("agent-console.ini")));
    m_stored->load();
    QVERIFY2(m_stored->problems().isEmpty(), qPrintable(m_stored->problems().join('\n')));
    QCOMPARE(m_stored->settings().language, QStringLiteral("zh_CN"));
    QCOMPARE(m_stored->settings().ledgerSpec, QStringLiteral("sqlite"));
    QVERIFY(!m_stored->settings().windowGeometry.isEmpty());
    QVERIFY(startConsole());
    QCOMPARE(m_runtime->options().model.provider, ModelOptions::Provider::OpenAiCompatible);
    QCOMPARE(m_runtime->options().model.baseUrl, m_server->baseUrl().toString());
    QCOMPARE(m_runtime->options().model.apiKeyEnv, QString::fromLatin1(keyVariable));
    QCOMPARE(m_window->size(), QSize(720, 530));
    dialog = openSettings();
    QVERIFY(dialog);
    QCOMPARE(dialog->findChild<QComboBox *>(QStringLiteral("language"))->currentData().toString(),
             QStringLiteral("zh_CN"));
    QCOMPARE(dialog->findChild<QLineEdit *>(QStringLiteral("modelName"))->text(),
             QStringLiteral("fake-model"));
    dialog->reject();
}

QTEST_MAIN(tst_SettingsDialog)
#include "tst_settingsdialog.moc"
