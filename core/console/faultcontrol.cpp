#include "faultcontrol.h"

#include "runtimewords.h"
#include "simfaultsender.h"

#include "../faults/livefaults.h"
#include "../support/simfaultcontrol.h"
#include "../support/supporttools.h"
#include "../telemetry/logging.h"
#include "../tools/toolregistry.h"

#include <QUrl>

namespace AgentConsole {

FaultControl::FaultControl(const ToolRegistry *tools, std::function<void()> afterSimAnswer,
                           QObject *parent)
    : QObject(parent)
    , m_tools(tools)
    , m_afterSimAnswer(std::move(afterSimAnswer))
    , m_live(std::make_shared<LiveFaults>())
    , m_sim(std::make_unique<SimFaultSender>(
          [this](const SimFaultAnswer &answer) { simAnswered(answer); }))
{
    Q_ASSERT(m_tools);
}

FaultControl::~FaultControl() = default;

FaultPlan FaultControl::plan() const
{
    return *m_live->current();
}

KnownTools FaultControl::knownTools() const
{
    return knownToolsOf(*m_tools);
}

void FaultControl::setPlan(const FaultPlan &plan)
{
    m_live->set(plan);
    qCInfo(lcAgent).noquote() << "fault plan set:"
                              << (plan.isEmpty() ? QStringLiteral("none") : plan.summary());
    Q_EMIT faultsChanged();
    if (plan.simFaults() != m_sim->section()) {
        m_sim->setSection(plan.simFaults());
        if (m_sending)
            send();
    }
}

void FaultControl::clear()
{
    setPlan(FaultPlan());
}

bool FaultControl::hasActiveFaults() const
{
    return !m_live->current()->isEmpty();
}

bool FaultControl::isSendingSimFaults() const
{
    return m_sim->isBusy();
}

QString FaultControl::summary(bool translated) const
{
    return m_live->current()->summary(translated ? FaultPlan::SummaryWords::Staff
                                                 : FaultPlan::SummaryWords::Log);
}

QJsonObject FaultControl::conditions() const
{
    const std::shared_ptr<const FaultPlan> plan = m_live->current();
    QJsonObject faults{{QStringLiteral("active"), !plan->isEmpty()}};
    if (!plan->isEmpty()) {
        faults.insert(QStringLiteral("summary"), plan->summary(FaultPlan::SummaryWords::Log));
        faults.insert(QStringLiteral("plan"), plan->toJson());
    }
    return faults;
}

void FaultControl::startWith(const FaultPlan &plan)
{
    m_live->set(plan);
    m_sim->setSection(plan.simFaults());
}

bool FaultControl::beginSending()
{
    m_sending = true;
    return send();
}

void FaultControl::setBackend(const QUrl &restUrl)
{
    if (m_sim->setBackend(restUrl) && restUrl.isValid() && m_sending)
        send();
}

bool FaultControl::send()
{
    switch (m_sim->send()) {
    case SimFaultSender::Outcome::Sent:
        return true;
    case SimFaultSender::Outcome::NeedsRestBackend:
        qCWarning(lcAgent) << "fault plan: the sim section needs a REST backend; not sent";
        Q_EMIT faultsRefused(AgentRuntimeWords::tr(
            "the support-sim faults apply only when the backend is REST (support-sim); "
            "they were not sent"));
        return false;
    case SimFaultSender::Outcome::Nothing:
        return false;
    }
    return false;
}

void FaultControl::simAnswered(const SimFaultAnswer &answer)
{
    if (answer.isApplied())
        Q_EMIT simFaultsApplied();
    else
        Q_EMIT faultsRefused(answer.reason);
    if (m_afterSimAnswer)
        m_afterSimAnswer();
}

} // namespace AgentConsole
