#include "transcriptview.h"

#include "ui/common/pressonenter.h"

#include "toolcallcard.h"
#include "transcriptmodel.h"
#include "turntext.h"
#include "turnview.h"
#include "ui/common/consolepalette.h"
#include "ui/common/groovecachingstyle.h"

#include "core/turn/turnresult.h"

#include <QApplication>
#include <QEvent>
#include <QKeyEvent>
#include <QLabel>
#include <QLayout>
#include <QMenu>
#include <QPointer>
#include <QScrollBar>
#include <QSet>
#include <QDateTime>
#include <QTimerEvent>
#include <QVBoxLayout>
#include <QPushButton>

#include <algorithm>
#include <functional>
#include <memory>
#include <utility>

namespace AgentConsole {

namespace {

constexpr int columnMaximumWidth = 920;
constexpr int followSlack = 24; // pixels from the bottom that still count as "at the newest"
constexpr int turnSpacing = 18;
constexpr int sideMargin = 20;
constexpr int topMargin = 16;

// A change made to one turn with its layouts held, then the turn placed: shown, measured and
// laid out once, top down (TurnView::holdLayouts).
template <typename Change> void changeHeld(Internal::TurnView *turn, Change &&change)
{
    turn->holdLayouts();
    change();
    turn->placeHeld();
}

} // namespace

TranscriptView::TranscriptView(QWidget *parent)
    : QAbstractScrollArea(parent)
    , m_model(new TranscriptModel(this))
{
    setFrameShape(QFrame::NoFrame);
    setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    setVerticalScrollBarPolicy(Qt::ScrollBarAsNeeded);
    setFocusPolicy(Qt::NoFocus);
    viewport()->setObjectName(QStringLiteral("transcriptCanvas"));
    verticalScrollBar()->setSingleStep(24);
    // The bar is repainted at every growth of the conversation (its slider moves).
    cacheScrollBarGroove(verticalScrollBar());

    m_empty = new QWidget(viewport());
    m_empty->setObjectName(QStringLiteral("emptyTranscript"));
    m_emptyHint = new QLabel(m_empty);
    m_emptyHint->setTextFormat(Qt::PlainText);
    m_emptyHint->setWordWrap(true);
    m_emptyHint->setAlignment(Qt::AlignCenter);
    m_emptyHint->setText(
        tr("Ask about an order, its shipment or stock, or try one of these. Each tool the "
           "agent uses appears as a card under its answer; click a card to see every "
           "attempt."));
    m_emptyHint->setPalette(Internal::withMutedText(palette()));
    auto *emptyLayout = new QVBoxLayout(m_empty);
    emptyLayout->setContentsMargins(0, 0, 0, 0);
    emptyLayout->setSpacing(8);
    emptyLayout->addWidget(m_emptyHint);
    // The examples ask, as typed questions do (the window decides when it can).
    for (const QString &example :
         {tr("Where is order A1001 and is SKU-200 in stock?"),
          tr("Where is order A1004 right now?"),
          tr("Create an after-sales ticket for order A1001: the mug arrived broken")}) {
        auto *button = new QPushButton(example, m_empty);
        button->setObjectName(QStringLiteral("exampleQuestion"));
        button->setCursor(Qt::PointingHandCursor);
        button->setFocusPolicy(Qt::StrongFocus);
        pressOnEnter(button);
        connect(button, &QPushButton::clicked, this,
                [this, example] { Q_EMIT questionOffered(example); });
        emptyLayout->addWidget(button, 0, Qt::AlignHCenter);
    }
    emptyLayout->addStretch(1);
}

TranscriptView::~TranscriptView() = default;

int TranscriptView::rowFor(const QString &requestId)
{
    const int row = m_model->ensureTurn(requestId);
    while (m_heights.size() <= row)
        m_heights.append(-1);
    m_dirty.insert(row); // whatever the caller changes next is measured at the next layout
    queueLayout();
    return row;
}

// The row of a turn's widget, or of a card inside it; -1 for anything else.
int TranscriptView::rowOfWidget(const QObject *widget) const
{
    for (const QObject *at = widget; at && at != viewport(); at = at->parent()) {
        for (auto it = m_live.cbegin(); it != m_live.cend(); ++it) {
            if (it.value() == at)
                return it.key();
        }
    }
    return -1;
}

Internal::TurnView *TranscriptView::liveTurn(int row) const
{
    return m_live.value(row);
}

Internal::TurnView *TranscriptView::realise(int row) const
{
    if (Internal::TurnView *turn = m_live.value(row))
        return turn;
    auto *self = const_cast<TranscriptView *>(this);
    const TranscriptTurn &record = m_model->turn(row);
    auto *turn = new Internal::TurnView(
        self, m_model, record.requestId,
        [self](Internal::TurnView *held) { self->placeHeld({held}); }, self->viewport());
    turn->setObjectName(QStringLiteral("turn-") + record.requestId);
    turn->restore(record);
    turn->installEventFilter(self);
    m_live.insert(row, turn);
    // Placed where the last layout put its row, so that it is usable at once; the queued
    // layout places it again and keeps it only if it is near the screen.
    const int width = columnWidth();
    const int top = m_tops.value(row, 0) - verticalScrollBar()->value();
    const int height = turn->heightAt(width);
    turn->setGeometry(std::max(sideMargin, (viewport()->width() - width) / 2), top, width, height);
    turn->show();
    Internal::runLayout(turn); // once, now, at the height just measured
    // Made from the model as it is: measured as the next layout would measure it.
    if (width == m_measuredWidth && row < m_heights.size()) {
        self->m_heights[row] = height;
        self->m_dirty.remove(row);
    }
    self->queueLayout();
    return turn;
}

void TranscriptView::addQuestion(const QString &requestId, const QString &question)
{
    const int row = rowFor(requestId);
    m_model->change(row, [&](TranscriptTurn &turn) { turn.question = question; });
    if (Internal::TurnView *turn = liveTurn(row))
        turn->setQuestion(question);
    // Asking is the clearest sign the reader wants to see what comes next.
    m_followNewest = true;
}

void TranscriptView::markInterrupted(const QString &requestId)
{
    const int row = rowFor(requestId);
    m_model->change(row, [&](TranscriptTurn &turn) { turn.interrupted = true; });
    if (Internal::TurnView *turn = liveTurn(row))
        turn->showProgress();
}

void TranscriptView::markResumed(const QString &requestId, const QString &stage, int restarts)
{
    const int row = rowFor(requestId);
    m_model->change(row, [&](TranscriptTurn &turn) {
        turn.resumedStage = stage;
        turn.restarts = std::max(1, restarts);
        // Running again from now: its clock starts anew.
        turn.interrupted = false;
        turn.startedMs = QDateTime::currentMSecsSinceEpoch();
    });
    if (Internal::TurnView *turn = liveTurn(row)) {
        turn->markResumed(stage, restarts);
        turn->showProgress(); // running again: its clock too
    }
}

void TranscriptView::appendAnswer(const QString &requestId, const QString &text)
{
    if (text.isEmpty())
        return;
    const int row = rowFor(requestId);
    m_model->change(row, [&](TranscriptTurn &turn) { turn.answer += text; });
    if (Internal::TurnView *turn = liveTurn(row))
        turn->appendAnswer(text);
}

void TranscriptView::noteModelProgress(const QString &requestId, const ModelProgress &progress)
{
    const int row = rowFor(requestId);
    m_model->change(row, [&](TranscriptTurn &turn) {
        if (progress.kind == ModelProgress::Kind::FallingBack) {
            turn.fallbackModel = progress.model;
            turn.modelRetry = {}; // the retries counted were the previous model's
        } else {
            turn.modelRetry = progress;
        }
    });
    if (Internal::TurnView *turn = liveTurn(row))
        turn->showProgress();
}

void TranscriptView::updateToolCall(const QString &requestId, const ToolCallRecord &call)
{
    const int row = rowFor(requestId);
    const bool wasConfirming = Internal::awaitsConfirmation(m_model->turn(row), call.index);
    m_model->change(row, [&](TranscriptTurn &turn) {
        turn.calls.insert(call.index, call);
        // Tools run now: what the model did before is over (the next call starts afresh).
        turn.modelRetry = {};
        turn.fallbackModel.clear();
    });
    Internal::TurnView *turn = liveTurn(row);
    if (!turn)
        return;
    // A confirmation panel is shown, measured and placed at once: its buttons are there to be
    // clicked; and it is closed at once when the question is over, so that nobody answers one
    // that no longer stands. Any other change waits for the next turn of the event loop (a
    // zero timer, so that input and timers due before it run first): the calls a message
    // starts together, or whose attempts time out together, are shown and laid out once, not
    // one per card inside the burst that reported them.
    if (call.state == ToolCallRecord::State::AwaitingConfirmation || wasConfirming) {
        m_pendingCards[requestId].remove(call.index);
        changeHeld(turn, [&] { turn->updateToolCall(call, m_model->turn(row)); });
        return;
    }
    m_pendingCards[requestId].insert(call.index);
    queueShowing();
}

void TranscriptView::queueShowing()
{
    if (!m_showTimer.isActive())
        m_showTimer.start(0, this);
}

void TranscriptView::timerEvent(QTimerEvent *event)
{
    if (event->timerId() == m_retireTimer.timerId()) {
        // A card at a time, then the turn: each fire costs a card's widgets, never a turn's.
        while (!m_retired.isEmpty() && !m_retired.constFirst())
            m_retired.removeFirst();
        // A turn whose menu is open (its own event loop runs it) waits until it closes.
        if (!m_retired.isEmpty() && m_retired.constFirst()->findChild<QMenu *>())
            return;
        if (!m_retired.isEmpty() && !m_retired.constFirst()->destroyOneCard()) {
            // Its parent, the viewport, would destroy it with the transcript; now, alone.
            const std::unique_ptr<Internal::TurnView> turn(m_retired.takeFirst().data());
        }
        if (m_retired.isEmpty())
            m_retireTimer.stop();
        return;
    }
    if (event->timerId() != m_showTimer.timerId()) {
        QAbstractScrollArea::timerEvent(event);
        return;
    }
    showPending();
}

// A slice: finished turns first (each at once: its answer and every card), then cards, until
// the slice's time is up; the rest waits for the next one. A millisecond: a slice and the
// paint it causes run back to back, and on a busy machine the scheduler gives the core away
// once the GUI thread has run a few milliseconds in a row. Against longer slices the busy
// window's longest gap and its p99 came out shorter, for a little more of the GUI thread's CPU
// in more paints; shorter ones cost more in paints than they saved (docs/PERFORMANCE.md,
// "ui_stall_bench").
void TranscriptView::showPending()
{
    constexpr qint64 sliceNs = 1'000'000;
    QElapsedTimer slice;
    slice.start();
    bool shown = false;
    QList<Internal::TurnView *> changed; // held until the slice is over, then placed once
    const auto hold = [&changed](Internal::TurnView *turn) {
        if (!changed.contains(turn)) {
            turn->holdLayouts();
            changed.append(turn);
        }
    };
    while (!m_pendingFinished.isEmpty() && (!shown || slice.nsecsElapsed() < sliceNs)) {
        const QString requestId = m_pendingFinished.takeFirst();
        const int row = m_model->rowOf(requestId);
        if (Internal::TurnView *turn = row >= 0 ? liveTurn(row) : nullptr) {
            hold(turn);
            turn->finish(m_model->turn(row));
            shown = true;
        }
    }
    while (!m_pendingCards.isEmpty() && (!shown || slice.nsecsElapsed() < sliceNs)) {
        auto it = m_pendingCards.begin();
        const int row = m_model->rowOf(it.key());
        Internal::TurnView *turn = row >= 0 ? liveTurn(row) : nullptr;
        if (!turn || it.value().isEmpty()) {
            // Off screen: it is made from the model when it comes back.
            m_pendingCards.erase(it);
            continue;
        }
        // Cards are made in core's order: the lowest index first.
        const int index = *std::min_element(it.value().cbegin(), it.value().cend());
        it.value().remove(index);
        const TranscriptTurn &shownTurn = m_model->turn(row);
        const auto call = shownTurn.calls.constFind(index);
        if (call != shownTurn.calls.cend()) {
            hold(turn);
            turn->updateToolCall(*call, shownTurn);
            shown = true;
        }
        if (it.value().isEmpty())
            m_pendingCards.erase(it);
    }
    if (m_pendingFinished.isEmpty() && m_pendingCards.isEmpty())
        m_showTimer.stop();
    else // the next slice after the timers due by then: a zero timer would always go first
        m_showTimer.start(1, Qt::PreciseTimer, this);
    // Placed now, once for the slice, before anything is painted: what the slice showed
    // appears where it belongs in the next frame.
    if (shown)
        placeHeld(changed);
}

// The turns whose layouts were held for a batch of changes, measured, given their heights,
// and only then laid out inside: top down, each card sized once (TurnView::holdLayouts).
void TranscriptView::placeHeld(const QList<Internal::TurnView *> &turns)
{
    for (Internal::TurnView *turn : turns) {
        const int row = m_live.key(turn, -1);
        if (turn->releaseLayouts() && row >= 0)
            m_dirty.insert(row);
    }
    layoutTurns();
    for (Internal::TurnView *turn : turns) {
        if (m_live.key(turn, -1) >= 0) // still on screen after the layout
            turn->runReleasedLayouts();
    }
}

void TranscriptView::finishTurn(const TurnResult &result)
{
    const int row = rowFor(result.requestId);
    // A confirmation panel still open is closed at once: nobody may approve a write for a
    // turn that is over, not even for one turn of the event loop.
    const bool confirming = Internal::awaitsConfirmation(m_model->turn(row));
    m_model->change(row, [&](TranscriptTurn &turn) {
        for (const ToolCallRecord &call : result.toolCalls)
            turn.calls.insert(call.index, call);
        turn.answer = Internal::finalAnswer(result, turn.answer);
        turn.result = result;
    });
    // finish() shows every call: the cards waiting are part of it.
    m_pendingCards.remove(result.requestId);
    Internal::TurnView *turn = liveTurn(row);
    if (!turn)
        return;
    if (confirming) {
        m_pendingFinished.removeAll(result.requestId);
        changeHeld(turn, [&] { turn->finish(m_model->turn(row)); });
    } else if (!m_pendingFinished.contains(result.requestId)) {
        m_pendingFinished.append(result.requestId);
        queueShowing();
    }
}

bool TranscriptView::hasUnshownChanges() const
{
    return !m_pendingFinished.isEmpty() || !m_pendingCards.isEmpty();
}

void TranscriptView::clear()
{
    for (Internal::TurnView *turn : std::as_const(m_live)) {
        turn->hide();
        turn->deleteLater();
    }
    m_live.clear();
    m_pendingCards.clear();
    m_pendingFinished.clear();
    m_model->clear();
    m_heights.clear();
    m_tops.clear();
    m_dirty.clear();
    m_followNewest = true;
    queueLayout();
}

QStringList TranscriptView::requestIds() const
{
    QStringList ids;
    ids.reserve(m_model->rowCount());
    for (int row = 0; row < m_model->rowCount(); ++row)
        ids.append(m_model->turn(row).requestId);
    return ids;
}

QString TranscriptView::questionText(const QString &requestId) const
{
    const int row = m_model->rowOf(requestId);
    return row < 0 ? QString() : m_model->turn(row).question;
}

QString TranscriptView::resumedText(const QString &requestId) const
{
    const int row = m_model->rowOf(requestId);
    return row < 0 ? QString() : Internal::resumedFor(m_model->turn(row));
}

QString TranscriptView::answerText(const QString &requestId) const
{
    const int row = m_model->rowOf(requestId);
    return row < 0 ? QString() : m_model->turn(row).answer;
}

QString TranscriptView::turnStatusText(const QString &requestId) const
{
    const int row = m_model->rowOf(requestId);
    if (row < 0 || !m_model->turn(row).result)
        return {};
    return Internal::statusFor(*m_model->turn(row).result).first;
}

QString TranscriptView::speakerText(const QString &requestId) const
{
    const int row = m_model->rowOf(requestId);
    return row < 0 ? QString() : Internal::speakerFor(m_model->turn(row));
}

QString TranscriptView::footerText(const QString &requestId) const
{
    const int row = m_model->rowOf(requestId);
    if (row < 0 || !m_model->turn(row).result)
        return {};
    return Internal::footerFor(*m_model->turn(row).result);
}

QString TranscriptView::notRunText(const QString &requestId) const
{
    const int row = m_model->rowOf(requestId);
    return row < 0 ? QString() : Internal::notRunFor(m_model->turn(row));
}

QList<QPushButton *> TranscriptView::exampleButtons() const
{
    return m_empty->findChildren<QPushButton *>(QStringLiteral("exampleQuestion"));
}

QString TranscriptView::progressText(const QString &requestId) const
{
    const int row = m_model->rowOf(requestId);
    if (row < 0)
        return {};
    return realise(row)->progressText();
}

QList<ToolCallCard *> TranscriptView::toolCallCards(const QString &requestId) const
{
    const int row = m_model->rowOf(requestId);
    if (row < 0)
        return {};
    return realise(row)->cards();
}

QString TranscriptView::requestIdAt(const QPoint &pos) const
{
    const int y = pos.y() + verticalScrollBar()->value();
    for (int row = 0; row < m_tops.size() && row < m_heights.size(); ++row) {
        if (y >= m_tops.at(row) && y < m_tops.at(row) + estimatedHeight(row))
            return m_model->turn(row).requestId;
    }
    return {};
}

void TranscriptView::resizeEvent(QResizeEvent *event)
{
    QAbstractScrollArea::resizeEvent(event);
    layoutTurns();
}

void TranscriptView::scrollContentsBy(int, int)
{
    if (m_inLayout)
        return;
    // The reader scrolled: follow the newest turn only from the bottom. Decided here, before
    // the layout (which keeps a followed transcript at the bottom); a slot on the scroll bar's
    // valueChanged runs after it, and the first scroll up snapped back.
    const QScrollBar *bar = verticalScrollBar();
    m_followNewest = bar->value() >= bar->maximum() - followSlack;
    layoutTurns();
}

bool TranscriptView::eventFilter(QObject *watched, QEvent *event)
{
    // A turn on screen, or a card in it, changed its size hint outside a held batch (a card
    // opened, its own frame timer showed an attempt, the answer's document laid itself out):
    // measure its turn again, and move the turns below it. At once, not queued: the turn must
    // have its new height before anything is painted or clicked in it. Qt has run the
    // widget's own layout before a filter sees the request (at the height it had then); the
    // batches where cards change most are held and placed top down instead (placeHeld).
    if (event->type() == QEvent::LayoutRequest && watched->isWidgetType() && !m_inLayout) {
        const int row = rowOfWidget(watched);
        if (row < 0)
            return QAbstractScrollArea::eventFilter(watched, event);
        m_dirty.insert(row);
        layoutTurns(); // measures the turn, gives it its height, then runs its layout
        return true;
    }
    return QAbstractScrollArea::eventFilter(watched, event);
}

bool TranscriptView::viewportEvent(QEvent *event)
{
    if (event->type() == QEvent::LayoutRequest)
        queueLayout();
    return QAbstractScrollArea::viewportEvent(event);
}

void TranscriptView::setTypingTarget(QWidget *target)
{
    m_typingTarget = target;
}

void TranscriptView::keyPressEvent(QKeyEvent *event)
{
    const QString text = event->text();
    const bool printable = !text.isEmpty() && text.at(0).isPrint()
        && !(event->modifiers() & (Qt::ControlModifier | Qt::AltModifier | Qt::MetaModifier));
    QWidget *target = m_typingTarget;
    if (printable && target && target->isEnabled() && target->isVisible()) {
        target->setFocus(Qt::OtherFocusReason);
        QCoreApplication::sendEvent(target, event);
        return;
    }
    QAbstractScrollArea::keyPressEvent(event);
}

void TranscriptView::queueLayout()
{
    if (m_layoutQueued)
        return;
    m_layoutQueued = true;
    QMetaObject::invokeMethod(
        this, [this] { layoutTurns(); }, Qt::QueuedConnection);
}

int TranscriptView::columnWidth() const
{
    return std::max(200, std::min(columnMaximumWidth, viewport()->width() - 2 * sideMargin));
}

int TranscriptView::estimatedHeight(int row) const
{
    if (m_heights.value(row, -1) >= 0)
        return m_heights.at(row);
    // Never measured: a guess from its text, good enough for the scroll bar; the turn is
    // measured when it first comes near the screen.
    const TranscriptTurn &turn = m_model->turn(row);
    const int lineHeight = fontMetrics().lineSpacing();
    const int charsPerLine = std::max(
        20, columnWidth() / std::max(1, fontMetrics().averageCharWidth()));
    const int answerLines = int(turn.answer.size()) / charsPerLine + 1
        + int(turn.answer.count(QLatin1Char('\n')));
    return 4 * lineHeight + 40 + answerLines * lineHeight + int(turn.calls.size()) * 64;
}

void TranscriptView::layoutTurns()
{
    m_layoutQueued = false;
    if (m_inLayout)
        return;
    m_inLayout = true;
    const int rows = m_model->rowCount();
    QWidget *port = viewport();
    const int width = columnWidth();
    const int left = std::max(sideMargin, (port->width() - width) / 2);
    const int viewHeight = port->height();
    m_empty->setVisible(rows == 0);
    if (rows == 0) {
        m_empty->setGeometry(left, viewHeight / 6, width, viewHeight * 2 / 3);
        verticalScrollBar()->setRange(0, 0);
        m_inLayout = false;
        return;
    }
    if (width != m_measuredWidth) { // measured heights hold for one width only
        m_measuredWidth = width;
        for (int &height : m_heights)
            height = -1;
    }
    QScrollBar *bar = verticalScrollBar();
    QSet<int> near;
    QSet<int> measuredRows; // laid out inside once placed: measuring left their layouts stale
    m_tops.resize(rows);
    // Measuring a turn can change the heights above the screen's top, and so where the
    // screen is: a few passes settle it (each pass measures only the turns near the screen).
    for (int pass = 0; pass < 4; ++pass) {
        int total = topMargin;
        for (int row = 0; row < rows; ++row)
            total += estimatedHeight(row) + (row + 1 < rows ? turnSpacing : 0);
        total += topMargin;
        bar->setPageStep(viewHeight);
        bar->setRange(0, std::max(0, total - viewHeight));
        if (m_followNewest)
            bar->setValue(bar->maximum());
        const int top = bar->value() - viewHeight / 2;
        const int bottom = bar->value() + viewHeight + viewHeight / 2;
        bool changed = false;
        near.clear();
        int y = topMargin;
        for (int row = 0; row < rows; ++row) {
            const int height = estimatedHeight(row);
            m_tops[row] = y;
            if (y + height >= top && y <= bottom) {
                near.insert(row);
                const int known = m_heights.at(row);
                Internal::TurnView *turn = realise(row);
                changed = changed || m_heights.at(row) != known; // measured as it was made
                // Measured again only when it changed (or never was at this width).
                if (m_heights.at(row) < 0 || m_dirty.contains(row)) {
                    m_dirty.remove(row);
                    measuredRows.insert(row);
                    const int measured = turn->heightAt(width);
                    if (measured != m_heights.at(row)) {
                        m_heights[row] = measured;
                        changed = true;
                    }
                }
            }
            y += estimatedHeight(row) + turnSpacing;
        }
        if (!changed)
            break;
    }
    const int offset = bar->value();
    const QWidget *focus = QApplication::focusWidget();
    for (auto it = m_live.begin(); it != m_live.end();) {
        Internal::TurnView *turn = it.value();
        const int row = it.key();
        // A turn holding the keyboard focus (a confirmation button, a card) stays made.
        if (near.contains(row) || (focus && turn->isAncestorOf(focus))) {
            turn->setGeometry(left, m_tops.at(row) - offset, width,
                              m_heights.at(row) > 0 ? m_heights.at(row) : estimatedHeight(row));
            turn->show();
            if (measuredRows.contains(row))
                Internal::runLayout(turn);
            ++it;
        } else {
            turn->hide();
            turn->removeEventFilter(this);
            m_retired.append(turn);
            if (!m_retireTimer.isActive())
                m_retireTimer.start(1, Qt::PreciseTimer, this);
            it = m_live.erase(it);
        }
    }
    m_inLayout = false;
}

} // namespace AgentConsole
