#pragma once

#include "core/ledger/idempotencyledger.h"
#include "core/llm/chatmodel.h"
#include "core/tools/toolregistry.h"

#include <atomic>
#include <functional>
#include <memory>

namespace AgentConsole::Testing {

// Stands in for a remote LLM: answers each call with the next scripted response, one turn
// of the event loop later, and keeps every request it was given.
class ScriptedModel final : public ChatModel
{
public:
    QList<ChatResponse> script;
    QList<ChatRequest> requests;

    QString modelName() const override { return QStringLiteral("scripted"); }
    ChatReply *complete(const ChatRequest &request) override;
};

// A model response that asks for these tool calls.
ChatResponse toolCalls(const QList<ModelToolCall> &calls);

// A write tool named createTicket that counts how often its body really ran; it accepts any
// arguments with a string orderId.
class RecordingWriteTool final : public AgentTool
{
public:
    mutable std::atomic<int> runs{0};
    mutable std::atomic<int> runsThatMayRepeat{0}; // attempts told mayHaveRun

    ToolDescriptor descriptor() const override;
    std::optional<ToolResult> precheck(const QJsonObject &arguments,
                                       const TrustedContext &context) const override;
    AttemptResult attempt(const QJsonObject &arguments, const TrustedContext &,
                          const AttemptContext &) const override;
};

// A tool named `name` that accepts any arguments and whose attempts run `body`; counts how
// often its body really ran.
class FunctionTool final : public AgentTool
{
public:
    using Body = std::function<AttemptResult(const AttemptContext &)>;

    FunctionTool(const QString &name, bool hasSideEffects, Body body);

    mutable std::atomic<int> runs{0};

    ToolDescriptor descriptor() const override;
    std::optional<ToolResult> precheck(const QJsonObject &,
                                       const TrustedContext &) const override;
    AttemptResult attempt(const QJsonObject &, const TrustedContext &,
                          const AttemptContext &context) const override;

private:
    QString m_name;
    bool m_hasSideEffects;
    Body m_body;
};

// A tool named `name` whose every attempt answers OK at once: for suites that need a tool of
// that name and kind (the registry of a policy or fault plan), not what it does.
std::shared_ptr<FunctionTool> answeringTool(const QString &name, bool hasSideEffects = false);

// A SQLite ledger in `directory`, open and migrated.
std::unique_ptr<IdempotencyLedger> openTestLedger(const QString &directory);

} // namespace AgentConsole::Testing
