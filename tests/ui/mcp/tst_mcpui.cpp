// The window's MCP parts (issue #12 §2/§3): View › MCP servers lists a ready and a down
// server with their tools, policy chips and who decided each; Settings › MCP tool policies
// sets staff's policy on the running runtime (and in the stored settings); a tool's card says
// who chose its policy, and that annotations are hints where they relax a safeguard.
// Screenshots go to AGENT_CONSOLE_SCREENSHOT_DIR (build/screenshots).
#include "consolefixture.h"
#include "fakeoauthserver.h"
#include "screenshots.h"

#include "core/console/mcpservers.h"
#include "core/console/runtimemonitor.h"
#include "core/console/runtimetestseam.h"
#include "core/console/consolesettings.h"
#include "core/llm/secretstore.h"
#include "core/resilience/circuitbreaker.h"
#include "core/resilience/failuretable.h"
#include "core/resilience/resultcode.h"
#include "core/tools/toolregistry.h"
#include "ui/window/consolelanguage.h"
#include "ui/mcp/mcppolicydialog.h"
#include "ui/mcp/mcpserversdock.h"
#include "ui/common/statuschip.h"
#include "ui/transcript/toolcallcard.h"

#include <QAction>
#include <QApplication>
#include <QComboBox>
#include <QFutureWatcher>
#include <QtConcurrent>
#include <QDialogButtonBox>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QPushButton>
#include <QRegularExpression>
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
    void anIsolatedServerSaysWhoWhenAndWhy();
    void staffOverrideAppliesLiveAndIsStored();
    void cardsSayWhoChoseThePolicy();
    void emptyStateSaysHowToAddAServer();
    void aServerNotReadyIsNamedUnderTheAnswer();
    void signInFollowsTheRuntime_data();
    void signInFollowsTheRuntime();

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
    ConsoleLanguage::install(QStringLiteral("en"));
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
        const QList<McpServerStatus> servers = m_console->runtime->monitor()->status().mcpServers;
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
    CircuitBreaker *breaker
        = RuntimeTestSeam::breakers(*m_console->runtime)->breaker(QStringLiteral("mcp:fake"));
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

// A lead's isolation of the server (docs/TEAM.md) is told in core's words, not as an open
// circuit.
void tst_McpUi::anIsolatedServerSaysWhoWhenAndWhy()
{
    QVERIFY(startWithServers());
    McpServersDock *dock = openDock();
    QTRY_COMPARE_WITH_TIMEOUT(dock->serverStateText("fake"), QStringLiteral("Ready"), kWaitMs);
    CircuitBreakerRegistry *breakers = RuntimeTestSeam::breakers(*m_console->runtime);
    breakers->breaker(QStringLiteral("mcp:fake"));
    BreakerIsolation isolation;
    isolation.dependency = QStringLiteral("mcp:fake");
    isolation.reason = QStringLiteral("vendor maintenance");
    isolation.leadStaffId = QStringLiteral("L-07");
    isolation.since = QDateTime::currentDateTimeUtc();
    QTest::ignoreMessage(QtWarningMsg, QRegularExpression(QStringLiteral("isolated: by L-07")));
    breakers->setIsolations({isolation});
    QTRY_VERIFY2(dock->serverDetailText("fake").contains(
                     QStringLiteral("Isolated by the shift lead (staff L-07) at ")),
                 qPrintable(dock->serverDetailText("fake")));
    QVERIFY(dock->serverDetailText("fake").contains(QStringLiteral(": vendor maintenance")));
    QVERIFY(!dock->serverDetailText("fake").contains(QStringLiteral("fail fast")));
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
    QCOMPARE(m_console->runtime->mcp()->toolPolicies(),
             (QMap<QString, QString>{{"fake/echo", "confirm"}}));
    QVERIFY(!toolsChanged.isEmpty());
    // The running console: the tool now asks first.
    const ToolLabels labels = m_console->loop()->toolLabels(QStringLiteral("fake__echo"));
    QCOMPARE(labels.policyOrigin.source, ToolLabels::PolicyOrigin::Source::Staff);
    QVERIFY(!labels.confirmTitle.isEmpty());
    QTRY_COMPARE(dock->toolDeciderText("fake", "echo"), QStringLiteral("set by staff"));
    QCOMPARE(dock->toolPolicyText("fake", "echo"), QStringLiteral("confirm first"));
    QVERIFY(dock->toolNoteText("fake", "echo").isEmpty());
    // Kept for the next start (written off the GUI thread).
    QCOMPARE(settings.settings().mcpToolPolicies,
             (QMap<QString, QString>{{"fake/echo", "confirm"}}));
    QTRY_COMPARE(QSettings(settings.filePath(), QSettings::IniFormat)
                     .value(QStringLiteral("mcpPolicies/fake/echo"))
                     .toString(),
                 QStringLiteral("confirm"));

    // A bad word never reaches the runtime.
    QString error;
    QVERIFY(!m_console->runtime->mcp()->setToolPolicies({{"fake/echo", "sometimes"}}, &error));
    QVERIFY2(error.contains("fake/echo"), qPrintable(error));
    QCOMPARE(m_console->runtime->mcp()->toolPolicies().value("fake/echo"),
             QStringLiteral("confirm"));
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

void tst_McpUi::signInFollowsTheRuntime_data()
{
    QTest::addColumn<QString>("language");
    QTest::addColumn<QString>("needed");
    QTest::addColumn<QString>("signingIn");
    QTest::addColumn<QString>("signIn");
    QTest::addColumn<QString>("cancel");
    QTest::addColumn<QString>("signOut");
    QTest::addColumn<QString>("cancelled");
    QTest::addColumn<QString>("signInAttempt");
    QTest::newRow("en") << "en" << "Sign-in needed" << "Signing in…" << "Sign in…"
                        << "Cancel sign-in" << "Sign out" << "The last sign-in was cancelled."
                        << "its server needs a sign-in";
    QTest::newRow("zh_CN") << "zh_CN" << "需要登录" << "正在登录…" << "登录…" << "取消登录"
                           << "退出登录" << "上次登录已取消。" << "其服务器需要登录";
}

// A server behind OAuth (tests/support's fake, on 127.0.0.1) in the window: it shows
// "Sign-in needed" in amber, not down; its one button reads Sign in…, Cancel sign-in, Sign out
// as the runtime's sign-in moves, and each click drives the runtime (the browser stand-in is
// the staff member's browser). Screenshots of each step in both languages.
void tst_McpUi::signInFollowsTheRuntime()
{
    QFETCH(QString, language);
    QFETCH(QString, needed);
    QFETCH(QString, signingIn);
    QFETCH(QString, signIn);
    QFETCH(QString, cancel);
    QFETCH(QString, signOut);
    QFETCH(QString, cancelled);
    QFETCH(QString, signInAttempt);
    QCOMPARE(ConsoleLanguage::install(language), language);

    FakeOAuthServer fake;
    QVERIFY(fake.listen());
    FakeBrowser browser;
    browser.setFollow(false); // the sign-in page stays open until the test says otherwise
    const QString path = m_config->filePath(QStringLiteral("mcp.json"));
    QFile file(path);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write(QJsonDocument(QJsonObject{{"mcpServers", QJsonObject{{"crm", QJsonObject{
        {"url", fake.mcpUrl().toString()}}}}}}).toJson());
    file.close();
    auto secrets = std::make_shared<MemorySecretStore>();
    RuntimeOptions options;
    options.mcpConfigFile = path;
    options.secrets = secrets;
    QVERIFY(m_console->start(options));
    AgentRuntime *runtime = m_console->runtime.get();
    // Read at each sign-in, so set after the start as well as before.
    runtime->mcp()->setBrowserOpener([&browser](const QUrl &url) { return browser.open(url); });
    McpServersDock *dock = openDock();
    QVERIFY(dock);
    dock->setFloating(true);
    dock->resize(560, 300);
    const auto shot = [&](const char *step) {
        return saveScreenshot(dock, QStringLiteral("mcp-signin-%1-%2.png")
                                        .arg(QLatin1String(step), language));
    };

    // Refused at its first request: waiting for staff, amber, the button offers the sign-in.
    QTRY_COMPARE_WITH_TIMEOUT(dock->serverStateText("crm"), needed, kWaitMs);
    QCOMPARE(dock->serverStateTone("crm"), Tone::Warning);
    QCOMPARE(dock->signInActionText("crm"), signIn);
    QVERIFY(!dock->signInText("crm").isEmpty());
    const McpServerStatus waiting = runtime->monitor()->status().mcpServers.first();
    QCOMPARE(waiting.signIn, McpServerStatus::SignIn::SignedOut);
    QCOMPARE(waiting.problem, McpServerStatus::Problem::SignInNeeded);
    QVERIFY(browser.opened().isEmpty()); // the window never signs in by itself
    QVERIFY(!shot("needed").isEmpty());

    dock->triggerSignInAction("crm");
    QTRY_COMPARE_WITH_TIMEOUT(browser.opened().size(), 1, kWaitMs);
    QTRY_COMPARE_WITH_TIMEOUT(dock->signInActionText("crm"), cancel, kWaitMs);
    QCOMPARE(dock->serverStateText("crm"), signingIn);
    QCOMPARE(dock->serverStateTone("crm"), Tone::Info);
    QVERIFY(!shot("signing-in").isEmpty());

    dock->triggerSignInAction("crm"); // Cancel sign-in
    QTRY_COMPARE_WITH_TIMEOUT(dock->signInActionText("crm"), signIn, kWaitMs);
    QCOMPARE(dock->serverStateText("crm"), needed);
    QVERIFY2(dock->signInText("crm").contains(cancelled), qPrintable(dock->signInText("crm")));
    // Chinese sentences follow each other without the space English puts between them.
    QVERIFY2(!dock->signInText("crm").contains(QStringLiteral("。 ")),
             qPrintable(dock->signInText("crm")));
    QVERIFY(!shot("cancelled").isEmpty());
    // As narrow as a dock is put beside the transcript: the line wraps, the button keeps
    // its words.
    dock->resize(320, 300);
    QVERIFY(!shot("cancelled-narrow").isEmpty());
    dock->resize(560, 300);

    browser.setFollow(true);
    dock->triggerSignInAction("crm");
    QTRY_COMPARE_WITH_TIMEOUT(runtime->monitor()->status().mcpServers.first().state,
                              McpServerStatus::State::Ready, kWaitMs);
    QTRY_COMPARE_WITH_TIMEOUT(dock->signInActionText("crm"), signOut, kWaitMs);
    QCOMPARE(dock->serverStateTone("crm"), Tone::Success);
    QVERIFY(!dock->signInText("crm").contains(cancelled)); // the old reason is gone
    QVERIFY(secrets->contains(QStringLiteral("mcp.crm.oauth")));
    QVERIFY(!shot("signed-in").isEmpty());

    // The token is revoked and its refresh refused: the session is still up, but its tools
    // are refused until staff sign in again, and the dock says so (not "Ready" in green).
    fake.revokeTokens();
    fake.setRefreshRefused(true);
    QTRY_VERIFY_WITH_TIMEOUT(runtime->tools()->find(QStringLiteral("crm__lookup")), kWaitMs);
    const std::shared_ptr<const AgentTool> lookup
        = runtime->tools()->find(QStringLiteral("crm__lookup"));
    const Language staffLanguage = language == QLatin1String("en") ? Language::English
                                                                   : Language::Chinese;
    const TrustedContext context{QStringLiteral("u-1001"), QStringLiteral("t-acme"),
                                 QStringLiteral("c-1"), QStringLiteral("r-1"), staffLanguage};
    // An attempt as the executor starts it: asynchronous, it ends when the server answers
    // (its end may come from another thread, so it is brought back to this one).
    std::optional<AttemptResult> ended;
    const auto stopAttempt = lookup->startAttempt(
        QJsonObject{{QStringLiteral("q"), QStringLiteral("A1001")}}, context, AttemptContext{},
        [this, &ended](AttemptResult result) {
            QMetaObject::invokeMethod(this, [&ended, result] { ended = result; },
                                      Qt::QueuedConnection);
        });
    Q_UNUSED(stopAttempt)
    QTRY_VERIFY_WITH_TIMEOUT(ended.has_value(), kWaitMs);
    QCOMPARE(ended->code, std::optional(ResultCode::Code::SignInRequired));
    QTRY_COMPARE_WITH_TIMEOUT(dock->serverStateText("crm"), needed, kWaitMs);
    QCOMPARE(dock->serverStateTone("crm"), Tone::Warning);
    QCOMPARE(dock->signInActionText("crm"), signIn);
    QVERIFY(!shot("refused").isEmpty());

    // Its card reads in staff words, in the window's language, never the code.
    ToolCallRecord call;
    call.index = 0;
    call.name = QStringLiteral("crm__lookup");
    call.labels = m_console->loop()->toolLabels(call.name);
    call.arguments = QJsonObject{{QStringLiteral("q"), QStringLiteral("A1001")}};
    call.state = ToolCallRecord::State::Finished;
    call.result = FailureTable::instance().failure(ResultCode::Code::SignInRequired,
                                                   staffLanguage);
    AttemptRecord refused;
    refused.attempt = 1;
    refused.durationMs = 12;
    refused.outcome = AttemptOutcome::AccessDenied;
    call.attempts = {refused};
    call.totalMs = 12;
    ToolCallCard card;
    card.setToolCall(call);
    card.setExpanded(true); // the result's sentence and the attempt table
    card.resize(560, card.sizeHint().height());
    card.show();
    QVERIFY(QTest::qWaitForWindowExposed(&card));
    QCOMPARE(card.statusText(), needed);
    QStringList shown;
    for (const QLabel *label : card.findChildren<QLabel *>()) {
        if (label->isVisible())
            shown.append(label->text());
    }
    const QString words = shown.join(QLatin1Char('\n'));
    QVERIFY2(!words.contains(QLatin1String("SIGN_IN_REQUIRED")), qPrintable(words));
    // The failure table's sentence for the call: sign in first.
    QVERIFY2(words.contains(language == QLatin1String("en") ? QStringLiteral("sign in")
                                                            : QStringLiteral("先登录")),
             qPrintable(words));
    // The attempt's line too: a sign-in, not a refusal of access the staff cannot lift.
    QVERIFY2(card.timelineText().contains(signInAttempt), qPrintable(card.timelineText()));
    QVERIFY(!saveScreenshot(&card, QStringLiteral("mcp-signin-card-%1.png").arg(language))
                 .isEmpty());

    // Staff sign in again, then sign out.
    dock->triggerSignInAction("crm");
    QTRY_COMPARE_WITH_TIMEOUT(dock->signInActionText("crm"), signOut, kWaitMs);
    QCOMPARE(browser.opened().size(), 3);

    dock->triggerSignInAction("crm"); // Sign out: the keychain forgets it, staff must sign in
    QTRY_COMPARE_WITH_TIMEOUT(dock->serverStateText("crm"), needed, kWaitMs);
    QCOMPARE(dock->signInActionText("crm"), signIn);
    QTRY_VERIFY_WITH_TIMEOUT(!secrets->contains(QStringLiteral("mcp.crm.oauth")), kWaitMs);
    QCOMPARE(browser.opened().size(), 3); // signing out opens nothing
}

QTEST_MAIN(tst_McpUi)
#include "tst_mcpui.moc"
