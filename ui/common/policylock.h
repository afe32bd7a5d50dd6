#pragma once

#include <QLabel>
#include <QString>

class QWidget;

namespace AgentConsole {

// The lock beside a setting a team's policy locks (docs/POLICY.md): a padlock drawn from the
// palette (no font or icon theme needed, so it reads the same on every desktop and offscreen),
// its tooltip and accessible name the policy's words ("Set by your team's policy (version
// 2026-12-01)"). Core says what is locked and why; this only shows it.
class PolicyLock final : public QLabel
{
    Q_OBJECT

public:
    explicit PolicyLock(const QString &reason, QWidget *parent = nullptr);

    QString reason() const { return toolTip(); }

    // Disables `field` and puts a lock with `reason` right after it, in the form row or box
    // layout that holds it (the field keeps its place and label). Returns the lock, or null
    // when `field` is in no layout the lock can join.
    static PolicyLock *lock(QWidget *field, const QString &reason);
    // The lock lock() put beside `field`; null when it has none.
    static PolicyLock *of(const QWidget *field);

protected:
    void changeEvent(QEvent *event) override;

private:
    void redraw();
};

} // namespace AgentConsole
