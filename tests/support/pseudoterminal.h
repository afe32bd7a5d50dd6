#pragma once

// A terminal for a child process (agent-cli) that a test can read and type on: the child runs
// in a session of its own whose controlling terminal, its /dev/tty, is this pseudo-terminal.
#include <QByteArray>
#include <QProcess>
#include <QTest>

#include <fcntl.h>
#include <unistd.h>

namespace AgentConsole::Testing {

class PseudoTerminal final
{
public:
    PseudoTerminal()
    {
        m_master = ::posix_openpt(O_RDWR | O_NOCTTY);
        if (m_master < 0 || ::grantpt(m_master) != 0 || ::unlockpt(m_master) != 0
            || ::fcntl(m_master, F_SETFL, ::fcntl(m_master, F_GETFL) | O_NONBLOCK) != 0)
            return;
        if (const char *name = ::ptsname(m_master))
            m_slave = name;
    }
    ~PseudoTerminal()
    {
        if (m_master >= 0)
            ::close(m_master);
    }
    PseudoTerminal(const PseudoTerminal &) = delete;
    PseudoTerminal &operator=(const PseudoTerminal &) = delete;

    bool isOpen() const { return m_master >= 0 && !m_slave.isEmpty(); }
    // The terminal's own end, as a process that has it opens it (its /dev/tty).
    QString terminalPath() const { return QString::fromLocal8Bit(m_slave); }

    // `process`, once started, runs in a session of its own with this terminal as its
    // controlling one; with `asStandardInput`, the terminal is its standard input as well.
    void attach(QProcess &process, bool asStandardInput = false)
    {
        process.setChildProcessModifier([path = m_slave, asStandardInput] {
            // After fork, before exec: only async-signal-safe calls.
            ::setsid();
            const int fd = ::open(path.constData(), O_RDWR); // becomes the session's terminal
            if (fd < 0)
                return;
            if (asStandardInput)
                ::dup2(fd, STDIN_FILENO);
            if (fd != STDIN_FILENO)
                ::close(fd);
        });
    }

    // Reads what the child has written until `text` is among it; false after `timeoutMs`.
    bool waitForShown(const QByteArray &text, int timeoutMs)
    {
        return QTest::qWaitFor([&] {
            char buffer[1024];
            ssize_t got;
            while ((got = ::read(m_master, buffer, sizeof buffer)) > 0)
                m_shown.append(buffer, got);
            return m_shown.contains(text);
        }, timeoutMs);
    }
    const QByteArray &shown() const { return m_shown; }

    // The terminal goes away (a closed window): its reader reads an error, not a line.
    void hangUp()
    {
        if (m_master >= 0)
            ::close(m_master);
        m_master = -1;
    }

    // What a staff member types; "\x04" (Ctrl-D) ends the input.
    bool type(const QByteArray &keys)
    {
        return ::write(m_master, keys.constData(), size_t(keys.size())) == keys.size();
    }

private:
    int m_master = -1;
    QByteArray m_slave;
    QByteArray m_shown;
};

} // namespace AgentConsole::Testing
