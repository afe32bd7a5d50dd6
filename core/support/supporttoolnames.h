#pragma once

#include <QLatin1String>

// The one home of the support tools' names: the model calls them by these, the fault plans
// and the offline demo model's planner name them too.
namespace AgentConsole::SupportToolNames {

inline constexpr QLatin1String OrderStatus{"queryOrderStatus"};
inline constexpr QLatin1String Logistics{"queryLogistics"};
inline constexpr QLatin1String Inventory{"queryInventory"};
inline constexpr QLatin1String CreateTicket{"createTicket"};
inline constexpr QLatin1String OrderTickets{"listOrderTickets"};

} // namespace AgentConsole::SupportToolNames
