#include "statuschip.h"

#include "roundedframe.h"

#include <QEvent>
#include <QHash>
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
// changes, and measuring the text of every chip in it again was a sixth of that. A new chip,
// or one whose word changed, is answered from the sizes other chips of the same font measured:
// the words are few ("Running", "Timed out", "OK"), the chips hundreds.
QSize StatusChip::sizeHint() const
{
    if (m_hint)
        return *m_hint;
    struct Measured
    {
        QFont font;
        QHash<QString, QSize> sizes;
    };
    static Measured measured; // widgets live on the GUI thread only
    const QFont font = chipFont();
    if (!(measured.font == font) || measured.font.resolveMask() != font.resolveMask()
        || measured.sizes.size() > 256) {
        measured.font = font;
        measured.sizes.clear();
    }
    auto found = measured.sizes.constFind(m_text);
    if (found == measured.sizes.cend()) {
        const QFontMetrics metrics(font);
        found = measured.sizes.insert(m_text,
                                      QSize(metrics.horizontalAdvance(m_text)
                                                + 2 * horizontalPadding,
                                            metrics.height() + 2 * verticalPadding));
    }
    m_hint = *found;
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
