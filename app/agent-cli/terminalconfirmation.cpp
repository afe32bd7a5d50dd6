#include "terminalconfirmation.h"
#include "terminallines.h"
#include "terminaltext.h"

#include "core/export/callwords.h"
#include "core/turn/agentloop.h"

#include <QDateTime>
#include <QJsonDocument>

#include <cstdio>
#include <utility>

namespace AgentConsole {

namespace {

// The check's findings in one line each, in agent-cli's English.
QStringList priorWritesLines(const ToolCallRecord &call)
{
    const PriorWrites &prior = call.priorWrites;
    QStringList lines;
    const auto named = [&](const PriorWrites::Entry &entry) {
        const QJsonValue value = entry.fields.value(prior.namedField);
        for (const ToolLabels::Argument &argument : call.labels.arguments) {
            if (argument.key == prior.namedField)
                return CallWords::valueLabel(argument, value); // no translator: English
        }
        return CallWords::value(value);
    };
    const auto when = [](const PriorWrites::Entry &entry) {
        QString said;
        if (entry.createdAt.isValid()) {
            const qint64 minutes = entry.createdAt.secsTo(QDateTime::currentDateTimeUtc()) / 60;
            said = minutes < 1  ? QStringLiteral("just now")
                : minutes < 120 ? QStringLiteral("%1 min ago").arg(minutes)
                                : QStringLiteral("%1 h ago").arg(minutes / 60);
        }
        if (entry.byThisStaffMember)
            said += QStringLiteral(" by you");
        else if (!entry.createdBy.isEmpty())
            said += QStringLiteral(" by ") + entry.createdBy;
        return said.trimmed();
    };
    if (prior.state == PriorWrites::State::Unavailable)
        lines.append(QStringLiteral("earlier ones could not be checked (%1)")
                         .arg(ResultCode::wireName(prior.lookupCode)));
    for (const PriorWrites::Entry &entry : prior.entries)
        lines.append(QStringLiteral("%1 %2 %3 %4")
                         .arg(prior.subject, QStringLiteral("has"), entry.id,
                              QStringLiteral("(%1, %2)").arg(named(entry), when(entry))));
    if (const PriorWrites::Entry *duplicate = prior.likelyDuplicate())
        lines.append(QStringLiteral("likely a duplicate: %1 already has a \u201c%2\u201d %3, "
                                    "created %4")
                         .arg(prior.subject, named(*duplicate), duplicate->id, when(*duplicate)));
    return lines;
}

} // namespace

TerminalConfirmation::TerminalConfirmation(AgentLoop *loop, TerminalLines *terminal,
                                           bool approveAll, bool allowDuplicates, QObject *parent)
    : QObject(parent)
    , m_loop(loop)
    , m_terminal(terminal)
    , m_approveAll(approveAll)
    , m_allowDuplicates(allowDuplicates)
{
    connect(loop, &AgentLoop::confirmationRequested, this,
            [this](const QString &, const ToolCallRecord &call) { onRequested(call); });
    // A write waits for its check of earlier ones before anything is asked or confirmed.
    connect(loop, &AgentLoop::toolCallUpdated, this,
            [this](const QString &, const ToolCallRecord &call) {
                if (!m_checking.contains(call.operationId) || !call.priorWrites.isFinished())
                    return;
                m_checking.remove(call.operationId);
                if (call.state == ToolCallRecord::State::AwaitingConfirmation)
                    ask(call);
            });
    connect(loop, &AgentLoop::turnFinished, this, &TerminalConfirmation::forgetWaiting);
    connect(terminal, &TerminalLines::closed, this, &TerminalConfirmation::onTerminalClosed);
}

TerminalConfirmation::~TerminalConfirmation()
{
    m_terminal->release(this);
}

void TerminalConfirmation::nobodyToAsk(const QString &operationId)
{
    // Answered from the event loop, not from inside the loop's own signal.
    QMetaObject::invokeMethod(
        this, [this, operationId] { m_loop->cannotConfirm(operationId); }, Qt::QueuedConnection);
}

void TerminalConfirmation::forgetWaiting()
{
    m_checking.clear();
    if (m_waiting.isEmpty())
        return;
    const bool shown = !m_prompted.isEmpty() && m_terminal->isReading(this);
    m_waiting.clear();
    m_prompted.clear();
    if (shown)
        m_terminal->write(QStringLiteral("\n")); // the prompt's line ends unanswered
    m_terminal->release(this);
}

void TerminalConfirmation::onRequested(const ToolCallRecord &call)
{
    if (call.priorWrites.state == PriorWrites::State::Checking) {
        m_checking.insert(call.operationId);
        return;
    }
    ask(call);
}

void TerminalConfirmation::ask(const ToolCallRecord &call)
{
    for (const QString &line : priorWritesLines(call))
        std::fprintf(stderr, "agent-cli: %s\n", qPrintable(terminalSafe(line)));
    const PriorWrites::Entry *duplicate = call.priorWrites.likelyDuplicate();
    if (m_approveAll && duplicate && !m_allowDuplicates) {
        std::fprintf(stderr,
                     "agent-cli: %s not run: it looks like %s, made before; kept that one "
                     "(pass --allow-duplicate with --yes to make another)\n",
                     qPrintable(terminalSafe(call.name)), qPrintable(terminalSafe(duplicate->id)));
        const QString operationId = call.operationId;
        const QString existing = duplicate->id;
        QMetaObject::invokeMethod(
            this, [this, operationId, existing] { m_loop->keepExisting(operationId, existing); },
            Qt::QueuedConnection);
        return;
    }
    // The arguments came from the model: shown as they are, but never as terminal commands.
    const QByteArray arguments
        = terminalSafe(
              QString::fromUtf8(QJsonDocument(call.arguments).toJson(QJsonDocument::Compact)))
              .toUtf8();
    if (m_approveAll) {
        std::fprintf(stderr, "agent-cli: confirmed %s %s (--yes)\n",
                     qPrintable(terminalSafe(call.name)), arguments.constData());
        const QString operationId = call.operationId;
        // Answered from the event loop, not from inside the loop's own signal.
        QMetaObject::invokeMethod(
            this, [this, operationId] { m_loop->confirm(operationId, true); },
            Qt::QueuedConnection);
        return;
    }
    if (m_terminal->isClosed() || !m_terminal->open()) {
        std::fprintf(stderr,
                     "agent-cli: %s needs confirmation and %s; it is not run (pass --yes to "
                     "confirm)\n",
                     qPrintable(terminalSafe(call.name)),
                     m_terminal->isClosed() ? "the terminal is closed"
                                            : "there is no terminal to ask on");
        nobodyToAsk(call.operationId);
        return;
    }
    Waiting waiting{call.operationId, {}, {}};
    if (duplicate) {
        waiting.existing = duplicate->id;
        waiting.prompt = QStringLiteral("Run %1 %2 anyway? [y: create another / k: keep %3 / "
                                        "N: no] ")
                             .arg(terminalSafe(call.name), QString::fromUtf8(arguments),
                                  terminalSafe(duplicate->id));
    } else {
        waiting.prompt = QStringLiteral("Run %1 %2? [y/N] ")
                             .arg(terminalSafe(call.name), QString::fromUtf8(arguments));
    }
    m_waiting.enqueue(waiting);
    // Shown at once when the terminal is this one's already, else when its turn comes (behind
    // an MCP server's question); wanting it again while in line changes nothing.
    if (m_terminal->isReading(this))
        promptNext();
    else
        m_terminal->want(
            this, [this] { promptNext(); }, [this](const QString &line, bool) { onLine(line); });
}

void TerminalConfirmation::promptNext()
{
    if (m_waiting.isEmpty()) {
        m_terminal->release(this);
        return;
    }
    if (!m_terminal->isReading(this) || m_prompted == m_waiting.head().operationId)
        return;
    m_prompted = m_waiting.head().operationId;
    m_terminal->write(m_waiting.head().prompt);
}

void TerminalConfirmation::onLine(const QString &line)
{
    if (m_waiting.isEmpty())
        return;
    // A line too long to keep comes as empty: not a yes.
    const QString word = line.trimmed().toLower();
    const Waiting answered = m_waiting.dequeue();
    m_prompted.clear();
    const bool keep = word == QLatin1String("k") || word == QLatin1String("keep");
    if (!answered.existing.isEmpty() && keep)
        m_loop->keepExisting(answered.operationId, answered.existing);
    else
        m_loop->confirm(answered.operationId,
                        word == QLatin1String("y") || word == QLatin1String("yes"));
    promptNext();
}

void TerminalConfirmation::onTerminalClosed()
{
    // End of input (Ctrl-D) or the terminal went away: nobody will answer what waits.
    if (m_waiting.isEmpty())
        return;
    const QQueue<Waiting> unanswered = std::exchange(m_waiting, {});
    m_prompted.clear();
    std::fprintf(stderr,
                 "\nagent-cli: the terminal closed before %lld action(s) were "
                 "confirmed; they are not run\n",
                 qlonglong(unanswered.size()));
    for (const Waiting &waiting : unanswered)
        m_loop->cannotConfirm(waiting.operationId);
    Q_EMIT terminalClosed();
}

} // namespace AgentConsole
