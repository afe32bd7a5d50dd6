// The HTTP toolkit the model client and the REST backends share: Retry-After (seconds, an HTTP
// date, OpenAI's retry-after-ms; bounded), URL joining, and the classification of network
// errors and HTTP statuses that each client maps to its own outcome.

#include "core/http/networkfailure.h"
#include "core/http/retryafter.h"
#include "core/http/urljoin.h"

#include <QNetworkReply>
#include <QTest>

#include <optional>

using namespace AgentConsole;
using Http::NetworkFailure;
using Http::StatusClass;
using Millis = std::chrono::milliseconds;
using MaybeMillis = std::optional<Millis>;

Q_DECLARE_METATYPE(MaybeMillis)

namespace {

// A fixed "now" for the HTTP-date rows: Sun, 06 Nov 1994 08:49:37 GMT (RFC 9110's example).
QDateTime exampleNow()
{
    return QDateTime(QDate(1994, 11, 6), QTime(8, 49, 37), Qt::UTC);
}

} // namespace

class tst_HttpToolkit final : public QObject
{
    Q_OBJECT

private slots:
    void retryAfter_data();
    void retryAfter();
    void retryAfterDateFromTheClock();
    void retryAfterMs_data();
    void retryAfterMs();
    void joinPath_data();
    void joinPath();
    void networkFailure_data();
    void networkFailure();
    void failedBelowHttp_data();
    void failedBelowHttp();
    void networkErrorName();
    void statusClass_data();
    void statusClass();
};

void tst_HttpToolkit::retryAfter_data()
{
    QTest::addColumn<QByteArray>("value");
    QTest::addColumn<MaybeMillis>("expected");

    const MaybeMillis none;
    QTest::newRow("absent") << QByteArray() << none;
    QTest::newRow("blank") << QByteArray("  ") << none;
    QTest::newRow("zero") << QByteArray("0") << MaybeMillis(Millis(0));
    QTest::newRow("seconds, padded") << QByteArray(" 2 ") << MaybeMillis(Millis(2000));
    QTest::newRow("fractional seconds") << QByteArray("1.5") << MaybeMillis(Millis(1500));
    QTest::newRow("negative") << QByteArray("-1") << none;
    QTest::newRow("words") << QByteArray("soon") << none;
    QTest::newRow("infinite") << QByteArray("inf") << none;
    QTest::newRow("not a number") << QByteArray("nan") << none;
    QTest::newRow("a week, bounded to a day")
        << QByteArray("604800") << MaybeMillis(Http::kMaxRetryAfter);
    QTest::newRow("past any integer, bounded")
        << QByteArray("99999999999999999999999999") << MaybeMillis(Http::kMaxRetryAfter);
    QTest::newRow("date now") << QByteArray("Sun, 06 Nov 1994 08:49:37 GMT")
                              << MaybeMillis(Millis(0));
    QTest::newRow("date 90 s ahead") << QByteArray("Sun, 06 Nov 1994 08:51:07 GMT")
                                     << MaybeMillis(Millis(90'000));
    QTest::newRow("date in the past") << QByteArray("Sat, 05 Nov 1994 08:49:37 GMT")
                                      << MaybeMillis(Millis(0));
    QTest::newRow("date a year ahead, bounded")
        << QByteArray("Mon, 06 Nov 1995 08:49:37 GMT") << MaybeMillis(Http::kMaxRetryAfter);
    QTest::newRow("date with a numeric zone") << QByteArray("Sun, 06 Nov 1994 09:49:47 +0100")
                                              << MaybeMillis(Millis(10'000));
    QTest::newRow("date garbled") << QByteArray("Sun, 99 Nov 1994 08:49:37 GMT") << none;
}

void tst_HttpToolkit::retryAfter()
{
    QFETCH(QByteArray, value);
    QFETCH(MaybeMillis, expected);
    QCOMPARE(Http::parseRetryAfter(value, exampleNow()), expected);
}

void tst_HttpToolkit::retryAfterDateFromTheClock()
{
    // Without a given "now" the date is measured from the clock: a minute ahead, whole
    // seconds written, so between 59 and 60 s away.
    const QDateTime inAMinute = QDateTime::currentDateTimeUtc().addSecs(60);
    const QByteArray value = QLocale::c()
                                 .toString(inAMinute, QStringLiteral("ddd, dd MMM yyyy "
                                                                     "HH:mm:ss 'GMT'"))
                                 .toLatin1();
    const MaybeMillis parsed = Http::parseRetryAfter(value);
    QVERIFY(parsed);
    QVERIFY2(*parsed > Millis(58'000) && *parsed <= Millis(60'000),
             qPrintable(QString::number(parsed->count())));
}

void tst_HttpToolkit::retryAfterMs_data()
{
    QTest::addColumn<QByteArray>("value");
    QTest::addColumn<MaybeMillis>("expected");

    const MaybeMillis none;
    QTest::newRow("absent") << QByteArray() << none;
    QTest::newRow("milliseconds") << QByteArray("300") << MaybeMillis(Millis(300));
    QTest::newRow("fraction truncated") << QByteArray("20.9") << MaybeMillis(Millis(20));
    QTest::newRow("negative") << QByteArray("-5") << none;
    QTest::newRow("a date is not milliseconds")
        << QByteArray("Sun, 06 Nov 1994 08:49:37 GMT") << none;
    QTest::newRow("bounded") << QByteArray("1e12") << MaybeMillis(Http::kMaxRetryAfter);
}

void tst_HttpToolkit::retryAfterMs()
{
    QFETCH(QByteArray, value);
    QFETCH(MaybeMillis, expected);
    QCOMPARE(Http::parseRetryAfterMs(value), expected);
}

void tst_HttpToolkit::joinPath_data()
{
    QTest::addColumn<QString>("base");
    QTest::addColumn<QString>("path");
    QTest::addColumn<QString>("expected");

    QTest::newRow("root") << "https://api.deepseek.com" << "/chat/completions"
                          << "https://api.deepseek.com/chat/completions";
    QTest::newRow("below /v1") << "https://api.openai.com/v1" << "/chat/completions"
                               << "https://api.openai.com/v1/chat/completions";
    QTest::newRow("trailing slashes") << "http://127.0.0.1:8080/v1//" << "/chat/completions"
                                      << "http://127.0.0.1:8080/v1/chat/completions";
    QTest::newRow("query and fragment kept")
        << "https://h.example/openai/deployments/x?api-version=2024-06-01#frag"
        << "/chat/completions"
        << "https://h.example/openai/deployments/x/chat/completions?api-version=2024-06-01#frag";
    QTest::newRow("encoded path stays encoded")
        << "http://127.0.0.1:1/api" << "/v1/orders/A%2F1%3F"
        << "http://127.0.0.1:1/api/v1/orders/A%2F1%3F";
    QTest::newRow("encoded base stays encoded")
        << "http://127.0.0.1:1/a%2520b/" << "/x" << "http://127.0.0.1:1/a%2520b/x";
    QTest::newRow("user and port kept") << "http://u@127.0.0.1:99" << "/x"
                                        << "http://u@127.0.0.1:99/x";
}

void tst_HttpToolkit::joinPath()
{
    QFETCH(QString, base);
    QFETCH(QString, path);
    QFETCH(QString, expected);
    QCOMPARE(Http::joinPath(QUrl(base), path).toString(QUrl::FullyEncoded), expected);
}

void tst_HttpToolkit::networkFailure_data()
{
    QTest::addColumn<int>("error");
    QTest::addColumn<NetworkFailure>("expected");

    const auto row = [](const char *name, QNetworkReply::NetworkError error,
                        NetworkFailure expected) {
        QTest::newRow(name) << int(error) << expected;
    };
    row("none", QNetworkReply::NoError, NetworkFailure::None);
    row("refused", QNetworkReply::ConnectionRefusedError, NetworkFailure::NeverConnected);
    row("host not found", QNetworkReply::HostNotFoundError, NetworkFailure::NeverConnected);
    row("proxy refused", QNetworkReply::ProxyConnectionRefusedError,
        NetworkFailure::NeverConnected);
    row("proxy not found", QNetworkReply::ProxyNotFoundError, NetworkFailure::NeverConnected);
    row("closed", QNetworkReply::RemoteHostClosedError, NetworkFailure::ConnectionLost);
    row("temporary", QNetworkReply::TemporaryNetworkFailureError,
        NetworkFailure::ConnectionLost);
    row("session", QNetworkReply::NetworkSessionFailedError, NetworkFailure::ConnectionLost);
    row("unknown network", QNetworkReply::UnknownNetworkError, NetworkFailure::ConnectionLost);
    row("proxy closed", QNetworkReply::ProxyConnectionClosedError,
        NetworkFailure::ConnectionLost);
    row("proxy timeout", QNetworkReply::ProxyTimeoutError, NetworkFailure::ConnectionLost);
    row("protocol failure", QNetworkReply::ProtocolFailure, NetworkFailure::ConnectionLost);
    row("socket timeout", QNetworkReply::TimeoutError, NetworkFailure::TimedOut);
    row("aborted or transfer timeout", QNetworkReply::OperationCanceledError,
        NetworkFailure::Aborted);
    row("tls handshake", QNetworkReply::SslHandshakeFailedError, NetworkFailure::Configuration);
    row("insecure redirect", QNetworkReply::InsecureRedirectError,
        NetworkFailure::Configuration);
    row("unknown scheme", QNetworkReply::ProtocolUnknownError, NetworkFailure::Configuration);
    row("invalid operation", QNetworkReply::ProtocolInvalidOperationError,
        NetworkFailure::Configuration);
    row("proxy authentication", QNetworkReply::ProxyAuthenticationRequiredError,
        NetworkFailure::Other);
    row("too many redirects", QNetworkReply::TooManyRedirectsError, NetworkFailure::Other);
    row("content error", QNetworkReply::ContentNotFoundError, NetworkFailure::Other);
    // 450 names no error but lies within the enum's range (0 to 511): 12345 did not, and
    // loading it was undefined behaviour (UBSan's report in test.sh's ASan stage).
    row("not an error code", QNetworkReply::NetworkError(450), NetworkFailure::Other);
}

void tst_HttpToolkit::networkFailure()
{
    QFETCH(int, error);
    QFETCH(NetworkFailure, expected);
    QCOMPARE(Http::networkFailureOf(error), expected);
}

void tst_HttpToolkit::failedBelowHttp_data()
{
    QTest::addColumn<int>("error");
    QTest::addColumn<int>("status");
    QTest::addColumn<bool>("expected");

    QTest::newRow("answered") << int(QNetworkReply::NoError) << 200 << false;
    QTest::newRow("refused, no status") << int(QNetworkReply::ConnectionRefusedError) << 0
                                        << true;
    QTest::newRow("reset after the status line")
        << int(QNetworkReply::RemoteHostClosedError) << 200 << true;
    QTest::newRow("HTTP-level error with a status")
        << int(QNetworkReply::ServiceUnavailableError) << 503 << false;
    QTest::newRow("protocol failure, no status") << int(QNetworkReply::ProtocolFailure) << 0
                                                 << true;
}

void tst_HttpToolkit::failedBelowHttp()
{
    QFETCH(int, error);
    QFETCH(int, status);
    QFETCH(bool, expected);
    QCOMPARE(Http::failedBelowHttp(error, status), expected);
}

void tst_HttpToolkit::networkErrorName()
{
    QCOMPARE(Http::networkErrorName(QNetworkReply::ConnectionRefusedError),
             QStringLiteral("ConnectionRefusedError"));
    QCOMPARE(Http::networkErrorName(QNetworkReply::OperationCanceledError),
             QStringLiteral("OperationCanceledError"));
    QCOMPARE(Http::networkErrorName(12345), QString());
}

void tst_HttpToolkit::statusClass_data()
{
    QTest::addColumn<int>("status");
    QTest::addColumn<StatusClass>("expected");

    QTest::newRow("0") << 0 << StatusClass::NoResponse;
    QTest::newRow("100") << 100 << StatusClass::Interim;
    QTest::newRow("103") << 103 << StatusClass::Interim;
    QTest::newRow("200") << 200 << StatusClass::Success;
    QTest::newRow("201") << 201 << StatusClass::Success;
    QTest::newRow("301") << 301 << StatusClass::Redirect;
    QTest::newRow("308") << 308 << StatusClass::Redirect;
    QTest::newRow("400") << 400 << StatusClass::ClientError;
    QTest::newRow("401") << 401 << StatusClass::AccessDenied;
    QTest::newRow("402") << 402 << StatusClass::ClientError;
    QTest::newRow("403") << 403 << StatusClass::AccessDenied;
    QTest::newRow("404") << 404 << StatusClass::NotFound;
    QTest::newRow("407") << 407 << StatusClass::AccessDenied;
    QTest::newRow("408") << 408 << StatusClass::Throttled;
    QTest::newRow("409") << 409 << StatusClass::ClientError;
    QTest::newRow("429") << 429 << StatusClass::Throttled;
    QTest::newRow("500") << 500 << StatusClass::ServerError;
    QTest::newRow("503") << 503 << StatusClass::ServerError;
    QTest::newRow("599") << 599 << StatusClass::ServerError;
    QTest::newRow("600") << 600 << StatusClass::Invalid;
    QTest::newRow("99") << 99 << StatusClass::Invalid;
    QTest::newRow("-1") << -1 << StatusClass::Invalid;
}

void tst_HttpToolkit::statusClass()
{
    QFETCH(int, status);
    QFETCH(StatusClass, expected);
    QCOMPARE(Http::statusClassOf(status), expected);
}

QTEST_GUILESS_MAIN(tst_HttpToolkit)
#include "tst_httptoolkit.moc"
