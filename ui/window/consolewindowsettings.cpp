// The console window's stored settings: geometry and docks restored and saved, the settings
// dialog's values kept, the window kept on its screen. Apart from consolewindow.cpp so that the
// window's main file stays about the conversation.
#include "consolewindow.h"

#include "consolelanguage.h"
#include "ui/mcp/mcpconfigdialog.h"
#include "ui/common/noticebanner.h"

#include "core/console/activeconnection.h"
#include "core/console/agentruntime.h"
#include "core/console/consolesettings.h"
#include "core/console/mcpconfigfile.h"
#include "core/console/mcpservers.h"
#include "core/console/settingkeys.h"
#include "core/console/teampolicy.h"

#include <QCloseEvent>
#include <QMetaMethod>
#include <QPointer>
#include <QScreen>
#include <QStatusBar>

#include <algorithm>

namespace AgentConsole {

void ConsoleWindow::useStoredSettings(ConsoleSettings *settings)
{
    m_storedSettings = settings;
    if (!settings)
        return;
    // Saves write off the GUI thread; a file that turns out unwritable is said when it does.
    settings->writeInBackground(this,
                                [this](const QString &reason) { showSettingsNotSaved(reason); });
    const StoredSettings &stored = settings->settings();
    // Qt checks a restored geometry against the screens there are now; fitToScreen() then
    // covers a screen that became smaller or more scaled since.
    if (!stored.windowGeometry.isEmpty() && !restoreGeometry(stored.windowGeometry))
        qWarning("the stored window geometry was not understood; the default size is used");
    if (!stored.windowState.isEmpty() && !restoreState(stored.windowState))
        qWarning("the stored dock layout was not understood; the default layout is used");
    fitToScreen();
    if (m_runtime->isReady()) {
        showStoredSettingsProblems();
        showTeamPolicy(); // the settings it locks, when the runtime was ready first
    }
}

void ConsoleWindow::fitToScreen()
{
    if (isMaximized() || isFullScreen())
        return;
    const QScreen *where = screen();
    if (!where)
        return;
    const QRect available = where->availableGeometry();
    // The frame is not known before the window is shown: leave room for a usual one.
    const QSize frameExtra = isVisible() ? frameGeometry().size() - geometry().size()
                                         : QSize(0, 0);
    const QSize room = available.size() - frameExtra;
    const QSize fitted(std::min(width(), room.width()), std::min(height(), room.height()));
    if (minimumWidth() > fitted.width() || minimumHeight() > fitted.height())
        setMinimumSize(std::min(minimumWidth(), fitted.width()),
                       std::min(minimumHeight(), fitted.height()));
    if (fitted != size())
        resize(fitted);
    // A window placed partly off the screen (a restored position, a screen gone) moves in.
    QRect frame = isVisible() ? frameGeometry() : QRect(pos(), size() + frameExtra);
    if (!available.contains(frame)) {
        frame.moveLeft(
            std::clamp(frame.left(), available.left(),
                       std::max(available.left(), available.right() - frame.width() + 1)));
        frame.moveTop(
            std::clamp(frame.top(), available.top(),
                       std::max(available.top(), available.bottom() - frame.height() + 1)));
        move(frame.topLeft());
    }
}

void ConsoleWindow::closeEvent(QCloseEvent *event)
{
    if (m_storedSettings)
        m_storedSettings->saveWindow(saveGeometry(), saveState());
    QMainWindow::closeEvent(event);
}

QString ConsoleWindow::storedLanguage() const
{
    return m_storedSettings ? m_storedSettings->settings().language : QStringLiteral("system");
}

void ConsoleWindow::saveAppliedSettings(const ModelOptions &model, const BackendOptions &backend,
                                        const QString &ledgerSpec, const QString &teamSpec,
                                        const QString &language)
{
    if (!m_storedSettings)
        return;
    const RuntimeOptions &applied = m_runtime->options();
    QString error;
    const bool languageChanged = ConsoleLanguage::resolve(language) != ConsoleLanguage::current();
    // The dialog's own values: the runtime may still be waiting for the keychain.
    bool saved = m_storedSettings->saveConnection(model, backend, &error);
    saved = saved && m_storedSettings->saveLedger(ledgerSpec, &error);
    saved = saved && m_storedSettings->saveTeam(teamSpec, &error);
    saved = saved && m_storedSettings->saveLanguage(language, &error);
    // The window's words are made once, with its widgets: another language needs a new
    // window (ConsoleShell makes one), else it shows from the next start, said so in the
    // language there is now (docs/TRANSLATIONS.md).
    QStringList nextStart;
    if (ledgerSpec != applied.ledgerSpec)
        nextStart.append(tr("The new ledger is used from the next start."));
    if (teamSpec != applied.teamSpec)
        nextStart.append(tr("The team database is used from the next start."));
    const bool liveSwitch = saved && languageChanged
        && isSignalConnected(QMetaMethod::fromSignal(&ConsoleWindow::languageChosen));
    if (languageChanged && !liveSwitch)
        nextStart.append(tr("The new language is used from the next start."));
    if (!saved)
        showSettingsNotSaved(error);
    else if (!nextStart.isEmpty())
        statusBar()->showMessage(nextStart.join(QLatin1Char(' ')), 8000);
    if (liveSwitch)
        Q_EMIT languageChosen(ConsoleLanguage::resolve(language));
}

void ConsoleWindow::showSettingsNotSaved(const QString &reason)
{
    showNotice(tr("The settings apply now but were not saved"), reason, Tone::Warning);
}

void ConsoleWindow::openMcpSettings()
{
    // The file the runtime read at start; what is saved applies from the next one.
    auto *dialog = new McpConfigDialog(McpConfigFile::pathFor(m_runtime->options()),
                                       m_runtime->connection()->secretStore(), this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    // The servers the team's policy does not allow are refused when saved; a locked mcp.json
    // is shown, not edited (docs/POLICY.md).
    const TeamPolicy *team = m_runtime->teamPolicy();
    dialog->setTeamPolicy(
        [mcp = QPointer<McpServers>(m_runtime->mcp())](const QString &server) {
            return mcp ? mcp->refusalOf(server) : QString();
        },
        team->isLocked(SettingKeys::mcpServers) ? team->refusal(SettingKeys::mcpServers)
                                                : QString());
    connect(dialog, &QDialog::accepted, this, [this, dialog] {
        statusBar()->showMessage(
            tr("mcp.json saved (%n secret(s) moved to the keychain). The MCP servers change "
               "when the console restarts.",
               nullptr, dialog->movedSecrets()),
            10000);
    });
    dialog->open(); // window-modal, without a nested event loop
}

void ConsoleWindow::showStoredSettingsProblems()
{
    if (!m_storedSettings || m_storedSettings->problems().isEmpty())
        return;
    showNotice(tr("Some stored settings were not used"),
               m_storedSettings->problems().join(QLatin1Char('\n')), Tone::Warning);
}

} // namespace AgentConsole
