// Issue #4, concurrency: 8 agent-cli processes race the same operationIds against one
// PostgreSQL ledger and the real support-sim on 127.0.0.1. Each operationId makes one ticket,
// sent to the sim by one process only; the others are answered by the ledger (the stored
// result, or "in progress" while the winner still runs) and, when their arguments differ,
// refused as an idempotency conflict and counted. Needs AGENT_CONSOLE_TEST_PG (scripts/test.sh
// starts a throwaway cluster and sets it) and fails without it, as a missing server must.
#include "supportsimprocess.h"
#include "testdatabases.h"
#include "core/support/supportstore.h"

#include <QDir>
#include <QElapsedTimer>
#include <QJsonArray>
#include <QJsonDocument>
#include <QMetaEnum>
#include <QProcess>
#include <QRegularExpression>
#include <QScopeGuard>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <vector>

using namespace AgentConsole;
using namespace AgentConsole::Testing;

namespace {

constexpr int kRacers = 8;
// All racers of one round (about 0.2 s here). A failing QTRY waits as long again to say
// whether more time would have helped: two rounds that hang stay under ctest's 240 s.
constexpr int kRaceTimeoutMs = 30'000;

const QString kTenant = QStringLiteral("t-acme"); // agent-cli's default staff member's tenant

// Same order and category, other reasons: other arguments, so another request hash.
const QString kQuestionA =
    QStringLiteral("Create an after-sales ticket for order A1001: the mug arrived broken");
const QString kQuestionB = QStringLiteral(
    "Create an after-sales ticket for order A1001: the mug arrived broken, in two pieces");

// The operationId every racer of a round derives: tenant:conversation:request:tool:index.
QString operationId(const QString &conversation, const QString &request)
{
    return QStringList{kTenant, conversation, request, QStringLiteral("createTicket"),
                       QStringLiteral("0")}
        .join(QLatin1Char(':'));
}

QString field(const QJsonObject &object, const char *name)
{
    return object.value(QLatin1String(name)).toString();
}

int counter(const QJsonObject &turn, const char *name)
{
    return turn.value(QLatin1String("counters")).toObject().value(QLatin1String(name)).toInt(-1);
}

QString setText(const std::set<int> &values)
{
    QStringList texts;
    for (const int value : values)
        texts.append(QString::number(value));
    return texts.join(QLatin1Char(','));
}

// The ticket number the answer names ("Ticket T-000001 was created ..."); empty if none.
QString ticketIdIn(const QString &answer)
{
    static const QRegularExpression ticket(QStringLiteral("\\bT-\\d+\\b"));
    return ticket.match(answer).captured();
}

} // namespace

class tst_ConcurrentConsoles : public QObject
{
    Q_OBJECT

public:
    // How the ledger let one racer's createTicket end.
    enum class Answer {
        Executed,   // claimed the key and sent the write: the one winner
        Hit,        // the winner's stored result, from the ledger (idempotency_hit_count 1)
        InProgress, // the winner held the key, still PROCESSING: OPERATION_IN_PROGRESS
        Conflict,   // the key was claimed with other arguments: IDEMPOTENCY_CONFLICT
        Other,      // anything else: a bug
    };
    Q_ENUM(Answer)

private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void init();
    void cleanup();

    void sameOperationIdsOneTicket();
    void conflictsDetectedAndCounted();

private:
    struct Racer
    {
        QString question;
        int exitCode = -1; // -1: did not exit normally
        QJsonObject turn;  // the one turn it printed
        QJsonObject call;  // that turn's createTicket call
        QByteArray err;
        Answer answer = Answer::Other;
        QString ticketId; // named by the answer
    };

    QString freshLedger();
    void race(const QString &ledger, const QString &conversation, const QString &request,
              const QStringList &questions, std::vector<Racer> *racers);
    static Answer classify(const Racer &racer);
    static QString describe(const Racer &racer);
    SimControlReply ticketOf(const QString &key);
    int ticketCount(const QString &key);

    SupportSimProcess m_sim;
    QTemporaryDir m_simDir;
    std::unique_ptr<QTemporaryDir> m_dataDirs; // every racer's --data-dir, per test
    TestDatabases m_databases{QStringLiteral("race_test")}; // dropped in cleanup()
};

void tst_ConcurrentConsoles::initTestCase()
{
    QVERIFY(m_simDir.isValid());
    QString error;
    QVERIFY2(m_sim.start({QStringLiteral("--data-dir"), m_simDir.filePath(QStringLiteral("sim"))},
                         &error),
             qPrintable(error));
    // A missing agent-cli fails the suite loudly; it is never skipped.
    QVERIFY2(QFile::exists(QStringLiteral(AGENT_CLI_PATH)), AGENT_CLI_PATH);
}

void tst_ConcurrentConsoles::cleanupTestCase()
{
    QVERIFY(m_sim.stop()); // the sim quits its event loop on SIGTERM
}

void tst_ConcurrentConsoles::init()
{
    QCOMPARE(m_sim.control("POST", QStringLiteral("/sim/faults/reset")).status, 200);
    QCOMPARE(m_sim.control("POST", QStringLiteral("/sim/stats/reset")).status, 200);
    m_dataDirs = std::make_unique<QTemporaryDir>();
    QVERIFY(m_dataDirs->isValid());
}

void tst_ConcurrentConsoles::cleanup()
{
    m_databases.dropAll();
    // A failed race keeps every racer's local log (logs/agent-console.log) for the diagnosis.
    if (QTest::currentTestFailed() && m_dataDirs && !QDir(m_dataDirs->path()).isEmpty()) {
        m_dataDirs->setAutoRemove(false);
        qWarning().noquote() << "the racers' data directories are kept in" << m_dataDirs->path();
    }
    m_dataDirs.reset();
}

// A new, empty PostgreSQL database on the test cluster, as a --ledger URL: the racers create
// its schema themselves, concurrently. Empty (and the test failed) when there is none.
QString tst_ConcurrentConsoles::freshLedger()
{
    QString error;
    const QString url = m_databases.create(&error);
    if (url.isEmpty())
        QTest::qFail(qPrintable(error), __FILE__, __LINE__);
    return url;
}

// One round: a racer per question, all started before any is waited for, each with its own
// data directory and the same conversation and request ids, so the same operationId.
void tst_ConcurrentConsoles::race(const QString &ledger, const QString &conversation,
                                  const QString &request, const QStringList &questions,
                                  std::vector<Racer> *racers)
{
    std::vector<std::unique_ptr<QProcess>> processes;
    auto stopAll = qScopeGuard([&processes] {
        for (const auto &process : processes) {
            if (process->state() != QProcess::NotRunning) {
                process->kill();
                process->waitForFinished(5000);
            }
        }
    });
    for (qsizetype i = 0; i < questions.size(); ++i) {
        const QString dataDir = m_dataDirs->filePath(QStringLiteral("%1-p%2").arg(request).arg(i));
        auto process = std::make_unique<QProcess>();
        process->setProcessChannelMode(QProcess::SeparateChannels);
        process->setProgram(QStringLiteral(AGENT_CLI_PATH));
        process->setArguments({QStringLiteral("--data-dir"), dataDir,
                               QStringLiteral("--backend"), QStringLiteral("http"),
                               QStringLiteral("--backend-url"), m_sim.baseUrl().toString(),
                               QStringLiteral("--ledger"), ledger,
                               QStringLiteral("--yes"), QStringLiteral("--allow-duplicate"),
                               QStringLiteral("--json"),
                               QStringLiteral("--conversation"), conversation,
                               QStringLiteral("--request-id"), request,
                               questions.at(i)});
        process->start();
        processes.push_back(std::move(process));
    }
    // The event loop runs meanwhile, so every pipe is drained while the racers print.
    QTRY_VERIFY_WITH_TIMEOUT(std::all_of(processes.cbegin(), processes.cend(),
                                         [](const auto &process) {
                                             return process->state() == QProcess::NotRunning;
                                         }),
                             kRaceTimeoutMs);

    const QString key = operationId(conversation, request);
    for (qsizetype i = 0; i < questions.size(); ++i) {
        QProcess &process = *processes[i];
        Racer racer;
        racer.question = questions.at(i);
        racer.exitCode = process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -1;
        racer.err = process.readAllStandardError();
        const QList<QByteArray> lines = process.readAllStandardOutput().trimmed().split('\n');
        QVERIFY2(lines.size() == 1 && !lines.first().isEmpty(),
                 qPrintable(QStringLiteral("racer %1 (exit %2) printed %3 lines; stderr: %4")
                                .arg(i).arg(racer.exitCode).arg(lines.size())
                                .arg(QString::fromUtf8(racer.err))));
        racer.turn = QJsonDocument::fromJson(lines.first()).object();
        const QJsonArray calls = racer.turn.value(QLatin1String("toolCalls")).toArray();
        QVERIFY2(calls.size() == 1, lines.first().constData());
        racer.call = calls.first().toObject();
        QCOMPARE(field(racer.call, "name"), QStringLiteral("createTicket"));
        QCOMPARE(field(racer.call, "operationId"), key);
        racer.answer = classify(racer);
        racer.ticketId = ticketIdIn(field(racer.turn, "answer"));
        racers->push_back(racer);
    }
}

tst_ConcurrentConsoles::Answer tst_ConcurrentConsoles::classify(const Racer &racer)
{
    const QString code = field(racer.call, "code");
    const bool success = racer.call.value(QLatin1String("success")).toBool();
    const qsizetype attempts = racer.call.value(QLatin1String("attempts")).toArray().size();
    const int hits = counter(racer.turn, "idempotency_hit_count");
    const int conflicts = counter(racer.turn, "idempotency_conflict_count");
    if (success && code == QLatin1String("OK") && attempts >= 1 && hits == 0 && conflicts == 0)
        return Answer::Executed;
    // What the ledger answers never runs the tool: no attempt.
    if (attempts != 0)
        return Answer::Other;
    if (success && code == QLatin1String("OK") && hits == 1 && conflicts == 0)
        return Answer::Hit;
    if (!success && code == QLatin1String("OPERATION_IN_PROGRESS") && hits == 0
        && conflicts == 0)
        return Answer::InProgress;
    if (!success && code == QLatin1String("IDEMPOTENCY_CONFLICT") && hits == 0
        && conflicts == 1)
        return Answer::Conflict;
    return Answer::Other;
}

QString tst_ConcurrentConsoles::describe(const Racer &racer)
{
    return QStringLiteral("%1 (exit %2): %3 / stderr: %4")
        .arg(QLatin1String(QMetaEnum::fromType<Answer>().valueToKey(int(racer.answer))))
        .arg(racer.exitCode)
        .arg(QString::fromUtf8(QJsonDocument(racer.turn).toJson(QJsonDocument::Compact)),
             QString::fromUtf8(racer.err).trimmed());
}

SimControlReply tst_ConcurrentConsoles::ticketOf(const QString &key)
{
    return m_sim.control("GET", QStringLiteral("/api/v1/tickets?idempotencyKey=") + key, {},
                         {{"X-Staff-Id", "u-1001"}, {"X-Tenant-Id", kTenant.toUtf8()}});
}

// How many tickets the sim's data holds for `key`, read from its file: the HTTP API shows at
// most one per key, whatever the table holds.
int tst_ConcurrentConsoles::ticketCount(const QString &key)
{
    SupportStore data(m_simDir.filePath(QStringLiteral("sim/support-sim.sqlite")));
    const int count = data.ticketCountForKey(kTenant, key);
    data.releaseThreadConnection();
    return count;
}

void tst_ConcurrentConsoles::sameOperationIdsOneTicket()
{
    constexpr int Rounds = 5;
    const QString ledger = freshLedger();
    if (ledger.isEmpty())
        return;
    const QString conversation = QStringLiteral("c-race-same");
    QElapsedTimer timer;
    timer.start();

    std::map<QString, std::vector<Racer>> byKey; // operationId -> its racers
    for (int round = 1; round <= Rounds; ++round) {
        const QString request = QStringLiteral("r-race-%1").arg(round);
        std::vector<Racer> racers;
        race(ledger, conversation, request, QStringList(kRacers, kQuestionA), &racers);
        if (QTest::currentTestFailed())
            return;
        byKey[operationId(conversation, request)] = std::move(racers);
    }

    // Read before the status queries below, which the sim counts as ticket requests too.
    const QJsonObject stats = m_sim.stats();
    std::map<Answer, int> answers;
    std::set<int> ticketsPerKey;
    for (const auto &[key, racers] : byKey) {
        const SimControlReply ticket = ticketOf(key);
        QCOMPARE(ticket.status, 200);
        QCOMPARE(field(ticket.body, "idempotencyKey"), key);
        const QString ticketId = field(ticket.body, "ticketId");
        QVERIFY(!ticketId.isEmpty());
        ticketsPerKey.insert(ticketCount(key));
        int executed = 0;
        for (const Racer &racer : racers) {
            ++answers[racer.answer];
            // A tool call that fails is part of a completed turn: exit 0 either way.
            QVERIFY2(racer.exitCode == 0, qPrintable(describe(racer)));
            QCOMPARE(field(racer.turn, "status"), QStringLiteral("completed"));
            QCOMPARE(racer.call.value(QLatin1String("arguments")).toObject()
                         .value(QLatin1String("description")).toString(),
                     field(ticket.body, "description"));
            switch (racer.answer) {
            case Answer::Executed:
                ++executed;
                [[fallthrough]];
            case Answer::Hit:
                // Every success names the one ticket of its key.
                QVERIFY2(racer.ticketId == ticketId, qPrintable(describe(racer)));
                break;
            case Answer::InProgress:
                QVERIFY2(racer.ticketId.isEmpty(), qPrintable(describe(racer)));
                break;
            case Answer::Conflict:
            case Answer::Other:
                QFAIL(qPrintable(describe(racer)));
            }
        }
        QVERIFY2(executed == 1, qPrintable(key + QStringLiteral(" executed %1 times")
                                                     .arg(executed)));
    }

    // Each key reached the sim once: the ledger, not the sim's own key check, stopped the rest.
    QCOMPARE(stats.value(QLatin1String("ticketsCreated")).toInt(), Rounds);
    QCOMPARE(stats.value(QLatin1String("ticketReplays")).toInt(), 0);
    QCOMPARE(stats.value(QLatin1String("ticketConflicts")).toInt(), 0);
    QCOMPARE(stats.value(QLatin1String("duplicateTickets")).toInt(), 0);
    QCOMPARE(ticketsPerKey, std::set<int>{1});
    QCOMPARE(answers[Answer::Executed] + answers[Answer::Hit] + answers[Answer::InProgress],
             kRacers * Rounds);
    qInfo().noquote() << QStringLiteral("race: %1 processes x %2 operationIds -> tickets per "
                                        "key {%3}, winners %4, hits %5, in-progress %6, "
                                        "conflicts %7, %8 ms")
                             .arg(kRacers).arg(Rounds).arg(setText(ticketsPerKey))
                             .arg(answers[Answer::Executed]).arg(answers[Answer::Hit])
                             .arg(answers[Answer::InProgress]).arg(answers[Answer::Conflict])
                             .arg(timer.elapsed());
}

void tst_ConcurrentConsoles::conflictsDetectedAndCounted()
{
    constexpr int Rounds = 4; // two started with each text first
    const QString ledger = freshLedger();
    if (ledger.isEmpty())
        return;
    const QString conversation = QStringLiteral("c-race-conflict");
    QElapsedTimer timer;
    timer.start();

    std::map<QString, std::vector<Racer>> byKey;
    for (int round = 1; round <= Rounds; ++round) {
        const QString request = QStringLiteral("r-race-%1").arg(round);
        // Interleaved, and the first racer started alternates between the texts, so that
        // neither is favoured by the order the racers start in.
        QStringList questions;
        for (int i = 0; i < kRacers; ++i)
            questions.append((i + round) % 2 == 1 ? kQuestionA : kQuestionB);
        std::vector<Racer> racers;
        race(ledger, conversation, request, questions, &racers);
        if (QTest::currentTestFailed())
            return;
        byKey[operationId(conversation, request)] = std::move(racers);
    }

    const QJsonObject stats = m_sim.stats();
    std::map<Answer, int> answers;
    std::set<int> ticketsPerKey;
    std::map<QString, int> winsByText;
    int conflictCount = 0;
    for (const auto &[key, racers] : byKey) {
        ticketsPerKey.insert(ticketCount(key));
        const SimControlReply ticket = ticketOf(key);
        QCOMPARE(ticket.status, 200);
        const QString ticketId = field(ticket.body, "ticketId");
        QVERIFY(!ticketId.isEmpty());
        // The ticket carries one racer's description, whole: A's or B's, never a mix.
        const QString description = field(ticket.body, "description");
        QString winnerQuestion;
        std::set<QString> descriptions;
        for (const Racer &racer : racers) {
            const QString own = racer.call.value(QLatin1String("arguments")).toObject()
                                    .value(QLatin1String("description")).toString();
            descriptions.insert(own);
            if (own == description)
                winnerQuestion = racer.question;
        }
        QCOMPARE(descriptions.size(), std::size_t(2)); // the two texts differ in arguments
        QVERIFY2(!winnerQuestion.isEmpty(), qPrintable(description));
        ++winsByText[winnerQuestion == kQuestionA ? QStringLiteral("A") : QStringLiteral("B")];

        int executed = 0;
        int losersByText = 0;
        int conflictsOfKey = 0;
        for (const Racer &racer : racers) {
            ++answers[racer.answer];
            QVERIFY2(racer.exitCode == 0, qPrintable(describe(racer)));
            QCOMPARE(field(racer.turn, "status"), QStringLiteral("completed"));
            conflictsOfKey += counter(racer.turn, "idempotency_conflict_count");
            if (racer.question != winnerQuestion) {
                // Other arguments under a claimed key: a conflict whatever the row's status.
                ++losersByText;
                QVERIFY2(racer.answer == Answer::Conflict, qPrintable(describe(racer)));
                QVERIFY2(racer.ticketId.isEmpty(), qPrintable(describe(racer)));
                continue;
            }
            switch (racer.answer) {
            case Answer::Executed:
                ++executed;
                [[fallthrough]];
            case Answer::Hit:
                QVERIFY2(racer.ticketId == ticketId, qPrintable(describe(racer)));
                break;
            case Answer::InProgress:
                break;
            case Answer::Conflict:
            case Answer::Other:
                QFAIL(qPrintable(describe(racer)));
            }
        }
        QVERIFY2(executed == 1, qPrintable(key + QStringLiteral(" executed %1 times")
                                                     .arg(executed)));
        QCOMPARE(losersByText, kRacers / 2);
        QCOMPARE(conflictsOfKey, losersByText);
        conflictCount += conflictsOfKey;
    }

    // The ledger answered every conflict: none reached the sim, which made one ticket per key.
    QCOMPARE(stats.value(QLatin1String("ticketsCreated")).toInt(), Rounds);
    QCOMPARE(stats.value(QLatin1String("ticketReplays")).toInt(), 0);
    QCOMPARE(stats.value(QLatin1String("ticketConflicts")).toInt(), 0);
    QCOMPARE(stats.value(QLatin1String("duplicateTickets")).toInt(), 0);
    QCOMPARE(ticketsPerKey, std::set<int>{1});
    QCOMPARE(answers[Answer::Conflict], conflictCount);
    qInfo().noquote() << QStringLiteral("race: %1 processes x %2 operationIds, texts A/B 4/4 -> "
                                        "tickets per key {%3}, winners %4 (A %5, B %6), hits "
                                        "%7, in-progress %8, conflicts %9, %10 ms")
                             .arg(kRacers).arg(Rounds).arg(setText(ticketsPerKey))
                             .arg(answers[Answer::Executed])
                             .arg(winsByText[QStringLiteral("A")])
                             .arg(winsByText[QStringLiteral("B")]).arg(answers[Answer::Hit])
                             .arg(answers[Answer::InProgress]).arg(conflictCount)
                             .arg(timer.elapsed());
}

QTEST_GUILESS_MAIN(tst_ConcurrentConsoles)
#include "tst_concurrentconsoles.moc"
