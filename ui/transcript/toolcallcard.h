#pragma once

#include <QWidget>

#include <memory>

class QLabel;
class QTimer;
class QMenu;
class QHBoxLayout;
class QToolButton;

namespace AgentConsole {

class AttemptTimeline;
class ConfirmationPanel;
class StatusChip;
struct ToolCallRecord;

// One tool call of a turn, for staff: on one line the tool's title in the window's language,
// what it found ("In transit · Shanghai Pudong Hub"), the attempts and time, and a chip that
// tells how the lookup went (never the finding's colour). A call that retried or failed also
// shows its attempts painted on a time axis (AttemptTimeline); a trivial one stays one line.
// Clicking it (or Space/Enter) opens the details: the arguments, the painted and written
// attempts, the tool's name, the operation id.
// A write tool that waits for the staff member shows a ConfirmationPanel with its exact
// arguments in place of the one-line summary; the answer is only passed on
// (confirmationAnswered).
class ToolCallCard final : public QWidget
{
    Q_OBJECT

public:
    explicit ToolCallCard(QWidget *parent = nullptr);
    ~ToolCallCard() override;

    // What core reports of the call. A running call's updates are shown at most once a frame
    // (the first at once, the latest at the frame's end), so that a burst of attempts does
    // not lay out the transcript for each one; a finished or waiting call is shown at once.
    void setToolCall(const ToolCallRecord &call);

    int callIndex() const { return m_callIndex; }
    QString toolName() const; // the tool's own name (queryLogistics), for finding a card
    QString titleText() const; // its title in the window's language ("Track a shipment")
    QString findingText() const; // what it found; empty when it found nothing
    QString statusText() const;
    QString argumentsText() const;
    QString attemptSummaryText() const;
    QString timelineText() const;
    // Who chose an MCP tool's policy, when not the console: empty otherwise (policyNote()).
    QString policyNoteText() const;
    // An MCP server's question during the call (ToolCallText::questionNote); empty if none.
    QString questionNoteText() const;
    // The ticket a write tool created (its result's ticketId); empty for any other call.
    QString ticketId() const { return m_ticketId; }
    QString operationId() const { return m_operationId; }
    // What the card's Copy button puts on the clipboard: one line staff can paste,
    // "Track a shipment (A1001): In transit · Shanghai Pudong Hub".
    QString copyText() const;
    QToolButton *copyButton() const { return m_copy; }
    // Once its turn is over, a failed lookup offers to ask `question` again as a new turn
    // (retryRequested); an empty question takes the offer back. Null until offered.
    void offerRetry(const QString &question);
    QToolButton *retryButton() const { return m_retry; }
    // The card's context menu, made fresh (Copy, Copy the operation id, Copy the ticket id).
    QMenu *createContextMenu(QWidget *parent);
    // Null until the call waited for confirmation; then it stays, as the record of the answer.
    ConfirmationPanel *confirmationPanel() const { return m_confirmation; }
    // The painted timeline under the card's summary; hidden while the call has no attempt.
    AttemptTimeline *attemptTimeline() const { return m_attemptTimeline; }

    bool isExpanded() const { return m_expanded; }
    void setExpanded(bool expanded);

Q_SIGNALS:
    void expandedChanged(bool expanded);
    void confirmationAnswered(const QString &operationId, bool approved);
    void existingKept(const QString &operationId, const QString &existingId);
    void retryRequested(const QString &question);

protected:
    void paintEvent(QPaintEvent *event) override;
    void mousePressEvent(QMouseEvent *event) override;
    void mouseReleaseEvent(QMouseEvent *event) override;
    void keyPressEvent(QKeyEvent *event) override;
    void enterEvent(QEnterEvent *event) override;
    void leaveEvent(QEvent *event) override;
    void changeEvent(QEvent *event) override;
    void contextMenuEvent(QContextMenuEvent *event) override;

private:
    void applyColours();
    void showToolCall(const ToolCallRecord &call);
    void showDetails();
    enum class Note { Ticket, Question, Policy };
    bool setNote(Note which, const QString &text);

    int m_callIndex = -1;
    bool m_expanded = false;
    bool m_hovered = false;
    QLabel *m_chevron = nullptr;
    QLabel *m_name = nullptr;
    QLabel *m_finding = nullptr;
    QString m_toolName;
    QString m_copyText;
    QString m_findingText;
    bool m_trivial = false; // one attempt that answered: shown on one line until opened
    bool m_timelineHasContent = false;
    QTimer *m_copiedReset = nullptr;
    StatusChip *m_chip = nullptr;
    QLabel *m_arguments = nullptr;
    QLabel *m_summary = nullptr;
    AttemptTimeline *m_attemptTimeline = nullptr;
    QWidget *m_details = nullptr;
    QLabel *m_timeline = nullptr;
    QLabel *m_resultMessage = nullptr;
    QLabel *m_trace = nullptr;
    QLabel *m_ticket = nullptr;
    QLabel *m_questionNote = nullptr;
    QLabel *m_policyNote = nullptr;
    QHBoxLayout *m_headerRight = nullptr; // the attempts, the chip, Try again and Copy
    QToolButton *m_retry = nullptr;
    QString m_retryQuestion;
    QToolButton *m_copy = nullptr;
    QString m_ticketId; // what a write made (ToolLabels::created), e.g. a ticket's id
    QString m_createdLabel; // its label in the staff member's words, e.g. "Ticket"
    QString m_operationId;
    // The details' selectable texts, given to their labels only while the details show: a
    // selectable QLabel keeps a text document and lays it out again on every setText(), and a
    // running call's timeline text changes with every attempt of a collapsed card.
    QString m_timelineText;
    QString m_resultText; // a failed call's message, for its details
    QString m_traceText;
    ConfirmationPanel *m_confirmation = nullptr;
    QTimer *m_frame = nullptr; // while it runs, a running call's updates wait for its end
    std::unique_ptr<ToolCallRecord> m_pending; // the latest of them
    int m_shownState = -1; // ToolCallRecord::State of the call as shown
};

} // namespace AgentConsole
