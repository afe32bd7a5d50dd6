#include "turntext.h"

#include "ui/common/staffwords.h"

#include "toolcalltext.h"
#include "transcriptmodel.h"

#include "core/export/callwords.h"
#include "core/turn/turncheckpoint.h"
#include "core/turn/turnresult.h"

#include <QStringList>

#include <algorithm>

namespace AgentConsole::Internal {

QString layerAttempts(const TurnResult &result)
{
    const auto attempts = [](int count) { return TurnText::tr("%n attempt(s)", nullptr, count); };
    QStringList parts;
    if (result.modelRetries() > 0 || result.fallbackHops > 0)
        parts.append(TurnText::tr("model: %1").arg(attempts(result.modelAttempts)));
    if (result.fallbackHops > 0)
        parts.append(TurnText::tr("fallback \u00d7%1").arg(result.fallbackHops));
    if (result.toolRetries() > 0)
        parts.append(TurnText::tr("tools: %1").arg(attempts(result.toolAttempts())));
    return parts.join(QStringLiteral(" · "));
}

QString stoppedWhere(const QString &stageName)
{
    switch (turnStageFromName(stageName).value_or(TurnStage::Received)) {
    case TurnStage::Received:
        return TurnText::tr("stopped before looking anything up");
    case TurnStage::Planned:
        return TurnText::tr("stopped while looking things up");
    case TurnStage::ToolsExecuted:
        return TurnText::tr("stopped after looking things up, before answering");
    case TurnStage::AnswerGenerating:
        return TurnText::tr("stopped while writing the answer");
    case TurnStage::Completed:
    case TurnStage::Failed:
        return TurnText::tr("could not write the answer");
    }
    return {};
}

QString resumedFor(const TranscriptTurn &turn)
{
    return turn.resumedStage.isEmpty() && turn.restarts == 0
        ? QString()
        : TurnText::tr("Resumed: %1").arg(stoppedWhere(turn.resumedStage));
}

namespace {

int notRunCount(const TranscriptTurn &turn)
{
    return int(std::count_if(turn.calls.cbegin(), turn.calls.cend(), [](const auto &call) {
        return call.result.code == ResultCode::ToolCallLimit;
    }));
}

} // namespace

QString notRunFor(const TranscriptTurn &turn)
{
    const int count = notRunCount(turn);
    if (count == 0)
        return {};
    return TurnText::tr("%n lookup(s) not run: too many asked for at once", nullptr, count);
}

QString speakerFor(const TranscriptTurn &turn)
{
    return turn.result && !turn.result->model.isEmpty()
        ? TurnText::tr("Agent · %1").arg(turn.result->model)
        : TurnText::tr("Agent");
}

QString outcomeWords(TurnOutcome outcome)
{
    switch (outcome) {
    case TurnOutcome::Answered:
        return TurnText::tr("Answered");
    case TurnOutcome::Partial:
        return TurnText::tr("Partly answered");
    case TurnOutcome::Unanswered:
        return TurnText::tr("Not answered");
    case TurnOutcome::Failed:
        break;
    }
    return TurnText::tr("Failed");
}

std::pair<QString, Tone> statusFor(const TurnResult &result)
{
    switch (result.outcome()) {
    case TurnOutcome::Answered:
        return {outcomeWords(TurnOutcome::Answered), Tone::Success};
    case TurnOutcome::Partial:
        return {outcomeWords(TurnOutcome::Partial), Tone::Warning};
    case TurnOutcome::Unanswered:
        return {result.modelDeclined ? TurnText::tr("Declined by the model")
                                     : outcomeWords(TurnOutcome::Unanswered),
                Tone::Danger};
    case TurnOutcome::Failed:
        break;
    }
    if (result.status == TurnStatus::Cancelled)
        return {TurnText::tr("Cancelled"), Tone::Neutral};
    return {TurnText::tr("Failed"), Tone::Danger};
}

QString retryAskFor(const ToolCallRecord &call)
{
    if (call.labels.write || call.result.success || call.result.isNotFound())
        return {};
    // The ids it was about, as its card names them (callwords.h).
    return (ToolCallText::toolTitle(call) + QLatin1Char(' ') + CallWords::subject(call)).trimmed();
}

QString retryQuestionFor(const TurnResult &result)
{
    if (result.status == TurnStatus::Cancelled)
        return {}; // staff stopped it: asking again is theirs to decide
    QStringList asks;
    for (const ToolCallRecord &call : result.toolCalls) {
        const QString ask = retryAskFor(call);
        if (!ask.isEmpty() && !asks.contains(ask))
            asks.append(ask);
    }
    if (asks.isEmpty())
        return {};
    return TurnText::tr("Try again: %1").arg(asks.join(TurnText::tr("; ")));
}

QString footerFor(const TurnResult &result)
{
    QStringList facts;
    // A scenario's turn is a demo or QA run, never a customer's: said first.
    if (!result.scenario.isEmpty())
        facts.append(
            TurnText::tr("Scenario run: %1").arg(StaffWords::scenarioTitle(result.scenario)));
    // The calls the bound refused have their own line above; these are the ones that ran.
    const int calls = int(result.toolCalls.size()) - result.toolCallsOverLimit();
    facts.append(ToolCallText::duration(result.totalMs));
    if (calls > 0)
        facts.append(TurnText::tr("%n tool call(s)", nullptr, calls));
    if (result.toolRounds > 1)
        facts.append(TurnText::tr("%n tool round(s)", nullptr, result.toolRounds));
    const QString attempts = layerAttempts(result);
    if (!attempts.isEmpty())
        facts.append(attempts);
    if (result.restarts > 0)
        facts.append(TurnText::tr("resumed %n time(s)", nullptr, result.restarts));
    if (result.breakerOpens > 0)
        facts.append(TurnText::tr("%n circuit(s) opened", nullptr, result.breakerOpens));
    if (result.turnsLeftOut > 0)
        // Left out by the conversation budget (ModelOptions::conversationBudget()).
        facts.append(TurnText::tr("%n earlier turn(s) not sent to the model", nullptr,
                                  result.turnsLeftOut));
    if (!result.incidentId.isEmpty())
        facts.append(
            TurnText::tr("incident %1 (details in the local log)").arg(result.incidentId));
    return facts.join(QStringLiteral(" · "));
}

bool awaitsConfirmation(const TranscriptTurn &turn, int index)
{
    for (auto call = turn.calls.cbegin(); call != turn.calls.cend(); ++call) {
        if ((index < 0 || call.key() == index)
            && call->state == ToolCallRecord::State::AwaitingConfirmation)
            return true;
    }
    return false;
}

QString finalAnswer(const TurnResult &result, const QString &streamed)
{
    if (!result.answer.isEmpty())
        return result.answer;
    if (!streamed.isEmpty())
        return streamed;
    switch (result.status) {
    case TurnStatus::Cancelled:
        return TurnText::tr("The turn was cancelled before an answer was written.");
    case TurnStatus::Failed:
        return TurnText::tr("No answer could be written for this question.");
    case TurnStatus::Completed:
        break;
    }
    return {};
}

} // namespace AgentConsole::Internal
