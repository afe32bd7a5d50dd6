#include "questioninput.h"

#include <QAbstractTextDocumentLayout>
#include <QKeyEvent>
#include <QTextDocument>

#include <algorithm>

namespace AgentConsole {

namespace {
constexpr int minimumLines = 2;
constexpr int maximumLines = 8;
} // namespace

QuestionInput::QuestionInput(QWidget *parent)
    : QPlainTextEdit(parent)
{
    setTabChangesFocus(true);
    setPlaceholderText(tr("Ask about an order, its shipment or stock — Enter sends, "
                          "Shift+Enter starts a new line"));
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
    connect(document()->documentLayout(), &QAbstractTextDocumentLayout::documentSizeChanged, this,
            &QuestionInput::fitHeightToText);
    fitHeightToText();
}

QString QuestionInput::question() const
{
    return toPlainText().trimmed();
}

void QuestionInput::keyPressEvent(QKeyEvent *event)
{
    const bool enter = event->key() == Qt::Key_Return || event->key() == Qt::Key_Enter;
    const Qt::KeyboardModifiers modifiers = event->modifiers()
        & ~(Qt::KeypadModifier | Qt::GroupSwitchModifier);
    if (enter && modifiers == Qt::ShiftModifier) {
        // A paragraph break rather than the U+2028 line separator QPlainTextEdit would insert,
        // so that the question's text holds a plain '\n'.
        textCursor().insertText(QStringLiteral("\n"));
        ensureCursorVisible();
        event->accept();
        return;
    }
    if (enter && modifiers == Qt::NoModifier) {
        event->accept();
        const QString text = question();
        if (!text.isEmpty())
            Q_EMIT submitted(text);
        return;
    }
    QPlainTextEdit::keyPressEvent(event);
}

void QuestionInput::fitHeightToText()
{
    // QPlainTextDocumentLayout measures the document in lines, wrapped lines included.
    const int lines = std::clamp(int(document()->documentLayout()->documentSize().height()),
                                 minimumLines, maximumLines);
    const QMargins margins = contentsMargins();
    const int height = lines * fontMetrics().lineSpacing() + int(2 * document()->documentMargin())
        + margins.top() + margins.bottom() + 2;
    if (height != this->height())
        setFixedHeight(height);
}

} // namespace AgentConsole
