#include "signinerror.h"

#include <QMetaEnum>

namespace AgentConsole::OAuth {

QString SignInError::describe() const
{
    return QStringLiteral("%1: %2").arg(
        QString::fromLatin1(QMetaEnum::fromType<SignInFailure>().valueToKey(int(failure))),
        detail);
}

} // namespace AgentConsole::OAuth
