// The history sidebar over a real runtime on a temporary data directory (docs/HISTORY.md):
// conversations listed after a restart, reopened from the journal, searched, deleted with a
// confirmation, the one open at quit open again at start, and an interrupted turn still
// offered for resumption beside it.

#include "consolefixture.h"
#include "screenshots.h"

#include "core/history/conversationhistory.h"
#include "ui/history/conversationrestorer.h"
#include "ui/history/historysidebar.h"
#include "ui/history/interruptedturnsbanner.h"
#include "ui/transcript/attempttimeline.h"
#include "ui/transcript/toolcallcard.h"
#include "ui/transcript/transcriptview.h"

#include "journalfixtures.h"

#include <QAction>
#include <QApplication>
#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QMessageBox>
#include <QPushButton>
#include <QSet>
#include <QSignalSpy>
#include <QToolButton>

using namespace AgentConsole;
using namespace AgentConsole::Testing;

class TestHistorySidebar final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void init();
    void cleanup();
    void listsAfterRestartAndRestoresWhereYouWere();
    void reopenShowsTheTurnsAndCarriesTheConversationOn();
    void searchFiltersByTextAndOrderId();
    void deleteAsksFirstAndIsDurable();
    void interruptedTurnIsListedAndStillOffered();
    void aNarrowWindowGivesTheSidebarsRoomToTheConversation();
    void newConversationFollowsItsActionWithoutLayingTheWindowOut();
    void aTurnsEndWritesTheOpenConversationOnlyWhenItChanged();
    void aTurnsEndShowsAFullPageAgainInItsRows();

private:
    bool restart();
    bool ask(const QString &question);
    HistorySidebar *sidebar() const { return m_console->window->historySidebar(); }
    QStringList rows() const { return sidebar()->rowTexts(); }
    int rowOf(const QString &titleStart) const;
    // Two conversations: A1001 then SKU-200, and after "New conversation", A1003.
    void askTwoConversations();

    std::unique_ptr<ConsoleFixture> m_console;
    QString m_first; // conversation ids
    QString m_second;
};

void TestHistorySidebar::init()
{
    m_console = std::make_unique<ConsoleFixture>();
    QVERIFY(m_console->start());
}

void TestHistorySidebar::cleanup()
{
    m_console.reset();
}

// What a restart is to the data directory: the window and the runtime go, new ones start on
// the same directory.
bool TestHistorySidebar::restart()
{
    m_console->window.reset();
    m_console->runtime.reset();
    return m_console->start();
}

bool TestHistorySidebar::ask(const QString &question)
{
    bool ok = false;
    m_console->askAndWait(question, &ok);
    return ok;
}

int TestHistorySidebar::rowOf(const QString &titleStart) const
{
    const QStringList texts = rows();
    for (int i = 0; i < texts.size(); ++i) {
        if (texts.at(i).startsWith(titleStart))
            return i;
    }
    return -1;
}

void TestHistorySidebar::askTwoConversations()
{
    QVERIFY(ask(QStringLiteral("Where is order A1001?")));
    m_first = m_console->loop()->session().conversationId;
    QVERIFY(ask(QStringLiteral("Is SKU-200 in stock?")));
    QTRY_COMPARE(rows().size(), 1);
    m_console->window->newConversationAction()->trigger();
    QVERIFY(m_console->window->transcript()->requestIds().isEmpty());
    QVERIFY(ask(QStringLiteral("Where is order A1003?")));
    m_second = m_console->loop()->session().conversationId;
    QVERIFY(m_first != m_second);
    QTRY_COMPARE(rows().size(), 2);
}

void TestHistorySidebar::listsAfterRestartAndRestoresWhereYouWere()
{
    askTwoConversations();
    QTRY_COMPARE(m_console->window->conversationRestorer()->storedConversation(), m_second);
    QVERIFY(restart());

    // Newest first: the first question is the title, then the time and the outcome in words.
    QTRY_COMPARE(rows().size(), 2);
    QVERIFY2(rows().at(0).startsWith(QStringLiteral("Where is order A1003? — ")),
             qPrintable(rows().at(0)));
    QVERIFY2(rows().at(0).endsWith(QStringLiteral(" · Answered")), qPrintable(rows().at(0)));
    QVERIFY(rows().at(1).startsWith(QStringLiteral("Where is order A1001? — ")));
    QCOMPARE(sidebar()->conversationIds(), (QStringList{m_second, m_first}));
    // Where you were: the conversation open at quit is open again, its turn shown.
    TranscriptView *transcript = m_console->window->transcript();
    QTRY_COMPARE(transcript->requestIds().size(), 1);
    QCOMPARE(transcript->questionText(transcript->requestIds().first()),
             QStringLiteral("Where is order A1003?"));
    QVERIFY(!transcript->answerText(transcript->requestIds().first()).isEmpty());
    QCOMPARE(transcript->turnStatusText(transcript->requestIds().first()),
             QStringLiteral("Answered"));
    QCOMPARE(m_console->loop()->session().conversationId, m_second);
    QCOMPARE(sidebar()->list()->currentRow(), 0);

    // "New conversation" means nothing stored is open at the next start.
    m_console->window->newConversationAction()->trigger();
    QVERIFY(restart());
    QTRY_COMPARE(rows().size(), 2);
    QVERIFY(m_console->window->transcript()->requestIds().isEmpty());
}

void TestHistorySidebar::reopenShowsTheTurnsAndCarriesTheConversationOn()
{
    askTwoConversations();
    QVERIFY(restart());
    QTRY_COMPARE(rows().size(), 2);
    QTRY_COMPARE(m_console->window->transcript()->requestIds().size(), 1);

    // A click on the older row reopens it, read back from the journal.
    QSignalSpy restored(m_console->window->conversationRestorer(),
                        &ConversationRestorer::restored);
    const int row = rowOf(QStringLiteral("Where is order A1001?"));
    QVERIFY(row >= 0);
    QListWidget *list = sidebar()->list();
    QTest::mouseClick(list->viewport(), Qt::LeftButton, {},
                      list->visualItemRect(list->item(row)).center());
    QVERIFY(restored.wait());
    TranscriptView *transcript = m_console->window->transcript();
    const QStringList ids = transcript->requestIds();
    QCOMPARE(ids.size(), 2);
    QCOMPARE(transcript->questionText(ids.at(0)), QStringLiteral("Where is order A1001?"));
    QCOMPARE(transcript->questionText(ids.at(1)), QStringLiteral("Is SKU-200 in stock?"));
    QVERIFY(transcript->answerText(ids.at(0)).contains(QStringLiteral("A1001")));
    QVERIFY(!transcript->footerText(ids.at(1)).isEmpty());
    QVERIFY(!transcript->toolCallCards(ids.at(0)).isEmpty());
    // Its timelines keep the policy's markers: the worst case and the turn's deadline, as
    // they were drawn while the turn ran (issue #24 §6).
    for (ToolCallCard *card : transcript->toolCallCards(ids.at(0))) {
        const ToolCallRecord &call = card->attemptTimeline()->toolCall();
        QVERIFY2(call.worstCaseMs > 0 && call.attemptTimeoutMs > 0 && call.maxAttempts > 0,
                 qPrintable(call.name));
        QVERIFY(call.turnDeadlineLeftMs > 0);
        QSet<AttemptTimeline::Marker::Kind> kinds;
        for (const AttemptTimeline::Marker &marker : card->attemptTimeline()->model().markers)
            kinds.insert(marker.kind);
        QVERIFY(kinds.contains(AttemptTimeline::Marker::Kind::WorstCase));
        QVERIFY(kinds.contains(AttemptTimeline::Marker::Kind::TurnDeadline));
    }
    QCOMPARE(m_console->loop()->session().conversationId, m_first);
    QCOMPARE(list->currentRow(), row);
    // The newest turn is on screen: the transcript makes widgets only for the turns near the
    // viewport, from the next event-loop pass.
    QTRY_VERIFY([&] {
        const auto *turn = transcript->findChild<QWidget *>(QStringLiteral("turn-") + ids.at(1));
        return turn && turn->isVisible();
    }());
    QVERIFY(
        !saveScreenshot(m_console->window.get(), QStringLiteral("history-sidebar.png")).isEmpty());

    // The next question carries that conversation on: one row still, now three turns.
    QVERIFY(ask(QStringLiteral("And where is order A1002?")));
    QCOMPARE(m_console->loop()->session().conversationId, m_first);
    QCOMPARE(transcript->requestIds().size(), 3);
    QTRY_VERIFY(rows().size() == 2
                && rows().at(0).startsWith(QStringLiteral("Where is order A1001?")));
    QTRY_COMPARE(m_console->window->conversationRestorer()->storedConversation(), m_first);
}

void TestHistorySidebar::searchFiltersByTextAndOrderId()
{
    askTwoConversations();
    QLineEdit *search = sidebar()->searchBox();
    QTest::keyClicks(search, QStringLiteral("A1003"));
    QTRY_COMPARE(rows().size(), 1);
    QVERIFY(rows().first().startsWith(QStringLiteral("Where is order A1003?")));
    search->clear();
    QTest::keyClicks(search, QStringLiteral("sku-200")); // the second question's words
    QTRY_COMPARE(sidebar()->conversationIds(), QStringList{m_first});
    search->clear();
    QTest::keyClicks(search, QStringLiteral("no such words"));
    QTRY_COMPARE(rows().size(), 0);
    QVERIFY(sidebar()
                ->findChild<QLabel *>(QStringLiteral("historyStatus"))
                ->text()
                .contains(QStringLiteral("no such words")));
    QCOMPARE(search->maxLength(), ConversationHistory::kMaxSearchLength);
    search->clear();
    QTRY_COMPARE(rows().size(), 2);
}

void TestHistorySidebar::deleteAsksFirstAndIsDurable()
{
    askTwoConversations();
    QListWidget *list = sidebar()->list();
    const int row = rowOf(QStringLiteral("Where is order A1003?")); // the open one
    list->setCurrentRow(row);
    QVERIFY(sidebar()->deleteButton()->isEnabled());

    // Cancel keeps it.
    QTest::mouseClick(sidebar()->deleteButton(), Qt::LeftButton);
    auto *box = sidebar()->findChild<QMessageBox *>(QStringLiteral("historyDeleteConfirmation"));
    QVERIFY(box);
    QTRY_VERIFY(box->isVisible());
    QVERIFY(box->text().contains(QStringLiteral("Where is order A1003?")));
    box->button(QMessageBox::Cancel)->click();
    QTRY_VERIFY(!sidebar()->findChild<QMessageBox *>(QStringLiteral("historyDeleteConfirmation")));
    QCOMPARE(rows().size(), 2);

    // Delete removes it, and the transcript that showed it starts a new conversation.
    QSignalSpy removed(sidebar(), &HistorySidebar::conversationRemoved);
    QTest::mouseClick(sidebar()->deleteButton(), Qt::LeftButton);
    box = sidebar()->findChild<QMessageBox *>(QStringLiteral("historyDeleteConfirmation"));
    QVERIFY(box);
    box->findChild<QPushButton *>(QStringLiteral("historyConfirmDelete"))->click();
    QVERIFY(removed.wait());
    QCOMPARE(removed.first().first().toString(), m_second);
    QTRY_COMPARE(sidebar()->conversationIds(), QStringList{m_first});
    QVERIFY(m_console->window->transcript()->requestIds().isEmpty());
    QVERIFY(m_console->loop()->session().conversationId != m_second);

    QVERIFY(restart());
    QTRY_COMPARE(sidebar()->conversationIds(), QStringList{m_first});
    QVERIFY(m_console->window->transcript()->requestIds().isEmpty());
}

void TestHistorySidebar::interruptedTurnIsListedAndStillOffered()
{
    // A process killed right after RECEIVED left a turn in the journal.
    m_console->window.reset();
    m_console->runtime.reset();
    QCOMPARE(writeCheckpoints(m_console->dataDir.path(),
                              {receivedTurn(QStringLiteral("r-crashed"),
                                            QStringLiteral("c-crashed"),
                                            QStringLiteral("Where is order A1004?"))}),
             QString());
    QVERIFY(m_console->start());

    QTRY_COMPARE(rows().size(), 1);
    QVERIFY2(rows().first().endsWith(QStringLiteral(" · Interrupted")),
             qPrintable(rows().first()));
    InterruptedTurnsBanner *banner = m_console->window->interruptedTurnsBanner();
    QVERIFY(banner->isVisible());

    // Reopened, it shows the question; Resume carries it on in place.
    QSignalSpy restored(m_console->window->conversationRestorer(),
                        &ConversationRestorer::restored);
    Q_EMIT sidebar()->openRequested(QStringLiteral("c-crashed"));
    QVERIFY(restored.wait());
    TranscriptView *transcript = m_console->window->transcript();
    QCOMPARE(transcript->requestIds(), QStringList{QStringLiteral("r-crashed")});
    QSignalSpy finished(m_console->loop(), &AgentLoop::turnFinished);
    QTest::mouseClick(banner->findChild<QPushButton *>(QStringLiteral("resumeInterruptedButton")),
                      Qt::LeftButton);
    QVERIFY(finished.wait());
    QCOMPARE(transcript->requestIds(), QStringList{QStringLiteral("r-crashed")});
    QVERIFY(!transcript->answerText(QStringLiteral("r-crashed")).isEmpty());
    QTRY_VERIFY(rows().size() == 1 && rows().first().endsWith(QStringLiteral(" · Answered")));
}

void TestHistorySidebar::aNarrowWindowGivesTheSidebarsRoomToTheConversation()
{
    ConsoleWindow *window = m_console->window.get();
    QVERIFY(sidebar()->isVisible());
    window->resize(window->minimumSize());
    QTRY_VERIFY(!sidebar()->isVisible());
    window->resize(1280, 800);
    QTRY_VERIFY(sidebar()->isVisible());
    // Closed by the staff member, it stays closed.
    sidebar()->close();
    window->resize(window->minimumSize());
    window->resize(1280, 800);
    QTRY_VERIFY(window->width() == 1280);
    QVERIFY(!sidebar()->isVisible());
}

namespace {

class LayoutRequests final : public QObject
{
public:
    int count = 0;

protected:
    bool eventFilter(QObject *, QEvent *event) override
    {
        count += event->type() == QEvent::LayoutRequest ? 1 : 0;
        return false;
    }
};

// Layout requests answer each other up the widget tree (a layout run asks its parent's
// again): delivered until none is left.
void deliverLayoutRequests()
{
    for (int level = 0; level < 8; ++level)
        QCoreApplication::sendPostedEvents(nullptr, QEvent::LayoutRequest);
}

} // namespace

// The sidebar's "New conversation" button is enabled and disabled with its action, which flips
// at every turn; that must not lay the main window out again (it did, through the button
// retaking the action's icon: every dock laid out and the whole window repainted per turn).
void TestHistorySidebar::newConversationFollowsItsActionWithoutLayingTheWindowOut()
{
    QAction *action = m_console->window->newConversationAction();
    auto *button = sidebar()->findChild<QToolButton *>(QStringLiteral("historyNewConversation"));
    QVERIFY(button);
    QCOMPARE(button->text(), action->iconText());
    deliverLayoutRequests();
    LayoutRequests requests;
    m_console->window->installEventFilter(&requests);
    for (const bool enabled : {false, true, false, true}) {
        action->setEnabled(enabled);
        QCOMPARE(button->isEnabled(), enabled);
    }
    deliverLayoutRequests();
    m_console->window->removeEventFilter(&requests);
    QCOMPARE(requests.count, 0);

    QSignalSpy triggered(action, &QAction::triggered);
    QTest::mouseClick(button, Qt::LeftButton);
    QCOMPARE(triggered.count(), 1);
}

// The conversation open at quit is kept in the data directory's window.ini, remembered at every
// turn's end. Written again only when it changes (it was rewritten at the end of every turn),
// and off the GUI thread.
void TestHistorySidebar::aTurnsEndWritesTheOpenConversationOnlyWhenItChanged()
{
    ConversationRestorer *restorer = m_console->window->conversationRestorer();
    QVERIFY(ask(QStringLiteral("Where is order A1001?")));
    const QString first = m_console->loop()->session().conversationId;
    QTRY_VERIFY(!restorer->isSaving());
    QCOMPARE(restorer->storedConversation(), first);
    const QString path = QDir(m_console->dataDir.path()).filePath(QStringLiteral("window.ini"));
    const QDateTime longAgo(QDate(2001, 1, 1), QTime(0, 0), Qt::UTC);
    {
        QFile file(path);
        QVERIFY(file.open(QIODevice::ReadWrite));
        QVERIFY(file.setFileTime(longAgo, QFileDevice::FileModificationTime));
    }
    QVERIFY(ask(QStringLiteral("Is SKU-200 in stock?"))); // the same conversation
    QCOMPARE(m_console->loop()->session().conversationId, first);
    QVERIFY(!restorer->isSaving()); // nothing was asked to be written
    QCOMPARE(QFileInfo(path).lastModified(), longAgo);

    // Another conversation: written.
    m_console->window->newConversationAction()->trigger();
    QVERIFY(ask(QStringLiteral("Where is order A1003?")));
    const QString second = m_console->loop()->session().conversationId;
    QVERIFY(second != first);
    QTRY_VERIFY(!restorer->isSaving());
    QVERIFY(QFileInfo(path).lastModified() != longAgo);
    QCOMPARE(restorer->storedConversation(), second);
}

// After a few days a staff member has a full page of conversations, and the page is listed
// again at every turn's end: its rows are given their new texts in place, not made again
// (history_bench: ~10 ms of the GUI thread a turn for fifty rows made again).
void TestHistorySidebar::aTurnsEndShowsAFullPageAgainInItsRows()
{
    const int stored = ConversationHistory::kPageSize + 5;
    m_console->window.reset();
    m_console->runtime.reset();
    QList<TurnCheckpoint> turns;
    for (int i = 0; i < stored; ++i) {
        const QString conversation = QStringLiteral("c-old-%1").arg(i, 2, 10, QLatin1Char('0'));
        TurnCheckpoint turn = receivedTurn(QStringLiteral("r-old-%1").arg(i), conversation,
                                           QStringLiteral("Old question %1").arg(i));
        turn.stage = TurnStage::Completed;
        turn.conversation.append(ChatMessage::assistant(QStringLiteral("Shipped.")));
        turn.result.conversationId = turn.conversationId;
        turn.result.answer = QStringLiteral("Shipped.");
        turns.append(turn);
    }
    QCOMPARE(writeCheckpoints(m_console->dataDir.path(), turns), QString());
    QVERIFY(m_console->start());
    QTRY_COMPARE(rows().size(), ConversationHistory::kPageSize);
    QVERIFY(sidebar()->moreButton()->isVisibleTo(sidebar()));

    const auto rowWidgets = [this] {
        QList<QWidget *> widgets;
        for (int i = 0; i < sidebar()->list()->count(); ++i)
            widgets.append(sidebar()->list()->itemWidget(sidebar()->list()->item(i)));
        return widgets;
    };
    const QList<QWidget *> widgets = rowWidgets();
    const QStringList idsBefore = sidebar()->conversationIds();
    const QStringList rowsBefore = rows();
    QAbstractItemModel *model = sidebar()->list()->model();
    QSignalSpy inserted(model, &QAbstractItemModel::rowsInserted);
    QSignalSpy removed(model, &QAbstractItemModel::rowsRemoved);

    // A new conversation goes on top and every row moves down by one.
    QSignalSpy shown(sidebar(), &HistorySidebar::listShown);
    QVERIFY(ask(QStringLiteral("Where is order A1001?")));
    // A turn and a page listed again (slow on a loaded machine); it may be listed while
    // askAndWait() waits for the turn, before a wait() would start.
    QTRY_VERIFY_WITH_TIMEOUT(!shown.isEmpty(), 30000);
    const QString asked = m_console->loop()->session().conversationId;
    QCOMPARE(sidebar()->conversationIds().size(), ConversationHistory::kPageSize);
    QCOMPARE(sidebar()->conversationIds().first(), asked);
    QCOMPARE(sidebar()->conversationIds().mid(1), idsBefore.mid(0, idsBefore.size() - 1));
    QVERIFY(rows().first().startsWith(QStringLiteral("Where is order A1001?")));
    QCOMPARE(rows().mid(1), rowsBefore.mid(0, rowsBefore.size() - 1));
    QCOMPARE(sidebar()->list()->currentRow(), 0);
    QCOMPARE(rowWidgets(), widgets);
    QCOMPARE(inserted.size(), 0);
    QCOMPARE(removed.size(), 0);

    // Another turn of the conversation on top: only its row changes (its count of turns).
    const QStringList rowsAfterFirst = rows();
    shown.clear();
    QVERIFY(ask(QStringLiteral("Is SKU-200 in stock?")));
    // A turn and a page listed again (slow on a loaded machine); it may be listed while
    // askAndWait() waits for the turn, before a wait() would start.
    QTRY_VERIFY_WITH_TIMEOUT(!shown.isEmpty(), 30000);
    QCOMPARE(sidebar()->conversationIds().first(), asked);
    QCOMPARE(rows().mid(1), rowsAfterFirst.mid(1));
    QCOMPARE(rowWidgets(), widgets);
    QCOMPARE(inserted.size(), 0);
    QCOMPARE(removed.size(), 0);
    const auto *facts = widgets.first()->findChildren<QLabel *>().last();
    QVERIFY2(facts->text().contains(QStringLiteral("2 turns")), qPrintable(facts->text()));
    QVERIFY(
        !saveScreenshot(m_console->window.get(), QStringLiteral("history-sidebar-full-page.png"))
             .isEmpty());

    // A search shows fewer rows in the same list; clearing it shows the page again.
    sidebar()->searchBox()->setText(QStringLiteral("Old question 7"));
    QTRY_VERIFY(rows().size() < 10 && !rows().isEmpty());
    QVERIFY(rows().first().startsWith(QStringLiteral("Old question 7")));
    sidebar()->searchBox()->clear();
    QTRY_COMPARE(rows().size(), ConversationHistory::kPageSize);
    QCOMPARE(sidebar()->conversationIds().first(), asked);
}

QTEST_MAIN(TestHistorySidebar)
#include "tst_historysidebar.moc"
