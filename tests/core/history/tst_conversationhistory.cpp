// ConversationHistory over a real turn journal (SQLite in a temporary directory): what the
// sidebar lists, how it searches, what it reads back, and that a delete is durable while an
// interrupted turn of another conversation is still offered for resumption.

#include "core/history/conversationhistory.h"
#include "core/turn/interruptedturns.h"
#include "core/turn/turncheckpoint.h"
#include "core/ledger/turnjournal.h"

#include "journalfixtures.h"

#include <QFile>
#include <QSignalSpy>
#include <QSqlDatabase>
#include <QSqlQuery>
#include <QTemporaryDir>
#include <QTest>

#include <memory>

using namespace AgentConsole;
using namespace AgentConsole::Testing;
using Outcome = ConversationSummary::Outcome;

namespace {

ToolCallRecord finishedCall(const QString &conversationId, const QString &requestId, int index,
                            const QString &orderId, const ToolResult &result)
{
    ToolCallRecord call;
    call.index = index;
    call.name = QStringLiteral("getOrderStatus");
    call.operationId = QStringLiteral("%1:%2:%3:getOrderStatus:%4")
                           .arg(demoTenant, conversationId, requestId)
                           .arg(index);
    call.arguments = {{QStringLiteral("orderId"), orderId}};
    call.state = ToolCallRecord::State::Finished;
    call.result = result;
    return call;
}

// A turn as the loop leaves it once it finished, with `messages` as its conversation.
TurnCheckpoint finishedTurn(const QString &conversationId, const QString &requestId,
                            const QString &question, const QString &answer,
                            QList<ToolCallRecord> calls = {},
                            TurnStatus status = TurnStatus::Completed,
                            const QString &userId = demoUser)
{
    TurnCheckpoint checkpoint = receivedTurn(requestId, conversationId, question, userId);
    checkpoint.stage = status == TurnStatus::Completed ? TurnStage::Completed : TurnStage::Failed;
    checkpoint.conversation.append(ChatMessage::assistant(answer));
    checkpoint.result.conversationId = conversationId;
    checkpoint.result.answer = answer;
    checkpoint.result.status = status;
    checkpoint.result.toolCalls = std::move(calls);
    return checkpoint;
}

// One conversation's rows of a journal file as the console of schema version 4 read them
// (before any migration), oldest first.
QList<JournalEntry> rowsAsTheyWere(const QString &path, const QString &conversationId)
{
    QList<JournalEntry> entries;
    {
        QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"),
                                                    QStringLiteral("as-they-were"));
        db.setDatabaseName(path);
        if (db.open()) {
            QSqlQuery query(db);
            query.prepare(
                QStringLiteral("SELECT request_id, conversation_id, stage, resumable, state_json, "
                               "counters_json, created_at, updated_at FROM turn_checkpoints "
                               "WHERE conversation_id = ? ORDER BY created_at, rowid"));
            query.addBindValue(conversationId);
            query.exec();
            while (query.next()) {
                JournalRow row;
                row.requestId = query.value(0).toString();
                row.conversationId = query.value(1).toString();
                row.stage = query.value(2).toString();
                row.resumable = query.value(3).toInt();
                row.stateJson = query.value(4).toString();
                row.countersJson = query.value(5).toString();
                row.createdAt = query.value(6).toString();
                row.updatedAt = query.value(7).toString();
                entries.append(journalEntryFromRow(row));
            }
            for (JournalEntry &entry : entries) {
                QSqlQuery results(db);
                results.prepare(
                    QStringLiteral("SELECT call_index, record_json FROM turn_tool_results WHERE "
                                   "conversation_id = ? AND request_id = ?"));
                results.addBindValue(entry.conversationId);
                results.addBindValue(entry.requestId);
                results.exec();
                while (results.next())
                    entry.appendedResults.insert(
                        results.value(0).toInt(),
                        storedJsonObject(results.value(1).toString()).value_or(QJsonObject()));
            }
        }
        db.close();
    }
    QSqlDatabase::removeDatabase(QStringLiteral("as-they-were"));
    return entries;
}

ToolResult okResult()
{
    return ToolResult::ok(QStringLiteral("found"),
                          QJsonObject{{QStringLiteral("status"), QStringLiteral("SHIPPED")}});
}

} // namespace

class TestConversationHistory final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void init();
    void cleanup();
    void listsTitleTimeAndOutcome();
    void titleIsOneBoundedLine();
    void searchesTextAndOrderIds();
    void searchIsBoundedAndLiteral();
    void listsOnlyTheSessionsConversations();
    void pagesAreBounded();
    void opensTurnsInOrderWithWhatTheModelSeesNext();
    void deleteSurvivesReopeningTheJournal();
    void interruptedTurnIsListedAndStillOfferedForResume();
    void aConversationOfAnOlderJournalOpensAsItWas_data();
    void aConversationOfAnOlderJournalOpensAsItWas();

private:
    void openJournal();
    void save(const TurnCheckpoint &turn);
    ConversationPage listed(const QString &search = {}, int page = 0);
    StoredConversation opened(const QString &conversationId);

    std::unique_ptr<QTemporaryDir> m_dir;
    std::unique_ptr<TurnJournal> m_journal;
    std::unique_ptr<ConversationHistory> m_history;
};

void TestConversationHistory::init()
{
    m_dir = std::make_unique<QTemporaryDir>();
    QVERIFY(m_dir->isValid());
    openJournal();
}

void TestConversationHistory::cleanup()
{
    m_history.reset();
    m_journal.reset();
    m_dir.reset();
}

void TestConversationHistory::openJournal()
{
    m_history.reset();
    m_journal = std::make_unique<TurnJournal>(m_dir->filePath(QStringLiteral("turns.sqlite")));
    const QFuture<JournalOpenResult> opening = m_journal->open();
    QVERIFY(settled(opening));
    QVERIFY2(opening.result().ok, qPrintable(opening.result().detail));
    m_history = std::make_unique<ConversationHistory>(m_journal.get(), demoUser, demoTenant);
}

void TestConversationHistory::save(const TurnCheckpoint &turn)
{
    const QFuture<JournalWrite> saved = m_journal->save(turn.toEntry());
    QVERIFY(settled(saved));
    QVERIFY2(saved.result().ok, qPrintable(saved.result().detail));
}

ConversationPage TestConversationHistory::listed(const QString &search, int page)
{
    QSignalSpy spy(m_history.get(), &ConversationHistory::listed);
    m_history->list(search, page);
    if (!spy.wait(20000))
        return {};
    return spy.takeFirst().at(0).value<ConversationPage>();
}

StoredConversation TestConversationHistory::opened(const QString &conversationId)
{
    QSignalSpy spy(m_history.get(), &ConversationHistory::opened);
    m_history->open(conversationId);
    if (!spy.wait(20000))
        return {};
    return spy.takeFirst().at(0).value<StoredConversation>();
}

void TestConversationHistory::listsTitleTimeAndOutcome()
{
    const ToolResult missing = ToolResult::failure(ResultCode::ToolTimeout, Language::English);
    save(finishedTurn(QStringLiteral("c-one"), QStringLiteral("r-1"),
                      QStringLiteral("Where is order A1001?"), QStringLiteral("Shipped.")));
    save(finishedTurn(QStringLiteral("c-one"), QStringLiteral("r-2"),
                      QStringLiteral("And is SKU-200 in stock?"), QStringLiteral("Yes.")));
    save(finishedTurn(QStringLiteral("c-two"), QStringLiteral("r-3"),
                      QStringLiteral("Status of A1002 and A1003"), QStringLiteral("Partly."),
                      {finishedCall(QStringLiteral("c-two"), QStringLiteral("r-3"), 0,
                                    QStringLiteral("A1002"), okResult()),
                       finishedCall(QStringLiteral("c-two"), QStringLiteral("r-3"), 1,
                                    QStringLiteral("A1003"), missing)}));
    save(finishedTurn(QStringLiteral("c-three"), QStringLiteral("r-4"),
                      QStringLiteral("Open a ticket"), QString(), {}, TurnStatus::Failed));

    const ConversationPage page = listed();
    QCOMPARE(page.conversations.size(), 3);
    QVERIFY(!page.hasMore);
    // Newest first: the conversation whose latest turn was saved last.
    QCOMPARE(page.conversations.at(0).conversationId, QStringLiteral("c-three"));
    QCOMPARE(page.conversations.at(0).latestOutcome, Outcome::Failed);
    QCOMPARE(page.conversations.at(1).conversationId, QStringLiteral("c-two"));
    QCOMPARE(page.conversations.at(1).latestOutcome, Outcome::Partial);
    const ConversationSummary &one = page.conversations.at(2);
    QCOMPARE(one.conversationId, QStringLiteral("c-one"));
    QCOMPARE(one.title, QStringLiteral("Where is order A1001?")); // the first question
    QCOMPARE(one.latestOutcome, Outcome::Answered);
    QCOMPARE(one.turns, 2);
    QVERIFY(!one.resumable);
    QVERIFY(one.startedAt.isValid());
    QVERIFY(one.updatedAt >= one.startedAt);
    QVERIFY(qAbs(one.updatedAt.secsTo(QDateTime::currentDateTimeUtc())) < 600);
}

void TestConversationHistory::titleIsOneBoundedLine()
{
    const QString question = QStringLiteral("Line one\n  line two ") + QString(300, u'x');
    save(finishedTurn(QStringLiteral("c-long"), QStringLiteral("r-1"), question,
                      QStringLiteral("ok")));
    const ConversationPage page = listed();
    QCOMPARE(page.conversations.size(), 1);
    const QString title = page.conversations.first().title;
    QVERIFY(title.startsWith(QStringLiteral("Line one line two xxx")));
    QVERIFY(!title.contains(QLatin1Char('\n')));
    QCOMPARE(title.size(), 120);
    QVERIFY(title.endsWith(QChar(0x2026)));
}

void TestConversationHistory::searchesTextAndOrderIds()
{
    save(finishedTurn(QStringLiteral("c-parcel"), QStringLiteral("r-1"),
                      QStringLiteral("Where is my parcel?"), QStringLiteral("On its way."),
                      {finishedCall(QStringLiteral("c-parcel"), QStringLiteral("r-1"), 0,
                                    QStringLiteral("A1001"), okResult())}));
    save(finishedTurn(QStringLiteral("c-stock"), QStringLiteral("r-2"),
                      QStringLiteral("Is SKU-200 in stock?"), QStringLiteral("Twelve left.")));
    save(finishedTurn(QStringLiteral("c-zh"), QStringLiteral("r-3"),
                      QStringLiteral("查询订单 A2002 的物流位置"), QStringLiteral("已发货。")));

    // An order id only the tool's arguments name.
    ConversationPage page = listed(QStringLiteral("A1001"));
    QCOMPARE(page.search, QStringLiteral("A1001"));
    QCOMPARE(page.conversations.size(), 1);
    QCOMPARE(page.conversations.first().conversationId, QStringLiteral("c-parcel"));
    // Words of a question, of an answer, case-insensitively, and Chinese text.
    page = listed(QStringLiteral("  sku-200 "));
    QCOMPARE(page.conversations.size(), 1);
    QCOMPARE(page.conversations.first().conversationId, QStringLiteral("c-stock"));
    page = listed(QStringLiteral("twelve"));
    QCOMPARE(page.conversations.size(), 1);
    page = listed(QStringLiteral("物流"));
    QCOMPARE(page.conversations.size(), 1);
    QCOMPARE(page.conversations.first().conversationId, QStringLiteral("c-zh"));
    QCOMPARE(listed(QStringLiteral("A9999")).conversations.size(), 0);
    QCOMPARE(listed().conversations.size(), 3);
}

void TestConversationHistory::searchIsBoundedAndLiteral()
{
    save(finishedTurn(QStringLiteral("c-a"), QStringLiteral("r-1"),
                      QStringLiteral("A plain question"), QStringLiteral("ok")));
    // LIKE's wildcards are text here, not patterns that match everything.
    QCOMPARE(listed(QStringLiteral("%")).conversations.size(), 0);
    QCOMPARE(listed(QStringLiteral("_")).conversations.size(), 0);
    QCOMPARE(listed(QStringLiteral("\\")).conversations.size(), 0);
    const ConversationPage page = listed(QString(5000, u'q'));
    QCOMPARE(page.search.size(), ConversationHistory::kMaxSearchLength);
    QCOMPARE(page.conversations.size(), 0);
}

void TestConversationHistory::listsOnlyTheSessionsConversations()
{
    save(finishedTurn(QStringLiteral("c-mine"), QStringLiteral("r-1"),
                      QStringLiteral("Mine"), QStringLiteral("ok")));
    save(finishedTurn(QStringLiteral("c-theirs"), QStringLiteral("r-2"),
                      QStringLiteral("Theirs"), QStringLiteral("ok"), {},
                      TurnStatus::Completed, QStringLiteral("u-2002")));
    const ConversationPage page = listed();
    QCOMPARE(page.conversations.size(), 1);
    QCOMPARE(page.conversations.first().conversationId, QStringLiteral("c-mine"));
    QVERIFY(opened(QStringLiteral("c-theirs")).turns.isEmpty());
}

void TestConversationHistory::pagesAreBounded()
{
    const int total = ConversationHistory::kPageSize + 5;
    QList<TurnCheckpoint> turns;
    for (int i = 0; i < total; ++i)
        turns.append(finishedTurn(QStringLiteral("c-%1").arg(i), QStringLiteral("r-%1").arg(i),
                                  QStringLiteral("Question %1").arg(i), QStringLiteral("ok")));
    m_history.reset();
    m_journal.reset(); // writeCheckpoints opens the file itself
    QCOMPARE(writeCheckpoints(m_dir->path(), turns), QString());
    openJournal();
    const ConversationPage first = listed();
    QCOMPARE(first.conversations.size(), ConversationHistory::kPageSize);
    QVERIFY(first.hasMore);
    const ConversationPage second = listed({}, 1);
    QCOMPARE(second.page, 1);
    QCOMPARE(second.conversations.size(), 5);
    QVERIFY(!second.hasMore);
}

void TestConversationHistory::opensTurnsInOrderWithWhatTheModelSeesNext()
{
    TurnCheckpoint first = finishedTurn(QStringLiteral("c-one"), QStringLiteral("r-1"),
                                        QStringLiteral("Where is order A1001?"),
                                        QStringLiteral("Shipped."));
    save(first);
    TurnCheckpoint second = finishedTurn(QStringLiteral("c-one"), QStringLiteral("r-2"),
                                         QStringLiteral("Is SKU-200 in stock?"),
                                         QStringLiteral("Yes."));
    second.conversation = first.conversation + second.conversation;
    second.turnStart = first.conversation.size();
    save(second);
    // A third turn that failed: shown, but its half is not what the model sees next.
    TurnCheckpoint third = finishedTurn(QStringLiteral("c-one"), QStringLiteral("r-3"),
                                        QStringLiteral("Open a ticket"), QString(), {},
                                        TurnStatus::Failed);
    third.conversation = second.conversation + QList<ChatMessage>{ChatMessage::user(
                             QStringLiteral("Open a ticket"))};
    third.turnStart = second.conversation.size();
    save(third);

    const StoredConversation stored = opened(QStringLiteral("c-one"));
    QCOMPARE(stored.conversationId, QStringLiteral("c-one"));
    QCOMPARE(stored.unreadableTurns, 0);
    QCOMPARE(stored.turns.size(), 3);
    QCOMPARE(stored.turns.at(0).result.requestId, QStringLiteral("r-1"));
    QCOMPARE(stored.turns.at(0).result.question, QStringLiteral("Where is order A1001?"));
    QCOMPARE(stored.turns.at(0).result.answer, QStringLiteral("Shipped."));
    QVERIFY(stored.turns.at(0).finished);
    QCOMPARE(stored.turns.at(1).result.answer, QStringLiteral("Yes."));
    QCOMPARE(stored.turns.at(2).result.outcome(), TurnOutcome::Failed);
    QCOMPARE(stored.messages.size(), 4); // two questions, two answers
    QCOMPARE(stored.messages.last().content, QStringLiteral("Yes."));
    QVERIFY(opened(QStringLiteral("c-none")).turns.isEmpty());
}

void TestConversationHistory::deleteSurvivesReopeningTheJournal()
{
    save(finishedTurn(QStringLiteral("c-keep"), QStringLiteral("r-1"),
                      QStringLiteral("Keep me"), QStringLiteral("ok")));
    save(finishedTurn(QStringLiteral("c-gone"), QStringLiteral("r-2"),
                      QStringLiteral("Delete me"), QStringLiteral("ok"),
                      {finishedCall(QStringLiteral("c-gone"), QStringLiteral("r-2"), 0,
                                    QStringLiteral("A1001"), okResult())}));
    const QFuture<JournalWrite> appended = m_journal->appendToolResult(
        QStringLiteral("c-gone"), QStringLiteral("r-2"), 0,
        TurnCheckpoint::toolCallJson(finishedCall(QStringLiteral("c-gone"),
                                                  QStringLiteral("r-2"), 0,
                                                  QStringLiteral("A1001"), okResult())));
    QVERIFY(settled(appended));
    QVERIFY(appended.result().ok);

    QSignalSpy removed(m_history.get(), &ConversationHistory::removed);
    m_history->remove(QStringLiteral("c-gone"));
    QVERIFY(removed.wait(20000));
    QCOMPARE(removed.first().at(0).toString(), QStringLiteral("c-gone"));
    QVERIFY(removed.first().at(1).toBool());

    openJournal(); // a new process, as far as the file knows
    const ConversationPage page = listed();
    QCOMPARE(page.conversations.size(), 1);
    QCOMPARE(page.conversations.first().conversationId, QStringLiteral("c-keep"));
    QVERIFY(opened(QStringLiteral("c-gone")).turns.isEmpty());
    const QFuture<std::optional<JournalEntry>> entry
        = m_journal->entry(QStringLiteral("c-gone"), QStringLiteral("r-2"));
    QVERIFY(settled(entry));
    QVERIFY(!entry.result().has_value());
}

void TestConversationHistory::interruptedTurnIsListedAndStillOfferedForResume()
{
    save(finishedTurn(QStringLiteral("c-done"), QStringLiteral("r-1"),
                      QStringLiteral("Finished question"), QStringLiteral("ok")));
    // A process killed right after RECEIVED, then another conversation deleted.
    m_history.reset();
    m_journal.reset();
    QCOMPARE(writeCheckpoints(m_dir->path(),
                              {receivedTurn(QStringLiteral("r-2"), QStringLiteral("c-crash"),
                                            QStringLiteral("Where is order A1002?"))}),
             QString());
    openJournal();
    QSignalSpy removed(m_history.get(), &ConversationHistory::removed);
    m_history->remove(QStringLiteral("c-done"));
    QVERIFY(removed.wait(20000));

    const ConversationPage page = listed();
    QCOMPARE(page.conversations.size(), 1);
    const ConversationSummary &crashed = page.conversations.first();
    QCOMPARE(crashed.conversationId, QStringLiteral("c-crash"));
    QCOMPARE(crashed.latestOutcome, Outcome::Interrupted);
    QVERIFY(crashed.resumable);
    const StoredConversation stored = opened(QStringLiteral("c-crash"));
    QCOMPARE(stored.turns.size(), 1);
    QVERIFY(!stored.turns.first().finished);

    // The path the runtime takes at start still offers it.
    const QFuture<QList<JournalEntry>> resumable = m_journal->resumable();
    QVERIFY(settled(resumable));
    InterruptedTurns interrupted;
    interrupted.sortOut(resumable.result(), demoUser, demoTenant);
    QCOMPARE(interrupted.offered().size(), 1);
    QCOMPARE(interrupted.offered().first().result.requestId, QStringLiteral("r-2"));
    QCOMPARE(interrupted.offered().first().result.question,
             QStringLiteral("Where is order A1002?"));
}

void TestConversationHistory::aConversationOfAnOlderJournalOpensAsItWas_data()
{
    QTest::addColumn<QString>("conversationId");
    QTest::addColumn<int>("turns");
    QTest::addColumn<int>("messagesNext");
    // tests/core/ledger/data/README.md: four turns and a failed one from another process (the
    // model sees nothing of them next: the failed turn started afresh), a turn killed after
    // its tools ran (the model sees the turn before it), a resumed one (seen whole).
    QTest::newRow("five turns, the last failed") << QStringLiteral("c-fixture-1") << 5 << 0;
    QTest::newRow("interrupted after a turn") << QStringLiteral("c-fixture-2") << 2 << 4;
    QTest::newRow("killed mid-round") << QStringLiteral("c-fixture-4") << 2 << 4;
    QTest::newRow("resumed") << QStringLiteral("c-fixture-5") << 1 << 4;
}

// A conversation of a journal of schema version 4 (the fixture made by the console of that
// time), reopened once the journal is migrated: every turn and what the model sees next are
// what that console's rows held.
void TestConversationHistory::aConversationOfAnOlderJournalOpensAsItWas()
{
    QFETCH(QString, conversationId);
    QFETCH(int, turns);
    QFETCH(int, messagesNext);
    m_history.reset();
    m_journal.reset();
    const QString path = m_dir->filePath(QStringLiteral("turns.sqlite"));
    QFile::remove(path);
    QVERIFY(QFile::copy(QStringLiteral(JOURNAL_FIXTURE), path));
    QFile::setPermissions(path, QFile::ReadOwner | QFile::WriteOwner);
    const QList<JournalEntry> rows = rowsAsTheyWere(path, conversationId);
    QCOMPARE(rows.size(), qsizetype(turns));
    openJournal(); // migrates it

    const StoredConversation stored = opened(conversationId);
    QCOMPARE(stored.unreadableTurns, 0);
    QCOMPARE(stored.turns.size(), rows.size());
    for (qsizetype i = 0; i < rows.size(); ++i) {
        QString error;
        const auto before = TurnCheckpoint::fromEntry(rows.at(i), &error);
        QVERIFY2(before, qPrintable(error));
        QCOMPARE(stored.turns.at(i).result.toJson(), before->result.toJson());
        QCOMPARE(stored.turns.at(i).finished,
                 before->stage == TurnStage::Completed || before->stage == TurnStage::Failed);
    }
    QString error;
    const auto latest = TurnCheckpoint::fromEntry(rows.last(), &error);
    QVERIFY2(latest, qPrintable(error));
    const bool whole = latest->stage == TurnStage::Completed
        && latest->result.status == TurnStatus::Completed;
    const QList<ChatMessage> next = whole ? latest->conversation
                                          : latest->conversation.mid(0, latest->turnStart);
    QCOMPARE(stored.messages.size(), qsizetype(messagesNext));
    QVERIFY(stored.messages == next);
}

QTEST_GUILESS_MAIN(TestConversationHistory)
#include "tst_conversationhistory.moc"
