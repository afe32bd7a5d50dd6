#include "duplicateticketalert.h"

#include "ui/common/noticebanner.h"

#include <QVBoxLayout>

namespace AgentConsole {

DuplicateTicketAlert::DuplicateTicketAlert(QWidget *parent)
    : QWidget(parent)
{
    m_banner = new NoticeBanner(this);
    m_banner->setObjectName(QStringLiteral("duplicateTicketBanner"));
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_banner);
    setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Maximum);
    setVisible(false);
}

void DuplicateTicketAlert::setDuplicateCount(int count)
{
    m_count = count;
    if (count <= 0) {
        m_banner->clearNotice();
        setToolTip(QString());
        setVisible(false);
        return;
    }
    m_banner->showNotice(
        tr("%n operation(s) own more than one ticket \u2014 check the backend", nullptr, count),
        tr("A write was stored as several tickets. Tell whoever runs the ticket backend; "
           "this alert stays until the duplicates are gone."),
        Tone::Danger);
    setToolTip(
        tr("Every write the agent plans gets one operationId, its idempotency key, which is "
           "sent to the backend so that a replayed write returns the ticket it already made. "
           "The last check found %1 key(s) with more than one ticket: the backend did not "
           "deduplicate them. The console checks at start and after every turn that wrote.")
            .arg(count));
    setVisible(true);
}

QString DuplicateTicketAlert::text() const
{
    return m_count > 0 ? m_banner->text() : QString();
}

} // namespace AgentConsole
