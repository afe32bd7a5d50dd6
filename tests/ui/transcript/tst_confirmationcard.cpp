// The confirmation panel of a write tool, over a real agent loop and executor: a scripted
// model asks for createTicket, a small write tool counts how often its body really ran, and
// the transcript is fed by the loop's own signals (TranscriptFeed, as in the window).
#include "agentdoubles.h"
#include "core/turn/agentloop.h"
#include "core/ledger/idempotencyledger.h"
#include "core/turn/turnresult.h"
#include "core/llm/chatmodel.h"
#include "core/resilience/toolexecutor.h"
#include "core/tools/toolregistry.h"
#include "ui/transcript/confirmationpanel.h"
#include "ui/common/statuschip.h"
#include "ui/transcript/toolcallcard.h"
#include "ui/transcript/toolcalltext.h"
#include "ui/transcript/transcriptfeed.h"
#include "ui/transcript/transcriptview.h"

#include <QDir>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QPushButton>
#include <QPointer>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QTimer>

#include <atomic>
#include <memory>

using namespace AgentConsole;
using namespace AgentConsole::Testing;

namespace {

constexpr int turnTimeoutMs = 10000;

const QString ticketDescription = QStringLiteral(
    "The customer received the blender with a cracked jug and a dented base; the outer box "
    "was intact. She sent two photos by e-mail and asks for a replacement rather than a "
    "refund, delivered to the same address before Friday if at all possible.");

QJsonObject ticketArguments()
{
    return {{QStringLiteral("orderId"), QStringLiteral("A1001")},
            {QStringLiteral("category"), QStringLiteral("DAMAGED")},
            {QStringLiteral("description"), ticketDescription}};
}

ChatResponse createTicketCall()
{
    ChatResponse response;
    response.toolCalls = {{QStringLiteral("c1"), QStringLiteral("createTicket"),
                           QString::fromUtf8(QJsonDocument(ticketArguments())
                                                 .toJson(QJsonDocument::Compact))}};
    response.finishReason = FinishReason::ToolCalls;
    return response;
}

// A loop with one write tool and a transcript that follows it; the view goes first.
struct Bench
{
    ToolRegistry registry;
    std::shared_ptr<RecordingWriteTool> tool = std::make_shared<RecordingWriteTool>();
    ToolExecutor executor;
    ScriptedModel model;
    QTemporaryDir ledgerDir;
    std::unique_ptr<IdempotencyLedger> ledger;
    std::unique_ptr<AgentLoop> loop;
    std::unique_ptr<TranscriptView> view;

    Bench()
    {
        registry.add(tool);
        model.script = {createTicketCall()};
        // Writes only run through the idempotency ledger.
        ledger = openTestLedger(ledgerDir.path());
        loop = std::make_unique<AgentLoop>(AgentLoop::Dependencies{
            .model = &model, .tools = &registry, .executor = &executor, .ledger = ledger.get()});
        loop->setSession({QStringLiteral("u-1"), QStringLiteral("t-1"), {}});
        view = std::make_unique<TranscriptView>();
        new TranscriptFeed(loop.get(), view.get(), view.get());
        view->resize(760, 620);
        view->show();
    }
    ~Bench() { view.reset(); }

    ToolCallCard *card(const QString &requestId) const
    {
        const QList<ToolCallCard *> cards = view->toolCallCards(requestId);
        return cards.isEmpty() ? nullptr : cards.first();
    }
    ConfirmationPanel *panel(const QString &requestId) const
    {
        ToolCallCard *found = card(requestId);
        return found ? found->confirmationPanel() : nullptr;
    }
};

} // namespace

class tst_ConfirmationCard : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void chipWordsForWriteCodes_data();
    void chipWordsForWriteCodes();
    void confirmRunsTheToolOnce();
    void declineNeverRunsTheTool();
    void aWriteNobodyCouldConfirmIsNotShownAsDeclined();
    void oneAnswerHoweverManyClicks_data();
    void oneAnswerHoweverManyClicks();
    void cancellingTheTurnResolvesThePanel();
    void enterPressesTheFocusedButton();
};

void tst_ConfirmationCard::chipWordsForWriteCodes_data()
{
    QTest::addColumn<ResultCode::Code>("code");
    QTest::addColumn<QString>("text");
    QTest::addColumn<int>("tone");
    QTest::newRow("declined") << ResultCode::ConfirmationDeclined << "Declined"
                              << int(Tone::Neutral);
    QTest::newRow("conflict") << ResultCode::IdempotencyConflict << "Conflict"
                              << int(Tone::Danger);
    QTest::newRow("unknown") << ResultCode::ExecutionStatusUnknown << "Outcome unknown"
                             << int(Tone::Warning);
    QTest::newRow("in progress") << ResultCode::OperationInProgress << "In progress"
                                 << int(Tone::Info);
}

void tst_ConfirmationCard::chipWordsForWriteCodes()
{
    QFETCH(ResultCode::Code, code);
    QFETCH(QString, text);
    QFETCH(int, tone);
    const ToolCallText::Status status = ToolCallText::statusOfCode(code);
    QCOMPARE(status.text, text);
    QCOMPARE(int(status.tone), tone);

    ToolCallRecord waiting;
    waiting.state = ToolCallRecord::State::AwaitingConfirmation;
    QCOMPARE(ToolCallText::statusOf(waiting).text, QStringLiteral("Awaiting confirmation"));
}

void tst_ConfirmationCard::confirmRunsTheToolOnce()
{
    Bench bench;
    QSignalSpy asked(bench.loop.get(), &AgentLoop::confirmationRequested);
    QSignalSpy finished(bench.loop.get(), &AgentLoop::turnFinished);
    const QString requestId = bench.loop->ask(QStringLiteral("Open a ticket for A1001"));
    QVERIFY(asked.wait(turnTimeoutMs));

    ConfirmationPanel *panel = bench.panel(requestId);
    QVERIFY(panel);
    // Confirm waits for the write's check of earlier tickets (its list tool is not
    // registered here: the check answers at once that it could not look).
    QTRY_VERIFY(panel->confirmButton()->isEnabled());
    QTRY_VERIFY(panel->isVisible());
    QCOMPARE(bench.card(requestId)->statusText(), QStringLiteral("Awaiting confirmation"));
    QCOMPARE(panel->titleText(), QStringLiteral("Confirm: create an after-sales ticket"));
    // The exact arguments, in full: nothing shortened, nothing reworded; the category in
    // the tool's staff words for its wire value (DAMAGED).
    QCOMPARE(panel->argumentsText(),
             QStringLiteral("Order: A1001\nCategory: Damaged item\nDescription: ")
                 + ticketDescription);
    QCOMPARE(panel->confirmButton()->text(), QStringLiteral("Create ticket"));
    QCOMPARE(panel->declineButton()->text(), QStringLiteral("Decline"));
    QVERIFY(panel->confirmButton()->isEnabled());
    QVERIFY(panel->declineButton()->isEnabled());
    QVERIFY(panel->confirmButton()->focusPolicy() & Qt::TabFocus);
    QVERIFY(panel->declineButton()->focusPolicy() & Qt::TabFocus);
    bool descriptionShown = false;
    QPointer<QLabel> description;
    for (QLabel *label : panel->findChildren<QLabel *>()) {
        if (label->text() == ticketDescription) {
            QVERIFY(label->wordWrap());
            QVERIFY(label->textInteractionFlags() & Qt::TextSelectableByMouse);
            // On screen as soon as the panel is, and inside its card: the card was measured
            // with the details, not before they were shown.
            QVERIFY(label->isVisible());
            const QRect onCard(label->mapTo(bench.card(requestId), QPoint(0, 0)), label->size());
            QVERIFY(label->height() > 0);
            QVERIFY2(bench.card(requestId)->rect().contains(onCard), "details clipped");
            descriptionShown = true;
            description = label;
        }
    }
    QVERIFY(descriptionShown);
    // The long description wraps inside the card once the transcript has laid the turn out
    // at its width (the first pass may measure it on one line).
    QTRY_VERIFY(description && description->height() > 2 * description->fontMetrics().height());
    QVERIFY(bench.card(requestId)->rect().contains(
        QRect(description->mapTo(bench.card(requestId), QPoint(0, 0)), description->size())));
    QCOMPARE(bench.tool->runs.load(), 0);

    const QString shot = QDir::current().absoluteFilePath(QStringLiteral("confirmation-card.png"));
    QVERIFY(bench.view->grab().save(shot));
    qInfo("screenshot: %s", qPrintable(shot));

    QTest::mouseClick(panel->confirmButton(), Qt::LeftButton);
    QVERIFY(!panel->confirmButton()->isEnabled());
    QVERIFY(!panel->declineButton()->isEnabled());
    QVERIFY(finished.size() == 1 || finished.wait(turnTimeoutMs));

    const auto turn = finished.first().first().value<TurnResult>();
    QCOMPARE(turn.toolCalls.size(), 1);
    QCOMPARE(turn.toolCalls[0].result.code, ResultCode::Ok);
    QCOMPARE(bench.tool->runs.load(), 1);
    QCOMPARE(bench.card(requestId)->statusText(), QStringLiteral("OK"));
    QCOMPARE(panel->answer(), ConfirmationPanel::Answer::Approved);
    QVERIFY(!panel->confirmButton()->isVisible());
    QCOMPARE(panel->noteText(), QStringLiteral("Confirmed with these details."));
    // The record of what was confirmed stays.
    QVERIFY(panel->argumentsText().contains(ticketDescription));
    QVERIFY(bench.view->grab().save(
        QDir::current().absoluteFilePath(QStringLiteral("confirmation-card-confirmed.png"))));
}

void tst_ConfirmationCard::declineNeverRunsTheTool()
{
    Bench bench;
    QSignalSpy asked(bench.loop.get(), &AgentLoop::confirmationRequested);
    QSignalSpy finished(bench.loop.get(), &AgentLoop::turnFinished);
    const QString requestId = bench.loop->ask(QStringLiteral("Open a ticket for A1001"));
    QVERIFY(asked.wait(turnTimeoutMs));
    ConfirmationPanel *panel = bench.panel(requestId);
    QVERIFY(panel);
    // Confirm waits for the write's check of earlier tickets (its list tool is not
    // registered here: the check answers at once that it could not look).
    QTRY_VERIFY(panel->confirmButton()->isEnabled());

    QTest::mouseClick(panel->declineButton(), Qt::LeftButton);
    QVERIFY(finished.size() == 1 || finished.wait(turnTimeoutMs));
    const auto turn = finished.first().first().value<TurnResult>();
    QCOMPARE(turn.toolCalls[0].result.code, ResultCode::ConfirmationDeclined);
    QCOMPARE(bench.tool->runs.load(), 0);
    QCOMPARE(bench.card(requestId)->statusText(), QStringLiteral("Declined"));
    QCOMPARE(panel->noteText(), QStringLiteral("Declined: it was not run."));
    QVERIFY(!panel->confirmButton()->isVisible());
}

// agent-cli with no terminal answers a confirmation with cannotConfirm: the same code as a
// decline, but the card (here, or the turn reopened from the history) must not say that a
// staff member declined it.
void tst_ConfirmationCard::aWriteNobodyCouldConfirmIsNotShownAsDeclined()
{
    Bench bench;
    QSignalSpy asked(bench.loop.get(), &AgentLoop::confirmationRequested);
    QSignalSpy finished(bench.loop.get(), &AgentLoop::turnFinished);
    const QString requestId = bench.loop->ask(QStringLiteral("Open a ticket for A1001"));
    QVERIFY(asked.wait(turnTimeoutMs));
    const auto call = asked.first().at(1).value<ToolCallRecord>();
    bench.loop->cannotConfirm(call.operationId);
    QVERIFY(finished.size() == 1 || finished.wait(turnTimeoutMs));

    const auto turn = finished.first().first().value<TurnResult>();
    QCOMPARE(turn.toolCalls[0].result.code, ResultCode::ConfirmationDeclined);
    QVERIFY(turn.toolCalls[0].result.nobodyWasAsked());
    QCOMPARE(bench.tool->runs.load(), 0);
    ToolCallCard *card = bench.card(requestId);
    QVERIFY(card);
    QCOMPARE(card->statusText(), QStringLiteral("Not confirmed"));
    QCOMPARE(ToolCallText::statusOf(turn.toolCalls[0]).tone, Tone::Warning);
    ConfirmationPanel *panel = bench.panel(requestId);
    QCOMPARE(panel->noteText(), QStringLiteral("Not run: nobody could be asked to confirm it."));
    QVERIFY(!panel->confirmButton()->isVisible());

    // A staff member's own decline keeps its words (the data says who answered).
    QVERIFY(!ToolResult::failure(ResultCode::ConfirmationDeclined, Language::English)
                 .nobodyWasAsked());
}

void tst_ConfirmationCard::oneAnswerHoweverManyClicks_data()
{
    QTest::addColumn<bool>("keyboard");
    QTest::newRow("mouse") << false;
    QTest::newRow("keyboard") << true;
}

void tst_ConfirmationCard::oneAnswerHoweverManyClicks()
{
    QFETCH(bool, keyboard);
    Bench bench;
    QSignalSpy asked(bench.loop.get(), &AgentLoop::confirmationRequested);
    QSignalSpy finished(bench.loop.get(), &AgentLoop::turnFinished);
    QSignalSpy answers(bench.view.get(), &TranscriptView::confirmationAnswered);
    const QString requestId = bench.loop->ask(QStringLiteral("Open a ticket for A1001"));
    QVERIFY(asked.wait(turnTimeoutMs));
    ConfirmationPanel *panel = bench.panel(requestId);
    QVERIFY(panel);
    // Confirm waits for the write's check of earlier tickets (its list tool is not
    // registered here: the check answers at once that it could not look).
    QTRY_VERIFY(panel->confirmButton()->isEnabled());

    QPushButton *confirm = panel->confirmButton();
    if (keyboard) {
        confirm->setFocus();
        QTest::keyClick(confirm, Qt::Key_Space);
        QTest::keyClick(confirm, Qt::Key_Space);
        QTest::keyClick(panel->declineButton(), Qt::Key_Space);
    } else {
        QTest::mouseClick(confirm, Qt::LeftButton);
        QTest::mouseClick(confirm, Qt::LeftButton);
        QTest::mouseClick(panel->declineButton(), Qt::LeftButton);
    }
    // A repeat of the request (e.g. an update while it still waits) does not reopen it.
    auto again = asked.first().at(1).value<ToolCallRecord>();
    bench.card(requestId)->setToolCall(again);
    QVERIFY(!confirm->isEnabled());

    QCOMPARE(answers.size(), 1);
    QCOMPARE(answers.first().at(0).toString(), requestId);
    QCOMPARE(answers.first().at(1).toString(), again.operationId);
    QCOMPARE(answers.first().at(2).toBool(), true);
    QVERIFY(finished.size() == 1 || finished.wait(turnTimeoutMs));
    QCOMPARE(bench.tool->runs.load(), 1);
    QCOMPARE(answers.size(), 1);
}

void tst_ConfirmationCard::cancellingTheTurnResolvesThePanel()
{
    Bench bench;
    QSignalSpy asked(bench.loop.get(), &AgentLoop::confirmationRequested);
    QSignalSpy finished(bench.loop.get(), &AgentLoop::turnFinished);
    const QString requestId = bench.loop->ask(QStringLiteral("Open a ticket for A1001"));
    QVERIFY(asked.wait(turnTimeoutMs));
    ConfirmationPanel *panel = bench.panel(requestId);
    QVERIFY(panel);
    // Confirm waits for the write's check of earlier tickets (its list tool is not
    // registered here: the check answers at once that it could not look).
    QTRY_VERIFY(panel->confirmButton()->isEnabled());
    QVERIFY(panel->isAwaitingAnswer());

    bench.loop->cancel();
    QVERIFY(finished.size() == 1 || finished.wait(turnTimeoutMs));
    const auto turn = finished.first().first().value<TurnResult>();
    QCOMPARE(turn.status, TurnStatus::Cancelled);
    QCOMPARE(turn.toolCalls[0].result.code, ResultCode::Cancelled);
    QCOMPARE(bench.tool->runs.load(), 0);
    QVERIFY(!panel->isAwaitingAnswer());
    QVERIFY(!panel->confirmButton()->isVisible());
    QVERIFY(!panel->declineButton()->isVisible());
    QCOMPARE(panel->noteText(),
             QStringLiteral("Not run: the turn was cancelled before an answer."));
    QCOMPARE(bench.card(requestId)->statusText(), QStringLiteral("Cancelled"));
    QCOMPARE(bench.view->turnStatusText(requestId), QStringLiteral("Cancelled"));
}

// #41 §5: Enter on a focused button presses it, as Space does; it never reaches the card
// (which would open or close it instead).
void tst_ConfirmationCard::enterPressesTheFocusedButton()
{
    Bench bench;
    QSignalSpy asked(bench.loop.get(), &AgentLoop::confirmationRequested);
    QSignalSpy finished(bench.loop.get(), &AgentLoop::turnFinished);
    const QString requestId = bench.loop->ask(QStringLiteral("Open a ticket for A1001"));
    QVERIFY(asked.wait(turnTimeoutMs));
    ConfirmationPanel *panel = bench.panel(requestId);
    QVERIFY(panel);
    QTRY_VERIFY(panel->confirmButton()->isEnabled());
    ToolCallCard *card = bench.card(requestId);
    const bool expanded = card->isExpanded();
    QSignalSpy answers(bench.view.get(), &TranscriptView::confirmationAnswered);
    panel->confirmButton()->setFocus();
    QTest::keyClick(panel->confirmButton(), Qt::Key_Return);
    QTRY_COMPARE(answers.size(), 1);
    QCOMPARE(answers.first().at(2).toBool(), true);
    QCOMPARE(card->isExpanded(), expanded);
    QVERIFY(finished.size() == 1 || finished.wait(turnTimeoutMs));
    QCOMPARE(bench.tool->runs.load(), 1);
}

QTEST_MAIN(tst_ConfirmationCard)
#include "tst_confirmationcard.moc"
