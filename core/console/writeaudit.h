#pragma once

// The audit trail's values as the window, agent-cli and exports see them: ui/ includes the
// application rooms only (docs/ARCHITECTURE.md, "The window's rule"), so this room names them.
#include "../async/await.h" // how its futures are taken, from ui/ too
#include "../ledger/audittrail.h"

#include <QDate>
#include <QFuture>
#include <QList>
#include <QObject>
#include <QString>

namespace AgentConsole {

class AgentLoop;
struct TurnResult;

// The audit trail of writes, for reading (docs/AUDIT.md): every write's confirmation and its
// outcome, appended by the agent loop's write guard into the ledger's store and never
// changed. This service reads it for the window's Audit view, agent-cli --audit and exports,
// within the console's tenant, newest first and a page at a time; the SQL runs on the
// ledger's database thread. Valid before the runtime is ready (reads then answer
// Unavailable). Lives on the runtime's thread.
class WriteAudit final : public QObject
{
    Q_OBJECT

public:
    // What staff filter by; every filter given must hold.
    struct Filter
    {
        // An order (or any argument's value: a SKU, a category), compared exactly, trimmed.
        QString argumentValue;
        QString staffId; // an agent: the staff member who confirmed; trimmed
        QDate day; // invalid: any day; else that day from midnight to midnight, local time
    };

    static constexpr int pageSize = AuditQuery::defaultPageSize;
    // The rows an export carries at most (its newest).
    static constexpr int maxExportRows = AuditQuery::maxPageSize;

    explicit WriteAudit(QObject *parent = nullptr);
    ~WriteAudit() override;

    // The runtime is ready and its ledger keeps a trail.
    bool isAvailable() const { return m_trail != nullptr; }
    // The tenant whose rows are read: the console's.
    QString tenantId() const { return m_tenantId; }

    // The rows `filter` selects, newest first, at most `limit` (held to the trail's bound),
    // older than row `beforeId` when it is not 0 (the next page: the last row's id).
    QFuture<AuditPage> read(const Filter &filter, qint64 beforeId = 0, int limit = pageSize) const;
    // The rows of `turns` (an export's), newest first, at most maxExportRows.
    QFuture<AuditPage> rowsOfTurns(const QList<TurnResult> &turns) const;

    // "YYYY-MM-DD" as a day, or invalid (agent-cli's --day, the view's field).
    static QDate dayFromText(const QString &text);

    // The runtime's side, once its start opened them: the ledger's trail (null when it keeps
    // none), the console's tenant, and the loop whose finished turns that wrote tell
    // appended().
    void attach(AuditTrail *trail, const QString &tenantId, AgentLoop *loop);

Q_SIGNALS:
    // A turn that wrote finished: its rows are in; what is on screen may be read again.
    void appended();

private:
    AuditTrail *m_trail = nullptr;
    QString m_tenantId;
};

} // namespace AgentConsole
