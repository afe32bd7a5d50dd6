#include "supportfailures.h"

namespace AgentConsole {

using Severity = FailureTable::Severity;
using LedgerRow = FailureTable::LedgerRow;

namespace {

// Business answers, not failures of the dependency: never retried, final for a write (a
// ticket for an order that does not exist will not be created by trying again). Columns as
// the mechanism's (failuretable.cpp): code, wire name, retryable, nothing found, ledger,
// severity, label, staff, staff about a subject, model.
constexpr FailureTable::Row kSupportRows[] = {
    {SupportCode::OrderNotFound,
     "ORDER_NOT_FOUND",
     false,
     true,
     LedgerRow::FailedFinal,
     Severity::Neutral,
     QT_TRANSLATE_NOOP("AgentConsole::ToolCallText", "Not found"),
     {"The order was not found.", "未找到该订单。"},
     {"Order %1 was not found.", "未找到订单 %1。"},
     {"No such order", "未找到该订单"}},
    {SupportCode::LogisticsNotFound,
     "LOGISTICS_NOT_FOUND",
     false,
     true,
     LedgerRow::FailedFinal,
     Severity::Neutral,
     QT_TRANSLATE_NOOP("AgentConsole::ToolCallText", "Not found"),
     {"There is no logistics record for this order yet.", "该订单暂无物流记录。"},
     {"There is no logistics record for order %1 yet.", "订单 %1 暂无物流记录。"},
     {"No logistics record yet", "暂未查到物流记录"}},
    {SupportCode::SkuNotFound,
     "SKU_NOT_FOUND",
     false,
     true,
     LedgerRow::FailedFinal,
     Severity::Neutral,
     QT_TRANSLATE_NOOP("AgentConsole::ToolCallText", "Not found"),
     {"The product was not found.", "未找到该商品。"},
     {"No product with SKU %1 was found.", "未找到商品 %1。"},
     {"No such SKU", "未找到该商品"}},
};

} // namespace

std::span<const FailureTable::Row> supportFailureRows()
{
    return kSupportRows;
}

} // namespace AgentConsole
