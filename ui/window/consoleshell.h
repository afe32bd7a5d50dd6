#pragma once

#include <QObject>
#include <QString>

#include <memory>

namespace AgentConsole {

class AgentRuntime;
class ConsoleSettings;
class ConsoleWindow;

// The console's one window, kept for agent-console: shown at start, and made again in the
// other language when staff choose one in Settings, so that the switch is live. The widgets
// build their words once; a new window over the same runtime reopens the same conversation
// (the history restores it), keeps the geometry, the docks and the question being typed.
// While a turn runs (or waits for a confirmation, a resume or a scenario), nothing is
// rebuilt: the window says the language is used from the next start.
class ConsoleShell final : public QObject
{
    Q_OBJECT

public:
    // Neither is owned; both outlive the shell.
    ConsoleShell(AgentRuntime *runtime, ConsoleSettings *stored, QObject *parent = nullptr);
    ~ConsoleShell() override;

    ConsoleWindow *window() const { return m_window.get(); }
    void show();

Q_SIGNALS:
    // A new window replaced the old one (which is deleted later).
    void windowRebuilt(AgentConsole::ConsoleWindow *window);

private:
    void makeWindow();
    void switchLanguage(const QString &language);
    void rebuild(const QString &language);

    AgentRuntime *m_runtime;
    ConsoleSettings *m_stored;
    std::unique_ptr<ConsoleWindow> m_window;
};

} // namespace AgentConsole
