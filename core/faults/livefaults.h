#pragma once

#include "faultplan.h"

#include <QMutex>

#include <memory>

namespace AgentConsole {

// The fault plan in force, swappable while the console runs: the fault panel and scenarios
// replace it, and every tool attempt and model call reads it when it starts, so a change
// applies to the next attempt without a restart. Attempts already running keep the plan
// they started with. Thread-safe: read on the tools' pool threads, set on the GUI thread.
class LiveFaults final
{
public:
    LiveFaults();
    explicit LiveFaults(FaultPlan plan);

    // Never null: an empty plan when no fault is set.
    std::shared_ptr<const FaultPlan> current() const;
    void set(FaultPlan plan);
    void clear() { set(FaultPlan()); }

private:
    mutable QMutex m_mutex;
    std::shared_ptr<const FaultPlan> m_plan;
};

} // namespace AgentConsole
