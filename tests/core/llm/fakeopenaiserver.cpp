#include "fakeopenaiserver.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QTcpSocket>
#include <QTimer>

namespace AgentConsole::Testing {

FakeResponse FakeResponse::json(int status, const QJsonObject &body)
{
    FakeResponse response;
    response.status = status;
    response.body = QJsonDocument(body).toJson(QJsonDocument::Compact);
    return response;
}

FakeResponse FakeResponse::models(const QStringList &ids)
{
    QJsonArray data;
    for (const QString &id : ids)
        data.append(QJsonObject{{QStringLiteral("id"), id},
                                {QStringLiteral("object"), QStringLiteral("model")},
                                {QStringLiteral("owned_by"), QStringLiteral("fake")}});
    return json(200, QJsonObject{{QStringLiteral("object"), QStringLiteral("list")},
                                 {QStringLiteral("data"), data}});
}

FakeResponse FakeResponse::error(int status, const QString &code, const QString &message)
{
    return json(status, QJsonObject{{QStringLiteral("error"),
                                     QJsonObject{{QStringLiteral("message"), message},
                                                 {QStringLiteral("type"), code},
                                                 {QStringLiteral("code"), code}}}});
}

FakeResponse FakeResponse::events(const QList<FakeChunk> &chunks)
{
    FakeResponse response;
    response.chunks = chunks;
    return response;
}

FakeResponse FakeResponse::streamedToolCall(const QString &name, const QString &arguments)
{
    return events({{Sse::role()},
                   {Sse::toolCall(0, QStringLiteral("call_0"), name, arguments)},
                   {Sse::finish(QStringLiteral("tool_calls"))},
                   {Sse::done()}});
}

FakeResponse FakeResponse::streamedAnswer(const QString &text)
{
    return events({{Sse::role()},
                   {Sse::content(text)},
                   {Sse::finish(QStringLiteral("stop"))},
                   {Sse::done()}});
}

namespace Sse {

QByteArray event(const QJsonObject &chunk)
{
    return "data: " + QJsonDocument(chunk).toJson(QJsonDocument::Compact) + "\n\n";
}

namespace {
QByteArray delta(const QJsonObject &delta, const QJsonValue &finishReason = QJsonValue::Null)
{
    return event(QJsonObject{
        {QStringLiteral("id"), QStringLiteral("chatcmpl-fake")},
        {QStringLiteral("object"), QStringLiteral("chat.completion.chunk")},
        {QStringLiteral("model"), QStringLiteral("fake-model")},
        {QStringLiteral("choices"),
         QJsonArray{QJsonObject{{QStringLiteral("index"), 0},
                                {QStringLiteral("delta"), delta},
                                {QStringLiteral("finish_reason"), finishReason}}}}});
}
} // namespace

QByteArray role()
{
    return delta({{QStringLiteral("role"), QStringLiteral("assistant")},
                  {QStringLiteral("content"), QString()}});
}

QByteArray content(const QString &text)
{
    return delta({{QStringLiteral("content"), text}});
}

QByteArray toolCall(int index, const QString &id, const QString &name, const QString &args)
{
    const QJsonObject call{{QStringLiteral("index"), index},
                           {QStringLiteral("id"), id},
                           {QStringLiteral("type"), QStringLiteral("function")},
                           {QStringLiteral("function"),
                            QJsonObject{{QStringLiteral("name"), name},
                                        {QStringLiteral("arguments"), args}}}};
    return delta({{QStringLiteral("tool_calls"), QJsonArray{call}}});
}

QByteArray toolArguments(int index, const QString &argumentsPiece)
{
    const QJsonObject call{
        {QStringLiteral("index"), index},
        {QStringLiteral("function"),
         QJsonObject{{QStringLiteral("arguments"), argumentsPiece}}}};
    return delta({{QStringLiteral("tool_calls"), QJsonArray{call}}});
}

QByteArray finish(const QString &reason)
{
    return delta(QJsonObject{}, reason);
}

QByteArray done()
{
    return "data: [DONE]\n\n";
}

QByteArray keepAlive()
{
    return ": keep-alive\n\n";
}

QByteArray reasoning(const QString &text)
{
    return delta({{QStringLiteral("reasoning_content"), text}});
}

} // namespace Sse

namespace {

QByteArray reasonPhrase(int status)
{
    switch (status) {
    case 200:
        return "OK";
    case 400:
        return "Bad Request";
    case 401:
        return "Unauthorized";
    case 402:
        return "Payment Required";
    case 403:
        return "Forbidden";
    case 404:
        return "Not Found";
    case 422:
        return "Unprocessable Entity";
    case 429:
        return "Too Many Requests";
    case 500:
        return "Internal Server Error";
    case 502:
        return "Bad Gateway";
    case 503:
        return "Service Unavailable";
    case 504:
        return "Gateway Timeout";
    default:
        return "Status";
    }
}

bool hasHeader(const QList<QPair<QByteArray, QByteArray>> &headers, const QByteArray &name)
{
    return std::any_of(headers.cbegin(), headers.cend(), [&name](const auto &header) {
        return header.first.compare(name, Qt::CaseInsensitive) == 0;
    });
}

} // namespace

// One connection: reads one request, plays its scripted response, closes.
class FakeExchange final : public QObject
{
public:
    FakeExchange(QTcpSocket *socket, FakeOpenAiServer *server)
        : QObject(server)
        , m_server(server)
        , m_socket(socket)
    {
        socket->setParent(this);
        socket->setSocketOption(QAbstractSocket::LowDelayOption, 1);
        connect(socket, &QTcpSocket::readyRead, this, &FakeExchange::readRequest);
        connect(socket, &QTcpSocket::disconnected, this, &QObject::deleteLater);
    }

private:
    void readRequest()
    {
        m_buffer += m_socket->readAll();
        if (m_index >= 0)
            return; // one request per connection; anything more is ignored
        const qsizetype headEnd = m_buffer.indexOf("\r\n\r\n");
        if (headEnd < 0)
            return;
        RecordedRequest request;
        const QList<QByteArray> lines = m_buffer.left(headEnd).split('\n');
        const QList<QByteArray> requestLine = lines.value(0).trimmed().split(' ');
        request.method = requestLine.value(0);
        request.path = requestLine.value(1);
        for (qsizetype i = 1; i < lines.size(); ++i) {
            const qsizetype colon = lines.at(i).indexOf(':');
            if (colon > 0) {
                request.headers.insert(lines.at(i).left(colon).trimmed().toLower(),
                                       lines.at(i).mid(colon + 1).trimmed());
            }
        }
        const qsizetype length = request.headers.value("content-length").toLongLong();
        if (m_buffer.size() < headEnd + 4 + length)
            return;
        request.body = m_buffer.mid(headEnd + 4, length);
        request.json = QJsonDocument::fromJson(request.body).object();
        m_index = m_server->record(request);
        m_response = m_server->nextResponse(request);
        if (m_response.closeUnanswered) {
            m_socket->disconnectFromHost();
            return;
        }
        if (m_response.headerDelayMs >= 0)
            QTimer::singleShot(m_response.headerDelayMs, this, &FakeExchange::writeHead);
    }

    void writeHead()
    {
        if (!m_response.rawHead.isEmpty()) {
            if (!write(m_response.rawHead))
                return;
            if (m_response.chunks.isEmpty()) {
                if (write(m_response.body))
                    close();
                return;
            }
            // The head said "Transfer-Encoding: chunked" itself.
            QTimer::singleShot(m_response.chunks.first().delayMs, this, [this] { sendChunk(0); });
        } else {
            writeGeneratedHead();
        }
    }

    void writeGeneratedHead()
    {
        QByteArray head = "HTTP/1.1 " + QByteArray::number(m_response.status) + ' '
                          + reasonPhrase(m_response.status) + "\r\n";
        const bool streamed = !m_response.chunks.isEmpty() || m_response.bulkCount > 0;
        if (!hasHeader(m_response.headers, "Content-Type")) {
            head += streamed ? "Content-Type: text/event-stream\r\n"
                             : "Content-Type: application/json\r\n";
        }
        for (const auto &[name, value] : std::as_const(m_response.headers))
            head += name + ": " + value + "\r\n";
        head += streamed ? QByteArray("Transfer-Encoding: chunked\r\n")
                         : "Content-Length: " + QByteArray::number(m_response.body.size())
                               + "\r\n";
        head += "Connection: close\r\n\r\n";
        if (!write(head))
            return;
        if (!streamed) {
            if (write(m_response.body))
                close();
            return;
        }
        if (m_response.chunks.isEmpty()) {
            sendChunk(0);
            return;
        }
        QTimer::singleShot(m_response.chunks.first().delayMs, this, [this] { sendChunk(0); });
    }

    void sendChunk(int index)
    {
        if (index == m_response.stallAfterChunks)
            return; // silent, socket open: the client's idle timeout must notice
        if (index == m_response.dropAfterChunks) {
            m_socket->disconnectFromHost(); // no terminating chunk: the body is cut short
            return;
        }
        if (index == m_response.chunks.size()) {
            if (m_response.bulkCount > 0) {
                connect(m_socket, &QTcpSocket::bytesWritten, this, &FakeExchange::sendBulk);
                sendBulk();
                return;
            }
            if (write("0\r\n\r\n"))
                close();
            return;
        }
        const QByteArray &bytes = m_response.chunks.at(index).bytes;
        if (!write(QByteArray::number(bytes.size(), 16) + "\r\n" + bytes + "\r\n"))
            return;
        const int next = index + 1;
        const int delay = next < m_response.chunks.size() ? m_response.chunks.at(next).delayMs : 0;
        QTimer::singleShot(delay, this, [this, next] { sendChunk(next); });
    }

    // Bulk pieces, a batch at a time, only while little is waiting to be written: memory of
    // the server stays small whatever the total.
    void sendBulk()
    {
        constexpr qint64 LowWater = 256 * 1024;
        while (m_bulkSent < m_response.bulkCount && m_socket->bytesToWrite() < LowWater) {
            QByteArray batch;
            while (m_bulkSent < m_response.bulkCount && batch.size() < 64 * 1024) {
                batch += m_response.bulkPiece;
                ++m_bulkSent;
            }
            if (!write(QByteArray::number(batch.size(), 16) + "\r\n" + batch + "\r\n"))
                return;
        }
        if (m_bulkSent == m_response.bulkCount && !m_bulkEnded) {
            m_bulkEnded = true;
            if (write("0\r\n\r\n"))
                close();
        }
    }

    // False when the client has gone: nothing more is sent.
    bool write(const QByteArray &bytes)
    {
        if (m_socket->state() != QAbstractSocket::ConnectedState)
            return false;
        m_socket->write(bytes);
        if (m_response.bulkCount == 0)
            m_socket->flush(); // bulk data goes out as the event loop writes it
        return true;
    }

    void close()
    {
        m_socket->disconnectFromHost();
        Q_EMIT m_server->responseCompleted(m_index);
    }

    FakeOpenAiServer *m_server;
    QTcpSocket *m_socket;
    QByteArray m_buffer;
    FakeResponse m_response;
    int m_index = -1;
    qint64 m_bulkSent = 0;
    bool m_bulkEnded = false;
};

FakeOpenAiServer::FakeOpenAiServer(QObject *parent)
    : QObject(parent)
{
    m_clock.start();
    connect(&m_server, &QTcpServer::newConnection, this, &FakeOpenAiServer::accept);
}

FakeOpenAiServer::~FakeOpenAiServer() = default;

bool FakeOpenAiServer::listen()
{
    return listen(QHostAddress(QHostAddress::LocalHost));
}

bool FakeOpenAiServer::listen(const QHostAddress &address)
{
    Q_ASSERT(address.isLoopback()); // tests talk to this machine only
    m_address = address;
    return m_server.listen(address, 0);
}

QUrl FakeOpenAiServer::rootUrl() const
{
    return QUrl(QStringLiteral("http://%1:%2")
                    .arg(m_address.toString())
                    .arg(m_server.serverPort()));
}

QUrl FakeOpenAiServer::baseUrl() const
{
    return QUrl(rootUrl().toString() + QStringLiteral("/v1"));
}

void FakeOpenAiServer::enqueue(const FakeResponse &response)
{
    m_script.enqueue(response);
}

qint64 FakeOpenAiServer::gapBeforeRequest(int index) const
{
    if (index <= 0 || index >= m_requests.size())
        return -1;
    return m_requests.at(index).receivedAtMs - m_requests.at(index - 1).receivedAtMs;
}

void FakeOpenAiServer::accept()
{
    while (QTcpSocket *socket = m_server.nextPendingConnection())
        new FakeExchange(socket, this); // a child of this server; deletes itself on disconnect
}

FakeResponse FakeOpenAiServer::nextResponse(const RecordedRequest &request)
{
    if (m_requireReasoning && !m_issuedReasoning.isEmpty()) {
        QStringList returned;
        const QJsonArray messages = request.json.value(QLatin1String("messages")).toArray();
        for (const QJsonValue &message : messages) {
            returned.append(
                message.toObject().value(QLatin1String("reasoning_content")).toString());
        }
        for (const QString &issued : std::as_const(m_issuedReasoning)) {
            if (!returned.contains(issued)) {
                ++m_reasoningRefusals; // DeepSeek's answer, word for word in its shape
                return FakeResponse::error(
                    400, QStringLiteral("invalid_request_error"),
                    QStringLiteral("The reasoning_content in the thinking mode must be passed "
                                   "back to the API."));
            }
        }
    }
    if (!m_script.isEmpty() && !m_script.head().issuedReasoning.isEmpty())
        m_issuedReasoning.append(m_script.head().issuedReasoning);
    if (m_script.isEmpty())
        return FakeResponse::error(500, QStringLiteral("unscripted"),
                                   QStringLiteral("no scripted response for this request"));
    return m_script.dequeue();
}

int FakeOpenAiServer::record(RecordedRequest request)
{
    request.receivedAtMs = m_clock.elapsed();
    m_requests.append(std::move(request));
    const int index = int(m_requests.size()) - 1;
    Q_EMIT requestReceived(index);
    return index;
}

} // namespace AgentConsole::Testing
