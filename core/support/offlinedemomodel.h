#pragma once

#include "../llm/chatmodel.h"

#include <chrono>

namespace AgentConsole {

// The embedded default model: needs no key and no network. A deterministic, rule-based
// planner and answer writer for the support questions of this console, in Chinese and
// English. Called twice per turn by the agent loop:
//  - planning: no tool results yet for the last user message -> tool calls
//    (queryOrderStatus, queryLogistics, queryInventory, and the write createTicket when the
//    question asks for an after-sales ticket; only those offered in the request), or a text
//    reply asking for an order number or SKU when the question names none. A follow-up that
//    names none ("and its logistics?", "那它的物流呢？") takes the one order or SKU of the
//    latest earlier turn that named any, and asks which when that turn named several;
//  - answering: tool results exist -> the final answer, written from those results only,
//    following the failure rules of DESIGN.md (never guess, state partial failure plainly).
// Replies always finish asynchronously and stream text as one chunk per sentence.
// The same request always yields the same response and the same chunks.
class OfflineDemoModel final : public ChatModel
{
    Q_OBJECT

public:
    explicit OfflineDemoModel(QObject *parent = nullptr);

    QString modelName() const override;
    ChatReply *complete(const ChatRequest &request) override;

    // The pause between streamed chunks. 0 (the default) still delivers every chunk on a
    // later event-loop turn; a demo may slow it down so that streaming is visible.
    void setChunkInterval(std::chrono::milliseconds interval) { m_chunkInterval = interval; }
    std::chrono::milliseconds chunkInterval() const { return m_chunkInterval; }

private:
    std::chrono::milliseconds m_chunkInterval{0};
};

} // namespace AgentConsole
