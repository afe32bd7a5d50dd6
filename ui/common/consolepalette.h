#pragma once

#include <QColor>

class QPalette;

namespace AgentConsole {

// How a status reads at a glance. The text always says it too: colour is never the only cue.
enum class Tone { Neutral, Info, Success, Warning, Danger };

namespace Internal {

struct ToneColors
{
    QColor background;
    QColor foreground;
    QColor border;
};

// Colours derived from the widget's palette, so that light and dark themes both read well.
bool isDarkPalette(const QPalette &palette);
QColor mixColors(const QColor &from, const QColor &to, qreal amount);
// Background, text and border of a chip or banner; each pair has a contrast of 7:1 or more.
ToneColors toneColors(Tone tone, const QPalette &palette);
// Secondary text (arguments, timings): still above 4.5:1 against the window and base colours.
QColor mutedTextColor(const QPalette &palette);
// The palette with its window text in the muted colour (speaker lines, footers, hints).
QPalette withMutedText(const QPalette &base);
QColor panelBorderColor(const QPalette &palette);
QColor questionBubbleColor(const QPalette &palette);

} // namespace Internal
} // namespace AgentConsole
