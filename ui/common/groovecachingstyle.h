#pragma once

#include <QPixmap>
#include <QProxyStyle>

class QScrollBar;

namespace AgentConsole {

// Fusion with its scroll bar groove drawn from a pixmap kept between paints. Fusion fills the
// groove with a gradient at every paint of the bar, which for a transcript-high bar costs many
// times the slider, the arrows and the pages together (docs/PERFORMANCE.md, "ui_stall_bench");
// and a growing transcript repaints its bar at every growth, as its slider moves. The groove
// depends only on the bar's size and orientation and the palette (the slider, the arrows and their
// hover and pressed states are drawn by Fusion as before). Used only where Fusion is the
// application's style when the bar is made (cacheScrollBarGroove(); the console does not change
// styles while it runs); a transient (overlay) scroll bar is drawn whole, as it animates. The bar
// is painted in bands of 64 rows, so that Qt does not hand its blends to its global pool and wait
// for them (drawComplexControl()).
class GrooveCachingStyle final : public QProxyStyle
{
public:
    GrooveCachingStyle(); // a Fusion of its own: a proxy owns its base style

    void drawComplexControl(ComplexControl control, const QStyleOptionComplex *option,
                            QPainter *painter, const QWidget *widget = nullptr) const override;

    // Grooves drawn into the pixmap so far, by every such style (for tests: once per size
    // and palette, not per paint).
    static int groovesDrawn() { return s_groovesDrawn; }

private:
    struct GrooveKey
    {
        QSize size;
        qreal pixelRatio = 0;
        Qt::Orientation orientation = Qt::Vertical;
        qint64 palette = 0;
        bool enabled = false;
        bool operator==(const GrooveKey &other) const = default;
    };
    mutable GrooveKey m_key;
    mutable QPixmap m_groove;
    static int s_groovesDrawn;
};

// Gives `bar` a GrooveCachingStyle (parented to it) when the application's style is Fusion;
// any other style is left as it is.
void cacheScrollBarGroove(QScrollBar *bar);

} // namespace AgentConsole
