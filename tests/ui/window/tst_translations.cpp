// The window in Simplified Chinese and in English (docs/TRANSLATIONS.md), over a real runtime
// on a temporary data directory. In zh_CN a few turns (an answered one, a failed tool call,
// a ticket waiting for confirmation), the history, the docks and panels, the settings and the
// shortcuts dialogs are shown and screenshotted, and every text a staff member can see or a
// screen reader can read is walked: no English word may be left but names and ids. In English
// the values read in staff words too ("Damaged item", never DAMAGED).

#include "consolefixture.h"
#include "englishwords.h"
#include "screenshots.h"

#include "core/console/consolesettings.h"
#include "ui/transcript/confirmationpanel.h"
#include "ui/export/conversationexporter.h"
#include "ui/window/consolelanguage.h"
#include "ui/window/consoleshell.h"
#include "ui/history/conversationrestorer.h"
#include "ui/diagnostics/diagnosticsdock.h"
#include "ui/export/exportviewer.h"
#include "ui/faults/faultpanel.h"
#include "ui/history/historysidebar.h"
#include "ui/faults/policyeditor.h"
#include "ui/faults/scenariopanel.h"
#include "ui/settings/connectionsettingsdialog.h"
#include "ui/window/shortcutsdialog.h"
#include "ui/common/staffwords.h"
#include "ui/common/statuschip.h"
#include "ui/transcript/toolcallcard.h"
#include "ui/transcript/transcriptview.h"

#include <QAbstractButton>
#include <QAbstractItemView>
#include <QAbstractSpinBox>
#include <QAction>
#include <QComboBox>
#include <QDir>
#include <QDockWidget>
#include <QFile>
#include <QGroupBox>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QMenuBar>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QRadioButton>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTabBar>
#include <QTextDocumentFragment>
#include <QTextEdit>
#include <QTreeWidget>

using namespace AgentConsole;
using namespace AgentConsole::Testing;

class TestTranslations final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void cleanup();
    void theChoiceResolvesToALanguage_data();
    void theChoiceResolvesToALanguage();
    void everyShippedScenarioIsTranslated();
    void everyShippedFaultPlanIsTranslated();
    void zhCnWindowHasNoEnglishLeft();
    void englishShowsStaffWordsForValues();
    void theSettingsChoiceIsStoredAndUsedAtTheNextStart();
    void theShellSwitchesTheLanguageLive();

private:
    bool startIn(const QString &storedLanguage);
    TurnResult ask(const QString &question);
    ToolCallCard *card(const QString &requestId, const QString &tool) const;
    // Waits for the ticket's confirmation card of the turn `requestId` is running.
    ConfirmationPanel *waitingConfirmation(const QString &requestId) const;

    QString settingsFile() const { return m_config.filePath(QStringLiteral("agent-console.ini")); }

    QTemporaryDir m_config;
    std::unique_ptr<ConsoleSettings> m_stored; // outlives the window that points to it
    std::unique_ptr<ConsoleFixture> m_console;
};

void TestTranslations::initTestCase()
{
    QStandardPaths::setTestModeEnabled(true);
    QVERIFY(m_config.isValid());
    qputenv("XDG_CONFIG_HOME", m_config.path().toLocal8Bit());
    qputenv("HOME", m_config.path().toLocal8Bit());
}

void TestTranslations::cleanup()
{
    m_console.reset();
    m_stored.reset();
    QFile::remove(settingsFile());
    ConsoleLanguage::install(QStringLiteral("en"));
}

// As agent-console starts: the language stored in the settings file, installed before the
// first widget.
bool TestTranslations::startIn(const QString &storedLanguage)
{
    if (!storedLanguage.isEmpty()) {
        ConsoleSettings stored(settingsFile());
        stored.load();
        if (!stored.saveLanguage(storedLanguage))
            return false;
    }
    m_stored = std::make_unique<ConsoleSettings>(settingsFile());
    m_stored->load();
    ConsoleLanguage::install(m_stored->settings().language);
    m_console = std::make_unique<ConsoleFixture>();
    if (!m_console->start())
        return false;
    m_console->window->useStoredSettings(m_stored.get());
    // Short attempts, so that the failing lookup ends quickly.
    return m_console->setPolicy(QStringLiteral("queryLogistics"), shortPolicy());
}

TurnResult TestTranslations::ask(const QString &question)
{
    bool ok = false;
    const TurnResult result = m_console->askAndWait(question, &ok);
    if (!ok)
        qWarning("the turn did not finish: %s", qPrintable(question));
    return result;
}

ToolCallCard *TestTranslations::card(const QString &requestId, const QString &tool) const
{
    for (ToolCallCard *each : m_console->window->transcript()->toolCallCards(requestId)) {
        if (each->toolName() == tool)
            return each;
    }
    return nullptr;
}

ConfirmationPanel *TestTranslations::waitingConfirmation(const QString &requestId) const
{
    ConfirmationPanel *panel = nullptr;
    (void)QTest::qWaitFor([&] {
        ToolCallCard *ticket = card(requestId, QStringLiteral("createTicket"));
        panel = ticket ? ticket->confirmationPanel() : nullptr;
        // Confirm can be pressed once the check of the order's earlier tickets is back.
        return panel && panel->isAwaitingAnswer() && panel->isVisible()
            && panel->confirmButton()->isEnabled();
    });
    return panel;
}

void TestTranslations::theChoiceResolvesToALanguage_data()
{
    QTest::addColumn<QString>("choice");
    QTest::addColumn<QString>("system");
    QTest::addColumn<QString>("language");
    QTest::newRow("system, Chinese") << "system" << "zh_CN" << "zh_CN";
    QTest::newRow("system, Taiwanese Chinese") << "system" << "zh_TW" << "zh_CN";
    QTest::newRow("system, German") << "system" << "de_DE" << "en";
    QTest::newRow("system, English") << "system" << "en_US" << "en";
    QTest::newRow("English on a Chinese system") << "en" << "zh_CN" << "en";
    QTest::newRow("Chinese on a German system") << "zh_CN" << "de_DE" << "zh_CN";
    QTest::newRow("unknown follows the system") << "fr" << "zh_CN" << "zh_CN";
}

void TestTranslations::theChoiceResolvesToALanguage()
{
    QFETCH(QString, choice);
    QFETCH(QString, system);
    QFETCH(QString, language);
    QCOMPARE(ConsoleLanguage::resolve(choice, QLocale(system)), language);
}

// Every shipped scenario has its title and summary in ui/scenariowords.cpp, so that lupdate
// takes them: a scenario added to resources/scenarios without it fails here. Both read in
// plain words, in Chinese.
void TestTranslations::everyShippedScenarioIsTranslated()
{
    ConsoleLanguage::install(QStringLiteral("zh_CN"));
    const QDir dir(QStringLiteral(AGENT_CONSOLE_SCENARIO_DIR));
    const QStringList files = dir.entryList({QStringLiteral("*.json")}, QDir::Files);
    QVERIFY(files.size() >= 20);
    for (const QString &file : files) {
        QFile json(dir.filePath(file));
        QVERIFY(json.open(QIODevice::ReadOnly));
        const QJsonObject scenario = QJsonDocument::fromJson(json.readAll()).object();
        for (const char *key : {"title", "summary"}) {
            const QString text = scenario.value(QLatin1String(key)).toString();
            QVERIFY2(!text.isEmpty(), qPrintable(file));
            const QString shown = QLatin1String(key) == QLatin1String("title")
                ? StaffWords::scenarioTitle(text)
                : StaffWords::scenarioSummary(text);
            QVERIFY2(englishWords(shown).isEmpty(),
                     qPrintable(file + QLatin1Char(' ') + QLatin1String(key)
                                + QStringLiteral(": ") + shown));
            // In plain words: no result code as the wire spells it (issue #41 §7).
            static const QRegularExpression wireCode(QStringLiteral("[A-Z]{2,}_[A-Z_]+"));
            QVERIFY2(!wireCode.match(shown).hasMatch(),
                     qPrintable(file + QLatin1Char(' ') + QLatin1String(key)
                                + QStringLiteral(": ") + shown));
        }
    }
}

// The same for every shipped fault plan's description (ui/faults/faultplanwords.cpp).
void TestTranslations::everyShippedFaultPlanIsTranslated()
{
    ConsoleLanguage::install(QStringLiteral("zh_CN"));
    const QDir dir(QStringLiteral(AGENT_CONSOLE_FAULTS_DIR));
    const QStringList files = dir.entryList({QStringLiteral("*.json")}, QDir::Files);
    QVERIFY(files.size() >= 7);
    for (const QString &file : files) {
        QFile json(dir.filePath(file));
        QVERIFY(json.open(QIODevice::ReadOnly));
        const QString text =
            QJsonDocument::fromJson(json.readAll()).object().value(u"description").toString();
        QVERIFY2(!text.isEmpty(), qPrintable(file));
        const QString shown = StaffWords::faultPlanDescription(text);
        QVERIFY2(shown != text && englishWords(shown).isEmpty(),
                 qPrintable(file + QStringLiteral(": ") + shown));
    }
}

void TestTranslations::zhCnWindowHasNoEnglishLeft()
{
    QVERIFY(startIn(QStringLiteral("zh_CN")));
    QCOMPARE(ConsoleLanguage::current(), QStringLiteral("zh_CN"));
    ConsoleWindow *window = m_console->window.get();
    QVERIFY2(!window->windowTitle().contains(QLatin1String("Agent Console")),
             qPrintable(window->windowTitle()));
    // Logistics refuses every request: a failed card beside an answered lookup.
    QVERIFY(m_console->setFaults(R"({"tools": {"queryLogistics": {"permanentFailure": true}}})"));

    const TurnResult answered = ask(QStringLiteral("订单 A1001 的状态是什么？"));
    QCOMPARE(answered.outcome(), TurnOutcome::Answered);
    TranscriptView *transcript = window->transcript();
    QCOMPARE(transcript->turnStatusText(answered.requestId), QStringLiteral("已回答"));

    const TurnResult failed = ask(QStringLiteral("查询订单 A1001 的物流位置"));
    ToolCallCard *logistics = card(failed.requestId, QStringLiteral("queryLogistics"));
    QVERIFY(logistics);
    QCOMPARE(logistics->statusText(), QStringLiteral("被拒绝"));
    QVERIFY2(logistics->attemptSummaryText().startsWith(QStringLiteral("1 次尝试")),
             qPrintable(logistics->attemptSummaryText()));
    logistics->setExpanded(true);

    // A ticket waits for confirmation: its category in staff words.
    const QString ticketTurn =
        m_console->ask(QStringLiteral("为订单 A1001 创建售后工单：商品破损"));
    QVERIFY(!ticketTurn.isEmpty());
    ConfirmationPanel *confirmation = waitingConfirmation(ticketTurn);
    QVERIFY(confirmation);
    QVERIFY2(confirmation->argumentsText().contains(QStringLiteral("类别: 商品破损")),
             qPrintable(confirmation->argumentsText()));
    QVERIFY(!confirmation->argumentsText().contains(QLatin1String("DAMAGED")));

    // Every dock and panel on screen, the history listing the conversation.
    for (QDockWidget *dock : window->findChildren<QDockWidget *>())
        dock->show();
    QTRY_VERIFY(!window->historySidebar()->rowTexts().isEmpty());
    window->resize(1600, 1000);
    QVERIFY(!saveScreenshot(window, QStringLiteral("translations-zh_CN-window.png")).isEmpty());

    TextWalk walk;
    for (const QString &turn : transcript->requestIds())
        walk.exempt(transcript->answerText(turn));
    walk.walk(window);
    QVERIFY2(walk.texts() > 200, qPrintable(QString::number(walk.texts())));
    QVERIFY2(walk.problems().isEmpty(), qPrintable(walk.problems().join(QLatin1Char('\n'))));

    // The ticket confirmed: its card says so in Chinese too.
    QSignalSpy finished(m_console->loop(), &AgentLoop::turnFinished);
    confirmation->confirmButton()->click();
    QVERIFY(finished.wait(20000));
    ToolCallCard *ticket = card(ticketTurn, QStringLiteral("createTicket"));
    QVERIFY(ticket);
    QCOMPARE(ticket->statusText(), QStringLiteral("成功"));
    QVERIFY2(ticket->argumentsText().contains(QStringLiteral("商品破损")),
             qPrintable(ticket->argumentsText()));
    TextWalk afterTicket;
    for (const QString &turn : transcript->requestIds())
        afterTicket.exempt(transcript->answerText(turn));
    afterTicket.walk(window);
    QVERIFY2(afterTicket.problems().isEmpty(),
             qPrintable(afterTicket.problems().join(QLatin1Char('\n'))));

    // The conversation exported and opened read-only, as Conversation › Open export… shows it.
    QTemporaryDir exports;
    QVERIFY(exports.isValid());
    const QString exported = exports.filePath(QStringLiteral("conversation.json"));
    ConversationExporter *exporter = window->exporter();
    QSignalSpy written(exporter, &ConversationExporter::exported);
    QSignalSpy opened(exporter, &ConversationExporter::opened);
    QSignalSpy refused(exporter, &ConversationExporter::failed);
    window->exportConversation(exported);
    QTRY_VERIFY_WITH_TIMEOUT(!written.isEmpty() || !refused.isEmpty(), 20000);
    QVERIFY2(refused.isEmpty(), qPrintable(refused.value(0).value(1).toString()));
    exporter->openExport(exported);
    QTRY_VERIFY_WITH_TIMEOUT(!opened.isEmpty() || !refused.isEmpty(), 20000);
    QVERIFY2(refused.isEmpty(), qPrintable(refused.value(0).value(1).toString()));
    auto *viewer = opened.first().first().value<ExportViewer *>();
    QVERIFY(viewer);
    QVERIFY(QTest::qWaitForWindowExposed(viewer));
    QVERIFY(!saveScreenshot(viewer, QStringLiteral("translations-zh_CN-export.png")).isEmpty());
    TextWalk exportWalk;
    for (const QString &turn : viewer->transcript()->requestIds())
        exportWalk.exempt(viewer->transcript()->answerText(turn));
    exportWalk.walk(viewer);
    QVERIFY2(exportWalk.problems().isEmpty(),
             qPrintable(exportWalk.problems().join(QLatin1Char('\n'))));
    viewer->close();

    // The settings dialog, as the menu opens it.
    auto *settingsAction =
        window->findChild<QAction *>(QStringLiteral("connectionSettingsAction"));
    QVERIFY(settingsAction);
    settingsAction->trigger();
    auto *settings = window->findChild<ConnectionSettingsDialog *>();
    QVERIFY(settings);
    QVERIFY(QTest::qWaitForWindowExposed(settings));
    QVERIFY(!saveScreenshot(settings, QStringLiteral("translations-zh_CN-settings.png"))
                 .isEmpty());
    TextWalk settingsWalk;
    settingsWalk.walk(settings);
    QVERIFY2(settingsWalk.problems().isEmpty(),
             qPrintable(settingsWalk.problems().join(QLatin1Char('\n'))));
    // Qt's own buttons come from qtbase_zh_CN.
    const QList<QAbstractButton *> buttons = settings->findChildren<QAbstractButton *>();
    QVERIFY(std::any_of(buttons.cbegin(), buttons.cend(), [](const QAbstractButton *button) {
        return button->text().remove(QLatin1Char('&')).startsWith(QStringLiteral("确定"));
    }));
    // A problem with a value is said in Chinese too, as the dialog names the field.
    auto *openAi = settings->findChild<QRadioButton *>(QStringLiteral("openAiProvider"));
    auto *baseUrl = settings->findChild<QLineEdit *>(QStringLiteral("modelBaseUrl"));
    QVERIFY(openAi && baseUrl);
    openAi->setChecked(true);
    baseUrl->setText(QStringLiteral("ftp://127.0.0.1/v1"));
    QCOMPARE(settings->problem(),
             QStringLiteral("基础 URL（模型）：不是 http:// 或 https:// 地址"));
    QVERIFY(!saveScreenshot(settings, QStringLiteral("translations-zh_CN-settings-problem.png"))
                 .isEmpty());
    TextWalk problemWalk;
    problemWalk.walk(settings);
    QVERIFY2(problemWalk.problems().isEmpty(),
             qPrintable(problemWalk.problems().join(QLatin1Char('\n'))));
    settings->reject();

    // Help › Keyboard shortcuts.
    auto *shortcutsAction =
        window->findChild<QAction *>(QStringLiteral("keyboardShortcutsAction"));
    QVERIFY(shortcutsAction);
    shortcutsAction->trigger();
    ShortcutsDialog *shortcuts = nullptr;
    QVERIFY(QTest::qWaitFor([&] {
        for (ShortcutsDialog *dialog : window->findChildren<ShortcutsDialog *>()) {
            if (dialog->isVisible())
                shortcuts = dialog;
        }
        return shortcuts != nullptr;
    }));
    QVERIFY(!saveScreenshot(shortcuts, QStringLiteral("translations-zh_CN-shortcuts.png"))
                 .isEmpty());
    // Mnemonics in brackets ("新建对话(&N)") are not part of a command's name.
    const QList<QTreeWidgetItem *> newConversation = shortcuts->list()->findItems(
        QStringLiteral("新建对话"), Qt::MatchExactly | Qt::MatchRecursive);
    QCOMPARE(newConversation.size(), 1);
    TextWalk shortcutsWalk;
    shortcutsWalk.walk(shortcuts);
    QVERIFY2(shortcutsWalk.problems().isEmpty(),
             qPrintable(shortcutsWalk.problems().join(QLatin1Char('\n'))));
    shortcuts->close();
}

void TestTranslations::englishShowsStaffWordsForValues()
{
    QVERIFY(startIn(QStringLiteral("en")));
    QCOMPARE(ConsoleLanguage::current(), QStringLiteral("en"));
    const QString turn = m_console->ask(
        QStringLiteral("Create an after-sales ticket for order A1001: the mug arrived broken"));
    QVERIFY(!turn.isEmpty());
    ConfirmationPanel *confirmation = waitingConfirmation(turn);
    QVERIFY(confirmation);
    QVERIFY2(confirmation->argumentsText().contains(QStringLiteral("Category: Damaged item")),
             qPrintable(confirmation->argumentsText()));
    QVERIFY(!confirmation->argumentsText().contains(QLatin1String("DAMAGED")));
    QSignalSpy finished(m_console->loop(), &AgentLoop::turnFinished);
    confirmation->confirmButton()->click();
    QVERIFY(finished.wait(20000));
    ToolCallCard *ticket = card(turn, QStringLiteral("createTicket"));
    QVERIFY(ticket);
    QCOMPARE(ticket->statusText(), QStringLiteral("OK"));
    QVERIFY2(ticket->argumentsText().contains(QStringLiteral("Category: Damaged item")),
             qPrintable(ticket->argumentsText()));
    QVERIFY(!ticket->argumentsText().contains(QLatin1String("DAMAGED")));
    // English plural forms: "1 attempt", never "1 attempt(s)".
    QVERIFY2(ticket->attemptSummaryText().startsWith(QStringLiteral("1 attempt · ")),
             qPrintable(ticket->attemptSummaryText()));
    QVERIFY(!saveScreenshot(m_console->window.get(), QStringLiteral("translations-en-ticket.png"))
                 .isEmpty());
}

// Settings › Language: the choice is stored at once and said to apply from the next start (the
// window keeps one language while it runs); the next start is in Chinese.
void TestTranslations::theSettingsChoiceIsStoredAndUsedAtTheNextStart()
{
    QVERIFY(startIn(QStringLiteral("en")));
    ConsoleWindow *window = m_console->window.get();
    auto *settingsAction =
        window->findChild<QAction *>(QStringLiteral("connectionSettingsAction"));
    QVERIFY(settingsAction);
    settingsAction->trigger();
    auto *settings = window->findChild<ConnectionSettingsDialog *>();
    QVERIFY(settings);
    QCOMPARE(settings->language(), QStringLiteral("en"));
    auto *language = settings->findChild<QComboBox *>(QStringLiteral("language"));
    QVERIFY(language);
    language->setCurrentIndex(language->findData(QStringLiteral("zh_CN")));
    settings->accept();
    QCOMPARE(m_stored->settings().language, QStringLiteral("zh_CN"));
    QVERIFY2(window->statusBar()->currentMessage().contains(
                 QStringLiteral("The new language is used from the next start.")),
             qPrintable(window->statusBar()->currentMessage()));
    QCOMPARE(ConsoleLanguage::current(), QStringLiteral("en"));
    QCOMPARE(window->menuBar()->actions().first()->text(), QStringLiteral("&Conversation"));

    // The next start reads it.
    m_console.reset();
    m_stored.reset();
    QVERIFY(startIn(QString()));
    QCOMPARE(ConsoleLanguage::current(), QStringLiteral("zh_CN"));
    QCOMPARE(m_console->window->menuBar()->actions().first()->text(),
             QStringLiteral("对话(&C)"));
}

// agent-console's shell: the Settings choice switches the language live by making the window
// again over the same runtime, with the conversation, the geometry and the typed question kept.
void TestTranslations::theShellSwitchesTheLanguageLive()
{
    ConsoleLanguage::install(QStringLiteral("en"));
    QTemporaryDir data;
    QVERIFY(data.isValid());
    RuntimeOptions options;
    options.dataDirectory = data.path();
    AgentRuntime runtime(options);
    ConsoleSettings stored(settingsFile());
    stored.load();
    ConsoleShell shell(&runtime, &stored);
    shell.window()->resize(1280, 800);
    shell.show();
    QVERIFY(QTest::qWaitForWindowExposed(shell.window()));
    QSignalSpy ready(&runtime, &AgentRuntime::ready);
    runtime.start();
    QVERIFY(ready.wait(20000));

    QSignalSpy finished(runtime.agentLoop(), &AgentLoop::turnFinished);
    shell.window()->questionInput()->setPlainText(QStringLiteral("订单 A1001 的状态是什么？"));
    QTest::keyClick(shell.window()->questionInput(), Qt::Key_Return);
    QVERIFY(finished.wait(20000));
    const QString turn = finished.first().first().value<TurnResult>().requestId;
    shell.window()->questionInput()->setPlainText(QStringLiteral("还有 A1002"));

    QSignalSpy rebuilt(&shell, &ConsoleShell::windowRebuilt);
    auto *settingsAction =
        shell.window()->findChild<QAction *>(QStringLiteral("connectionSettingsAction"));
    QVERIFY(settingsAction);
    settingsAction->trigger();
    auto *settings = shell.window()->findChild<ConnectionSettingsDialog *>();
    QVERIFY(settings);
    auto *language = settings->findChild<QComboBox *>(QStringLiteral("language"));
    language->setCurrentIndex(language->findData(QStringLiteral("zh_CN")));
    settings->accept();
    QVERIFY(rebuilt.wait(5000));
    QCOMPARE(stored.settings().language, QStringLiteral("zh_CN"));
    QCOMPARE(ConsoleLanguage::current(), QStringLiteral("zh_CN"));

    ConsoleWindow *window = shell.window();
    QVERIFY(QTest::qWaitForWindowExposed(window));
    QCOMPARE(window->menuBar()->actions().first()->text(), QStringLiteral("对话(&C)"));
    QCOMPARE(window->questionInput()->toPlainText(), QStringLiteral("还有 A1002"));
    QCOMPARE(window->size(), QSize(1280, 800));
    // The same conversation, reopened from the history, its turn in the new words.
    QTRY_COMPARE(window->transcript()->requestIds(), QStringList{turn});
    QCOMPARE(window->transcript()->turnStatusText(turn), QStringLiteral("已回答"));
    QTRY_COMPARE(window->conversationRestorer()->storedConversation(),
                 runtime.agentLoop()->session().conversationId);
    QVERIFY(!saveScreenshot(window, QStringLiteral("translations-live-switch.png")).isEmpty());
    TextWalk walk;
    for (const QString &each : window->transcript()->requestIds())
        walk.exempt(window->transcript()->answerText(each));
    walk.walk(window);
    QVERIFY2(walk.problems().isEmpty(), qPrintable(walk.problems().join(QLatin1Char('\n'))));

    // And back, the same way.
    window->findChild<QAction *>(QStringLiteral("connectionSettingsAction"))->trigger();
    settings = window->findChild<ConnectionSettingsDialog *>();
    QVERIFY(settings);
    language = settings->findChild<QComboBox *>(QStringLiteral("language"));
    language->setCurrentIndex(language->findData(QStringLiteral("en")));
    settings->accept();
    QVERIFY(rebuilt.wait(5000));
    QCOMPARE(shell.window()->menuBar()->actions().first()->text(),
             QStringLiteral("&Conversation"));
    QTRY_COMPARE(shell.window()->transcript()->turnStatusText(turn), QStringLiteral("Answered"));
}

QTEST_MAIN(TestTranslations)
#include "tst_translations.moc"
