#pragma once

#include "isolations.h"

#include <QCoreApplication>

namespace AgentConsole {

// The isolations in staff words, shared by the cards, the diagnostics dock and agent-cli, so
// that the window decides nothing (docs/TEAM.md). Translation context AgentConsole::Isolations;
// agent-cli installs no translator and keeps the English source.
struct IsolationWords
{
    Q_DECLARE_TR_FUNCTIONS(AgentConsole::Isolations)

public:
    // "Isolated by the shift lead (staff L-07) at 14:05: logistics vendor outage", local time
    // (with the day when it is not today); "…, until 18:00" when it has an end time.
    static QString refusal(const BreakerIsolation &isolation);
    // The card's chip and the attempt summary's words.
    static QString chip();
    static QString notAttempted();
    // One line of the dock's list and agent-cli --isolations: "logistics: isolated by …".
    static QString line(const BreakerIsolation &isolation);
    // A time as the words above give it: "14:05", or "2026-12-06 14:05" on another day.
    static QString time(const QDateTime &utc);
    // Why a non-lead cannot lift (the Lift button's tooltip).
    static QString whyNotLead();
    // How a request ended (Done: an isolation's; lifted() for a lift's).
    static QString outcome(Isolations::Outcome outcome, const QString &dependency,
                           const QStringList &knownNames = {});
    static QString lifted(const QString &dependency);
};

} // namespace AgentConsole
