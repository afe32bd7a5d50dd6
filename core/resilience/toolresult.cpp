#include "toolresult.h"

#include "failuretable.h"

#include <QJsonArray>

#include <algorithm>

namespace AgentConsole {

QString localized(Language language, const char *english, const char *chinese)
{
    return QString::fromUtf8(language == Language::Chinese ? chinese : english);
}

Language languageOf(QStringView text)
{
    const auto isHan = [](QChar c) {
        const char16_t u = c.unicode();
        return (u >= 0x4E00 && u <= 0x9FFF) || (u >= 0x3400 && u <= 0x4DBF)
            || (u >= 0xF900 && u <= 0xFAFF);
    };
    return std::any_of(text.cbegin(), text.cend(), isHan) ? Language::Chinese : Language::English;
}

ToolResult ToolResult::ok(const QString &message, const QJsonValue &data)
{
    return {true, ResultCode::Ok, message, data, {}, {}};
}

ToolResult ToolResult::failure(ResultCode::Code code, const QString &message,
                               const QStringList &errors)
{
    return {false, code, message, QJsonValue(), errors, {}};
}

ToolResult ToolResult::failure(ResultCode::Code code, Language language, const QStringList &errors)
{
    return FailureTable::instance().failure(code, language, errors);
}

ToolResult ToolResult::nobodyToConfirm(Language language)
{
    ToolResult result = failure(ResultCode::ConfirmationDeclined, language);
    result.message = localized(language,
                               "Nobody could be asked to confirm this action, so it was not run",
                               "无法请客服确认该操作，因此未执行");
    result.data = QJsonObject{{QStringLiteral("staffAsked"), false}};
    return result;
}

ToolResult ToolResult::keptExisting(Language language, const QString &id,
                                    const QJsonObject &existing)
{
    ToolResult result = failure(ResultCode::ConfirmationDeclined, language);
    result.message = language == Language::Chinese
        ? QStringLiteral("未执行：客服选择沿用已有的 %1，没有再新建").arg(id)
        : QStringLiteral("Not run: the staff member kept the existing %1 instead of making "
                         "another")
              .arg(id);
    result.data = QJsonObject{{QStringLiteral("staffAsked"), true},
                              {QStringLiteral("keptExisting"), id},
                              {QStringLiteral("existing"), existing}};
    return result;
}

QString ToolResult::keptExistingId() const
{
    if (code != ResultCode::ConfirmationDeclined)
        return {};
    return data.toObject().value(QLatin1String("keptExisting")).toString();
}

bool ToolResult::nobodyWasAsked() const
{
    return code == ResultCode::ConfirmationDeclined
        && data.toObject().value(QLatin1String("staffAsked")) == QJsonValue(false);
}

QString ToolResult::codeName() const
{
    if (ResultCode::isUnrecognized(code))
        return unrecognizedCode;
    return ResultCode::wireName(code);
}

void ToolResult::setCodeName(QStringView name)
{
    code = ResultCode::read(name);
    unrecognizedCode = ResultCode::isUnrecognized(code) ? name.toString() : QString();
}

bool ToolResult::isNotFound() const
{
    return FailureTable::instance().isNothingFound(code);
}

QJsonObject ToolResult::toJson() const
{
    QJsonObject json{{QStringLiteral("success"), success},
                     {QStringLiteral("code"), codeName()},
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
    result.setCodeName(json.value(QStringLiteral("code")).toString());
    result.message = json.value(QStringLiteral("message")).toString();
    result.data = json.value(QStringLiteral("data"));
    if (result.data.isUndefined())
        result.data = QJsonValue();
    for (const QJsonValue &error : json.value(QStringLiteral("errors")).toArray())
        result.errors.append(error.toString());
    return result;
}

namespace SafeText {

QString messageFor(ResultCode::Code code, Language language)
{
    return FailureTable::instance().message(code, language);
}

QString retryHintFor(ResultCode::Code code, Language language)
{
    return FailureTable::instance().retryHint(code, language);
}

} // namespace SafeText
} // namespace AgentConsole
