#pragma once

#include <QJsonObject>
#include <QObject>
#include <QString>

#include <functional>
#include <memory>

class QUrl;

namespace AgentConsole {

class FaultPlan;
class LiveFaults;
class SimFaultSender;
class ToolRegistry;
struct KnownTools;
struct SimFaultAnswer;

// The fault plan in force (docs/FAULTS.md), replaced while the console runs (the fault panel,
// a scenario): every tool attempt and model call reads it as it starts, so a change applies to
// the next one without a restart. The plan starts as --faults gave it. Its "sim" section goes
// to support-sim when the backend is REST and the section changed (PUT /sim/faults, or POST
// /sim/faults/reset once it is gone), asynchronously: simFaultsApplied() or faultsRefused()
// follows. Lives on the runtime's thread.
class FaultControl final : public QObject
{
    Q_OBJECT

public:
    // `tools`: the runtime's registry (the tools a plan may name); it outlives this.
    // `afterSimAnswer` runs once support-sim's answer has been told (simFaultsApplied or
    // faultsRefused): the runtime's ready() waits for the answer to the start's section.
    FaultControl(const ToolRegistry *tools, std::function<void()> afterSimAnswer,
                 QObject *parent = nullptr);
    ~FaultControl() override;

    FaultPlan plan() const;
    // The tools a plan may name, and which of them write (for FaultPlan::fromJson).
    KnownTools knownTools() const;
    void setPlan(const FaultPlan &plan);
    void clear();
    bool hasActiveFaults() const;
    // A "sim" section is on its way to support-sim: a scenario that asks now may meet the
    // sim's old faults. At start, the runtime's ready() waits for the sim's answer instead.
    bool isSendingSimFaults() const;
    // One line for the status bar; empty without a plan. In the log's English, or in the
    // window's language with `translated` (FaultPlan::SummaryWords::Staff).
    QString summary(bool translated = false) const;
    // The plan as a turn keeps it (TurnResult::conditions): {"active", and when it is,
    // "summary" in the log's words and "plan"}.
    QJsonObject conditions() const;

    // The runtime's side. What the support tools and the models read as each attempt starts.
    std::shared_ptr<LiveFaults> liveFaults() const { return m_live; }
    // The plan the start read (--faults), in force at once; nothing is sent yet and nobody is
    // told (the window reads the plan when the runtime is ready).
    void startWith(const FaultPlan &plan);
    // From now on the "sim" section goes to support-sim whenever it or the backend changes.
    // True when the start's section went out now (its answer follows).
    bool beginSending();
    // The backend in force: its REST URL, or an invalid one for the embedded store. Another
    // backend is another sim: the section goes to the new one.
    void setBackend(const QUrl &restUrl);

Q_SIGNALS:
    // The fault plan in force changed (setPlan, clear).
    void faultsChanged();
    // support-sim took the plan's "sim" section (or its reset), at start or after a change.
    void simFaultsApplied();
    // Part of the plan could not be put in force: support-sim did not answer or refused the
    // "sim" section, or the backend is not REST. One line for staff, no URL; details are in
    // the local log. The rest of the plan is in force.
    void faultsRefused(const QString &reason);

private:
    // True when a request went out (its answer follows).
    bool send();
    void simAnswered(const SimFaultAnswer &answer);

    const ToolRegistry *m_tools;
    std::function<void()> m_afterSimAnswer;
    const std::shared_ptr<LiveFaults> m_live;
    std::unique_ptr<SimFaultSender> m_sim;
    bool m_sending = false;
};

} // namespace AgentConsole
