#pragma once

#include "mcptransport.h"

#include <QHash>
#include <QPointer>
#include <QUrl>

#include <memory>

class QNetworkAccessManager;

namespace AgentConsole::OAuth {
class Authorizer;
}

namespace AgentConsole::Mcp {

// MCP's Streamable HTTP transport: every message is POSTed to the one endpoint, and the answer
// is either a JSON body or an SSE stream that carries it (and the server's requests and
// notifications before it). The Mcp-Session-Id the server gives at initialize goes on every
// later request, MCP-Protocol-Version once it is negotiated; a GET stream carries the server's
// own messages. A stream that breaks before its answer came is resumed with GET and
// Last-Event-ID after the server's `retry:` delay, a bounded number of times. Redirects are
// never followed (headers may carry credentials). Asynchronous on the owning thread.
class HttpTransport final : public Transport
{
    Q_OBJECT

public:
    struct Options
    {
        QUrl url;
        QHash<QByteArray, QByteArray> headers; // e.g. Authorization; never logged
        qsizetype maxFrameBytes = 4 * 1024 * 1024;
        // No byte for this long ends an exchange (QNetworkRequest's transfer timeout); the
        // session bounds each request's answer itself, this bounds a silent socket.
        int idleTimeoutMs = 5 * 60 * 1000;
        int defaultRetryMs = 1000; // before resuming a stream whose server named no delay
        int maxRetryMs = 60 * 1000; // a server's `retry:` is capped here
        int maxReconnects = 5; // resumptions of one stream without a message in between
        bool openServerStream = true; // the GET stream after initialization
        int closeTimeoutMs = 2000; // the DELETE that ends the session
        // The server's OAuth sign-in (docs/MCP.md, "Servers that need sign-in"); null: none.
        // Its token goes on every request unless `headers` set Authorization themselves; a
        // request refused with 401, or 403 insufficient_scope, is held while it gets a new
        // token and sent again, at most maxAuthRetries times.
        QPointer<OAuth::Authorizer> authorizer;
        int maxAuthRetries = 3;
    };

    explicit HttpTransport(Options options, QObject *parent = nullptr);
    ~HttpTransport() override;

    void start() override;
    void send(const JsonRpcMessage &message) override;
    void close() override;
    void requestEnded(const QJsonValue &id) override;
    void setProtocolVersion(const QString &version) override;
    void sessionInitialized() override;
    QString describe() const override;

    QByteArray sessionId() const;

private:
    class Private;
    std::unique_ptr<Private> d;
};

} // namespace AgentConsole::Mcp
