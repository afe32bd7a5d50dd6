#include "standardinputlines.h"

#include <QSocketNotifier>

#include <cerrno>
#include <fcntl.h>
#include <unistd.h>

namespace AgentConsole {

StandardInputLines::StandardInputLines(int maxChars, QObject *parent)
    : QObject(parent)
    , m_maxChars(maxChars)
    // UTF-8 takes at most three bytes per UTF-16 unit (four per surrogate pair), and a
    // line's spaces at both ends do not count: a margin, the characters are counted after.
    , m_maxBytes(qsizetype(maxChars) * 3 + 1024)
    , m_terminal(::isatty(STDIN_FILENO) == 1)
{
    if (::fcntl(STDIN_FILENO, F_GETFD) < 0) {
        m_atEnd = true; // no standard input at all
        return;
    }
    m_notifier = std::make_unique<QSocketNotifier>(STDIN_FILENO, QSocketNotifier::Read);
    m_notifier->setEnabled(false);
    connect(m_notifier.get(), &QSocketNotifier::activated, this, &StandardInputLines::onReadable);
}

StandardInputLines::~StandardInputLines() = default;

void StandardInputLines::next()
{
    // From a fresh event-loop pass: the caller may be inside a signal of its own.
    QMetaObject::invokeMethod(
        this,
        [this] {
            if (!deliver() && m_notifier)
                m_notifier->setEnabled(true);
        },
        Qt::QueuedConnection);
}

void StandardInputLines::onReadable()
{
    // One read(2) of what is there: the notifier said it would not block. A terminal gives
    // a line at a time; a pipe what it holds.
    char buffer[4096];
    const ssize_t got = ::read(STDIN_FILENO, buffer, sizeof buffer);
    if (got < 0 && errno == EINTR)
        return; // a signal came first; the notifier calls again
    if (got <= 0) {
        m_atEnd = true;
    } else if (m_discarding) {
        const QByteArrayView part(buffer, got);
        const qsizetype newline = part.indexOf('\n');
        if (newline >= 0) {
            m_discarding = false;
            m_pending.append(part.sliced(newline + 1));
            ++m_lines;
            m_notifier->setEnabled(false);
            Q_EMIT lineRead(QString(), m_lines, true);
            return;
        }
    } else {
        m_pending.append(buffer, got);
        if (!m_pending.contains('\n') && m_pending.size() > m_maxBytes) {
            m_pending.clear();
            m_discarding = true;
        }
    }
    if (deliver())
        m_notifier->setEnabled(false);
}

bool StandardInputLines::deliver()
{
    qsizetype newline = m_pending.indexOf('\n');
    if (newline < 0 && m_atEnd && m_discarding) {
        m_discarding = false;
        Q_EMIT lineRead(QString(), ++m_lines, true);
        return true;
    }
    if (newline < 0 && m_atEnd && !m_pending.isEmpty())
        newline = m_pending.size(); // the last line has no end-of-line
    if (newline < 0) {
        if (!m_atEnd)
            return false;
        Q_EMIT ended();
        return true;
    }
    QByteArray line = m_pending.left(newline);
    m_pending.remove(0, newline + 1);
    if (line.endsWith('\r'))
        line.chop(1);
    const QString text = QString::fromUtf8(line);
    ++m_lines;
    const bool tooLong = text.trimmed().size() > m_maxChars;
    Q_EMIT lineRead(tooLong ? QString() : text, m_lines, tooLong);
    return true;
}

} // namespace AgentConsole
