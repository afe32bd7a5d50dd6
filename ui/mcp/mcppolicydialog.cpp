#include "mcppolicydialog.h"

#include "ui/common/policylock.h"

#include "ui/common/consolepalette.h"
#include "ui/transcript/toolcalltext.h"

#include <QComboBox>
#include <QDialogButtonBox>
#include <QGridLayout>
#include <QLabel>
#include <QPushButton>
#include <QScrollArea>
#include <QScrollBar>
#include <QVBoxLayout>

#include <algorithm>

namespace AgentConsole {

McpPolicyDialog::McpPolicyDialog(const QList<McpServerStatus> &servers,
                                 const QMap<QString, QString> &policies, QWidget *parent)
    : QDialog(parent)
    , m_policies(policies)
{
    setObjectName(QStringLiteral("mcpPolicyDialog"));
    setWindowTitle(tr("MCP tool policies"));
    auto *layout = new QVBoxLayout(this);

    auto *intro = new QLabel(
        tr("Each MCP tool runs as its server's annotations say, unless you choose otherwise "
           "here. Annotations are hints from a server that may not be trusted. Whatever the "
           "policy, arguments are validated and every attempt keeps its deadline; the change "
           "applies from each tool's next call."),
        this);
    intro->setWordWrap(true);
    layout->addWidget(intro);

    auto *table = new QWidget;
    auto *grid = new QGridLayout(table);
    grid->setContentsMargins(0, 4, 0, 4);
    grid->setHorizontalSpacing(12);
    grid->setVerticalSpacing(6);
    grid->setColumnStretch(0, 1);
    int row = 0;
    QPalette muted = palette();
    muted.setColor(QPalette::WindowText, Internal::mutedTextColor(muted));
    for (const McpServerStatus &server : servers) {
        auto *name = new QLabel(server.name, table);
        name->setTextFormat(Qt::PlainText);
        QFont bold = name->font();
        bold.setWeight(QFont::DemiBold);
        name->setFont(bold);
        grid->addWidget(name, row++, 0, 1, 3);
        if (server.toolPolicies.isEmpty()) {
            auto *none = new QLabel(tr("No tools listed now; a server shows them once it is "
                                       "ready."),
                                    table);
            none->setPalette(muted);
            none->setContentsMargins(12, 0, 0, 0);
            grid->addWidget(none, row++, 0, 1, 3);
        }
        for (const McpServerStatus::Tool &tool : server.toolPolicies) {
            auto *toolName = new QLabel(tool.toolName, table);
            toolName->setTextFormat(Qt::PlainText);
            toolName->setContentsMargins(12, 0, 0, 0);
            toolName->setToolTip(tool.title);
            auto *annotated = new QLabel(
                tr("annotations: %1").arg(ToolCallText::policyWord(tool.annotatedPolicy)), table);
            annotated->setPalette(muted);
            auto *choice = new QComboBox(table);
            choice->setObjectName(QStringLiteral("mcpPolicy:") + tool.policyKey);
            choice->addItem(
                tr("As annotated (%1)").arg(ToolCallText::policyWord(tool.annotatedPolicy)),
                QString());
            choice->addItem(ToolCallText::policyWord(QStringLiteral("read")),
                            QStringLiteral("read"));
            choice->addItem(ToolCallText::policyWord(QStringLiteral("idempotent-write")),
                            QStringLiteral("idempotent-write"));
            choice->addItem(ToolCallText::policyWord(QStringLiteral("write")),
                            QStringLiteral("confirm"));
            choice->setAccessibleName(tr("Policy of %1").arg(tool.toolName));
            const int current = choice->findData(policies.value(tool.policyKey));
            choice->setCurrentIndex(std::max(0, current));
            grid->addWidget(toolName, row, 0);
            grid->addWidget(annotated, row, 1);
            grid->addWidget(choice, row, 2);
            m_choices.insert(tool.policyKey, choice);
            ++row;
        }
    }
    if (m_choices.isEmpty()) {
        auto *none = new QLabel(tr("No MCP tool is listed now. A server that is starting or "
                                   "down shows its tools once it is ready."),
                                table);
        none->setWordWrap(true);
        grid->addWidget(none, row++, 0, 1, 3);
    }
    auto *scroll = new QScrollArea(this);
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    scroll->setWidget(table);
    scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    // As wide as its rows, and as tall as a dozen of them before it scrolls.
    table->adjustSize();
    scroll->setMinimumWidth(table->sizeHint().width()
                            + scroll->verticalScrollBar()->sizeHint().width() + 4);
    scroll->setMinimumHeight(std::min(table->sizeHint().height(), fontMetrics().height() * 24));
    layout->addWidget(scroll, 1);

    m_problem = new QLabel(this);
    m_problem->setObjectName(QStringLiteral("mcpPolicyProblem"));
    m_problem->setWordWrap(true);
    m_problem->setTextFormat(Qt::PlainText);
    m_problem->setVisible(false);
    layout->addWidget(m_problem);

    m_buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
    m_buttons->button(QDialogButtonBox::Ok)->setEnabled(!m_choices.isEmpty());
    connect(m_buttons, &QDialogButtonBox::accepted, this, &McpPolicyDialog::applyRequested);
    connect(m_buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    layout->addWidget(m_buttons);
    intro->setMinimumWidth(fontMetrics().averageCharWidth() * 60);
    resize(std::max(sizeHint().width(), fontMetrics().averageCharWidth() * 90),
           sizeHint().height());
}

QMap<QString, QString> McpPolicyDialog::policies() const
{
    QMap<QString, QString> chosen = m_policies; // tools not listed now keep theirs
    for (auto it = m_choices.cbegin(); it != m_choices.cend(); ++it) {
        const QString word = it.value()->currentData().toString();
        if (word.isEmpty())
            chosen.remove(it.key());
        else
            chosen.insert(it.key(), word);
    }
    return chosen;
}

QComboBox *McpPolicyDialog::choiceFor(const QString &policyKey) const
{
    return m_choices.value(policyKey);
}

void McpPolicyDialog::setLocked(const QString &refusal)
{
    for (QComboBox *choice : std::as_const(m_choices)) {
        if (!PolicyLock::lock(choice, refusal)) // a layout the lock cannot join: still locked
            choice->setEnabled(false);
    }
    m_buttons->button(QDialogButtonBox::Ok)->setEnabled(false);
    m_problem->setText(refusal);
    m_problem->setVisible(true);
}

void McpPolicyDialog::showProblem(const QString &problem)
{
    m_problem->setText(tr("Not applied: %1").arg(problem));
    m_problem->setVisible(!problem.isEmpty());
}

QString McpPolicyDialog::problemText() const
{
    return m_problem->isVisibleTo(this) ? m_problem->text() : QString();
}

} // namespace AgentConsole
