#pragma once

#include <QPlainTextEdit>

namespace AgentConsole {

// Where the staff member types a question. Enter submits; Shift+Enter starts a new line. It
// grows with its text up to a few lines, then scrolls.
class QuestionInput final : public QPlainTextEdit
{
    Q_OBJECT

public:
    explicit QuestionInput(QWidget *parent = nullptr);

    // The question as it would be sent: the text without leading or trailing blank space.
    QString question() const;

Q_SIGNALS:
    // Enter was pressed on a non-blank question. The input keeps its text; whoever sends the
    // question clears it once the question was accepted.
    void submitted(const QString &question);

protected:
    void keyPressEvent(QKeyEvent *event) override;

private:
    void fitHeightToText();
};

} // namespace AgentConsole
