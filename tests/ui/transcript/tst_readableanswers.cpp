// Answers a staff member can read and reuse (issue #11, "Readable answers"), in the real window
// over the real core: a remote model's Markdown answer from a fake OpenAI server on 127.0.0.1
// (the one stand-in: a remote LLM cannot run here) rendered without loading anything, links
// opened only when clicked and only http(s), Copy on answers and cards, the ticket id as a
// field of its card, progress in words while a turn runs, and typing that always reaches the
// question box.
#include "consolefixture.h"
#include "fakeopenaiserver.h"
#include "screenshots.h"

#include "core/turn/agentloop.h"
#include "core/turn/turnresult.h"
#include "ui/transcript/answertext.h"
#include "ui/transcript/confirmationpanel.h"
#include "ui/window/consolewindow.h"
#include "ui/transcript/questioninput.h"
#include "ui/transcript/toolcallcard.h"
#include "ui/transcript/transcriptview.h"

#include <QAbstractTextDocumentLayout>
#include <QAction>
#include <QApplication>
#include <QClipboard>
#include <QDesktopServices>
#include <QImage>
#include <QLabel>
#include <QMenu>
#include <QPushButton>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QTest>
#include <QTextBlock>
#include <QTextDocument>
#include <QTextList>
#include <QTextTable>
#include <QTimer>
#include <QToolButton>

#include <memory>

using namespace AgentConsole;
using namespace AgentConsole::Testing;

namespace {

constexpr int turnTimeoutMs = 20000;

// What a real model writes when asked for a summary: every construct the window must render.
// The image names a real file on disk: an answer must never make the console read it.
QString markdownAnswer(const QString &imageFile)
{
    return QStringLiteral(
               "Order **A1001** is on its way.\n\n"
               "- Carrier: SF Express\n"
               "- Last scan: Shanghai Pudong Hub\n\n"
               "| SKU | In stock |\n"
               "|-----|----------|\n"
               "| SKU-200 | 3 |\n\n"
               "Run `track A1001` or:\n\n"
               "```\ntrack --order A1001\n```\n\n"
               "Details: [carrier page](https://carrier.example/track/A1001), "
               "[local file](file:///etc/hostname).\n\n"
               "![photo](file://%1)\n")
        .arg(imageFile);
}

FakeResponse streamedAnswer(const QString &text)
{
    return FakeResponse::events({{Sse::role()}, {Sse::content(text)},
                                 {Sse::finish(QStringLiteral("stop"))}, {Sse::done()}});
}

// Receives QDesktopServices::openUrl for the schemes a test registers.
class UrlRecorder final : public QObject
{
    Q_OBJECT

public:
    QList<QUrl> opened;

public Q_SLOTS:
    void open(const QUrl &url) { opened.append(url); }
};

TranscriptView *transcriptOf(const ConsoleFixture &console)
{
    return console.window->transcript();
}

AnswerText *answerOf(const ConsoleFixture &console, const QString &requestId)
{
    QWidget *turn = transcriptOf(console)->findChild<QWidget *>(QStringLiteral("turn-")
                                                                + requestId);
    return turn ? turn->findChild<AnswerText *>() : nullptr;
}

// Where the anchor whose text is `text` is drawn, in the answer's viewport coordinates.
QPoint anchorPosition(AnswerText *answer, const QString &text)
{
    QTextDocument *document = answer->document();
    for (QTextBlock block = document->begin(); block.isValid(); block = block.next()) {
        for (auto it = block.begin(); !it.atEnd(); ++it) {
            const QTextFragment fragment = it.fragment();
            if (!fragment.charFormat().isAnchor() || fragment.text() != text)
                continue;
            QTextCursor cursor(document);
            cursor.setPosition(fragment.position() + fragment.length() / 2);
            return answer->cursorRect(cursor).center();
        }
    }
    return {-1, -1};
}

// Runs `menu`'s action named `text` once the menu is open (QMenu::exec waits in its own loop).
void chooseFromNextMenu(const QString &text)
{
    QTimer::singleShot(0, [text] {
        auto *menu = qobject_cast<QMenu *>(QApplication::activePopupWidget());
        if (!menu)
            return;
        for (QAction *action : menu->actions()) {
            if (action->text() == text && action->isEnabled()) {
                action->trigger();
                break;
            }
        }
        menu->close();
    });
}

} // namespace

class tst_ReadableAnswers final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void cleanup();

    void markdownRendersWithoutLoadingAnything();
    void linksOpenOnlyWhenClickedAndOnlyHttp();
    void copyTheAnswerAsTextOrMarkdown();
    void theTicketIsAFieldOnItsCardAndCopied();
    void progressSaysTheAttemptAndTheTimeTaken();
    void progressSaysTheModelIsRetrying();
    void progressSaysTheFallbackModelAnswers();
    void typingAfterACardIsClickedReachesTheQuestionBox();
    void examplesAndTryAgainAskAsANewTurn();
    void aFailedCardTriesItselfAgain();
    void typingOnACardFocusedByTabReachesTheQuestionBox();

private:
    // A console whose model is the fake server, answering `answer` to the first question.
    bool startWithRemoteModel(const QString &answer);

    std::unique_ptr<FakeOpenAiServer> m_server;
    std::unique_ptr<ConsoleFixture> m_console;
    QTemporaryDir m_files;
};

void tst_ReadableAnswers::initTestCase()
{
    qRegisterMetaType<AgentConsole::TurnResult>();
    qRegisterMetaType<AgentConsole::ToolCallRecord>();
    qRegisterMetaType<AgentConsole::ModelProgress>();
    // A test key: no real key of this machine goes anywhere (here: only to 127.0.0.1).
    qputenv("AGENT_CONSOLE_API_KEY", "sk-test-readable-51a0");
    QVERIFY(m_files.isValid());
}

void tst_ReadableAnswers::cleanup()
{
    m_console.reset();
    m_server.reset();
    QApplication::clipboard()->clear();
}

bool tst_ReadableAnswers::startWithRemoteModel(const QString &answer)
{
    m_server = std::make_unique<FakeOpenAiServer>();
    if (!m_server->listen())
        return false;
    m_server->enqueue(streamedAnswer(answer));
    RuntimeOptions options;
    options.model.provider = ModelOptions::Provider::OpenAiCompatible;
    options.model.baseUrl = m_server->baseUrl().toString();
    options.model.model = QStringLiteral("fake-model");
    m_console = std::make_unique<ConsoleFixture>();
    return m_console->start(options);
}

void tst_ReadableAnswers::markdownRendersWithoutLoadingAnything()
{
    // A real image on disk that an answer names: rendering must not read it.
    const QString imagePath = m_files.filePath(QStringLiteral("photo.png"));
    QImage image(8, 8, QImage::Format_RGB32);
    image.fill(Qt::red);
    QVERIFY(image.save(imagePath));
    const QString markdown = markdownAnswer(imagePath);
    QVERIFY(startWithRemoteModel(markdown));

    bool ok = false;
    const TurnResult result = m_console->askAndWait(QStringLiteral("Where is order A1001?"), &ok);
    QVERIFY(ok);
    QCOMPARE(result.outcome(), TurnOutcome::Answered);
    AnswerText *answer = answerOf(*m_console, result.requestId);
    QVERIFY(answer);
    QVERIFY(answer->isVisible());

    // What staff read has no Markdown marks left.
    const QString shown = answer->plainText();
    QVERIFY2(!shown.contains(QLatin1String("**")), qPrintable(shown));
    QVERIFY2(!shown.contains(QLatin1String("|")), qPrintable(shown));
    QVERIFY2(!shown.contains(QLatin1String("```")), qPrintable(shown));
    QVERIFY(shown.contains(QLatin1String("Order A1001 is on its way.")));

    // Bold, a list, a table, inline code and a code block, as Qt's Markdown reader makes them.
    QTextDocument *document = answer->document();
    bool bold = false, list = false, inlineCode = false, codeBlock = false;
    int tables = 0;
    for (QTextBlock block = document->begin(); block.isValid(); block = block.next()) {
        list = list || block.textList() != nullptr;
        codeBlock = codeBlock || block.blockFormat().hasProperty(QTextFormat::BlockCodeFence);
        for (auto it = block.begin(); !it.atEnd(); ++it) {
            const QTextFragment fragment = it.fragment();
            bold = bold
                || (fragment.text() == QLatin1String("A1001")
                    && fragment.charFormat().fontWeight() >= QFont::Bold);
            inlineCode = inlineCode
                || (fragment.text() == QLatin1String("track A1001")
                    && fragment.charFormat().fontFixedPitch());
        }
    }
    for (QTextFrame *frame : document->rootFrame()->childFrames())
        tables += qobject_cast<QTextTable *>(frame) ? 1 : 0;
    QVERIFY(bold);
    QVERIFY(list);
    QCOMPARE(tables, 1);
    QVERIFY(inlineCode);
    QVERIFY(codeBlock);

    // Painted (which is when images are asked for) and still nothing loaded: the image the
    // answer names is not in the document, and loadResource gives nothing for it.
    QVERIFY(!saveScreenshot(m_console->window.get(), QStringLiteral("markdown-answer.png"))
                 .isEmpty());
    const QUrl imageUrl = QUrl::fromLocalFile(imagePath);
    QVERIFY(!document->resource(QTextDocument::ImageResource, imageUrl).isValid());
    QVERIFY(!answer->loadResource(QTextDocument::ImageResource, imageUrl).isValid());
    QVERIFY(!answer->loadResource(QTextDocument::ImageResource,
                                  QUrl(QStringLiteral("http://127.0.0.1:9/x.png")))
                 .isValid());
    QVERIFY(!answer->loadResource(QTextDocument::StyleSheetResource,
                                  QUrl::fromLocalFile(QStringLiteral("/etc/hostname")))
                 .isValid());
    // The one model request, no other request to the server (an image fetched from it would
    // be one).
    QCOMPARE(m_server->requests().size(), 1);
}

void tst_ReadableAnswers::linksOpenOnlyWhenClickedAndOnlyHttp()
{
    UrlRecorder recorder;
    for (const char *scheme : {"http", "https", "file"})
        QDesktopServices::setUrlHandler(QString::fromLatin1(scheme), &recorder, "open");
    const auto unregister = qScopeGuard([] {
        for (const char *scheme : {"http", "https", "file"})
            QDesktopServices::unsetUrlHandler(QString::fromLatin1(scheme));
    });
    QVERIFY(startWithRemoteModel(markdownAnswer(m_files.filePath(QStringLiteral("none.png")))));
    bool ok = false;
    const TurnResult result = m_console->askAndWait(QStringLiteral("Where is order A1001?"), &ok);
    QVERIFY(ok);
    AnswerText *answer = answerOf(*m_console, result.requestId);
    QVERIFY(answer);
    QSignalSpy opened(answer, &AnswerText::linkOpened);

    // Shown, painted, hovered: nothing opens by itself.
    QVERIFY(QTest::qWaitForWindowExposed(m_console->window.get()));
    const QPoint carrier = anchorPosition(answer, QStringLiteral("carrier page"));
    const QPoint local = anchorPosition(answer, QStringLiteral("local file"));
    QVERIFY(carrier.x() >= 0 && local.x() >= 0);
    QTest::mouseMove(answer->viewport(), carrier);
    QVERIFY(recorder.opened.isEmpty());

    // A file: link is never opened from an answer, even when clicked.
    QTest::mouseClick(answer->viewport(), Qt::LeftButton, {}, local);
    QVERIFY(recorder.opened.isEmpty());
    QVERIFY(opened.isEmpty());

    // An https link opens when clicked, through the desktop's handler.
    QTest::mouseClick(answer->viewport(), Qt::LeftButton, {}, carrier);
    QCOMPARE(recorder.opened.size(), 1);
    QCOMPARE(recorder.opened.first(), QUrl(QStringLiteral("https://carrier.example/track/A1001")));
    QCOMPARE(opened.size(), 1);
    // Clicking a link does not take the keyboard from the question box.
    QCOMPARE(QApplication::focusWidget(), m_console->window->questionInput());
}

void tst_ReadableAnswers::copyTheAnswerAsTextOrMarkdown()
{
    const QString markdown = markdownAnswer(m_files.filePath(QStringLiteral("none.png")));
    QVERIFY(startWithRemoteModel(markdown));
    bool ok = false;
    const TurnResult result = m_console->askAndWait(QStringLiteral("Where is order A1001?"), &ok);
    QVERIFY(ok);
    QWidget *turn = transcriptOf(*m_console)->findChild<QWidget *>(QStringLiteral("turn-")
                                                                   + result.requestId);
    QVERIFY(turn);
    auto *copy = turn->findChild<QToolButton *>(QStringLiteral("copyAnswerButton"));
    QVERIFY(copy);
    QVERIFY(copy->isVisible());
    AnswerText *answer = answerOf(*m_console, result.requestId);

    // The button copies what staff read: the text without Markdown marks.
    QTest::mouseClick(copy, Qt::LeftButton);
    QClipboard *clipboard = QApplication::clipboard();
    QCOMPARE(clipboard->text(), answer->plainText());
    QVERIFY(!clipboard->text().contains(QLatin1String("**")));

    // The turn's menu: the same, or the Markdown the model wrote.
    chooseFromNextMenu(QStringLiteral("Copy as Markdown"));
    Q_EMIT turn->customContextMenuRequested(QPoint(10, 10));
    QCOMPARE(clipboard->text(), markdown);
    clipboard->clear();
    chooseFromNextMenu(QStringLiteral("Copy answer"));
    Q_EMIT turn->customContextMenuRequested(QPoint(10, 10));
    QCOMPARE(clipboard->text(), answer->plainText());
}

void tst_ReadableAnswers::theTicketIsAFieldOnItsCardAndCopied()
{
    m_console = std::make_unique<ConsoleFixture>();
    QVERIFY(m_console->start());
    QSignalSpy asked(m_console->loop(), &AgentLoop::confirmationRequested);
    QSignalSpy finished(m_console->loop(), &AgentLoop::turnFinished);
    const QString requestId = m_console->ask(
        QStringLiteral("Order A1001 arrived damaged, the screen is cracked. Please open a "
                       "ticket."));
    QVERIFY(!requestId.isEmpty());
    QVERIFY(asked.wait(turnTimeoutMs));
    const QList<ToolCallCard *> waiting = transcriptOf(*m_console)->toolCallCards(requestId);
    QCOMPARE(waiting.size(), 1);
    QPointer<ToolCallCard> card = waiting.first();
    QVERIFY(card->ticketId().isEmpty()); // nothing made yet
    QVERIFY(card->confirmationPanel());
    // Confirm can be pressed once the order's earlier tickets are checked.
    QTRY_VERIFY(card->confirmationPanel()->confirmButton()->isEnabled());
    QTest::mouseClick(card->confirmationPanel()->confirmButton(), Qt::LeftButton);
    QVERIFY(finished.wait(turnTimeoutMs));
    QVERIFY(card);

    // The ticket's id, as the backend made it, is a field on the card.
    const TurnResult result = finished.first().first().value<TurnResult>();
    QCOMPARE(result.toolCalls.size(), 1);
    const QString ticketId
        = result.toolCalls.first().result.data.toObject().value(QLatin1String("ticketId"))
              .toString();
    QVERIFY(!ticketId.isEmpty());
    QCOMPARE(card->ticketId(), ticketId);
    QLabel *field = nullptr;
    for (QLabel *label : card->findChildren<QLabel *>()) {
        if (label->isVisible() && label->text() == QStringLiteral("Ticket ") + ticketId)
            field = label;
    }
    QVERIFY2(field, "no visible ticket field on the card");
    QVERIFY(card->copyText().contains(ticketId));

    // Its menu copies the ticket id and the operation id, and the card's Copy the call.
    QClipboard *clipboard = QApplication::clipboard();
    std::unique_ptr<QMenu> menu(card->createContextMenu(nullptr));
    auto *copyTicket = menu->findChild<QAction *>(QStringLiteral("copyTicketId"));
    auto *copyOperation = menu->findChild<QAction *>(QStringLiteral("copyOperationId"));
    QVERIFY(copyTicket && copyOperation);
    QVERIFY(copyTicket->isEnabled());
    QCOMPARE(copyTicket->text(), QStringLiteral("Copy Ticket %1").arg(ticketId));
    copyTicket->trigger();
    QCOMPARE(clipboard->text(), ticketId);
    copyOperation->trigger();
    QCOMPARE(clipboard->text(), result.toolCalls.first().operationId);
    QTest::mouseClick(card->copyButton(), Qt::LeftButton);
    QCOMPARE(clipboard->text(), card->copyText());
    QVERIFY(!saveScreenshot(m_console->window.get(), QStringLiteral("ticket-card.png")).isEmpty());
}

void tst_ReadableAnswers::progressSaysTheAttemptAndTheTimeTaken()
{
    m_console = std::make_unique<ConsoleFixture>();
    QVERIFY(m_console->start());
    // Every logistics attempt hangs and times out after 300 ms: the turn shows its attempts.
    QVERIFY(m_console->setFaults(R"({"tools": {"queryLogistics": {"hang": true}}})"));
    QVERIFY(m_console->setPolicy(QStringLiteral("queryLogistics"), shortPolicy(300, 100, 100)));
    QSignalSpy finished(m_console->loop(), &AgentLoop::turnFinished);
    const QString requestId = m_console->ask(QStringLiteral("Where is order A1001?"));
    QVERIFY(!requestId.isEmpty());
    TranscriptView *transcript = transcriptOf(*m_console);
    QTRY_VERIFY_WITH_TIMEOUT(transcript->progressText(requestId).contains(
                                 QLatin1String("attempt 2 of 3")),
                             turnTimeoutMs);
    const QString progress = transcript->progressText(requestId);
    QVERIFY2(QRegularExpression(QStringLiteral("^Looking this up: attempt 2 of 3… \\(\\d+(\\.\\d+)? "
                                               "(ms|s)\\)$"))
                 .match(progress)
                 .hasMatch(),
             qPrintable(progress));
    QVERIFY(!saveScreenshot(m_console->window.get(), QStringLiteral("progress-attempt.png"))
                 .isEmpty());
    QVERIFY(finished.wait(turnTimeoutMs));
    // Once the turn is over its progress line is gone.
    QVERIFY(transcript->progressText(requestId).isEmpty());
}

void tst_ReadableAnswers::progressSaysTheModelIsRetrying()
{
    m_console = std::make_unique<ConsoleFixture>();
    QVERIFY(m_console->start());
    QVERIFY(m_console->setFaults(R"({"model": {"rateLimited": 1, "retryAfterMs": 200}})"));
    // What the window said when the model layer reported the retry (the transcript hears of
    // it first: its connection was made before this one).
    QStringList said;
    QString requestId;
    connect(m_console->loop(), &AgentLoop::modelProgress, this,
            [&](const QString &id, const ModelProgress &) {
                said.append(transcriptOf(*m_console)->progressText(id));
            });
    QSignalSpy finished(m_console->loop(), &AgentLoop::turnFinished);
    requestId = m_console->ask(QStringLiteral("Where is order A1001?"));
    QVERIFY(!requestId.isEmpty());
    QVERIFY(finished.wait(turnTimeoutMs));
    QVERIFY(!said.isEmpty());
    const QRegularExpression retrying(
        QStringLiteral("^The model is retrying: attempt 2 of \\d+… \\(\\d+(\\.\\d+)? (ms|s)\\)$"));
    QVERIFY2(retrying.match(said.first()).hasMatch(), qPrintable(said.join(QLatin1Char('\n'))));
    QCOMPARE(finished.first().first().value<TurnResult>().outcome(), TurnOutcome::Answered);
}

void tst_ReadableAnswers::progressSaysTheFallbackModelAnswers()
{
    m_console = std::make_unique<ConsoleFixture>();
    QVERIFY(m_console->start());
    QVERIFY(m_console->setFaults(R"({"model": {"quotaExhausted": true}})"));
    QStringList said;
    QList<ModelProgress> reported;
    connect(m_console->loop(), &AgentLoop::modelProgress, this,
            [&](const QString &id, const ModelProgress &progress) {
                reported.append(progress);
                said.append(transcriptOf(*m_console)->progressText(id));
            });
    QSignalSpy finished(m_console->loop(), &AgentLoop::turnFinished);
    QVERIFY(!m_console->ask(QStringLiteral("Where is order A1001?")).isEmpty());
    QVERIFY(finished.wait(turnTimeoutMs));
    QVERIFY(!reported.isEmpty());
    QCOMPARE(reported.first().kind, ModelProgress::Kind::FallingBack);
    QVERIFY(!reported.first().model.isEmpty());
    QVERIFY2(said.first().startsWith(QStringLiteral("Answering with the fallback model %1…")
                                         .arg(reported.first().model)),
             qPrintable(said.first()));
    const TurnResult result = finished.first().first().value<TurnResult>();
    QCOMPARE(result.outcome(), TurnOutcome::Answered);
    QVERIFY(result.fallbackHops > 0);
}

void tst_ReadableAnswers::typingAfterACardIsClickedReachesTheQuestionBox()
{
    m_console = std::make_unique<ConsoleFixture>();
    QVERIFY(m_console->start());
    bool ok = false;
    const TurnResult result = m_console->askAndWait(
        QStringLiteral("Where is order A1001 and is SKU-200 in stock?"), &ok);
    QVERIFY(ok);
    const QList<ToolCallCard *> cards = transcriptOf(*m_console)->toolCallCards(result.requestId);
    QVERIFY(cards.size() >= 2);
    QPointer<ToolCallCard> card = cards.first();
    QuestionInput *input = m_console->window->questionInput();
    QVERIFY(input->hasFocus());

    // Clicking a card opens it and leaves the keyboard where it was.
    QTest::mouseClick(card, Qt::LeftButton, {}, QPoint(20, 12));
    QVERIFY(card);
    QVERIFY(card->isExpanded());
    QCOMPARE(QApplication::focusWidget(), input);
    // Spaces and Enter are the question's, not the card's.
    QTest::keyClicks(QApplication::focusWidget(), QStringLiteral("is it late now"));
    QVERIFY(card->isExpanded());
    QCOMPARE(input->toPlainText(), QStringLiteral("is it late now"));
}

void tst_ReadableAnswers::typingOnACardFocusedByTabReachesTheQuestionBox()
{
    m_console = std::make_unique<ConsoleFixture>();
    QVERIFY(m_console->start());
    bool ok = false;
    const TurnResult result = m_console->askAndWait(QStringLiteral("Where is order A1001?"), &ok);
    QVERIFY(ok);
    QPointer<ToolCallCard> card = transcriptOf(*m_console)->toolCallCards(result.requestId).first();
    QuestionInput *input = m_console->window->questionInput();

    // A keyboard user tabs to the card: Space opens it, as a button's would.
    card->setFocus(Qt::TabFocusReason);
    QVERIFY(card->hasFocus());
    QTest::keyClick(card, Qt::Key_Space);
    QVERIFY(card->isExpanded());
    // Then types: the letters go to the question box, which takes the keyboard, none lost.
    QTest::keyClicks(card, QStringLiteral("ok"));
    QVERIFY(card);
    QCOMPARE(input->toPlainText(), QStringLiteral("ok"));
    QCOMPARE(QApplication::focusWidget(), input);
    QTest::keyClicks(QApplication::focusWidget(), QStringLiteral(" thanks"));
    QCOMPARE(input->toPlainText(), QStringLiteral("ok thanks"));
    QVERIFY(card->isExpanded());
}

// #41 §10: the empty screen's examples are buttons that ask; a turn that could not look
// something up offers Try again, a new turn (its own request id) asking only what failed.
void tst_ReadableAnswers::examplesAndTryAgainAskAsANewTurn()
{
    m_console = std::make_unique<ConsoleFixture>();
    QVERIFY(m_console->start());
    TranscriptView *transcript = transcriptOf(*m_console);
    const QList<QPushButton *> examples = transcript->exampleButtons();
    QCOMPARE(examples.size(), 3);
    QVERIFY(examples.first()->isVisible());
    QVERIFY(m_console->setFaults(R"({"tools": {"queryLogistics": {"permanentFailure": true}}})"));
    QSignalSpy finished(m_console->loop(), &AgentLoop::turnFinished);
    QTest::mouseClick(examples.first(), Qt::LeftButton); // A1001's shipment and SKU-200
    QVERIFY(finished.wait(turnTimeoutMs));
    const auto first = finished.takeFirst().first().value<TurnResult>();
    QCOMPARE(first.question, examples.first()->text());
    QCOMPARE(first.outcome(), TurnOutcome::Partial);
    QVERIFY(!examples.first()->isVisible()); // the screen is no longer empty

    auto *tryAgain = transcript->findChild<QWidget *>(QStringLiteral("turn-") + first.requestId)
                         ->findChild<QPushButton *>(QStringLiteral("tryAgainButton"));
    QVERIFY(tryAgain);
    QTRY_VERIFY(tryAgain->isVisible());
    QVERIFY(m_console->setFaults("{}"));
    QTest::mouseClick(tryAgain, Qt::LeftButton);
    QVERIFY(finished.wait(turnTimeoutMs));
    const auto again = finished.takeFirst().first().value<TurnResult>();
    QVERIFY(again.requestId != first.requestId);
    QCOMPARE(again.question, QStringLiteral("Try again: Track a shipment A1001"));
    QCOMPARE(again.toolCalls.size(), 1); // only what failed: the stock lookup had answered
    QCOMPARE(again.toolCalls.first().name, QStringLiteral("queryLogistics"));
    QVERIFY(again.toolCalls.first().result.success);
    QCOMPARE(again.outcome(), TurnOutcome::Answered);
}

// #41 §10: a failed card offers Try again for itself alone once its turn is over; a card
// that answered offers nothing.
void tst_ReadableAnswers::aFailedCardTriesItselfAgain()
{
    m_console = std::make_unique<ConsoleFixture>();
    QVERIFY(m_console->start());
    TranscriptView *transcript = transcriptOf(*m_console);
    QVERIFY(m_console->setFaults(R"({"tools": {"queryLogistics": {"permanentFailure": true},
                                              "queryInventory": {"permanentFailure": true}}})"));
    bool ok = false;
    const TurnResult first = m_console->askAndWait(
        QStringLiteral("Where is order A1001, what is its status, and is SKU-200 in stock?"), &ok);
    QVERIFY(ok);
    QCOMPARE(first.toolCalls.size(), 3);
    ToolCallCard *stock = nullptr;
    for (ToolCallCard *card : transcript->toolCallCards(first.requestId)) {
        const bool failed = card->toolName() != QLatin1String("queryOrderStatus");
        QCOMPARE(card->retryButton() && card->retryButton()->isVisible(), failed);
        if (card->toolName() == QLatin1String("queryInventory"))
            stock = card;
    }
    QVERIFY(stock);
    QCOMPARE(stock->retryButton()->toolTip(), QStringLiteral("Try again: Check stock SKU-200"));

    QVERIFY(m_console->setFaults("{}"));
    QSignalSpy finished(m_console->loop(), &AgentLoop::turnFinished);
    QTest::mouseClick(stock->retryButton(), Qt::LeftButton);
    QVERIFY(finished.wait(turnTimeoutMs));
    const auto again = finished.takeFirst().first().value<TurnResult>();
    QVERIFY(again.requestId != first.requestId);
    QCOMPARE(again.question, QStringLiteral("Try again: Check stock SKU-200"));
    QCOMPARE(again.toolCalls.size(), 1); // the card's own lookup, not the turn's other failure
    QCOMPARE(again.toolCalls.first().name, QStringLiteral("queryInventory"));
    QVERIFY(again.toolCalls.first().result.success);
}

QTEST_MAIN(tst_ReadableAnswers)
#include "tst_readableanswers.moc"
