// The window under a team's managed policy (docs/POLICY.md), in English and Simplified
// Chinese, over a real runtime: the status bar says which policy is in force; Settings shows a
// lock beside each setting the policy locks (its editor disabled, the tooltip core's words)
// and leaves the others editable; the policy editor shows the tools' policies locked; the MCP
// servers dock shows a server the policy does not allow as not allowed, in words. Screenshots
// (team-policy-*-<language>.png) for people to look at.
#include "consolefixture.h"
#include "screenshots.h"

#include "ui/common/noticebanner.h"
#include "ui/common/policylock.h"
#include "ui/faults/policyeditor.h"
#include "ui/mcp/mcpconfigdialog.h"
#include "ui/mcp/mcppolicydialog.h"
#include "ui/mcp/mcpserversdock.h"
#include "ui/settings/connectionsettingsdialog.h"
#include "ui/window/consolelanguage.h"

#include "core/console/mcpservers.h"
#include "core/console/settingkeys.h"
#include "core/console/teampolicy.h"
#include "core/policy/policysource.h"

#include <QAction>
#include <QFile>
#include <QLabel>
#include <QPlainTextEdit>
#include <QSignalSpy>
#include <QStatusBar>
#include <QTest>

using namespace AgentConsole;
using namespace AgentConsole::Testing;

namespace {

std::shared_ptr<const PolicySource> lockingPolicy()
{
    PolicyText text;
    text.status = PolicyText::Status::Found;
    text.origin = QStringLiteral("/etc/xdg/AgentConsole/policy.json");
    text.text = R"({
        "version": "2026-12-01",
        "toolRetry": {"default": {"attemptTimeoutMs": 1500, "maxRetries": 1}},
        "mcpServers": {"allowed": ["docs"]},
        "locked": ["model/provider", "model/name", "model/baseUrl", "ledger/spec",
                   "tools/retryPolicies", "mcp/servers"]
    })";
    return std::make_shared<FixedPolicySource>(text);
}

} // namespace

class tst_TeamPolicyUi final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void cleanup();
    void lockedSettingsShowALock_data();
    void lockedSettingsShowALock();
    void lockedMcpSettingsAreShownNotEdited();
    void aPolicyThatCannotBeUsedKeepsTheWindowNotReady();

private:
    std::unique_ptr<ConsoleFixture> m_console;
};

void tst_TeamPolicyUi::cleanup()
{
    m_console.reset();
    ConsoleLanguage::install(QStringLiteral("en"));
}

void tst_TeamPolicyUi::lockedSettingsShowALock_data()
{
    QTest::addColumn<QString>("language");
    QTest::newRow("en") << "en";
    QTest::newRow("zh_CN") << "zh_CN";
}

void tst_TeamPolicyUi::lockedSettingsShowALock()
{
    QFETCH(QString, language);
    ConsoleLanguage::install(language);
    m_console = std::make_unique<ConsoleFixture>();
    const QString config = m_console->dataDir.filePath(QStringLiteral("mcp.json"));
    QFile file(config);
    QVERIFY(file.open(QIODevice::WriteOnly));
    // Not allowed by the policy: never started (the program does not even exist).
    file.write(R"({"mcpServers": {"shell": {"command": "/nonexistent/mcp-shell"}}})");
    file.close();
    RuntimeOptions options;
    options.policySource = lockingPolicy();
    options.mcpConfigFile = config;
    QTest::ignoreMessage(QtWarningMsg,
                         QRegularExpression(QStringLiteral("MCP server .*shell.* not started")));
    QVERIFY(m_console->start(options));
    ConsoleWindow *window = m_console->window.get();
    const TeamPolicy *team = m_console->runtime->teamPolicy();
    QVERIFY(team->inForce());
    const QString reason = team->lockReason();
    if (language == QLatin1String("en"))
        QCOMPARE(reason, QStringLiteral("Set by your team's policy (version 2026-12-01)"));
    QVERIFY(reason.contains(QLatin1String("2026-12-01")));

    // The status bar: which policy is in force.
    auto *badge = window->findChild<QWidget *>(QStringLiteral("teamPolicyBadge"));
    QVERIFY(badge);
    QTRY_VERIFY(badge->isVisible());
    auto *badgeWords = badge->findChild<QLabel *>(QStringLiteral("teamPolicyLabel"));
    QVERIFY(badgeWords->text().contains(QLatin1String("2026-12-01")));
    QVERIFY(badge->findChild<PolicyLock *>());
    QVERIFY(badge->toolTip().contains(QLatin1String("/etc/xdg/AgentConsole/policy.json")));

    // The MCP servers dock: the server the policy does not allow, said so.
    auto *servers = window->findChild<McpServersDock *>();
    QVERIFY(servers);
    servers->show();
    servers->raise();
    QTRY_COMPARE(servers->serverNames(), QStringList{QStringLiteral("shell")});
    QCOMPARE(servers->serverStateTone(QStringLiteral("shell")), Tone::Neutral);
    QVERIFY2(servers->serverDetailText(QStringLiteral("shell")).contains(QLatin1String("shell")),
             qPrintable(servers->serverDetailText(QStringLiteral("shell"))));
    if (language == QLatin1String("en")) {
        QCOMPARE(servers->serverStateText(QStringLiteral("shell")), QStringLiteral("Not allowed"));
        QVERIFY(servers->serverDetailText(QStringLiteral("shell"))
                    .contains(QLatin1String("does not allow the MCP server")));
    }
    window->resize(1400, 900);
    QVERIFY(!saveScreenshot(window, QStringLiteral("team-policy-window-%1.png").arg(language))
                 .isEmpty());

    // The policy editor: the tools' policies shown, locked, with the policy's words.
    auto *editor = window->findChild<PolicyEditor *>();
    QVERIFY(editor);
    editor->show();
    editor->raise();
    QTRY_VERIFY(editor->lockRow()->isVisible());
    QVERIFY(editor->selectTool(editor->tools().constFirst()));
    QVERIFY(!editor->fieldEditor(QStringLiteral("maxRetries"))->isEnabled());
    QVERIFY(!editor->applyButton()->isEnabled());
    QCOMPARE(editor->draft().maxRetries, 1); // the team's default
    QCOMPARE(editor->lockRow()->findChild<PolicyLock *>()->reason(),
             m_console->policies()->lockRefusal());
    QVERIFY(!saveScreenshot(editor, QStringLiteral("team-policy-editor-%1.png").arg(language))
                 .isEmpty());

    // Settings: a lock beside each locked setting, its editor disabled; the rest editable.
    auto *action = window->findChild<QAction *>(QStringLiteral("connectionSettingsAction"));
    QVERIFY(action && action->isEnabled());
    action->trigger();
    auto *dialog = window->findChild<ConnectionSettingsDialog *>();
    QVERIFY(dialog);
    QVERIFY(QTest::qWaitForWindowExposed(dialog));
    QCOMPARE(dialog->lockedSettings(),
             (QStringList{SettingKeys::provider, SettingKeys::model, SettingKeys::baseUrl,
                          SettingKeys::ledger}));
    for (const QString &key : {SettingKeys::model, SettingKeys::baseUrl, SettingKeys::ledger}) {
        QWidget *field = dialog->settingEditor(key);
        QVERIFY2(!field->isEnabled(), qPrintable(key));
        PolicyLock *lock = PolicyLock::of(field);
        QVERIFY2(lock, qPrintable(key));
        QVERIFY(lock->isVisible());
        QCOMPARE(lock->reason(), reason);
        QCOMPARE(field->toolTip(), reason);
    }
    QVERIFY(!dialog->settingEditor(SettingKeys::provider)->isEnabled());
    QVERIFY(dialog->settingEditor(SettingKeys::backendKind)->isEnabled());
    QVERIFY(dialog->settingEditor(SettingKeys::language)->isEnabled());
    QVERIFY(!PolicyLock::of(dialog->settingEditor(SettingKeys::language)));
    QVERIFY(!saveScreenshot(dialog, QStringLiteral("team-policy-settings-%1.png").arg(language))
                 .isEmpty());
    dialog->reject();
}

// mcp.json and staff's MCP tool policies locked: Settings › MCP servers shows the file read-only
// under a lock and the policy's words, Settings › MCP tool policies applies nothing.
void tst_TeamPolicyUi::lockedMcpSettingsAreShownNotEdited()
{
    m_console = std::make_unique<ConsoleFixture>();
    const QString config = m_console->dataDir.filePath(QStringLiteral("mcp.json"));
    QFile file(config);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write(R"({"mcpServers": {}})");
    file.close();
    PolicyText text;
    text.status = PolicyText::Status::Found;
    text.origin = QStringLiteral("/etc/xdg/AgentConsole/policy.json");
    text.text = R"({"version": "v7", "locked": ["mcp/servers", "mcpPolicies"]})";
    RuntimeOptions options;
    options.policySource = std::make_shared<FixedPolicySource>(text);
    options.mcpConfigFile = config;
    QVERIFY(m_console->start(options));
    ConsoleWindow *window = m_console->window.get();

    auto *mcpConfig = window->findChild<QAction *>(QStringLiteral("mcpConfigAction"));
    QVERIFY(mcpConfig);
    mcpConfig->trigger();
    auto *dialog = window->findChild<McpConfigDialog *>();
    QVERIFY(dialog);
    QVERIFY(QTest::qWaitForWindowExposed(dialog));
    QVERIFY(dialog->isLockedByPolicy());
    auto *locked = dialog->findChild<QWidget *>(QStringLiteral("mcpConfigLocked"));
    QVERIFY(locked && locked->isVisible());
    QVERIFY(locked->findChild<PolicyLock *>());
    auto *editor = dialog->findChild<QPlainTextEdit *>(QStringLiteral("mcpConfigText"));
    QTRY_COMPARE(editor->toPlainText(), QStringLiteral(R"({"mcpServers": {}})"));
    QVERIFY(editor->isReadOnly());
    QCOMPARE(locked->findChild<PolicyLock *>()->reason(),
             QStringLiteral("The MCP servers are locked by your team's policy (version v7)"));
    QVERIFY(!saveScreenshot(dialog, QStringLiteral("team-policy-mcp-config-en.png")).isEmpty());
    dialog->reject();

    auto *toolPolicies = window->findChild<QAction *>(QStringLiteral("mcpPoliciesAction"));
    QVERIFY(toolPolicies);
    toolPolicies->trigger();
    auto *policyDialog = window->findChild<McpPolicyDialog *>();
    QVERIFY(policyDialog);
    QCOMPARE(policyDialog->problemText(),
             QStringLiteral("The MCP tool policies are locked by your team's policy (version "
                            "v7)"));
    policyDialog->reject();
}

// Fail closed: the window says why at start, names the file and the field, and stays not
// ready (nothing can be asked).
void tst_TeamPolicyUi::aPolicyThatCannotBeUsedKeepsTheWindowNotReady()
{
    m_console = std::make_unique<ConsoleFixture>();
    PolicyText text;
    text.status = PolicyText::Status::Found;
    text.origin = QStringLiteral("/etc/xdg/AgentConsole/policy.json");
    text.text = R"({"version": "v8", "locked": ["model/colour"]})";
    RuntimeOptions options;
    options.policySource = std::make_shared<FixedPolicySource>(text);
    QTest::ignoreMessage(QtWarningMsg,
                         QRegularExpression(QStringLiteral("runtime failed to start")));
    QTest::ignoreMessage(QtWarningMsg, QRegularExpression(QStringLiteral("runtime not ready")));
    QVERIFY(!m_console->start(options, true, 10000));
    ConsoleWindow *window = m_console->window.get();
    auto *banner = window->findChild<NoticeBanner *>(QStringLiteral("noticeBanner"));
    QVERIFY(banner);
    QTRY_VERIFY(banner->isVisible());
    QVERIFY2(banner->text().contains(QStringLiteral(
                 "The team policy /etc/xdg/AgentConsole/policy.json cannot be used: locked: "
                 "\"model/colour\" is not a setting a policy can lock")),
             qPrintable(banner->text()));
    QVERIFY(!window->sendButton()->isEnabled());
    QVERIFY(!m_console->runtime->isReady());
    QVERIFY(!saveScreenshot(window, QStringLiteral("team-policy-refused-en.png")).isEmpty());
}

QTEST_MAIN(tst_TeamPolicyUi)
#include "tst_teampolicyui.moc"
