#include "statuschip.h"

#include "roundedframe.h"

#include <QEvent>
#include <QPainter>

namespace AgentConsole {

namespace {
constexpr int horizontalPadding = 9;
constexpr int verticalPadding = 2;
} // namespace

StatusChip::StatusChip(QWidget *parent)
    : QWidget(parent)
{
    setSizePolicy(QSizePolicy::Fixed, QSizePolicy::Fixed);
}

void StatusChip::setStatus(const QString &text, Tone tone)
{
    if (text == m_text && tone == m_tone)
        return;
    const bool resized = text != m_text;
    m_text = text;
    m_tone = tone;
    setAccessibleName(text);
    if (resized) {
        m_hint.reset();
        updateGeometry();
    }
    update();
}

QFont StatusChip::chipFont() const
{
    QFont chip = font();
    chip.setWeight(QFont::DemiBold);
    if (chip.pointSizeF() > 0)
        chip.setPointSizeF(chip.pointSizeF() * 0.9);
    return chip;
}

// Kept until the word or the font changes: a turn is measured whenever one of its cards
// changes, and measuring the text of every chip in it again was a sixth of that.
QSize StatusChip::sizeHint() const
{
    if (!m_hint) {
        const QFontMetrics metrics(chipFont());
        m_hint = QSize(metrics.horizontalAdvance(m_text) + 2 * horizontalPadding,
                       metrics.height() + 2 * verticalPadding);
    }
    return *m_hint;
}

QSize StatusChip::minimumSizeHint() const
{
    return sizeHint();
}

void StatusChip::paintEvent(QPaintEvent *)
{
    const Internal::ToneColors colors = Internal::toneColors(m_tone, palette());
    QPainter painter(this);
    paintRoundedFrame(painter, rect(), 0.5, (height() - 1) / 2.0, 1.0, colors.border,
                      colors.background);
    painter.setFont(chipFont());
    painter.setPen(colors.foreground);
    painter.drawText(rect(), Qt::AlignCenter, m_text);
}

void StatusChip::changeEvent(QEvent *event)
{
    if (event->type() == QEvent::FontChange || event->type() == QEvent::StyleChange) {
        m_hint.reset();
        updateGeometry();
    }
    QWidget::changeEvent(event);
}

} // namespace AgentConsole
