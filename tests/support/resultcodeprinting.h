#pragma once

// A result code by name in a failed QCOMPARE: the mechanism's by the enum's key (Q_ENUM_NS),
// a domain's (numbered from ResultCode::firstDomainCode, outside the enum) by its wire name.
#include "core/resilience/resultcode.h"

#include <QMetaEnum>
#include <QtGlobal>

namespace AgentConsole::ResultCode {
// QTest finds this through ADL before its own printer of Q_ENUMs, which knows no domain code.
inline char *toString(Code code)
{
    if (const char *key = QMetaEnum::fromType<Code>().valueToKey(int(code)))
        return qstrdup(key);
    const QString &wire = wireName(code);
    return qstrdup(wire.isEmpty() ? QByteArray::number(int(code)).constData()
                                  : wire.toLatin1().constData());
}
} // namespace AgentConsole::ResultCode
