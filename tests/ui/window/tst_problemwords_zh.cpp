// The problems core words at run time, as the window shows them in Simplified Chinese
// (issue #11 §4): a refused retry-policy value, fault files that do not parse or name a bad
// key or value, scenario and export files that cannot be read, a ledger spec refused in the
// settings, stored settings that are not used, and start failures (a damaged data file, the
// data directory locked by another process, a ledger spec that names no file). Each goes
// through the real window over a real runtime; each text must hold Chinese and no English
// word but the names, key paths and paths it quotes. The policy refusal, the start failure and
// the refused ledger spec are screenshotted (problemwords-zh_CN-*.png).

#include "panelfiles.h"
#include "consolefixture.h"
#include "englishwords.h"
#include "screenshots.h"

#include "core/console/consolesettings.h"
#include "ui/window/consolelanguage.h"
#include "ui/export/conversationexporter.h"
#include "ui/faults/faultpanel.h"
#include "ui/common/noticebanner.h"
#include "ui/faults/policyeditor.h"
#include "ui/faults/scenariopanel.h"
#include "ui/common/statuschip.h"
#include "ui/settings/connectionsettingsdialog.h"

#include <QAction>
#include <QDir>
#include <QDockWidget>
#include <QFile>
#include <QLineEdit>
#include <QLockFile>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStandardPaths>

using namespace AgentConsole;
using namespace AgentConsole::Testing;

namespace {

bool hasChinese(const QString &text)
{
    static const QRegularExpression cjk(QStringLiteral("[\\x{4e00}-\\x{9fff}]"));
    return text.contains(cjk);
}

// Chinese, with no English word left once the quoted names (key paths, option names, values
// from the file) are taken out: those stay as the file or the command line spells them.
bool isChineseText(const QString &where, const QString &text, const QStringList &quoted = {})
{
    qInfo("%s: %s", qPrintable(where), qPrintable(text)); // for people to read in the log
    QString rest = text;
    for (const QString &name : quoted)
        rest.remove(name);
    const QStringList english = englishWords(rest);
    if (hasChinese(text) && english.isEmpty())
        return true;
    qWarning("%s is not Chinese: \"%s\" (English left: %s)", qPrintable(where), qPrintable(text),
        qPrintable(english.join(QLatin1Char(' '))));
    return false;
}

// Replaces a spin box's text as typed keys, so valueChanged fires as it would for a tester.
void typeInto(QAbstractSpinBox *spin, const QString &text)
{
    spin->setFocus();
    spin->selectAll();
    QTest::keyClick(spin, Qt::Key_Backspace);
    QTest::keyClicks(spin, text);
}

bool writeFile(const QString &path, const QByteArray &contents)
{
    QFile file(path);
    return file.open(QIODevice::WriteOnly) && file.write(contents) == contents.size();
}

} // namespace

class tst_ProblemWordsZh final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void aRefusedPolicyValueReadsChinese();
    void faultFilesThatDoNotParseReadChinese();
    void scenarioAndExportFilesReadChinese();
    void whatDifferedInAScenarioReadsChinese();
    void shippedPlansVerdictsAndBreakersReadChinese();
    void aRefusedLedgerSpecReadsChinese();
    void storedSettingsProblemsReadChinese();
    void aDamagedDataFileReadsChinese();
    void aLockedDataDirectoryReadsChinese();
    void aLedgerSpecWithoutFileReadsChinese();

private:
    // A window over a runtime that failed to start in `options`; its reason, empty when it
    // started after all.
    QString failedStart(
        const RuntimeOptions &options, ConsoleFixture &console, bool screenshot = false);

    QTemporaryDir m_config;
};

void tst_ProblemWordsZh::initTestCase()
{
    QStandardPaths::setTestModeEnabled(true);
    QVERIFY(m_config.isValid());
    qputenv("XDG_CONFIG_HOME", m_config.path().toLocal8Bit());
    qputenv("HOME", m_config.path().toLocal8Bit());
    qRegisterMetaType<TurnResult>();
    QCOMPARE(ConsoleLanguage::install(QStringLiteral("zh_CN")), QStringLiteral("zh_CN"));
}

void tst_ProblemWordsZh::cleanupTestCase()
{
    ConsoleLanguage::install(QStringLiteral("en"));
}

// Out of range in the policy editor: the reason beside its field and in the banner, both in
// Chinese; the tool keeps its policy.
void tst_ProblemWordsZh::aRefusedPolicyValueReadsChinese()
{
    ConsoleFixture console;
    QVERIFY(console.start());
    PolicyEditor *editor = console.window->policyEditor();
    editor->show();
    editor->raise();
    QVERIFY(editor->selectTool(QStringLiteral("queryInventory")));
    const RetryPolicy before = console.policies()->policy(QStringLiteral("queryInventory"));

    auto *timeout
        = qobject_cast<QSpinBox *>(editor->fieldEditor(QStringLiteral("attemptTimeout")));
    QVERIFY(timeout);
    typeInto(timeout, QStringLiteral("5"));
    // Beside its own field although the text is no longer English.
    const QString beside = editor->fieldProblem(QStringLiteral("attemptTimeout"));
    QVERIFY(isChineseText(QStringLiteral("the field's problem"), beside));
    QVERIFY(editor->fieldProblem(QStringLiteral("maxRetries")).isEmpty());
    QVERIFY(!editor->apply());
    QCOMPARE(console.policies()->policy(QStringLiteral("queryInventory")), before);
    const auto *banner = editor->findChild<NoticeBanner *>(QStringLiteral("policyProblem"));
    QVERIFY(banner && banner->isVisible());
    QVERIFY(isChineseText(QStringLiteral("the policy banner"), banner->text()));
    // Room for the whole form, the reason beside the field and the banner below it.
    QDockWidget *dock = nullptr;
    for (QWidget *up = editor; up && !dock; up = up->parentWidget())
        dock = qobject_cast<QDockWidget *>(up);
    QVERIFY(dock);
    console.window->resize(1400, 1000);
    for (QDockWidget *other : console.window->findChildren<QDockWidget *>()) {
        if (other != dock)
            other->hide();
    }
    console.window->resizeDocks({dock}, {600}, Qt::Horizontal);
    QVERIFY(!saveScreenshot(console.window.get(), QStringLiteral("problemwords-zh_CN-policy.png"))
                 .isEmpty());

    // A rule between two fields, beside the maximum delay.
    typeInto(timeout, QStringLiteral("1500"));
    auto *maxDelay = qobject_cast<QSpinBox *>(editor->fieldEditor(QStringLiteral("maxDelay")));
    typeInto(maxDelay, QStringLiteral("100"));
    QVERIFY(editor->fieldProblem(QStringLiteral("attemptTimeout")).isEmpty());
    QVERIFY(isChineseText(QStringLiteral("the maximum delay's problem"),
        editor->fieldProblem(QStringLiteral("maxDelay"))));

    // The runtime's own refusal of a policy for a tool it does not have.
    QString error;
    QVERIFY(!console.policies()->setPolicy(QStringLiteral("noSuchTool"), before, &error));
    QVERIFY(isChineseText(QStringLiteral("no such tool"), error, {QStringLiteral("noSuchTool")}));
}

// Loaded in the fault panel: not JSON, a misspelt key, a value out of range, a tool that does
// not exist, a file that is not there. The key path stays as the file spells it.
void tst_ProblemWordsZh::faultFilesThatDoNotParseReadChinese()
{
    ConsoleFixture console;
    QVERIFY(console.start());
    FaultPanel *panel = console.window->faultPanel();
    panel->show();
    panel->raise();
    const QDir dir(console.dataDir.path());

    struct Case
    {
        const char *name;
        QByteArray json;
        QStringList quoted;
    };
    const QList<Case> cases{
        {"not-json.json", QByteArray("{\"tools\": {"), {}},
        {"bad-key.json", QByteArray(R"({"tools": {"queryLogistics": {"latncyMs": 300}}})"),
            {QStringLiteral("tools.queryLogistics.latncyMs")}},
        {"bad-range.json", QByteArray(R"({"tools": {"queryLogistics": {"latencyMs": -1}}})"),
            {QStringLiteral("tools.queryLogistics.latencyMs")}},
        {"bad-tool.json", QByteArray(R"({"tools": {"queryWeather": {"hang": true}}})"),
            {QStringLiteral("tools.queryWeather")}},
        {"bad-status.json", QByteArray(R"({"backend": {"permanentStatus": 500}})"),
            {QStringLiteral("backend.permanentStatus")}},
    };
    for (const Case &each : cases) {
        const QString path = dir.filePath(QLatin1String(each.name));
        QVERIFY(writeFile(path, each.json));
        QCOMPARE(Testing::loadFaultFile(panel, path), std::optional<bool>(false));
        const QString shown = panel->noticeText();
        QVERIFY2(isChineseText(QLatin1String(each.name), shown, each.quoted), qPrintable(shown));
        for (const QString &key : each.quoted)
            QVERIFY2(shown.contains(key), qPrintable(shown));
    }
    QCOMPARE(Testing::loadFaultFile(panel, dir.filePath(QStringLiteral("missing.json"))),
             std::optional<bool>(false));
    QVERIFY(isChineseText(QStringLiteral("a missing file"), panel->noticeText()));
    QVERIFY(!console.faults()->hasActiveFaults());
}

// A scenario file and an export that cannot be read, opened from the window: the scenario's
// fault plan is refused in the scenario's words, the export's JSON in the export's.
void tst_ProblemWordsZh::scenarioAndExportFilesReadChinese()
{
    ConsoleFixture console;
    QVERIFY(console.start());
    const QDir dir(console.dataDir.path());
    ScenarioPanel *panel = console.window->scenarioPanel();
    panel->show();

    const QString notJson = dir.filePath(QStringLiteral("not-json.json"));
    QVERIFY(writeFile(notJson, QByteArray("{\"title\": ")));
    QCOMPARE(Testing::runScenarioFile(panel, notJson), std::optional<bool>(false));
    QVERIFY(isChineseText(QStringLiteral("a scenario that is not JSON"), panel->noticeText()));

    const QString badFault = dir.filePath(QStringLiteral("bad-fault.json"));
    QVERIFY(writeFile(badFault, QByteArray(R"({"title": "t", "summary": "s",
        "faults": {"tools": {"queryLogistics": {"latncyMs": 5}}}})")));
    QCOMPARE(Testing::runScenarioFile(panel, badFault), std::optional<bool>(false));
    const QString key = QStringLiteral("faults.tools.queryLogistics.latncyMs");
    QVERIFY2(panel->noticeText().contains(key), qPrintable(panel->noticeText()));
    QVERIFY(isChineseText(QStringLiteral("a scenario's fault plan"), panel->noticeText(), {key}));

    const QString brokenExport = dir.filePath(QStringLiteral("broken-export.json"));
    QVERIFY(writeFile(brokenExport, QByteArray("{\"format\": ")));
    QSignalSpy failed(console.window->exporter(), &ConversationExporter::failed);
    console.window->exporter()->openExport(brokenExport);
    QTRY_COMPARE_WITH_TIMEOUT(failed.size(), 1, 20000);
    QVERIFY(isChineseText(QStringLiteral("an export's title"), failed.first().at(0).toString()));
    QVERIFY(isChineseText(QStringLiteral("an export that is not JSON"),
                          failed.first().at(1).toString()));
}

// A scenario that did not go as expected says what differed in Chinese and in staff words
// (issue #41 §7): the call by its title, the results in the cards' words, the tool calls
// counted, the outcome in the transcript's words. The wire names stay for testers, in the
// verdict's tooltip.
void tst_ProblemWordsZh::whatDifferedInAScenarioReadsChinese()
{
    ConsoleFixture console;
    QVERIFY(console.start());
    ScenarioPanel *panel = console.window->scenarioPanel();
    panel->show();
    const QString file = QDir(console.dataDir.path()).filePath(QStringLiteral("hopeful.json"));
    QVERIFY(writeFile(file, QByteArray(R"({
        "title": "Too hopeful",
        "summary": "Expects the flaky logistics lookup to answer at once, alone, and slowly.",
        "faults": {"tools": {"queryLogistics": {"transientFailures": 2}}},
        "question": "Where is order A1001?",
        "expect": {
            "calls": [{"tool": "queryLogistics", "code": "OK", "attempts": 1},
                      {"tool": "queryLogistics", "code": "OK", "attempts": 1},
                      {"tool": "queryLogistics", "code": "OK", "attempts": 1}],
            "outcome": "partial",
            "maxMs": 5000
        }
    })")));
    QSignalSpy finished(panel, &ScenarioPanel::finished);
    QCOMPARE(Testing::runScenarioFile(panel, file), std::optional<bool>(true));
    QVERIFY(finished.wait(20000));
    QCOMPARE(finished.first().first().toBool(), false);
    const QString said = panel->resultText();
    QVERIFY2(said.contains(QStringLiteral("查询物流（A1001）")), qPrintable(said));
    QVERIFY2(said.contains(QStringLiteral("实际为“成功”（3 次尝试后）")), qPrintable(said));
    QVERIFY2(said.contains(QStringLiteral("个工具调用")), qPrintable(said));
    QVERIFY2(said.contains(QStringLiteral("预期以“部分回答”结束")), qPrintable(said));
    QVERIFY(isChineseText(QStringLiteral("what differed in a scenario"), said));
    const QString forTesters
        = panel->findChild<QLabel *>(QStringLiteral("scenarioResult"))->toolTip();
    QVERIFY2(forTesters.contains(QStringLiteral("queryLogistics")), qPrintable(forTesters));
}

// What the QA instruments say as they work (issue #24 §6): a shipped fault plan's description
// once loaded, a scenario's verdict with its restore line, and the breaker chip the scenario
// leaves behind ("Circuit open: Logistics · embedded store").
void tst_ProblemWordsZh::shippedPlansVerdictsAndBreakersReadChinese()
{
    ConsoleFixture console;
    QVERIFY(console.start());
    FaultPanel *faults = console.window->faultPanel();
    faults->show();
    auto *description = faults->findChild<QLabel *>(QStringLiteral("faultPlanDescription"));
    QVERIFY(description);
    const QDir plans(QStringLiteral(AGENT_CONSOLE_FAULTS_DIR));
    int loaded = 0;
    for (const QString &file : plans.entryList({QStringLiteral("*.json")}, QDir::Files)) {
        const std::optional<bool> answer = Testing::loadFaultFile(faults, plans.filePath(file));
        QVERIFY(answer);
        if (!*answer)
            continue; // a plan for another backend, refused in words tested above
        ++loaded;
        QVERIFY2(isChineseText(file, description->text(), {QStringLiteral("Retry-After")}),
                 qPrintable(description->text()));
    }
    QVERIFY2(loaded >= 5, qPrintable(QString::number(loaded)));
    faults->clearAllFaults();
    QVERIFY(!console.faults()->hasActiveFaults());

    ScenarioPanel *scenarios = console.window->scenarioPanel();
    scenarios->show();
    QSignalSpy finished(scenarios, &ScenarioPanel::finished);
    QCOMPARE(Testing::runScenarioFile(scenarios, QDir(QStringLiteral(AGENT_CONSOLE_SCENARIO_DIR))
                                                     .filePath(u"down-breaker-opens.json"_qs)),
             std::optional<bool>(true));
    // The breaker it opens is shown while it runs (the run puts the breakers back after).
    auto *breaker = console.window->findChild<StatusChip *>(QStringLiteral("breakerChip"));
    QVERIFY(breaker);
    QTRY_VERIFY_WITH_TIMEOUT(breaker->isVisibleTo(console.window.get()), 60000);
    QVERIFY(isChineseText(QStringLiteral("the breaker chip"), breaker->text()));
    QVERIFY(isChineseText(QStringLiteral("the breaker chip's tip"), breaker->toolTip()));
    QVERIFY(finished.size() == 1 || finished.wait(60000));
    QCOMPARE(finished.first().first().toBool(), true);
    QVERIFY2(isChineseText(QStringLiteral("the scenario's verdict"), scenarios->resultText()),
             qPrintable(scenarios->resultText()));
    QTRY_VERIFY(!breaker->isVisibleTo(console.window.get()));
}

// A ledger spec the settings dialog refuses: said in Chinese, a password never echoed.
void tst_ProblemWordsZh::aRefusedLedgerSpecReadsChinese()
{
    ConsoleFixture console;
    QVERIFY(console.start());
    auto *action
        = console.window->findChild<QAction *>(QStringLiteral("connectionSettingsAction"));
    QVERIFY(action && action->isEnabled());
    action->trigger();
    auto *dialog = console.window->findChild<ConnectionSettingsDialog *>();
    QVERIFY(dialog);
    QVERIFY(QTest::qWaitForWindowExposed(dialog));
    auto *ledger = dialog->findChild<QLineEdit *>(QStringLiteral("ledgerSpec"));
    QVERIFY(ledger);
    const auto *banner = dialog->findChild<NoticeBanner *>(QStringLiteral("settingsProblem"));
    QVERIFY(banner);

    ledger->setText(QStringLiteral("mysql://db.example/ledger"));
    QVERIFY(isChineseText(QStringLiteral("an unknown ledger"), dialog->problem()));
    QTRY_VERIFY(banner->isVisible());
    QVERIFY(isChineseText(QStringLiteral("the settings banner"), banner->text()));

    ledger->setText(QStringLiteral("postgresql://staff:hunter2@db.example:5432/ledger"));
    const QString password = dialog->problem();
    QVERIFY(isChineseText(QStringLiteral("a ledger with a password"), password));
    QVERIFY(!password.contains(QLatin1String("hunter2")));
    QVERIFY(!banner->text().contains(QLatin1String("hunter2")));
    QVERIFY(!saveScreenshot(dialog, QStringLiteral("problemwords-zh_CN-ledger.png")).isEmpty());
    dialog->reject();
}

// A settings file with values the console does not take: the notice after the start names
// the keys, in Chinese, and the defaults are used.
void tst_ProblemWordsZh::storedSettingsProblemsReadChinese()
{
    const QString file = m_config.filePath(QStringLiteral("broken.ini"));
    QVERIFY(writeFile(file,
        QByteArray("[model]\nprovider=openai\nstream=maybe\n"
                   "[ledger]\nspec=mysql://db.example/ledger\n"
                   "[ui]\nlanguage=zh_CN\n")));
    ConsoleSettings stored(file);
    stored.load();
    QCOMPARE(stored.problems().size(), 3);
    ConsoleFixture console;
    QVERIFY(console.start());
    console.window->useStoredSettings(&stored);
    NoticeBanner *banner = console.window->noticeBanner();
    QVERIFY(banner->isVisible());
    const QStringList lines = banner->text().split(QLatin1Char('\n'));
    QCOMPARE(lines.size(), 4); // the title and one line each
    for (const QString &line : lines) {
        // "model" is the group the connection is stored under, false and true the values
        // model/stream takes: as the file spells them.
        QVERIFY(isChineseText(QStringLiteral("a stored-settings line"), line,
            {QStringLiteral("model"), QStringLiteral("false"), QStringLiteral("true")}));
    }
    QVERIFY(!banner->text().contains(QLatin1String("mysql://")));

    // A settings file that is not a file at all.
    const QString folder = m_config.filePath(QStringLiteral("folder.ini"));
    QVERIFY(QDir().mkpath(folder));
    ConsoleSettings unreadable(folder);
    unreadable.load();
    QCOMPARE(unreadable.problems().size(), 1);
    QVERIFY(isChineseText(
        QStringLiteral("an unreadable settings file"), unreadable.problems().constFirst()));
}

QString tst_ProblemWordsZh::failedStart(
    const RuntimeOptions &options, ConsoleFixture &console, bool screenshot)
{
    RuntimeOptions started = options;
    started.dataDirectory = console.dataDir.path();
    console.runtime = std::make_unique<AgentRuntime>(started);
    console.window = std::make_unique<ConsoleWindow>(console.runtime.get());
    console.window->resize(1100, 720);
    console.window->show();
    if (!QTest::qWaitForWindowExposed(console.window.get()))
        return {};
    QSignalSpy failed(console.runtime.get(), &AgentRuntime::failed);
    console.runtime->start();
    if (!failed.wait(20000))
        return {};
    const QString reason = failed.first().first().toString();
    if (!console.window->noticeBanner()->isVisible()
        || !console.window->noticeBanner()->text().contains(reason)) {
        qWarning("the window does not show the reason: %s", qPrintable(reason));
        return {};
    }
    if (screenshot)
        saveScreenshot(console.window.get(), QStringLiteral("problemwords-zh_CN-start.png"));
    return console.window->noticeBanner()->text();
}

// A data directory that was in use, whose journal is now empty: the console does not start
// and says which file and what to do, in Chinese.
void tst_ProblemWordsZh::aDamagedDataFileReadsChinese()
{
    ConsoleFixture console;
    QVERIFY(console.start({}, false)); // the directory is in use from now on
    console.window.reset();
    console.runtime.reset();
    const QString turns = QDir(console.dataDir.path()).filePath(QStringLiteral("turns.sqlite"));
    for (const QString &suffix : {QString(), QStringLiteral("-wal"), QStringLiteral("-shm")})
        QFile::remove(turns + suffix);
    QVERIFY(writeFile(turns, QByteArray()));

    const QString shown = failedStart({}, console, true);
    QVERIFY2(shown.contains(QDir::toNativeSeparators(turns)), qPrintable(shown));
    QVERIFY(isChineseText(QStringLiteral("an empty journal"), shown));
    QCOMPARE(QFileInfo(turns).size(), 0); // not recreated
}

// Another process holds the data directory's lock: named by its pid, in Chinese.
void tst_ProblemWordsZh::aLockedDataDirectoryReadsChinese()
{
    ConsoleFixture console;
    QLockFile other(QDir(console.dataDir.path()).filePath(QStringLiteral("console.lock")));
    QVERIFY(other.tryLock(0));
    const QString shown = failedStart({}, console);
    QVERIFY2(
        shown.contains(QString::number(QCoreApplication::applicationPid())), qPrintable(shown));
    QVERIFY(isChineseText(
        QStringLiteral("a locked data directory"), shown, {QStringLiteral("--data-dir")}));
}

// A ledger spec that passes the settings' check but names no file: the start fails with the
// ledger's own reason, in Chinese.
void tst_ProblemWordsZh::aLedgerSpecWithoutFileReadsChinese()
{
    ConsoleFixture console;
    RuntimeOptions options;
    options.ledgerSpec = QStringLiteral("sqlite:");
    const QString shown = failedStart(options, console);
    QVERIFY(isChineseText(
        QStringLiteral("a ledger spec without a file"), shown, {QStringLiteral("'sqlite:'")}));
}

QTEST_MAIN(tst_ProblemWordsZh)
#include "tst_problemwords_zh.moc"
