#pragma once

#include <QByteArray>
#include <QElapsedTimer>
#include <QHash>
#include <QHostAddress>
#include <QJsonObject>
#include <QList>
#include <QObject>
#include <QPair>
#include <QQueue>
#include <QString>
#include <QStringList>
#include <QTcpServer>
#include <QUrl>

namespace AgentConsole::Testing {

// Raw bytes written to the socket after `delayMs` (counted from the previous piece).
struct FakeChunk
{
    QByteArray bytes;
    int delayMs = 0;
};

// How the server answers one request. With `chunks` the body is sent piece by piece with
// chunked transfer encoding (as OpenAI streams); otherwise `body` is sent with a length.
struct FakeResponse
{
    int status = 200;
    QList<QPair<QByteArray, QByteArray>> headers;
    QByteArray body;
    QList<FakeChunk> chunks;
    int headerDelayMs = 0;     // wait before the status line; -1: never answer at all
    int stallAfterChunks = -1; // after this many chunks send nothing more, keep the socket open
    int dropAfterChunks = -1;  // after this many chunks close the socket mid-body
    // Read the whole request, then close the connection without a byte of answer: where Qt's
    // HTTP client would send a request again by itself (http/oneshotbody.h).
    bool closeUnanswered = false;
    // Sent as it is instead of the status line and headers the server would write: interim
    // 1xx responses, broken status lines, odd headers. `body` (or the chunks) follows as usual
    // but framed by nothing: the head must say how (or the close ends the body).
    QByteArray rawHead;
    // After the chunks: `bulkPiece` sent `bulkCount` times as further chunks, written only as
    // fast as the client reads, so that tens of MB cost the server no memory.
    QByteArray bulkPiece;
    qint64 bulkCount = 0;
    // The reasoning_content this answer returns with its tool calls (the caller puts it in the
    // chunks too). With requireReasoningBack(), every later request must send it back.
    QString issuedReasoning;

    static FakeResponse json(int status, const QJsonObject &body);
    // An OpenAI-style error: {"error": {"message", "type", "code"}}.
    static FakeResponse error(int status, const QString &code, const QString &message);
    static FakeResponse events(const QList<FakeChunk> &chunks);
    // GET /v1/models as OpenAI answers it: {"object": "list", "data": [{"id": ...}, ...]}.
    static FakeResponse models(const QStringList &ids);
    // One streamed model message that calls one tool ("call_0"), or that answers `text`.
    static FakeResponse streamedToolCall(const QString &name, const QString &arguments);
    static FakeResponse streamedAnswer(const QString &text);
};

// Builders for the pieces of an OpenAI chat completion stream.
namespace Sse {
QByteArray event(const QJsonObject &chunk); // "data: {...}\n\n"
QByteArray role();                          // the first delta: role only, no content
QByteArray content(const QString &text);
QByteArray toolCall(int index, const QString &id, const QString &name, const QString &args);
QByteArray toolArguments(int index, const QString &argumentsPiece);
QByteArray finish(const QString &reason);
QByteArray done();      // "data: [DONE]\n\n"
QByteArray keepAlive(); // ": keep-alive\n\n", as DeepSeek sends under load
QByteArray reasoning(const QString &text); // a thinking model's delta: reasoning_content
} // namespace Sse

// What the server saw of one request.
struct RecordedRequest
{
    QByteArray method;
    QByteArray path;
    QHash<QByteArray, QByteArray> headers; // names in lower case
    QByteArray body;
    QJsonObject json;
    qint64 receivedAtMs = 0; // since the server started
};

// A fake OpenAI-compatible server on 127.0.0.1 with raw control over bytes and timing.
// Requests are answered in order from a script; a request without a scripted response gets a
// 500 (and is recorded, so that a test sees it). Every connection is closed after its answer.
class FakeOpenAiServer final : public QObject
{
    Q_OBJECT

public:
    explicit FakeOpenAiServer(QObject *parent = nullptr);
    ~FakeOpenAiServer() override;

    bool listen();                 // on 127.0.0.1, a free port
    bool listen(const QHostAddress &address); // another loopback address, e.g. 127.0.0.2
    QUrl baseUrl() const;          // http://127.0.0.1:<port>/v1
    QUrl rootUrl() const;          // http://127.0.0.1:<port>
    void enqueue(const FakeResponse &response);
    // DeepSeek's thinking-mode rule: once an answer carried issuedReasoning, a later request
    // whose assistant messages lack that reasoning_content gets DeepSeek's 400 instead of its
    // scripted response (which stays queued).
    void requireReasoningBack(bool on) { m_requireReasoning = on; }
    int reasoningRefusals() const { return m_reasoningRefusals; }

    const QList<RecordedRequest> &requests() const { return m_requests; }
    int requestCount() const { return int(m_requests.size()); }
    // Forgets the requests recorded so far, so that a long run (the soak) keeps its memory
    // flat; the next request is index 0 again.
    void clearRequests() { m_requests.clear(); }
    // Milliseconds between the arrival of request `index` and the one before it.
    qint64 gapBeforeRequest(int index) const;

Q_SIGNALS:
    void requestReceived(int index);
    void responseCompleted(int index); // the whole answer was written and the socket closed

private:
    void accept();
    FakeResponse nextResponse(const RecordedRequest &request);
    int record(RecordedRequest request);

    friend class FakeExchange;

    QTcpServer m_server;
    QElapsedTimer m_clock;
    QQueue<FakeResponse> m_script;
    QList<RecordedRequest> m_requests;
    QHostAddress m_address = QHostAddress(QHostAddress::LocalHost);
    bool m_requireReasoning = false;
    QStringList m_issuedReasoning;
    int m_reasoningRefusals = 0;
};

} // namespace AgentConsole::Testing
