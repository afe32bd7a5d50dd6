// The history sidebar wired to the window: what it lists comes from ConversationHistory
// (core/history), what it opens is shown by ConversationRestorer. docs/HISTORY.md.

#include "consolewindow.h"

#include "ui/export/conversationexporter.h"
#include "ui/history/conversationrestorer.h"
#include "ui/history/historysidebar.h"

#include "core/turn/agentloop.h"
#include "core/console/agentruntime.h"
#include "core/console/turnrecovery.h"
#include "core/history/conversationhistory.h"

#include <utility>

namespace AgentConsole {

void ConsoleWindow::attachHistory()
{
    TurnRecovery *recovery = m_runtime->recovery();
    if (m_conversationHistory || !recovery->journal())
        return; // no journal: nothing is stored to list
    const SessionContext session = m_loop->session();
    m_conversationHistory = new ConversationHistory(recovery->journal(), session.userId,
                                                    session.tenantId, this);
    m_restorer = new ConversationRestorer(
        m_conversationHistory, m_loop, m_transcript, m_exporter->finishedTurns(), m_history,
        m_newConversationAction, m_runtime->options().dataDirectory,
        [this] { return m_loop && !isTurnRunning() && !isResuming() && !isScenarioRunning(); },
        this);
    // A deleted conversation's interrupted turns are not offered any more.
    connect(m_history, &HistorySidebar::conversationRemoved, this, [this](const QString &id) {
        QStringList requests;
        m_offeredTurns.removeIf([&id, &requests](const TurnCheckpoint &turn) {
            if (turn.conversationId != id)
                return false;
            requests.append(turn.result.requestId);
            return true;
        });
        for (const QString &requestId : std::as_const(requests))
            m_runtime->recovery()->dismissInterruptedTurn(id, requestId); // releases a claim
        if (!requests.isEmpty())
            showResumeOffer();
    });
    connect(recovery, &TurnRecovery::interruptedTurnsRescanned, m_history,
            &HistorySidebar::refresh);
    m_history->attach(m_conversationHistory);
    m_restorer->restoreLast();
}

} // namespace AgentConsole
