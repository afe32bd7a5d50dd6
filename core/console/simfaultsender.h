#pragma once

#include <QJsonObject>
#include <QUrl>

#include <functional>
#include <memory>
#include <optional>

namespace AgentConsole {

class SimFaultControl;
struct SimFaultAnswer;

// The fault plan's "sim" section on its way to support-sim (docs/FAULTS.md, "support-sim
// faults"): put when the backend is REST and the section changed (a PUT restarts the sim's
// counts), reset once the section is gone. Only what this console set is ever reset, never
// faults the sim was started with. Answers arrive asynchronously through `onAnswer`.
class SimFaultSender final
{
public:
    enum class Outcome {
        Nothing, // nothing to send, or the sim has it already
        Sent, // a request went out; onAnswer follows
        NeedsRestBackend, // a section, but the backend is the embedded store: not sent
    };

    explicit SimFaultSender(std::function<void(const SimFaultAnswer &)> onAnswer);
    ~SimFaultSender();

    // The REST backend's URL, or an invalid one for the embedded store. Another backend is
    // another sim: what was sent to the old one is forgotten. True when the sim changed.
    bool setBackend(const QUrl &backendUrl);
    QJsonObject section() const { return m_section; }
    void setSection(const QJsonObject &section) { m_section = section; }
    Outcome send();
    bool isBusy() const; // a request is on its way

private:
    std::function<void(const SimFaultAnswer &)> m_onAnswer;
    std::unique_ptr<SimFaultControl> m_control; // null with the embedded store
    QJsonObject m_section; // the plan's "sim" section in force
    std::optional<QJsonObject> m_sent; // what this console last set on the sim
};

} // namespace AgentConsole
