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
    enum class Answer { None, Approved, Declined };
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

Q_SIGNALS:
    void answered(const QString &operationId, bool approved);

protected:
    void paintEvent(QPaintEvent *event) override;
    void mousePressEvent(QMouseEvent *event) override;
    void mouseReleaseEvent(QMouseEvent *event) override;
    void changeEvent(QEvent *event) override;

private:
    void answer(bool approved);
    void showArguments(const ToolCallRecord &call);
    void applyColours();

    QString m_operationId;
    Answer m_answer = Answer::None;
    bool m_waiting = false;
    QLabel *m_title = nullptr;
    QGridLayout *m_rows = nullptr;
    QList<QLabel *> m_rowLabels;
    QList<QLabel *> m_rowValues;
    QLabel *m_hint = nullptr;
    QLabel *m_note = nullptr;
    QWidget *m_buttons = nullptr;
    QPushButton *m_confirm = nullptr;
    QPushButton *m_decline = nullptr;
};

} // namespace AgentConsole
