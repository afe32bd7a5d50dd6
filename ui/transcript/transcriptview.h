#pragma once

#include <QAbstractScrollArea>
#include <QBasicTimer>
#include <QHash>
#include <QList>
#include <QPointer>
#include <QSet>

class QLabel;
class QPushButton;

namespace AgentConsole {

class ToolCallCard;
class TranscriptModel;
struct ModelProgress;
struct ToolCallRecord;
struct TurnResult;

namespace Internal {
class TurnView;
}

// The conversation: each turn is the staff member's question (a bubble on the right), the
// agent's answer as it streams in, one ToolCallCard per tool call under the answer, and a
// footer once the turn is over. Follows the newest message unless the reader scrolled up.
// A write tool waiting for the staff member shows its confirmation panel inside its card;
// the answer is reported (confirmationAnswered), never acted on, here.
//
// Why a virtualised list of widgets, not a delegate: a turn's cards are rich, interactive
// widgets (the painted attempt timeline with its hover, the confirmation panel's buttons,
// keyboard focus, accessibility), and painting them in a delegate would mean writing them
// twice. So the turns' state lives in a TranscriptModel (values, not widgets), and widgets
// exist only for the turns in and near the viewport: made from the model when a turn scrolls
// in, dropped when it leaves. A turn's height is measured when it is made and cached; turns
// never seen use an estimate from their text. A turn's cost is then that of the few turns on
// screen, never of all the turns before it (docs/PERFORMANCE.md, "transcript_bench").
class TranscriptView final : public QAbstractScrollArea
{
    Q_OBJECT

public:
    explicit TranscriptView(QWidget *parent = nullptr);
    ~TranscriptView() override;

    void addQuestion(const QString &requestId, const QString &question);
    // The turn was carried on from a checkpoint (AgentLoop::turnResumed): a chip above its
    // question says where it had stopped.
    void markResumed(const QString &requestId, const QString &stage, int restarts);
    // A turn shown from the journal that never finished (the console stopped): it says so
    // and waits, without a running clock, until it is resumed (markResumed) or discarded.
    void markInterrupted(const QString &requestId);
    void appendAnswer(const QString &requestId, const QString &text);
    void updateToolCall(const QString &requestId, const ToolCallRecord &call);
    // The model retries, or the fallback chain asks another model (AgentLoop::modelProgress).
    void noteModelProgress(const QString &requestId, const ModelProgress &progress);
    void finishTurn(const TurnResult &result);
    void clear();
    // True while a change the model holds is not on screen yet: it is shown at the next turns
    // of the event loop, in slices (a finished turn whose confirmation was still open, at once).
    bool hasUnshownChanges() const;

    QStringList requestIds() const;
    QString questionText(const QString &requestId) const;
    QString answerText(const QString &requestId) const;
    // "Resumed: stopped while looking things up" for a resumed turn; empty otherwise.
    QString resumedText(const QString &requestId) const;
    // Empty while the turn runs; then "Answered", "Partly answered", "Not answered",
    // "Declined by the model", "Cancelled" or "Failed" (TurnResult::outcome).
    QString turnStatusText(const QString &requestId) const;
    // "Agent" until the turn names the model that wrote the answer: "Agent · fake-model".
    QString speakerText(const QString &requestId) const;
    // Empty while the turn runs; then "1.2 s · 2 tool calls · model: 8 attempts · ...".
    QString footerText(const QString &requestId) const;
    // "285 lookups not run: too many asked for at once" when the bound on tool calls per
    // model message refused some; empty otherwise.
    QString notRunText(const QString &requestId) const;
    // While the turn runs, what it is doing in words, with the time it has taken:
    // "Looking this up: attempt 2 of 3… (2.4 s)"; empty once the answer shows.
    QString progressText(const QString &requestId) const;
    // The empty screen's example questions, as buttons that ask them.
    QList<QPushButton *> exampleButtons() const;
    // The cards of a turn; makes its widgets when it is not on screen (they are dropped
    // again at the next layout unless it scrolls into view).
    QList<ToolCallCard *> toolCallCards(const QString &requestId) const;
    // Turns whose widgets exist now (those on screen and just beside it).
    int liveTurnCount() const { return int(m_live.size()); }
    TranscriptModel *model() const { return m_model; }
    // The turn shown at `pos`, in viewport() coordinates (where customContextMenuRequested
    // reports a click in a scroll area); empty between turns.
    QString requestIdAt(const QPoint &pos) const;
    // Where text typed in the transcript goes (the question box): a printable key that no
    // card or button took is passed there, with the keyboard focus, so that nothing typed
    // after clicking or tabbing to a card is lost. Space and Enter stay the focused card's.
    void setTypingTarget(QWidget *target);

Q_SIGNALS:
    // The staff member answered a write tool's confirmation panel; pass it to
    // AgentLoop::confirm (TranscriptFeed does). Sent at most once per call.
    void confirmationAnswered(const QString &requestId, const QString &operationId, bool approved);
    // A question offered to ask (an example of the empty screen, a turn's "Try again"): the
    // window asks it as a new turn when it can.
    void questionOffered(const QString &question);
    // A likely duplicate's card: staff kept the earlier write instead (AgentLoop::keepExisting).
    void existingKept(const QString &requestId, const QString &operationId,
                      const QString &existingId);

protected:
    void resizeEvent(QResizeEvent *event) override;
    void scrollContentsBy(int dx, int dy) override;
    bool eventFilter(QObject *watched, QEvent *event) override;
    bool viewportEvent(QEvent *event) override;
    void keyPressEvent(QKeyEvent *event) override;
    void timerEvent(QTimerEvent *event) override;

private:
    int rowFor(const QString &requestId);
    int rowOfWidget(const QObject *widget) const;
    Internal::TurnView *liveTurn(int row) const;
    Internal::TurnView *realise(int row) const;
    void queueLayout();
    void layoutTurns();
    void placeHeld(const QList<Internal::TurnView *> &turns);
    void queueShowing();
    void showPending();
    int estimatedHeight(int row) const;
    int columnWidth() const;

    TranscriptModel *m_model = nullptr;
    QLabel *m_emptyHint = nullptr;
    QWidget *m_empty = nullptr; // the hint and the example questions, while nothing is asked
    QPointer<QWidget> m_typingTarget;
    mutable QHash<int, Internal::TurnView *> m_live; // by row
    QList<int> m_heights; // per row: measured at m_measuredWidth, or -1 (estimate)
    QList<int> m_tops; // per row, in content coordinates, from the last layout
    // Rows whose widgets changed since they were last measured: only these (and rows never
    // measured) are measured again, so a card's update costs its own turn, not the screen's.
    QSet<int> m_dirty;
    int m_measuredWidth = -1;
    bool m_followNewest = true;
    bool m_layoutQueued = false;
    bool m_inLayout = false;
    // What the model holds and the widgets do not show yet: calls whose cards show their
    // record (by request id, the calls' indexes), and finished turns, shown on a timer in
    // slices of about a millisecond (showPending()). A timer, not a queued call: the event
    // loop sends posted events at every pass and looks at its timers less often, so slices
    // that queued each other would run back to back with input and due timers waiting. The
    // first slice is on a zero timer, the next ones a millisecond later (a zero timer is
    // always due first).
    QHash<QString, QSet<int>> m_pendingCards;
    QList<QString> m_pendingFinished;
    QBasicTimer m_showTimer;
    // Turns that left the screen, hidden, destroyed a card per fire of their own timer:
    // destroying a turn's sixteen cards at once took about a millisecond, just before the
    // paint that follows the layout which dropped it.
    QList<QPointer<Internal::TurnView>> m_retired;
    QBasicTimer m_retireTimer;
};

} // namespace AgentConsole
