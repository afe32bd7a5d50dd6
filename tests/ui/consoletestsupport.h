#pragma once

// One console as a staff member would see it, for the panel suites: its own temporary data
// directory, a real runtime (store, executor, offline model) and the window, offscreen.
#include "core/turn/agentloop.h"
#include "core/console/agentruntime.h"
#include "core/console/faultcontrol.h"
#include "core/console/faultsandpolicies.h"
#include "core/console/toolpolicies.h"
#include "core/turn/turnresult.h"
#include "ui/window/consolewindow.h"
#include "ui/common/noticebanner.h"
#include "ui/transcript/questioninput.h"
#include "ui/common/statuschip.h"
#include "ui/transcript/toolcallcard.h"
#include "ui/transcript/transcriptview.h"

#include "screenshots.h"

#include <QAction>
#include <QDir>
#include <QFile>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include <memory>

namespace AgentConsole::UiTest {

using namespace std::chrono_literals;

constexpr int kTurnTimeoutMs = 20000;

// The window goes before the runtime it points into.
struct Console
{
    QTemporaryDir dataDir;
    std::unique_ptr<AgentRuntime> runtime;
    std::unique_ptr<ConsoleWindow> window;

    AgentLoop *loop() const { return runtime->agentLoop(); }
    FaultControl *faults() const { return runtime->faults(); }
    ToolPolicies *policies() const { return runtime->policies(); }
    QuestionInput *input() const { return window->questionInput(); }
    TranscriptView *transcript() const { return window->transcript(); }
};

inline void registerTypes()
{
    qRegisterMetaType<AgentConsole::TurnResult>();
    qRegisterMetaType<AgentConsole::ToolCallRecord>();
}

// Attempts that time out in 200 ms, so that a hang costs a test under a second.
inline RetryPolicy shortToolPolicy()
{
    RetryPolicy policy;
    policy.attemptTimeout = 200ms;
    policy.initialDelay = 10ms;
    policy.maxDelay = 20ms;
    return policy;
}

inline QString sourceFile(const char *relative)
{
    return QDir(QStringLiteral(AGENT_CONSOLE_SOURCE_DIR)).filePath(QLatin1String(relative));
}

inline bool writeFile(const QString &path, const QByteArray &contents)
{
    QFile file(path);
    return file.open(QIODevice::WriteOnly) && file.write(contents) == contents.size();
}

inline std::unique_ptr<Console> startConsole(RuntimeOptions options)
{
    auto console = std::make_unique<Console>();
    if (!console->dataDir.isValid()) {
        qWarning("no temporary directory");
        return {};
    }
    options.dataDirectory = console->dataDir.path();
    console->runtime = std::make_unique<AgentRuntime>(options);
    console->window = std::make_unique<ConsoleWindow>(console->runtime.get());
    console->window->resize(1280, 800);
    console->window->show();
    if (!QTest::qWaitForWindowExposed(console->window.get()))
        return {};
    QSignalSpy ready(console->runtime.get(), &AgentRuntime::ready);
    QSignalSpy failed(console->runtime.get(), &AgentRuntime::failed);
    console->runtime->start();
    if (!QTest::qWaitFor([&] { return !ready.isEmpty() || !failed.isEmpty(); }, kTurnTimeoutMs)
        || ready.isEmpty()) {
        qWarning("runtime not ready: %s",
            failed.isEmpty() ? "no signal" : qPrintable(failed.first().first().toString()));
        return {};
    }
    console->window->activateWindow();
    return console;
}

// Types `question` and presses Enter; returns the finished turn.
inline TurnResult askAndWait(Console &console, const QString &question, bool *ok)
{
    *ok = false;
    QSignalSpy finished(console.loop(), &AgentLoop::turnFinished);
    console.input()->setFocus();
    QTest::keyClicks(console.input(), question);
    QTest::keyClick(console.input(), Qt::Key_Return);
    if (!console.window->isTurnRunning() && finished.isEmpty()) {
        qWarning("Enter did not start a turn");
        return {};
    }
    if (finished.isEmpty() && !finished.wait(kTurnTimeoutMs)) {
        qWarning("the turn did not finish");
        return {};
    }
    if (!Testing::waitUntilShown(console.window.get())) {
        qWarning("the window did not show the finished turn");
        return {};
    }
    *ok = true;
    return finished.first().first().value<TurnResult>();
}

inline ToolCallCard *cardNamed(const QList<ToolCallCard *> &cards, const QString &name)
{
    for (ToolCallCard *card : cards) {
        if (card->toolName() == name)
            return card;
    }
    return nullptr;
}

inline const ToolCallRecord *callNamed(const TurnResult &turn, const QString &name)
{
    for (const ToolCallRecord &call : turn.toolCalls) {
        if (call.name == name)
            return &call;
    }
    return nullptr;
}

// AGENT_CONSOLE_SCREENSHOT_DIR, or build/screenshots.
using Testing::saveScreenshot;
using Testing::screenshotDirectory;

} // namespace AgentConsole::UiTest
