#pragma once

#include <QByteArray>
#include <QList>

namespace AgentConsole {

// One dispatched server-sent event: its `event:` name (empty when none was given) and its
// `data:` lines joined with '\n'.
struct SseEvent
{
    QByteArray event;
    QByteArray data;

    friend bool operator==(const SseEvent &, const SseEvent &) = default;
};

// What one feed() produced. `progress` is true when the bytes carried anything but comment
// lines (": keep-alive") and blank lines: a server that only sends keep-alives is alive but
// not answering, so an idle timeout must not be restarted by them.
struct SseChunk
{
    QList<SseEvent> events;
    bool progress = false;
    // A line or an event grew past SseStream::MaxLineBytes: the stream cannot be read. Its
    // bytes were not kept; every later feed() reports this again and yields nothing.
    bool overflow = false;
};

// An incremental parser of the text/event-stream format: bytes go in as they arrive, in pieces
// of any size; complete events come out. Lines end with "\n", "\r\n" or "\r", also when the
// two bytes of "\r\n" arrive in different reads. Shared by the model client (a chat completion
// stream is never resumed, so it ignores ids) and the MCP client, which resumes a broken stream
// with the last event id after the server's `retry:` delay (lastEventId(), retryMs()).
class SseStream final
{
public:
    // One line, and the data of one event, at most this long (DESIGN.md, "Bounds"): a server
    // that sends more is not streaming a chat completion, and its bytes are not buffered.
    static constexpr qsizetype MaxLineBytes = 1024 * 1024;

    explicit SseStream(qsizetype maxLineBytes = MaxLineBytes)
        : m_maxLineBytes(maxLineBytes)
    {
    }

    bool hasOverflowed() const { return m_overflow; }
    // The last `id:` field seen (the stream's "last event ID buffer"); empty when none came.
    const QByteArray &lastEventId() const { return m_lastEventId; }
    // The last valid `retry:` field (ASCII digits only), in milliseconds; -1 when none came.
    qint64 retryMs() const { return m_retryMs; }

    SseChunk feed(const QByteArray &bytes);
    // The end of the stream. An event whose lines are complete but whose closing blank line
    // never came is still dispatched (lenient: some servers close right after their last
    // "data: [DONE]\n"); an unterminated last line is dropped, as it may be cut short.
    QList<SseEvent> finish();

private:
    // Returns true when the line counted as progress.
    bool takeLine(const QByteArray &line, QList<SseEvent> *events);
    void dispatch(QList<SseEvent> *events);

    qsizetype m_maxLineBytes;
    bool m_overflow = false;
    QByteArray m_line; // the current line, not yet terminated
    QByteArray m_data; // data lines of the current event
    QByteArray m_event; // event name of the current event
    QByteArray m_lastEventId;
    qint64 m_retryMs = -1;
    bool m_hasData = false; // a data field was seen (it may be empty)
    bool m_afterCr = false; // the last byte was '\r': a following '\n' belongs to it
};

} // namespace AgentConsole
