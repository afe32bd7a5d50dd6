#pragma once

#include <QJsonObject>
#include <QList>
#include <QNetworkAccessManager>
#include <QObject>
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
// once, asked over its control API, stopped with SIGTERM so that it exits normally. Its stdout
// is read line by line while it runs: the "listening" line at start, then one
// "support-sim: committed <key>" line per write held by the commitThenHang fault.
class SupportSimProcess final : public QObject
{
    Q_OBJECT

public:
    SupportSimProcess() = default;
    ~SupportSimProcess() override;

    // Starts it and waits for its "listening" line; false with the reason otherwise.
    bool start(const QStringList &extraArguments, QString *error);
    // Stops it; false when it did not exit normally.
    bool stop();
    QUrl baseUrl() const { return m_baseUrl; }
    qint64 processId() const { return m_process.processId(); }

    // A request to the sim; `path` may carry a query ("/api/v1/tickets?idempotencyKey=K").
    SimControlReply control(const QByteArray &verb, const QString &path,
                            const QByteArray &body = {},
                            const QList<std::pair<QByteArray, QByteArray>> &headers = {});
    bool putFaults(const QByteArray &json, QString *error);
    QJsonObject stats();

    // Every key the sim announced as committed (commitThenHang) since start(), in order.
    QStringList committedKeys() const { return m_committedKeys; }

Q_SIGNALS:
    // The sim committed the ticket of `key` and holds its answer (commitThenHang). Delivered
    // while the event loop runs (QSignalSpy::wait, QTRY_*).
    void committed(const QString &key);

private:
    void readStandardOutput();

    QProcess m_process;
    QUrl m_baseUrl;
    QNetworkAccessManager m_network;
    QByteArray m_startOutput; // whole lines before the "listening" one, for the error
    QByteArray m_partialLine; // stdout read so far that does not end with a newline yet
    QStringList m_committedKeys;
};

} // namespace AgentConsole::Testing
