#pragma once

#include <QHash>
#include <QList>
#include <QScrollArea>

class QLabel;
class QVBoxLayout;

namespace AgentConsole {

class ToolCallCard;
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
class TranscriptView final : public QScrollArea
{
    Q_OBJECT

public:
    explicit TranscriptView(QWidget *parent = nullptr);
    ~TranscriptView() override;

    void addQuestion(const QString &requestId, const QString &question);
    // The turn was carried on from a checkpoint (AgentLoop::turnResumed): a chip above its
    // question says where it had stopped.
    void markResumed(const QString &requestId, const QString &stage, int restarts);
    void appendAnswer(const QString &requestId, const QString &text);
    void updateToolCall(const QString &requestId, const ToolCallRecord &call);
    void finishTurn(const TurnResult &result);
    void clear();

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
    QList<ToolCallCard *> toolCallCards(const QString &requestId) const;
    // The turn shown at `pos`, in viewport() coordinates (where customContextMenuRequested
    // reports a click in a scroll area); empty between turns.
    QString requestIdAt(const QPoint &pos) const;

Q_SIGNALS:
    // The staff member answered a write tool's confirmation panel; pass it to
    // AgentLoop::confirm (TranscriptFeed does). Sent at most once per call.
    void confirmationAnswered(const QString &requestId, const QString &operationId,
                              bool approved);

protected:
    void resizeEvent(QResizeEvent *event) override;

private:
    Internal::TurnView *turnFor(const QString &requestId);
    void scrollToNewest();

    QWidget *m_column = nullptr;
    QVBoxLayout *m_turnsLayout = nullptr;
    QLabel *m_emptyHint = nullptr;
    QHash<QString, Internal::TurnView *> m_turns;
    QStringList m_order;
    bool m_followNewest = true;
};

} // namespace AgentConsole
