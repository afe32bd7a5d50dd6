#pragma once

#include "core/console/faultsandpolicies.h"

#include <QDockWidget>
#include <QHash>
#include <QList>

class QFormLayout;
class QGroupBox;
class QLabel;
class QListWidget;
class QPushButton;

namespace AgentConsole {

class AgentLoop;
class ToolPolicies;
class NoticeBanner;
class PolicyLock;
class StatusChip;
namespace Internal {
struct PolicyField;
}

// Each tool's retry policy (DESIGN.md, "Retry boundaries"), edited in the window. The worst
// case of what is typed is computed by RetryPolicy and shown at every keystroke; a value out
// of range is refused with RetryPolicy::problem()'s reason beside its field, the field keeps
// it and the tool keeps the policy it has. Apply hands the policy to ToolPolicies (from the
// tool's next call); Reset gives the tool the default again. Edits of a tool not applied yet
// are kept while another tool is shown.
class PolicyEditor final : public QDockWidget
{
    Q_OBJECT

public:
    // `policies`: the runtime's, outliving this.
    explicit PolicyEditor(ToolPolicies *policies, QWidget *parent = nullptr);
    ~PolicyEditor() override;

    // The runtime is ready: `loop` names the tools (FaultPanel::toolLabel) from now on.
    void onRuntimeReady(const AgentLoop *loop);
    // Re-reads the runtime's tools and their policies (after ready(), a settings change).
    void refresh();

    QStringList tools() const;
    QString currentTool() const;
    bool selectTool(const QString &toolName);
    // The editor of one field: "attemptTimeout", "maxRetries", "initialDelay", "multiplier",
    // "maxDelay", "jitter", "retryAfterCap" (QSpinBox, QDoubleSpinBox or QComboBox).
    QWidget *fieldEditor(const QString &key) const;
    // What the fields of the shown tool say now, applied or not.
    RetryPolicy draft() const;
    bool hasUnappliedEdits(const QString &toolName) const;
    QString problemText() const; // why the draft is refused; empty when it is fine
    QString fieldProblem(const QString &key) const;
    QString worstCaseText() const; // "Worst case of one call: 6.6 s"
    QString stateText() const; // "Default policy", "Custom policy", "Edited, not applied"
    QPushButton *applyButton() const { return m_applyButton; }
    QPushButton *resetButton() const { return m_resetButton; }
    // The lock shown when the team's policy locks the tools' policies (hidden otherwise).
    QWidget *lockRow() const { return m_lockRow; }

    // Applies the shown tool's draft: false, with the reason shown, when it is refused.
    bool apply();
    void resetToDefault();

private:
    struct FieldRow
    {
        const Internal::PolicyField *field = nullptr;
        QWidget *editor = nullptr;
        QLabel *problem = nullptr;
    };

    void buildForm(QFormLayout *form);
    void onToolChanged();
    void onFieldEdited();
    void onPoliciesChanged();
    void showPolicy(const RetryPolicy &policy);
    void updateState();
    void updateToolList();

    ToolPolicies *m_policies = nullptr;
    const AgentLoop *m_loop = nullptr; // the runtime's, once it is ready
    QHash<QString, RetryPolicy> m_drafts; // edits not applied yet, per tool
    QList<FieldRow> m_rows;
    bool m_applying = false;

    QListWidget *m_toolList = nullptr;
    QGroupBox *m_fieldsBox = nullptr;
    QFormLayout *m_form = nullptr;
    StatusChip *m_stateChip = nullptr;
    QLabel *m_worstCase = nullptr;
    QLabel *m_worstCaseDetail = nullptr;
    NoticeBanner *m_problem = nullptr;
    QPushButton *m_applyButton = nullptr;
    QPushButton *m_resetButton = nullptr;
    QWidget *m_lockRow = nullptr;
    PolicyLock *m_lock = nullptr;
    QLabel *m_lockWords = nullptr;
};

} // namespace AgentConsole
