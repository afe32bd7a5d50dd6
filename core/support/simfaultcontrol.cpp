#include "simfaultcontrol.h"

#include "../http/urljoin.h"
#include "../telemetry/logging.h"

#include <QCoreApplication>
#include <QJsonDocument>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QNetworkRequest>

namespace AgentConsole {
namespace {

// What the fault panel says when support-sim did not take the faults, in the window's language
// (docs/TRANSLATIONS.md); agent-cli installs no translator and keeps the English source.
struct SimWords
{
    Q_DECLARE_TR_FUNCTIONS(AgentConsole::SimFaultControl)
};

// The sim's 400 detail ("sim faults: routes.logistics.statsu: unknown key") says which key it
// refused: kept for staff, on one line and bounded, since any server could be answering.
QString refusalDetail(const QByteArray &body)
{
    QString detail = QJsonDocument::fromJson(body)
                         .object()
                         .value(QLatin1String("detail"))
                         .toString()
                         .simplified();
    if (detail.size() > 200)
        detail = detail.left(200) + QStringLiteral("…");
    return detail;
}

} // namespace

SimFaultControl::SimFaultControl(const QUrl &backendUrl, QObject *parent)
    : QObject(parent)
    , m_backendUrl(backendUrl)
    , m_network(new QNetworkAccessManager(this))
{
    // The control API answers where it is asked; a redirect is not followed anywhere.
    m_network->setRedirectPolicy(QNetworkRequest::ManualRedirectPolicy);
}

SimFaultControl::~SimFaultControl()
{
    if (QNetworkReply *reply = m_reply) {
        reply->disconnect(this);
        reply->abort();
        reply->deleteLater();
    }
}

void SimFaultControl::put(const QJsonObject &faults)
{
    enqueue({false, faults});
}

void SimFaultControl::reset()
{
    enqueue({true, {}});
}

void SimFaultControl::enqueue(Request request)
{
    if (isBusy()) {
        m_next = std::move(request); // only the latest matters: it is what the sim must hold
        return;
    }
    send(request);
}

void SimFaultControl::send(const Request &request)
{
    m_sent = request;
    m_received.clear();
    m_overflow = false;
    QNetworkRequest http(Http::joinPath(m_backendUrl,
                                        request.reset ? QStringLiteral("/sim/faults/reset")
                                                      : QStringLiteral("/sim/faults")));
    http.setHeader(QNetworkRequest::ContentTypeHeader, QByteArray("application/json"));
    http.setAttribute(QNetworkRequest::RedirectPolicyAttribute,
                      QNetworkRequest::ManualRedirectPolicy);
    http.setTransferTimeout(m_timeoutMs);
    QNetworkReply *reply = request.reset
        ? m_network->post(http, QByteArray())
        : m_network->put(http, QJsonDocument(request.faults).toJson(QJsonDocument::Compact));
    m_reply = reply;
    connect(reply, &QNetworkReply::readyRead, this, [this, reply] {
        if (reply != m_reply)
            return;
        m_received += reply->read(kMaxAnswerBytes + 1 - m_received.size());
        if (m_received.size() > kMaxAnswerBytes) {
            m_overflow = true;
            reply->abort(); // finished follows
        }
    });
    connect(reply, &QNetworkReply::finished, this, &SimFaultControl::onFinished);
}

void SimFaultControl::onFinished()
{
    QNetworkReply *reply = m_reply;
    if (!reply)
        return;
    m_reply = nullptr;
    reply->disconnect(this);
    if (!m_overflow)
        m_received += reply->read(kMaxAnswerBytes + 1 - m_received.size());
    const int status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
    const QString error = reply->errorString();
    reply->deleteLater();

    SimFaultAnswer answer;
    answer.reset = m_sent.reset;
    answer.httpStatus = status;
    const QString what = m_sent.reset ? QStringLiteral("POST /sim/faults/reset")
                                      : QStringLiteral("PUT /sim/faults");
    if (m_overflow || m_received.size() > kMaxAnswerBytes) {
        answer.status = SimFaultAnswer::Status::Unreachable;
        answer.reason = SimWords::tr("support-sim sent an answer too large to read; its "
                                     "faults may not be the ones set");
    } else if (status == 0) {
        answer.status = SimFaultAnswer::Status::Unreachable;
        answer.reason = SimWords::tr("support-sim did not answer; its faults were not "
                                     "changed");
    } else if (status == 200) {
        answer.status = SimFaultAnswer::Status::Applied;
        answer.faults = QJsonDocument::fromJson(m_received).object();
    } else if (status == 400) {
        answer.status = SimFaultAnswer::Status::Refused;
        const QString detail = refusalDetail(m_received);
        answer.reason = detail.isEmpty()
            ? SimWords::tr("support-sim refused the faults; its old faults stay")
            : SimWords::tr("support-sim refused the faults (%1); its old faults stay").arg(detail);
    } else if (status == 404) {
        answer.status = SimFaultAnswer::Status::Refused;
        answer.reason = SimWords::tr("the REST backend has no fault control: it is not a "
                                     "support-sim");
    } else {
        answer.status = SimFaultAnswer::Status::Refused;
        answer.reason = SimWords::tr("support-sim answered HTTP %1 to the faults; they may "
                                     "not be set")
                            .arg(status);
    }
    if (answer.isApplied()) {
        qCInfo(lcFaults).noquote() << what << "applied at" << m_backendUrl.host();
    } else {
        // The URL and the transport's words are for the local log only.
        qCWarning(lcFaults).noquote()
            << what << "to" << m_backendUrl.toDisplayString(QUrl::RemoveUserInfo)
            << "failed:" << (status ? QStringLiteral("HTTP %1").arg(status) : error) << "-"
            << answer.reason;
    }
    // The next request, if any, goes before the answer is told: a receiver may set faults
    // again from its slot, and must find the queue as it is.
    if (m_next) {
        const Request next = std::move(*m_next);
        m_next.reset();
        send(next);
    }
    Q_EMIT answered(answer);
}

} // namespace AgentConsole
