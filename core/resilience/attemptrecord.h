#pragma once

#include "failurekind.h"

#include <QList>
#include <QMetaType>
#include <QString>

namespace AgentConsole {

// One attempt as the timeline shows it. Times are milliseconds since the call started.
struct AttemptRecord
{
    int attempt = 0; // 1-based
    qint64 startedMs = 0;
    qint64 durationMs = 0;
    AttemptOutcome outcome = AttemptOutcome::Succeeded;
    qint64 nextDelayMs = -1; // backoff before the next attempt; -1 when there is none
    // False for an entry that records why an attempt was not made: refused by an open breaker,
    // or the call stopped (cancel, deadline) while it waited out the backoff before it.
    bool made = true;
    // >= 0 when a server's Retry-After set nextDelayMs in place of the policy's backoff: the
    // delay it asked for, as capped (RetryPolicy::serverDelayCap()). -1: the policy's own.
    qint64 retryAfterMs = -1;

    friend bool operator==(const AttemptRecord &, const AttemptRecord &) = default;
};

struct AttemptEvent
{
    enum class Phase { Started, Finished };
    quint64 callId = 0;
    QString traceId;
    QString toolName;
    Phase phase = Phase::Started;
    AttemptRecord record;
};

} // namespace AgentConsole

Q_DECLARE_METATYPE(AgentConsole::AttemptRecord)
Q_DECLARE_METATYPE(AgentConsole::AttemptEvent)
