// The window of a team console (issue #43 §2, docs/TEAM.md): when the team's database cannot
// be reached at the start it asks, never silently going on alone; working alone is shown in the
// status bar and above the conversation, and its exports say so; a team console names its
// database in the status bar. English and Simplified Chinese, with screenshots.
#include "runtimestart.h"
#include "screenshots.h"
#include "testdatabases.h"

#include "core/console/agentruntime.h"
#include "core/console/runtimemonitor.h"
#include "core/export/conversationexport.h"
#include "core/llm/secretstore.h"
#include "core/turn/agentloop.h"
#include "core/turn/turnresult.h"
#include "ui/common/noticebanner.h"
#include "ui/common/statuschip.h"
#include "ui/history/historysidebar.h"
#include "ui/window/consolelanguage.h"
#include "ui/window/consolewindow.h"

#include "closedport.h"

#include <QPushButton>
#include <QToolButton>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include <memory>

using namespace AgentConsole;
using namespace AgentConsole::Testing;

class tst_TeamWindow : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void cleanup();
    void anUnreachableTeamIsAskedAboutAndWorkingAloneIsShown_data();
    void anUnreachableTeamIsAskedAboutAndWorkingAloneIsShown();
    void quittingAtTheQuestionStopsTheStart();
    void aTeamConsoleNamesItsDatabase();
    void twoWindowsOfOneAgentShareTheHistory();

private:
    // A runtime on `teamUrl` that asks when it cannot reach it, and its window, shown.
    bool makeConsole(const QString &teamUrl);

    QTemporaryDir m_dataDir;
    std::unique_ptr<AgentRuntime> m_runtime;
    std::unique_ptr<ConsoleWindow> m_window;
};

void tst_TeamWindow::cleanup()
{
    m_window.reset();
    m_runtime.reset();
    ConsoleLanguage::install(QStringLiteral("en"));
}

bool tst_TeamWindow::makeConsole(const QString &teamUrl)
{
    RuntimeOptions options;
    options.dataDirectory = m_dataDir.filePath(
        QString::number(QDateTime::currentMSecsSinceEpoch()));
    options.teamSpec = teamUrl;
    options.whenTeamUnreachable = RuntimeOptions::WhenTeamUnreachable::Ask;
    options.secrets = std::make_shared<MemorySecretStore>(); // never the machine's keychain
    m_runtime = std::make_unique<AgentRuntime>(options);
    m_window = std::make_unique<ConsoleWindow>(m_runtime.get());
    m_window->resize(1280, 800);
    m_window->show();
    return QTest::qWaitForWindowExposed(m_window.get());
}

void tst_TeamWindow::anUnreachableTeamIsAskedAboutAndWorkingAloneIsShown_data()
{
    QTest::addColumn<QString>("language");
    QTest::addColumn<QString>("question"); // the banner's title
    QTest::addColumn<QString>("aloneChip");
    QTest::newRow("en") << "en"
                        << "The team's database cannot be reached"
                        << "Working alone";
    QTest::newRow("zh_CN") << "zh_CN"
                           << "无法连接团队数据库"
                           << "单机工作中";
}

void tst_TeamWindow::anUnreachableTeamIsAskedAboutAndWorkingAloneIsShown()
{
    QFETCH(QString, language);
    QFETCH(QString, question);
    QFETCH(QString, aloneChip);
    ConsoleLanguage::install(language);
    const ClosedPort port;
    QVERIFY(port.port() != 0);
    QVERIFY(makeConsole(QStringLiteral("postgresql://agent@127.0.0.1:%1/team").arg(port.port())));
    QSignalSpy asked(m_runtime.get(), &AgentRuntime::teamUnreachable);
    QSignalSpy ready(m_runtime.get(), &AgentRuntime::ready);
    QSignalSpy failed(m_runtime.get(), &AgentRuntime::failed);
    m_runtime->start();
    QTRY_COMPARE_WITH_TIMEOUT(asked.size(), 1, 20'000);

    // The start waits for the staff member: not ready, not failed, and the question shown.
    auto *banner = m_window->findChild<NoticeBanner *>(QStringLiteral("teamBanner"));
    auto *alone = m_window->findChild<QPushButton *>(QStringLiteral("runAloneButton"));
    auto *quit = m_window->findChild<QPushButton *>(QStringLiteral("quitButton"));
    QVERIFY(banner && alone && quit);
    QTRY_VERIFY(banner->isVisible());
    QVERIFY2(banner->text().contains(question), qPrintable(banner->text()));
    QCOMPARE(banner->tone(), Tone::Danger);
    QVERIFY(alone->isVisible() && quit->isVisible());
    QVERIFY(!banner->closeButton()->isVisible()); // an answer is needed
    QVERIFY(ready.isEmpty() && failed.isEmpty());
    QVERIFY(
        !saveScreenshot(m_window.get(), QStringLiteral("team-unreachable-%1.png").arg(language))
             .isEmpty());

    alone->click();
    QTRY_COMPARE_WITH_TIMEOUT(ready.size(), 1, 20'000);
    QVERIFY(failed.isEmpty());
    auto *chip = m_window->findChild<StatusChip *>(QStringLiteral("teamChip"));
    QVERIFY(chip);
    QTRY_VERIFY(chip->isVisible());
    QCOMPARE(chip->text(), aloneChip);
    QCOMPARE(chip->tone(), Tone::Warning);
    QVERIFY(banner->isVisible()); // working alone stays in sight
    QCOMPARE(banner->tone(), Tone::Warning);
    QVERIFY(!alone->isVisible());
    QVERIFY(m_runtime->monitor()->team().alone);

    // A turn, and its export marked as made alone.
    QSignalSpy finished(m_runtime->agentLoop(), &AgentLoop::turnFinished);
    QVERIFY(!m_runtime->agentLoop()->ask(QStringLiteral("Where is order A1001?")).isEmpty());
    QTRY_COMPARE_WITH_TIMEOUT(finished.size(), 1, 20'000);
    const ConversationExport exported = ConversationExport::fromRuntimeState(
        *m_runtime, {finished.first().first().value<TurnResult>()});
    const QJsonObject json = exported.toJson();
    QCOMPARE(json.value(u"environment").toObject().value(u"store").toString(),
             QStringLiteral("alone"));
    QVERIFY(exported.toMarkdown().contains(QLatin1String("**alone**")));
    QVERIFY(!saveScreenshot(m_window.get(), QStringLiteral("team-alone-%1.png").arg(language))
                 .isEmpty());
}

void tst_TeamWindow::quittingAtTheQuestionStopsTheStart()
{
    const ClosedPort port;
    QVERIFY(makeConsole(QStringLiteral("postgresql://agent@127.0.0.1:%1/team").arg(port.port())));
    QSignalSpy asked(m_runtime.get(), &AgentRuntime::teamUnreachable);
    QSignalSpy failed(m_runtime.get(), &AgentRuntime::failed);
    m_runtime->start();
    QTRY_COMPARE_WITH_TIMEOUT(asked.size(), 1, 20'000);
    auto *quit = m_window->findChild<QPushButton *>(QStringLiteral("quitButton"));
    QVERIFY(quit);
    quit->click();
    QTRY_COMPARE(failed.size(), 1);
    QVERIFY(failed.first().first().toString().contains(QLatin1String("Cannot reach")));
    QTRY_VERIFY(!m_window->isVisible());
    QVERIFY(!m_runtime->isReady());
}

void tst_TeamWindow::aTeamConsoleNamesItsDatabase()
{
    TestDatabases databases(QStringLiteral("team_window_test"));
    QString error;
    const QString url = databases.create(&error);
    if (url.isEmpty())
        QFAIL(qPrintable(error));
    QVERIFY(makeConsole(url));
    QVERIFY(startAndWait(*m_runtime));
    auto *chip = m_window->findChild<StatusChip *>(QStringLiteral("teamChip"));
    QVERIFY(chip);
    QTRY_VERIFY(chip->isVisible());
    QCOMPARE(chip->text(), QStringLiteral("Team"));
    QCOMPARE(chip->tone(), Tone::Info);
    QVERIFY(chip->toolTip().contains(m_runtime->monitor()->team().database));
    QVERIFY(!chip->toolTip().contains(QLatin1String("postgresql://")));
    auto *banner = m_window->findChild<NoticeBanner *>(QStringLiteral("teamBanner"));
    QVERIFY(banner && !banner->isVisible());
    m_window.reset();
    m_runtime.reset(); // before its database is dropped
}

// Issue #43 §3, §7: two windows (two desks) of one agent on the team's database: what one asked
// is in the other's History, and reopens there with its answer.
void tst_TeamWindow::twoWindowsOfOneAgentShareTheHistory()
{
    TestDatabases databases(QStringLiteral("team_window_history"));
    QString error;
    const QString url = databases.create(&error);
    if (url.isEmpty())
        QFAIL(qPrintable(error));
    QVERIFY(makeConsole(url));
    QVERIFY(startAndWait(*m_runtime));
    QSignalSpy finished(m_runtime->agentLoop(), &AgentLoop::turnFinished);
    QVERIFY(!m_runtime->agentLoop()->ask(QStringLiteral("Where is order A1001?")).isEmpty());
    QTRY_COMPARE_WITH_TIMEOUT(finished.size(), 1, 20'000);
    const QString conversation = finished.first().first().value<TurnResult>().conversationId;

    // The second desk, its own data directory, started while the first is still open.
    RuntimeOptions options;
    options.dataDirectory = m_dataDir.filePath(QStringLiteral("second-desk"));
    options.teamSpec = url;
    options.secrets = std::make_shared<MemorySecretStore>();
    AgentRuntime secondRuntime(options);
    ConsoleWindow second(&secondRuntime);
    second.resize(1280, 800);
    second.show();
    QVERIFY(QTest::qWaitForWindowExposed(&second));
    QVERIFY(startAndWait(secondRuntime));
    QTRY_VERIFY_WITH_TIMEOUT(second.historySidebar()->conversationIds().contains(conversation),
                             10'000);
    QVERIFY(second.historySidebar()
                ->rowTexts()
                .join(QLatin1Char('\n'))
                .contains(QLatin1String("Where is order A1001?")));
    QVERIFY(!saveScreenshot(&second, QStringLiteral("team-history-second-desk.png")).isEmpty());
    m_window.reset();
    m_runtime.reset();
}

QTEST_MAIN(tst_TeamWindow)
#include "tst_teamwindow.moc"
