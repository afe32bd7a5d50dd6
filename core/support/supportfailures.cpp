#include "supportfailures.h"

namespace AgentConsole {

using Code = ResultCode::Code;
using Severity = FailureTable::Severity;
using LedgerRow = FailureTable::LedgerRow;

namespace {

// Business answers, not failures of the dependency: never retried, final for a write (a
// ticket for an order that does not exist will not be created by trying again).
constexpr FailureTable::Row kSupportRows[] = {
    {Code::OrderNotFound, false, LedgerRow::FailedFinal, Severity::Neutral,
     QT_TRANSLATE_NOOP("AgentConsole::ToolCallText", "Not found"),
     {"The order was not found.", "未找到该订单。"},
     {"Order %1 was not found.", "未找到订单 %1。"},
     {"No such order", "未找到该订单"}},
    {Code::LogisticsNotFound, false, LedgerRow::FailedFinal, Severity::Neutral,
     QT_TRANSLATE_NOOP("AgentConsole::ToolCallText", "Not found"),
     {"There is no logistics record for this order yet.", "该订单暂无物流记录。"},
     {"There is no logistics record for order %1 yet.", "订单 %1 暂无物流记录。"},
     {"No logistics record yet", "暂未查到物流记录"}},
    {Code::SkuNotFound, false, LedgerRow::FailedFinal, Severity::Neutral,
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

const FailureTable &supportFailureTable()
{
    static const FailureTable table{FailureTable::mechanismRows(), supportFailureRows()};
    return table;
}

} // namespace AgentConsole
