#pragma once

// The fault and scenario panels read their files on a pool thread and answer with a signal:
// these ask and wait for that answer (bounded), for the window's suites. Header-only.

#include "ui/faults/faultpanel.h"
#include "ui/faults/scenariopanel.h"

#include <QAbstractButton>
#include <QApplication>
#include <QSignalSpy>
#include <QTimer>

#include <optional>

namespace AgentConsole::Testing {

namespace Detail {

// The answer's bool; nothing when none came within `waitMs`, or when it came within the call
// (the file would then have been read on the GUI thread).
template <typename Panel, typename Signal, typename Ask>
std::optional<bool> answerOf(Panel *panel, Signal signal, Ask ask, int waitMs)
{
    QSignalSpy answered(panel, signal);
    ask();
    if (!answered.isEmpty() || !answered.wait(waitMs))
        return std::nullopt;
    return answered.first().first().toBool();
}

} // namespace Detail

// Clicks `button`; true when the click returned without running an event loop of its own
// (a zero timer set before the click would fire inside one, and closes the modal dialog it
// finds so that the click returns either way).
inline bool clickReturnsWithoutALoop(QAbstractButton *button)
{
    bool loopRan = false;
    QTimer::singleShot(0, button, [&loopRan] {
        loopRan = true;
        if (QWidget *modal = QApplication::activeModalWidget())
            modal->close();
    });
    button->click();
    return !loopRan;
}

// Whether the panel put the fault file in force.
inline std::optional<bool> loadFaultFile(FaultPanel *panel, const QString &path,
                                         int waitMs = 20000)
{
    return Detail::answerOf(panel, &FaultPanel::faultFileAnswered,
                            [&] { panel->loadFaultFile(path); }, waitMs);
}

// Whether the panel started the scenario file.
inline std::optional<bool> runScenarioFile(ScenarioPanel *panel, const QString &path,
                                           int waitMs = 20000)
{
    return Detail::answerOf(panel, &ScenarioPanel::scenarioFileAnswered,
                            [&] { panel->runScenarioFile(path); }, waitMs);
}

} // namespace AgentConsole::Testing
