#include "terminallines.h"

#include <QSocketNotifier>

#include <cerrno>
#include <fcntl.h>
#include <unistd.h>

namespace AgentConsole {

TerminalLines::TerminalLines(QString path, qsizetype maxLineBytes, QObject *parent)
    : QObject(parent)
    , m_path(std::move(path))
    , m_maxLineBytes(maxLineBytes)
{
}

TerminalLines::~TerminalLines() = default;

bool TerminalLines::open()
{
    if (m_closed)
        return false;
    if (m_terminal.isOpen())
        return true;
    // Never made this process's controlling terminal by opening it (a test's pseudo-terminal),
    // and never inherited by the MCP servers' processes.
    const int fd = ::open(QFile::encodeName(m_path).constData(), O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (fd < 0)
        return false;
    if (!m_terminal.open(fd, QIODevice::ReadWrite | QIODevice::Unbuffered,
                         QFileDevice::AutoCloseHandle)) {
        ::close(fd);
        return false;
    }
    m_notifier = std::make_unique<QSocketNotifier>(m_terminal.handle(), QSocketNotifier::Read);
    m_notifier->setEnabled(false); // read only while someone wants a line
    connect(m_notifier.get(), &QSocketNotifier::activated, this, &TerminalLines::onReadable);
    return true;
}

void TerminalLines::write(const QString &text)
{
    if (m_terminal.isOpen() && !m_closed)
        m_terminal.write(text.toUtf8());
}

bool TerminalLines::isReading(const QObject *reader) const
{
    return !m_readers.isEmpty() && m_readers.constFirst().reader == reader;
}

void TerminalLines::want(const QObject *reader, std::function<void()> granted, LineHandler onLine)
{
    if (m_closed || !m_terminal.isOpen())
        return;
    for (const Reader &inLine : std::as_const(m_readers)) {
        if (inLine.reader == reader)
            return;
    }
    m_readers.append({reader, std::move(granted), std::move(onLine)});
    if (m_readers.size() > 1)
        return;
    m_notifier->setEnabled(true);
    if (m_readers.constFirst().granted)
        m_readers.constFirst().granted();
}

void TerminalLines::release(const QObject *reader)
{
    const bool wasReading = isReading(reader);
    m_readers.removeIf([reader](const Reader &inLine) { return inLine.reader == reader; });
    if (!wasReading)
        return;
    dropTyped();
    if (m_readers.isEmpty()) {
        // What is typed next is standard input's (the next question), not ours.
        m_notifier->setEnabled(false);
        return;
    }
    const std::function<void()> granted = m_readers.constFirst().granted;
    if (granted)
        granted();
}

void TerminalLines::dropTyped()
{
    m_typed.clear();
    m_discarding = false;
}

void TerminalLines::onReadable()
{
    // One read(2) of what the terminal has: QFile::read() on the unbuffered terminal reads
    // again until its buffer is full, which blocks the event loop on a shorter line.
    char buffer[4096];
    const ssize_t got = ::read(m_terminal.handle(), buffer, sizeof buffer);
    if (got < 0 && (errno == EINTR || errno == EAGAIN))
        return; // a signal (Ctrl-C) came first; nothing was typed
    if (got <= 0) {
        m_notifier->setEnabled(false);
        m_closed = true;
        m_readers.clear();
        dropTyped();
        Q_EMIT closed();
        return;
    }
    m_typed.append(buffer, got);
    deliverLines();
}

void TerminalLines::deliverLines()
{
    qsizetype newline;
    while (!m_readers.isEmpty() && (newline = m_typed.indexOf('\n')) >= 0) {
        QByteArray line = m_typed.left(newline);
        m_typed.remove(0, newline + 1);
        if (line.endsWith('\r'))
            line.chop(1);
        const bool tooLong = m_discarding || line.size() > m_maxLineBytes;
        m_discarding = false;
        // A copy: the reader may release its turn (and so its handler) while it reads.
        const LineHandler onLine = m_readers.constFirst().onLine;
        onLine(tooLong ? QString() : QString::fromUtf8(line), tooLong);
    }
    if (m_typed.size() > m_maxLineBytes) {
        m_typed.clear();
        m_discarding = true;
    }
}

} // namespace AgentConsole
