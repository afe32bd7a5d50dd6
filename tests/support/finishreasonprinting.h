#pragma once

// A model reply's FinishReason by name in a failed QCOMPARE, for the suites that compare them.
#include "core/llm/chatmodel.h"

#include <QtGlobal>

namespace AgentConsole {
// QTest finds this through ADL, so that a failing comparison names the reason.
inline char *toString(FinishReason reason)
{
    switch (reason) {
    case FinishReason::Stop:
        return qstrdup("Stop");
    case FinishReason::ToolCalls:
        return qstrdup("ToolCalls");
    case FinishReason::Length:
        return qstrdup("Length");
    case FinishReason::ContentFilter:
        return qstrdup("ContentFilter");
    case FinishReason::Error:
        return qstrdup("Error");
    }
    return qstrdup("?");
}
} // namespace AgentConsole
