#pragma once

#include "chatmodel.h"

#include "../faults/livefaults.h"

#include <memory>

namespace AgentConsole {

// Wraps a provider with the model faults of the fault plan in force (LiveFaults): added
// latency before every call, or a provider that is down. The plan is read when each call
// starts, so the fault panel's changes apply to the next call. Without a fault for its
// provider it passes the call straight through. For demos and QA of how the console treats a
// failing model.
class FaultyChatModel final : public ChatModel
{
    Q_OBJECT

public:
    FaultyChatModel(ChatModel *inner, std::shared_ptr<const LiveFaults> faults,
                    QObject *parent = nullptr);

    QString modelName() const override;
    ChatReply *complete(const ChatRequest &request) override;

private:
    ChatModel *m_inner;
    std::shared_ptr<const LiveFaults> m_faults;
};

} // namespace AgentConsole
