#pragma once

#include <QWidget>

namespace AgentConsole {

class NoticeBanner;

// The alarm of DESIGN.md's duplicate_business_object_count: a red banner, shown for as long as
// core's last check found idempotency keys that own more than one ticket in the backend
// ("2 operations own more than one ticket — check the backend"). Nothing while the count is
// 0 or unknown (-1). It shows the count core reports; it never counts itself.
class DuplicateTicketAlert final : public QWidget
{
    Q_OBJECT

public:
    explicit DuplicateTicketAlert(QWidget *parent = nullptr);

    int duplicateCount() const { return m_count; }
    QString text() const;

public Q_SLOTS:
    // RuntimeMonitor::duplicateBusinessObjectsChecked: above 0 shows the alert, else hides it.
    void setDuplicateCount(int count);

private:
    NoticeBanner *m_banner = nullptr;
    int m_count = -1;
};

} // namespace AgentConsole
