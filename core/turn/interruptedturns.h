#pragma once

#include "turncheckpoint.h"

#include <QList>
#include <QString>

namespace AgentConsole {

struct JournalEntry;

// An interrupted turn found at start that is not offered for resumption, and why. Its row
// stays in the journal; nothing of its content is shown.
struct SetAsideTurn
{
    enum class Reason {
        OtherSession, // saved by another staff member or tenant than the running session
        Damaged, // its checkpoint cannot be read back
        HeldElsewhere, // a team's journal: another running desk carries it on (heldBy)
    };
    Reason reason = Reason::Damaged;
    QString conversationId;
    QString requestId;
    QString heldBy = {}; // HeldElsewhere: that desk's machine name

    QString describe() const; // one line for staff, naming the request
};

// The turns the journal holds as resumable when the console starts, sorted for the running
// session: its own readable turns are offered, oldest first, until each one finishes or is
// dismissed; the others are set aside with their reason and never offered.
class InterruptedTurns final
{
public:
    // Sorts the journal's resumable rows (JournalEntry order is kept) for this session.
    void sortOut(const QList<JournalEntry> &entries, const QString &userId,
                 const QString &tenantId);

    const QList<TurnCheckpoint> &offered() const { return m_offered; }
    const QList<SetAsideTurn> &setAside() const { return m_setAside; }
    // Takes the request's turn out of the offer (it finished, or it is dismissed) and returns
    // it; empty when it was not offered.
    QList<TurnCheckpoint> take(const QString &conversationId, const QString &requestId);

private:
    QList<TurnCheckpoint> m_offered;
    QList<SetAsideTurn> m_setAside;
};

} // namespace AgentConsole
