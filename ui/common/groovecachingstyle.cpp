#include "groovecachingstyle.h"

#include <QApplication>
#include <QPainter>
#include <QScrollBar>
#include <QStyleFactory>
#include <QStyleOptionSlider>

namespace AgentConsole {

int GrooveCachingStyle::s_groovesDrawn = 0;

namespace {

bool isFusion(const QStyle *style)
{
    return style && style->name().compare(QLatin1String("fusion"), Qt::CaseInsensitive) == 0;
}

} // namespace

GrooveCachingStyle::GrooveCachingStyle()
    : QProxyStyle(QStyleFactory::create(QStringLiteral("Fusion")))
{
}

void GrooveCachingStyle::drawComplexControl(ComplexControl control,
                                            const QStyleOptionComplex *option, QPainter *painter,
                                            const QWidget *widget) const
{
    const auto *bar = qstyleoption_cast<const QStyleOptionSlider *>(option);
    if (control != CC_ScrollBar || !bar || !(bar->subControls & SC_ScrollBarGroove)
        || styleHint(SH_ScrollBar_Transient, option, widget)) {
        QProxyStyle::drawComplexControl(control, option, painter, widget);
        return;
    }
    const qreal pixelRatio = painter->device()->devicePixelRatio();
    const GrooveKey key{bar->rect.size(), pixelRatio, bar->orientation,
                        qint64(bar->palette.cacheKey()), bool(bar->state & State_Enabled)};
    if (key != m_key || m_groove.isNull()) {
        m_groove = QPixmap(bar->rect.size() * pixelRatio);
        m_groove.setDevicePixelRatio(pixelRatio);
        m_groove.fill(Qt::transparent);
        QStyleOptionSlider groove(*bar);
        groove.rect = QRect(QPoint(0, 0), bar->rect.size());
        groove.subControls = SC_ScrollBarGroove;
        QPainter into(&m_groove);
        QProxyStyle::drawComplexControl(control, &groove, &into, widget);
        m_key = key;
        ++s_groovesDrawn;
    }
    QStyleOptionSlider rest(*bar);
    rest.subControls &= ~SC_ScrollBarGroove;
    // In bands: Qt 6.4's raster engine hands a blend of 96 rows or more (the groove, a long
    // slider) to QThreadPool::globalInstance() in pieces and waits for them, and on a busy
    // machine those threads wait for a core: a transcript-high bar's paint took several times
    // its own CPU time (docs/PERFORMANCE.md, "ui_stall_bench"). A band's blends stay on the
    // GUI thread.
    constexpr int kBandRows = 64;
    const QRect whole = bar->rect;
    for (int top = whole.top(); top <= whole.bottom(); top += kBandRows) {
        painter->save();
        painter->setClipRect(QRect(whole.left(), top, whole.width(), kBandRows),
                             Qt::IntersectClip);
        painter->drawPixmap(whole.topLeft(), m_groove);
        QProxyStyle::drawComplexControl(control, &rest, painter, widget);
        painter->restore();
    }
}

void cacheScrollBarGroove(QScrollBar *bar)
{
    if (!isFusion(QApplication::style()))
        return;
    auto *style = new GrooveCachingStyle;
    style->setParent(bar);
    bar->setStyle(style);
}

} // namespace AgentConsole
