#include "mcpserversdock.h"

#include "ui/common/statuschip.h"
#include "ui/transcript/toolcalltext.h"

#include "core/console/mcpservers.h"
#include "core/console/runtimemonitor.h"

#include <QLocale>
#include <QCoreApplication>
#include <QDir>
#include <QGridLayout>
#include <QLabel>
#include <QPushButton>
#include <QScrollArea>
#include <QVBoxLayout>

#include <algorithm>
#include <memory>

namespace AgentConsole {

namespace {

// Refused tools named one by one in the server's details; the rest are counted.
constexpr int kRefusedShown = 5;

// While a restart or a breaker's cool-down counts down, in whole seconds.
constexpr int tickIntervalMs = 1000;

// The dock's words outside its members, in its context (lupdate reads DockWords::tr).
struct DockWords
{
    Q_DECLARE_TR_FUNCTIONS(AgentConsole::McpServersDock)
};

QString problemWords(McpServerStatus::Problem problem)
{
    using Problem = McpServerStatus::Problem;
    switch (problem) {
    case Problem::None:
    case Problem::Stopped:
        return DockWords::tr("the program exited or the connection closed");
    case Problem::CouldNotStart:
        return DockWords::tr("the program could not be started or the address could not be "
                             "reached");
    case Problem::NoAnswer:
        return DockWords::tr("it did not answer in time");
    case Problem::Refused:
        return DockWords::tr("it refused the console's requests");
    case Problem::AccessDenied:
        return DockWords::tr("it refused access: check its credentials");
    case Problem::NotUnderstood:
        return DockWords::tr("it sent messages that are not MCP, or too large");
    case Problem::OtherProtocol:
        return DockWords::tr("it speaks an MCP version this console does not");
    case Problem::SessionEnded:
        return DockWords::tr("it ended the session");
    case Problem::SignInNeeded:
        return DockWords::tr("it asks staff to sign in");
    case Problem::RefusedByPolicy:
        return DockWords::tr("your team's policy does not allow it");
    }
    return {};
}

QString seconds(qint64 ms)
{
    return DockWords::tr("%1 s", "a countdown in whole seconds").arg((ms + 999) / 1000);
}

// Its tools are refused until staff sign in: down for want of a token, or still connected
// but its token was refused and could not be refreshed (signed out while ready).
bool needsSignIn(const McpServerStatus &server)
{
    if (server.signIn == McpServerStatus::SignIn::SignedOut)
        return true;
    return server.state != McpServerStatus::State::Ready
        && server.problem == McpServerStatus::Problem::SignInNeeded;
}

QString stateText(const McpServerStatus &server)
{
    if (server.circuitOpen)
        return DockWords::tr("Circuit open");
    if (server.signIn == McpServerStatus::SignIn::SigningIn)
        return DockWords::tr("Signing in…");
    if (needsSignIn(server))
        return DockWords::tr("Sign-in needed");
    if (server.problem == McpServerStatus::Problem::RefusedByPolicy)
        return DockWords::tr("Not allowed");
    switch (server.state) {
    case McpServerStatus::State::Starting:
        return DockWords::tr("Starting…");
    case McpServerStatus::State::Ready:
        return DockWords::tr("Ready");
    case McpServerStatus::State::Down:
        return DockWords::tr("Down");
    }
    return {};
}

Tone stateTone(const McpServerStatus &server)
{
    if (server.circuitOpen)
        return Tone::Danger;
    // Waiting for staff is not an outage: it is what they act on.
    if (server.signIn == McpServerStatus::SignIn::SigningIn)
        return Tone::Info;
    if (needsSignIn(server))
        return Tone::Warning;
    // The team decided: nothing is broken, and nothing staff can do here.
    if (server.problem == McpServerStatus::Problem::RefusedByPolicy)
        return Tone::Neutral;
    switch (server.state) {
    case McpServerStatus::State::Starting:
        return Tone::Info;
    case McpServerStatus::State::Ready:
        return Tone::Success;
    case McpServerStatus::State::Down:
        return Tone::Danger;
    }
    return Tone::Neutral;
}

// Two sentences in a row, by one pattern: Chinese joins them without the space English puts
// between them.
QString sentences(const QString &first, const QString &second)
{
    return DockWords::tr("%1 %2", "two sentences, one after the other").arg(first, second);
}

QString detailText(const McpServerStatus &server)
{
    QStringList lines;
    switch (server.state) {
    case McpServerStatus::State::Starting:
        lines.append(DockWords::tr("Connecting and listing its tools."));
        break;
    case McpServerStatus::State::Ready:
        lines.append(
            !server.refusedTools.isEmpty()
                ? DockWords::tr("%n tool(s) offered", nullptr, server.tools)
                    + DockWords::tr("; %n not offered:", nullptr, int(server.refusedTools.size()))
                : DockWords::tr("%n tool(s) offered", nullptr, server.tools));
        if (server.timeoutsLimitedToMs > 0)
            lines.append(DockWords::tr("Its timeouts are limited to %1 s so that the turn can "
                                       "answer.")
                             .arg(QLocale().toString(server.timeoutsLimitedToMs / 1000.0)));
        for (const QString &refused : server.refusedTools.mid(0, kRefusedShown))
            lines.append(QStringLiteral("• ") + refused);
        if (server.refusedTools.size() > kRefusedShown)
            lines.append(DockWords::tr("and %n more (see the local log)", nullptr,
                                       int(server.refusedTools.size()) - kRefusedShown));
        if (needsSignIn(server))
            lines.append(DockWords::tr("Its tools are refused until staff sign in."));
        break;
    case McpServerStatus::State::Down: {
        if (server.problem == McpServerStatus::Problem::SignInNeeded
            || server.signIn == McpServerStatus::SignIn::SigningIn) {
            lines.append(DockWords::tr("Its tools are refused until staff sign in."));
            break;
        }
        if (server.problem == McpServerStatus::Problem::RefusedByPolicy) {
            // Core's words, naming the policy's version; never started, never restarted.
            lines.append(server.lastError + QLatin1Char('.'));
            break;
        }
        QString line = DockWords::tr("Down: %1.").arg(problemWords(server.problem));
        if (server.restartInMs >= 0)
            line = sentences(line,
                             DockWords::tr("Restarts in %1.").arg(seconds(server.restartInMs)));
        else if (server.givenUp)
            line = sentences(line,
                             DockWords::tr("Not restarted again; its tools fail fast "
                                           "until the console starts again."));
        lines.append(line);
        break;
    }
    }
    // A lead's isolation refuses its calls whatever its breaker says; core words it.
    if (!server.isolation.isEmpty())
        lines.append(server.isolation);
    else if (server.circuitOpen)
        lines.append(DockWords::tr("Its calls failed too often: they fail fast for %1.")
                         .arg(seconds(server.circuitCooldownLeftMs)));
    return lines.join(QLatin1Char('\n'));
}

QString signInProblemWords(McpServerStatus::SignInProblem problem)
{
    using Problem = McpServerStatus::SignInProblem;
    switch (problem) {
    case Problem::None:
        return {};
    case Problem::Cancelled:
        return DockWords::tr("The last sign-in was cancelled.");
    case Problem::TimedOut:
        return DockWords::tr("The last sign-in was not finished in time.");
    case Problem::Declined:
        return DockWords::tr("The sign-in page declined the console's request.");
    case Problem::Refused:
        return DockWords::tr("The authorization server refused the console: sign in again, "
                             "or check the server's client ID in mcp.json.");
    case Problem::Unreachable:
        return DockWords::tr("The authorization server did not answer.");
    case Problem::Unusable:
        return DockWords::tr("The server's sign-in cannot be used by the console: its "
                             "metadata is missing, wrong or not secure.");
    case Problem::TooManyAttempts:
        return DockWords::tr("The server kept refusing new sign-ins; the console stopped "
                             "asking.");
    case Problem::NoBrowser:
        return DockWords::tr("The browser could not be opened.");
    case Problem::Keychain:
        return DockWords::tr("The keychain did not keep the sign-in.");
    }
    return {};
}

QString signInLine(const McpServerStatus &server)
{
    using SignIn = McpServerStatus::SignIn;
    QString line;
    switch (server.signIn) {
    case SignIn::None:
        return {};
    case SignIn::NotNeeded:
        line = DockWords::tr("Sign-in: not asked for so far.");
        break;
    case SignIn::SignedOut:
        line = DockWords::tr("Signed out: the server asks for a sign-in.");
        break;
    case SignIn::SigningIn:
        return DockWords::tr("Signing in: finish in the browser page that opened.");
    case SignIn::SignedIn:
        line = DockWords::tr("Signed in; the sign-in is kept in the keychain.");
        break;
    }
    const QString problem = signInProblemWords(server.signInProblem);
    return problem.isEmpty() ? line : sentences(line, problem);
}

QString signInButtonWords(McpServerStatus::SignIn signIn)
{
    using SignIn = McpServerStatus::SignIn;
    switch (signIn) {
    case SignIn::None:
        return {};
    case SignIn::NotNeeded:
    case SignIn::SignedOut:
        return DockWords::tr("Sign in…");
    case SignIn::SigningIn:
        return DockWords::tr("Cancel sign-in");
    case SignIn::SignedIn:
        return DockWords::tr("Sign out");
    }
    return {};
}

Tone policyTone(const QString &policy)
{
    if (policy == QLatin1String("read"))
        return Tone::Neutral;
    if (policy == QLatin1String("idempotent-write"))
        return Tone::Info;
    return Tone::Warning;
}

QString deciderText(const McpServerStatus::Tool &tool)
{
    if (tool.decidedBy == McpServerStatus::Decider::Staff)
        return DockWords::tr("set by staff");
    return tool.hintsRelaxSafeguard ? DockWords::tr("from annotations (hints)")
                                    : DockWords::tr("from annotations");
}

// A tool whose annotations took a safeguard away, in one line.
QString noteText(const McpServerStatus::Tool &tool)
{
    if (!tool.hintsRelaxSafeguard)
        return {};
    return DockWords::tr("Hints, not verified: retried without confirmation");
}

QString stillApplies()
{
    return DockWords::tr("The arguments are still validated and every attempt keeps its "
                         "deadline. Staff can change the policy in Settings › MCP tool "
                         "policies.");
}

QString deciderToolTip(const McpServerStatus::Tool &tool)
{
    if (tool.decidedBy == McpServerStatus::Decider::Staff)
        return DockWords::tr("Staff chose this policy in Settings › MCP tool policies; the "
                             "server's annotations said: %1.")
            .arg(ToolCallText::policyWord(tool.annotatedPolicy));
    if (tool.hintsRelaxSafeguard)
        return noteText(tool) + QLatin1Char('\n') + ToolCallText::hintsWarning()
            + QLatin1Char('\n') + stillApplies();
    return DockWords::tr("The server's annotations (its own hints) chose this policy.");
}

// Under a server whose annotations relaxed a safeguard for some of its tools.
QString hintsNoteText()
{
    return DockWords::tr("“Hints”: the server's own annotations, not verified, let these "
                         "tools be retried without confirmation. Arguments are still "
                         "validated and every attempt keeps its deadline.");
}

QPalette mutedPalette(const QPalette &base)
{
    QPalette muted = base;
    const QColor colour = Internal::mutedTextColor(base);
    muted.setColor(QPalette::WindowText, colour);
    muted.setColor(QPalette::Text, colour);
    return muted;
}

QLabel *plainLabel(QWidget *parent, bool wrap = false)
{
    auto *label = new QLabel(parent);
    label->setTextFormat(Qt::PlainText);
    label->setWordWrap(wrap);
    return label;
}

// What decides the dock's layout: the servers and their tools, not the words in them.
QString shapeOf(const QList<McpServerStatus> &servers)
{
    QStringList parts;
    for (const McpServerStatus &server : servers) {
        parts.append(
            QStringLiteral("[") + server.name
            + (server.signIn == McpServerStatus::SignIn::None ? QString() : QStringLiteral("@")));
        for (const McpServerStatus::Tool &tool : server.toolPolicies)
            parts.append(tool.toolName
                         + (tool.hintsRelaxSafeguard ? QStringLiteral("!") : QString()));
    }
    return parts.join(QLatin1Char('\n'));
}

} // namespace

McpServersDock::McpServersDock(McpServers *servers, RuntimeMonitor *monitor,
                               const QString &dataDirectory, QWidget *parent)
    : QDockWidget(tr("MCP servers"), parent)
    , m_mcp(servers)
    , m_monitor(monitor)
    , m_dataDirectory(dataDirectory)
{
    Q_ASSERT(servers && monitor);
    setObjectName(QStringLiteral("mcpServersDock"));
    setFeatures(QDockWidget::DockWidgetClosable | QDockWidget::DockWidgetMovable
                | QDockWidget::DockWidgetFloatable);

    auto *content = new QWidget;
    auto *layout = new QVBoxLayout(content);
    layout->setContentsMargins(10, 8, 10, 10);
    layout->setSpacing(10);
    m_empty = plainLabel(content, true);
    m_empty->setObjectName(QStringLiteral("mcpServersEmpty"));
    m_empty->setPalette(mutedPalette(palette()));
    m_empty->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(m_empty);
    m_list = new QWidget(content);
    m_listLayout = new QVBoxLayout(m_list);
    m_listLayout->setContentsMargins(0, 0, 0, 0);
    m_listLayout->setSpacing(14);
    layout->addWidget(m_list);
    layout->addStretch(1);

    auto *scroll = new QScrollArea;
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    scroll->setWidget(content);
    setWidget(scroll);

    m_ticker.setTimerType(Qt::CoarseTimer);
    m_ticker.setInterval(tickIntervalMs);
    connect(&m_ticker, &QTimer::timeout, this, &McpServersDock::refresh);
    // A server's state, sign-in or tools, or its breaker: every change the monitor reports
    // (the runtime's toolsChanged is always followed by one).
    connect(m_monitor, &RuntimeMonitor::statusChanged, this, &McpServersDock::refresh);
    refresh();
}

void McpServersDock::onRuntimeReady()
{
    m_ready = true;
    refresh();
}

McpServersDock::~McpServersDock() = default;

void McpServersDock::refresh()
{
    const bool ready = m_ready;
    const QList<McpServerStatus> servers = ready ? m_monitor->status().mcpServers
                                                 : QList<McpServerStatus>();
    if (!ready) {
        m_empty->setText(tr("The console is starting; its MCP servers follow."));
    } else if (servers.isEmpty()) {
        m_empty->setText(
            tr("No MCP server is configured. To add one, open Settings › MCP servers "
               "(mcp.json)…, which writes the mcp.json of the data directory (%1), then "
               "start the console again.")
                .arg(QDir::toNativeSeparators(m_dataDirectory)));
    }
    m_empty->setVisible(servers.isEmpty());
    const QString shape = shapeOf(servers);
    if (shape != m_shape) {
        m_shape = shape;
        rebuild(servers);
    }
    fill(servers);

    const bool counting = std::any_of(servers.cbegin(), servers.cend(),
                                      [](const McpServerStatus &server) {
                                          return server.restartInMs >= 0 || server.circuitOpen;
                                      });
    if (counting && isVisible()) {
        if (!m_ticker.isActive())
            m_ticker.start();
    } else {
        m_ticker.stop();
    }
}

void McpServersDock::rebuild(const QList<McpServerStatus> &servers)
{
    // Few servers with few tools: laid out again whole when the list changes.
    m_servers.clear();
    m_serverOrder.clear();
    QWidget *old = m_list;
    m_list = new QWidget(old->parentWidget());
    m_listLayout = new QVBoxLayout(m_list);
    m_listLayout->setContentsMargins(0, 0, 0, 0);
    m_listLayout->setSpacing(14);
    if (auto *outer = qobject_cast<QVBoxLayout *>(old->parentWidget()->layout())) {
        const std::unique_ptr<QLayoutItem> replaced(outer->replaceWidget(old, m_list));
    }
    old->hide();
    old->deleteLater();

    const QPalette muted = mutedPalette(palette());
    for (const McpServerStatus &server : servers) {
        auto *block = new QWidget(m_list);
        block->setObjectName(QStringLiteral("mcpServer:") + server.name);
        auto *grid = new QGridLayout(block);
        grid->setContentsMargins(0, 0, 0, 0);
        grid->setHorizontalSpacing(8);
        grid->setVerticalSpacing(3);
        grid->setColumnStretch(0, 1);
        ServerRow row;
        row.name = plainLabel(block);
        QFont bold = row.name->font();
        bold.setWeight(QFont::DemiBold);
        row.name->setFont(bold);
        row.name->setText(server.name);
        row.name->setToolTip(server.transport);
        row.state = new StatusChip(block);
        row.detail = plainLabel(block, true);
        row.detail->setPalette(muted);
        row.detail->setToolTip(tr("Details are in the local log."));
        grid->addWidget(row.name, 0, 0);
        grid->addWidget(row.state, 0, 1, 1, 2, Qt::AlignRight | Qt::AlignVCenter);
        grid->addWidget(row.detail, 1, 0, 1, 3);
        int line = 2;
        if (server.signIn != McpServerStatus::SignIn::None) {
            row.signIn = plainLabel(block, true);
            row.signIn->setObjectName(QStringLiteral("mcpSignIn:") + server.name);
            row.signInAction = new QPushButton(block);
            row.signInAction->setObjectName(QStringLiteral("mcpSignInAction:") + server.name);
            const QString name = server.name;
            connect(row.signInAction, &QPushButton::clicked, this,
                    [this, name] { runSignInAction(name); });
            grid->addWidget(row.signIn, line, 0);
            grid->addWidget(row.signInAction, line, 1, 1, 2, Qt::AlignRight | Qt::AlignVCenter);
            ++line;
        }
        for (const McpServerStatus::Tool &tool : server.toolPolicies) {
            ToolRow toolRow;
            toolRow.name = plainLabel(block);
            toolRow.name->setText(tool.title == tool.toolName
                                      ? tool.toolName
                                      : tr("%1 (%2)", "a tool's title, then its name")
                                            .arg(tool.title, tool.toolName));
            toolRow.name->setToolTip(tr("The model calls it %1").arg(tool.name));
            toolRow.name->setContentsMargins(12, 0, 0, 0);
            toolRow.policy = new StatusChip(block);
            toolRow.decider = plainLabel(block);
            toolRow.decider->setPalette(muted);
            grid->addWidget(toolRow.name, line, 0);
            grid->addWidget(toolRow.policy, line, 1);
            grid->addWidget(toolRow.decider, line, 2);
            ++line;
            row.toolOrder.append(tool.toolName);
            row.tools.insert(tool.toolName, toolRow);
        }
        const bool hinted = std::any_of(server.toolPolicies.cbegin(), server.toolPolicies.cend(),
                                        [](const McpServerStatus::Tool &tool) {
                                            return tool.hintsRelaxSafeguard;
                                        });
        if (hinted) {
            row.note = plainLabel(block, true);
            row.note->setObjectName(QStringLiteral("mcpHintsNote"));
            row.note->setPalette(muted);
            row.note->setText(hintsNoteText());
            row.note->setToolTip(ToolCallText::hintsWarning());
            QFont small = row.note->font();
            if (small.pointSizeF() > 0)
                small.setPointSizeF(small.pointSizeF() * 0.9);
            row.note->setFont(small);
            grid->addWidget(row.note, line, 0, 1, 3);
        }
        m_listLayout->addWidget(block);
        m_serverOrder.append(server.name);
        m_servers.insert(server.name, row);
    }
}

void McpServersDock::fill(const QList<McpServerStatus> &servers)
{
    for (const McpServerStatus &server : servers) {
        const auto it = m_servers.find(server.name);
        if (it == m_servers.end())
            continue;
        // Values, not layout: the list of tools (and which run on hints) is as laid out.
        it->state->setStatus(stateText(server), stateTone(server));
        it->detail->setText(detailText(server));
        it->signInState = server.signIn;
        if (it->signIn) {
            it->signIn->setText(signInLine(server));
            it->signInAction->setText(signInButtonWords(server.signIn));
        }
        for (const McpServerStatus::Tool &tool : server.toolPolicies) {
            const auto row = it->tools.find(tool.toolName);
            if (row == it->tools.end())
                continue;
            row->note = noteText(tool);
            row->policy->setStatus(ToolCallText::policyWord(tool.policy), policyTone(tool.policy));
            row->decider->setText(deciderText(tool));
            row->decider->setToolTip(deciderToolTip(tool));
        }
    }
}

void McpServersDock::runSignInAction(const QString &server)
{
    const auto it = m_servers.constFind(server);
    if (it == m_servers.cend())
        return;
    // What the button said when it was clicked: McpServers decides what follows.
    switch (it->signInState) {
    case McpServerStatus::SignIn::None:
        return;
    case McpServerStatus::SignIn::NotNeeded:
    case McpServerStatus::SignIn::SignedOut:
        m_mcp->signIn(server);
        break;
    case McpServerStatus::SignIn::SigningIn:
        m_mcp->cancelSignIn(server);
        break;
    case McpServerStatus::SignIn::SignedIn:
        m_mcp->signOut(server);
        break;
    }
}

void McpServersDock::showEvent(QShowEvent *event)
{
    QDockWidget::showEvent(event);
    refresh(); // starts the countdown when one is due
}

void McpServersDock::hideEvent(QHideEvent *event)
{
    QDockWidget::hideEvent(event);
    m_ticker.stop();
}

QStringList McpServersDock::serverNames() const
{
    return m_serverOrder;
}

QString McpServersDock::serverStateText(const QString &server) const
{
    const auto it = m_servers.constFind(server);
    return it == m_servers.cend() ? QString() : it->state->text();
}

Tone McpServersDock::serverStateTone(const QString &server) const
{
    const auto it = m_servers.constFind(server);
    return it == m_servers.cend() ? Tone::Neutral : it->state->tone();
}

QString McpServersDock::serverDetailText(const QString &server) const
{
    const auto it = m_servers.constFind(server);
    return it == m_servers.cend() ? QString() : it->detail->text();
}

QStringList McpServersDock::toolNames(const QString &server) const
{
    const auto it = m_servers.constFind(server);
    return it == m_servers.cend() ? QStringList() : it->toolOrder;
}

const McpServersDock::ToolRow *McpServersDock::toolRow(const QString &server,
                                                       const QString &tool) const
{
    const auto it = m_servers.constFind(server);
    if (it == m_servers.cend())
        return nullptr;
    const auto row = it->tools.constFind(tool);
    return row == it->tools.cend() ? nullptr : &*row;
}

QString McpServersDock::toolPolicyText(const QString &server, const QString &tool) const
{
    const ToolRow *row = toolRow(server, tool);
    return row ? row->policy->text() : QString();
}

QString McpServersDock::toolDeciderText(const QString &server, const QString &tool) const
{
    const ToolRow *row = toolRow(server, tool);
    return row ? row->decider->text() : QString();
}

QString McpServersDock::toolNoteText(const QString &server, const QString &tool) const
{
    const ToolRow *row = toolRow(server, tool);
    return row ? row->note : QString();
}

QString McpServersDock::serverNoteText(const QString &server) const
{
    const auto it = m_servers.constFind(server);
    return it == m_servers.cend() || !it->note ? QString() : it->note->text();
}

QString McpServersDock::signInText(const QString &server) const
{
    const auto it = m_servers.constFind(server);
    return it == m_servers.cend() || !it->signIn ? QString() : it->signIn->text();
}

QString McpServersDock::signInActionText(const QString &server) const
{
    const auto it = m_servers.constFind(server);
    return it == m_servers.cend() || !it->signInAction ? QString() : it->signInAction->text();
}

void McpServersDock::triggerSignInAction(const QString &server)
{
    const auto it = m_servers.constFind(server);
    if (it != m_servers.cend() && it->signInAction)
        it->signInAction->click();
}

QString McpServersDock::emptyText() const
{
    return m_empty->isVisibleTo(this) ? m_empty->text() : QString();
}

} // namespace AgentConsole
