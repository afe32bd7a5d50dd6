#include "resultcode.h"

#include "failuretable.h"

namespace AgentConsole::ResultCode {

const QString &wireName(Code code)
{
    return FailureTable::instance().wireName(code);
}

std::optional<Code> fromWireName(QStringView name)
{
    return FailureTable::instance().codeOf(name);
}

Code read(QStringView name)
{
    if (const std::optional<Code> code = fromWireName(name))
        return *code;
    return name.endsWith(QLatin1String("_NOT_FOUND")) ? Code::UnrecognizedNotFound
                                                      : Code::Unrecognized;
}

} // namespace AgentConsole::ResultCode
