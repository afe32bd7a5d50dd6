#pragma once

#include "../priorwrites.h"

#include "../../resilience/retrypolicy.h"
#include "../../resilience/tooloperation.h"
#include "../../tools/tooldescriptor.h"

#include <QJsonObject>
#include <QString>

#include <chrono>
#include <functional>
#include <memory>
#include <optional>

namespace AgentConsole {
class CircuitBreaker;
class IdempotencyLedger;
class ToolExecutor;
class ToolRegistry;
struct LedgerRecent;
} // namespace AgentConsole

class QObject;

namespace AgentConsole::Internal {

// Asks what a write may repeat before staff confirm it (ToolDescriptor::priorWrites): the
// lookup tool through the executor, with its own policy and breaker and nothing of the turn's
// deadline or retry budget (staff are reading the card meanwhile), and the idempotency
// ledger's recent successes of the write; then judges which earlier write looks repeated.
// Everything runs off the GUI thread: the lookup's arguments are checked on the check pool,
// the lookup on the executor's, the ledger on its own thread. The answer comes back on
// `context`'s thread, never after `context` is gone.
class PriorWritesLookup final
{
public:
    struct Parts
    {
        const ToolRegistry *tools = nullptr;
        ToolExecutor *executor = nullptr;
        IdempotencyLedger *ledger = nullptr; // may be null: the backend alone
        std::function<CircuitBreaker *(const QString &)> breakers;
        std::function<RetryPolicy(const QString &)> policies; // AgentLoop::ToolPolicies
    };

    struct Request
    {
        QString writeTool; // the write's name, as the ledger has it
        QString writeKey; // its idempotency key (operation id)
        PriorWritesCheck check;
        QJsonObject arguments; // the write's, as staff will confirm them
        TrustedContext context;
        QString traceId; // the lookup's attempts carry it
        std::chrono::seconds window{0};
    };

    // Starts the check; `done` gets the finished PriorWrites on `receiver`'s thread.
    static void start(const Parts &parts, const Request &request, QObject *receiver,
                      std::function<void(PriorWrites)> done);

    // The judgement itself, a pure function (tested alone): the backend's answer (nullopt when
    // it could not say, with its code), the ledger's rows, `now` and the window.
    static PriorWrites judge(const PriorWritesCheck &check, const QJsonObject &arguments,
                             const QString &userId, const QString &writeKey,
                             const std::optional<QJsonObject> &listed, ResultCode::Code lookupCode,
                             const LedgerRecent *ledger, const QDateTime &now,
                             std::chrono::seconds window);
};

} // namespace AgentConsole::Internal
