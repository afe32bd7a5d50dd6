#pragma once

#include <QFrame>

class QGridLayout;
class QLabel;
class QPushButton;

namespace AgentConsole {

struct ToolCallRecord;

// Inside the card of a write tool that waits for the staff member: what will be done, the
// exact arguments it will run with (full text, selectable), and Confirm / Decline. One click
// answers: both buttons are disabled at once, so an answer is never sent twice. Once core
// reports the call ran, was declined or was stopped, the buttons give way to a one-line note
// and the arguments stay as the record of what was confirmed.
// It only reports the click (answered); the agent loop decides what follows.
class ConfirmationPanel final : public QFrame
{
    Q_OBJECT

public:
    enum class Answer { None, Approved, Declined, KeptExisting };
    Q_ENUM(Answer)

    explicit ConfirmationPanel(QWidget *parent = nullptr);
    ~ConfirmationPanel() override;

    void setToolCall(const ToolCallRecord &call);

    QString operationId() const { return m_operationId; }
    Answer answer() const { return m_answer; }
    // True while the call waits and no answer was given here.
    bool isAwaitingAnswer() const;
    QString titleText() const;
    // "Order: A1001\nCategory: DAMAGED\nDescription: ..."
    QString argumentsText() const;
    QString noteText() const;
    QPushButton *confirmButton() const { return m_confirm; }
    QPushButton *declineButton() const { return m_decline; }
    // Shown when the write's check found a likely duplicate: keeps that one instead.
    QPushButton *keepExistingButton() const { return m_keep; }
    // What the write's check found: "A1001 already has a “Damaged item” ticket T-000001,
    // created 2 min ago, by you." (empty without a likely duplicate), and the rest.
    QString duplicateText() const;
    QString priorWritesText() const;

Q_SIGNALS:
    void answered(const QString &operationId, bool approved);
    void existingKept(const QString &operationId, const QString &existingId);

protected:
    void paintEvent(QPaintEvent *event) override;
    void mousePressEvent(QMouseEvent *event) override;
    void mouseReleaseEvent(QMouseEvent *event) override;
    void changeEvent(QEvent *event) override;

private:
    void answer(bool approved);
    void showArguments(const ToolCallRecord &call);
    void showPriorWrites(const ToolCallRecord &call, bool waiting);
    void applyColours();

    QString m_operationId;
    Answer m_answer = Answer::None;
    bool m_waiting = false;
    QLabel *m_title = nullptr;
    QGridLayout *m_rows = nullptr;
    QList<QLabel *> m_rowLabels;
    QList<QLabel *> m_rowValues;
    QLabel *m_hint = nullptr;
    QLabel *m_prior = nullptr; // what the write's check found
    QLabel *m_duplicate = nullptr; // the likely duplicate, in a sentence
    QString m_duplicateId;
    QLabel *m_note = nullptr;
    QWidget *m_buttons = nullptr;
    QPushButton *m_confirm = nullptr;
    QPushButton *m_decline = nullptr;
    QPushButton *m_keep = nullptr;
};

} // namespace AgentConsole
