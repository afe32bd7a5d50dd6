#include "networkfailure.h"

#include <QMetaEnum>
#include <QNetworkReply>

namespace AgentConsole::Http {

NetworkFailure networkFailureOf(int networkError)
{
    switch (QNetworkReply::NetworkError(networkError)) {
    case QNetworkReply::NoError:
        return NetworkFailure::None;
    case QNetworkReply::ConnectionRefusedError:
    case QNetworkReply::HostNotFoundError:
    case QNetworkReply::ProxyConnectionRefusedError:
    case QNetworkReply::ProxyNotFoundError:
        return NetworkFailure::NeverConnected;
    case QNetworkReply::RemoteHostClosedError:
    case QNetworkReply::TemporaryNetworkFailureError:
    case QNetworkReply::NetworkSessionFailedError:
    case QNetworkReply::UnknownNetworkError:
    case QNetworkReply::ProxyConnectionClosedError:
    case QNetworkReply::ProxyTimeoutError:
    case QNetworkReply::ProtocolFailure:
    // A one-shot body (oneshotbody.h) refused to be sent again after the connection closed
    // before the answer: the request went out and its answer was lost.
    case QNetworkReply::ContentReSendError:
        return NetworkFailure::ConnectionLost;
    case QNetworkReply::TimeoutError:
        return NetworkFailure::TimedOut;
    case QNetworkReply::OperationCanceledError:
        return NetworkFailure::Aborted;
    case QNetworkReply::SslHandshakeFailedError:
    case QNetworkReply::InsecureRedirectError:
    case QNetworkReply::ProtocolUnknownError:
    case QNetworkReply::ProtocolInvalidOperationError:
        return NetworkFailure::Configuration;
    default:
        return NetworkFailure::Other;
    }
}

bool failedBelowHttp(int networkError, int httpStatus)
{
    return networkError != QNetworkReply::NoError && (httpStatus == 0 || networkError < 200);
}

QString networkErrorName(int networkError)
{
    return QString::fromLatin1(
        QMetaEnum::fromType<QNetworkReply::NetworkError>().valueToKey(networkError));
}

StatusClass statusClassOf(int httpStatus)
{
    if (httpStatus == 0)
        return StatusClass::NoResponse;
    switch (httpStatus) {
    case 401:
    case 403:
    case 407:
        return StatusClass::AccessDenied;
    case 404:
        return StatusClass::NotFound;
    case 408:
    case 429:
        return StatusClass::Throttled;
    default:
        break;
    }
    switch (httpStatus / 100) {
    case 1:
        return StatusClass::Interim;
    case 2:
        return StatusClass::Success;
    case 3:
        return StatusClass::Redirect;
    case 4:
        return StatusClass::ClientError;
    case 5:
        return StatusClass::ServerError;
    default:
        return StatusClass::Invalid;
    }
}

} // namespace AgentConsole::Http
