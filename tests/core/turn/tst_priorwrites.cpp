// A staff member who asks twice for the same ticket is told before the second one is made
// (issue #41 §1): the confirmation carries what the order already has, from the backend and
// from the idempotency ledger, and staff keep the existing ticket or create another anyway.
#include "core/console/agentruntime.h"
#include "core/support/supportstore.h"
#include "core/turn/agentloop.h"

#include <QFile>
#include <QJsonArray>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include <optional>

using namespace AgentConsole;

namespace {

RetryPolicy fastPolicy()
{
    RetryPolicy policy;
    policy.attemptTimeout = std::chrono::milliseconds(2000);
    policy.initialDelay = std::chrono::milliseconds(5);
    policy.maxDelay = std::chrono::milliseconds(10);
    return policy;
}

const QString kDamaged =
    QStringLiteral("Create an after-sales ticket for order A1001: the mug arrived broken");

// How staff answer the card once its check is back.
enum class Answer { Confirm, Decline, KeepExisting };

} // namespace

class tst_PriorWrites : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void init();
    void cleanup();

    void aSecondIdenticalTicketIsToldBeforeItIsConfirmed();
    void anotherCategoryIsListedButNotADuplicate();
    void theLedgerTellsWhenTheBackendCannot();
    void aZeroWindowTellsNoDuplicate();
    void theStaffMemberMayConfirmBeforeTheCheckIsBack();

private:
    void startRuntime(const QByteArray &faults = {}, int windowMinutes = -1);
    // Asks, waits for the confirmation's check, answers; the turn and what the card showed.
    struct Asked
    {
        TurnResult turn;
        PriorWrites shown;
    };
    Asked askAndAnswer(const QString &question, Answer answer);
    int ticketsOf(const QString &orderId) const;

    std::unique_ptr<QTemporaryDir> m_dir;
    std::unique_ptr<AgentRuntime> m_runtime;
};

void tst_PriorWrites::init()
{
    m_dir = std::make_unique<QTemporaryDir>();
    QVERIFY(m_dir->isValid());
}

void tst_PriorWrites::cleanup()
{
    m_runtime.reset();
    m_dir.reset();
}

void tst_PriorWrites::startRuntime(const QByteArray &faults, int windowMinutes)
{
    RuntimeOptions options;
    options.dataDirectory = m_dir->path();
    options.toolPolicy = fastPolicy();
    if (windowMinutes >= 0)
        options.duplicateWindowMinutes = windowMinutes;
    if (!faults.isEmpty()) {
        QFile plan(m_dir->filePath(QStringLiteral("faults.json")));
        QVERIFY(plan.open(QIODevice::WriteOnly));
        plan.write(faults);
        options.faultPlanFile = plan.fileName();
    }
    m_runtime = std::make_unique<AgentRuntime>(options);
    QSignalSpy ready(m_runtime.get(), &AgentRuntime::ready);
    m_runtime->start();
    QVERIFY(ready.wait(10'000));
}

tst_PriorWrites::Asked tst_PriorWrites::askAndAnswer(const QString &question, Answer answer)
{
    AgentLoop *loop = m_runtime->agentLoop();
    Asked asked;
    QString waiting;
    QObject context;
    connect(loop, &AgentLoop::confirmationRequested, &context,
            [&](const QString &, const ToolCallRecord &call) {
                waiting = call.operationId;
                // The card is offered at once, its check under way.
                asked.shown = call.priorWrites;
            });
    connect(loop, &AgentLoop::toolCallUpdated, &context,
            [&](const QString &, const ToolCallRecord &call) {
                if (call.operationId != waiting || !call.priorWrites.isFinished()
                    || call.state != ToolCallRecord::State::AwaitingConfirmation)
                    return;
                asked.shown = call.priorWrites;
                const QString id = waiting;
                waiting.clear(); // answered once
                switch (answer) {
                case Answer::Confirm:
                    loop->confirm(id, true);
                    break;
                case Answer::Decline:
                    loop->confirm(id, false);
                    break;
                case Answer::KeepExisting:
                    if (const PriorWrites::Entry *duplicate = call.priorWrites.likelyDuplicate())
                        loop->keepExisting(id, duplicate->id);
                    else
                        loop->confirm(id, false);
                    break;
                }
            });
    QSignalSpy finished(loop, &AgentLoop::turnFinished);
    if (loop->ask(question).isEmpty())
        qFatal("the loop refused the question");
    if (!finished.wait(20'000))
        qFatal("the turn did not finish");
    asked.turn = finished.first().first().value<TurnResult>();
    return asked;
}

int tst_PriorWrites::ticketsOf(const QString &orderId) const
{
    SupportStore store(m_dir->filePath(QStringLiteral("support-store.sqlite")));
    QString error;
    if (!store.prepare(&error))
        return -1;
    const StoreAnswer answer = store.orderTickets(QStringLiteral("t-acme"), orderId);
    store.releaseThreadConnection();
    return answer.status == StoreAnswer::Status::Found
        ? int(answer.data.value(QLatin1String("tickets")).toArray().size())
        : -1;
}

void tst_PriorWrites::aSecondIdenticalTicketIsToldBeforeItIsConfirmed()
{
    startRuntime();
    const Asked first = askAndAnswer(kDamaged, Answer::Confirm);
    QCOMPARE(first.turn.toolCalls.size(), 1);
    QCOMPARE(first.turn.toolCalls[0].name, QStringLiteral("createTicket"));
    QVERIFY(first.turn.toolCalls[0].result.success);
    const QString ticketId = first.turn.toolCalls[0].result.data.toObject()
                                 .value(QLatin1String("ticketId")).toString();
    QVERIFY(!ticketId.isEmpty());
    // Nothing before it: the check answered, and found nothing.
    QCOMPARE(first.shown.state, PriorWrites::State::Checked);
    QVERIFY(first.shown.entries.isEmpty());
    QVERIFY(!first.shown.likelyDuplicate());

    // The same again: the card says what exists, before anything is made.
    const Asked second = askAndAnswer(kDamaged, Answer::KeepExisting);
    QCOMPARE(second.shown.state, PriorWrites::State::Checked);
    QCOMPARE(second.shown.subject, QStringLiteral("A1001"));
    QCOMPARE(second.shown.namedField, QStringLiteral("category"));
    QCOMPARE(second.shown.entries.size(), 1);
    const PriorWrites::Entry *duplicate = second.shown.likelyDuplicate();
    QVERIFY(duplicate);
    QCOMPARE(duplicate->id, ticketId);
    QCOMPARE(duplicate->fields.value(QLatin1String("category")).toString(),
             QStringLiteral("DAMAGED"));
    QVERIFY(duplicate->byThisStaffMember);
    QVERIFY(!duplicate->fromLedgerOnly);
    QVERIFY(duplicate->createdAt.isValid());
    QVERIFY(duplicate->createdAt.secsTo(QDateTime::currentDateTimeUtc()) < 600);
    // Kept: nothing written, and the model is told which ticket staff kept.
    const ToolCallRecord &kept = second.turn.toolCalls[0];
    QCOMPARE(kept.result.code, ResultCode::ConfirmationDeclined);
    QCOMPARE(kept.result.keptExistingId(), ticketId);
    QVERIFY(kept.attempts.isEmpty());
    QVERIFY(kept.result.message.contains(ticketId));
    QCOMPARE(ticketsOf(QStringLiteral("A1001")), 1);

    // Staff may still create another on purpose; the next card then lists both.
    const Asked third = askAndAnswer(kDamaged, Answer::Confirm);
    QVERIFY(third.shown.likelyDuplicate());
    QVERIFY(third.turn.toolCalls[0].result.success);
    QCOMPARE(ticketsOf(QStringLiteral("A1001")), 2);
    const Asked fourth = askAndAnswer(kDamaged, Answer::Decline);
    QCOMPARE(fourth.shown.entries.size(), 2);
    // Newest first.
    QCOMPARE(fourth.shown.likelyDuplicate()->id,
             third.turn.toolCalls[0].result.data.toObject()
                 .value(QLatin1String("ticketId")).toString());
    QCOMPARE(ticketsOf(QStringLiteral("A1001")), 2);
}

void tst_PriorWrites::anotherCategoryIsListedButNotADuplicate()
{
    startRuntime();
    QVERIFY(askAndAnswer(kDamaged, Answer::Confirm).turn.toolCalls[0].result.success);
    const Asked refund = askAndAnswer(
        QStringLiteral("Create a refund ticket for order A1001: the customer wants a refund"),
        Answer::Decline);
    QCOMPARE(refund.turn.toolCalls.size(), 1);
    QCOMPARE(refund.turn.toolCalls[0].arguments.value(QLatin1String("category")).toString(),
             QStringLiteral("REFUND"));
    QCOMPARE(refund.shown.state, PriorWrites::State::Checked);
    QCOMPARE(refund.shown.entries.size(), 1);
    QVERIFY(!refund.shown.likelyDuplicate());
    // Another order's tickets are not this order's.
    const Asked other = askAndAnswer(
        QStringLiteral("Create an after-sales ticket for order A1003: the mug arrived broken"),
        Answer::Decline);
    QCOMPARE(other.shown.state, PriorWrites::State::Checked);
    QVERIFY(other.shown.entries.isEmpty());
}

void tst_PriorWrites::theLedgerTellsWhenTheBackendCannot()
{
    // The ticket service's list refuses every call; its writes still work.
    startRuntime(R"({"tools": {"listOrderTickets": {"accessDenied": true}}})");
    const Asked first = askAndAnswer(kDamaged, Answer::Confirm);
    QVERIFY(first.turn.toolCalls[0].result.success);
    QCOMPARE(first.shown.state, PriorWrites::State::Unavailable);
    QCOMPARE(first.shown.lookupCode, ResultCode::ToolAccessDenied);
    QVERIFY(first.shown.entries.isEmpty());

    const Asked second = askAndAnswer(kDamaged, Answer::KeepExisting);
    QCOMPARE(second.shown.state, PriorWrites::State::Unavailable);
    QCOMPARE(second.shown.entries.size(), 1);
    const PriorWrites::Entry *duplicate = second.shown.likelyDuplicate();
    QVERIFY(duplicate);
    QVERIFY(duplicate->fromLedgerOnly);
    QCOMPARE(duplicate->id, first.turn.toolCalls[0].result.data.toObject()
                                .value(QLatin1String("ticketId")).toString());
    QCOMPARE(ticketsOf(QStringLiteral("A1001")), 1);
}

void tst_PriorWrites::aZeroWindowTellsNoDuplicate()
{
    startRuntime({}, 0);
    QVERIFY(askAndAnswer(kDamaged, Answer::Confirm).turn.toolCalls[0].result.success);
    const Asked second = askAndAnswer(kDamaged, Answer::Decline);
    QCOMPARE(second.shown.entries.size(), 1); // listed, as the backend has it
    QVERIFY(!second.shown.likelyDuplicate());
}

void tst_PriorWrites::theStaffMemberMayConfirmBeforeTheCheckIsBack()
{
    // The list hangs until its attempts time out; core does not hold the write for it (the
    // window does, while it shows "checking"), and a late answer changes nothing.
    startRuntime(R"({"tools": {"listOrderTickets": {"hang": true}}})");
    AgentLoop *loop = m_runtime->agentLoop();
    QObject context;
    PriorWrites offered;
    connect(loop, &AgentLoop::confirmationRequested, &context,
            [&](const QString &, const ToolCallRecord &call) {
                offered = call.priorWrites;
                loop->confirm(call.operationId, true);
            });
    QSignalSpy finished(loop, &AgentLoop::turnFinished);
    QVERIFY(!loop->ask(kDamaged).isEmpty());
    QVERIFY(finished.wait(20'000));
    const auto turn = finished.first().first().value<TurnResult>();
    QCOMPARE(offered.state, PriorWrites::State::Checking);
    QVERIFY(turn.toolCalls[0].result.success);
    QCOMPARE(ticketsOf(QStringLiteral("A1001")), 1);
}

QTEST_GUILESS_MAIN(tst_PriorWrites)
#include "tst_priorwrites.moc"
