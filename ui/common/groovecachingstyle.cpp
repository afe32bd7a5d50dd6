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
                                            const QStyleOptionComplex *option,
                                            QPainter *painter, const QWidget *widget) const
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
    painter->drawPixmap(bar->rect.topLeft(), m_groove);
    QStyleOptionSlider rest(*bar);
    rest.subControls &= ~SC_ScrollBarGroove;
    QProxyStyle::drawComplexControl(control, &rest, painter, widget);
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
