#include "writeaudit.h"

#include "../turn/agentloop.h"
#include "../turn/turnresult.h"

#include <algorithm>

namespace AgentConsole {

namespace {

QFuture<AuditPage> unavailable()
{
    return QtFuture::makeReadyFuture(
        AuditPage{AuditPage::Outcome::Unavailable, {}, false, QStringLiteral("no audit trail")});
}

bool wrote(const TurnResult &turn)
{
    return std::any_of(turn.toolCalls.cbegin(), turn.toolCalls.cend(),
                       [](const ToolCallRecord &call) {
                           return call.confirmed || call.labels.write;
                       });
}

} // namespace

WriteAudit::WriteAudit(QObject *parent)
    : QObject(parent)
{
}

WriteAudit::~WriteAudit() = default;

QFuture<AuditPage> WriteAudit::read(const Filter &filter, qint64 beforeId, int limit) const
{
    if (!m_trail)
        return unavailable();
    AuditQuery query;
    query.tenantId = m_tenantId;
    query.argumentValue = filter.argumentValue.trimmed();
    query.staffId = filter.staffId.trimmed();
    if (filter.day.isValid()) {
        // The staff member's day, whatever the store's clock zone.
        query.from = filter.day.startOfDay().toUTC();
        query.to = filter.day.addDays(1).startOfDay().toUTC();
    }
    query.beforeId = beforeId;
    query.limit = limit;
    return m_trail->read(query);
}

QFuture<AuditPage> WriteAudit::rowsOfTurns(const QList<TurnResult> &turns) const
{
    if (!m_trail)
        return unavailable();
    AuditQuery query;
    query.tenantId = m_tenantId;
    query.limit = maxExportRows;
    // Every turn: one reopened from the history keeps which calls were confirmed, not which
    // tools write.
    for (const TurnResult &turn : turns.mid(0, AuditQuery::maxTurns))
        query.turns.append({turn.conversationId, turn.requestId});
    if (query.turns.isEmpty())
        return QtFuture::makeReadyFuture(AuditPage{AuditPage::Outcome::Found, {}, false, {}});
    return m_trail->read(query);
}

QDate WriteAudit::dayFromText(const QString &text)
{
    return QDate::fromString(text.trimmed(), Qt::ISODate);
}

void WriteAudit::attach(AuditTrail *trail, const QString &tenantId, AgentLoop *loop)
{
    m_trail = trail;
    m_tenantId = tenantId;
    if (loop && trail) {
        connect(loop, &AgentLoop::turnFinished, this, [this](const TurnResult &turn) {
            if (wrote(turn))
                Q_EMIT appended();
        });
    }
}

} // namespace AgentConsole
