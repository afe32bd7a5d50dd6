#pragma once

#include <QJsonObject>
#include <QList>
#include <QNetworkAccessManager>
#include <QProcess>
#include <QStringList>
#include <QUrl>

#include <utility>

namespace AgentConsole::Testing {

struct SimControlReply
{
    int status = 0;
    QJsonObject body;
};

// The real support-sim executable on 127.0.0.1 (a free port), for integration suites: started
// once, asked over its control API, stopped with SIGTERM so that it exits normally.
class SupportSimProcess final
{
public:
    SupportSimProcess() = default;
    ~SupportSimProcess();

    // Starts it and waits for its "listening" line; false with the reason otherwise.
    bool start(const QStringList &extraArguments, QString *error);
    // Stops it; false when it did not exit normally.
    bool stop();
    QUrl baseUrl() const { return m_baseUrl; }

    // A request to the sim; `path` may carry a query ("/api/v1/tickets?idempotencyKey=K").
    SimControlReply control(const QByteArray &verb, const QString &path,
                            const QByteArray &body = {},
                            const QList<std::pair<QByteArray, QByteArray>> &headers = {});
    bool putFaults(const QByteArray &json, QString *error);
    QJsonObject stats();

private:
    QProcess m_process;
    QUrl m_baseUrl;
    QNetworkAccessManager m_network;
};

} // namespace AgentConsole::Testing
