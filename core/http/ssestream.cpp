#include "ssestream.h"

namespace AgentConsole {

SseChunk SseStream::feed(const QByteArray &bytes)
{
    SseChunk chunk;
    if (m_overflow) {
        chunk.overflow = true;
        return chunk;
    }
    for (const char c : bytes) {
        if (m_afterCr) {
            m_afterCr = false;
            if (c == '\n')
                continue; // the second half of "\r\n"
        }
        if (c == '\r' || c == '\n') {
            m_afterCr = c == '\r';
            chunk.progress = takeLine(m_line, &chunk.events) || chunk.progress;
            m_line.clear();
            if (m_overflow) {
                chunk.overflow = true;
                return chunk;
            }
            continue;
        }
        if (m_line.size() >= m_maxLineBytes) {
            // Refused without keeping it: one 400 MB line must not take 400 MB.
            m_overflow = true;
            m_line = QByteArray();
            m_data = QByteArray();
            chunk.overflow = true; // the events before it were complete: the caller has them
            return chunk;
        }
        m_line.append(c);
        // Bytes of a line that is not a comment are progress even before the line is
        // complete: a long JSON chunk may take several reads.
        if (!m_line.startsWith(':'))
            chunk.progress = true;
    }
    return chunk;
}

QList<SseEvent> SseStream::finish()
{
    QList<SseEvent> events;
    if (m_overflow)
        return events;
    m_line.clear();
    m_afterCr = false;
    dispatch(&events);
    return events;
}

bool SseStream::takeLine(const QByteArray &line, QList<SseEvent> *events)
{
    if (line.isEmpty()) {
        dispatch(events);
        return false;
    }
    if (line.startsWith(':'))
        return false; // a comment, e.g. DeepSeek's ": keep-alive"

    const qsizetype colon = line.indexOf(':');
    const QByteArray field = colon < 0 ? line : line.left(colon);
    QByteArray value = colon < 0 ? QByteArray() : line.mid(colon + 1);
    if (value.startsWith(' '))
        value.remove(0, 1);

    if (field == "data") {
        if (m_data.size() + value.size() + 1 > m_maxLineBytes) {
            m_overflow = true; // many short data lines of one event: the same bound
            m_data = QByteArray();
            return true;
        }
        if (m_hasData)
            m_data.append('\n');
        m_data.append(value);
        m_hasData = true;
    } else if (field == "event") {
        m_event = value;
    } else if (field == "id") {
        // A NUL makes the field void (the SSE rules); the line bound already caps its size.
        if (!value.contains('\0'))
            m_lastEventId = value;
    } else if (field == "retry") {
        bool digitsOnly = !value.isEmpty() && value.size() <= 10;
        for (const char c : value)
            digitsOnly = digitsOnly && c >= '0' && c <= '9';
        if (digitsOnly)
            m_retryMs = value.toLongLong();
    }
    return true;
}

void SseStream::dispatch(QList<SseEvent> *events)
{
    if (m_hasData)
        events->append({m_event, m_data});
    m_data.clear();
    m_event.clear();
    m_hasData = false;
}

} // namespace AgentConsole
