#pragma once

// A console as a staff member sees it, for the timeline and dock suites and ui_stall_bench:
// its own data directory, a real runtime (store, executor, offline model) and the window.
// Faults and policies are set the way the window's panels set them, on the running runtime.
#include "core/turn/agentloop.h"
#include "core/console/agentruntime.h"
#include "core/console/faultcontrol.h"
#include "core/console/toolpolicies.h"
#include "core/turn/turnresult.h"
#include "core/faults/faultplan.h"
#include "core/resilience/retrypolicy.h"
#include "ui/window/consolewindow.h"
#include "ui/transcript/questioninput.h"
#include "ui/transcript/transcriptview.h"

#include "runtimestart.h"
#include "screenshots.h"

#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include <memory>

namespace AgentConsole::Testing {

struct ConsoleFixture
{
    QTemporaryDir dataDir;
    std::unique_ptr<AgentRuntime> runtime;
    std::unique_ptr<ConsoleWindow> window; // goes before the runtime it points into

    ~ConsoleFixture() { window.reset(); }

    AgentLoop *loop() const { return runtime->agentLoop(); }
    FaultControl *faults() const { return runtime->faults(); }
    ToolPolicies *policies() const { return runtime->policies(); }

    // Starts the runtime and shows the window (when `show`); false with a warning when the
    // runtime did not become ready within `timeoutMs`.
    bool start(RuntimeOptions options = {}, bool show = true, int timeoutMs = 20000)
    {
        if (!dataDir.isValid()) {
            qWarning("no temporary directory");
            return false;
        }
        options.dataDirectory = dataDir.path();
        runtime = std::make_unique<AgentRuntime>(options);
        window = std::make_unique<ConsoleWindow>(runtime.get());
        window->resize(1280, 800);
        if (show) {
            window->show();
            if (!QTest::qWaitForWindowExposed(window.get()))
                return false;
        }
        return startAndWait(*runtime, timeoutMs);
    }

    // The fault plan from JSON, set live as the fault panel does; false when it is refused.
    bool setFaults(const QByteArray &json)
    {
        QString error;
        const std::optional<FaultPlan> plan
            = FaultPlan::fromJson(json, &error, faults()->knownTools());
        if (!plan) {
            qWarning("fault plan refused: %s", qPrintable(error));
            return false;
        }
        faults()->setPlan(*plan);
        return true;
    }

    bool setPolicy(const QString &tool, const RetryPolicy &policy)
    {
        QString error;
        if (!policies()->setPolicy(tool, policy, &error)) {
            qWarning("policy refused: %s", qPrintable(error));
            return false;
        }
        return true;
    }

    // Types the question and presses Enter, as staff do; the request id, empty when no turn
    // started.
    QString ask(const QString &question)
    {
        QSignalSpy started(loop(), &AgentLoop::turnStarted);
        window->questionInput()->setPlainText(question);
        QTest::keyClick(window->questionInput(), Qt::Key_Return);
        return started.isEmpty() ? QString() : started.first().first().toString();
    }

    // Asks and waits for the turn to finish and the window to show it; ok is false when it
    // did not.
    TurnResult askAndWait(const QString &question, bool *ok, int timeoutMs = 20000)
    {
        *ok = false;
        QSignalSpy finished(loop(), &AgentLoop::turnFinished);
        if (ask(question).isEmpty() && finished.isEmpty()) {
            qWarning("Enter did not start a turn");
            return {};
        }
        if (finished.isEmpty() && !finished.wait(timeoutMs)) {
            qWarning("the turn did not finish");
            return {};
        }
        if (!Testing::waitUntilShown(window.get())) {
            qWarning("the window did not show the finished turn");
            return {};
        }
        *ok = true;
        return finished.first().first().value<TurnResult>();
    }
};

// A tool policy short enough for tests: attempts time out after `timeoutMs`.
inline RetryPolicy shortPolicy(int timeoutMs = 150, int firstDelayMs = 40, int maxDelayMs = 80)
{
    RetryPolicy policy;
    policy.attemptTimeout = std::chrono::milliseconds(timeoutMs);
    policy.initialDelay = std::chrono::milliseconds(firstDelayMs);
    policy.maxDelay = std::chrono::milliseconds(maxDelayMs);
    return policy;
}

} // namespace AgentConsole::Testing
