#pragma once

#include <QLabel>

#include <memory>

namespace AgentConsole {

// A QLabel that remembers its sizes. QLabel lays its text out again for every size it is
// asked (three times for its size hints, twice for a height when the text is selectable), and
// box layouts ask for every pass: their minimumHeightForWidth() of a widget is never cached.
// A transcript turn with 16 cards was spending most of the GUI thread on that while its
// attempts ticked, and a new card's labels measured the same few strings ("Running",
// "attempt 2 of 3") every other card had measured already.
// So a plain-text label's size hints and heights for a width are kept in one cache shared by
// every WrapLabel, keyed on all that they depend on (text, font, margins, alignment, wrapping,
// minimum and maximum size, pixel density); a label with selectable or rich text keeps only
// its own last heights for its text. It also keeps its plain text laid out for painting
// (paintEvent()).
class WrapLabel : public QLabel
{
public:
    explicit WrapLabel(QWidget *parent = nullptr, Qt::WindowFlags flags = {});
    explicit WrapLabel(const QString &text, QWidget *parent = nullptr, Qt::WindowFlags flags = {});
    ~WrapLabel() override;

    // Texts laid out for painting so far, by every label (for tests: once per text and size,
    // not per paint).
    static int textsLaidOut() { return s_textsLaidOut; }

    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;
    int heightForWidth(int width) const override;

protected:
    bool event(QEvent *event) override;
    // Plain text is drawn from a layout kept between paints, as QLabel would draw it (QLabel
    // lays its text out again at every paint, and a transcript's paint draws some 75
    // labels); anything else is QLabel's own paint.
    void paintEvent(QPaintEvent *event) override;

private:
    struct Measure
    {
        int width = -1;
        int height = -1;
    };
    struct LaidOutText;
    bool isShareable() const;
    const QString &fontKey() const;
    bool drawsItsOwnText() const;
    const LaidOutText &laidOut(qreal lineWidth, bool wrap, int boxHeight);
    mutable QString m_fontKey; // font().key(), until the font changes
    mutable QString m_measuredText;
    mutable bool m_measuredWrap = false;
    // Layouts ask at two widths (the row's and the column's): both are kept.
    mutable Measure m_measures[2];
    mutable int m_nextMeasure = 0;
    std::unique_ptr<LaidOutText> m_laidOut; // the text as last painted
    static int s_textsLaidOut;
};

} // namespace AgentConsole
