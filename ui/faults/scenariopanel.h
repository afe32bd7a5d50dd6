#pragma once

#include "core/scenarios/scenario.h" // Language

#include <QDockWidget>
#include <QStringList>

#include <memory>
#include <optional>

class QLabel;
class QListWidget;
class QPushButton;

namespace AgentConsole {

class AgentLoop;
class FaultControl;
class ScenarioRunner;
class NoticeBanner;
class StatusChip;
struct Scenario;
struct ScenarioVerdict;

// The scenario catalogue in the window (docs/SCENARIOS.md): the shipped scenarios by title
// and summary, and any scenario file. Choosing one runs it with the ScenarioRunner it is given
// (on the window's runtime: its faults and policies set, its questions asked in the transcript
// as usual); the
// panel says which scenario is running and, at the end, ✓ or ✗ against its expectation with
// what differed. Core runs and judges; the panel only shows.
class ScenarioPanel final : public QDockWidget
{
    Q_OBJECT

public:
    // Runs scenarios with `runner`, which becomes the panel's child; `faults` says which tools
    // a scenario file's plan may name (the runtime's, outliving this).
    ScenarioPanel(ScenarioRunner *runner, FaultControl *faults, QWidget *parent = nullptr);
    ~ScenarioPanel() override;

    // The runtime is ready: scenarios may run, and `loop` names their tools from now on.
    void onRuntimeReady(const AgentLoop *loop);

    // The shipped scenarios: names, and titles in the same order.
    QStringList scenarioNames() const;
    QString scenarioTitle(const QString &name) const;
    // A scenario's summary and the rows it shows, in staff words (the panel's description,
    // the menu's tooltip); empty for a name it does not know.
    QString scenarioDescription(const QString &name) const;
    // The selected scenario's description, as shown under the list.
    QString descriptionText() const;

    // The language the runs ask their questions in: the window's (ScenarioRunner::
    // setLanguage), so that a Chinese window's run reads Chinese all through.
    void setLanguage(Language language);

    // Runs a shipped scenario: false, with the reason shown, when it cannot start (another
    // run or turn under way, ...).
    bool runScenario(const QString &name);
    // Reads a scenario file on a pool thread and runs it as runScenario() does:
    // scenarioFileAnswered() says whether it started (the reason is shown when not, the file
    // refused among them), always after this returns.
    void runScenarioFile(const QString &path);
    bool isRunning() const;
    void cancel();

    QString runningScenario() const; // empty when none runs
    // The staff member's conversation the running scenario set aside (ScenarioRunner).
    QString setAsideConversation() const;
    QString stateText() const; // "Running…", "✓ As expected", "✗ Not as expected"
    QString resultText() const; // the verdict, with what differed
    std::optional<bool> lastMatched() const;
    QString noticeText() const;

Q_SIGNALS:
    void runningChanged(bool running);
    void scenarioFileAnswered(bool started);
    void finished(bool matched);

private:
    class Private;

    void addItem(const Scenario &scenario);
    void showSummary();
    void chooseScenarioFile();
    void runSelected();
    void onTurnStarted(int turnIndex, const QString &question);
    void onFinished(const ScenarioVerdict &verdict);
    void updateControls();

    std::unique_ptr<Private> d;
    FaultControl *m_faults = nullptr;
    const AgentLoop *m_loop = nullptr; // the runtime's, once it is ready
    QListWidget *m_list = nullptr;
    QLabel *m_summary = nullptr;
    QPushButton *m_runButton = nullptr;
    QPushButton *m_openButton = nullptr;
    QPushButton *m_stopButton = nullptr;
    StatusChip *m_stateChip = nullptr;
    QLabel *m_heading = nullptr;
    QLabel *m_progress = nullptr;
    QLabel *m_result = nullptr;
    NoticeBanner *m_notice = nullptr;
};

} // namespace AgentConsole
