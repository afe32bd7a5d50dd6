#include "oauthexchange.h"

#include "../http/networkfailure.h"
#include "../http/oneshotbody.h"
#include "oauthmetadata.h"

#include <QJsonDocument>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QNetworkRequest>
#include <QPointer>
#include <QUrlQuery>

namespace AgentConsole::OAuth {

Exchange::Exchange(QObject *parent)
    : Exchange(Limits(), parent)
{
}

Exchange::Exchange(Limits limits, QObject *parent)
    : QObject(parent)
    , m_limits(limits)
    , m_network(new QNetworkAccessManager(this))
{
}

Exchange::~Exchange()
{
    abortAll();
}

void Exchange::get(const QUrl &url, Done done)
{
    send("GET", url, {}, {}, {}, std::move(done));
}

void Exchange::postForm(const QUrl &url, const QUrlQuery &form, const Headers &headers, Done done)
{
    // application/x-www-form-urlencoded: '+' and the reserved characters encoded, as RFC 6749
    // appendix B asks (QUrlQuery leaves '+' as it is).
    QByteArray body;
    for (const auto &item : form.queryItems(QUrl::FullyDecoded)) {
        if (!body.isEmpty())
            body.append('&');
        body.append(QUrl::toPercentEncoding(item.first) + '='
                    + QUrl::toPercentEncoding(item.second));
    }
    send("POST", url, body, "application/x-www-form-urlencoded", headers, std::move(done));
}

void Exchange::postJson(const QUrl &url, const QJsonObject &body, Done done)
{
    send("POST", url, QJsonDocument(body).toJson(QJsonDocument::Compact), "application/json", {},
         std::move(done));
}

void Exchange::abortAll()
{
    const QList<QNetworkReply *> replies = m_network->findChildren<QNetworkReply *>();
    for (QNetworkReply *reply : replies) {
        reply->disconnect(this);
        reply->abort();
        reply->deleteLater();
    }
}

void Exchange::send(const QByteArray &verb, const QUrl &url, const QByteArray &body,
                    const QByteArray &contentType, const Headers &headers, Done done)
{
    if (!acceptableEndpoint(url)) {
        HttpAnswer refused;
        refused.outcome = HttpAnswer::Outcome::Refused;
        refused.detail = QStringLiteral("not sent: only https, or http to a loopback host");
        QMetaObject::invokeMethod(
            this, [done = std::move(done), refused] { done(refused); }, Qt::QueuedConnection);
        return;
    }
    QNetworkRequest request(url);
    request.setAttribute(QNetworkRequest::RedirectPolicyAttribute,
                         QNetworkRequest::ManualRedirectPolicy);
    request.setTransferTimeout(m_limits.timeoutMs);
    request.setRawHeader("Accept", "application/json");
    if (!contentType.isEmpty())
        request.setHeader(QNetworkRequest::ContentTypeHeader, contentType);
    for (const auto &header : headers)
        request.setRawHeader(header.first, header.second);
    // A token request is sent once (oneshotbody.h): an authorization code works only once.
    QIODevice *upload = verb == "GET" ? nullptr : Http::oneShotBody(body, this);
    QNetworkReply *reply = verb == "GET" ? m_network->get(request)
                                         : m_network->sendCustomRequest(request, verb, upload);
    if (upload)
        upload->setParent(reply);
    auto buffer = std::make_shared<QByteArray>();
    auto oversized = std::make_shared<bool>(false);
    const qsizetype maxBytes = m_limits.maxBodyBytes;
    connect(reply, &QNetworkReply::readyRead, this, [reply, buffer, oversized, maxBytes] {
        const QByteArray bytes = reply->readAll();
        if (buffer->size() + bytes.size() > maxBytes) {
            *oversized = true;
            reply->abort();
            return;
        }
        buffer->append(bytes);
    });
    connect(
        reply, &QNetworkReply::finished, this, [reply, buffer, oversized, done = std::move(done)] {
            reply->deleteLater();
            HttpAnswer answer;
            const int status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
            const int networkError = int(reply->error());
            if (*oversized) {
                answer.outcome = HttpAnswer::Outcome::Oversized;
                answer.detail = QStringLiteral("a body past the bound");
            } else if (status / 100 == 3) {
                answer.outcome = HttpAnswer::Outcome::Redirected;
                answer.status = status;
                answer.detail = QStringLiteral("HTTP %1 redirect, not followed").arg(status);
            } else if (Http::failedBelowHttp(networkError, status)) {
                const Http::NetworkFailure failure = Http::networkFailureOf(networkError);
                answer.outcome = failure == Http::NetworkFailure::TimedOut
                        || failure == Http::NetworkFailure::Aborted
                    ? HttpAnswer::Outcome::TimedOut
                    : HttpAnswer::Outcome::Unreachable;
                answer.detail = Http::networkErrorName(networkError);
            } else {
                answer.outcome = HttpAnswer::Outcome::Answered;
                answer.status = status;
                answer.body = buffer->isEmpty() ? QByteArray() : *buffer;
                if (!reply->isFinished() || reply->bytesAvailable() > 0)
                    answer.body.append(reply->readAll());
                QJsonParseError error{};
                const QJsonDocument document = QJsonDocument::fromJson(answer.body, &error);
                answer.isJson = error.error == QJsonParseError::NoError && document.isObject();
                if (answer.isJson)
                    answer.json = document.object();
                answer.detail = QStringLiteral("HTTP %1").arg(status);
            }
            done(answer);
        });
}

} // namespace AgentConsole::OAuth
