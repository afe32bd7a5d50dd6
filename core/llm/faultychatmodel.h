#pragma once

#include "chatmodel.h"

#include "../faults/faultplan.h"

namespace AgentConsole {

// Wraps a model with a fault plan's model faults: added latency before every call, or a
// provider that is down. For demos and QA of how the console treats a failing model.
class FaultyChatModel final : public ChatModel
{
    Q_OBJECT

public:
    FaultyChatModel(ChatModel *inner, const ModelFault &fault, QObject *parent = nullptr);

    QString modelName() const override;
    ChatReply *complete(const ChatRequest &request) override;

private:
    ChatModel *m_inner;
    ModelFault m_fault;
};

} // namespace AgentConsole
