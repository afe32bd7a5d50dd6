#pragma once

#include <QJsonObject>
#include <QObject>
#include <QPointer>
#include <QString>
#include <QUrl>

#include <optional>

QT_BEGIN_NAMESPACE
class QNetworkAccessManager;
class QNetworkReply;
QT_END_NAMESPACE

namespace AgentConsole {

// What support-sim's control API answered (docs/SUPPORT-SIM.md, "Control API").
struct SimFaultAnswer
{
    enum class Status {
        Applied, // 200: the sim's faults are now the ones sent (or none, after a reset)
        Refused, // it answered, but did not take them (400 INVALID_FAULTS, 404, ...)
        Unreachable, // no answer: refused connection, timeout, a body over the bound
    };
    Status status = Status::Unreachable;
    bool reset = false; // the request was POST /sim/faults/reset
    int httpStatus = 0; // 0 when no answer came
    QJsonObject faults; // Applied PUT: the faults as the sim now holds them
    // Refused or Unreachable: one line for staff, naming no URL (the sim's own 400 detail,
    // which names the offending key, is kept). Details go to the local log.
    QString reason;

    bool isApplied() const { return status == Status::Applied; }
};

// Sends a fault plan's "sim" section to support-sim while the console runs: PUT
// {backend}/sim/faults with the body, or POST {backend}/sim/faults/reset to clear it. On the
// thread that owns it (the GUI thread), asynchronous, each request bounded by a transfer
// timeout. Requests are serialized and coalesced: while one is in flight only the latest of
// the next ones is kept, and sent when it ends, so that the sim ends with the last faults set
// whatever the order in which connections would have arrived. Never throws; every request
// sent ends in exactly one answered().
class SimFaultControl final : public QObject
{
    Q_OBJECT

public:
    static constexpr int kDefaultTimeoutMs = 3000;
    // A control answer is a fault plan echoed back; anything longer is not a support-sim.
    static constexpr qint64 kMaxAnswerBytes = 1024 * 1024;

    // `backendUrl` is the REST backend's base (the API lives under /api/v1, control under /sim).
    explicit SimFaultControl(const QUrl &backendUrl, QObject *parent = nullptr);
    ~SimFaultControl() override;

    QUrl backendUrl() const { return m_backendUrl; }
    void setTimeoutMs(int timeoutMs) { m_timeoutMs = timeoutMs; }

    void put(const QJsonObject &faults);
    void reset();
    bool isBusy() const { return !m_reply.isNull(); }

Q_SIGNALS:
    void answered(const SimFaultAnswer &answer);

private:
    struct Request
    {
        bool reset = false;
        QJsonObject faults;
    };
    void enqueue(Request request);
    void send(const Request &request);
    void onFinished();

    QUrl m_backendUrl;
    QNetworkAccessManager *m_network; // a child of this object
    QPointer<QNetworkReply> m_reply; // in flight; owned until finished, then deleteLater()
    Request m_sent;
    QByteArray m_received;
    bool m_overflow = false;
    std::optional<Request> m_next;
    int m_timeoutMs = kDefaultTimeoutMs;
};

} // namespace AgentConsole

Q_DECLARE_METATYPE(AgentConsole::SimFaultAnswer)
