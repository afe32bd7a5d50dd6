#include "failuretable.h"

#include <QtGlobal>

namespace AgentConsole {

using Code = ResultCode::Code;
using Severity = FailureTable::Severity;
using LedgerRow = FailureTable::LedgerRow;

namespace {

// The codes the mechanism produces (DESIGN.md, "Failure taxonomy"). The support wing's
// not-found rows are in core/support/supportfailures.cpp. The labels are written out as
// QT_TRANSLATE_NOOP in ui/'s context (lupdate reads no macro of ours).
constexpr FailureTable::Row kMechanismRows[] = {
    {Code::Ok, false, LedgerRow::Succeeded, Severity::Success,
     QT_TRANSLATE_NOOP("AgentConsole::ToolCallText", "OK"), {}, {}, {}},
    {Code::InvalidArgument, false, LedgerRow::FailedFinal, Severity::Error,
     QT_TRANSLATE_NOOP("AgentConsole::ToolCallText", "Invalid"),
     {}, // the answer writer says which argument and why
     {},
     {"The tool arguments are invalid", "工具参数校验失败"}},
    {Code::ContextMissing, false, LedgerRow::FailedFinal, Severity::Error,
     QT_TRANSLATE_NOOP("AgentConsole::ToolCallText", "Context missing"),
     {"%1 could not run because the session's staff context is missing.",
      "缺少会话的用户上下文，%1无法执行。"},
     {},
     {"The caller's trusted context is missing", "缺少调用用户上下文"}},
    {Code::UnknownTool, false, LedgerRow::FailedFinal, Severity::Error,
     QT_TRANSLATE_NOOP("AgentConsole::ToolCallText", "Unknown tool"),
     {"%1 could not run because no such tool exists.", "%1无法执行：不存在该工具。"},
     {},
     {"No tool of that name exists", "不存在该工具"}},
    {Code::ToolTimeout, true, LedgerRow::FailedRetryable, Severity::Warning,
     QT_TRANSLATE_NOOP("AgentConsole::ToolCallText", "Timed out"),
     {"%1 timed out, so it is temporarily unavailable.", "%1超时，暂时无法查询。"},
     {},
     {"The lookup timed out", "查询超时"}},
    {Code::ToolUnavailable, true, LedgerRow::FailedRetryable, Severity::Warning,
     QT_TRANSLATE_NOOP("AgentConsole::ToolCallText", "Unavailable"),
     {"%1 is temporarily unavailable.", "%1暂时不可用。"},
     {},
     {"The lookup service is temporarily unavailable", "查询服务暂时不可用"}},
    {Code::ToolRejected, false, LedgerRow::FailedFinal, Severity::Error,
     QT_TRANSLATE_NOOP("AgentConsole::ToolCallText", "Rejected"),
     {"The backend rejected %1.", "后端拒绝了%1。"},
     {},
     {"The backend rejected the request", "后端拒绝了该请求"}},
    {Code::ToolAccessDenied, false, LedgerRow::FailedFinal, Severity::Error,
     QT_TRANSLATE_NOOP("AgentConsole::ToolCallText", "Access denied"),
     {"The console is not allowed to run %1.", "控制台无权执行%1。"},
     {},
     {"The console is not allowed to use this backend", "控制台无权访问该后端"}},
    {Code::Cancelled, false, LedgerRow::FailedRetryable, Severity::Neutral,
     QT_TRANSLATE_NOOP("AgentConsole::ToolCallText", "Cancelled"),
     {"%1 was cancelled.", "%1已取消。"},
     {},
     {"The lookup was cancelled", "查询已取消"}},
    {Code::InternalError, false, LedgerRow::FailedFinal, Severity::Error,
     QT_TRANSLATE_NOOP("AgentConsole::ToolCallText", "Internal error"),
     {"%1 stopped because of an internal error.", "%1因内部错误中止。"},
     {},
     {"An internal error stopped the lookup", "内部错误导致查询中止"}},
    // Write tools (DESIGN.md, "Write tools and idempotency"). The answer writer words a
    // write's failure by what it proves about the write (describeTicketFailure).
    {Code::ConfirmationDeclined, false, LedgerRow::FailedFinal, Severity::Neutral,
     QT_TRANSLATE_NOOP("AgentConsole::ToolCallText", "Declined"), {}, {},
     {"The staff member declined this action", "客服已拒绝执行该操作"}},
    {Code::IdempotencyConflict, false, LedgerRow::FailedFinal, Severity::Error,
     QT_TRANSLATE_NOOP("AgentConsole::ToolCallText", "Conflict"), {}, {},
     {"This operation was already requested with different details",
      "该操作此前已以不同的参数提交"}},
    {Code::ExecutionStatusUnknown, false, LedgerRow::FailedRetryable, Severity::Warning,
     QT_TRANSLATE_NOOP("AgentConsole::ToolCallText", "Outcome unknown"), {}, {},
     {"It is not known whether the action took effect; check before trying again",
      "无法确认该操作是否已生效，请先核实再重试"}},
    // Answered by the ledger: the row is another run's and stays as it is; FailedFinal is
    // what recording such an answer would write.
    {Code::OperationInProgress, false, LedgerRow::FailedFinal, Severity::Info,
     QT_TRANSLATE_NOOP("AgentConsole::ToolCallText", "In progress"), {}, {},
     {"This operation is already in progress", "该操作正在执行中"}},
    // The server refused the call for want of a sign-in (or a refreshed one): nothing ran.
    // Not retried by waiting, and not the server's fault (its breaker is not told).
    {Code::SignInRequired, false, LedgerRow::FailedFinal, Severity::Warning,
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
    {Code::ToolCallLimit, false, LedgerRow::FailedFinal, Severity::Error,
     QT_TRANSLATE_NOOP("AgentConsole::ToolCallText", "Not run (too many at once)"), {}, {},
     {"Not run: the request asked for more lookups at once than the console runs",
      "未执行：该请求一次要求的查询数超过控制台的上限"}},
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

FailureTable::FailureTable(std::initializer_list<std::span<const Row>> parts)
{
    for (const std::span<const Row> &part : parts) {
        for (const Row &row : part) {
            const int index = int(row.code);
            Q_ASSERT_X(index >= 0 && index < ResultCode::codeCount, "FailureTable",
                       "a row for a code outside the enum");
            Q_ASSERT_X(!m_rows[index], "FailureTable", "two rows for one code");
            m_rows[index] = &row;
        }
    }
}

const FailureTable::Row *FailureTable::find(ResultCode::Code code) const
{
    const int index = int(code);
    return index >= 0 && index < ResultCode::codeCount ? m_rows[index] : nullptr;
}

const FailureTable::Row *FailureTable::find(QStringView wireName) const
{
    const std::optional<ResultCode::Code> code = ResultCode::fromWireName(wireName);
    return code ? find(*code) : nullptr;
}

ToolResult FailureTable::failure(ResultCode::Code code, Language language,
                                 const QStringList &errors) const
{
    const QString &wire = ResultCode::wireName(code);
    QStringList all = errors;
    const QString hint = retryHint(wire, language);
    if (!hint.isEmpty())
        all.append(hint);
    return ToolResult::failure(wire, message(wire, language), all);
}

QString FailureTable::message(QStringView wireName, Language language) const
{
    const Row *row = find(wireName);
    if (!row || row->model.isNull())
        return kGeneralFailure.in(language);
    return row->model.in(language);
}

QString FailureTable::retryHint(QStringView wireName, Language language) const
{
    const Row *row = find(wireName);
    return row && row->retryable ? kRetryHint.in(language) : QString();
}

std::span<const FailureTable::Row> FailureTable::mechanismRows()
{
    return kMechanismRows;
}

const FailureTable &FailureTable::mechanism()
{
    static const FailureTable table{mechanismRows()};
    return table;
}

} // namespace AgentConsole
