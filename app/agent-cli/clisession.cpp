#include "clisession.h"
#include "terminaltext.h"

#include "core/turn/agentloop.h"
#include "core/console/agentruntime.h"
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
        return QStringLiteral("OK");
    // Refused by an open breaker: said apart from a 503.
    if (call.circuitCooldownLeftMs >= 0)
        return call.result.code + QStringLiteral(" (circuit open, %1 ms cool-down left)")
                                      .arg(call.circuitCooldownLeftMs);
    return call.result.code;
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
    m_resumeQueue = new ResumeQueue(m_runtime->agentLoop(), this);
    connect(m_runtime->agentLoop(), &AgentLoop::turnFinished, this, [this](const TurnResult &r) {
        printTurn(r, m_json);
        m_finished.append(r);
        if (r.status != TurnStatus::Completed)
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

void CliSession::askNext()
{
    QString question;
    if (m_fromStdin) {
        // Blocking on stdin is fine here: no turn is running and there is no window to serve.
        static QTextStream input(stdin);
        while (question.trimmed().isEmpty()) {
            if (!input.readLineInto(&question)) {
                Q_EMIT done(m_anyTurnFailed ? 3 : 0);
                return;
            }
        }
    } else {
        if (m_questions.isEmpty()) {
            Q_EMIT done(m_anyTurnFailed ? 3 : 0);
            return;
        }
        question = m_questions.takeFirst();
    }
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
        for (const TurnCheckpoint &turn : m_runtime->interruptedTurns()) {
            if (turn.conversationId == conversationId
                && turn.result.requestId == m_firstRequestId && loop->resume(turn)) {
                m_firstRequestId.clear();
                return;
            }
        }
    }
    if (question.trimmed().size() > AgentLoop::maxQuestionLength) {
        std::fprintf(stderr, "agent-cli: a question longer than %d characters was not asked\n",
                     AgentLoop::maxQuestionLength);
        m_anyTurnFailed = true;
        QMetaObject::invokeMethod(this, &CliSession::askNext, Qt::QueuedConnection);
        return;
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
