// Settings › MCP servers (mcp.json) through the real window and dialog over the real core: a
// text the parser refuses keeps the dialog open with the reason and leaves the file byte for
// byte as it was; a valid text is written with its secrets moved into the keychain (an
// in-process SecretStore here) and references in the file; a keychain that does not take a
// secret refuses the save; the next start resolves the references and starts the server, or
// shows it down with the reason when the entry is gone.
#include "screenshots.h"

#include "core/console/agentruntime.h"
#include "core/console/activeconnection.h"
#include "core/console/mcpservers.h"
#include "core/console/runtimemonitor.h"
#include "core/console/mcpconfigfile.h"
#include "core/llm/secretstore.h"
#include "ui/window/consolewindow.h"
#include "ui/mcp/mcpconfigdialog.h"
#include "ui/common/noticebanner.h"

#include <QAction>
#include <QDialogButtonBox>
#include <QDir>
#include <QFile>
#include <QFontMetricsF>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSignalSpy>
#include <QStatusBar>
#include <QTemporaryDir>
#include <QTest>

#include <memory>

using namespace AgentConsole;
using namespace AgentConsole::Testing;

namespace {

constexpr int waitMs = 20000;
const QString token = QStringLiteral("Bearer tk-4f1e9a77c2");


QByteArray existingFile(); // an mcp.json with a reference, defined after the class (moc)

QByteArray readFile(const QString &path)
{
    QFile file(path);
    return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray("<missing>");
}

bool writeFile(const QString &path, const QByteArray &bytes)
{
    QFile file(path);
    return file.open(QIODevice::WriteOnly) && file.write(bytes) == bytes.size();
}

// The secret the store holds under `key`, read as the runtime reads it.
QString storedSecret(SecretStore &store, const QString &key)
{
    QObject context;
    std::optional<SecretAnswer> answer;
    store.read(key, &context, [&answer](const SecretAnswer &a) { answer = a; });
    if (!QTest::qWaitFor([&] { return answer.has_value(); }, waitMs))
        return QStringLiteral("<no answer>");
    return answer->status == SecretAnswer::Status::Found ? answer->secret
                                                         : QStringLiteral("<not found>");
}

} // namespace

class tst_McpConfigDialog final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void init();
    void cleanup();

    void editorShowsTheFileWhereItIsAndItsFormat();
    void refusedTextKeepsTheDialogAndTheFile_data();
    void refusedTextKeepsTheDialogAndTheFile();
    void validTextIsSavedWithTheSecretInTheKeychain();
    void failingKeychainRefusesTheSave();
    void emptyFileOffersTheExample();
    void nextStartResolvesTheSecretOrShowsTheServerDown();

private:
    bool startConsole();
    McpConfigDialog *openDialog(); // through Settings › MCP servers, loaded
    QString mcpPath() const { return m_dir->filePath(QStringLiteral("data/mcp.json")); }
    static QPlainTextEdit *editor(McpConfigDialog *dialog)
    {
        return dialog->findChild<QPlainTextEdit *>(QStringLiteral("mcpConfigText"));
    }
    static NoticeBanner *problem(McpConfigDialog *dialog)
    {
        return dialog->findChild<NoticeBanner *>(QStringLiteral("mcpConfigProblem"));
    }
    static QPushButton *saveButton(McpConfigDialog *dialog)
    {
        return dialog->findChild<QDialogButtonBox *>(QStringLiteral("mcpConfigButtons"))
            ->button(QDialogButtonBox::Ok);
    }

    std::unique_ptr<QTemporaryDir> m_dir;
    std::shared_ptr<MemorySecretStore> m_secrets;
    std::unique_ptr<AgentRuntime> m_runtime;
    std::unique_ptr<ConsoleWindow> m_window;
};

namespace {
// (After the class: moc loses its way in a raw string with "//" in it.)
QByteArray existingFile()
{
    return QByteArray(R"({
  "mcpServers": {
    "files": {"command": "mcp-server-filesystem", "args": ["/srv/kb"]},
    "tickets": {"url": "http://127.0.0.1:1/mcp",
                "headers": {"Authorization": "${keychain:mcp.tickets.Authorization}"}}
  }
}
)");
}
} // namespace

void tst_McpConfigDialog::init()
{
    m_dir = std::make_unique<QTemporaryDir>();
    QVERIFY(m_dir->isValid());
    m_secrets = std::make_shared<MemorySecretStore>();
}

void tst_McpConfigDialog::cleanup()
{
    m_window.reset();
    m_runtime.reset();
    m_dir.reset();
}

bool tst_McpConfigDialog::startConsole()
{
    m_window.reset();
    m_runtime.reset();
    RuntimeOptions options;
    options.dataDirectory = m_dir->filePath(QStringLiteral("data"));
    options.secrets = m_secrets;
    m_runtime = std::make_unique<AgentRuntime>(options);
    m_window = std::make_unique<ConsoleWindow>(m_runtime.get());
    m_window->resize(1100, 760);
    m_window->show();
    if (!QTest::qWaitForWindowExposed(m_window.get()))
        return false;
    QSignalSpy ready(m_runtime.get(), &AgentRuntime::ready);
    QSignalSpy settled(m_runtime->mcp(), &McpServers::settled);
    m_runtime->start();
    return ready.wait(waitMs) && (!settled.isEmpty() || settled.wait(waitMs));
}

McpConfigDialog *tst_McpConfigDialog::openDialog()
{
    auto *action = m_window->findChild<QAction *>(QStringLiteral("mcpConfigAction"));
    if (!action || !action->isEnabled())
        return nullptr;
    action->trigger();
    auto *dialog = m_window->findChild<McpConfigDialog *>();
    if (!dialog || !QTest::qWaitForWindowExposed(dialog))
        return nullptr;
    // Read off the GUI thread: editable once loaded.
    if (!QTest::qWaitFor([dialog] { return !editor(dialog)->isReadOnly(); }, waitMs))
        return nullptr;
    return dialog;
}

void tst_McpConfigDialog::editorShowsTheFileWhereItIsAndItsFormat()
{
    QVERIFY(QDir().mkpath(m_dir->filePath(QStringLiteral("data"))));
    QVERIFY(writeFile(mcpPath(), existingFile()));
    m_secrets->write(QStringLiteral("mcp.tickets.Authorization"), token, this, [](auto &&) {});
    QVERIFY(startConsole());
    McpConfigDialog *dialog = openDialog();
    QVERIFY(dialog);
    QCOMPARE(editor(dialog)->toPlainText().toUtf8(), existingFile());
    // Fixed-pitch as drawn, whatever fonts the machine has (fonts-noto-mono made Qt's own
    // fixed font one whose flags say otherwise): narrow and wide characters, the same width.
    const QFontMetricsF drawn(editor(dialog)->font());
    const qreal narrow = drawn.horizontalAdvance(QStringLiteral("iiiiiiiiii"));
    QVERIFY(narrow > 0);
    for (const char *wide : {"MMMMMMMMMM", "WWWWWWWWWW", "{{{{{{{{{{", "0000000000"})
        QCOMPARE(drawn.horizontalAdvance(QString::fromLatin1(wide)), narrow);
    const QString where = dialog->findChild<QLabel *>(QStringLiteral("mcpConfigPath"))->text();
    QVERIFY2(where.contains(QDir::toNativeSeparators(mcpPath())), qPrintable(where));
    QVERIFY(where.contains(QStringLiteral("\"mcpServers\"")));
    QVERIFY(where.contains(QStringLiteral("keychain")));
    QVERIFY(where.contains(QStringLiteral("restarts")));
    QVERIFY(!problem(dialog)->isVisible());
    // The example is offered for an empty file only.
    QVERIFY(!dialog->findChild<QPushButton *>(QStringLiteral("mcpConfigExample"))->isVisible());
    QVERIFY(!editor(dialog)->toPlainText().contains(token));
    QVERIFY(!saveScreenshot(dialog, QStringLiteral("mcp-settings-editor.png")).isEmpty());
    dialog->reject();
}

void tst_McpConfigDialog::refusedTextKeepsTheDialogAndTheFile_data()
{
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("reason");
    QTest::newRow("not JSON") << QStringLiteral("{\"mcpServers\": {\"files\": {\"command\": }}")
                              << QStringLiteral("not JSON");
    QTest::newRow("neither command nor url")
        << QStringLiteral("{\"mcpServers\": {\"tickets\": {\"headers\": {\"Authorization\": "
                          "\"Bearer x1234567\"}}}}")
        << QStringLiteral("server \"tickets\": give either \"command\" (stdio) or \"url\" (HTTP)");
    QTest::newRow("bad header value")
        << QStringLiteral("{\"mcpServers\": {\"tickets\": {\"url\": \"https://h/mcp\", "
                          "\"headers\": {\"X-Api-Key\": 42}}}}")
        << QStringLiteral("server \"tickets\": header \"X-Api-Key\"");
    QTest::newRow("empty") << QStringLiteral("   \n")
                           << QStringLiteral("the text is empty");
}

void tst_McpConfigDialog::refusedTextKeepsTheDialogAndTheFile()
{
    QFETCH(QString, text);
    QFETCH(QString, reason);
    QVERIFY(QDir().mkpath(m_dir->filePath(QStringLiteral("data"))));
    QVERIFY(writeFile(mcpPath(), existingFile()));
    QVERIFY(startConsole());
    McpConfigDialog *dialog = openDialog();
    QVERIFY(dialog);
    editor(dialog)->setPlainText(text);
    // The start itself read the file's reference; the save asks the keychain nothing.
    const int requestsBefore = m_secrets->requestCount();
    QTest::mouseClick(saveButton(dialog), Qt::LeftButton);
    QTRY_VERIFY_WITH_TIMEOUT(problem(dialog)->isVisible(), waitMs);
    const QString shown = problem(dialog)->text();
    QVERIFY2(shown.startsWith(QStringLiteral("Not saved: the file is as it was")),
             qPrintable(shown));
    QVERIFY2(shown.contains(reason), qPrintable(shown));
    QCOMPARE(problem(dialog)->tone(), Tone::Danger);
    // Still open, the text kept and editable, the file and the keychain untouched.
    QVERIFY(dialog->isVisible());
    QCOMPARE(editor(dialog)->toPlainText(), text);
    QVERIFY(!editor(dialog)->isReadOnly());
    QVERIFY(saveButton(dialog)->isEnabled());
    QCOMPARE(readFile(mcpPath()), existingFile());
    QCOMPARE(m_secrets->requestCount(), requestsBefore);
    if (QByteArray(QTest::currentDataTag()) == "neither command nor url")
        QVERIFY(!saveScreenshot(dialog, QStringLiteral("mcp-settings-refused.png")).isEmpty());
    dialog->reject();
}

void tst_McpConfigDialog::validTextIsSavedWithTheSecretInTheKeychain()
{
    QVERIFY(startConsole());
    McpConfigDialog *dialog = openDialog();
    QVERIFY(dialog);
    QVERIFY(!QFile::exists(mcpPath()));
    const QString text = QStringLiteral(
        "{\"mcpServers\": {\"tickets\": {\"url\": \"http://127.0.0.1:1/mcp\", "
        "\"headers\": {\"Authorization\": \"%1\", \"X-Tenant\": \"t1\"}}}}").arg(token);
    editor(dialog)->setPlainText(text);
    QSignalSpy accepted(dialog, &QDialog::accepted);
    QTest::mouseClick(saveButton(dialog), Qt::LeftButton);
    QVERIFY(accepted.wait(waitMs));
    QCOMPARE(dialog->movedSecrets(), 1);
    // The secret is in the keychain, the file holds the reference and nothing of the secret.
    QCOMPARE(storedSecret(*m_secrets, QStringLiteral("mcp.tickets.Authorization")), token);
    const QByteArray file = readFile(mcpPath());
    QVERIFY2(file.contains("\"Authorization\": \"${keychain:mcp.tickets.Authorization}\""),
             file.constData());
    QVERIFY(file.contains("\"X-Tenant\": \"t1\""));
    QVERIFY(!file.contains("tk-4f1e9a77c2"));
    QVERIFY(m_window->statusBar()->currentMessage().contains(
        QStringLiteral("(1 secret")));
    QVERIFY(m_window->statusBar()->currentMessage().contains(QStringLiteral("restarts")));
}

void tst_McpConfigDialog::failingKeychainRefusesTheSave()
{
    QVERIFY(QDir().mkpath(m_dir->filePath(QStringLiteral("data"))));
    QVERIFY(writeFile(mcpPath(), existingFile()));
    QVERIFY(startConsole());
    McpConfigDialog *dialog = openDialog();
    QVERIFY(dialog);
    m_secrets->failWith(QStringLiteral("the collection is locked"));
    const QString text = QStringLiteral(
        "{\"mcpServers\": {\"github\": {\"command\": \"npx\", \"env\": {\"GITHUB_TOKEN\": "
        "\"ghp-abcdef123456\"}}}}");
    editor(dialog)->setPlainText(text);
    QTest::mouseClick(saveButton(dialog), Qt::LeftButton);
    QTRY_VERIFY_WITH_TIMEOUT(problem(dialog)->isVisible(), waitMs);
    const QString shown = problem(dialog)->text();
    QVERIFY2(shown.contains(QStringLiteral("server \"github\": the keychain did not take the "
                                           "secret of env \"GITHUB_TOKEN\"")),
             qPrintable(shown));
    QVERIFY(shown.contains(QStringLiteral("not written to the file in plain text")));
    QVERIFY(!shown.contains(QStringLiteral("ghp-abcdef123456")));
    QVERIFY(dialog->isVisible());
    QCOMPARE(editor(dialog)->toPlainText(), text);
    QCOMPARE(readFile(mcpPath()), existingFile());
    dialog->reject();
}

void tst_McpConfigDialog::emptyFileOffersTheExample()
{
    QVERIFY(startConsole());
    McpConfigDialog *dialog = openDialog();
    QVERIFY(dialog);
    QVERIFY(editor(dialog)->toPlainText().isEmpty());
    auto *example = dialog->findChild<QPushButton *>(QStringLiteral("mcpConfigExample"));
    QVERIFY(example->isVisible());
    QTest::mouseClick(example, Qt::LeftButton);
    QCOMPARE(editor(dialog)->toPlainText(), McpConfigFile::exampleText());
    QVERIFY(!example->isVisible());
    QSignalSpy accepted(dialog, &QDialog::accepted);
    QTest::mouseClick(saveButton(dialog), Qt::LeftButton);
    QVERIFY(accepted.wait(waitMs));
    // Its placeholder token went to the keychain like any other.
    QCOMPARE(storedSecret(*m_secrets, QStringLiteral("mcp.tickets.Authorization")),
             QStringLiteral("Bearer paste-the-token-here"));
    QVERIFY(!readFile(mcpPath()).contains("paste-the-token-here"));
}

void tst_McpConfigDialog::nextStartResolvesTheSecretOrShowsTheServerDown()
{
    QVERIFY(startConsole());
    McpConfigDialog *dialog = openDialog();
    QVERIFY(dialog);
    const QString secret = QStringLiteral("fk-19b2c3d4e5f6");
    editor(dialog)->setPlainText(QStringLiteral(
        "{\"mcpServers\": {\"fake\": {\"command\": \"%1\", \"args\": [\"normal\"], "
        "\"env\": {\"FAKE_API_KEY\": \"%2\"}}}}").arg(QStringLiteral(FAKE_MCP_SERVER), secret));
    QSignalSpy accepted(dialog, &QDialog::accepted);
    QTest::mouseClick(saveButton(dialog), Qt::LeftButton);
    QVERIFY(accepted.wait(waitMs));
    QVERIFY(readFile(mcpPath()).contains("${keychain:mcp.fake.FAKE_API_KEY}"));

    // The next start reads the entry (asynchronously) and starts the server with it.
    QVERIFY(startConsole());
    RuntimeStatus status = m_runtime->monitor()->status();
    QCOMPARE(status.mcpServers.size(), 1);
    QCOMPARE(status.mcpServers.first().state, McpServerStatus::State::Ready);
    QVERIFY(status.mcpServers.first().tools > 0);
    QVERIFY(!status.mcpServers.first().transport.contains(secret));
    // An export never carries it.
    const Redactor redactor = m_runtime->connection()->exportRedactor();
    QVERIFY(!redactor.redact(QStringLiteral("key ") + secret).contains(secret));

    // With the entry gone, the server is down with a reason in staff's words, never started.
    bool removed = false;
    m_secrets->remove(QStringLiteral("mcp.fake.FAKE_API_KEY"), this,
                      [&removed](const SecretAnswer &) { removed = true; });
    QTRY_VERIFY(removed);
    QVERIFY(startConsole());
    status = m_runtime->monitor()->status();
    QCOMPARE(status.mcpServers.size(), 1);
    QCOMPARE(status.mcpServers.first().state, McpServerStatus::State::Down);
    QCOMPARE(status.mcpServers.first().lastError,
             QStringLiteral("the secret of env \"FAKE_API_KEY\" is not in the keychain; type it "
                            "again in Settings › MCP servers"));
    QCOMPARE(status.mcpServers.first().tools, 0);
}

QTEST_MAIN(tst_McpConfigDialog)
#include "tst_mcpconfigdialog.moc"
