#include "clisession.h"
#include "standardinputlines.h"
#include "terminaltext.h"

#include "core/turn/agentloop.h"
#include "core/console/agentruntime.h"
#include "core/console/turnrecovery.h"
#include "core/turn/resumequeue.h"

#include <QJsonDocument>
#include <QTextStream>

#include <cstdio>

#include <utility>

namespace AgentConsole {
namespace {

QString chipText(const ToolCallRecord &call)
{
    if (call.result.success)
        return ResultCode::wireName(ResultCode::Ok);
    // Refused by an open breaker: said apart from a 503.
    if (call.circuitCooldownLeftMs >= 0)
        return call.result.codeName()
            + QStringLiteral(" (circuit open, %1 ms cool-down left)")
                  .arg(call.circuitCooldownLeftMs);
    return call.result.codeName();
}

} // namespace

CliSession::CliSession(AgentRuntime *runtime, bool json, QObject *parent)
    : QObject(parent)
    , m_runtime(runtime)
    , m_json(json)
{
}

void CliSession::setTurnsToResume(const QList<TurnCheckpoint> &turns)
{
    m_toResume = turns;
    m_resuming = true;
}

void CliSession::setFirstRequest(const QString &conversationId, const QString &requestId)
{
    m_conversationId = conversationId;
    m_firstRequestId = requestId;
}

void CliSession::run(const QStringList &questions)
{
    m_questions = questions;
    m_fromStdin = questions.isEmpty() && !m_resuming;
    if (m_fromStdin) {
        m_input = new StandardInputLines(AgentLoop::maxQuestionLength, this);
        connect(m_input, &StandardInputLines::lineRead, this, &CliSession::onLine);
        connect(m_input, &StandardInputLines::ended, this, &CliSession::finish);
    }
    m_resumeQueue = new ResumeQueue(m_runtime->agentLoop(), this);
    connect(m_runtime->agentLoop(), &AgentLoop::turnFinished, this, [this](const TurnResult &r) {
        m_cancelling = false;
        if (m_done)
            return; // a second Ctrl+C ended the session while this turn was cancelled
        printTurn(r, m_json);
        m_finished.append(r);
        // A turn the staff member cancelled did not fail: it was stopped as asked.
        if (r.status == TurnStatus::Failed)
            m_anyTurnFailed = true;
        if (m_resumeQueue->isRunning())
            return; // the queue starts the next interrupted turn, then finishes
        // Next turn from a fresh event-loop pass, not from inside the loop's signal.
        QMetaObject::invokeMethod(this, &CliSession::askNext, Qt::QueuedConnection);
    });
    // The interrupted turns first, one at a time; then the questions.
    connect(m_resumeQueue, &ResumeQueue::finished, this, &CliSession::askNext);
    if (!m_toResume.isEmpty())
        m_resumeQueue->start(std::exchange(m_toResume, {}));
    else
        askNext();
}

void CliSession::interrupt()
{
    if (m_done)
        return;
    AgentLoop *loop = m_runtime->agentLoop();
    if (loop->isBusy() && !m_cancelling) {
        m_cancelling = true;
        std::fputs("\nagent-cli: cancelling the turn (Ctrl-C again to quit)\n", stderr);
        std::fflush(stderr);
        loop->cancel();
        return;
    }
    std::fputs(m_cancelling ? "\nagent-cli: quit before the turn's cancel was recorded\n" : "\n",
               stderr);
    std::fflush(stderr);
    m_done = true;
    Q_EMIT done(interruptedExitCode);
}

void CliSession::endInput()
{
    m_inputEnded = true;
}

void CliSession::finish()
{
    if (std::exchange(m_done, true))
        return;
    if (m_prompted)
        std::fputs("\n", stderr); // the prompt's line ends (Ctrl-D echoes nothing)
    Q_EMIT done(m_usageError ? usageErrorExitCode : m_anyTurnFailed ? turnFailedExitCode : 0);
}

void CliSession::prompt()
{
    if (!m_input->isTerminal())
        return; // piped questions: nobody to prompt
    if (!std::exchange(m_prompted, true))
        std::fputs("Type a question and press Enter. Ctrl-C cancels a turn, Ctrl-D ends.\n",
                   stderr);
    std::fputs("question> ", stderr);
    std::fflush(stderr);
}

void CliSession::askNext()
{
    if (m_done)
        return;
    if (m_inputEnded) {
        finish(); // the terminal closed at a confirmation: nothing more is asked on it
        return;
    }
    if (m_fromStdin) {
        prompt();
        m_input->next();
        return;
    }
    if (m_questions.isEmpty()) {
        finish();
        return;
    }
    ask(m_questions.takeFirst());
}

void CliSession::onLine(const QString &line, int number, bool tooLong)
{
    if (m_done)
        return;
    if (tooLong) {
        // The staff member's mistake, not a turn's failure: said, and the exit status says
        // it too (2); the next question is asked.
        if (m_input->isTerminal())
            std::fprintf(stderr,
                         "agent-cli: that question is longer than %d characters and "
                         "was not asked; shorten it\n",
                         AgentLoop::maxQuestionLength);
        else
            std::fprintf(stderr,
                         "agent-cli: the question on line %d is longer than %d "
                         "characters and was not asked\n",
                         number, AgentLoop::maxQuestionLength);
        m_usageError = true;
        askNext();
        return;
    }
    if (line.trimmed().isEmpty()) {
        askNext(); // a blank line asks nothing
        return;
    }
    ask(line);
}

void CliSession::ask(QString question)
{
    AgentLoop *loop = m_runtime->agentLoop();
    if (!m_askedAny && !m_conversationId.isEmpty()) {
        SessionContext context = loop->session();
        context.conversationId = m_conversationId;
        loop->setSession(context);
    }
    m_askedAny = true;
    if (!m_firstRequestId.isEmpty()) {
        // Asking again under the name of an interrupted request carries that request on from
        // its checkpoint; asking it afresh would find its own write "in progress".
        const QString conversationId = loop->session().conversationId;
        for (const TurnCheckpoint &turn : m_runtime->recovery()->interruptedTurns()) {
            if (turn.conversationId == conversationId && turn.result.requestId == m_firstRequestId
                && loop->resume(turn)) {
                m_firstRequestId.clear();
                return;
            }
        }
    }
    if (loop->ask(question, std::exchange(m_firstRequestId, {})).isEmpty()) {
        m_anyTurnFailed = true;
        QMetaObject::invokeMethod(this, &CliSession::askNext, Qt::QueuedConnection);
    }
}

void printTurn(const TurnResult &result, bool json)
{
    QTextStream out(stdout);
    if (json) {
        out << QJsonDocument(result.toJson()).toJson(QJsonDocument::Compact) << '\n';
        out.flush();
        return;
    }
    // Plain text goes to a terminal: whatever the model wrote is printed, never obeyed.
    out << terminalSafe(result.answer) << '\n';
    for (const ToolCallRecord &call : result.toolCalls) {
        const QString arguments = call.arguments.isEmpty()
            ? call.rawArguments
            : QString::fromUtf8(QJsonDocument(call.arguments).toJson(QJsonDocument::Compact));
        out << QStringLiteral("  [%1] %2 %3 · %4 attempt%5 · %6 ms\n")
                   .arg(chipText(call), terminalSafe(call.name), terminalSafe(arguments))
                   .arg(call.attemptsMade())
                   .arg(call.attemptsMade() == 1 ? QString() : QStringLiteral("s"))
                   .arg(call.totalMs);
    }
    if (!result.serversNotReady.isEmpty())
        out << QStringLiteral("  (not offered: the tools of %1, not ready in time)\n")
                   .arg(terminalSafe(result.serversNotReady.join(QStringLiteral(", "))));
    out << QStringLiteral("  (%1, %2, model %3, %4 ms)\n")
               .arg(turnOutcomeName(result.outcome()), turnStatusName(result.status),
                    terminalSafe(result.model))
               .arg(result.totalMs);
    out.flush();
}

} // namespace AgentConsole
