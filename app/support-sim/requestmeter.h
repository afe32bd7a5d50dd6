#pragma once

#include <QByteArray>
#include <QByteArrayView>

#include <string_view>

namespace AgentConsole {

// Follows the HTTP/1.1 request framing of one connection as its bytes arrive, without keeping
// them: where each request's head ends, how long its body is (Content-Length, or chunked as
// its chunks arrive) and where the next request starts. It exists so that support-sim can
// refuse a request that is too large before QHttpServer, which buffers whole requests, reads
// it (docs/SUPPORT-SIM.md, "Bounds"). It keeps at most one head (or chunk-size line) in memory.
class RequestMeter final
{
public:
    enum class Verdict {
        Continue, // within the limits so far
        BodyTooLarge, // 413: the body is, or says it will be, over the limit
        HeadTooLarge, // 431: request line and headers over the head limit
        Malformed, // 400: framing that cannot be followed (bad length, bad chunk size)
    };

    static constexpr qsizetype kMaxHeadBytes = 64 * 1024;
    static constexpr qsizetype kMaxChunkLineBytes = 1024;

    explicit RequestMeter(qint64 maxBodyBytes)
        : m_maxBodyBytes(maxBodyBytes)
    {
    }

    // The next bytes of the connection. Once a verdict other than Continue is returned the
    // meter stops and returns it again: the connection is to be answered and closed.
    Verdict feed(QByteArrayView bytes);

    // Part of a request has arrived and the rest has not (an idle close then says 408).
    bool midRequest() const { return m_state != State::Head || !m_head.isEmpty(); }
    // Requests whose last byte has arrived.
    int completedRequests() const { return m_completed; }
    // The body bytes of the current request so far (decoded, for a chunked one).
    qint64 bodyBytes() const { return m_bodyBytes; }

private:
    enum class State { Head, FixedBody, ChunkLine, ChunkData, ChunkDataEnd, Trailers, Stopped };

    Verdict stop(Verdict verdict);
    // How many of `bytes` complete the current line or head ending with `end`, or -1.
    qsizetype lineEnd(QByteArrayView bytes, std::string_view end) const;
    Verdict headComplete();
    Verdict chunkLineComplete();
    void requestComplete();

    qint64 m_maxBodyBytes;
    State m_state = State::Head;
    Verdict m_stoppedWith = Verdict::Continue;
    QByteArray m_head; // the head (or chunk line, or trailers) read so far
    qint64 m_remaining = 0; // body or chunk bytes still to come
    qint64 m_bodyBytes = 0;
    int m_completed = 0;
};

} // namespace AgentConsole
