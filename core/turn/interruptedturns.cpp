#include "interruptedturns.h"

#include "../ledger/turnjournal.h"
#include "../telemetry/logging.h"
#include "agentloop.h"

#include <QCoreApplication>

namespace AgentConsole {

namespace {

// In the window's language (docs/TRANSLATIONS.md); agent-cli keeps the English source.
struct SetAsideWords
{
    Q_DECLARE_TR_FUNCTIONS(AgentConsole::SetAsideTurn)
};

} // namespace

void InterruptedTurns::sortOut(const QList<JournalEntry> &entries, const QString &userId,
                               const QString &tenantId)
{
    for (const JournalEntry &entry : entries) {
        if (!entry.heldBy.isEmpty()) {
            qCInfo(lcAgent).noquote()
                << "turn" << entry.requestId << "is carried on at another desk:" << entry.heldBy;
            m_setAside.append({SetAsideTurn::Reason::HeldElsewhere, entry.conversationId,
                               entry.requestId, entry.heldBy});
            continue;
        }
        QString error;
        std::optional<TurnCheckpoint> checkpoint = TurnCheckpoint::fromEntry(entry, &error);
        if (!checkpoint) {
            qCWarning(lcAgent).noquote() << error;
            m_setAside.append(
                {SetAsideTurn::Reason::Damaged, entry.conversationId, entry.requestId});
            continue;
        }
        // Only the running session's turns: a row of another staff member or tenant (or
        // one edited to look like it) is never resumed, and its content never shown.
        if (checkpoint->userId != userId || checkpoint->tenantId != tenantId) {
            qCWarning(lcAgent).noquote() << "turn" << entry.requestId
                                         << "belongs to another staff member or tenant;"
                                            " not offered for resumption";
            m_setAside.append(
                {SetAsideTurn::Reason::OtherSession, entry.conversationId, entry.requestId});
            continue;
        }
        m_offered.append(std::move(*checkpoint));
    }
    if (!m_offered.isEmpty())
        qCInfo(lcAgent).noquote() << m_offered.size() << "interrupted turn(s) found";
}

QList<TurnCheckpoint> InterruptedTurns::take(const QString &conversationId,
                                             const QString &requestId)
{
    QList<TurnCheckpoint> taken;
    m_offered.removeIf([&](const TurnCheckpoint &turn) {
        if (turn.conversationId != conversationId || turn.result.requestId != requestId)
            return false;
        taken.append(turn);
        return true;
    });
    return taken;
}

QString SetAsideTurn::describe() const
{
    // The id comes from the file: shown only when it is one the console could have made.
    const QString request = AgentLoop::isValidRequestId(requestId)
        ? requestId
        : SetAsideWords::tr("(with an unreadable id)");
    switch (reason) {
    case Reason::OtherSession:
        return SetAsideWords::tr("interrupted request %1 was saved by another staff member or "
                                 "tenant: it is not resumed here and stays in the journal")
            .arg(request);
    case Reason::HeldElsewhere:
        return SetAsideWords::tr("interrupted request %1 is being carried on at desk %2: only "
                                 "one desk resumes a request")
            .arg(request, heldBy);
    case Reason::Damaged:
        break;
    }
    return SetAsideWords::tr("the checkpoint of interrupted request %1 is damaged and cannot "
                             "be resumed; it stays in turns.sqlite (details in the local log)")
        .arg(request);
}

} // namespace AgentConsole
