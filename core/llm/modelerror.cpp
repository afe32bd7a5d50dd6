#include "modelerror.h"

#include <iterator>

namespace AgentConsole::ModelError {

namespace {

// One row per code, in the enum's order (checked in row()).
constexpr Row kRows[] = {
    {Code::RateLimited, false, true, false,
     u"The model service is busy right now. Please try again in a moment.",
     u"模型服务当前请求过多，请稍后重试。"},
    {Code::QuotaExhausted, true, true, false,
     u"The model account has no quota or balance left. Please contact your administrator.",
     u"模型服务账户的额度或余额已用完，请联系管理员。"},
    {Code::AuthFailed, true, false, true,
     u"The model service did not accept the credentials. Please check the API key.",
     u"模型服务未接受访问凭据，请检查 API 密钥设置。"},
    {Code::BadRequest, false, false, true, u"The model service could not process this request.",
     u"模型服务无法处理此请求。"},
    {Code::Unavailable, false, true, false,
     u"The model is temporarily unavailable. Please try again later.",
     u"模型服务暂时不可用，请稍后重试。"},
    {Code::Timeout, false, true, false,
     u"The model did not respond in time. Please try again later.",
     u"模型服务响应超时，请稍后重试。"},
    {Code::Truncated, false, true, false, u"The model's answer was cut off. Please try again.",
     u"模型的回答被中断，请重试。"},
    {Code::InvalidResponse, false, true, false,
     u"The model service sent a response that could not be read.",
     u"模型服务返回了无法读取的响应。"},
    {Code::EndpointMoved, true, false, true,
     u"The model endpoint moved. Please check the model settings.",
     u"模型服务地址已变更，请检查模型设置。"},
    {Code::CircuitOpen, false, false, false, nullptr, nullptr},
    {Code::Cancelled, false, false, false, u"The model call was cancelled.", u"模型调用已取消。"},
};
static_assert(std::size(kRows) == std::size_t(codeCount), "one row per model error");

constexpr bool rowsInEnumOrder()
{
    for (int i = 0; i < codeCount; ++i) {
        if (int(kRows[i].code) != i)
            return false;
    }
    return true;
}
static_assert(rowsInEnumOrder(), "model error rows must follow the enum's order");

} // namespace

const QString &wireName(Code code)
{
    switch (code) {
    case Code::RateLimited:
        return RateLimited;
    case Code::QuotaExhausted:
        return QuotaExhausted;
    case Code::AuthFailed:
        return AuthFailed;
    case Code::BadRequest:
        return BadRequest;
    case Code::Unavailable:
        return Unavailable;
    case Code::Timeout:
        return Timeout;
    case Code::Truncated:
        return Truncated;
    case Code::InvalidResponse:
        return InvalidResponse;
    case Code::EndpointMoved:
        return EndpointMoved;
    case Code::CircuitOpen:
        return CircuitOpen;
    case Code::Cancelled:
        return Cancelled;
    }
    Q_UNREACHABLE();
    return Unavailable;
}

std::optional<Code> fromWireName(QStringView name)
{
    for (int value = 0; value < codeCount; ++value) {
        if (wireName(Code(value)) == name)
            return Code(value);
    }
    return std::nullopt;
}

const Row &row(Code code)
{
    return kRows[int(code)];
}

const Row *find(QStringView wireName)
{
    const std::optional<Code> code = fromWireName(wireName);
    return code ? &row(*code) : nullptr;
}

QString message(QStringView wireName, Language language)
{
    const bool chinese = language == Language::Chinese;
    const Row *found = find(wireName);
    if (!found || !found->english)
        return QString::fromUtf16(chinese ? u"模型调用失败。" : u"The model call failed.");
    return QString::fromUtf16(chinese ? found->chinese : found->english);
}

} // namespace AgentConsole::ModelError
