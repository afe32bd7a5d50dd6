#include "consoleshell.h"

#include "consolelanguage.h"
#include "consolewindow.h"
#include "ui/transcript/questioninput.h"

#include "core/turn/agentloop.h"
#include "core/console/agentruntime.h"

#include <QStatusBar>

namespace AgentConsole {

ConsoleShell::ConsoleShell(AgentRuntime *runtime, ConsoleSettings *stored, QObject *parent)
    : QObject(parent)
    , m_runtime(runtime)
    , m_stored(stored)
{
    makeWindow();
}

ConsoleShell::~ConsoleShell() = default;

void ConsoleShell::show()
{
    m_window->show();
}

void ConsoleShell::makeWindow()
{
    m_window = std::make_unique<ConsoleWindow>(m_runtime);
    m_window->useStoredSettings(m_stored);
    connect(m_window.get(), &ConsoleWindow::languageChosen, this, &ConsoleShell::switchLanguage);
}

void ConsoleShell::switchLanguage(const QString &language)
{
    const AgentLoop *loop = m_runtime->agentLoop();
    if ((loop && loop->isBusy()) || m_window->isResuming() || m_window->isScenarioRunning()) {
        m_window->statusBar()->showMessage(
            tr("The new language is used from the next start (a request is under way)."), 8000);
        return;
    }
    // Not from inside the settings dialog's signal: the dialog is the old window's child.
    QMetaObject::invokeMethod(
        this, [this, language] { rebuild(language); }, Qt::QueuedConnection);
}

void ConsoleShell::rebuild(const QString &language)
{
    const QByteArray geometry = m_window->saveGeometry();
    const QByteArray state = m_window->saveState();
    const QString typed = m_window->questionInput()->toPlainText();
    const bool shown = m_window->isVisible();
    std::unique_ptr<ConsoleWindow> old = std::move(m_window);

    ConsoleLanguage::install(language);
    makeWindow();
    m_window->restoreGeometry(geometry);
    m_window->restoreState(state);
    m_window->questionInput()->setPlainText(typed);
    // The new one first: hiding the only window could end the application.
    if (shown)
        m_window->show();
    old->hide();
    old.release()->deleteLater();
    Q_EMIT windowRebuilt(m_window.get());
}

} // namespace AgentConsole
