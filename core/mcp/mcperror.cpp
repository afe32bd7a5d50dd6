#include "mcperror.h"

#include <QMetaEnum>

namespace AgentConsole::Mcp {

QString Error::describe() const
{
    QString text = QString::fromLatin1(QMetaEnum::fromType<Failure>().valueToKey(int(failure)));
    if (code != 0)
        text += QStringLiteral(" (%1)").arg(code);
    if (!detail.isEmpty())
        text += QStringLiteral(": ") + detail;
    return text;
}

bool isTransient(const Error &error)
{
    switch (error.failure) {
    case Failure::Timeout:
    case Failure::TransportFailed:
    case Failure::TransportClosed:
    case Failure::NotConnected:
    case Failure::SessionExpired:
    case Failure::TooManyRequests:
        return true;
    case Failure::RemoteError:
        return error.code == JsonRpcCode::InternalError;
    case Failure::None:
    case Failure::Cancelled:
    case Failure::Malformed:
    case Failure::Oversized:
    case Failure::ProtocolVersion:
    case Failure::AccessDenied:
    case Failure::Rejected:
    case Failure::AuthRequired:
        return false;
    }
    return false;
}

} // namespace AgentConsole::Mcp
