// A team's turn journal on PostgreSQL (issue #43 §2, §3): the same operations as a desk's file,
// on one database every console of the team shares. An agent's turns follow them to another
// desk, where an interrupted one is claimed by one desk only (two desks racing: one wins, the
// other names it); another agent's or another tenant's rows are never read, listed, changed or
// deleted, whatever ids are chosen; the schema is made by versioned migrations applied once, a
// newer one is refused and left alone; a connection lost mid-session is made again; an unreachable
// server is said so, without the password. Needs AGENT_CONSOLE_TEST_PG (fails without it, as a
// missing required server must).

#include "core/ledger/postgresledger.h"
#include "core/ledger/turnjournal.h"
#include "testdatabases.h"

#include <QJsonArray>
#include <QSqlDatabase>
#include <QSqlError>
#include <QSqlQuery>
#include <QTcpServer>
#include <QTest>
#include <QtConcurrent>

#include <memory>

using namespace AgentConsole;

namespace {

const QString kAgent = QStringLiteral("t-1/agent-1");
const QString kColleague = QStringLiteral("t-1/agent-2");
const QString kOtherTenant = QStringLiteral("t-2/agent-1");

template <typename T> T await(QFuture<T> future)
{
    future.waitForFinished(); // the journal's own database thread; nothing else waits here
    return future.result();
}

QJsonArray turnMessages(int turn, const QString &words)
{
    return {QJsonObject{{QStringLiteral("role"), 1},
                        {QStringLiteral("content"),
                         QStringLiteral("%1 (%2)").arg(words).arg(turn)}},
            QJsonObject{{QStringLiteral("role"), 3},
                        {QStringLiteral("content"), QStringLiteral("answer %1").arg(turn)}}};
}

JournalEntry turn(const QString &owner, const QString &conversationId, const QString &requestId,
                  const QJsonArray &conversation, qsizetype turnStart, bool resumable = false)
{
    JournalEntry entry;
    entry.owner = owner;
    entry.conversationId = conversationId;
    entry.requestId = requestId;
    entry.stage = resumable ? QStringLiteral("PLANNED") : QStringLiteral("COMPLETED");
    entry.resumable = resumable;
    entry.state = QJsonObject{{QStringLiteral("conversation"), conversation},
                              {QStringLiteral("turnStart"), turnStart}};
    entry.counters = QJsonObject{{QStringLiteral("tool_retry_count"), 1}};
    entry.title = conversation.at(turnStart).toObject().value(QLatin1String("content")).toString();
    entry.outcome = QStringLiteral("Answered");
    entry.searchText = entry.title;
    return entry;
}

} // namespace

class tst_TeamJournal : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void init();
    void cleanup();

    void aTeamJournalKeepsTurnsAsADeskDoes();
    void anAgentsTurnsFollowThemToAnotherDesk();
    void agentsAndTenantsNeverReachEachOthersRows();
    void migrationsAreAppliedOnceAndRecorded();
    void aNewerTeamJournalIsRefusedAndLeftAlone();
    void aLostConnectionIsMadeAgain();
    void aTurnIsCarriedOnByOneDeskOnly();
    void twoDesksRacingForATurnHaveOneWinner();
    void anUnreachableServerIsSaidSo();

private:
    std::unique_ptr<TurnJournal> open(const QString &owner, QString *message = nullptr,
                                      const QString &desk = QStringLiteral("desk-1"));
    QSqlDatabase admin();

    Testing::TestDatabases m_databases{QStringLiteral("team_journal_test")};
    std::optional<PostgresLocation> m_location;
    QString m_adminName;
};

void tst_TeamJournal::init()
{
    QString error;
    const QString url = m_databases.create(&error);
    if (url.isEmpty())
        QFAIL(qPrintable(error));
    m_location = PostgresLocation::fromUrl(url, &error);
    QVERIFY2(m_location, qPrintable(error));
}

void tst_TeamJournal::cleanup()
{
    if (!m_adminName.isEmpty()) {
        QSqlDatabase::database(m_adminName, false).close();
        QSqlDatabase::removeDatabase(m_adminName);
        m_adminName.clear();
    }
    m_databases.dropAll();
}

std::unique_ptr<TurnJournal> tst_TeamJournal::open(const QString &owner, QString *message,
                                                   const QString &desk)
{
    auto journal = std::make_unique<TurnJournal>(*m_location, owner,
                                                 JournalDesk{desk + QStringLiteral("-id"), desk});
    const JournalOpenResult opened = await(journal->open());
    if (!opened.ok) {
        if (message)
            *message = opened.message;
        return nullptr;
    }
    return journal;
}

// A connection of the test's own, as a DBA's psql would be.
QSqlDatabase tst_TeamJournal::admin()
{
    if (m_adminName.isEmpty()) {
        m_adminName = QStringLiteral("team-journal-admin");
        QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QPSQL"), m_adminName);
        db.setHostName(m_location->host);
        db.setPort(m_location->port);
        db.setUserName(m_location->userName);
        db.setDatabaseName(m_location->database);
        if (!db.open())
            qWarning().noquote() << db.lastError().text();
    }
    return QSqlDatabase::database(m_adminName, false);
}

void tst_TeamJournal::aTeamJournalKeepsTurnsAsADeskDoes()
{
    auto journal = open(kAgent);
    QVERIFY(journal);
    QVERIFY(journal->isTeamJournal());
    QVERIFY(!journal->filePath().contains(QLatin1String("password")));
    const QString c = QStringLiteral("c-1");
    QJsonArray conversation;
    for (int i = 1; i <= 3; ++i) {
        const qsizetype start = conversation.size();
        for (const QJsonValue &message : turnMessages(i, QStringLiteral("Where is A1001")))
            conversation.append(message);
        const JournalWrite saved = await(
            journal->save(turn(kAgent, c, QStringLiteral("r-%1").arg(i), conversation, start)));
        QVERIFY2(saved.ok, qPrintable(saved.detail));
    }
    // A turn interrupted with a tool result appended on its own.
    QJsonArray interrupted = conversation;
    interrupted.append(turnMessages(4, QStringLiteral("Refund A1002")).at(0));
    QVERIFY(await(journal->save(turn(kAgent, c, QStringLiteral("r-4"), interrupted,
                                     conversation.size(), true)))
                .ok);
    const QJsonObject result{{QStringLiteral("status"), QStringLiteral("SUCCEEDED")}};
    QVERIFY(await(journal->appendToolResult(c, QStringLiteral("r-4"), 0, result)).ok);

    const auto fourth = await(journal->entry(c, QStringLiteral("r-4")));
    QVERIFY(fourth);
    QVERIFY2(fourth->damage.isEmpty(), qPrintable(fourth->damage));
    QCOMPARE(fourth->state.value(QLatin1String("conversation")).toArray(), interrupted);
    QCOMPARE(fourth->appendedResults.value(0), result);

    const QList<JournalEntry> resumable = await(journal->resumable());
    QCOMPARE(resumable.size(), 1);
    QCOMPARE(resumable.constFirst().requestId, QStringLiteral("r-4"));

    const QList<JournalEntry> turns = await(journal->turns(c, kAgent, 10));
    QCOMPARE(turns.size(), 4);
    QCOMPARE(turns.at(2).state.value(QLatin1String("conversation")).toArray(), conversation);

    JournalConversationQuery query;
    query.owner = kAgent;
    query.contains = QStringLiteral("refund a1002"); // another case: found all the same
    const QList<JournalConversation> found = await(journal->conversations(query));
    QCOMPARE(found.size(), 1);
    QCOMPARE(found.constFirst().turns, 4);
    QVERIFY(found.constFirst().resumable);
    QCOMPARE(found.constFirst().title, QStringLiteral("Where is A1001 (1)"));
    query.contains = QStringLiteral("100%");
    QVERIFY(await(journal->conversations(query)).isEmpty());

    QVERIFY(await(journal->dismiss(c, QStringLiteral("r-4"))).ok);
    QVERIFY(await(journal->resumable()).isEmpty());
    QVERIFY(await(journal->mergeCounters(c, QStringLiteral("r-1"),
                                         {{QStringLiteral("tool_retry_count"), 5}}))
                .ok);
    QCOMPARE(await(journal->counterTotals()).value(QLatin1String("tool_retry_count")).toInt(), 8);

    QVERIFY(await(journal->removeConversation(c, kAgent)).ok);
    QVERIFY(await(journal->turns(c, kAgent, 10)).isEmpty());
    QSqlQuery left(admin());
    QVERIFY(left.exec(QStringLiteral("SELECT (SELECT COUNT(*) FROM turn_checkpoints) + "
                                     "(SELECT COUNT(*) FROM conversation_segments) + "
                                     "(SELECT COUNT(*) FROM turn_tool_results)")));
    QVERIFY(left.next());
    QCOMPARE(left.value(0).toInt(), 0);
}

// Issue #43 §3: an agent who moves desk finds their conversations and interrupted requests.
void tst_TeamJournal::anAgentsTurnsFollowThemToAnotherDesk()
{
    auto firstDesk = open(kAgent);
    QVERIFY(firstDesk);
    const QJsonArray asked = turnMessages(1, QStringLiteral("Where is A1001"));
    QVERIFY(await(firstDesk->save(turn(kAgent, QStringLiteral("c-desk"), QStringLiteral("r-1"),
                                       asked, 0, true)))
                .ok);
    firstDesk.reset(); // the machine is gone

    auto secondDesk = open(kAgent);
    QVERIFY(secondDesk);
    JournalConversationQuery query;
    query.owner = kAgent;
    const QList<JournalConversation> listed = await(secondDesk->conversations(query));
    QCOMPARE(listed.size(), 1);
    QCOMPARE(listed.constFirst().conversationId, QStringLiteral("c-desk"));
    const QList<JournalEntry> resumable = await(secondDesk->resumable());
    QCOMPARE(resumable.size(), 1);
    QCOMPARE(resumable.constFirst().state.value(QLatin1String("conversation")).toArray(), asked);
}

// Issue #43 §3: the queries keep agents and tenants apart, whatever ids they choose. Every
// console below asks for the same conversation and request ids as the agent's own.
void tst_TeamJournal::agentsAndTenantsNeverReachEachOthersRows()
{
    auto agent = open(kAgent);
    QVERIFY(agent);
    const QString c = QStringLiteral("c-shared");
    const QJsonArray secret = turnMessages(1, QStringLiteral("Customer Li Wei, phone 138"));
    QVERIFY(await(agent->save(turn(kAgent, c, QStringLiteral("r-1"), secret, 0, true))).ok);
    QVERIFY(await(agent->appendToolResult(c, QStringLiteral("r-1"), 0,
                                          {{QStringLiteral("secret"), true}}))
                .ok);

    int refused = 0;
    for (const QString &intruder : {kColleague, kOtherTenant}) {
        auto other = open(intruder);
        QVERIFY(other);
        // Reading the agent's turn by its ids: the intruder has none of that name.
        QVERIFY(!await(other->entry(c, QStringLiteral("r-1"))));
        ++refused;
        QVERIFY(await(other->resumable()).isEmpty());
        ++refused;
        QVERIFY(await(other->turns(c, kAgent, 10)).isEmpty()); // naming the agent as owner
        ++refused;
        QVERIFY(await(other->turns(c, intruder, 10)).isEmpty());
        ++refused;
        JournalConversationQuery query;
        query.owner = kAgent;
        QVERIFY(await(other->conversations(query)).isEmpty());
        ++refused;
        query.owner = intruder;
        query.contains = QStringLiteral("Li Wei");
        QVERIFY(await(other->conversations(query)).isEmpty());
        ++refused;
        // Writing as the agent is refused; deleting the agent's conversation too.
        QVERIFY(!await(other->save(turn(kAgent, c, QStringLiteral("r-1"), secret, 0))).ok);
        ++refused;
        QVERIFY(!await(other->removeConversation(c, kAgent)).ok);
        ++refused;
        // Its own turn under the same ids is its own row: the agent's stays as it was.
        const QJsonArray own = turnMessages(1, QStringLiteral("Intruder's question"));
        QVERIFY(await(other->save(turn(intruder, c, QStringLiteral("r-1"), own, 0))).ok);
        QVERIFY(await(other->appendToolResult(c, QStringLiteral("r-1"), 0,
                                              {{QStringLiteral("secret"), false}}))
                    .ok);
        const auto read = await(other->entry(c, QStringLiteral("r-1")));
        QVERIFY(read);
        QCOMPARE(read->state.value(QLatin1String("conversation")).toArray(), own);
        QCOMPARE(read->appendedResults.value(0).value(QLatin1String("secret")).toBool(), false);
        ++refused;
        // Dismissing, merging counters and deleting under the same ids touch its own only.
        QVERIFY(await(other->dismiss(c, QStringLiteral("r-1"))).ok);
        QVERIFY(await(other->mergeCounters(c, QStringLiteral("r-1"),
                                           {{QStringLiteral("tool_retry_count"), 99}}))
                    .ok);
        QVERIFY(await(other->removeConversation(c, intruder)).ok);
        ++refused;
    }
    QVERIFY(refused >= 20);

    // The agent's turn is whole and as it was.
    const auto mine = await(agent->entry(c, QStringLiteral("r-1")));
    QVERIFY(mine);
    QVERIFY2(mine->damage.isEmpty(), qPrintable(mine->damage));
    QVERIFY(mine->resumable);
    QCOMPARE(mine->state.value(QLatin1String("conversation")).toArray(), secret);
    QCOMPARE(mine->appendedResults.value(0).value(QLatin1String("secret")).toBool(), true);
    QCOMPARE(await(agent->counterTotals()).value(QLatin1String("tool_retry_count")).toInt(), 1);
    QSqlQuery tenants(admin());
    QVERIFY(tenants.exec(QStringLiteral("SELECT DISTINCT tenant_id FROM turn_checkpoints")));
    QVERIFY(tenants.next());
    QCOMPARE(tenants.value(0).toString(), QStringLiteral("t-1"));
    QVERIFY(!tenants.next());
}

// Versioned migrations (issue #43 §2): applied in a transaction, recorded in their own table;
// consoles starting at once migrate once.
void tst_TeamJournal::migrationsAreAppliedOnceAndRecorded()
{
    QList<QFuture<bool>> starting;
    for (int i = 0; i < 4; ++i)
        starting.append(QtConcurrent::run([this, i] {
            auto journal = std::make_unique<TurnJournal>(
                *m_location, QStringLiteral("t-1/agent-%1").arg(i),
                JournalDesk{QStringLiteral("d-%1").arg(i), QStringLiteral("desk %1").arg(i)});
            return await(journal->open()).ok;
        }));
    for (QFuture<bool> &started : starting)
        QVERIFY(await(started));
    QSqlQuery versions(admin());
    QVERIFY(versions.exec(
        QStringLiteral("SELECT version FROM journal_schema_version ORDER BY version")));
    for (const int version : {1, 2}) {
        QVERIFY(versions.next());
        QCOMPARE(versions.value(0).toInt(), version);
    }
    QVERIFY(!versions.next());
    // The ledger's versions are its own.
    QVERIFY(!QSqlQuery(admin()).exec(QStringLiteral("SELECT 1 FROM schema_version")));
}

void tst_TeamJournal::aNewerTeamJournalIsRefusedAndLeftAlone()
{
    QVERIFY(open(kAgent));
    QVERIFY(QSqlQuery(admin()).exec(
        QStringLiteral("INSERT INTO journal_schema_version (version) VALUES (99)")));
    QString message;
    QVERIFY(!open(kAgent, &message));
    QVERIFY2(message.contains(QLatin1String("newer than this Agent Console")),
             qPrintable(message));
    QVERIFY(message.contains(QLatin1String("99")));
    QSqlQuery versions(admin());
    QVERIFY(versions.exec(QStringLiteral("SELECT COUNT(*) FROM journal_schema_version")));
    QVERIFY(versions.next());
    QCOMPARE(versions.value(0).toInt(), 3); // versions 1 and 2, and the newer one
}

// The server restarted or a DBA ended the session: the next operation connects again and
// runs (a checkpoint saved twice is the same row).
void tst_TeamJournal::aLostConnectionIsMadeAgain()
{
    auto journal = open(kAgent);
    QVERIFY(journal);
    const QJsonArray first = turnMessages(1, QStringLiteral("Where is A1001"));
    QVERIFY(
        await(journal->save(turn(kAgent, QStringLiteral("c-1"), QStringLiteral("r-1"), first, 0)))
            .ok);
    const QString others = QStringLiteral("SELECT COUNT(pg_terminate_backend(pid)) FROM "
                                          "pg_stat_activity WHERE datname = current_database() "
                                          "AND pid <> pg_backend_pid()");
    QSqlQuery terminate(admin());
    QVERIFY(terminate.exec(others));
    QVERIFY(terminate.next());
    QCOMPARE(terminate.value(0).toInt(), 1);
    QJsonArray second = first;
    for (const QJsonValue &message : turnMessages(2, QStringLiteral("And A1002")))
        second.append(message);
    const JournalWrite saved = await(
        journal->save(turn(kAgent, QStringLiteral("c-1"), QStringLiteral("r-2"), second, 2)));
    QVERIFY2(saved.ok, qPrintable(saved.detail));
    const auto read = await(journal->entry(QStringLiteral("c-1"), QStringLiteral("r-2")));
    QVERIFY(read);
    QCOMPARE(read->state.value(QLatin1String("conversation")).toArray(), second);
    // A read after another loss reads again.
    QVERIFY(terminate.exec(others));
    QCOMPARE(await(journal->turns(QStringLiteral("c-1"), kAgent, 10)).size(), 2);
}

// Issue #43 §3: a turn is held by the desk that runs it; another desk of the same agent sees
// it and says who has it, takes it only once that desk is gone, and the first desk, back, may
// not carry it on.
void tst_TeamJournal::aTurnIsCarriedOnByOneDeskOnly()
{
    const QString c = QStringLiteral("c-held");
    const QJsonArray asked = turnMessages(1, QStringLiteral("Refund A1001"));
    auto first = open(kAgent, nullptr, QStringLiteral("desk-a"));
    QVERIFY(first);
    QVERIFY(await(first->save(turn(kAgent, c, QStringLiteral("r-1"), asked, 0, true))).ok);

    auto second = open(kAgent, nullptr, QStringLiteral("desk-b"));
    QVERIFY(second);
    QList<JournalEntry> seen = await(second->resumable());
    QCOMPARE(seen.size(), 1);
    QCOMPARE(seen.constFirst().heldBy, QStringLiteral("desk-a")); // running: not taken
    // Desk A's own list: its turn, held by itself.
    QCOMPARE(await(first->resumable()).constFirst().heldBy, QString());

    first.reset(); // desk A's machine died: its connection, and its lock, are gone
    QTRY_COMPARE_WITH_TIMEOUT(await(second->resumable()).value(0).heldBy, QString(), 10'000);
    auto again = open(kAgent, nullptr, QStringLiteral("desk-a")); // desk A back
    QVERIFY(again);
    QCOMPARE(await(again->resumable()).constFirst().heldBy, QStringLiteral("desk-b"));
    JournalEntry carriedOn = turn(kAgent, c, QStringLiteral("r-1"), asked, 0, true);
    carriedOn.stage = QStringLiteral("TOOLS_EXECUTED");
    const JournalWrite refused = await(again->save(carriedOn));
    QVERIFY(!refused.ok);
    QCOMPARE(refused.heldBy, QStringLiteral("desk-b"));
    QCOMPARE(await(second->entry(c, QStringLiteral("r-1")))->stage, QStringLiteral("PLANNED"));
    // Desk B carries it on.
    QVERIFY(await(second->save(carriedOn)).ok);
}

// Issue #43 §3, §7: two desks asking at the same moment for the interrupted turns of a desk
// that is gone: each turn goes to one of them, and the other names it.
void tst_TeamJournal::twoDesksRacingForATurnHaveOneWinner()
{
    constexpr int kTurns = 12;
    {
        auto gone = open(kAgent, nullptr, QStringLiteral("desk-gone"));
        QVERIFY(gone);
        for (int i = 0; i < kTurns; ++i)
            QVERIFY(
                await(gone->save(turn(kAgent, QStringLiteral("c-%1").arg(i), QStringLiteral("r-1"),
                                      turnMessages(i, QStringLiteral("Where is A1001")), 0, true)))
                    .ok);
    }
    auto left = open(kAgent, nullptr, QStringLiteral("desk-left"));
    auto right = open(kAgent, nullptr, QStringLiteral("desk-right"));
    QVERIFY(left && right);
    // Both asked before either answers: the two journals' threads run them at once.
    QFuture<QList<JournalEntry>> leftAsk = left->resumable();
    QFuture<QList<JournalEntry>> rightAsk = right->resumable();
    const QList<JournalEntry> leftSaw = await(leftAsk);
    const QList<JournalEntry> rightSaw = await(rightAsk);
    QCOMPARE(leftSaw.size(), kTurns);
    QCOMPARE(rightSaw.size(), kTurns);
    int leftWon = 0;
    int rightWon = 0;
    for (int i = 0; i < kTurns; ++i) {
        const bool leftHas = leftSaw.at(i).heldBy.isEmpty();
        const bool rightHas = rightSaw.at(i).heldBy.isEmpty();
        QVERIFY2(leftHas != rightHas, qPrintable(leftSaw.at(i).conversationId));
        QCOMPARE(leftHas ? rightSaw.at(i).heldBy : leftSaw.at(i).heldBy,
                 leftHas ? QStringLiteral("desk-left") : QStringLiteral("desk-right"));
        leftWon += leftHas;
        rightWon += rightHas;
    }
    QCOMPARE(leftWon + rightWon, kTurns);
}

void tst_TeamJournal::anUnreachableServerIsSaidSo()
{
    // A loopback port nobody listens on: taken, then let go.
    QTcpServer probe;
    QVERIFY(probe.listen(QHostAddress::LocalHost));
    const quint16 port = probe.serverPort();
    probe.close();
    PostgresLocation nowhere;
    nowhere.host = QStringLiteral("127.0.0.1");
    nowhere.port = port;
    nowhere.userName = QStringLiteral("agent");
    nowhere.password = QStringLiteral("s3cret-password");
    nowhere.database = QStringLiteral("team");
    TurnJournal journal(nowhere, kAgent, {QStringLiteral("d"), QStringLiteral("desk")});
    const JournalOpenResult opened = await(journal.open());
    QVERIFY(!opened.ok);
    QVERIFY2(opened.message.contains(QLatin1String("cannot reach the team database")),
             qPrintable(opened.message));
    QVERIFY(opened.message.contains(QStringLiteral("127.0.0.1:%1/team").arg(port)));
    QVERIFY(!opened.message.contains(QLatin1String("s3cret")));
    QVERIFY(!opened.detail.contains(QLatin1String("s3cret")));
    QVERIFY(!await(journal.save(turn(kAgent, QStringLiteral("c"), QStringLiteral("r"),
                                     turnMessages(1, QStringLiteral("q")), 0)))
                 .ok);
}

QTEST_GUILESS_MAIN(tst_TeamJournal)
#include "tst_teamjournal.moc"
