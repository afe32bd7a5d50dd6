#pragma once

#include "../policy/managedpolicy.h"

#include <QJsonValue>
#include <QObject>
#include <QString>

#include <memory>
#include <optional>

namespace AgentConsole {

class PolicySource;
struct BackendOptions;
struct ModelOptions;
struct PolicyText;
struct RuntimeOptions;

// The team's managed policy in force (docs/POLICY.md), the runtime's service for it: which
// policy (its version and where it came from, or none), which settings it locks and the words
// that say so. The other services take its values when the runtime starts (ToolPolicies,
// McpServers, the model chain) and refuse to change what it locks; the window shows a lock
// beside each locked setting with lockReason() as its tooltip. Lives on the runtime's thread.
class TeamPolicy final : public QObject
{
    Q_OBJECT

public:
    explicit TeamPolicy(QObject *parent = nullptr);
    ~TeamPolicy() override;

    // Where the programs read it: the system-wide file (FilePolicySource::systemWide(),
    // $XDG_CONFIG_DIRS/AgentConsole/policy.json, /etc/xdg by default). The team database's
    // source takes its place once there is one.
    static std::shared_ptr<const PolicySource> systemWideSource();

    // What a source gave, read as a policy: nothing and no problem when there is none;
    // nothing and *problem (one line naming the file and the field) when there is one that
    // cannot be used. The console's own checks too: the provider chain as the command line
    // checks it.
    static std::optional<ManagedPolicy> read(const PolicyText &text, QString *problem);
    // The policy's values put into `options` (before the runtime's parts are made): its
    // provider chain and model retries, a locked setting's value or its default. False with
    // the reason when the command line set a locked setting ("--model is locked by your
    // team's policy (version 2026-12-01)").
    static bool applyTo(const ManagedPolicy &policy, RuntimeOptions *options, QString *problem);

    // The runtime's side, once at start.
    void setPolicy(std::optional<ManagedPolicy> policy);

    bool inForce() const { return m_policy.has_value(); }
    const std::optional<ManagedPolicy> &policy() const { return m_policy; }
    QString version() const; // empty without a policy
    QString origin() const;
    bool isLocked(const QString &key) const; // SettingKeys
    // "Set by your team's policy (version 2026-12-01)": the tooltip of every lock.
    QString lockReason() const;
    // "The model is locked by your team's policy (version 2026-12-01)": a refused change.
    QString refusal(const QString &key) const;
    // The refusal of a switch from the settings in force to others that changes a locked
    // setting (ActiveConnection::apply); empty when nothing locked changes.
    QString refusalOfChange(const ModelOptions &model, const BackendOptions &backend,
                            const ModelOptions &newModel, const BackendOptions &newBackend) const
    {
        return m_policy ? refusalOfChange(*m_policy, model, backend, newModel, newBackend)
                        : QString();
    }
    static QString refusalOfChange(const ManagedPolicy &policy, const ModelOptions &model,
                                   const BackendOptions &backend, const ModelOptions &newModel,
                                   const BackendOptions &newBackend);
    // One line for the status bar and diagnostics: "Team policy 2026-12-01
    // (/etc/xdg/AgentConsole/policy.json)", or "No team policy".
    QString summary() const;
    // What a turn and an export keep (TurnResult::teamPolicy): {"version", "origin"}, or
    // "none".
    QJsonValue record() const;

    // The name of a setting as staff know it ("the model", "the ledger"), for a refusal.
    static QString settingName(const QString &key);
    // Any lock reason or refusal worded for a policy of `version`.
    static QString lockReasonFor(const QString &version);
    static QString refusalFor(const QString &key, const QString &version);

Q_SIGNALS:
    void changed();

private:
    std::optional<ManagedPolicy> m_policy;
};

} // namespace AgentConsole
