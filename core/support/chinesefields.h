#pragma once

#include <QLatin1String>
#include <QString>

// The one home of the rule by which the support tools' results carry Chinese (issue #41 §7):
// a value in words — a product's `name`, a shipment's `carrier` and `currentLocation`, an
// event's `location` and `description`, a stock record's `warehouse` — keeps its English under
// its key and has its Chinese, where the backend knows one, under the same key with the suffix
// "Zh" (`nameZh`, `currentLocationZh`, ...). Ids, statuses, codes, times and amounts have no
// such sibling. A backend that sends no sibling is shown as it comes.
namespace AgentConsole::ChineseFields {

inline constexpr QLatin1String Suffix{"Zh"};

// "currentLocation" -> "currentLocationZh".
inline QString keyFor(QLatin1String key)
{
    return key + Suffix;
}

} // namespace AgentConsole::ChineseFields
