#include "keyboardfocusring.h"

#include <QApplication>
#include <QFocusEvent>
#include <QFocusFrame>
#include <QPaintEvent>
#include <QPainter>

namespace AgentConsole {

namespace {

// QFocusFrame keeps itself beside its widget (the same parent, stacked above it, following
// its moves and resizes, its middle masked out and mouse events passing through); only the
// drawing is ours, since Fusion draws no focus frame at all.
class RingFrame final : public QFocusFrame
{
public:
    using QFocusFrame::QFocusFrame;

protected:
    void paintEvent(QPaintEvent *) override
    {
        const QWidget *ringed = widget();
        if (!ringed)
            return;
        QPainter painter(this);
        painter.setRenderHint(QPainter::Antialiasing);
        QPen pen(ringed->palette().color(QPalette::Active, QPalette::Highlight), 2.0);
        painter.setPen(pen);
        painter.setBrush(Qt::NoBrush);
        painter.drawRoundedRect(QRectF(rect()).adjusted(1, 1, -1, -1), 3, 3);
    }
};

} // namespace

KeyboardFocusRing *KeyboardFocusRing::forApplication()
{
    static const QString name = QStringLiteral("keyboardFocusRing");
    if (auto *ring = qApp->findChild<KeyboardFocusRing *>(name, Qt::FindDirectChildrenOnly))
        return ring;
    auto *ring = new KeyboardFocusRing;
    ring->setObjectName(name);
    ring->setParent(qApp);
    return ring;
}

KeyboardFocusRing::KeyboardFocusRing()
{
    qApp->installEventFilter(this);
}

QWidget *KeyboardFocusRing::ringedWidget() const
{
    return m_ring && m_ring->isVisible() ? m_ring->widget() : nullptr;
}

// Tab, Shift+Tab and shortcuts put the application in keyboard mode, and a mouse press ends
// it: the focus set by the program meanwhile (the question box after Send) is ringed only in
// keyboard mode. The events only pass here, never stopped.
bool KeyboardFocusRing::eventFilter(QObject *watched, QEvent *event)
{
    switch (event->type()) {
    case QEvent::FocusIn:
        if (auto *widget = qobject_cast<QWidget *>(watched)) {
            switch (static_cast<QFocusEvent *>(event)->reason()) {
            case Qt::TabFocusReason:
            case Qt::BacktabFocusReason:
            case Qt::ShortcutFocusReason:
                m_keyboardMode = true;
                break;
            case Qt::MouseFocusReason:
                m_keyboardMode = false;
                break;
            default:
                break;
            }
            follow(widget);
        }
        break;
    case QEvent::MouseButtonPress:
        if (m_keyboardMode) {
            m_keyboardMode = false;
            follow(nullptr);
        }
        break;
    default:
        break;
    }
    return false;
}

void KeyboardFocusRing::follow(QWidget *now)
{
    if (!m_keyboardMode || !now || now->isWindow() || now->property(kOwnFocusRing).toBool()) {
        if (m_ring)
            m_ring->setWidget(nullptr); // hides it
        return;
    }
    if (!m_ring)
        m_ring = new RingFrame(now); // setWidget() moves it beside `now`
    m_ring->setWidget(now);
    m_ring->show();
}

} // namespace AgentConsole
