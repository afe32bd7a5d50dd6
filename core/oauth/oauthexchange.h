#pragma once

#include <QByteArray>
#include <QJsonObject>
#include <QList>
#include <QObject>
#include <QPair>
#include <QUrl>

#include <functional>

class QNetworkAccessManager;
class QUrlQuery;

namespace AgentConsole::OAuth {

// What one exchange with a metadata, registration or token endpoint came back with.
struct HttpAnswer
{
    enum class Outcome {
        Answered, // an HTTP status (any) with a body within the bound
        Unreachable, // no HTTP answer: refused, reset, TLS, DNS
        TimedOut,
        Oversized, // a body past the bound
        Redirected, // a 3xx: never followed (a token or a code would go to another origin)
        Refused, // not sent: the URL is not acceptable (plain http off loopback, ...)
    };

    Outcome outcome = Outcome::Unreachable;
    int status = 0;
    QByteArray body;
    QJsonObject json; // the body as a JSON object, when it is one
    bool isJson = false;
    QString detail; // for the local log

    bool ok() const { return outcome == Outcome::Answered && status / 100 == 2; }
};

// The HTTP client of the sign-in: GET and POST on the thread that owns it, asynchronous,
// each bounded (transfer timeout, 64 KiB body) and never following redirects. It sends no
// credentials but those a call passes (a token endpoint's Basic header, a form's secret).
class Exchange final : public QObject
{
    Q_OBJECT

public:
    using Done = std::function<void(const HttpAnswer &)>;
    using Headers = QList<QPair<QByteArray, QByteArray>>;

    struct Limits
    {
        int timeoutMs = 15000;
        qsizetype maxBodyBytes = 64 * 1024;
    };

    explicit Exchange(QObject *parent = nullptr);
    Exchange(Limits limits, QObject *parent = nullptr);
    ~Exchange() override;

    void get(const QUrl &url, Done done);
    void postForm(const QUrl &url, const QUrlQuery &form, const Headers &headers, Done done);
    void postJson(const QUrl &url, const QJsonObject &body, Done done);
    // Ends every exchange in flight; their `done` is not called.
    void abortAll();

private:
    void send(const QByteArray &verb, const QUrl &url, const QByteArray &body,
              const QByteArray &contentType, const Headers &headers, Done done);

    Limits m_limits;
    QNetworkAccessManager *m_network;
};

} // namespace AgentConsole::OAuth
