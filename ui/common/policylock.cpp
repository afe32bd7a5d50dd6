#include "policylock.h"

#include <QBoxLayout>
#include <QEvent>
#include <QFormLayout>
#include <QLayout>
#include <QPainter>
#include <QPainterPath>
#include <QPixmap>

namespace AgentConsole {
namespace {

const char kLockProperty[] = "agentconsole.policyLock";

// A padlock `height` pixels tall: a shackle over a body with a keyhole, in `color`.
QPixmap padlock(int height, const QColor &color, qreal ratio)
{
    const int width = height * 3 / 4 + 1;
    QPixmap pixmap(QSize(width, height) * ratio);
    pixmap.setDevicePixelRatio(ratio);
    pixmap.fill(Qt::transparent);
    QPainter painter(&pixmap);
    painter.setRenderHint(QPainter::Antialiasing);
    const qreal stroke = std::max<qreal>(1.5, height / 8.0);
    const QRectF body(0.5, height * 0.45, width - 1.0, height * 0.55 - 0.5);
    QPen pen(color, stroke);
    pen.setCapStyle(Qt::FlatCap);
    painter.setPen(pen);
    painter.setBrush(Qt::NoBrush);
    const qreal inset = width * 0.22;
    const QRectF shackle(inset, stroke / 2, width - 2 * inset, height * 0.7);
    QPainterPath arc;
    arc.moveTo(shackle.left(), body.top());
    arc.lineTo(shackle.left(), shackle.top() + shackle.width() / 2);
    arc.arcTo(QRectF(shackle.left(), shackle.top(), shackle.width(), shackle.width()), 180, -180);
    arc.lineTo(shackle.right(), body.top());
    painter.drawPath(arc);
    painter.setPen(Qt::NoPen);
    painter.setBrush(color);
    painter.drawRoundedRect(body, 1.5, 1.5);
    // The keyhole, cut out.
    painter.setCompositionMode(QPainter::CompositionMode_Clear);
    const qreal hole = std::max<qreal>(1.5, height / 7.0);
    painter.drawEllipse(QPointF(width / 2.0, body.center().y() - hole / 3), hole / 1.4,
                        hole / 1.4);
    return pixmap;
}

// Where `field` sits: the layout of its parent that holds it, searched through nested ones.
QLayout *holder(QLayout *layout, QWidget *field)
{
    if (!layout)
        return nullptr;
    if (layout->indexOf(field) >= 0)
        return layout;
    for (int i = 0; i < layout->count(); ++i) {
        if (QLayout *found = holder(layout->itemAt(i)->layout(), field))
            return found;
    }
    return nullptr;
}

} // namespace

PolicyLock::PolicyLock(const QString &reason, QWidget *parent)
    : QLabel(parent)
{
    setObjectName(QStringLiteral("policyLock"));
    setToolTip(reason);
    setAccessibleName(reason);
    setSizePolicy(QSizePolicy::Fixed, QSizePolicy::Fixed);
    redraw();
}

void PolicyLock::changeEvent(QEvent *event)
{
    QLabel::changeEvent(event);
    if (event->type() == QEvent::PaletteChange || event->type() == QEvent::FontChange)
        redraw();
}

void PolicyLock::redraw()
{
    const int height = std::max(12, fontMetrics().height() * 4 / 5);
    setPixmap(padlock(height, palette().color(QPalette::Active, QPalette::WindowText),
                      devicePixelRatioF()));
}

PolicyLock *PolicyLock::of(const QWidget *field)
{
    return field ? field->property(kLockProperty).value<PolicyLock *>() : nullptr;
}

PolicyLock *PolicyLock::lock(QWidget *field, const QString &reason)
{
    if (!field || !field->parentWidget())
        return nullptr;
    field->setEnabled(false);
    field->setToolTip(reason);
    if (PolicyLock *existing = of(field)) {
        existing->setToolTip(reason);
        existing->setAccessibleName(reason);
        return existing;
    }
    QWidget *parent = field->parentWidget();
    QLayout *layout = holder(parent->layout(), field);
    if (!layout)
        return nullptr;
    auto *lock = new PolicyLock(reason, parent);
    if (auto *form = qobject_cast<QFormLayout *>(layout)) {
        int row = -1;
        QFormLayout::ItemRole role = QFormLayout::FieldRole;
        form->getWidgetPosition(field, &row, &role);
        // The field and its lock in one row of their own, where the field was.
        auto *pair = new QHBoxLayout;
        pair->setContentsMargins(0, 0, 0, 0);
        form->removeWidget(field);
        pair->addWidget(field, 1);
        pair->addWidget(lock);
        form->setLayout(row, role, pair);
    } else if (auto *box = qobject_cast<QBoxLayout *>(layout)) {
        const int index = box->indexOf(field);
        auto *pair = new QHBoxLayout;
        pair->setContentsMargins(0, 0, 0, 0);
        box->removeWidget(field);
        pair->addWidget(field);
        pair->addWidget(lock);
        pair->addStretch(1);
        box->insertLayout(index, pair);
    } else {
        delete lock;
        return nullptr;
    }
    field->setProperty(kLockProperty, QVariant::fromValue(lock));
    return lock;
}

} // namespace AgentConsole
