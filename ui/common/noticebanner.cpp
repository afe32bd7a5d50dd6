#include "noticebanner.h"

#include <QEvent>
#include <QHBoxLayout>
#include <QToolButton>
#include <QLabel>
#include <QPainter>
#include <QPushButton>
#include <QVBoxLayout>

namespace AgentConsole {

NoticeBanner::NoticeBanner(QWidget *parent)
    : QWidget(parent)
{
    m_title = new QLabel(this);
    m_title->setTextFormat(Qt::PlainText);
    m_title->setWordWrap(true);
    QFont titleFont = m_title->font();
    titleFont.setWeight(QFont::DemiBold);
    m_title->setFont(titleFont);

    m_detail = new QLabel(this);
    m_detail->setTextFormat(Qt::PlainText);
    m_detail->setWordWrap(true);
    m_detail->setTextInteractionFlags(Qt::TextSelectableByMouse);

    auto *text = new QVBoxLayout;
    text->setContentsMargins(0, 0, 0, 0);
    text->setSpacing(2);
    text->addWidget(m_title);
    text->addWidget(m_detail);
    m_buttons = new QHBoxLayout;
    m_buttons->setContentsMargins(0, 0, 0, 0);
    m_buttons->setSpacing(8);

    // Every notice can be put away; what made it is told again if it still holds.
    m_close = new QToolButton(this);
    m_close->setObjectName(QStringLiteral("closeNoticeButton"));
    m_close->setText(QStringLiteral("\u2715")); // ✕
    m_close->setAutoRaise(true);
    m_close->setToolTip(tr("Close this notice"));
    m_close->setAccessibleName(tr("Close this notice"));
    connect(m_close, &QToolButton::clicked, this, [this] {
        clearNotice();
        Q_EMIT closed();
    });

    auto *layout = new QHBoxLayout(this);
    layout->setContentsMargins(14, 10, 8, 10);
    layout->setSpacing(8);
    layout->addLayout(text, 1);
    layout->addLayout(m_buttons);
    layout->addWidget(m_close, 0, Qt::AlignTop);

    setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Maximum);
    setVisible(false);
}

void NoticeBanner::showNotice(const QString &title, const QString &detail, Tone tone)
{
    m_tone = tone;
    m_title->setText(title);
    m_detail->setText(detail);
    m_detail->setVisible(!detail.isEmpty());
    setAccessibleName(text());
    applyColours();
    setVisible(true);
    update();
}

QPushButton *NoticeBanner::addButton(const QString &text)
{
    auto *button = new QPushButton(text, this);
    button->setAutoDefault(false);
    m_buttons->addWidget(button, 0, Qt::AlignVCenter);
    return button;
}

void NoticeBanner::clearNotice()
{
    m_title->clear();
    m_detail->clear();
    setVisible(false);
}

QString NoticeBanner::text() const
{
    if (m_detail->text().isEmpty())
        return m_title->text();
    return m_title->text() + QLatin1Char('\n') + m_detail->text();
}

void NoticeBanner::paintEvent(QPaintEvent *)
{
    const Internal::ToneColors colors = Internal::toneColors(m_tone, palette());
    QPainter painter(this);
    painter.setRenderHint(QPainter::Antialiasing);
    painter.setPen(QPen(colors.border, 1.0));
    painter.setBrush(colors.background);
    painter.drawRoundedRect(QRectF(rect()).adjusted(0.5, 0.5, -0.5, -0.5), 6, 6);
}

void NoticeBanner::changeEvent(QEvent *event)
{
    if (event->type() == QEvent::PaletteChange)
        applyColours();
    QWidget::changeEvent(event);
}

void NoticeBanner::applyColours()
{
    const Internal::ToneColors colors = Internal::toneColors(m_tone, palette());
    for (QLabel *label : {m_title, m_detail}) {
        QPalette text = label->palette();
        text.setColor(QPalette::WindowText, colors.foreground);
        label->setPalette(text);
    }
}

} // namespace AgentConsole
