#include "simfaultsender.h"

#include "../support/simfaultcontrol.h"

namespace AgentConsole {

SimFaultSender::SimFaultSender(std::function<void(const SimFaultAnswer &)> onAnswer)
    : m_onAnswer(std::move(onAnswer))
{
}

SimFaultSender::~SimFaultSender() = default;

bool SimFaultSender::setBackend(const QUrl &backendUrl)
{
    if ((m_control ? m_control->backendUrl() : QUrl()) == backendUrl)
        return false;
    m_control.reset();
    m_sent.reset();
    if (backendUrl.isValid()) {
        m_control = std::make_unique<SimFaultControl>(backendUrl);
        QObject::connect(m_control.get(), &SimFaultControl::answered, m_control.get(),
                         [this](const SimFaultAnswer &answer) { m_onAnswer(answer); });
    }
    return true;
}

SimFaultSender::Outcome SimFaultSender::send()
{
    if (!m_control)
        return m_section.isEmpty() ? Outcome::Nothing : Outcome::NeedsRestBackend;
    if (!m_section.isEmpty()) {
        if (m_sent && *m_sent == m_section)
            return Outcome::Nothing;
        m_control->put(m_section);
        m_sent = m_section;
        return Outcome::Sent;
    }
    if (m_sent) {
        m_control->reset();
        m_sent.reset();
        return Outcome::Sent;
    }
    return Outcome::Nothing;
}

bool SimFaultSender::isBusy() const
{
    return m_control && m_control->isBusy();
}

} // namespace AgentConsole
