#include "toolcallcardaccessible.h"

#include "toolcallcard.h"

#include <QAccessibleWidget>

namespace AgentConsole::Internal {

namespace {

class ToolCallCardAccessible final : public QAccessibleWidget
{
public:
    explicit ToolCallCardAccessible(ToolCallCard *card)
        : QAccessibleWidget(card, QAccessible::Button)
    {
    }

    QAccessible::State state() const override
    {
        QAccessible::State state = QAccessibleWidget::state();
        state.expandable = true;
        state.expanded = card()->isExpanded();
        state.collapsed = !card()->isExpanded();
        return state;
    }

    QStringList actionNames() const override
    {
        return QStringList{pressAction(), toggleAction()} + QAccessibleWidget::actionNames();
    }

    void doAction(const QString &actionName) override
    {
        if (actionName == pressAction() || actionName == toggleAction())
            card()->setExpanded(!card()->isExpanded());
        else
            QAccessibleWidget::doAction(actionName);
    }

private:
    ToolCallCard *card() const { return static_cast<ToolCallCard *>(widget()); }
};

QAccessibleInterface *cardFactory(const QString &, QObject *object)
{
    if (auto *card = qobject_cast<ToolCallCard *>(object))
        return new ToolCallCardAccessible(card);
    return nullptr;
}

} // namespace

void installToolCallCardAccessibility()
{
    static const bool installed = [] {
        QAccessible::installFactory(cardFactory);
        return true;
    }();
    Q_UNUSED(installed)
}

void notifyToolCallCardExpanded(QWidget *card)
{
    QAccessible::State changed;
    changed.expanded = true;
    changed.collapsed = true;
    QAccessibleStateChangeEvent event(card, changed);
    QAccessible::updateAccessibility(&event);
}

} // namespace AgentConsole::Internal
