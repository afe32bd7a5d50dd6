#pragma once

#include <QDockWidget>
#include <QJsonObject>
#include <QList>
#include <QStringList>

class QGridLayout;
class QGroupBox;
class QLabel;
class QListWidget;
class QPlainTextEdit;
class QPushButton;
class QSpinBox;

namespace AgentConsole {

class ActiveConnection;
class AgentLoop;
class FaultControl;
class ToolPolicies;
class NoticeBanner;
class StatusChip;
struct FaultField;

// The fault plan in force, edited live (docs/FAULTS.md). The panel edits the plan's JSON and
// hands every change to core at once: FaultPlan::fromJson checks it against the runtime's
// tools, FaultControl::setPlan puts it in force for the next attempt. A value core
// refuses is shown with its reason next to the field; the field keeps what was typed and the
// plan in force stays as it was. The fields are core's (FaultPlan::fields(): keys, kinds,
// bounds, in their order); the panel adds their words, a table in faultpanel.cpp keyed by
// the field's key. A new fault is a field in core and a row of words here.
class FaultPanel final : public QDockWidget
{
    Q_OBJECT

public:
    // `faults`: the plan edited; `policies`: the tools with a policy of their own, shown and
    // reset here; `connection`: the models the plan may break. The runtime's, outliving this.
    FaultPanel(FaultControl *faults, ToolPolicies *policies, ActiveConnection *connection,
               QWidget *parent = nullptr);
    ~FaultPanel() override;

    // The runtime is ready: `loop` names the tools (toolLabel) from now on.
    void onRuntimeReady(const AgentLoop *loop);
    // Re-reads the runtime's tools and the plan in force (after ready(), a settings change).
    void refresh();

    // Core's fields the panel has no words for ("no words: model:rateLimited"), which it
    // leaves out of its form, and words for no field of core's ("no field: tool:slow"):
    // empty, or the form and the plan differ.
    static QStringList fieldsWithoutWords();
    // The title the tool's descriptor gives it, in the staff member's language ("Track a
    // shipment" for queryLogistics); a tool without one (or unknown, or before the runtime is
    // ready: no `loop`) keeps its name.
    static QString toolLabel(const AgentLoop *loop, const QString &toolName);
    // "Track a shipment (queryLogistics)": the title and the name the cards show.
    static QString toolTitle(const AgentLoop *loop, const QString &toolName);

    // What the panel edits: "tool:<name>", "backend", "model:primary", "model:secondary".
    QStringList targets() const;
    QString currentTarget() const;
    bool selectTarget(const QString &target);
    // The editor of one key of the selected target (QCheckBox, QSpinBox, QDoubleSpinBox or
    // QComboBox), or nullptr when the target has no such key.
    QWidget *fieldEditor(const QString &key) const;
    // Why core refused the value in that field; empty when it took it.
    QString fieldProblem(const QString &key) const;
    QJsonObject plan() const { return m_plan; }

    // Reads a fault file (resources/faults/*.json) on a pool thread and puts it in force;
    // faultFileAnswered() says whether it did (the reason is shown when not), always after
    // this returns.
    void loadFaultFile(const QString &path);
    void clearAllFaults();
    QString noticeText() const;
    // Why the support-sim section typed was not applied; empty when it was.
    QString simProblem() const;

Q_SIGNALS:
    void faultFileAnswered(bool loaded);

private:
    // One of core's fields, as shown.
    struct FieldRow
    {
        const FaultField *field = nullptr;
        QLabel *label = nullptr;
        QWidget *editor = nullptr;
        bool shown = false; // the selected target has this fault
        QLabel *problem = nullptr;
    };
    // One thing the plan can break: a tool, the backend or a model provider.
    struct Target
    {
        QString id;
        QString label;
        QStringList path; // where its object sits in the plan's JSON
        QString tool; // empty for the backend and the providers
        bool model = false;
        bool secondary = false; // the secondary provider
        bool writes = false;
    };

    void buildForm(QGridLayout *form);
    void chooseFaultFile();
    void onFaultsChanged();
    void onTargetChanged();
    void onFieldEdited(FieldRow *row);
    void onSeedEdited();
    bool applyPlan(const QJsonObject &candidate, QString *error);
    void applySimFaults();
    void showSimSection();
    void showTargetValues();
    void showProblem(FieldRow &row, const QString &problem);
    void updateTargetList();
    void updateSummary();
    const Target *target(const QString &id) const;

    FaultControl *m_faults = nullptr;
    ToolPolicies *m_policies = nullptr;
    ActiveConnection *m_connection = nullptr;
    const AgentLoop *m_loop = nullptr; // the runtime's, once it is ready
    QJsonObject m_plan; // what is in force, as JSON
    QList<Target> m_targets;
    QList<FieldRow> m_rows;
    bool m_applying = false; // our own setFaultPlan: the plan is already m_plan

    StatusChip *m_stateChip = nullptr;
    QLabel *m_description = nullptr;
    NoticeBanner *m_notice = nullptr;
    QPushButton *m_loadButton = nullptr;
    QPushButton *m_clearButton = nullptr;
    QLabel *m_policyNote = nullptr;
    QPushButton *m_resetPoliciesButton = nullptr;
    QListWidget *m_targetList = nullptr;
    QGroupBox *m_fieldsBox = nullptr;
    QGridLayout *m_form = nullptr;
    QSpinBox *m_seed = nullptr;
    QPlainTextEdit *m_simEdit = nullptr;
    QPushButton *m_simApply = nullptr;
    QLabel *m_simProblem = nullptr;
};

} // namespace AgentConsole
