#include "requestmeter.h"

#include <QList>

#include <algorithm>
#include <string>

namespace AgentConsole {
namespace {

// A whole number in `base`, or -1. At most 18 decimal or 15 hex digits: both stay below 2^60,
// so neither the number nor a body's running total can overflow (16 hex digits did: fuzzing).
qint64 parseLength(QByteArrayView text, int base)
{
    text = text.trimmed();
    if (text.isEmpty() || text.size() > (base == 16 ? 15 : 18))
        return -1;
    qint64 value = 0;
    for (const char c : text) {
        int digit = -1;
        if (c >= '0' && c <= '9')
            digit = c - '0';
        else if (base == 16 && c >= 'a' && c <= 'f')
            digit = c - 'a' + 10;
        else if (base == 16 && c >= 'A' && c <= 'F')
            digit = c - 'A' + 10;
        if (digit < 0)
            return -1;
        value = value * base + digit;
    }
    return value;
}

} // namespace

RequestMeter::Verdict RequestMeter::stop(Verdict verdict)
{
    m_state = State::Stopped;
    m_stoppedWith = verdict;
    m_head.clear();
    return verdict;
}

void RequestMeter::requestComplete()
{
    ++m_completed;
    m_state = State::Head;
    m_head.clear();
    m_bodyBytes = 0;
    m_remaining = 0;
}

RequestMeter::Verdict RequestMeter::feed(QByteArrayView bytes)
{
    while (!bytes.isEmpty()) {
        switch (m_state) {
        case State::Stopped:
            return m_stoppedWith;
        case State::Head:
        case State::Trailers:
        case State::ChunkLine: {
            // Blank lines before a request are allowed (RFC 9112, 2.2).
            if (m_state == State::Head && m_head.isEmpty()) {
                while (!bytes.isEmpty() && (bytes.front() == '\r' || bytes.front() == '\n'))
                    bytes = bytes.sliced(1);
                if (bytes.isEmpty())
                    return Verdict::Continue;
            }
            const bool isChunkLine = m_state == State::ChunkLine;
            const qsizetype limit = isChunkLine ? kMaxChunkLineBytes : kMaxHeadBytes;
            const qsizetype used = lineEnd(bytes, isChunkLine ? "\r\n" : "\r\n\r\n");
            if (used < 0) {
                // Kept up to one byte past the limit: enough to know it was passed.
                const qsizetype room = std::max<qsizetype>(0, limit + 1 - m_head.size());
                m_head.append(bytes.data(), std::min(room, bytes.size()));
                if (m_head.size() > limit)
                    return stop(isChunkLine ? Verdict::Malformed : Verdict::HeadTooLarge);
                return Verdict::Continue;
            }
            if (m_head.size() + used > limit)
                return stop(isChunkLine ? Verdict::Malformed : Verdict::HeadTooLarge);
            m_head.append(bytes.data(), used);
            bytes = bytes.sliced(used);
            Verdict verdict = Verdict::Continue;
            if (m_state == State::Head)
                verdict = headComplete();
            else if (m_state == State::ChunkLine)
                verdict = chunkLineComplete();
            else
                requestComplete();
            if (verdict != Verdict::Continue)
                return stop(verdict);
            break;
        }
        case State::FixedBody:
        case State::ChunkData: {
            const qint64 taken = std::min<qint64>(m_remaining, bytes.size());
            m_remaining -= taken;
            bytes = bytes.sliced(taken);
            if (m_remaining > 0)
                return Verdict::Continue;
            if (m_state == State::FixedBody) {
                requestComplete();
            } else {
                m_state = State::ChunkDataEnd;
                m_remaining = 2; // the CRLF after the chunk's data
            }
            break;
        }
        case State::ChunkDataEnd: {
            const qint64 taken = std::min<qint64>(m_remaining, bytes.size());
            m_remaining -= taken;
            bytes = bytes.sliced(taken);
            if (m_remaining == 0) {
                m_state = State::ChunkLine;
                m_head.clear();
            }
            break;
        }
        }
    }
    return Verdict::Continue;
}

qsizetype RequestMeter::lineEnd(QByteArrayView bytes, std::string_view end) const
{
    // The end may straddle what is kept and the new bytes: look at the seam first.
    const qsizetype keep = std::min<qsizetype>(m_head.size(), qsizetype(end.size()) - 1);
    if (keep > 0) {
        const qsizetype fromNew = std::min<qsizetype>(bytes.size(), qsizetype(end.size()) - 1);
        const std::string seam = m_head.right(keep).toStdString()
            + std::string(bytes.data(), std::size_t(fromNew));
        const std::size_t at = seam.find(end);
        if (at != std::string::npos)
            return qsizetype(at + end.size()) - keep;
    }
    const std::size_t at = std::string_view(bytes.data(), std::size_t(bytes.size())).find(end);
    return at == std::string_view::npos ? -1 : qsizetype(at + end.size());
}

RequestMeter::Verdict RequestMeter::headComplete()
{
    qint64 contentLength = -1;
    bool chunked = false;
    const QList<QByteArray> lines = m_head.split('\n');
    for (qsizetype i = 1; i < lines.size(); ++i) {
        const QByteArray &line = lines.at(i);
        const qsizetype colon = line.indexOf(':');
        if (colon <= 0)
            continue;
        const QByteArray name = line.left(colon).trimmed().toLower();
        const QByteArray value = line.mid(colon + 1).trimmed().toLower();
        if (name == "content-length") {
            const qint64 length = parseLength(value, 10);
            // A length that is not a number, or two that differ, cannot be followed.
            if (length < 0 || (contentLength >= 0 && length != contentLength))
                return Verdict::Malformed;
            contentLength = length;
        } else if (name == "transfer-encoding") {
            // Only chunked is understood, and it must come last (RFC 9112, 6.1).
            if (!value.endsWith("chunked"))
                return Verdict::Malformed;
            chunked = true;
        }
    }
    m_head.clear();
    m_bodyBytes = 0;
    // Both at once is how requests are smuggled past a front end (RFC 9112, 6.3): refused.
    if (chunked && contentLength >= 0)
        return Verdict::Malformed;
    if (chunked) {
        m_state = State::ChunkLine;
        return Verdict::Continue;
    }
    if (contentLength > m_maxBodyBytes)
        return Verdict::BodyTooLarge; // answered before a byte of the body is read
    if (contentLength <= 0) {
        requestComplete();
        return Verdict::Continue;
    }
    m_state = State::FixedBody;
    m_remaining = contentLength;
    m_bodyBytes = contentLength;
    return Verdict::Continue;
}

RequestMeter::Verdict RequestMeter::chunkLineComplete()
{
    // "<hex size>[;extensions]\r\n"
    QByteArrayView line(m_head);
    line = line.first(line.size() - 2);
    const qsizetype semicolon = line.indexOf(';');
    const qint64 size = parseLength(semicolon < 0 ? line : line.first(semicolon), 16);
    m_head.clear();
    if (size < 0)
        return Verdict::Malformed;
    if (size == 0) {
        // Trailer fields, then an empty line: with the CRLF that ended this line, the
        // section ends at the first blank line.
        m_state = State::Trailers;
        m_head = QByteArrayLiteral("\r\n");
        return Verdict::Continue;
    }
    m_bodyBytes += size;
    if (m_bodyBytes > m_maxBodyBytes)
        return Verdict::BodyTooLarge; // counted as announced, before the chunk arrives
    m_state = State::ChunkData;
    m_remaining = size;
    return Verdict::Continue;
}

} // namespace AgentConsole
