#pragma once

#include <QCoreApplication>
#include <QList>
#include <QMap>
#include <QPointer>
#include <QTimer>
#include <QWidget>

#include <functional>

class QLabel;
class QPushButton;
class QToolButton;
class QVBoxLayout;

namespace AgentConsole {

class AnswerText;
class StatusChip;
class ToolCallCard;
class TranscriptModel;
class TranscriptView;
struct ToolCallRecord;
struct TranscriptTurn;

namespace Internal {

// One turn of the transcript, made from the model when it scrolls into view and dropped when
// it leaves (TranscriptView): the question bubble, the agent's answer as it streams in, a card
// per tool call under it, and the footer once the turn is over.
class TurnView final : public QWidget
{
    Q_DECLARE_TR_FUNCTIONS(AgentConsole::TranscriptView)

public:
    // How the transcript places a turn whose layouts were held (TranscriptView::placeHeld).
    using Placer = std::function<void(TurnView *)>;

    TurnView(TranscriptView *transcript, TranscriptModel *model, const QString &requestId,
             Placer place, QWidget *parent);
    // Shows everything the model has of the turn, as when it first scrolls into view.
    void restore(const TranscriptTurn &turn);
    void setQuestion(const QString &question);
    void markResumed(const QString &stage, int restarts);
    void appendAnswer(const QString &text);
    void updateToolCall(const ToolCallRecord &call, const TranscriptTurn &turn);
    QList<ToolCallCard *> cards() const;
    // A turn that left the screen is taken apart a card at a time (TranscriptView::timerEvent):
    // destroys one of its cards, false when none is left.
    bool destroyOneCard();
    // Between holdLayouts() and releaseLayouts() the turn's layout and those of the cards it
    // changes do not run. Qt lays a parent out at once when a child is shown, at the height
    // it has then: a card made or grown in a batch would squeeze every card below it into
    // the turn's old height, and the turn measured a moment later would stretch them back,
    // each card resized and painted whole twice, a dozen times a turn. Held, they are laid
    // out once, top down, when the transcript places the turn (TranscriptView::placeHeld).
    void holdLayouts();
    // After holdLayouts() and a change: the transcript measures the turn and places it among
    // its neighbours, then its held layouts run, top down.
    void placeHeld();
    // Whether anything was held. The held cards' cached sizes are forgotten, so that the
    // turn's next measure sees them as they are now.
    bool releaseLayouts();
    // Once the turn has its height: the layouts still to run, the turn's before its cards',
    // so that each card is laid out at the size the turn gives it. Layout requests posted
    // while they were held are answered by this and dropped.
    void runReleasedLayouts();
    void finish(const TranscriptTurn &turn);
    // While the turn runs, in words: how long it has taken and what it is doing now.
    void showProgress(const TranscriptTurn *turn = nullptr);
    QString progressText() const;
    // The height the turn wants at `width`, measured afresh. What depends on the width and
    // not on the layout (the question bubble's cap) is set first: the resize that would set
    // it comes later, and only to a turn on screen.
    int heightAt(int width);

protected:
    void resizeEvent(QResizeEvent *event) override;
    void changeEvent(QEvent *event) override;

private:
    void fitTo(int width);
    void holdCard(ToolCallCard *card);
    const TranscriptTurn *modelTurn() const;
    void showPendingAnswer();
    void copyAnswer(bool asMarkdown) const;
    void showMenu(const QPoint &globalPos);
    void applyColours();

    TranscriptView *m_transcript = nullptr;
    TranscriptModel *m_model = nullptr;
    QString m_requestId;
    Placer m_place;
    QLabel *m_bubble = nullptr; // a QuestionBubble
    StatusChip *m_resumedChip = nullptr;
    QLabel *m_speaker = nullptr;
    QToolButton *m_copy = nullptr;
    QLabel *m_thinking = nullptr;
    AnswerText *m_answer = nullptr;
    QTimer m_answerFrame; // while it runs, further pieces of the answer wait for its end
    QTimer m_progressClock; // the elapsed time of a running turn, once a second
    QString m_pendingAnswer;
    QVBoxLayout *m_cardsLayout = nullptr;
    QMap<int, ToolCallCard *> m_cards;
    bool m_holding = false;
    QList<QPointer<ToolCallCard>> m_heldCards; // while holding: whose layouts wait
    QWidget *m_footer = nullptr;
    StatusChip *m_turnChip = nullptr;
    StatusChip *m_notRunChip = nullptr;
    StatusChip *m_cutOffChip = nullptr;
    StatusChip *m_notReadyChip = nullptr;
    QToolButton *m_reasoningToggle = nullptr;
    QLabel *m_reasoning = nullptr;
    QLabel *m_footerText = nullptr;
    QPushButton *m_tryAgain = nullptr;
    QString m_retryQuestion;
};

// The height a turn (or a card) wants at `width`, measured afresh without laying it out.
int measuredHeight(QWidget *widget, int width);
// Lays out a widget that has its size, now, and drops the layout requests waiting for it:
// they are answered (and measuring it, which forgets its layout's caches, posts one more).
void runLayout(QWidget *widget);

} // namespace Internal
} // namespace AgentConsole
