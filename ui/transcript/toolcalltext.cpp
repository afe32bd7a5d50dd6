#include "toolcalltext.h"

#include "ui/common/staffwords.h"

#include "core/export/callwords.h"
#include "core/team/isolationwords.h"
#include "core/turn/failures.h"
#include "core/turn/turnresult.h"

#include <QCoreApplication>
#include <QDateTime>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLocale>

namespace AgentConsole::ToolCallText {

namespace {

constexpr int maxArgumentsLength = 160;

// lupdate takes these tr() calls, free functions of the namespace, in the namespace's context.
QString tr(const char *text, const char *disambiguation = nullptr, int n = -1)
{
    return QCoreApplication::translate("AgentConsole::ToolCallText", text, disambiguation, n);
}

QString elided(const QString &text, int maxLength)
{
    if (text.size() <= maxLength)
        return text;
    return text.left(maxLength - 1) + QChar(0x2026);
}

// How core writes a value (callwords.h): the cards, the case note and the copies agree.
QString compactValue(const QJsonValue &value)
{
    return CallWords::value(value);
}

} // namespace

namespace {

// The one place a severity gets its colour: a switch without a default, so that a severity
// added to the failure table does not compile until it has one.
Tone toneOf(FailureTable::Severity severity)
{
    switch (severity) {
    case FailureTable::Severity::Success:
        return Tone::Success;
    case FailureTable::Severity::Neutral:
        return Tone::Neutral;
    case FailureTable::Severity::Info:
        return Tone::Info;
    case FailureTable::Severity::Warning:
        return Tone::Warning;
    case FailureTable::Severity::Error:
        return Tone::Danger;
    }
    return Tone::Danger;
}

} // namespace

namespace {

// The failure table's label and severity columns. A code without a label (one this console
// does not recognise) shows its name as it is rather than a guess.
Status statusBy(ResultCode::Code code, const QString &name)
{
    const FailureTable::Row *row = failureTable().find(code);
    const Tone tone = row ? toneOf(row->severity) : Tone::Danger;
    if (row && row->label)
        return {tr(row->label), tone};
    return {name.isEmpty() ? tr("Failed") : name, tone};
}

} // namespace

Status statusOfResult(const ToolResult &result)
{
    return statusBy(result.code, result.codeName());
}

Status statusOfCode(ResultCode::Code code)
{
    return statusBy(code, ResultCode::wireName(code));
}

Status statusOf(const ToolCallRecord &call)
{
    if (call.state == ToolCallRecord::State::AwaitingConfirmation)
        return {tr("Awaiting confirmation"), Tone::Warning};
    if (call.state != ToolCallRecord::State::Finished)
        return {tr("Running…"), Tone::Info};
    // Refused by a lead's isolation (docs/TEAM.md), worded by core.
    if (!call.isolation.isNull() && call.result.code == ResultCode::ToolUnavailable)
        return {IsolationWords::chip(), Tone::Warning};
    // Refused by an open breaker: not the same thing as a 503 the backend just gave.
    if (call.circuitCooldownLeftMs >= 0 && call.result.code == ResultCode::ToolUnavailable)
        return {tr("Circuit open"), Tone::Warning};
    // Not "Declined": nobody was there to decline it (agent-cli without a terminal), and a
    // request that was not served is worth a second look.
    if (call.result.nobodyWasAsked())
        return {tr("Not confirmed"), Tone::Warning};
    // The chip tells how the lookup went, never whether its finding is good news: an answer
    // is not green ("out of stock" is neither a failure nor a success of the customer's).
    if (call.result.success)
        return {statusOfCode(ResultCode::Ok).text, Tone::Neutral};
    return statusOfResult(call.result);
}

QString compactArguments(const QJsonObject &arguments)
{
    QStringList parts;
    for (auto it = arguments.constBegin(); it != arguments.constEnd(); ++it)
        parts.append(it.key() + QLatin1Char('=') + compactValue(it.value()));
    return elided(parts.join(QLatin1String(", ")), maxArgumentsLength);
}

QString compactArguments(const ToolCallRecord &call)
{
    if (!call.arguments.isEmpty()) {
        // In staff words where the tool has them: "Order: A1001 · Category: Damaged item".
        QStringList parts;
        for (const ArgumentRow &row : argumentRows(call))
            parts.append(tr("%1: %2").arg(row.label, row.value));
        return elided(parts.join(QStringLiteral(" · ")), maxArgumentsLength);
    }
    const QString raw = call.rawArguments.simplified();
    if (raw.isEmpty() || raw == QLatin1String("{}"))
        return tr("no arguments");
    return elided(raw, maxArgumentsLength);
}

QString duration(qint64 milliseconds)
{
    return StaffWords::duration(milliseconds);
}

QString attemptSummary(const ToolCallRecord &call)
{
    const int attempts = call.attemptsMade();
    if (call.state == ToolCallRecord::State::AwaitingConfirmation)
        return tr("not run yet");
    if (call.state != ToolCallRecord::State::Finished) {
        if (attempts == 0)
            return tr("in progress");
        return tr("%n attempt(s) so far", nullptr, attempts);
    }
    if (attempts == 0 && !call.isolation.isNull())
        return IsolationWords::notAttempted();
    if (attempts == 0 && call.circuitCooldownLeftMs >= 0)
        return tr("not attempted · circuit open");
    if (attempts == 0)
        return tr("not run");
    const QString count = tr("%n attempt(s)", nullptr, attempts);
    return count + QStringLiteral(" · ") + duration(call.totalMs);
}

namespace {

QString outcomeUnknownAfter(const QString &ms)
{
    return tr("ended after %1 with its outcome unknown (it may have been done)").arg(ms);
}

// What a final answer that was not a success says, by the call's result code. Only a miss
// (the failure table's "nothing found") is "nothing matched"; a write whose outcome is
// unknown, in progress elsewhere or in conflict must never read as one.
QString businessAnswer(const ToolResult &result, const QString &ms)
{
    using Code = ResultCode::Code;
    if (result.isNotFound())
        return tr("answered in %1, nothing matched").arg(ms);
    switch (result.code) {
    case Code::ExecutionStatusUnknown:
        return outcomeUnknownAfter(ms);
    case Code::OperationInProgress:
        return tr("answered in %1: already in progress, not run again").arg(ms);
    case Code::IdempotencyConflict:
        return tr("refused after %1: same key used with other arguments").arg(ms);
    case Code::ConfirmationDeclined:
        return tr("declined by the staff member");
    case Code::InvalidArgument:
        return tr("arguments refused after %1").arg(ms);
    case Code::ContextMissing:
        return tr("refused after %1: session context missing").arg(ms);
    case Code::Ok:
    case Code::UnknownTool:
    case Code::ToolTimeout:
    case Code::ToolUnavailable:
    case Code::ToolRejected:
    case Code::ToolAccessDenied:
    case Code::SignInRequired:
    case Code::Cancelled:
    case Code::InternalError:
    case Code::ToolCallLimit:
    case Code::Unrecognized:
    case Code::UnrecognizedNotFound:
        break;
    }
    return tr("answered in %1 without a result (%2)").arg(ms, statusOfResult(result).text);
}

QString stopLine(const AttemptRecord &attempt, const QString &ms)
{
    const bool deadline = attempt.outcome == AttemptOutcome::DeadlineReached;
    if (!attempt.made) {
        const QString at = duration(attempt.startedMs);
        return deadline ? tr("not made: the deadline passed during the backoff, at %1").arg(at)
                        : tr("not made: cancelled during the backoff, at %1").arg(at);
    }
    return deadline ? tr("stopped at the deadline after %1").arg(ms)
                    : tr("cancelled after %1").arg(ms);
}

} // namespace

QString attemptLine(const AttemptRecord &attempt, const ToolCallRecord &call)
{
    const qint64 cooldownLeftMs = call.circuitCooldownLeftMs;
    const QString ms = tr("%1 ms").arg(attempt.durationMs);
    QString what;
    switch (attempt.outcome) {
    case AttemptOutcome::Succeeded:
        what = tr("succeeded in %1").arg(ms);
        break;
    case AttemptOutcome::BusinessFailure:
        what = businessAnswer(call.result, ms);
        break;
    case AttemptOutcome::StatusUnknown:
        what = outcomeUnknownAfter(ms);
        break;
    case AttemptOutcome::TransientFailure:
        what = tr("failed (transient) after %1").arg(ms);
        break;
    case AttemptOutcome::TimedOut:
        what = tr("timed out after %1").arg(ms);
        break;
    case AttemptOutcome::Rejected:
        what = tr("rejected by the backend after %1").arg(ms);
        break;
    case AttemptOutcome::AccessDenied:
        // A refusal that a sign-in lifts says so, as the card's chip does ("Sign-in needed").
        what = call.result.code == ResultCode::SignInRequired
            ? tr("refused after %1: its server needs a sign-in").arg(ms)
            : tr("access denied after %1").arg(ms);
        break;
    case AttemptOutcome::Unexpected:
        what = tr("internal error after %1").arg(ms);
        break;
    case AttemptOutcome::Cancelled:
    case AttemptOutcome::DeadlineReached:
        what = stopLine(attempt, ms);
        break;
    case AttemptOutcome::CircuitOpen:
        // No cool-down left: the breaker is half-open and its probe is out, so this call
        // waited for no time but for the probe's answer. Isolated: the lead's words.
        what = !call.isolation.isNull() ? IsolationWords::refusal(call.isolation)
            : cooldownLeftMs > 0
            ? tr("not attempted: circuit open (the service is known to be down), "
                 "cool-down %1 left")
                  .arg(duration(cooldownLeftMs))
            : cooldownLeftMs == 0
            ? tr("not attempted: circuit half-open (a trial call is testing the service)")
            : tr("not attempted: the service is known to be down (circuit open)");
        break;
    }
    QString line = QStringLiteral("#%1 %2").arg(attempt.attempt).arg(what);
    if (attempt.retryAfterMs >= 0)
        line += tr(", waited %1 ms as the server asked (Retry-After)").arg(attempt.nextDelayMs);
    else if (attempt.nextDelayMs >= 0)
        line += tr(", backoff %1 ms").arg(attempt.nextDelayMs);
    return line;
}

namespace {

// A short word from a chip's text: "Not found" -> "not found", but "OK" stays as it is.
QString shortWord(const QString &text)
{
    if (text.size() > 1 && text.at(1).isLower())
        return text.at(0).toLower() + text.mid(1);
    return text;
}

} // namespace

Status attemptStatus(const AttemptRecord &attempt, const ToolCallRecord &call)
{
    using Code = ResultCode::Code;
    const auto byCode = [](Code code, const QString &word) {
        return Status{word, statusOfCode(code).tone};
    };
    switch (attempt.outcome) {
    case AttemptOutcome::Succeeded:
        return byCode(Code::Ok, tr("ok"));
    case AttemptOutcome::BusinessFailure: {
        const Status status = statusOfResult(call.result);
        return {shortWord(status.text), status.tone};
    }
    case AttemptOutcome::TransientFailure:
        return byCode(Code::ToolUnavailable, tr("failed"));
    case AttemptOutcome::TimedOut:
        return byCode(Code::ToolTimeout, tr("timeout"));
    case AttemptOutcome::Rejected:
        return byCode(Code::ToolRejected, tr("rejected"));
    case AttemptOutcome::AccessDenied:
        // A refusal a sign-in lifts reads as such, in the row's own colour.
        if (call.result.code == ResultCode::SignInRequired)
            return byCode(Code::SignInRequired, tr("sign-in"));
        return byCode(Code::ToolAccessDenied, tr("denied"));
    case AttemptOutcome::Unexpected:
        return byCode(Code::InternalError, tr("error"));
    case AttemptOutcome::Cancelled:
        return byCode(Code::Cancelled, tr("cancelled"));
    case AttemptOutcome::DeadlineReached:
        return byCode(Code::ToolTimeout, tr("deadline"));
    case AttemptOutcome::CircuitOpen:
        // As the card's chip says it: a refusal, not a failure of the service just now.
        return {tr("circuit open"), Tone::Warning};
    case AttemptOutcome::StatusUnknown: {
        const Status status = statusOfCode(ResultCode::ExecutionStatusUnknown);
        return {shortWord(status.text), status.tone};
    }
    }
    return {tr("failed"), Tone::Danger};
}

QStringList timeline(const ToolCallRecord &call)
{
    QStringList lines;
    for (const AttemptRecord &attempt : call.attempts)
        lines.append(attemptLine(attempt, call));
    if (call.state == ToolCallRecord::State::AwaitingConfirmation) {
        lines.append(tr("Waiting for the staff member to confirm; nothing has run"));
    } else if (call.state != ToolCallRecord::State::Finished) {
        const int next = int(call.attempts.size()) + 1;
        const bool backingOff = !call.attempts.isEmpty() && call.attempts.last().nextDelayMs >= 0;
        lines.append(backingOff ? tr("#%1 after backoff…").arg(next)
                                : tr("#%1 running…").arg(next));
    } else if (call.attempts.isEmpty() && !call.isolation.isNull()) {
        lines.append(IsolationWords::refusal(call.isolation));
    } else if (call.attempts.isEmpty() && call.circuitCooldownLeftMs > 0) {
        lines.append(tr("Not attempted: circuit open (the service is known to be down); "
                        "cool-down %1 left")
                         .arg(duration(call.circuitCooldownLeftMs)));
    } else if (call.attempts.isEmpty() && call.circuitCooldownLeftMs == 0) {
        lines.append(tr("Not attempted: circuit half-open (a trial call is testing the "
                        "service)"));
    } else if (call.attempts.isEmpty()) {
        lines.append(
            tr("Not attempted: %1")
                .arg(call.result.message.isEmpty() ? statusOf(call).text : call.result.message));
    }
    return lines;
}

namespace {

QString toolLabel(const QString &text)
{
    return QCoreApplication::translate(ToolLabels::TranslationContext, text.toUtf8().constData());
}

QString valueText(const ToolLabels::Argument &argument, const QJsonValue &value)
{
    return CallWords::valueLabel(argument, value);
}

} // namespace

// The words core owns (core/export/callwords.h): the case note says the same.
QString findingText(const ToolCallRecord &call)
{
    const bool chinese = QLocale().language() == QLocale::Chinese;
    return elided(CallWords::finding(call, chinese), maxArgumentsLength);
}

QString staffLine(const ToolCallRecord &call)
{
    const QString finding = findingText(call);
    return tr("%1: %2").arg(CallWords::titleWithSubject(call),
                            finding.isEmpty() ? statusOf(call).text : finding);
}

QString toolTitle(const ToolCallRecord &call)
{
    return CallWords::title(call);
}

QString confirmationTitle(const ToolCallRecord &call)
{
    if (!call.labels.confirmTitle.isEmpty())
        return toolLabel(call.labels.confirmTitle);
    return tr("Confirm: run %1")
        .arg(call.labels.title.isEmpty() ? call.name : toolLabel(call.labels.title));
}

QString confirmActionText(const ToolCallRecord &call)
{
    if (!call.labels.confirmAction.isEmpty())
        return toolLabel(call.labels.confirmAction);
    return tr("Confirm");
}

QString argumentLabel(const ToolCallRecord &call, const QString &key)
{
    for (const ToolLabels::Argument &argument : call.labels.arguments) {
        if (argument.key == key)
            return toolLabel(argument.label);
    }
    return key;
}

QString ageText(const QDateTime &then, const QDateTime &now)
{
    if (!then.isValid())
        return {};
    const qint64 seconds = std::max<qint64>(0, then.secsTo(now));
    if (seconds < 60)
        return tr("just now");
    if (seconds < 3600)
        return tr("%n min ago", nullptr, int(seconds / 60));
    if (seconds < 48 * 3600)
        return tr("%n h ago", nullptr, int(seconds / 3600));
    return tr("%n day(s) ago", nullptr, int(seconds / 86400));
}

PriorWritesText priorWritesText(const ToolCallRecord &call, const QDateTime &now)
{
    const PriorWrites &prior = call.priorWrites;
    PriorWritesText text;
    if (prior.state == PriorWrites::State::NotChecked)
        return text;
    const QString heading = call.labels.priorWrites.isEmpty() ? tr("Earlier ones")
                                                              : toolLabel(call.labels.priorWrites);
    const auto namedValue = [&](const PriorWrites::Entry &entry) {
        const QJsonValue value = entry.fields.value(prior.namedField);
        for (const ToolLabels::Argument &argument : call.labels.arguments) {
            if (argument.key == prior.namedField)
                return valueText(argument, value);
        }
        return compactValue(value);
    };
    const auto when = [&](const PriorWrites::Entry &entry) {
        const QString age = ageText(entry.createdAt, now);
        if (entry.byThisStaffMember)
            return age.isEmpty() ? tr("by you") : tr("%1, by you").arg(age);
        if (!entry.createdBy.isEmpty())
            return age.isEmpty() ? tr("by %1").arg(entry.createdBy)
                                 : tr("%1, by %2").arg(age, entry.createdBy);
        return age;
    };

    switch (prior.state) {
    case PriorWrites::State::NotChecked:
        break;
    case PriorWrites::State::Checking:
        text.heading = tr("%1: checking…").arg(heading);
        return text;
    case PriorWrites::State::Checked:
        text.heading = prior.entries.isEmpty() ? tr("%1: none").arg(heading)
                                               : tr("%1:").arg(heading);
        break;
    case PriorWrites::State::Unavailable:
        text.heading = tr("%1 could not be checked (%2). The console's own record is below.")
                           .arg(heading, statusOfCode(prior.lookupCode).text.toLower());
        if (prior.ledgerUnread || prior.entries.isEmpty())
            text.heading = tr("%1 could not be checked (%2).")
                               .arg(heading, statusOfCode(prior.lookupCode).text.toLower());
        break;
    }
    constexpr int maxLines = 5;
    for (const PriorWrites::Entry &entry : prior.entries) {
        if (text.lines.size() == maxLines) {
            text.lines.append(tr("and %n more", nullptr, int(prior.entries.size()) - maxLines));
            break;
        }
        QStringList parts{entry.id, namedValue(entry)};
        const QString said = when(entry);
        if (!said.isEmpty())
            parts.append(said);
        if (entry.fromLedgerOnly)
            parts.append(tr("from the console's record"));
        text.lines.append(parts.join(QStringLiteral(" · ")));
    }
    if (const PriorWrites::Entry *duplicate = prior.likelyDuplicate()) {
        const QString sentence = call.labels.likelyDuplicate.isEmpty()
            ? tr("%1 already has %3 (“%2”)")
            : toolLabel(call.labels.likelyDuplicate);
        const QString said = when(*duplicate);
        text.duplicate = sentence.arg(prior.subject, namedValue(*duplicate), duplicate->id)
            + (said.isEmpty() ? QString() : tr(", created %1").arg(said)) + QLatin1Char('.');
    }
    return text;
}

QList<ArgumentRow> argumentRows(const ToolCallRecord &call)
{
    QList<ArgumentRow> rows;
    if (call.arguments.isEmpty()) {
        if (!call.rawArguments.trimmed().isEmpty()
            && call.rawArguments.trimmed() != QLatin1String("{}"))
            rows.append({tr("Arguments"), call.rawArguments});
        return rows;
    }
    QStringList labelled;
    for (const ToolLabels::Argument &argument : call.labels.arguments) {
        labelled.append(argument.key);
        if (call.arguments.contains(argument.key))
            rows.append({toolLabel(argument.label),
                         valueText(argument, call.arguments.value(argument.key))});
    }
    for (auto it = call.arguments.constBegin(); it != call.arguments.constEnd(); ++it) {
        if (!labelled.contains(it.key()))
            rows.append({it.key(), compactValue(it.value())});
    }
    return rows;
}

QString policyWord(const QString &policy)
{
    if (policy == QLatin1String("read"))
        return tr("read");
    if (policy == QLatin1String("idempotent-write"))
        return tr("idempotent write");
    return tr("confirm first");
}

QString questionNote(const ToolCallRecord &call)
{
    using Question = ToolCallRecord::Question;
    const QString server = call.questionFrom;
    switch (call.question) {
    case Question::None:
        break;
    case Question::Waiting:
        return tr("Waiting for your answer to the question from %1 (the call's time keeps "
                  "running)")
            .arg(server);
    case Question::Accepted:
        return tr("%1 asked a question: answered").arg(server);
    case Question::Declined:
        return tr("%1 asked a question: declined").arg(server);
    case Question::Cancelled:
        return tr("%1 asked a question: dismissed").arg(server);
    case Question::Withdrawn:
        return tr("%1 asked a question: withdrawn, the call ended before an answer").arg(server);
    }
    return {};
}

QString policyNote(const ToolCallRecord &call)
{
    const ToolLabels::PolicyOrigin &origin = call.labels.policyOrigin;
    if (origin.source == ToolLabels::PolicyOrigin::Source::Staff)
        return tr("Policy set by staff: %1 (annotations said: %2)")
            .arg(policyWord(origin.policy), policyWord(origin.hinted));
    if (origin.hintsRelaxSafeguard())
        return tr("Policy from the server's annotations (hints, not verified): %1")
            .arg(policyWord(origin.policy));
    return {};
}

QString policyNoteToolTip(const ToolCallRecord &call)
{
    if (policyNote(call).isEmpty())
        return {};
    const QString still = tr("Whatever the policy, the arguments are validated and every attempt "
                             "keeps its deadline. Staff can change it in Settings › MCP tool "
                             "policies.");
    if (call.labels.policyOrigin.hintsRelaxSafeguard())
        return hintsWarning() + QLatin1Char('\n') + still;
    return still;
}

QString hintsWarning()
{
    return tr("Annotations are hints from the server, which may not be trusted: they let this "
              "tool be retried without staff confirming it.");
}

} // namespace AgentConsole::ToolCallText
