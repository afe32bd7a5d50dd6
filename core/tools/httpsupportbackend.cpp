#include "httpsupportbackend.h"

#include "../telemetry/logging.h"

#include <QCoreApplication>
#include <QDateTime>
#include <QEventLoop>
#include <QJsonDocument>
#include <QMetaEnum>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QNetworkRequest>
#include <QThread>
#include <QTimer>

namespace AgentConsole {
namespace {

using Millis = std::chrono::milliseconds;

// How often the local loop looks at the attempt's cancellation token: short enough that an
// abandoned attempt gives its pool thread back within a few milliseconds.
constexpr int kCancellationPollMs = 10;
// A Retry-After beyond a day is nonsense; the retry policy caps what it honours anyway.
constexpr qint64 kMaxRetryAfterSeconds = 86'400;

struct DeleteLater
{
    void operator()(QObject *object) const { object->deleteLater(); }
};

// One manager per pool thread: a QNetworkAccessManager and its replies belong to the thread
// that created them. It is released when that thread finishes, while Qt's per-thread data
// still exists (a thread_local destructor would run after Qt tore it down).
QNetworkAccessManager &threadManager()
{
    thread_local std::unique_ptr<QNetworkAccessManager> t_manager;
    if (!t_manager) {
        t_manager = std::make_unique<QNetworkAccessManager>();
        QThread *thread = QThread::currentThread();
        QObject::connect(thread, &QThread::finished, [] { t_manager.reset(); });
    }
    return *t_manager;
}

QString pathFor(SupportLookup what, const QString &key)
{
    const QString encoded = QString::fromLatin1(QUrl::toPercentEncoding(key));
    switch (what) {
    case SupportLookup::Order:
        return QStringLiteral("/api/v1/orders/") + encoded;
    case SupportLookup::Logistics:
        return QStringLiteral("/api/v1/orders/%1/logistics").arg(encoded);
    case SupportLookup::Inventory:
        return QStringLiteral("/api/v1/inventory/") + encoded;
    }
    return {};
}

LookupAnswer classifyNetworkError(QNetworkReply::NetworkError error, bool cancelled)
{
    const QString name = QString::fromLatin1(
        QMetaEnum::fromType<QNetworkReply::NetworkError>().valueToKey(error));
    switch (error) {
    case QNetworkReply::OperationCanceledError:
        // Either our own abort (the attempt was given up) or the transfer timeout fired.
        return LookupAnswer::transient(cancelled ? QStringLiteral("aborted: attempt cancelled")
                                                 : QStringLiteral("transfer timeout"));
    case QNetworkReply::SslHandshakeFailedError:
    case QNetworkReply::InsecureRedirectError:
    case QNetworkReply::ProtocolUnknownError:
    case QNetworkReply::ProtocolInvalidOperationError:
        return LookupAnswer::rejected(QStringLiteral("network error ") + name);
    default:
        // Refused, reset, closed, host lookup, proxy trouble, a malformed response: the
        // backend or the path to it may recover.
        return LookupAnswer::transient(QStringLiteral("network error ") + name);
    }
}

} // namespace

HttpSupportBackend::HttpSupportBackend(HttpBackendConfig config)
    : m_config(std::move(config))
{
}

QUrl HttpSupportBackend::urlFor(SupportLookup what, const QString &key) const
{
    QUrl url = m_config.baseUrl;
    QString path = url.path();
    while (path.endsWith(QLatin1Char('/')))
        path.chop(1);
    url.setPath(path + pathFor(what, key), QUrl::TolerantMode);
    url.setQuery(QString());
    url.setFragment(QString());
    return url;
}

std::optional<Millis> HttpSupportBackend::parseRetryAfter(const QByteArray &value)
{
    const QByteArray trimmed = value.trimmed();
    if (trimmed.isEmpty())
        return std::nullopt;
    bool isNumber = false;
    const qint64 seconds = trimmed.toLongLong(&isNumber);
    if (isNumber) {
        if (seconds < 0)
            return std::nullopt;
        return Millis(std::min(seconds, kMaxRetryAfterSeconds) * 1000);
    }
    // HTTP dates end in "GMT", which Qt's RFC 2822 parser does not take; it is UTC.
    QString date = QString::fromLatin1(trimmed);
    if (date.endsWith(QLatin1String(" GMT")))
        date.replace(date.size() - 3, 3, QStringLiteral("+0000"));
    const QDateTime when = QDateTime::fromString(date, Qt::RFC2822Date);
    if (!when.isValid())
        return std::nullopt;
    const qint64 ms = QDateTime::currentDateTimeUtc().msecsTo(when);
    return Millis(std::clamp<qint64>(ms, 0, kMaxRetryAfterSeconds * 1000));
}

LookupAnswer HttpSupportBackend::classify(int networkError, int status, const QByteArray &body,
                                          const QByteArray &retryAfter, bool cancelled)
{
    const auto error = QNetworkReply::NetworkError(networkError);
    if (cancelled)
        return classifyNetworkError(QNetworkReply::OperationCanceledError, true);
    // Errors below 200 happened below HTTP (connection, proxy, timeout): even when a status
    // line arrived, the body did not, so the exchange failed as a whole.
    if (error != QNetworkReply::NoError && (status == 0 || int(error) < 200))
        return classifyNetworkError(error, false);

    const QString statusText = QStringLiteral("HTTP %1").arg(status);
    if (status >= 200 && status < 300) {
        QJsonParseError parseError;
        const QJsonDocument document = QJsonDocument::fromJson(body, &parseError);
        if (parseError.error != QJsonParseError::NoError || !document.isObject()) {
            return LookupAnswer::transient(
                statusText + QStringLiteral(" with a body that is not a JSON object (%1 bytes)")
                                 .arg(body.size()));
        }
        return LookupAnswer::found(document.object());
    }
    if (status == 404) {
        const QString code = QJsonDocument::fromJson(body).object()
                                 .value(QLatin1String("error")).toString();
        if (code.endsWith(QLatin1String("_NOT_FOUND")))
            return LookupAnswer::notFound();
        // A 404 without the API's code is not an answer about the order: most likely the
        // base URL or the API version is wrong. Saying "no such order" would be a lie.
        return LookupAnswer::rejected(statusText + QStringLiteral(" without a *_NOT_FOUND code"));
    }
    if (status == 401 || status == 403 || status == 407)
        return LookupAnswer::accessDenied(statusText);
    if (status == 408 || status == 429 || (status >= 500 && status < 600))
        return LookupAnswer::transient(statusText, parseRetryAfter(retryAfter));
    if (status >= 300 && status < 400)
        return LookupAnswer::rejected(statusText + QStringLiteral(" (redirects not followed)"));
    return LookupAnswer::rejected(statusText);
}

LookupAnswer HttpSupportBackend::lookup(SupportLookup what, const QString &key,
                                        const TrustedContext &context,
                                        const CancellationToken &cancellation) const
{
    // A nested event loop on the GUI thread is exactly what DESIGN.md forbids.
    Q_ASSERT(!QCoreApplication::instance()
             || QThread::currentThread() != QCoreApplication::instance()->thread());
    if (cancellation.isCancelled())
        return LookupAnswer::transient(QStringLiteral("cancelled before the request"));

    const QUrl url = urlFor(what, key);
    QNetworkRequest request(url);
    request.setTransferTimeout(m_config.transferTimeoutMs);
    // A redirect could carry the staff headers to another host; the API never redirects.
    request.setAttribute(QNetworkRequest::RedirectPolicyAttribute,
                         QNetworkRequest::ManualRedirectPolicy);
    request.setRawHeader("Accept", "application/json");
    request.setRawHeader("X-Staff-Id", context.userId.toUtf8());
    request.setRawHeader("X-Tenant-Id", context.tenantId.toUtf8());
    if (!context.requestId.isEmpty())
        request.setRawHeader("X-Request-Id", context.requestId.toUtf8());

    std::unique_ptr<QNetworkReply, DeleteLater> reply(threadManager().get(request));
    QEventLoop loop;
    QObject::connect(reply.get(), &QNetworkReply::finished, &loop, &QEventLoop::quit);
    QTimer watch;
    watch.setInterval(kCancellationPollMs);
    QObject::connect(&watch, &QTimer::timeout, &loop, [&reply, &cancellation] {
        if (cancellation.isCancelled() && reply->isRunning())
            reply->abort(); // emits finished(), which ends the loop
    });
    watch.start();
    if (!reply->isFinished())
        loop.exec();
    watch.stop();

    const int status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
    LookupAnswer answer = classify(reply->error(), status, reply->readAll(),
                                   reply->rawHeader("Retry-After"), cancellation.isCancelled());
    if (answer.status == LookupAnswer::Status::Found
        || answer.status == LookupAnswer::Status::NotFound)
        return answer;

    // Details (the URL included) go to the local log only; the tool result stays generic.
    answer.detail = QStringLiteral("GET %1: %2").arg(url.toDisplayString(), answer.detail);
    if (answer.status == LookupAnswer::Status::Rejected
        || answer.status == LookupAnswer::Status::AccessDenied) {
        qCWarning(lcTools).noquote() << "support backend refused the request:" << answer.detail
                                     << "- staff" << context.userId << "tenant"
                                     << context.tenantId;
    } else if (status >= 200 && status < 300) {
        qCWarning(lcTools).noquote() << "support backend answered unreadably:" << answer.detail;
    }
    return answer;
}

} // namespace AgentConsole
