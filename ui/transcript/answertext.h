#pragma once

#include <QTextBrowser>

namespace AgentConsole {

// One answer of the agent, as the staff member reads it: Markdown rendered by Qt's own
// QTextDocument::setMarkdown (bold, lists, tables, code) once the answer is complete, and
// plain text appended at the end of the document while it streams (QTextDocument lays out
// only the blocks that changed, so a growing answer is never laid out whole again).
// Safe by construction: neither the widget's nor its document's loadResource() loads anything
// (no remote image is fetched, no local file is read), and a link opens only when clicked and only
// when it is http or https. As tall as its text at the width it is given (heightForWidth), never
// scrolling itself.
class AnswerText final : public QTextBrowser
{
    Q_OBJECT

public:
    explicit AnswerText(QWidget *parent = nullptr);

    void appendPlain(const QString &text);
    void setAnswerMarkdown(const QString &markdown);
    // What the staff member sees, without the Markdown marks.
    QString plainText() const;

    bool hasHeightForWidth() const override { return true; }
    int heightForWidth(int width) const override;
    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;
    QVariant loadResource(int type, const QUrl &name) override;

Q_SIGNALS:
    // A clicked http(s) link, just before it is handed to QDesktopServices.
    void linkOpened(const QUrl &url);

protected:
    void resizeEvent(QResizeEvent *event) override;
};

} // namespace AgentConsole
