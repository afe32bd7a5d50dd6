#include "simconnectionguard.h"

#include "requestmeter.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QLoggingCategory>
#include <QPointer>
#include <QTcpSocket>
#include <QTimer>

#include <algorithm>

#include <sys/socket.h>

Q_LOGGING_CATEGORY(lcSimConnections, "agentconsole.sim.connections", QtWarningMsg)

namespace AgentConsole {
namespace {

QByteArray refusal(int status, const char *reason, const char *code, const QString &detail)
{
    const QByteArray body = QJsonDocument(
                                QJsonObject{{QStringLiteral("error"), QString::fromLatin1(code)},
                                            {QStringLiteral("detail"), detail}})
                                .toJson(QJsonDocument::Compact);
    return "HTTP/1.1 " + QByteArray::number(status) + ' ' + reason
        + "\r\nContent-Type: application/json\r\nContent-Length: "
        + QByteArray::number(body.size()) + "\r\nConnection: close\r\n\r\n" + body;
}

// One connection's watch: a child of its socket, so it goes with it. Its readyRead slot is
// connected before QHttpServer's, so it sees every byte first; a second one, connected after
// QHttpServer's (followServer), notes what QHttpServer left unread, so that no byte is metered
// twice when QHttpServer re-emits readyRead for the next pipelined request.
class ConnectionWatch final : public QObject
{
    Q_OBJECT // for findChild<ConnectionWatch *>

        public : ConnectionWatch(QTcpSocket *socket, SimConnectionGuard *guard)
        : QObject(socket)
        , m_socket(socket)
        , m_guard(guard)
        , m_limits(guard->limits())
        , m_meter(m_limits.maxBodyBytes)
    {
        // Enough for the largest request QHttpServer may hold whole (its head, a body at the
        // limit and chunk framing as large again); a socket never buffers more than this.
        socket->setReadBufferSize(2 * m_limits.maxBodyBytes + 2 * RequestMeter::kMaxHeadBytes);
        m_idle.setSingleShot(true);
        m_idle.setTimerType(Qt::PreciseTimer);
        m_idle.callOnTimeout(this, &ConnectionWatch::idleTimeout);
        m_idle.start(m_limits.idleTimeoutMs);
        connect(socket, &QTcpSocket::readyRead, this, &ConnectionWatch::onReadyRead);
        connect(socket, &QTcpSocket::bytesWritten, this, &ConnectionWatch::onBytesWritten);
    }

    static ConnectionWatch *of(QTcpSocket *socket)
    {
        return socket ? socket->findChild<ConnectionWatch *>(QString(), Qt::FindDirectChildrenOnly)
                      : nullptr;
    }

    // Called once QHttpServer has connected its own readyRead slot.
    void followServer()
    {
        connect(m_socket, &QTcpSocket::readyRead, this, &ConnectionWatch::afterServer);
    }

    void hold() { ++m_held; }
    void release()
    {
        if (m_held > 0 && --m_held == 0 && !m_refusing)
            m_idle.start(m_limits.idleTimeoutMs);
    }

private:
    void onReadyRead()
    {
        if (m_refusing) {
            drain();
            return;
        }
        m_idle.start(m_limits.idleTimeoutMs);
        // In QHttpServer's read transaction the bytes it has read stay in the buffer; what
        // is available past them and past what it left unread (already metered) is exactly
        // what arrived since.
        const qint64 available = m_socket->bytesAvailable();
        const qint64 metered = std::min(m_meteredUnread, available);
        m_meteredUnread = available;
        if (available <= metered)
            return;
        const QByteArray bytes = m_socket->peek(available);
        const qint64 limit = m_limits.maxBodyBytes;
        switch (m_meter.feed(QByteArrayView(bytes).sliced(metered))) {
        case RequestMeter::Verdict::Continue:
            return;
        case RequestMeter::Verdict::BodyTooLarge:
            refuse(413, "Payload Too Large", "PAYLOAD_TOO_LARGE",
                   QStringLiteral("request bodies are limited to %1 bytes").arg(limit));
            return;
        case RequestMeter::Verdict::HeadTooLarge:
            refuse(431, "Request Header Fields Too Large", "HEADERS_TOO_LARGE",
                   QStringLiteral("the request line and headers are limited to %1 bytes")
                       .arg(RequestMeter::kMaxHeadBytes));
            return;
        case RequestMeter::Verdict::Malformed:
            refuse(400, "Bad Request", "MALFORMED_REQUEST",
                   QStringLiteral("the request's length or chunks cannot be read"));
            return;
        }
    }

    // After QHttpServer's slot: it answered a request and left the bytes after it unread
    // (they were metered already), or read them all into its transaction.
    void afterServer()
    {
        if (!m_refusing)
            m_meteredUnread = m_socket->bytesAvailable();
    }

    // Answers at once and closes, without QHttpServer reading another byte of the request.
    void refuse(int status, const char *reason, const char *code, const QString &detail)
    {
        qCInfo(lcSimConnections).noquote() << "refused with" << status << "-" << detail;
        if (m_guard)
            Q_EMIT m_guard->refused(status);
        m_refusing = true;
        m_idle.stop();
        // Take the socket's reads over (this slot runs before QHttpServer's, which is
        // disconnected here and so does not run for these bytes).
        QObject::disconnect(m_socket, &QTcpSocket::readyRead, nullptr, nullptr);
        connect(m_socket, &QTcpSocket::readyRead, this, &ConnectionWatch::drain);
        if (m_socket->isTransactionStarted())
            m_socket->rollbackTransaction();
        m_socket->write(refusal(status, reason, code, detail));
        // The rest of the request is read and dropped for a while, then the connection goes.
        QTimer::singleShot(m_limits.lingerMs, this, [this] { closeNow(); });
        drain();
    }

    void drain()
    {
        m_drained += m_socket->skip(m_socket->bytesAvailable());
        if (m_drained > m_limits.lingerBytes)
            closeNow();
    }

    void onBytesWritten()
    {
        if (!m_refusing) {
            m_idle.start(m_limits.idleTimeoutMs);
            return;
        }
        // The refusal is out: say that nothing more will come (the client reads the answer
        // and the end of it), while its remaining bytes are still read and dropped.
        if (m_socket->bytesToWrite() == 0 && !m_halfClosed) {
            m_halfClosed = true;
            ::shutdown(int(m_socket->socketDescriptor()), SHUT_WR);
            connect(m_socket, &QTcpSocket::disconnected, m_socket, &QObject::deleteLater);
        }
    }

    void idleTimeout()
    {
        if (m_held > 0) {
            // An answer is held on purpose (latency, hang): that is not idleness.
            m_idle.start(m_limits.idleTimeoutMs);
            return;
        }
        const bool midRequest = m_meter.midRequest();
        qCInfo(lcSimConnections) << "closing an idle connection; mid-request:" << midRequest;
        if (m_guard)
            Q_EMIT m_guard->idleClosed(midRequest);
        QObject::disconnect(m_socket, &QTcpSocket::readyRead, nullptr, nullptr);
        if (midRequest) {
            m_socket->write(
                refusal(408, "Request Timeout", "REQUEST_TIMEOUT",
                        QStringLiteral("no byte arrived for %1 ms").arg(m_limits.idleTimeoutMs)));
        }
        // QHttpServer deletes a socket when it disconnects, unless it gave it up after a
        // parse error (Qt 6.4 then disconnects the socket's signals): delete it here too.
        connect(m_socket, &QTcpSocket::disconnected, m_socket, &QObject::deleteLater);
        m_socket->disconnectFromHost();
        if (m_socket->state() == QAbstractSocket::UnconnectedState)
            m_socket->deleteLater();
    }

    void closeNow()
    {
        m_socket->abort();
        m_socket->deleteLater();
    }

    QTcpSocket *m_socket; // the parent
    QPointer<SimConnectionGuard> m_guard;
    SimLimits m_limits;
    RequestMeter m_meter;
    QTimer m_idle;
    int m_held = 0;
    bool m_refusing = false;
    bool m_halfClosed = false;
    qint64 m_drained = 0;
    qint64 m_meteredUnread = 0; // bytes available to QHttpServer that were metered already
};

} // namespace

SimConnectionGuard::SimConnectionGuard(const SimLimits &limits, QObject *parent)
    : QTcpServer(parent)
    , m_limits(limits)
{
}

void SimConnectionGuard::holdAnswer(QTcpSocket *socket)
{
    if (auto *watch = ConnectionWatch::of(socket))
        watch->hold();
}

void SimConnectionGuard::releaseAnswer(QTcpSocket *socket)
{
    if (auto *watch = ConnectionWatch::of(socket))
        watch->release();
}

void SimConnectionGuard::incomingConnection(qintptr socketDescriptor)
{
    auto *socket = new QTcpSocket(this);
    if (!socket->setSocketDescriptor(socketDescriptor)) {
        qCWarning(lcSimConnections).noquote()
            << "cannot take a connection:" << socket->errorString();
        delete socket;
        return;
    }
    // Watched first, then offered to QHttpServer, which connects its own slots after ours.
    auto *watch = new ConnectionWatch(socket, this);
    // Qt 6.4's QHttpServer takes the socket and connects its slots while this call runs
    // (pendingConnectionAvailable), so the watch's second slot comes after them.
    addPendingConnection(socket);
    watch->followServer();
}

} // namespace AgentConsole

#include "simconnectionguard.moc"
