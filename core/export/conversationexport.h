#pragma once

#include "../console/redaction.h"
#include "../console/runtimestatus.h"
#include "../console/writeaudit.h"
#include "../turn/turnresult.h"

#include "../resilience/retrypolicy.h"

#include <QByteArray>
#include <QDateTime>
#include <QHash>
#include <QStringList>
#include <QJsonObject>
#include <QList>
#include <QString>

#include <optional>

namespace AgentConsole {

class AgentRuntime;
class FaultPlan;
struct Scenario;
struct RuntimeOptions;

// Where an export was made: versions, platform and which model and backend answered, by kind
// and name only. Never a URL (a REST backend's or a provider's may carry credentials or an
// internal host) and never a key.
struct ExportEnvironment
{
    QString appVersion;
    QString qtVersion;
    QString os;
    QString provider; // "offline" or "openai-compatible"
    QString model; // the model that answers (RuntimeStatus::modelName)
    QString secondaryModel; // empty without a secondary provider
    QString backend; // "embedded" or "rest"
    // Where the turns are kept: "desk" (this machine's own store), "team" (the team's
    // database), or "alone" (a team console whose database was out of reach at its start:
    // this desk's own store, not the team's). Never the database's address.
    QString store;

    // This process: its version, qVersion(), QSysInfo::prettyProductName(), and the options'
    // provider, models and backend kind.
    static ExportEnvironment current(const RuntimeOptions &options, const QString &modelName,
                                     const TeamStatus &team = {});
    QJsonObject toJson() const;
};

// One tool's retry policy as exported, and whether the window or a scenario changed it.
struct ExportedPolicy
{
    QString tool;
    RetryPolicy policy;
    bool custom = false;
};

// A conversation (or one turn) as a bug report (docs/EXPORT.md): the turns in the exact
// agent-cli --json shape, the faults in force, every tool's retry policy, the counters and the
// environment. Everything written goes through the Redactor first: the JSON's values, and the
// Markdown as a whole. Read back with fromJson/fromFile for the read-only view.
class ConversationExport final
{
public:
    enum class Format { Json, Markdown };

    static QString formatName() { return QStringLiteral("agent-console-export"); }
    static constexpr int kVersion = 1;
    static constexpr qint64 kMaxFileBytes = 8 * 1024 * 1024;
    static constexpr qsizetype kMaxTurns = 10000;

    // By the file's extension: .json, or .md/.markdown; nothing for any other.
    static std::optional<Format> formatForPath(const QString &path);

    ConversationExport() = default;
    // What `runtime` has in force now (environment, faults, policies) around `turns`, redacted
    // with the API keys it uses (ActiveConnection::exportRedactor), and the local log's lines of
    // the turns' incidents (readIncidentLogs: reads a file).
    static ConversationExport fromRuntime(const AgentRuntime &runtime,
                                          const QList<TurnResult> &turns);
    // The same without the local log: values only, for the GUI thread, which reads no file;
    // readIncidentLogs() then adds the log's lines where disk work may wait.
    static ConversationExport fromRuntimeState(const AgentRuntime &runtime,
                                               const QList<TurnResult> &turns);
    // The lines of `dataDirectory`'s local log that name the turns' incident ids.
    void readIncidentLogs(const QString &dataDirectory);
    // A scenario's turns with the faults and policies the scenario set: by the time its run is
    // over, the runner has put the console's own back (docs/SCENARIOS.md).
    static ConversationExport fromScenarioRun(const AgentRuntime &runtime,
                                              const Scenario &scenario,
                                              const QList<TurnResult> &turns);

    void setTurns(const QList<TurnResult> &turns) { m_turns = turns; }
    const QList<TurnResult> &turns() const { return m_turns; }
    void setEnvironment(const ExportEnvironment &environment);
    void setFaultPlan(const FaultPlan &plan);
    void setPolicies(const RetryPolicy &defaultPolicy, const QList<ExportedPolicy> &tools);
    // DESIGN.md's counters over every turn of the data directory (RuntimeMonitor::counterTotals).
    void setCounterTotals(const QJsonObject &totals) { m_totals = totals; }
    void setExportedAt(const QDateTime &at) { m_exportedAt = at; }
    void setRedactor(const Redactor &redactor) { m_redactor = redactor; }
    // The local log's lines for an incident id of the exported turns: written with its turn
    // ("incidentLog"), redacted like everything else.
    void setIncidentLog(const QString &incidentId, const QStringList &lines)
    {
        m_incidentLogs.insert(incidentId, lines);
    }
    // The audit trail's rows of the turns (WriteAudit::rowsOfTurns), newest first: written
    // as "audit" (docs/AUDIT.md), redacted like everything else. `complete`: false when
    // older rows of the turns were left out (WriteAudit::maxExportRows).
    void setAuditRows(const QList<AuditEntry> &rows, bool complete);
    bool hasAuditRows() const { return m_hasAudit; }
    const QList<AuditEntry> &auditRows() const { return m_auditRows; }
    bool auditComplete() const { return m_auditComplete; }
    // The team's policy in force when exported (TeamPolicy::record(), docs/POLICY.md):
    // {"version", "origin"} or "none"; undefined in an export made before policies.
    void setTeamPolicy(const QJsonValue &record) { m_teamPolicy = record; }
    QJsonValue teamPolicy() const { return m_teamPolicy; }

    // As read back (or as set): for the read-only view's header.
    QDateTime exportedAt() const { return m_exportedAt; }
    QJsonObject environment() const { return m_environment; }
    QJsonObject faults() const { return m_faults; }
    // The faults' one line as exported (the log's words), or re-worded from the exported
    // plan in the window's language with `translated`; the file is never changed.
    QString faultSummary(bool translated) const;
    QJsonObject policies() const { return m_policies; }
    QJsonObject counterTotals() const { return m_totals; }

    // {"format", "version", "exportedAt", "environment", "faults", "policies", ["totals"],
    //  ["teamPolicy"], "turns": [TurnResult::toJson() per turn], ["audit": {"rows",
    //  "complete"}]}, redacted.
    QJsonObject toJson() const;
    // A bug report: each turn's question and answer, each call with its attempt table, the
    // counters, the faults, the policies and the environment; redacted.
    QString toMarkdown() const;
    QByteArray serialize(Format format) const;
    // Writes atomically (QSaveFile) in the format its extension names. Refuses another
    // extension, a directory, and JSON larger than kMaxFileBytes (it could not be opened
    // again); false with one line naming the file.
    bool writeTo(const QString &path, QString *error) const;

    // Strict: the format name, version 1, every field's type; nullopt and one line otherwise.
    static std::optional<ConversationExport> fromJson(const QByteArray &json, QString *error);
    // As fromJson, from a regular file of at most kMaxFileBytes.
    static std::optional<ConversationExport> fromFile(const QString &path, QString *error);

private:
    QDateTime m_exportedAt;
    QJsonObject m_environment;
    QJsonObject m_faults;
    QJsonObject m_policies;
    QJsonObject m_totals; // empty: not given
    QList<TurnResult> m_turns;
    QHash<QString, QStringList> m_incidentLogs;
    bool m_hasAudit = false;
    QList<AuditEntry> m_auditRows;
    bool m_auditComplete = true;
    QJsonValue m_teamPolicy = QJsonValue(QJsonValue::Undefined); // not given
    Redactor m_redactor;
};

// A policy's fields by name, with describe() and its worst case: how exports write a policy.
QJsonObject retryPolicyJson(const RetryPolicy &policy);

} // namespace AgentConsole
