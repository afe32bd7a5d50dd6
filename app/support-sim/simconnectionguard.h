#pragma once

#include <QTcpServer>

QT_BEGIN_NAMESPACE
class QTcpSocket;
QT_END_NAMESPACE

namespace AgentConsole {

// support-sim's bounds on what a client may send (docs/SUPPORT-SIM.md, "Bounds").
struct SimLimits
{
    static constexpr qint64 kDefaultMaxBodyBytes = 1024 * 1024;
    static constexpr int kDefaultIdleTimeoutMs = 30'000;

    qint64 maxBodyBytes = kDefaultMaxBodyBytes; // a larger request body is answered 413
    int idleTimeoutMs = kDefaultIdleTimeoutMs; // a connection silent this long is closed
    // After a refusal the rest of the request is read and dropped (so that the client sees
    // the answer rather than a reset) for at most this long and this many bytes.
    int lingerMs = 2'000;
    qint64 lingerBytes = 8 * 1024 * 1024;
};

// The listening socket support-sim hands to QHttpServer (QAbstractHttpServer::bind). Qt 6.4's
// QHttpServer keeps a whole request in memory before it looks at it, and keeps idle
// connections forever; so every connection is watched here, before QHttpServer reads a byte:
// its requests are framed as they arrive (RequestMeter), a body over the limit is answered 413
// and the connection closed (by Content-Length before the body is read, a chunked one as it
// arrives), and a connection silent for idleTimeoutMs is closed (with a 408 when a request was
// half sent). A connection whose answer is held on purpose (latency, hang) is not idle.
class SimConnectionGuard final : public QTcpServer
{
    Q_OBJECT

public:
    explicit SimConnectionGuard(const SimLimits &limits, QObject *parent = nullptr);

    const SimLimits &limits() const { return m_limits; }

    // The server holds an answer to `socket` on purpose: the idle timeout waits while any is
    // held. Calls pair up; a socket the guard does not watch is ignored.
    static void holdAnswer(QTcpSocket *socket);
    static void releaseAnswer(QTcpSocket *socket);

Q_SIGNALS:
    // A request refused before QHttpServer saw it all: 413, 431 or 400.
    void refused(int status);
    // A connection closed because it was idle (`midRequest`: a 408 was sent first).
    void idleClosed(bool midRequest);

protected:
    void incomingConnection(qintptr socketDescriptor) override;

private:
    SimLimits m_limits;
};

} // namespace AgentConsole
