// How the transcript lays a running turn out (issue #23, "a smooth window on a busy machine"):
// top down, so that a card made or grown in a turn never squeezes the cards around it into the
// turn's old height for a moment; the sizes it measures from a shared label cache are the
// labels' own; a finished attempt timeline painted from its cached picture is the picture it
// would paint afresh. The real TranscriptView, cards and timelines on the offscreen platform.
#include "transcriptwait.h"

#include "core/turn/turnresult.h"
#include "ui/common/groovecachingstyle.h"
#include "ui/common/roundedframe.h"
#include "ui/common/statuschip.h"
#include "ui/common/wraplabel.h"
#include "ui/transcript/attempttimeline.h"
#include "ui/transcript/toolcallcard.h"
#include "ui/transcript/transcriptview.h"

#include <QApplication>
#include <QFontInfo>
#include <QHash>
#include <QImage>
#include <QPainter>
#include <QPointer>
#include <QLayout>
#include <QResizeEvent>
#include <QScrollBar>
#include <QTest>
#include <QTimer>
#include <QVBoxLayout>

using namespace AgentConsole;
using namespace AgentConsole::Testing;

namespace {

constexpr int kCalls = 16; // the loop's bound on calls per model message
const QString kRequest = QStringLiteral("r-layout");

// Every resize of a card anywhere in the application: to a height below the one it had
// (squeezed) or not.
class CardResizes final : public QObject
{
public:
    int squeezed = 0;
    int resized = 0;

protected:
    bool eventFilter(QObject *watched, QEvent *event) override
    {
        if (event->type() == QEvent::Resize && qobject_cast<ToolCallCard *>(watched)) {
            const auto *resize = static_cast<QResizeEvent *>(event);
            ++resized;
            // A card's first size (from Qt's default) is no squeeze.
            if (resize->oldSize().isValid() && resize->oldSize().width() == resize->size().width()
                && resize->size().height() < resize->oldSize().height())
                ++squeezed;
        }
        return false;
    }
};

ToolCallRecord runningCall(int index, int attempt)
{
    ToolCallRecord call;
    call.index = index;
    call.name = QStringLiteral("queryOrder");
    call.arguments = {{QStringLiteral("orderId"), QStringLiteral("A%1").arg(1000 + index)}};
    call.state = ToolCallRecord::State::Running;
    call.maxAttempts = 3;
    for (int made = 1; made < attempt; ++made)
        call.attempts.append({made, (made - 1) * 30, 20, AttemptOutcome::TimedOut, -1});
    call.runningAttempt = attempt;
    call.runningAttemptStartedMs = (attempt - 1) * 30;
    return call;
}

ToolCallRecord finishedCall(int index)
{
    ToolCallRecord call = runningCall(index, 3);
    call.attempts.append({3, 60, 20, AttemptOutcome::TimedOut, -1});
    call.runningAttempt = 0;
    call.runningAttemptStartedMs = -1;
    call.state = ToolCallRecord::State::Finished;
    call.result = ToolResult::failure(ResultCode::ToolTimeout, Language::English);
    call.totalMs = 80;
    return call;
}

// A transcript alone in a shown window (waitUntilShown() looks for transcripts under one).
struct ShownTranscript
{
    explicit ShownTranscript(const QSize &size)
    {
        auto *layout = new QVBoxLayout(&window);
        layout->addWidget(transcript);
        window.resize(size);
        window.show();
    }
    QWidget window;
    TranscriptView *transcript = new TranscriptView(&window);
};

QImage pixels(QWidget *widget)
{
    return widget->grab().toImage().convertToFormat(QImage::Format_ARGB32_Premultiplied);
}

} // namespace

class tst_TranscriptLayout : public QObject
{
    Q_OBJECT

private slots:
    void cardsAreNeverSqueezedWhileTheirTurnGrows();
    void aTurnThatLeavesTheScreenIsHiddenThenDestroyed();
    void anInterruptedTurnSaysSoWithoutAClock();
    void aTurnMadeAgainIsAsHighAsItsLongQuestionNeeds();
    void sharedLabelSizesAreTheLabelsOwn_data();
    void sharedLabelSizesAreTheLabelsOwn();
    void aChipsSizeFollowsItsWordAndFont();
    void aFinishedTimelineCopiesThePictureItWouldPaint();
    void roundedFramesLookAsDrawnDirectly_data();
    void roundedFramesLookAsDrawnDirectly();
    void aLabelDrawsItsTextAsQLabelDoes_data();
    void aLabelDrawsItsTextAsQLabelDoes();
    void aScrollBarKeepsItsGrooveAndLooksAsFusionDrawsIt_data();
    void aScrollBarKeepsItsGrooveAndLooksAsFusionDrawsIt();
};

// 16 calls start together, then their attempts time out and retry in bursts, as in the bench's
// fault storm: every card ends where its turn's layout puts it, at its own height, below the
// one before, and none was ever set to a height it was about to lose (HEAD before this change:
// each card shown or grown squeezed every card below it into the turn's old height first).
void tst_TranscriptLayout::cardsAreNeverSqueezedWhileTheirTurnGrows()
{
    ShownTranscript shown(QSize(900, 700));
    QVERIFY(QTest::qWaitForWindowExposed(&shown.window));
    QWidget &window = shown.window;
    TranscriptView &transcript = *shown.transcript;
    CardResizes resizes;
    qApp->installEventFilter(&resizes);

    transcript.addQuestion(kRequest, QStringLiteral("Where are my sixteen orders?"));
    // The turn is made on screen at the next layout; calls reported before would be shown
    // only when it is made, all at once.
    QTRY_VERIFY(transcript.findChild<QWidget *>(QStringLiteral("turn-") + kRequest));
    for (int attempt = 1; attempt <= 3; ++attempt) {
        for (int index = 0; index < kCalls; ++index)
            transcript.updateToolCall(kRequest, runningCall(index, attempt));
        QVERIFY(waitUntilShown(&window));
    }
    for (int index = 0; index < kCalls; ++index)
        transcript.updateToolCall(kRequest, finishedCall(index));
    QVERIFY(waitUntilShown(&window));
    qApp->removeEventFilter(&resizes);

    const QList<ToolCallCard *> cards = transcript.toolCallCards(kRequest);
    QCOMPARE(cards.size(), kCalls);
    QVERIFY(resizes.resized >= kCalls); // the filter saw them
    QCOMPARE(resizes.squeezed, 0);
    int bottom = -1;
    for (ToolCallCard *card : cards) {
        QCOMPARE(card->height(), card->heightForWidth(card->width()));
        QVERIFY2(card->y() > bottom, qPrintable(card->objectName()));
        bottom = card->geometry().bottom();
    }
    QVERIFY(bottom < cards.constFirst()->parentWidget()->height());
}

// Turns far above the screen are not kept as widgets: one that leaves is hidden at once and
// destroyed a moment later, on its own timer (not in the layout that dropped it).
// #41 §6: a turn shown from the journal that never finished says it is interrupted and
// what to do, with no running time; resumed, it runs (and counts) again.
void tst_TranscriptLayout::anInterruptedTurnSaysSoWithoutAClock()
{
    ShownTranscript shown(QSize(900, 500));
    QVERIFY(QTest::qWaitForWindowExposed(&shown.window));
    TranscriptView *transcript = shown.transcript;
    const QString id = QStringLiteral("r-stopped");
    transcript->addQuestion(id, QStringLiteral("Where is order A1001?"));
    transcript->markInterrupted(id);
    QTRY_VERIFY(transcript->findChild<QWidget *>(QStringLiteral("turn-") + id));
    QVERIFY(waitUntilShown(&shown.window));
    const QString interrupted =
        QStringLiteral("Interrupted \u2014 Resume or Dismiss it in the banner above");
    QCOMPARE(transcript->progressText(id), interrupted);
    // No clock: nothing ticks it on (its timer is off, so the text cannot change).
    auto *clock = transcript->findChild<QWidget *>(QStringLiteral("turn-") + id)
                      ->findChild<QTimer *>(QStringLiteral("progressClock"));
    QVERIFY(clock);
    QVERIFY(!clock->isActive());
    transcript->markResumed(id, QStringLiteral("RECEIVED"), 1);
    QTRY_VERIFY(transcript->progressText(id).startsWith(QStringLiteral("Looking this up")));
    QVERIFY(clock->isActive());
}

void tst_TranscriptLayout::aTurnThatLeavesTheScreenIsHiddenThenDestroyed()
{
    ShownTranscript shown(QSize(900, 500));
    QVERIFY(QTest::qWaitForWindowExposed(&shown.window));
    QWidget &window = shown.window;
    TranscriptView *transcript = shown.transcript;

    const auto ask = [&](const QString &requestId) {
        transcript->addQuestion(requestId, QStringLiteral("Where are my sixteen orders?"));
        QTRY_VERIFY(transcript->findChild<QWidget *>(QStringLiteral("turn-") + requestId));
        for (int index = 0; index < kCalls; ++index)
            transcript->updateToolCall(requestId, finishedCall(index));
    };
    ask(QStringLiteral("r-first"));
    QVERIFY(waitUntilShown(&window));
    const QPointer<QWidget> first
        = transcript->findChild<QWidget *>(QStringLiteral("turn-r-first"));
    QVERIFY(first && first->isVisible());
    for (int turn = 0; turn < 4; ++turn) {
        ask(QStringLiteral("r-%1").arg(turn));
        QVERIFY(waitUntilShown(&window));
        QVERIFY(!first || !first->isVisible());
    }
    QTRY_VERIFY(first.isNull());
    QVERIFY(transcript->findChild<QWidget *>(QStringLiteral("turn-r-3"))->isVisible());
}

// A turn scrolled back into view is made again from the model and measured before it is on
// screen: its question's bubble, at most three quarters of the column wide, must count as
// wrapped at that width (it was measured as wide as the column, a line short).
void tst_TranscriptLayout::aTurnMadeAgainIsAsHighAsItsLongQuestionNeeds()
{
    ShownTranscript shown(QSize(900, 500));
    QVERIFY(QTest::qWaitForWindowExposed(&shown.window));
    QWidget &window = shown.window;
    TranscriptView *transcript = shown.transcript;
    const QString question = QStringLiteral(
        "Where are orders A1001, A1002 and A1003, which warehouse holds SKU-200 and SKU-300, "
        "and when will the replacement for the damaged parcel of order A1004 be sent out? "
        "The customer also asks whether the two parcels can travel together, and which "
        "carrier takes them from the Shanghai Pudong hub.");
    for (int turn = 0; turn < 4; ++turn) {
        const QString requestId = QStringLiteral("r-%1").arg(turn);
        transcript->addQuestion(requestId, question);
        QTRY_VERIFY(transcript->findChild<QWidget *>(QStringLiteral("turn-") + requestId));
        for (int index = 0; index < kCalls; ++index)
            transcript->updateToolCall(requestId, finishedCall(index));
        QVERIFY(waitUntilShown(&window));
    }
    QTRY_VERIFY(!transcript->findChild<QWidget *>(QStringLiteral("turn-r-0")));
    transcript->verticalScrollBar()->setValue(0);
    QCOMPARE(transcript->verticalScrollBar()->value(), 0); // the first scroll up holds
    QWidget *first = nullptr;
    QTRY_VERIFY((first = transcript->findChild<QWidget *>(QStringLiteral("turn-r-0")))
                && first->isVisible());
    QCOMPARE(first->height(), first->layout()->totalHeightForWidth(first->width()));
}

void tst_TranscriptLayout::sharedLabelSizesAreTheLabelsOwn_data()
{
    QTest::addColumn<QString>("text");
    QTest::addColumn<bool>("wrap");
    QTest::addColumn<qreal>("pointSize");
    QTest::newRow("one word") << QStringLiteral("Running") << false << 10.0;
    QTest::newRow("summary") << QStringLiteral("attempt 2 of 3 · 40 ms") << false << 10.0;
    QTest::newRow("same text, larger font") << QStringLiteral("Running") << false << 14.0;
    QTest::newRow("wrapped") << QStringLiteral("orderId: A1001, sku: SKU-200, warehouse: "
                                              "Shanghai Pudong, carrier: SF Express")
                             << true << 10.0;
    QTest::newRow("wrapped, Chinese") << QStringLiteral("订单 A1001 已从上海浦东仓库发出，"
                                                        "预计明天送达，承运人为顺丰速运。")
                                      << true << 10.0;
}

// Two labels of each kind measured first (filling the shared cache), then a third: every size
// a layout asks of a WrapLabel is what a plain QLabel of the same text and font answers.
void tst_TranscriptLayout::sharedLabelSizesAreTheLabelsOwn()
{
    QFETCH(QString, text);
    QFETCH(bool, wrap);
    QFETCH(qreal, pointSize);
    QFont font = QApplication::font();
    font.setPointSizeF(pointSize);
    const auto configure = [&](QLabel &label) {
        label.setTextFormat(Qt::PlainText);
        label.setWordWrap(wrap);
        label.setFont(font);
        label.setText(text);
    };
    QLabel reference;
    configure(reference);
    WrapLabel first;
    configure(first);
    (void)first.sizeHint();
    (void)first.heightForWidth(120);
    WrapLabel second; // answered from the cache
    configure(second);
    QCOMPARE(second.sizeHint(), reference.sizeHint());
    QCOMPARE(second.minimumSizeHint(), reference.minimumSizeHint());
    for (int width : {60, 120, 400})
        QCOMPARE(second.heightForWidth(width), reference.heightForWidth(width));
    // A font change is never answered with the old font's sizes.
    QFont larger = font;
    larger.setPointSizeF(pointSize * 2);
    second.setFont(larger);
    reference.setFont(larger);
    QCOMPARE(second.sizeHint(), reference.sizeHint());
    QCOMPARE(second.heightForWidth(120), reference.heightForWidth(120));
    // Nor a font it inherits, changed after it was measured (the label keeps its font's key).
    QWidget parent;
    parent.setFont(font);
    WrapLabel inheriting(&parent);
    inheriting.setTextFormat(Qt::PlainText);
    inheriting.setWordWrap(wrap);
    inheriting.setText(text);
    (void)inheriting.sizeHint();
    (void)inheriting.heightForWidth(120);
    parent.setFont(larger);
    QCOMPARE(inheriting.sizeHint(), reference.sizeHint());
    QCOMPARE(inheriting.minimumSizeHint(), reference.minimumSizeHint());
    QCOMPARE(inheriting.heightForWidth(120), reference.heightForWidth(120));
    // Nor a new minimum size with the sizes of a label without one.
    second.setMinimumSize(300, 40);
    reference.setMinimumSize(300, 40);
    QCOMPARE(second.sizeHint(), reference.sizeHint());
    QCOMPARE(second.minimumSizeHint(), reference.minimumSizeHint());
}

// A chip keeps its size between measures: a new word or a font it inherits is measured again.
void tst_TranscriptLayout::aChipsSizeFollowsItsWordAndFont()
{
    QWidget parent;
    StatusChip chip(&parent);
    chip.setStatus(QStringLiteral("OK"), Tone::Success);
    const QSize shortWord = chip.sizeHint();
    chip.setStatus(QStringLiteral("Execution status unknown"), Tone::Warning);
    const QSize longWord = chip.sizeHint();
    QVERIFY2(longWord.width() > shortWord.width(), "a longer word, a wider chip");
    QCOMPARE(chip.minimumSizeHint(), longWord);
    chip.setStatus(QStringLiteral("Execution status unknown"), Tone::Danger);
    QCOMPARE(chip.sizeHint(), longWord); // another tone, the same word: the same size
    QFont larger = parent.font();
    larger.setPointSizeF(QFontInfo(larger).pointSizeF() * 2);
    parent.setFont(larger);
    const QSize grown = chip.sizeHint();
    QVERIFY2(grown.width() > longWord.width() && grown.height() > longWord.height(),
             "the parent's larger font, a larger chip");
}

// A timeline whose call is over paints from a picture made once; the picture must follow every
// change: resized, its call changed, its palette changed, it matches a timeline painted afresh.
void tst_TranscriptLayout::aFinishedTimelineCopiesThePictureItWouldPaint()
{
    const auto fresh = [](const ToolCallRecord &call, const QSize &size,
                          const QPalette &palette) {
        AttemptTimeline timeline;
        timeline.setPalette(palette);
        timeline.setToolCall(call);
        timeline.resize(size);
        return pixels(&timeline);
    };
    AttemptTimeline cached;
    const ToolCallRecord done = finishedCall(0);
    cached.setToolCall(done);
    cached.resize(400, cached.sizeHint().height());
    const QImage first = pixels(&cached);
    QCOMPARE(first, fresh(done, cached.size(), cached.palette()));
    QCOMPARE(pixels(&cached), first); // from the picture

    cached.resize(520, cached.height());
    QCOMPARE(pixels(&cached), fresh(done, cached.size(), cached.palette()));

    ToolCallRecord other = finishedCall(1);
    other.attempts.removeLast();
    other.totalMs = 50;
    cached.setToolCall(other);
    const QImage changed = pixels(&cached);
    QCOMPARE(changed, fresh(other, cached.size(), cached.palette()));
    QVERIFY(changed != fresh(done, cached.size(), cached.palette()));

    QPalette dark = cached.palette();
    dark.setColor(QPalette::Base, Qt::black);
    dark.setColor(QPalette::Text, Qt::white);
    dark.setColor(QPalette::WindowText, Qt::white);
    cached.setPalette(dark);
    QCOMPARE(pixels(&cached), fresh(other, cached.size(), dark));
    QVERIFY(pixels(&cached) != changed);
}

void tst_TranscriptLayout::roundedFramesLookAsDrawnDirectly_data()
{
    QTest::addColumn<QSize>("size");
    QTest::addColumn<qreal>("inset");
    QTest::addColumn<qreal>("radius");
    QTest::addColumn<qreal>("pen");
    QTest::newRow("card") << QSize(690, 111) << 0.75 << 8.0 << 1.0;
    QTest::newRow("focused card") << QSize(690, 111) << 0.75 << 8.0 << 1.5;
    QTest::newRow("smallest card with a middle") << QSize(23, 23) << 0.75 << 8.0 << 1.0;
    QTest::newRow("card too small for pieces") << QSize(20, 20) << 0.75 << 8.0 << 1.0;
    QTest::newRow("chip") << QSize(64, 17) << 0.5 << 8.0 << 1.0;
    QTest::newRow("tall chip") << QSize(120, 24) << 0.5 << 11.5 << 1.0;
}

// The pieces put together again are the frame drawn in one go, on a card's background, to
// within two steps of 255 per colour: the picture is drawn on transparent and then over the
// background (a rounding step), and the rasterizer's fixed-point positions of a curve differ a
// little between a short tile and a long frame (one pixel of a tall chip's corner, by two).
void tst_TranscriptLayout::roundedFramesLookAsDrawnDirectly()
{
    QFETCH(QSize, size);
    QFETCH(qreal, inset);
    QFETCH(qreal, radius);
    QFETCH(qreal, pen);
    const QColor background(0xf4, 0xf4, 0xf6);
    const QColor outline(0x9a, 0xa0, 0xb0);
    const QColor fill(0xff, 0xff, 0xff);
    const auto canvas = [&] {
        QImage image(size + QSize(6, 6), QImage::Format_ARGB32_Premultiplied);
        image.fill(background);
        return image;
    };
    QImage direct = canvas();
    {
        QPainter painter(&direct);
        painter.setRenderHint(QPainter::Antialiasing);
        painter.setPen(QPen(outline, pen));
        painter.setBrush(fill);
        painter.drawRoundedRect(
            QRectF(QRect(QPoint(3, 3), size)).adjusted(inset, inset, -inset, -inset), radius,
            radius);
    }
    for (int pass = 0; pass < 2; ++pass) { // the second from the cached pieces
        QImage pieces = canvas();
        {
            QPainter painter(&pieces);
            paintRoundedFrame(painter, QRect(QPoint(3, 3), size), inset, radius, pen, outline,
                              fill);
        }
        int worst = 0;
        for (int y = 0; y < direct.height(); ++y) {
            for (int x = 0; x < direct.width(); ++x) {
                const QRgb a = direct.pixel(x, y);
                const QRgb b = pieces.pixel(x, y);
                worst = std::max({worst, std::abs(qRed(a) - qRed(b)),
                                  std::abs(qGreen(a) - qGreen(b)), std::abs(qBlue(a) - qBlue(b))});
            }
        }
        QVERIFY2(worst <= 2, qPrintable(QStringLiteral("differs by %1").arg(worst)));
    }
}

void tst_TranscriptLayout::aLabelDrawsItsTextAsQLabelDoes_data()
{
    QTest::addColumn<QString>("text");
    QTest::addColumn<int>("alignment");
    QTest::addColumn<bool>("wrap");
    QTest::addColumn<QSize>("size");
    QTest::addColumn<int>("margin");
    QTest::addColumn<qreal>("pointScale");
    const int left = int(Qt::AlignLeft | Qt::AlignVCenter);
    QTest::newRow("name") << QStringLiteral("queryLogistics") << left << false << QSize(200, 24)
                          << 0 << 1.0;
    QTest::newRow("arguments, small") << QStringLiteral("Order: A1001") << left << false
                                      << QSize(300, 16) << 0 << 0.9;
    QTest::newRow("summary, right") << QStringLiteral("3 attempts \u00b7 1.0 s")
                                    << int(Qt::AlignRight | Qt::AlignVCenter) << false
                                    << QSize(120, 17) << 0 << 1.0;
    QTest::newRow("right, trailing spaces") << QStringLiteral("retried  ")
                                            << int(Qt::AlignRight | Qt::AlignTop) << false
                                            << QSize(120, 17) << 0 << 1.0;
    QTest::newRow("ampersands") << QStringLiteral("A & B &x") << left << false << QSize(120, 17)
                                << 0 << 1.0;
    QTest::newRow("wrapped, top") << QStringLiteral(
        "The lookup timed out \u00b7 Please try again later, and then some more words to wrap")
                                  << int(Qt::AlignLeft | Qt::AlignTop) << true << QSize(200, 90)
                                  << 0 << 1.0;
    QTest::newRow("wrapped Chinese, margin") << QStringLiteral(
        "\u7269\u6d41\u67e5\u8be2\u8d85\u65f6\uff0c\u8bf7\u7a0d\u540e\u518d\u8bd5\u3002"
        "\u8ba2\u5355 A1001 \u7684\u7269\u6d41\u4fe1\u606f\u6682\u65f6\u65e0\u6cd5\u83b7\u53d6\u3002")
                                             << int(Qt::AlignLeft | Qt::AlignTop) << true
                                             << QSize(150, 90) << 2 << 1.0;
    QTest::newRow("centred, margin") << QStringLiteral("Centred text") << int(Qt::AlignCenter)
                                     << false << QSize(150, 31) << 3 << 1.0;
    QTest::newRow("bottom") << QStringLiteral("At the bottom")
                            << int(Qt::AlignHCenter | Qt::AlignBottom) << false
                            << QSize(150, 31) << 0 << 1.2;
    QTest::newRow("clipped") << QStringLiteral("Too long to fit in this narrow label at all")
                             << left << false << QSize(80, 17) << 0 << 1.0;
    QTest::newRow("two lines") << QStringLiteral("line one\nline two") << left << false
                               << QSize(150, 41) << 0 << 1.0;
    QTest::newRow("wrapped, too high for its box") << QStringLiteral(
        "several words that need more lines than this label has room for")
                                                   << left << true << QSize(90, 30) << 0 << 1.0;
}

// A label of plain text draws it from a layout it keeps (QLabel lays the text out at every
// paint): pixel for pixel what QLabel draws, for the cases it draws itself.
void tst_TranscriptLayout::aLabelDrawsItsTextAsQLabelDoes()
{
    QFETCH(QString, text);
    QFETCH(int, alignment);
    QFETCH(bool, wrap);
    QFETCH(QSize, size);
    QFETCH(int, margin);
    QFETCH(qreal, pointScale);
    const auto setUp = [&](QLabel &label) {
        label.setTextFormat(Qt::PlainText);
        label.setText(text);
        label.setAlignment(Qt::Alignment(alignment));
        label.setWordWrap(wrap);
        label.setMargin(margin);
        QFont font = label.font();
        font.setPointSizeF(font.pointSizeF() * pointScale);
        label.setFont(font);
        label.resize(size);
    };
    QLabel plain;
    setUp(plain);
    WrapLabel kept;
    setUp(kept);
    const QImage expected = pixels(&plain);
    const int laidOut = WrapLabel::textsLaidOut();
    QCOMPARE(pixels(&kept), expected);
    QCOMPARE(WrapLabel::textsLaidOut(), laidOut + 1);
    QCOMPARE(pixels(&kept), expected); // from the layout it kept
    QCOMPARE(WrapLabel::textsLaidOut(), laidOut + 1);
    // Changed, it is laid out again.
    plain.setText(text + QStringLiteral(" more"));
    kept.setText(text + QStringLiteral(" more"));
    QCOMPARE(pixels(&kept), pixels(&plain));
    plain.resize(size + QSize(30, 0));
    kept.resize(size + QSize(30, 0));
    QCOMPARE(pixels(&kept), pixels(&plain));
}

void tst_TranscriptLayout::aScrollBarKeepsItsGrooveAndLooksAsFusionDrawsIt_data()
{
    QTest::addColumn<int>("orientation");
    QTest::addColumn<QSize>("size");
    QTest::addColumn<bool>("enabled");
    QTest::addColumn<bool>("sliderDown");
    QTest::newRow("transcript-high") << int(Qt::Vertical) << QSize(14, 640) << true << false;
    QTest::newRow("short") << int(Qt::Vertical) << QSize(14, 60) << true << false;
    QTest::newRow("slider held") << int(Qt::Vertical) << QSize(14, 300) << true << true;
    QTest::newRow("disabled") << int(Qt::Vertical) << QSize(14, 300) << false << false;
    QTest::newRow("horizontal") << int(Qt::Horizontal) << QSize(400, 14) << true << false;
}

// The transcript's scroll bar keeps its groove between paints (Fusion fills it with a
// gradient at every paint, and the bar repaints at every growth of the conversation): pixel
// for pixel what Fusion draws, with the groove drawn again only for a new size or palette.
void tst_TranscriptLayout::aScrollBarKeepsItsGrooveAndLooksAsFusionDrawsIt()
{
    if (QApplication::style()->name().compare(QLatin1String("fusion"), Qt::CaseInsensitive))
        QSKIP("the groove is kept only under Fusion");
    QFETCH(int, orientation);
    QFETCH(QSize, size);
    QFETCH(bool, enabled);
    QFETCH(bool, sliderDown);
    const auto setUp = [&](QScrollBar &bar) {
        bar.setOrientation(Qt::Orientation(orientation));
        bar.setRange(0, 20000);
        bar.setPageStep(600);
        bar.setEnabled(enabled);
        bar.setSliderDown(sliderDown);
        bar.resize(size);
    };
    QScrollBar plain;
    setUp(plain);
    QScrollBar kept;
    cacheScrollBarGroove(&kept);
    QVERIFY(kept.style() != QApplication::style());
    setUp(kept);

    const int drawn = GrooveCachingStyle::groovesDrawn();
    for (const int value : {0, 9000, 19400, 20000}) {
        plain.setValue(value);
        kept.setValue(value);
        QCOMPARE(pixels(&kept), pixels(&plain));
    }
    QCOMPARE(GrooveCachingStyle::groovesDrawn(), drawn + 1); // once, as the slider moved

    // A new size or palette draws it anew.
    plain.resize(size + QSize(0, 20));
    kept.resize(size + QSize(0, 20));
    QCOMPARE(pixels(&kept), pixels(&plain));
    QPalette palette = plain.palette();
    palette.setColor(QPalette::Button, QColor(40, 44, 52));
    palette.setColor(QPalette::Window, QColor(30, 32, 36));
    plain.setPalette(palette);
    kept.setPalette(palette);
    QCOMPARE(pixels(&kept), pixels(&plain));
    QCOMPARE(GrooveCachingStyle::groovesDrawn(), drawn + 3);
}

QTEST_MAIN(tst_TranscriptLayout)
#include "tst_transcriptlayout.moc"
