#pragma once

#include "ui/common/consolepalette.h"

#include "core/console/runtimestatus.h"

#include <QDockWidget>
#include <QHash>
#include <QTimer>

class QLabel;
class QPushButton;
class QVBoxLayout;

namespace AgentConsole {

class McpServers;
class RuntimeMonitor;
class StatusChip;

// The MCP servers of mcp.json (View › MCP servers), in the file's order: each one's state
// (starting, ready, down with why and when it restarts, circuit open), and under it its tools,
// each with its policy as a chip (read, idempotent write, confirm first) and who decided it:
// the server's annotations or staff. Where annotations take a safeguard away it says that
// they are hints nobody verified. It shows RuntimeStatus::mcpServers, read again on
// RuntimeMonitor::statusChanged (and once a second while a restart or a cool-down counts down,
// only while it is visible); it decides nothing. A server that signs in (OAuth) has a line
// with its sign-in state and one button, whose click McpServers acts on (Sign in…, Cancel
// sign-in, Sign out).
class McpServersDock final : public QDockWidget
{
    Q_OBJECT

public:
    // `servers` signs in and out; `monitor` says how each server is (RuntimeStatus::
    // mcpServers, with its breaker); both the runtime's, outliving this. `dataDirectory`: where
    // an mcp.json would be read, named when there is none.
    McpServersDock(McpServers *servers, RuntimeMonitor *monitor, const QString &dataDirectory,
                   QWidget *parent = nullptr);
    ~McpServersDock() override;

    // The runtime is ready: its servers are listed from now on.
    void onRuntimeReady();

    // What the dock shows, as text, for tests and for anyone reading it aloud.
    QStringList serverNames() const;
    QString serverStateText(const QString &server) const;
    Tone serverStateTone(const QString &server) const;
    QString serverDetailText(const QString &server) const;
    // The server's own tool names, in its order.
    QStringList toolNames(const QString &server) const;
    QString toolPolicyText(const QString &server, const QString &tool) const;
    QString toolDeciderText(const QString &server, const QString &tool) const;
    // The first line of the tool's "who decided" tooltip: for a tool whose annotations relaxed
    // a safeguard, "Hints, not verified: retried without confirmation".
    QString toolNoteText(const QString &server, const QString &tool) const;
    // The note under a server some of whose tools run on its hints; empty otherwise.
    QString serverNoteText(const QString &server) const;
    // The sign-in line of a server that signs in (OAuth), and its button's words (Sign in…,
    // Cancel sign-in, Sign out); empty for one that does not. triggerSignInAction clicks it.
    QString signInText(const QString &server) const;
    QString signInActionText(const QString &server) const;
    void triggerSignInAction(const QString &server);
    // The sentence shown when there is no MCP server; empty while servers are listed.
    QString emptyText() const;
    bool isTicking() const { return m_ticker.isActive(); }

public Q_SLOTS:
    void refresh();

protected:
    void showEvent(QShowEvent *event) override;
    void hideEvent(QHideEvent *event) override;

private:
    struct ToolRow
    {
        QLabel *name = nullptr;
        StatusChip *policy = nullptr;
        QLabel *decider = nullptr;
        QString note; // the first line of the decider's tooltip, for a tool on its hints
    };
    struct ServerRow
    {
        QLabel *name = nullptr;
        StatusChip *state = nullptr;
        QLabel *detail = nullptr;
        QLabel *note = nullptr; // the hints' note, when some tool runs on them
        QLabel *signIn = nullptr; // for a server that signs in
        QPushButton *signInAction = nullptr;
        McpServerStatus::SignIn signInState = McpServerStatus::SignIn::None;
        QStringList toolOrder;
        QHash<QString, ToolRow> tools;
    };

    void rebuild(const QList<McpServerStatus> &servers);
    void fill(const QList<McpServerStatus> &servers);
    void runSignInAction(const QString &server);
    const ToolRow *toolRow(const QString &server, const QString &tool) const;

    McpServers *m_mcp = nullptr;
    RuntimeMonitor *m_monitor = nullptr;
    const QString m_dataDirectory;
    bool m_ready = false;
    QWidget *m_list = nullptr;
    QVBoxLayout *m_listLayout = nullptr;
    QLabel *m_empty = nullptr;
    QStringList m_serverOrder;
    QHash<QString, ServerRow> m_servers;
    QString m_shape; // the servers and their tools as last laid out: rebuilt when it changes
    QTimer m_ticker;
};

} // namespace AgentConsole
