#pragma once

#include "core/console/writeaudit.h"

#include <QDockWidget>
#include <QPointer>

class QCheckBox;
class QDateEdit;
class QLabel;
class QLineEdit;
class QPushButton;
class QTableView;
class QTimer;

namespace AgentConsole {

class AgentLoop;
class AuditRowsModel;

// View › Audit trail (docs/AUDIT.md): every write's confirmation and outcome as the audit
// trail keeps them, newest first, read-only. Filters by order (any argument's value), by
// agent (the staff member who confirmed) and by day; a page at a time, "Show older" for the
// next. It takes the one service it shows (WriteAudit) and reads again when a turn that
// wrote finishes; nothing here can change a row.
class AuditTrailDock final : public QDockWidget
{
    Q_OBJECT

public:
    explicit AuditTrailDock(WriteAudit *audit, QWidget *parent = nullptr);
    ~AuditTrailDock() override;

    // The runtime is ready: the tools' words for the rows, and the first page.
    void onRuntimeReady(AgentLoop *loop);
    // Reads the first page again with the filters as they are.
    void refresh();

    QLineEdit *orderFilter() const { return m_order; }
    QLineEdit *agentFilter() const { return m_agent; }
    QCheckBox *dayFilterBox() const { return m_dayOn; }
    QDateEdit *dayFilter() const { return m_day; }
    QTableView *table() const { return m_table; }
    QPushButton *moreButton() const { return m_more; }
    QLabel *statusLabel() const { return m_status; }
    AuditRowsModel *rowsModel() const { return m_model; }
    // The rows as shown, one line each, cells joined by " | ", for tests.
    QStringList rowTexts() const;

Q_SIGNALS:
    // A page was read and shown (tests wait for it).
    void pageShown();

protected:
    void showEvent(QShowEvent *event) override;

private:
    WriteAudit::Filter filter() const;
    void read(bool older);
    void showPage(const AuditPage &page, bool older);

    QPointer<WriteAudit> m_audit;
    QPointer<AgentLoop> m_loop;
    AuditRowsModel *m_model = nullptr;
    QLineEdit *m_order = nullptr;
    QLineEdit *m_agent = nullptr;
    QCheckBox *m_dayOn = nullptr;
    QDateEdit *m_day = nullptr;
    QPushButton *m_refresh = nullptr;
    QTableView *m_table = nullptr;
    QLabel *m_status = nullptr;
    QPushButton *m_more = nullptr;
    QTimer *m_typingDelay = nullptr;
    quint64 m_generation = 0; // a page for older filters is dropped
    bool m_stale = true; // rows were appended while hidden: read again when shown
};

} // namespace AgentConsole
