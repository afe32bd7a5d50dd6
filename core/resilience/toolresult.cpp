#include "toolresult.h"

#include <QHash>
#include <QJsonArray>

#include <algorithm>

namespace AgentConsole {

Language languageOf(QStringView text)
{
    const auto isHan = [](QChar c) {
        const char16_t u = c.unicode();
        return (u >= 0x4E00 && u <= 0x9FFF) || (u >= 0x3400 && u <= 0x4DBF)
            || (u >= 0xF900 && u <= 0xFAFF);
    };
    return std::any_of(text.cbegin(), text.cend(), isHan) ? Language::Chinese
                                                          : Language::English;
}

ToolResult ToolResult::ok(const QString &message, const QJsonValue &data)
{
    return {true, ResultCode::Ok, message, data, {}};
}

ToolResult ToolResult::failure(const QString &code, const QString &message,
                               const QStringList &errors)
{
    return {false, code, message, QJsonValue(), errors};
}

ToolResult ToolResult::failure(const QString &code, Language language, const QStringList &errors)
{
    QStringList all = errors;
    const QString hint = SafeText::retryHintFor(code, language);
    if (!hint.isEmpty())
        all.append(hint);
    return failure(code, SafeText::messageFor(code, language), all);
}

bool ToolResult::isNotFound() const
{
    return code.endsWith(QLatin1String("_NOT_FOUND"));
}

QJsonObject ToolResult::toJson() const
{
    QJsonObject json{{QStringLiteral("success"), success},
                     {QStringLiteral("code"), code},
                     {QStringLiteral("message"), message}};
    if (!data.isUndefined() && !data.isNull())
        json.insert(QStringLiteral("data"), data);
    json.insert(QStringLiteral("errors"), QJsonValue::fromVariant(errors));
    return json;
}

ToolResult ToolResult::fromJson(const QJsonObject &json)
{
    ToolResult result;
    result.success = json.value(QStringLiteral("success")).toBool();
    result.code = json.value(QStringLiteral("code")).toString();
    result.message = json.value(QStringLiteral("message")).toString();
    result.data = json.value(QStringLiteral("data"));
    if (result.data.isUndefined())
        result.data = QJsonValue();
    for (const QJsonValue &error : json.value(QStringLiteral("errors")).toArray())
        result.errors.append(error.toString());
    return result;
}

namespace SafeText {
namespace {

struct Sentence
{
    const char *english;
    const char *chinese;
};

const QHash<QString, Sentence> &messages()
{
    static const QHash<QString, Sentence> table{
        {ResultCode::InvalidArgument, {"The tool arguments are invalid", "工具参数校验失败"}},
        {ResultCode::OrderNotFound, {"No such order", "未找到该订单"}},
        {ResultCode::LogisticsNotFound, {"No logistics record yet", "暂未查到物流记录"}},
        {ResultCode::SkuNotFound, {"No such SKU", "未找到该商品"}},
        {ResultCode::ContextMissing,
         {"The caller's trusted context is missing", "缺少调用用户上下文"}},
        {ResultCode::UnknownTool, {"No tool of that name exists", "不存在该工具"}},
        {ResultCode::ToolTimeout, {"The lookup timed out", "查询超时"}},
        {ResultCode::ToolUnavailable,
         {"The lookup service is temporarily unavailable", "查询服务暂时不可用"}},
        {ResultCode::ToolRejected,
         {"The backend rejected the request", "后端拒绝了该请求"}},
        {ResultCode::ToolAccessDenied,
         {"The console is not allowed to use this backend", "控制台无权访问该后端"}},
        {ResultCode::Cancelled, {"The lookup was cancelled", "查询已取消"}},
        {ResultCode::InternalError,
         {"An internal error stopped the lookup", "内部错误导致查询中止"}},
        {ResultCode::ConfirmationDeclined,
         {"The staff member declined this action", "客服已拒绝执行该操作"}},
        {ResultCode::IdempotencyConflict,
         {"This operation was already requested with different details",
          "该操作此前已以不同的参数提交"}},
        {ResultCode::ExecutionStatusUnknown,
         {"It is not known whether the action took effect; check before trying again",
          "无法确认该操作是否已生效，请先核实再重试"}},
        {ResultCode::OperationInProgress,
         {"This operation is already in progress", "该操作正在执行中"}},
        {ResultCode::ToolCallLimit,
         {"Not run: the request asked for more lookups at once than the console runs",
          "未执行：该请求一次要求的查询数超过控制台的上限"}},
    };
    return table;
}

} // namespace

QString messageFor(const QString &code, Language language)
{
    const auto it = messages().constFind(code);
    if (it == messages().cend())
        return language == Language::Chinese ? QStringLiteral("查询失败")
                                             : QStringLiteral("The lookup failed");
    return QString::fromUtf8(language == Language::Chinese ? it->chinese : it->english);
}

QString retryHintFor(const QString &code, Language language)
{
    if (code == ResultCode::ToolTimeout || code == ResultCode::ToolUnavailable) {
        return language == Language::Chinese ? QStringLiteral("服务暂时响应较慢或不可用，请稍后重试")
                                             : QStringLiteral("Please try again later");
    }
    return {};
}

} // namespace SafeText
} // namespace AgentConsole
