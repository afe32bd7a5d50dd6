// Settings that stay and the key in the keychain, through the real window and dialog over the
// real core: a key typed in the masked field goes to the keychain (an in-process SecretStore
// here; tst_secretstore holds the real GNOME Keyring to the same contract) and the settings
// switch reads it from there; the key's variable wins and makes the field read-only; "Test
// connection" against the fake OpenAI server on 127.0.0.1 (connected, 401, a timeout) and a
// closed loopback port, in staff words (English and Chinese), forgotten when the settings it
// tested change; the presets of local servers; a keychain's own error text never shown; the
// dialog's values and the window's geometry stored and restored at the next start.
#include "closedport.h"
#include "fakeopenaiserver.h"
#include "screenshots.h"

#include "core/turn/agentloop.h"
#include "core/console/agentruntime.h"
#include "core/console/activeconnection.h"
#include "core/console/connectiontest.h"
#include "core/console/consolesettings.h"
#include "core/turn/turnresult.h"
#include "core/llm/modelerror.h"
#include "core/llm/secretstore.h"
#include "ui/common/noticebanner.h"
#include "ui/window/consolewindow.h"
#include "ui/transcript/questioninput.h"
#include "ui/settings/connectionsettingsdialog.h"
#include "ui/window/consolelanguage.h"

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
#include <QScopeGuard>
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
    return FakeResponse::json(
        200,
        QJsonObject{{QStringLiteral("id"), QStringLiteral("c-1")},
                    {QStringLiteral("model"), QStringLiteral("fake-model")},
                    {QStringLiteral("choices"),
                     QJsonArray{QJsonObject{
                         {QStringLiteral("index"), 0},
                         {QStringLiteral("message"),
                          QJsonObject{{QStringLiteral("role"), QStringLiteral("assistant")},
                                      {QStringLiteral("content"), QStringLiteral("p")}}},
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
    void nothingListeningIsSaidInStaffWords_data();
    void nothingListeningIsSaidInStaffWords();
    void theResultIsForgottenWhenTheProviderChanges();
    void presetsSayWhereAndWhetherAKeyIsNeeded();
    void settingsAndWindowAreRestoredAtTheNextStart();
    void theTeamDatabaseIsSetForTheNextStart();

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
    m_stored = std::make_unique<ConsoleSettings>(
        m_dir->filePath(QStringLiteral("agent-console.ini")));
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

    QSignalSpy changed(m_runtime->connection(), &ActiveConnection::settingsChanged);
    auto *buttons = dialog->findChild<QDialogButtonBox *>(QStringLiteral("settingsButtons"));
    QTest::mouseClick(buttons->button(QDialogButtonBox::Ok), Qt::LeftButton);
    // Stored first, then the switch reads the keychain (asynchronously): Send waits for it.
    QTRY_VERIFY_WITH_TIMEOUT(m_secrets->contains(QStringLiteral("default")), waitMs);
    QVERIFY(changed.wait(waitMs) || !changed.isEmpty());
    QVERIFY(!m_runtime->connection()->isApplying());
    QCOMPARE(m_runtime->options().model.model, QStringLiteral("fake-model"));

    // The next model request carries the key from the keychain.
    m_server->enqueue(FakeResponse::events({{Sse::role()},
                                            {Sse::content(QStringLiteral("Hi."))},
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
    QSignalSpy changed(m_runtime->connection(), &ActiveConnection::settingsChanged);
    dialog->accept();
    // The variable's key: applied at once, the keychain not asked for it.
    QCOMPARE(changed.size(), 1);
    QVERIFY(!m_secrets->contains(QStringLiteral("default")));
}

void tst_SettingsDialog::keychainFailureKeepsTheDialogOpen()
{
    // What QtKeychain says where no D-Bus session can be started: the local log's, not staff's.
    const QString raw = QStringLiteral("Failed to execute child process \u201cdbus-launch\u201d "
                                       "(No such file or directory)");
    m_secrets->failWith(raw);
    ConnectionSettingsDialog *dialog = openSettings();
    QVERIFY(dialog);
    QVERIFY(fillRemote(dialog));
    auto *state = dialog->findChild<QLabel *>(QStringLiteral("apiKeyState"));
    QTRY_VERIFY(state->text().contains(QStringLiteral("cannot be reached")));
    QVERIFY2(!state->text().contains(QStringLiteral("dbus")), qPrintable(state->text()));
    auto *key = dialog->findChild<QLineEdit *>(QStringLiteral("apiKey"));
    QTest::keyClicks(key, typedKey);
    QSignalSpy changed(m_runtime->connection(), &ActiveConnection::settingsChanged);
    QSignalSpy accepted(dialog, &QDialog::accepted);
    dialog->accept();
    auto *problem = dialog->findChild<QWidget *>(QStringLiteral("settingsProblem"));
    QTRY_VERIFY(problem->isVisible());
    QVERIFY(dialog->isVisible());
    QCOMPARE(accepted.size(), 0);
    QCOMPARE(changed.size(), 0);
    bool saidNotStored = false;
    for (const QLabel *label : dialog->findChildren<QLabel *>()) {
        QVERIFY2(!label->text().contains(QStringLiteral("dbus"))
                     && !label->text().contains(QStringLiteral("Failed to execute")),
                 qPrintable(label->text()));
        saidNotStored |= label->text().contains(QStringLiteral("could not keep it"));
    }
    QVERIFY(saidNotStored);
    dialog->reject();
}

void tst_SettingsDialog::testConnection_data()
{
    QTest::addColumn<int>("kind");
    QTest::addColumn<QString>("code");
    QTest::addColumn<QString>("expected");
    QTest::newRow("connected") << 0 << QString()
                               << QStringLiteral("Connected: fake-model answered.");
    QTest::newRow("401") << 1 << ModelError::AuthFailed
                         << QStringLiteral("Not connected: The server refused the API key "
                                           "(HTTP 401).");
    QTest::newRow("timeout") << 2 << ModelError::Timeout
                             << QStringLiteral("did not answer within 0.4 s.");
}

void tst_SettingsDialog::testConnection()
{
    QFETCH(int, kind);
    QFETCH(QString, code);
    QFETCH(QString, expected);
    if (kind == 0) {
        m_server->enqueue(FakeResponse::models({QStringLiteral("fake-model")}));
        m_server->enqueue(oneTokenCompletion());
    } else if (kind == 1) {
        m_server->enqueue(FakeResponse::error(401, QStringLiteral("invalid_api_key"),
                                              QStringLiteral("Incorrect API key provided")));
    } else {
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
    // Staff words: no wire name.
    QVERIFY2(!result->text().contains(QStringLiteral("MODEL_")), qPrintable(result->text()));
    // Where the key came from, when a key was used or refused; not when nothing answered.
    QCOMPARE(result->text().contains(QStringLiteral("key typed here")), kind != 2);
    if (kind == 2)
        QVERIFY2(clock.elapsed() < 5000, "the test is bounded by its timeout");

    // Cheap requests, with the typed key: the model list, then (when it answered) one
    // unstreamed token.
    QCOMPARE(m_server->requestCount(), kind == 0 ? 2 : 1);
    const RecordedRequest &list = m_server->requests().first();
    QCOMPARE(list.path, QByteArray("/v1/models"));
    QCOMPARE(list.headers.value("authorization"), QByteArray("Bearer ") + typedKey.toUtf8());
    if (kind == 0) {
        const RecordedRequest &request = m_server->requests().last();
        QCOMPARE(request.path, QByteArray("/v1/chat/completions"));
        QCOMPARE(request.json.value(QStringLiteral("max_tokens")).toInt(), 1);
        QCOMPARE(request.json.value(QStringLiteral("stream")).toBool(), false);
        QCOMPARE(request.headers.value("authorization"),
                 QByteArray("Bearer ") + typedKey.toUtf8());
    }
    // The test stores nothing and changes nothing.
    QVERIFY(!m_secrets->contains(QStringLiteral("default")));
    QCOMPARE(m_runtime->options().model.provider, ModelOptions::Provider::Offline);
    const QString name = QStringLiteral("settings-dialog-test-%1.png")
                             .arg(QString::fromLatin1(QTest::currentDataTag())
                                      .replace(QLatin1Char(' '), QLatin1Char('-')));
    QVERIFY(!saveScreenshot(dialog, name).isEmpty());
    dialog->reject();
}

void tst_SettingsDialog::nothingListeningIsSaidInStaffWords_data()
{
    QTest::addColumn<QString>("language");
    QTest::addColumn<QString>("expected");
    QTest::newRow("en") << QStringLiteral("en")
                        << QStringLiteral("Not connected: Nothing is listening at 127.0.0.1:%1. "
                                          "Is the model server running?");
    QTest::newRow("zh_CN") << QStringLiteral(
        "zh_CN") << QStringLiteral("127.0.0.1:%1 上没有服务在监听。模型服务器是否已启动？");
}

// A closed loopback port: where nothing listens, in the staff member's language, with no
// wire name, no "temporarily unavailable" and no "(no key)". Screenshots in both languages.
void tst_SettingsDialog::nothingListeningIsSaidInStaffWords()
{
    QFETCH(QString, language);
    QFETCH(QString, expected);
    const ClosedPort closed;
    QVERIFY(closed.port() != 0);
    ConsoleLanguage::install(language);
    const auto english = qScopeGuard([] { ConsoleLanguage::install(QStringLiteral("en")); });
    ModelOptions model;
    model.provider = ModelOptions::Provider::OpenAiCompatible;
    model.baseUrl = QStringLiteral("http://127.0.0.1:%1/v1").arg(closed.port());
    model.model = QStringLiteral("llama3.1");
    model.apiKeyEnv = QString::fromLatin1(keyVariable);
    ConnectionSettingsDialog dialog(model, BackendOptions{}, m_secrets);
    dialog.show();
    QVERIFY(QTest::qWaitForWindowExposed(&dialog));
    auto *button = dialog.findChild<QPushButton *>(QStringLiteral("testConnection"));
    auto *result = dialog.findChild<QLabel *>(QStringLiteral("connectionTestResult"));
    QTest::mouseClick(button, Qt::LeftButton);
    QTRY_VERIFY_WITH_TIMEOUT(button->isEnabled(), waitMs);
    QVERIFY2(result->text().contains(expected.arg(closed.port())), qPrintable(result->text()));
    for (const QString &jargon : {QStringLiteral("MODEL_"), QStringLiteral("temporarily"),
                                  QStringLiteral("no key"), QStringLiteral("refused")})
        QVERIFY2(!result->text().contains(jargon), qPrintable(result->text()));
    QVERIFY(!saveScreenshot(
                 &dialog, QStringLiteral("settings-dialog-nothing-listening-%1.png").arg(language))
                 .isEmpty());
}

// A result says what the settings it tested came to: switching the provider (to offline and
// back), editing the address or choosing a preset forgets it, and a test still running is
// cancelled rather than shown later.
void tst_SettingsDialog::theResultIsForgottenWhenTheProviderChanges()
{
    m_server->enqueue(FakeResponse::models({QStringLiteral("fake-model")}));
    m_server->enqueue(oneTokenCompletion());
    ConnectionSettingsDialog *dialog = openSettings();
    QVERIFY(dialog);
    QVERIFY(fillRemote(dialog));
    auto *button = dialog->findChild<QPushButton *>(QStringLiteral("testConnection"));
    auto *result = dialog->findChild<QLabel *>(QStringLiteral("connectionTestResult"));
    auto *offline = dialog->findChild<QRadioButton *>(QStringLiteral("offlineProvider"));
    auto *openAi = dialog->findChild<QRadioButton *>(QStringLiteral("openAiProvider"));
    auto *baseUrl = dialog->findChild<QLineEdit *>(QStringLiteral("modelBaseUrl"));
    QTest::mouseClick(button, Qt::LeftButton);
    QTRY_VERIFY_WITH_TIMEOUT(button->isEnabled(), waitMs);
    QVERIFY(result->isVisible());
    QVERIFY(result->text().startsWith(QStringLiteral("Connected")));

    offline->click();
    QVERIFY(offline->isChecked());
    QVERIFY(!result->isVisible());
    QVERIFY(result->text().isEmpty());
    openAi->click();
    QVERIFY(openAi->isChecked());
    QVERIFY(!result->isVisible()); // back on the server: nothing old comes back

    // A test still running when the address changes is cancelled, and never shown.
    FakeResponse silent;
    silent.headerDelayMs = -1;
    m_server->enqueue(silent);
    auto *test = dialog->findChild<ConnectionTest *>();
    QVERIFY(test);
    QSignalSpy finished(test, &ConnectionTest::finished);
    QVERIFY(button->isEnabled());
    QTest::mouseClick(button, Qt::LeftButton);
    QVERIFY(test->isRunning());
    QVERIFY(result->isVisible()); // "Testing…"
    baseUrl->setFocus();
    QTest::keyClick(baseUrl, Qt::Key_Backspace);
    QVERIFY(!test->isRunning());
    QCOMPARE(finished.size(), 1); // cancelled
    QVERIFY(!result->isVisible());
    QVERIFY(button->isEnabled());
    dialog->reject();
}

// The presets of the servers staff run themselves: the address each usually has, and that
// no key is needed; Custom keeps what was typed for staff to change.
void tst_SettingsDialog::presetsSayWhereAndWhetherAKeyIsNeeded()
{
    ConnectionSettingsDialog *dialog = openSettings();
    QVERIFY(dialog);
    auto *preset = dialog->findChild<QComboBox *>(QStringLiteral("providerPreset"));
    auto *baseUrl = dialog->findChild<QLineEdit *>(QStringLiteral("modelBaseUrl"));
    auto *model = dialog->findChild<QLineEdit *>(QStringLiteral("modelName"));
    auto *key = dialog->findChild<QLineEdit *>(QStringLiteral("apiKey"));
    auto *state = dialog->findChild<QLabel *>(QStringLiteral("apiKeyState"));
    auto *openAi = dialog->findChild<QRadioButton *>(QStringLiteral("openAiProvider"));
    QTRY_VERIFY(state->text().contains(QStringLiteral("no key is stored")));
    const auto choose = [&](const QString &name) {
        const int index = preset->findText(name);
        if (index < 0)
            return false;
        preset->setCurrentIndex(index);
        Q_EMIT preset->activated(index);
        return true;
    };
    const QList<std::pair<QString, QString>> local{
        {QStringLiteral("Ollama (local)"), QStringLiteral("http://127.0.0.1:11434/v1")},
        {QStringLiteral("LM Studio (local)"), QStringLiteral("http://127.0.0.1:1234/v1")},
        {QStringLiteral("vLLM"), QStringLiteral("http://127.0.0.1:8000/v1")},
        {QStringLiteral("llama.cpp server"), QStringLiteral("http://127.0.0.1:8080/v1")}};
    for (const auto &[name, url] : local) {
        QVERIFY2(choose(name), qPrintable(name));
        QVERIFY(openAi->isChecked());
        QCOMPARE(baseUrl->text(), url);
        QVERIFY(!model->text().isEmpty());
        QCOMPARE(key->placeholderText(), QStringLiteral("not needed"));
        QVERIFY2(state->text().startsWith(name + QStringLiteral(" needs no key")),
                 qPrintable(state->text()));
    }
    QVERIFY(choose(QStringLiteral("OpenAI")));
    QCOMPARE(baseUrl->text(), QStringLiteral("https://api.openai.com/v1"));
    QVERIFY(key->placeholderText() != QStringLiteral("not needed"));
    QVERIFY(state->text().contains(QStringLiteral("no key is stored")));
    QVERIFY(choose(QStringLiteral("Custom")));
    QCOMPARE(baseUrl->text(), QStringLiteral("https://api.openai.com/v1")); // staff's to change
    QVERIFY(baseUrl->hasFocus());
    QVERIFY(!saveScreenshot(dialog, QStringLiteral("settings-dialog-presets.png")).isEmpty());
    dialog->reject();
}

// Issue #43 §2: Settings › Team database, for the next start; an address with a password, or
// beside a ledger of its own, cannot be applied and says why.
void tst_SettingsDialog::theTeamDatabaseIsSetForTheNextStart()
{
    ConnectionSettingsDialog *dialog = openSettings();
    QVERIFY(dialog);
    auto *team = dialog->findChild<QLineEdit *>(QStringLiteral("teamSpec"));
    auto *ledger = dialog->findChild<QLineEdit *>(QStringLiteral("ledgerSpec"));
    auto *problem = dialog->findChild<NoticeBanner *>(QStringLiteral("settingsProblem"));
    auto *buttons = dialog->findChild<QDialogButtonBox *>(QStringLiteral("settingsButtons"));
    QVERIFY(team && ledger && problem && buttons);
    team->setText(QStringLiteral("postgresql://agent:hunter2@db:5432/team"));
    QTRY_VERIFY(problem->isVisible());
    QVERIFY2(problem->text().contains(QLatin1String("leave the password out")),
             qPrintable(problem->text()));
    QVERIFY(!problem->text().contains(QLatin1String("hunter2")));
    QVERIFY(!buttons->button(QDialogButtonBox::Ok)->isEnabled());
    team->setText(QStringLiteral("postgresql://agent@db:5432/team"));
    ledger->setText(QStringLiteral("sqlite"));
    QVERIFY(problem->text().contains(QLatin1String("holds the ledger too")));
    QVERIFY(!buttons->button(QDialogButtonBox::Ok)->isEnabled());
    ledger->clear();
    QTRY_VERIFY(!problem->isVisible());
    QVERIFY(buttons->button(QDialogButtonBox::Ok)->isEnabled());
    QVERIFY(!saveScreenshot(dialog, QStringLiteral("settings-dialog-team.png")).isEmpty());
    QTest::mouseClick(buttons->button(QDialogButtonBox::Ok), Qt::LeftButton);
    QTRY_COMPARE(m_stored->settings().teamSpec, QStringLiteral("postgresql://agent@db:5432/team"));
    QCOMPARE(m_stored->startOptions().teamSpec, QStringLiteral("postgresql://agent@db:5432/team"));
    QVERIFY(m_runtime->options().teamSpec.isEmpty()); // this start goes on as it began
}

void tst_SettingsDialog::settingsAndWindowAreRestoredAtTheNextStart()
{
    qputenv(keyVariable.constData(), "sk-from-variable-77");
    ConnectionSettingsDialog *dialog = openSettings();
    QVERIFY(dialog);
    QVERIFY(fillRemote(dialog));
    auto *stream = dialog->findChild<QWidget *>(QStringLiteral("streamAnswers"));
    QVERIFY(stream);
    dialog->findChild<QLineEdit *>(QStringLiteral("ledgerSpec"))
        ->setText(QStringLiteral("sqlite"));
    auto *language = dialog->findChild<QComboBox *>(QStringLiteral("language"));
    language->setCurrentIndex(language->findData(QStringLiteral("zh_CN")));
    dialog->accept();
    QCOMPARE(m_runtime->options().model.model, QStringLiteral("fake-model"));
    m_window->resize(720, 530);
    m_window->close(); // saves the geometry and the docks

    // The next start, from the same file.
    m_window.reset();
    m_runtime.reset();
    m_stored = std::make_unique<ConsoleSettings>(
        m_dir->filePath(QStringLiteral("agent-console.ini")));
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
