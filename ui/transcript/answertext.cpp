#include "answertext.h"

#include <QAbstractTextDocumentLayout>
#include <QDesktopServices>
#include <QScrollBar>
#include <QTextCursor>
#include <QTextDocument>

#include <cmath>

namespace AgentConsole {

namespace {

// QTextDocument reads a local file an image or style sheet names whenever the widget's own
// loadResource() gave nothing (its parent is the edit's text control, not the widget), so
// overriding the widget alone is not enough: the document itself loads nothing.
class InertDocument final : public QTextDocument
{
public:
    using QTextDocument::QTextDocument;

protected:
    QVariant loadResource(int, const QUrl &) override { return {}; }
};

} // namespace

AnswerText::AnswerText(QWidget *parent)
    : QTextBrowser(parent)
{
    setDocument(new InertDocument(this));
    setObjectName(QStringLiteral("answerText"));
    setFrameShape(QFrame::NoFrame);
    setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    setTextInteractionFlags(Qt::TextSelectableByMouse | Qt::LinksAccessibleByMouse);
    // Clicking an answer to select text must not take the keyboard from the question box.
    setFocusPolicy(Qt::NoFocus);
    setOpenLinks(false);
    setOpenExternalLinks(false);
    setUndoRedoEnabled(false);
    document()->setDocumentMargin(0);
    viewport()->setAutoFillBackground(false);
    setAutoFillBackground(false);
    setContextMenuPolicy(Qt::NoContextMenu); // the turn offers its own copy menu
    connect(this, &QTextBrowser::anchorClicked, this, [this](const QUrl &url) {
        const QString scheme = url.scheme().toLower();
        if (scheme != QLatin1String("http") && scheme != QLatin1String("https"))
            return; // file:, javascript:, custom schemes: never opened from an answer
        Q_EMIT linkOpened(url);
        QDesktopServices::openUrl(url);
    });
    connect(document()->documentLayout(), &QAbstractTextDocumentLayout::documentSizeChanged, this,
            [this] { updateGeometry(); });
}

void AnswerText::appendPlain(const QString &text)
{
    QTextCursor cursor(document());
    cursor.movePosition(QTextCursor::End);
    cursor.insertText(text);
}

void AnswerText::setAnswerMarkdown(const QString &markdown)
{
    document()->setMarkdown(markdown, QTextDocument::MarkdownDialectGitHub);
    updateGeometry();
}

QString AnswerText::plainText() const
{
    return document()->toPlainText();
}

int AnswerText::heightForWidth(int width) const
{
    // The document is laid out at the viewport's width anyway; asking at the width the
    // layout offers only moves that forward.
    QTextDocument *doc = document();
    if (width > 0 && !qFuzzyCompare(doc->textWidth(), qreal(width)))
        doc->setTextWidth(width);
    return int(std::ceil(doc->size().height())) + 2 * frameWidth();
}

QSize AnswerText::sizeHint() const
{
    const int width = std::max(100, viewport()->width());
    return {width, heightForWidth(width)};
}

QSize AnswerText::minimumSizeHint() const
{
    return {50, fontMetrics().height()};
}

QVariant AnswerText::loadResource(int, const QUrl &)
{
    // Nothing an answer names is loaded: a model (or a backend it quoted) must not make the
    // console fetch a URL or read a file. An image shows as nothing. (InertDocument makes
    // sure the document does not load it either.)
    return {};
}

void AnswerText::resizeEvent(QResizeEvent *event)
{
    QTextBrowser::resizeEvent(event);
    verticalScrollBar()->setValue(0);
}

} // namespace AgentConsole
