#include "wraplabel.h"

#include <QEvent>

namespace AgentConsole {

int WrapLabel::heightForWidth(int width) const
{
    if (m_measuredText != text() || m_measuredWrap != wordWrap()) {
        m_measuredText = text();
        m_measuredWrap = wordWrap();
        m_measures[0] = m_measures[1] = {};
    }
    for (const Measure &measure : m_measures) {
        if (measure.width == width)
            return measure.height;
    }
    const int height = QLabel::heightForWidth(width);
    m_measures[m_nextMeasure] = {width, height};
    m_nextMeasure = 1 - m_nextMeasure;
    return height;
}

bool WrapLabel::event(QEvent *event)
{
    switch (event->type()) {
    case QEvent::FontChange:
    case QEvent::StyleChange:
    case QEvent::ContentsRectChange:
    case QEvent::LayoutDirectionChange:
        m_measures[0] = m_measures[1] = {};
        break;
    default:
        break;
    }
    return QLabel::event(event);
}

} // namespace AgentConsole
