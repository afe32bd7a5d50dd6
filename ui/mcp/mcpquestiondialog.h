#pragma once

#include "core/console/mcpquestion.h"

#include <QBasicTimer>
#include <QDialog>
#include <QJsonObject>
#include <QList>

class QLabel;

namespace AgentConsole {

// An MCP server's question to staff (elicitation, form mode) as a form: the server that asks,
// its message (plain text: it comes from a server that may not be trusted), one field for
// each property of its schema with the server's default filled in, and Accept, Decline and
// Cancel. Never modal and never exec()'d: the conversation goes on beside it, and the window
// closes it when the question is withdrawn (its tool call ran out of time); until then it
// shows the time left to answer. The answer is only passed on (answered()); the window gives
// it to the runtime and shows a refusal back.
class McpQuestionDialog final : public QDialog
{
    Q_OBJECT

public:
    McpQuestionDialog(const QString &id, const McpQuestion &question, QWidget *parent = nullptr);

    const QString &questionId() const { return m_id; }
    // What the form holds now, typed as the schema says: a field left empty (or on "no
    // choice") is left out, so that its default applies. False, with the field shown to
    // staff, when a field does not read as its type or the answer does not fit.
    bool content(QJsonObject *content);
    // A refusal of the answer (the runtime's check), worded for staff beside the form.
    void showProblem(const McpAnswerProblem &problem);
    // Closes the dialog without an answer: the question was answered or withdrawn.
    void withdraw();
    // The form's editors, in the question's order (for tests).
    QList<QWidget *> editors() const { return m_editors; }
    // Escape and the window's close button: Cancel, as the button does.
    void reject() override;

Q_SIGNALS:
    void answered(const QString &id, AgentConsole::McpAnswer action, const QJsonObject &content);

protected:
    void timerEvent(QTimerEvent *event) override;

private:
    void answer(McpAnswer action);
    QString fieldLabel(const QString &name) const;
    void showTimeLeft();

    QString m_id;
    McpQuestion m_question;
    QList<QWidget *> m_editors;
    QLabel *m_problem = nullptr;
    QLabel *m_timeLeft = nullptr; // the time left to answer, once a second (answerBy)
    QBasicTimer m_clock;
    bool m_done = false;
};

} // namespace AgentConsole
