// The window's MCP parts (issue #12 §2/§3): View › MCP servers lists a ready and a down
// server with their tools, policy chips and who decided each; Settings › MCP tool policies
// sets staff's policy on the running runtime (and in the stored settings); a tool's card says
// who chose its policy, and that annotations are hints where they relax a safeguard.
// Screenshots go to AGENT_CONSOLE_SCREENSHOT_DIR (build/screenshots).
#include "consolefixture.h"
#include "screenshots.h"

#include "core/agent/consolesettings.h"
#include "core/resilience/circuitbreaker.h"
#include "core/tools/toolregistry.h"
#include "ui/mcppolicydialog.h"
#include "ui/mcpserversdock.h"
#include "ui/statuschip.h"
#include "ui/toolcallcard.h"

#include <QAction>
#include <QApplication>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QPushButton>
#include <QSettings>
#include <QVBoxLayout>

using namespace AgentConsole;
using namespace AgentConsole::Testing;

namespace {

constexpr int kWaitMs = 20000;

QAction *action(QWidget *window, const char *name)
{
    return window->findChild<QAction *>(QLatin1String(name));
}

} // namespace

class tst_McpUi : public QObject
{
    Q_OBJECT

private slots:
    void init();
    void cleanup();
    void dockListsReadyAndDownServersWithPolicies();
    void circuitOpenIsShown();
    void staffOverrideAppliesLiveAndIsStored();
    void cardsSayWhoChoseThePolicy();
    void emptyStateSaysHowToAddAServer();
    void aServerNotReadyIsNamedUnderTheAnswer();

private:
    bool startWithServers(RuntimeOptions options = {});
    McpServersDock *openDock();

    std::unique_ptr<ConsoleFixture> m_console;
    std::unique_ptr<QTemporaryDir> m_config;
};

void tst_McpUi::init()
{
    m_console = std::make_unique<ConsoleFixture>();
    m_config = std::make_unique<QTemporaryDir>();
}

void tst_McpUi::cleanup()
{
    m_console.reset();
    m_config.reset();
}

bool tst_McpUi::startWithServers(RuntimeOptions options)
{
    const QString path = m_config->filePath(QStringLiteral("mcp.json"));
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly))
        return false;
    const QJsonObject servers{
        {QStringLiteral("broken"),
         QJsonObject{{QStringLiteral("command"),
                      m_config->filePath(QStringLiteral("no-such-program"))}}},
        {QStringLiteral("fake"),
         QJsonObject{{QStringLiteral("command"), QStringLiteral(FAKE_MCP_SERVER)},
                     {QStringLiteral("args"), QJsonArray{QStringLiteral("normal")}}}}};
    file.write(QJsonDocument(QJsonObject{{QStringLiteral("mcpServers"), servers}}).toJson());
    file.close();
    options.mcpConfigFile = path;
    if (!m_console->start(options))
        return false;
    // Settled: the fake listed its tools, the broken one failed its first start.
    return QTest::qWaitFor([this] {
        const QList<McpServerStatus> servers = m_console->runtime->status().mcpServers;
        return servers.size() == 2
            && servers[0].state == McpServerStatus::State::Down
            && servers[1].state == McpServerStatus::State::Ready;
    }, kWaitMs);
}

McpServersDock *tst_McpUi::openDock()
{
    McpServersDock *dock = m_console->window->mcpServersDock();
    if (!dock)
        return nullptr;
    QAction *show = action(m_console->window.get(), "mcpServersAction");
    if (show && !dock->isVisible())
        show->trigger();
    return dock;
}

void tst_McpUi::dockListsReadyAndDownServersWithPolicies()
{
    QVERIFY(startWithServers());
    McpServersDock *dock = openDock();
    QVERIFY(dock);
    QVERIFY(dock->isVisible());
    QCOMPARE(dock->serverNames(), QStringList({"broken", "fake"}));
    QTRY_COMPARE_WITH_TIMEOUT(dock->serverStateText("fake"), QStringLiteral("Ready"), kWaitMs);
    QCOMPARE(dock->serverStateTone("fake"), Tone::Success);
    QVERIFY2(dock->serverDetailText("fake").contains("offered"),
             qPrintable(dock->serverDetailText("fake")));

    // Down, in staff words (not the transport's text), with its restart counting down.
    QTRY_COMPARE_WITH_TIMEOUT(dock->serverStateText("broken"), QStringLiteral("Down"), kWaitMs);
    QCOMPARE(dock->serverStateTone("broken"), Tone::Danger);
    const QString down = dock->serverDetailText("broken");
    QVERIFY2(down.startsWith("Down: the program could not be started"), qPrintable(down));
    QVERIFY2(!down.contains("TransportFailed") && !down.contains("no-such-program"),
             qPrintable(down));
    QTRY_VERIFY_WITH_TIMEOUT(dock->serverDetailText("broken").contains("Restarts in")
                                 || dock->serverStateText("broken") != QLatin1String("Down"),
                             kWaitMs);
    QVERIFY(dock->toolNames("broken").isEmpty());

    const QStringList tools = dock->toolNames("fake");
    QVERIFY2(tools.contains("echo") && tools.contains("write_thing")
                 && tools.contains("idempotent_thing"),
             qPrintable(tools.join(',')));
    QCOMPARE(dock->toolPolicyText("fake", "echo"), QStringLiteral("read"));
    QCOMPARE(dock->toolDeciderText("fake", "echo"), QStringLiteral("from annotations (hints)"));
    QCOMPARE(dock->toolNoteText("fake", "echo"),
             QStringLiteral("Hints, not verified: retried without confirmation"));
    QCOMPARE(dock->toolPolicyText("fake", "idempotent_thing"), QStringLiteral("idempotent write"));
    QVERIFY(!dock->toolNoteText("fake", "idempotent_thing").isEmpty());
    // No annotations: the safe default, nothing relaxed, nothing to warn about.
    QCOMPARE(dock->toolPolicyText("fake", "write_thing"), QStringLiteral("confirm first"));
    QCOMPARE(dock->toolDeciderText("fake", "write_thing"), QStringLiteral("from annotations"));
    QVERIFY(dock->toolNoteText("fake", "write_thing").isEmpty());
    const QString note = dock->serverNoteText("fake");
    QVERIFY2(note.contains("not verified") && note.contains("validated")
                 && note.contains("deadline"), qPrintable(note));
    QVERIFY(dock->serverNoteText("broken").isEmpty());
    QVERIFY(dock->emptyText().isEmpty());

    dock->setFloating(true);
    dock->resize(560, 760);
    QVERIFY(!saveScreenshot(dock, QStringLiteral("mcp-server-list.png")).isEmpty());
}

void tst_McpUi::circuitOpenIsShown()
{
    QVERIFY(startWithServers());
    McpServersDock *dock = openDock();
    QTRY_COMPARE_WITH_TIMEOUT(dock->serverStateText("fake"), QStringLiteral("Ready"), kWaitMs);
    CircuitBreaker *breaker = m_console->runtime->breakers()->breaker(QStringLiteral("mcp:fake"));
    for (int i = 0; i < 50 && breaker->state() != CircuitBreaker::State::Open; ++i) {
        if (breaker->tryAcquire())
            breaker->recordFailure(std::chrono::milliseconds(1));
    }
    QCOMPARE(breaker->state(), CircuitBreaker::State::Open);
    QTRY_COMPARE(dock->serverStateText("fake"), QStringLiteral("Circuit open"));
    QCOMPARE(dock->serverStateTone("fake"), Tone::Danger);
    QVERIFY2(dock->serverDetailText("fake").contains("they fail fast for"),
             qPrintable(dock->serverDetailText("fake")));
    QVERIFY(dock->isTicking()); // the cool-down counts down
}

void tst_McpUi::staffOverrideAppliesLiveAndIsStored()
{
    ConsoleSettings settings(m_config->filePath(QStringLiteral("console.ini")));
    settings.load();
    QVERIFY(startWithServers());
    m_console->window->useStoredSettings(&settings);
    McpServersDock *dock = openDock();
    QTRY_COMPARE_WITH_TIMEOUT(dock->serverStateText("fake"), QStringLiteral("Ready"), kWaitMs);

    QAction *open = action(m_console->window.get(), "mcpPoliciesAction");
    QVERIFY(open);
    open->trigger();
    auto *dialog = m_console->window->findChild<McpPolicyDialog *>();
    QVERIFY(dialog);
    QTRY_VERIFY(dialog->isVisible());
    QComboBox *echo = dialog->choiceFor(QStringLiteral("fake/echo"));
    QVERIFY(echo);
    QCOMPARE(echo->currentText(), QStringLiteral("As annotated (read)"));
    QVERIFY(!dialog->choiceFor(QStringLiteral("broken/anything")));
    echo->setCurrentIndex(echo->findData(QStringLiteral("confirm")));
    QCOMPARE(echo->currentText(), QStringLiteral("confirm first"));
    QVERIFY(!saveScreenshot(dialog, QStringLiteral("mcp-policy-dialog.png")).isEmpty());

    QSignalSpy toolsChanged(m_console->runtime.get(), &AgentRuntime::toolsChanged);
    dialog->findChild<QDialogButtonBox *>()->button(QDialogButtonBox::Ok)->click();
    QTRY_VERIFY(m_console->window->findChild<McpPolicyDialog *>() == nullptr
                || !m_console->window->findChild<McpPolicyDialog *>()->isVisible());
    QCOMPARE(m_console->runtime->mcpToolPolicies(),
             (QMap<QString, QString>{{"fake/echo", "confirm"}}));
    QVERIFY(!toolsChanged.isEmpty());
    // The running console: the tool now asks first.
    const ToolLabels labels = m_console->loop()->toolLabels(QStringLiteral("fake__echo"));
    QCOMPARE(labels.policyOrigin.source, ToolLabels::PolicyOrigin::Source::Staff);
    QVERIFY(!labels.confirmTitle.isEmpty());
    QTRY_COMPARE(dock->toolDeciderText("fake", "echo"), QStringLiteral("set by staff"));
    QCOMPARE(dock->toolPolicyText("fake", "echo"), QStringLiteral("confirm first"));
    QVERIFY(dock->toolNoteText("fake", "echo").isEmpty());
    // Kept for the next start.
    QCOMPARE(settings.settings().mcpToolPolicies,
             (QMap<QString, QString>{{"fake/echo", "confirm"}}));
    QSettings stored(settings.filePath(), QSettings::IniFormat);
    QCOMPARE(stored.value(QStringLiteral("mcpPolicies/fake/echo")).toString(),
             QStringLiteral("confirm"));

    // A bad word never reaches the runtime.
    QString error;
    QVERIFY(!m_console->runtime->setMcpToolPolicies({{"fake/echo", "sometimes"}}, &error));
    QVERIFY2(error.contains("fake/echo"), qPrintable(error));
    QCOMPARE(m_console->runtime->mcpToolPolicies().value("fake/echo"), QStringLiteral("confirm"));
}

void tst_McpUi::cardsSayWhoChoseThePolicy()
{
    RuntimeOptions options;
    options.mcpToolPolicies = {{"fake/write_thing", "read"}}; // as stored settings give it
    QVERIFY(startWithServers(options));
    QTRY_VERIFY_WITH_TIMEOUT(m_console->runtime->tools()->find(QStringLiteral("fake__echo")),
                             kWaitMs);
    const auto cardFor = [this](const QString &tool, QWidget *parent) {
        ToolCallRecord call;
        call.index = 0;
        call.name = tool;
        call.labels = m_console->loop()->toolLabels(tool);
        call.arguments = QJsonObject{{QStringLiteral("title"), QStringLiteral("Refund")}};
        call.state = ToolCallRecord::State::Finished;
        call.result = ToolResult::ok(QStringLiteral("The tool answered."), QJsonObject{});
        AttemptRecord attempt;
        attempt.attempt = 1;
        attempt.durationMs = 42;
        call.attempts = {attempt};
        call.totalMs = 42;
        auto *card = new ToolCallCard(parent);
        card->setToolCall(call);
        return card;
    };
    QWidget cards;
    auto *layout = new QVBoxLayout(&cards);
    ToolCallCard *overridden = cardFor(QStringLiteral("fake__write_thing"), &cards);
    ToolCallCard *hinted = cardFor(QStringLiteral("fake__idempotent_thing"), &cards);
    ToolCallCard *safe = cardFor(QStringLiteral("fake__echo"), &cards);
    layout->addWidget(overridden);
    layout->addWidget(hinted);
    layout->addWidget(safe);
    cards.resize(620, cards.sizeHint().height());
    cards.show();
    QVERIFY(QTest::qWaitForWindowExposed(&cards));

    QCOMPARE(overridden->policyNoteText(),
             QStringLiteral("Policy set by staff: read (annotations said: confirm first)"));
    QCOMPARE(hinted->policyNoteText(),
             QStringLiteral("Policy from the server's annotations (hints, not verified): "
                            "idempotent write"));
    QCOMPARE(safe->policyNoteText(),
             QStringLiteral("Policy from the server's annotations (hints, not verified): read"));
    const QLabel *note = hinted->findChild<QLabel *>(QStringLiteral("policyNote"));
    QVERIFY(note && note->isVisible());
    QVERIFY2(note->toolTip().contains("may not be trusted")
                 && note->toolTip().contains("validated") && note->toolTip().contains("deadline"),
             qPrintable(note->toolTip()));
    // A built-in tool's card says nothing of the kind.
    const std::unique_ptr<ToolCallCard> builtIn(cardFor(QStringLiteral("queryOrderStatus"),
                                                        nullptr));
    QVERIFY(builtIn->policyNoteText().isEmpty());
    QVERIFY(!saveScreenshot(&cards, QStringLiteral("mcp-card-override.png")).isEmpty());
}

void tst_McpUi::emptyStateSaysHowToAddAServer()
{
    QVERIFY(m_console->start());
    McpServersDock *dock = openDock();
    QVERIFY(dock);
    QTRY_VERIFY(!dock->emptyText().isEmpty());
    QVERIFY(dock->serverNames().isEmpty());
    // It names the Settings entry that edits mcp.json, in the words of the menu.
    QString editorEntry;
    for (QWidget *top : QApplication::topLevelWidgets()) {
        for (const QAction *action : top->findChildren<QAction *>()) {
            if (action->text().contains(QLatin1String("mcp.json")))
                editorEntry = QString(action->text()).remove(QLatin1Char('&'));
        }
    }
    QVERIFY(!editorEntry.isEmpty());
    QVERIFY2(dock->emptyText().contains(editorEntry), qPrintable(dock->emptyText()));
    QVERIFY(dock->emptyText().contains(QDir::toNativeSeparators(m_console->dataDir.path())));
}

// Ready before asked, in the window: a question asked while a server is still starting waits
// for it (bounded), then the answer says which server was not ready and whose tools the model
// was not offered.
void tst_McpUi::aServerNotReadyIsNamedUnderTheAnswer()
{
    const QString path = m_config->filePath(QStringLiteral("mcp.json"));
    QFile file(path);
    QVERIFY(file.open(QIODevice::WriteOnly));
    const QJsonObject servers{
        {QStringLiteral("silent"),
         QJsonObject{{QStringLiteral("command"), QStringLiteral(FAKE_MCP_SERVER)},
                     {QStringLiteral("args"), QJsonArray{QStringLiteral("no-init")}}}}};
    file.write(QJsonDocument(QJsonObject{{QStringLiteral("mcpServers"), servers}}).toJson());
    file.close();
    RuntimeOptions options;
    options.mcpConfigFile = path;
    options.mcpReadyWaitMs = 300;
    QVERIFY(m_console->start(options));
    bool ok = false;
    const TurnResult result =
        m_console->askAndWait(QStringLiteral("Where is order A1001?"), &ok);
    QVERIFY(ok);
    QCOMPARE(result.serversNotReady, QStringList{QStringLiteral("silent")});
    auto *chip = m_console->window->findChild<StatusChip *>(QStringLiteral("serversNotReadyChip"));
    QVERIFY(chip);
    QTRY_VERIFY_WITH_TIMEOUT(chip->isVisible(), kWaitMs);
    QCOMPARE(chip->text(), QStringLiteral("Not offered: silent"));
    QCOMPARE(chip->tone(), Tone::Warning);
    QVERIFY(chip->toolTip().contains(QStringLiteral("not ready")));
    QVERIFY(!saveScreenshot(m_console->window.get(), QStringLiteral("mcp-server-not-ready.png"))
                 .isEmpty());
}

QTEST_MAIN(tst_McpUi)
#include "tst_mcpui.moc"
