#include "terminalconfirmation.h"
#include "terminaltext.h"

#include "core/export/callwords.h"
#include "core/turn/agentloop.h"

#include <QDateTime>
#include <QJsonDocument>
#include <QSocketNotifier>

#include <cerrno>
#include <cstdio>
#include <unistd.h>

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
            said = minutes < 1 ? QStringLiteral("just now")
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

TerminalConfirmation::TerminalConfirmation(AgentLoop *loop, bool approveAll,
                                           bool allowDuplicates, QObject *parent)
    : QObject(parent)
    , m_loop(loop)
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
}

TerminalConfirmation::~TerminalConfirmation() = default;

void TerminalConfirmation::nobodyToAsk(const QString &operationId)
{
    // Answered from the event loop, not from inside the loop's own signal.
    QMetaObject::invokeMethod(
        this, [this, operationId] { m_loop->cannotConfirm(operationId); }, Qt::QueuedConnection);
}

void TerminalConfirmation::forgetWaiting()
{
    m_checking.clear();
    m_duplicateOf.clear();
    if (m_waiting.isEmpty())
        return;
    m_waiting.clear();
    m_typed.clear();
    m_notifier->setEnabled(false);
    m_terminal.write("\n"); // the [y/N] line ends unanswered
}

bool TerminalConfirmation::openTerminal()
{
    if (m_terminal.isOpen())
        return true;
    m_terminal.setFileName(QStringLiteral("/dev/tty"));
    if (!m_terminal.open(QIODevice::ReadWrite | QIODevice::Unbuffered))
        return false;
    m_notifier = std::make_unique<QSocketNotifier>(m_terminal.handle(), QSocketNotifier::Read);
    m_notifier->setEnabled(false); // read only while a confirmation waits
    connect(m_notifier.get(), &QSocketNotifier::activated, this,
            &TerminalConfirmation::onTerminalReadable);
    return true;
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
    const QByteArray arguments = terminalSafe(QString::fromUtf8(
        QJsonDocument(call.arguments).toJson(QJsonDocument::Compact))).toUtf8();
    if (m_approveAll) {
        std::fprintf(stderr, "agent-cli: confirmed %s %s (--yes)\n",
                     qPrintable(terminalSafe(call.name)),
                     arguments.constData());
        const QString operationId = call.operationId;
        // Answered from the event loop, not from inside the loop's own signal.
        QMetaObject::invokeMethod(
            this, [this, operationId] { m_loop->confirm(operationId, true); },
            Qt::QueuedConnection);
        return;
    }
    if (m_terminalClosed || !openTerminal()) {
        std::fprintf(stderr,
                     "agent-cli: %s needs confirmation and %s; it is not run (pass --yes to "
                     "confirm)\n",
                     qPrintable(terminalSafe(call.name)),
                     m_terminalClosed ? "the terminal is closed" : "there is no terminal to ask on");
        nobodyToAsk(call.operationId);
        return;
    }
    if (duplicate) {
        m_duplicateOf.insert(call.operationId, duplicate->id);
        m_terminal.write(QStringLiteral("Run %1 %2 anyway? [y: create another / k: keep %3 / "
                                        "N: no] ")
                             .arg(terminalSafe(call.name), QString::fromUtf8(arguments),
                                  terminalSafe(duplicate->id))
                             .toUtf8());
    } else {
        m_terminal.write(QStringLiteral("Run %1 %2? [y/N] ")
                             .arg(terminalSafe(call.name), QString::fromUtf8(arguments))
                             .toUtf8());
    }
    m_waiting.enqueue(call.operationId);
    m_notifier->setEnabled(true);
}

void TerminalConfirmation::onTerminalReadable()
{
    // One read(2): QFile::read() on the unbuffered terminal reads again until 256 bytes
    // came, which blocks the event loop on a line shorter than that (or fails with EIO).
    char buffer[256];
    const ssize_t got = ::read(m_terminal.handle(), buffer, sizeof buffer);
    if (got < 0 && (errno == EINTR || errno == EAGAIN))
        return; // a signal (Ctrl-C) came first; nothing was typed
    if (got <= 0) {
        // End of input (Ctrl-D) or the terminal went away: nobody will answer what waits.
        m_notifier->setEnabled(false);
        m_terminalClosed = true;
        if (!m_waiting.isEmpty())
            std::fprintf(stderr, "\nagent-cli: the terminal closed before %lld action(s) were "
                                 "confirmed; they are not run\n",
                         qlonglong(m_waiting.size()));
        while (!m_waiting.isEmpty())
            m_loop->cannotConfirm(m_waiting.dequeue());
        Q_EMIT terminalClosed();
        return;
    }
    m_typed.append(buffer, got);
    qsizetype newline;
    while ((newline = m_typed.indexOf('\n')) >= 0 && !m_waiting.isEmpty()) {
        const QByteArray line = m_typed.left(newline).trimmed().toLower();
        m_typed.remove(0, newline + 1);
        const bool approved = line == "y" || line == "yes";
        const QString operationId = m_waiting.dequeue();
        const QString existing = m_duplicateOf.take(operationId);
        if (!existing.isEmpty() && (line == "k" || line == "keep"))
            m_loop->keepExisting(operationId, existing);
        else
            m_loop->confirm(operationId, approved);
    }
    if (m_waiting.isEmpty()) {
        // What is typed next is the next question's (standard input's), not ours.
        m_notifier->setEnabled(false);
        m_typed.clear();
    }
}

} // namespace AgentConsole
