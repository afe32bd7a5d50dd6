#pragma once

#include "core/console/runtimestatus.h"

#include <QDialog>
#include <QHash>
#include <QMap>

class QComboBox;
class QDialogButtonBox;
class QLabel;

namespace AgentConsole {

// Settings › MCP tool policies: every MCP tool listed now, with the policy its annotations
// chose and a choice over it (as annotated, read, idempotent write, confirm first). It edits
// the policies McpServers::setToolPolicies takes and keeps those of tools not listed
// now (a server that is down) as they are; whoever opened it applies them (applyRequested)
// and says whether that worked (showProblem, or accept()).
class McpPolicyDialog final : public QDialog
{
    Q_OBJECT

public:
    McpPolicyDialog(const QList<McpServerStatus> &servers, const QMap<QString, QString> &policies,
                    QWidget *parent = nullptr);

    // The policies as chosen: "<server>/<tool>" = "read" | "idempotent-write" | "confirm".
    QMap<QString, QString> policies() const;
    // The choice for one tool (by McpServerStatus::Tool::policyKey); null when not listed.
    QComboBox *choiceFor(const QString &policyKey) const;
    void showProblem(const QString &problem);
    // The team's policy locks staff's MCP tool policies (docs/POLICY.md): every choice shown,
    // disabled, each with a lock whose tooltip is `refusal`; nothing can be applied.
    void setLocked(const QString &refusal);
    QString problemText() const;

Q_SIGNALS:
    void applyRequested();

private:
    QMap<QString, QString> m_policies;
    QHash<QString, QComboBox *> m_choices;
    QLabel *m_problem = nullptr;
    QDialogButtonBox *m_buttons = nullptr;
};

} // namespace AgentConsole
