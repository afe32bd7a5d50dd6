// AgentLoop, part two: writes. A write waits for the staff member's confirmation, claims its
// operationId in the idempotency ledger, runs only with a claim, and is recorded before the
// turn counts it as finished (docs/RELIABILITY.md).
#include "agentloop_p.h"
#include "failures.h"

#include "../async/await.h"
#include "../ledger/requesthash.h"
#include "../telemetry/killpoint.h"
#include "../telemetry/logging.h"

#include <algorithm>

namespace AgentConsole {

using namespace Internal;

QString AgentLoop::setToolCallQuestion(const QString &operationId, const QString &server,
                                       ToolCallRecord::Question state)
{
    if (!d->turn)
        return {};
    Private::Turn &t = *d->turn;
    const std::optional<int> index = t.calls.indexOf(operationId);
    if (!index)
        return {};
    ToolCallRecord &record = t.result.toolCalls[*index];
    if (record.state == ToolCallRecord::State::Finished)
        return {};
    const QString from = server.isEmpty() ? record.questionFrom : server; // empty: unchanged
    if (record.question != state || record.questionFrom != from) {
        record.question = state;
        record.questionFrom = from;
        Q_EMIT toolCallUpdated(t.result.requestId, record);
    }
    return record.labels.title.isEmpty() ? record.name : record.labels.title;
}

void AgentLoop::confirm(const QString &operationId, bool approved)
{
    d->answerConfirmation(operationId,
                          approved ? Internal::ToolRound::Confirmation::Approved
                                   : Internal::ToolRound::Confirmation::Declined);
}

void AgentLoop::keepExisting(const QString &operationId, const QString &existingId)
{
    d->answerConfirmation(operationId, Internal::ToolRound::Confirmation::KeptExisting,
                          existingId);
}

void AgentLoop::setDuplicateWindow(std::chrono::seconds window)
{
    d->round.setDuplicateWindow(window);
}

void AgentLoop::cannotConfirm(const QString &operationId)
{
    d->answerConfirmation(operationId, Internal::ToolRound::Confirmation::NobodyToAsk);
}

void AgentLoop::Private::answerConfirmation(const QString &operationId,
                                            Internal::ToolRound::Confirmation answer,
                                            const QString &existingId)
{
    if (!turn)
        return;
    Turn &t = *turn;
    const std::optional<int> found = t.calls.indexOf(operationId);
    if (!found)
        return;
    const int index = *found;
    if (t.result.toolCalls[index].state != ToolCallRecord::State::AwaitingConfirmation)
        return;
    using Confirmation = Internal::ToolRound::Confirmation;
    qCInfo(lcAgent).noquote() << "tool call" << operationId
                              << (answer == Confirmation::Approved
                                      ? "confirmed by the staff member"
                                      : answer == Confirmation::Declined
                                      ? "declined by the staff member"
                                      : answer == Confirmation::KeptExisting
                                      ? "declined: the staff member kept an existing one"
                                      : "not confirmed: nobody could be asked");
    // The time spent reading the card is given back at every answer (TurnClock).
    t.clock->staffAnswered(*t.budget);
    round.confirmation(index, answer, existingId);
}

} // namespace AgentConsole
