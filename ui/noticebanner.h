#pragma once

#include "consolepalette.h"

#include <QWidget>

class QLabel;

namespace AgentConsole {

// A one-line notice across the top of the window: "Preparing the store…", or why the console
// could not start. Hidden when there is nothing to say.
class NoticeBanner final : public QWidget
{
    Q_OBJECT

public:
    explicit NoticeBanner(QWidget *parent = nullptr);

    void showNotice(const QString &title, const QString &detail, Tone tone);
    void clearNotice();
    QString text() const;
    Tone tone() const { return m_tone; }

protected:
    void paintEvent(QPaintEvent *event) override;
    void changeEvent(QEvent *event) override;

private:
    void applyColours();

    Tone m_tone = Tone::Info;
    QLabel *m_title = nullptr;
    QLabel *m_detail = nullptr;
};

} // namespace AgentConsole
