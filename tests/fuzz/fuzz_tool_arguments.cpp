// The arguments a model writes for a tool call, read as the agent loop reads them: measured by
// jsonNestingDepth before they are parsed, then checked by every real tool's precheck (its
// JSON Schema through valijson, and the ticket's own rules). Property: for any text Qt parses,
// the parsed document nests no deeper than jsonNestingDepth measured.

#include "fuzzsupport.h"

#include "core/turn/agentloop.h"
#include "core/tools/argumentschema.h"
#include "core/support/createtickettool.h"
#include "core/support/supportbackend.h"
#include "core/support/supporttools.h"
#include "core/support/ticketbackend.h"
#include "core/tools/toolregistry.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include <algorithm>

using namespace AgentConsole;

namespace {

int depthOf(const QJsonValue &value)
{
    int deepest = 0;
    if (value.isArray()) {
        for (const QJsonValue &item : value.toArray())
            deepest = std::max(deepest, depthOf(item));
        return deepest + 1;
    }
    if (value.isObject()) {
        const QJsonObject object = value.toObject();
        for (auto it = object.begin(); it != object.end(); ++it)
            deepest = std::max(deepest, depthOf(it.value()));
        return deepest + 1;
    }
    return 0;
}

// The real tools, on no backend: precheck never reaches one.
const ToolRegistry &tools()
{
    static const ToolRegistry registry = [] {
        ToolRegistry made;
        registerSupportTools(made, std::shared_ptr<const SupportBackend>(), nullptr);
        registerTicketTool(made, std::shared_ptr<const TicketBackend>());
        return made;
    }();
    return registry;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    Fuzz::ensureApplication();
    const QByteArray input = Fuzz::bytesOf(data, size);
    const QByteArray raw = input.isEmpty() ? QByteArrayLiteral("{}") : input;

    const int depth = jsonNestingDepth(raw);
    FUZZ_CHECK(depth >= 0 && depth <= raw.size());
    QJsonParseError parseError;
    const QJsonDocument document = QJsonDocument::fromJson(raw, &parseError);
    if (parseError.error == QJsonParseError::NoError) {
        const int parsedDepth = document.isArray() ? depthOf(document.array())
                                                   : depthOf(document.object());
        // The text's depth bounds the document's: a repeated key may drop a deeper value.
        FUZZ_CHECK(parsedDepth <= depth);
    }
    if (depth > AgentLoop::maxArgumentDepth || parseError.error != QJsonParseError::NoError
        || !document.isObject()) {
        return 0;
    }
    const QJsonObject arguments = document.object();
    const Language language = size % 2 ? Language::Chinese : Language::English;
    const TrustedContext context{QStringLiteral("u-ops-01"), QStringLiteral("tenant-a"),
                                 QStringLiteral("conv-1"), QStringLiteral("req-1"), language};
    for (const QString &name : tools().names()) {
        const std::optional<ToolResult> refusal = tools().find(name)->precheck(arguments, context);
        if (refusal)
            FUZZ_CHECK(!refusal->success);
    }
    return 0;
}
