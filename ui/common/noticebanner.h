#pragma once

#include "consolepalette.h"

#include <QWidget>

class QHBoxLayout;
class QLabel;
class QPushButton;
class QToolButton;

namespace AgentConsole {

// A notice across the top of the window: "Preparing the store…", why the console could not
// start, an offer with buttons at its right, and a close button (closed()). Hidden when there
// is nothing to say.
class NoticeBanner final : public QWidget
{
    Q_OBJECT

public:
    explicit NoticeBanner(QWidget *parent = nullptr);

    void showNotice(const QString &title, const QString &detail, Tone tone);
    void clearNotice();
    // A button at the right of the text, in the order added; the banner owns it.
    QPushButton *addButton(const QString &text);
    QString text() const;
    QToolButton *closeButton() const { return m_close; }

Q_SIGNALS:
    // Staff closed it.
    void closed();

public:
    Tone tone() const { return m_tone; }

protected:
    void paintEvent(QPaintEvent *event) override;
    void changeEvent(QEvent *event) override;

private:
    void applyColours();

    Tone m_tone = Tone::Info;
    QLabel *m_title = nullptr;
    QLabel *m_detail = nullptr;
    QHBoxLayout *m_buttons = nullptr;
    QToolButton *m_close = nullptr;
};

} // namespace AgentConsole
