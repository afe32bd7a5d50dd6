#include "failuretable.h"

#include <QtGlobal>

#include <atomic>

namespace AgentConsole {

using Code = ResultCode::Code;
using Severity = FailureTable::Severity;
using LedgerRow = FailureTable::LedgerRow;

namespace {

// The codes the mechanism produces (DESIGN.md, "Failure taxonomy"). The support domain's
// not-found rows are in core/support/supportfailures.cpp. The labels are written out as
// QT_TRANSLATE_NOOP in ui/'s context (lupdate reads no macro of ours).
// Columns: code, wire name, retryable, nothing found, ledger, severity, label, staff,
// staff about a subject, model.
constexpr FailureTable::Row kMechanismRows[] = {
    {Code::Ok,
     "OK",
     false,
     false,
     LedgerRow::Succeeded,
     Severity::Success,
     QT_TRANSLATE_NOOP("AgentConsole::ToolCallText", "OK"),
     {},
     {},
     {}},
    {Code::InvalidArgument,
     "INVALID_ARGUMENT",
     false,
     false,
     LedgerRow::FailedFinal,
     Severity::Error,
     QT_TRANSLATE_NOOP("AgentConsole::ToolCallText", "Invalid"),
     {}, // the answer writer says which argument and why
     {},
     {"The tool arguments are invalid", "工具参数校验失败"}},
    {Code::ContextMissing,
     "CONTEXT_MISSING",
     false,
     false,
     LedgerRow::FailedFinal,
     Severity::Error,
     QT_TRANSLATE_NOOP("AgentConsole::ToolCallText", "Context missing"),
     {"%1 could not run because the session's staff context is missing.",
      "缺少会话的用户上下文，%1无法执行。"},
     {},
     {"The caller's trusted context is missing", "缺少调用用户上下文"}},
    {Code::UnknownTool,
     "UNKNOWN_TOOL",
     false,
     false,
     LedgerRow::FailedFinal,
     Severity::Error,
     QT_TRANSLATE_NOOP("AgentConsole::ToolCallText", "Unknown tool"),
     {"%1 could not run because no such tool exists.", "%1无法执行：不存在该工具。"},
     {},
     {"No tool of that name exists", "不存在该工具"}},
    {Code::ToolTimeout,
     "TOOL_TIMEOUT",
     true,
     false,
     LedgerRow::FailedRetryable,
     Severity::Warning,
     QT_TRANSLATE_NOOP("AgentConsole::ToolCallText", "Timed out"),
     {"%1 timed out, so it is temporarily unavailable.", "%1超时，暂时无法查询。"},
     {},
     {"The lookup timed out", "查询超时"}},
    {Code::ToolUnavailable,
     "TOOL_UNAVAILABLE",
     true,
     false,
     LedgerRow::FailedRetryable,
     Severity::Warning,
     QT_TRANSLATE_NOOP("AgentConsole::ToolCallText", "Unavailable"),
     {"%1 is temporarily unavailable.", "%1暂时不可用。"},
     {},
     {"The lookup service is temporarily unavailable", "查询服务暂时不可用"}},
    {Code::ToolRejected,
     "TOOL_REJECTED",
     false,
     false,
     LedgerRow::FailedFinal,
     Severity::Error,
     QT_TRANSLATE_NOOP("AgentConsole::ToolCallText", "Rejected"),
     {"The backend rejected %1.", "后端拒绝了%1。"},
     {},
     {"The backend rejected the request", "后端拒绝了该请求"}},
    {Code::ToolAccessDenied,
     "TOOL_ACCESS_DENIED",
     false,
     false,
     LedgerRow::FailedFinal,
     Severity::Error,
     QT_TRANSLATE_NOOP("AgentConsole::ToolCallText", "Access denied"),
     {"The console is not allowed to run %1.", "控制台无权执行%1。"},
     {},
     {"The console is not allowed to use this backend", "控制台无权访问该后端"}},
    {Code::Cancelled,
     "CANCELLED",
     false,
     false,
     LedgerRow::FailedRetryable,
     Severity::Neutral,
     QT_TRANSLATE_NOOP("AgentConsole::ToolCallText", "Cancelled"),
     {"%1 was cancelled.", "%1已取消。"},
     {},
     {"The lookup was cancelled", "查询已取消"}},
    {Code::InternalError,
     "INTERNAL_ERROR",
     false,
     false,
     LedgerRow::FailedFinal,
     Severity::Error,
     QT_TRANSLATE_NOOP("AgentConsole::ToolCallText", "Internal error"),
     {"%1 stopped because of an internal error.", "%1因内部错误中止。"},
     {},
     {"An internal error stopped the lookup", "内部错误导致查询中止"}},
    // Write tools (DESIGN.md, "Write tools and idempotency"). The answer writer words a
    // write's failure by what it proves about the write (describeTicketFailure).
    {Code::ConfirmationDeclined,
     "CONFIRMATION_DECLINED",
     false,
     false,
     LedgerRow::FailedFinal,
     Severity::Neutral,
     QT_TRANSLATE_NOOP("AgentConsole::ToolCallText", "Declined"),
     {},
     {},
     {"The staff member declined this action", "客服已拒绝执行该操作"}},
    {Code::IdempotencyConflict,
     "IDEMPOTENCY_CONFLICT",
     false,
     false,
     LedgerRow::FailedFinal,
     Severity::Error,
     QT_TRANSLATE_NOOP("AgentConsole::ToolCallText", "Conflict"),
     {},
     {},
     {"This operation was already requested with different details",
      "该操作此前已以不同的参数提交"}},
    {Code::ExecutionStatusUnknown,
     "EXECUTION_STATUS_UNKNOWN",
     false,
     false,
     LedgerRow::FailedRetryable,
     Severity::Warning,
     QT_TRANSLATE_NOOP("AgentConsole::ToolCallText", "Outcome unknown"),
     {},
     {},
     {"It is not known whether the action took effect; check before trying again",
      "无法确认该操作是否已生效，请先核实再重试"}},
    // Answered by the ledger: the row is another run's and stays as it is; FailedFinal is
    // what recording such an answer would write.
    {Code::OperationInProgress,
     "OPERATION_IN_PROGRESS",
     false,
     false,
     LedgerRow::FailedFinal,
     Severity::Info,
     QT_TRANSLATE_NOOP("AgentConsole::ToolCallText", "In progress"),
     {},
     {},
     {"This operation is already in progress", "该操作正在执行中"}},
    // The server refused the call for want of a sign-in (or a refreshed one): nothing ran.
    // Not retried by waiting, and not the server's fault (its breaker is not told).
    {Code::SignInRequired,
     "SIGN_IN_REQUIRED",
     false,
     false,
     LedgerRow::FailedFinal,
     Severity::Warning,
     QT_TRANSLATE_NOOP("AgentConsole::ToolCallText", "Sign-in needed"),
     {"%1 could not run: its server needs you to sign in (View › MCP servers › Sign in).",
      "%1未能执行：其服务器需要您先登录（视图 › MCP 服务器 › 登录）。"},
     {},
     // Read by staff on the card too: worded for both (the model learns what to say).
     {"Not run: the tool's server needs the staff member to sign in first (View › MCP "
      "servers › Sign in); after that the question can be asked again",
      "未执行：该工具的服务器需要工作人员先登录（视图 › MCP 服务器 › 登录）；登录后可再次提问"}},
    // Not run; the answer says so once for all such calls (and the transcript in one line,
    // not as cards: the word is for where a call is named alone, a scenario's rows).
    {Code::ToolCallLimit,
     "TOOL_CALL_LIMIT",
     false,
     false,
     LedgerRow::FailedFinal,
     Severity::Error,
     QT_TRANSLATE_NOOP("AgentConsole::ToolCallText", "Not run (too many at once)"),
     {},
     {},
     {"Not run: the request asked for more lookups at once than the console runs",
      "未执行：该请求一次要求的查询数超过控制台的上限"}},
    // Read, never made: a wire name no row has (a newer version's code on a shared ledger, a
    // newer backend's), kept as given. The card shows the name itself, the model reads the
    // general sentence, the answer writer says the call failed, and nothing retries it.
    {Code::Unrecognized,
     nullptr,
     false,
     false,
     LedgerRow::FailedFinal,
     Severity::Error,
     nullptr,
     {},
     {},
     {}},
    // The same for a name ending in _NOT_FOUND: an answer that nothing matched, as the REST
    // API says it (docs/SUPPORT-SIM.md), whatever it is that was not found.
    {Code::UnrecognizedNotFound,
     nullptr,
     false,
     true,
     LedgerRow::FailedFinal,
     Severity::Neutral,
     QT_TRANSLATE_NOOP("AgentConsole::ToolCallText", "Not found"),
     {},
     {},
     {}},
};

// Added to a retryable failure's errors: the system prompt asks the model to say the lookup
// is temporarily unavailable and to suggest trying again later.
constexpr FailureTable::Sentence kRetryHint{"Please try again later",
                                            "服务暂时响应较慢或不可用，请稍后重试"};
constexpr FailureTable::Sentence kGeneralFailure{"The lookup failed", "查询失败"};

} // namespace

QString FailureTable::Sentence::in(Language language) const
{
    if (isNull())
        return {};
    return localized(language, english, chinese);
}

namespace {

// Set once anything has read the table: a domain that joins later has missed a reader.
std::atomic<bool> tableRead{false};

} // namespace

FailureTable::FailureTable()
{
    add(kMechanismRows);
    for (int value = 0; value < ResultCode::mechanismCodeCount; ++value)
        Q_ASSERT_X(find(ResultCode::Code(value)), "FailureTable", "a code without a row");
}

FailureTable &FailureTable::table()
{
    static FailureTable table;
    return table;
}

const FailureTable &FailureTable::instance()
{
    if (!tableRead.load(std::memory_order_relaxed))
        tableRead.store(true, std::memory_order_relaxed);
    return table();
}

bool FailureTable::join(std::span<const Row> rows)
{
    Q_ASSERT_X(!tableRead.load(), "FailureTable::join",
               "a domain joined after the table was read");
    for (const Row &row : rows) {
        Q_ASSERT_X(int(row.code) >= ResultCode::firstDomainCode && row.wire, "FailureTable::join",
                   "a domain's code is numbered from firstDomainCode and "
                   "has a wire name");
    }
    table().add(rows);
    return true;
}

void FailureTable::add(std::span<const Row> rows)
{
    for (const Row &row : rows) {
        const auto index = std::size_t(row.code);
        if (index >= m_slots.size())
            m_slots.resize(index + 1);
        const QString wire = row.wire ? QString::fromLatin1(row.wire) : QString();
        Q_ASSERT_X(!m_slots[index].row, "FailureTable", "two rows for one code");
        Q_ASSERT_X(wire.isEmpty() || !codeOf(wire), "FailureTable", "two rows with one name");
        m_slots[index] = {&row, wire};
    }
}

const FailureTable::Row *FailureTable::find(ResultCode::Code code) const
{
    const auto index = std::size_t(code);
    return index < m_slots.size() ? m_slots[index].row : nullptr;
}

QList<ResultCode::Code> FailureTable::codes() const
{
    QList<ResultCode::Code> all;
    for (const Slot &slot : m_slots) {
        if (slot.row && slot.row->wire)
            all.append(slot.row->code);
    }
    return all;
}

const QString &FailureTable::wireName(ResultCode::Code code) const
{
    static const QString none;
    const auto index = std::size_t(code);
    return index < m_slots.size() ? m_slots[index].wire : none;
}

std::optional<ResultCode::Code> FailureTable::codeOf(QStringView wireName) const
{
    if (wireName.isEmpty())
        return std::nullopt;
    for (const Slot &slot : m_slots) {
        if (slot.row && slot.wire == wireName)
            return slot.row->code;
    }
    return std::nullopt;
}

ToolResult FailureTable::failure(ResultCode::Code code, Language language,
                                 const QStringList &errors) const
{
    QStringList all = errors;
    const QString hint = retryHint(code, language);
    if (!hint.isEmpty())
        all.append(hint);
    return ToolResult::failure(code, message(code, language), all);
}

QString FailureTable::message(ResultCode::Code code, Language language) const
{
    const Row *row = find(code);
    if (!row || row->model.isNull())
        return kGeneralFailure.in(language);
    return row->model.in(language);
}

QString FailureTable::retryHint(ResultCode::Code code, Language language) const
{
    const Row *row = find(code);
    return row && row->retryable ? kRetryHint.in(language) : QString();
}

bool FailureTable::isNothingFound(ResultCode::Code code) const
{
    const Row *row = find(code);
    return row && row->nothingFound;
}

std::span<const FailureTable::Row> FailureTable::mechanismRows()
{
    return kMechanismRows;
}

} // namespace AgentConsole
