#include "restexchange.h"

#include "../../http/oneshotbody.h"
#include "../../http/urljoin.h"

#include <QCoreApplication>
#include <QEventLoop>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QNetworkRequest>
#include <QThread>
#include <QTimer>

#include <memory>

namespace AgentConsole::Internal {
namespace {

// How often the local loop looks at the attempt's cancellation token: short enough that an
// abandoned attempt gives its pool thread back within a few milliseconds.
constexpr int kCancellationPollMs = 10;

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

} // namespace

QUrl apiUrl(const QUrl &baseUrl, const QString &path, const QUrlQuery &query)
{
    QUrl url = Http::joinPath(baseUrl, path);
    url.setQuery(query);
    url.setFragment(QString());
    return url;
}

RestExchange exchange(const RestCall &call, const TrustedContext &context,
                      const CancellationToken &cancellation)
{
    // A nested event loop on the GUI thread is exactly what DESIGN.md forbids.
    Q_ASSERT(!QCoreApplication::instance()
             || QThread::currentThread() != QCoreApplication::instance()->thread());
    RestExchange result;
    if (cancellation.isCancelled()) {
        result.networkError = QNetworkReply::OperationCanceledError;
        result.cancelled = true;
        return result;
    }

    QNetworkRequest request(call.url);
    request.setTransferTimeout(call.transferTimeoutMs);
    // A redirect could carry the staff headers to another host; the API never redirects.
    request.setAttribute(QNetworkRequest::RedirectPolicyAttribute,
                         QNetworkRequest::ManualRedirectPolicy);
    request.setRawHeader("Accept", "application/json");
    request.setRawHeader("X-Staff-Id", context.userId.toUtf8());
    request.setRawHeader("X-Tenant-Id", context.tenantId.toUtf8());
    if (!context.requestId.isEmpty())
        request.setRawHeader("X-Request-Id", context.requestId.toUtf8());
    if (!call.jsonBody.isEmpty())
        request.setHeader(QNetworkRequest::ContentTypeHeader,
                          QByteArrayLiteral("application/json"));
    for (const auto &[name, value] : call.headers)
        request.setRawHeader(name, value);

    // A body is sent once (oneshotbody.h): Qt would send a ticket's POST again by itself on a
    // connection closed before the answer. Whether a write may have run is this exchange's
    // to tell (requestSent below), and the ledger's to decide.
    const bool isGet = call.jsonBody.isEmpty() && call.verb == "GET";
    QIODevice *upload = isGet ? nullptr : Http::oneShotBody(call.jsonBody, &threadManager());
    std::unique_ptr<QNetworkReply, DeleteLater> reply(
        isGet ? threadManager().get(request)
              : threadManager().sendCustomRequest(request, call.verb, upload));
    if (upload)
        upload->setParent(reply.get());
    // "Sent" is what decides whether a failed write may have been committed: the whole
    // request handed to the connection (requestSent), or any sign of an answer. The receiver
    // lives on this stack frame, so these connections end with it (the reply lives longer).
    QObject sentWatch;
    QObject::connect(reply.get(), &QNetworkReply::requestSent, &sentWatch,
                     [&result] { result.requestSent = true; });
    QObject::connect(reply.get(), &QNetworkReply::uploadProgress, &sentWatch,
                     [&result](qint64 sent, qint64 total) {
                         if (total > 0 && sent == total)
                             result.requestSent = true;
                     });
    QObject::connect(reply.get(), &QNetworkReply::metaDataChanged, &sentWatch,
                     [&result] { result.requestSent = true; });
    QObject::connect(reply.get(), &QNetworkReply::downloadProgress, &sentWatch,
                     [&result, &reply](qint64 received, qint64) {
                         if (received > maxResponseBytes && !result.tooLarge) {
                             result.tooLarge = true;
                             reply->abort(); // emits finished(), which ends the loop
                         }
                     });

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

    result.networkError = reply->error();
    result.status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
    // Closed once aborted; an answer over the bound is never read at all.
    result.body = reply->isOpen() && !result.tooLarge ? reply->readAll() : QByteArray();
    result.retryAfter = reply->rawHeader("Retry-After");
    result.cancelled = cancellation.isCancelled();
    if (result.status != 0)
        result.requestSent = true;
    return result;
}

} // namespace AgentConsole::Internal
