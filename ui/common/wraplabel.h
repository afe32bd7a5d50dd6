#pragma once

#include <QLabel>

namespace AgentConsole {

// A QLabel that remembers its height for a width. QLabel lays its text out again for every
// heightForWidth() it is asked, twice when the text is selectable (its text control is set to
// the width, measured, and set back), and box layouts ask for every pass: their
// minimumHeightForWidth() of a widget is never cached. A transcript turn with 16 cards was
// spending most of the GUI thread on that while its attempts ticked.
// Keyed on the text and the width; a font, style or margin change forgets it.
class WrapLabel : public QLabel
{
public:
    using QLabel::QLabel;

    int heightForWidth(int width) const override;

protected:
    bool event(QEvent *event) override;

private:
    struct Measure
    {
        int width = -1;
        int height = -1;
    };
    mutable QString m_measuredText;
    mutable bool m_measuredWrap = false;
    // Layouts ask at two widths (the row's and the column's): both are kept.
    mutable Measure m_measures[2];
    mutable int m_nextMeasure = 0;
};

} // namespace AgentConsole
