#pragma once

#include "jsonrpc.h"

#include <QByteArray>
#include <QObject>
#include <QString>

namespace AgentConsole::Mcp {

// How the session reaches one MCP server: a child process over stdio, or Streamable HTTP.
// Everything is asynchronous on the transport's thread (the GUI thread in the app): start()
// and close() only begin; the signals say how it went. A transport never parses what the
// server meant; it hands whole frames (a line, a body, an SSE event's data) to the session.
class Transport : public QObject
{
    Q_OBJECT

public:
    using QObject::QObject;

    // Starts the child or checks nothing at all (HTTP connects with its first POST). Emits
    // started() or failed().
    virtual void start() = 0;
    virtual void send(const JsonRpcMessage &message) = 0;
    // A clean end: stdio closes the child's stdin and ends it if it does not exit; HTTP ends
    // its session with DELETE. Emits closed() once, also after failed().
    virtual void close() = 0;

    // The session waits for nothing more about request `id` (answered, timed out, cancelled):
    // HTTP lets go of its exchange, which a server may keep open for ever. Stdio: nothing.
    virtual void requestEnded(const QJsonValue &id) { Q_UNUSED(id) }

    // Learnt from initialize's answer; HTTP sends it as MCP-Protocol-Version afterwards.
    virtual void setProtocolVersion(const QString &version) { Q_UNUSED(version) }
    // The session is initialized: HTTP opens its GET stream for the server's own messages.
    virtual void sessionInitialized() { }

    // For the log: "stdio: my-server" or "http: https://host/mcp" (no headers, no query).
    virtual QString describe() const = 0;

    // While frameReceived() is being delivered: the id of our request on whose answer stream
    // the frame came (Streamable HTTP: the POST's SSE stream, or its resumption), so that a
    // server's request there is known to belong to it. Undefined where the transport cannot
    // tell (stdio, HTTP's GET stream).
    QJsonValue deliveringFor() const { return m_deliveringFor; }

Q_SIGNALS:
    void started();
    void frameReceived(const QByteArray &frame);
    // One request could not be delivered or answered (an HTTP error for its POST, a stream
    // that ended without its answer and cannot be resumed); the session fails that request.
    void requestFailed(const QJsonValue &id, const AgentConsole::Mcp::Error &error);
    // The transport is gone (the child died, the HTTP session expired): every request fails.
    void failed(const AgentConsole::Mcp::Error &error);
    void closed();

protected:
    QJsonValue m_deliveringFor = QJsonValue(QJsonValue::Undefined);
};

} // namespace AgentConsole::Mcp
