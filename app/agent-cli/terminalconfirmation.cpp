#include "terminalconfirmation.h"
#include "terminaltext.h"

#include "core/turn/agentloop.h"

#include <QJsonDocument>
#include <QSocketNotifier>

#include <cerrno>
#include <cstdio>
#include <unistd.h>

namespace AgentConsole {

TerminalConfirmation::TerminalConfirmation(AgentLoop *loop, bool approveAll, QObject *parent)
    : QObject(parent)
    , m_loop(loop)
    , m_approveAll(approveAll)
{
    connect(loop, &AgentLoop::confirmationRequested, this,
            [this](const QString &, const ToolCallRecord &call) { onRequested(call); });
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
    m_terminal.write(QStringLiteral("Run %1 %2? [y/N] ")
                         .arg(terminalSafe(call.name), QString::fromUtf8(arguments))
                         .toUtf8());
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
        m_loop->confirm(m_waiting.dequeue(), approved);
    }
    if (m_waiting.isEmpty()) {
        // What is typed next is the next question's (standard input's), not ours.
        m_notifier->setEnabled(false);
        m_typed.clear();
    }
}

} // namespace AgentConsole
