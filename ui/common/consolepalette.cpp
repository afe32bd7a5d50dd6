#include "consolepalette.h"

#include <QPalette>

namespace AgentConsole::Internal {

bool isDarkPalette(const QPalette &palette)
{
    return palette.color(QPalette::Window).lightnessF() < 0.5;
}

QColor mixColors(const QColor &from, const QColor &to, qreal amount)
{
    const qreal keep = 1.0 - amount;
    return QColor::fromRgbF(float(from.redF() * keep + to.redF() * amount),
                            float(from.greenF() * keep + to.greenF() * amount),
                            float(from.blueF() * keep + to.blueF() * amount));
}

ToneColors toneColors(Tone tone, const QPalette &palette)
{
    // Fixed pairs rather than palette roles: a palette has no "warning" or "success" colour,
    // and hand-picked pairs keep their contrast (all >= 7:1) in both themes.
    if (isDarkPalette(palette)) {
        switch (tone) {
        case Tone::Neutral:
            return {QColor(0x3a, 0x3a, 0x42), QColor(0xe4, 0xe4, 0xea), QColor(0x55, 0x55, 0x60)};
        case Tone::Info:
            return {QColor(0x17, 0x3a, 0x5e), QColor(0xd2, 0xe6, 0xff), QColor(0x2a, 0x56, 0x84)};
        case Tone::Success:
            return {QColor(0x16, 0x43, 0x2a), QColor(0xc4, 0xf1, 0xd3), QColor(0x23, 0x63, 0x3f)};
        case Tone::Warning:
            return {QColor(0x4a, 0x34, 0x10), QColor(0xff, 0xe2, 0xa8), QColor(0x6b, 0x4c, 0x17)};
        case Tone::Danger:
            return {QColor(0x4e, 0x1c, 0x1c), QColor(0xff, 0xd4, 0xd4), QColor(0x73, 0x2a, 0x2a)};
        }
    }
    switch (tone) {
    case Tone::Neutral:
        return {QColor(0xec, 0xec, 0xef), QColor(0x3a, 0x3a, 0x44), QColor(0xd0, 0xd0, 0xd8)};
    case Tone::Info:
        return {QColor(0xe1, 0xed, 0xfb), QColor(0x0b, 0x4a, 0x8b), QColor(0xb9, 0xd3, 0xf2)};
    case Tone::Success:
        return {QColor(0xdf, 0xf3, 0xe5), QColor(0x14, 0x5c, 0x2e), QColor(0xb4, 0xe0, 0xc2)};
    case Tone::Warning:
        return {QColor(0xff, 0xf1, 0xd6), QColor(0x72, 0x45, 0x00), QColor(0xf1, 0xd3, 0x9a)};
    case Tone::Danger:
        return {QColor(0xfc, 0xe4, 0xe4), QColor(0x9b, 0x1c, 0x1c), QColor(0xf1, 0xb8, 0xb8)};
    }
    return {palette.color(QPalette::Base), palette.color(QPalette::Text),
            palette.color(QPalette::Mid)};
}

QColor mutedTextColor(const QPalette &palette)
{
    return mixColors(palette.color(QPalette::Text), palette.color(QPalette::Window), 0.35);
}

QPalette withMutedText(const QPalette &base)
{
    QPalette muted = base;
    muted.setColor(QPalette::WindowText, mutedTextColor(base));
    return muted;
}

QColor panelBorderColor(const QPalette &palette)
{
    return mixColors(palette.color(QPalette::Window), palette.color(QPalette::Text), 0.16);
}

QColor questionBubbleColor(const QPalette &palette)
{
    return mixColors(palette.color(QPalette::Base), palette.color(QPalette::Highlight),
                     isDarkPalette(palette) ? 0.35 : 0.16);
}

} // namespace AgentConsole::Internal
