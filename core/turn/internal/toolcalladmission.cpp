#include "toolcalladmission.h"

#include "../../tools/agenttool.h"
#include "../../tools/argumentschema.h"

#include <QJsonDocument>

namespace AgentConsole::Internal {

ToolCallAdmission admitToolCall(const AgentTool *tool, const QString &rawArguments,
                                const TrustedContext &context, bool confirmedBefore,
                                int maxArgumentDepth)
{
    using Verdict = ToolCallAdmission::Verdict;
    const Language language = context.language;
    ToolCallAdmission admission;
    if (!tool) {
        admission.refusal = ToolResult::failure(ResultCode::UnknownTool, language);
        return admission;
    }
    const QByteArray text = rawArguments.isEmpty() ? QByteArrayLiteral("{}")
                                                   : rawArguments.toUtf8();
    // Measured on the text before parsing: a document nested deeper than the bound is never
    // turned into an object that would be stored, printed or sent anywhere.
    if (jsonNestingDepth(text) > maxArgumentDepth) {
        admission.refusal = ToolResult::failure(
            ResultCode::InvalidArgument, language,
            {localized(language, "The arguments are nested deeper than %1 levels",
                       "工具参数的嵌套层级超过 %1 层")
                 .arg(maxArgumentDepth)});
        return admission;
    }
    QJsonParseError parseError;
    const QJsonDocument arguments = QJsonDocument::fromJson(text, &parseError);
    if (parseError.error != QJsonParseError::NoError || !arguments.isObject()) {
        admission.refusal = ToolResult::failure(ResultCode::InvalidArgument, language,
                                                {localized(language,
                                                           "The arguments were not a JSON object",
                                                           "工具参数不是合法的 JSON 对象")});
        return admission;
    }
    if (jsonValueCount(arguments.object(), ArgumentSchema::maxCheckedValues)
        > ArgumentSchema::maxCheckedValues) {
        admission.refusal = ToolResult::failure(
            ResultCode::InvalidArgument, language,
            {localized(language, "The arguments hold more than %1 values",
                       "工具参数包含超过 %1 个值")
                 .arg(ArgumentSchema::maxCheckedValues)});
        return admission;
    }
    // Checked here, off the GUI thread, for lookups and writes alike (the executor is told
    // not to check again): a write's before anyone is asked to confirm a call that could
    // not run anyway.
    if (std::optional<ToolResult> invalid = tool->precheck(arguments.object(), context)) {
        admission.refusal = std::move(*invalid);
        return admission;
    }
    const ToolDescriptor &descriptor = tool->descriptor();
    if (!descriptor.hasSideEffects) {
        admission.verdict = Verdict::Lookup;
        admission.arguments = arguments.object();
        return admission;
    }
    admission.verdict = confirmedBefore || !descriptor.requiresConfirmation ? Verdict::Write
                                                                            : Verdict::AskStaff;
    admission.arguments = arguments.object();
    return admission;
}

} // namespace AgentConsole::Internal
