#include "conversationexport.h"

#include "../console/activeconnection.h"
#include "../console/agentruntime.h"
#include "../console/faultcontrol.h"
#include "../console/runtimemonitor.h"
#include "../console/teampolicy.h"
#include "../console/toolpolicies.h"
#include "../console/runtimeoptions.h"
#include "../scenarios/scenario.h"

#include "../faults/boundedfile.h"
#include "../faults/faultplan.h"
#include "../telemetry/counters.h"
#include "../telemetry/locallog.h"

#include <QCoreApplication>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QSaveFile>
#include <QSysInfo>

#ifndef AGENT_CONSOLE_VERSION
#define AGENT_CONSOLE_VERSION "unknown"
#endif

namespace AgentConsole {
namespace {

// Why an export cannot be written or opened, in the window's language (docs/TRANSLATIONS.md);
// agent-cli installs no translator and keeps the English source. Field names stay as written.
struct ExportWords
{
    Q_DECLARE_TR_FUNCTIONS(AgentConsole::ConversationExport)
};

QString jitterName(JitterMode mode)
{
    switch (mode) {
    case JitterMode::None:
        return QStringLiteral("none");
    case JitterMode::Full:
        return QStringLiteral("full");
    case JitterMode::Decorrelated:
        return QStringLiteral("decorrelated");
    }
    return {};
}

// Markdown pieces. Values come from the redacted JSON; only what would break the layout is
// changed (a '|' or a line break in a table cell), never the words, so that the final
// redaction pass over the whole text still sees every secret whole.
QString cell(const QString &text)
{
    QString out = text;
    out.replace(QLatin1Char('|'), QStringLiteral("\\|"));
    out.replace(QLatin1Char('\n'), QLatin1Char(' '));
    out.replace(QLatin1Char('\r'), QLatin1Char(' '));
    return out.isEmpty() ? QStringLiteral("—") : out;
}

QString code(const QString &text)
{
    if (text.isEmpty())
        return QStringLiteral("—");
    const QString fence = text.contains(QLatin1Char('`')) ? QStringLiteral("``")
                                                          : QStringLiteral("`");
    QString flat = text;
    flat.replace(QLatin1Char('\n'), QLatin1Char(' '));
    return fence + QLatin1Char(' ') + flat + QLatin1Char(' ') + fence;
}

QString quoted(const QString &text)
{
    if (text.isEmpty())
        return QStringLiteral("> *(empty)*\n");
    QString out;
    for (const QString &line : text.split(QLatin1Char('\n')))
        out += QStringLiteral("> ") + line + QLatin1Char('\n');
    return out;
}

QString ms(const QJsonValue &value)
{
    return QStringLiteral("%1 ms").arg(value.toInteger());
}

QString compactJson(const QJsonObject &object)
{
    return QString::fromUtf8(QJsonDocument(object).toJson(QJsonDocument::Compact));
}

void appendEnvironment(QString &md, const QJsonObject &environment)
{
    const auto value = [&environment](const char *key) {
        return cell(environment.value(QLatin1String(key)).toString());
    };
    md += QStringLiteral("## Environment\n\n| | |\n|---|---|\n");
    md += QStringLiteral("| App version | %1 |\n").arg(value("appVersion"));
    md += QStringLiteral("| Qt | %1 |\n").arg(value("qtVersion"));
    md += QStringLiteral("| OS | %1 |\n").arg(value("os"));
    md += QStringLiteral("| Provider | %1 |\n").arg(value("provider"));
    md += QStringLiteral("| Model | %1 |\n").arg(value("model"));
    if (environment.contains(QLatin1String("secondaryModel")))
        md += QStringLiteral("| Secondary model | %1 |\n").arg(value("secondaryModel"));
    md += QStringLiteral("| Backend | %1 |\n").arg(value("backend"));
    const QString store = environment.value(QLatin1String("store")).toString();
    if (store == QLatin1String("alone"))
        md += QStringLiteral("| Store | **alone**: this desk's own store; the team's database "
                             "could not be reached when the console started |\n");
    else if (!store.isEmpty())
        md += QStringLiteral("| Store | %1 |\n").arg(value("store"));
    md += QLatin1Char('\n');
}

// One line under the title: the team's policy in force when exported (docs/POLICY.md).
void appendTeamPolicy(QString &md, const QJsonValue &record)
{
    if (record.isUndefined())
        return;
    if (record.isString()) {
        md += QStringLiteral("Team policy: none\n\n");
        return;
    }
    const QJsonObject policy = record.toObject();
    md += QStringLiteral("Team policy: version %1 from %2\n\n")
              .arg(code(policy.value(QLatin1String("version")).toString()),
                   code(policy.value(QLatin1String("origin")).toString()));
}

void appendFaults(QString &md, const QJsonObject &faults)
{
    md += QStringLiteral("## Faults\n\n");
    if (!faults.value(QLatin1String("active")).toBool()) {
        md += QStringLiteral("None were active.\n\n");
        return;
    }
    md += QStringLiteral("Active: %1\n\n").arg(faults.value(QLatin1String("summary")).toString());
    const QJsonValue plan = faults.value(QLatin1String("plan"));
    if (plan.isObject()) {
        md += QStringLiteral("```json\n")
            + QString::fromUtf8(QJsonDocument(plan.toObject()).toJson(QJsonDocument::Indented))
            + QStringLiteral("```\n\n");
    }
}

void appendPolicies(QString &md, const QJsonObject &policies)
{
    md += QStringLiteral("## Retry policies\n\n");
    md += QStringLiteral("Default: %1\n\n")
              .arg(policies.value(QLatin1String("default"))
                       .toObject()
                       .value(QLatin1String("describe"))
                       .toString());
    const QJsonObject tools = policies.value(QLatin1String("tools")).toObject();
    if (tools.isEmpty())
        return;
    md += QStringLiteral("| Tool | Policy | Jitter | Changed |\n|---|---|---|---|\n");
    for (auto it = tools.constBegin(); it != tools.constEnd(); ++it) {
        const QJsonObject policy = it.value().toObject();
        md += QStringLiteral("| %1 | %2 | %3 | %4 |\n")
                  .arg(cell(it.key()), cell(policy.value(QLatin1String("describe")).toString()),
                       cell(policy.value(QLatin1String("jitter")).toString()),
                       policy.value(QLatin1String("custom")).toBool() ? QStringLiteral("yes")
                                                                      : QStringLiteral("no"));
    }
    md += QLatin1Char('\n');
}

void appendCounters(QString &md, const QJsonObject &counters, const QString &heading)
{
    md += heading + QStringLiteral("\n\n| Counter | Value |\n|---|---|\n");
    for (const Metrics::Counter counter : Metrics::allCounters()) {
        const QString name = Metrics::counterName(counter);
        if (counters.contains(name))
            md += QStringLiteral("| %1 | %2 |\n").arg(name).arg(counters.value(name).toInteger());
    }
    md += QLatin1Char('\n');
}

void appendCall(QString &md, const QJsonObject &call, int number)
{
    const QJsonArray attempts = call.value(QLatin1String("attempts")).toArray();
    md += QStringLiteral("#### Call %1: %2 — %3\n\n")
              .arg(number)
              .arg(cell(call.value(QLatin1String("name")).toString()),
                   cell(call.value(QLatin1String("code")).toString()));
    QString arguments = compactJson(call.value(QLatin1String("arguments")).toObject());
    if (call.contains(QLatin1String("rawArguments")))
        arguments = call.value(QLatin1String("rawArguments")).toString();
    md += QStringLiteral("- Arguments: %1\n").arg(code(arguments));
    md += QStringLiteral("- Message: %1\n")
              .arg(cell(call.value(QLatin1String("message")).toString()));
    md += QStringLiteral("- Operation: %1 (round %2, model call id %3)\n")
              .arg(code(call.value(QLatin1String("operationId")).toString()))
              .arg(call.value(QLatin1String("round")).toInt())
              .arg(code(call.value(QLatin1String("toolCallId")).toString()));
    md += QStringLiteral("- Total: %1\n").arg(ms(call.value(QLatin1String("totalMs"))));
    if (call.value(QLatin1String("reason")).toString() == QLatin1String("circuit_open")) {
        md += QStringLiteral("- Refused: circuit open, %1 cool-down left\n")
                  .arg(ms(call.value(QLatin1String("circuitCooldownLeftMs"))));
    }
    if (call.value(QLatin1String("reason")).toString() == QLatin1String("isolated")) {
        const QJsonObject isolation = call.value(QLatin1String("isolation")).toObject();
        const auto field = [&isolation](const char *key) {
            return isolation.value(QLatin1String(key)).toString();
        };
        md += QStringLiteral("- Refused: %1 isolated by the shift lead (staff %2, role %3) at %4: "
                             "%5\n")
                  .arg(code(field("dependency")), field("leadStaffId"), field("leadRole"),
                       field("since"), field("reason"));
    }
    md += QLatin1Char('\n');
    if (attempts.isEmpty()) {
        md += QStringLiteral("No attempt was made.\n\n");
        return;
    }
    md += QStringLiteral("| Attempt | Outcome | Started | Duration | Next delay |\n"
                         "|---|---|---|---|---|\n");
    for (const QJsonValue &value : attempts) {
        const QJsonObject attempt = value.toObject();
        QString outcome = attempt.value(QLatin1String("outcome")).toString();
        if (!attempt.value(QLatin1String("made")).toBool(true))
            outcome += QStringLiteral(" (not made)");
        const QJsonValue next = attempt.value(QLatin1String("nextDelayMs"));
        md += QStringLiteral("| %1 | %2 | %3 | %4 | %5 |\n")
                  .arg(attempt.value(QLatin1String("attempt")).toInt())
                  .arg(cell(outcome), ms(attempt.value(QLatin1String("startedMs"))),
                       ms(attempt.value(QLatin1String("ms"))),
                       next.isUndefined() ? QStringLiteral("—") : ms(next));
    }
    md += QLatin1Char('\n');
}

// What the turn ran under, as kept with it when it started (TurnResult::conditions); a turn
// from before they were kept says nothing.
void appendConditions(QString &md, const QJsonObject &conditions)
{
    if (conditions.isEmpty())
        return;
    const QJsonObject faults = conditions.value(QLatin1String("faults")).toObject();
    md += faults.value(QLatin1String("active")).toBool()
        ? QStringLiteral("- Faults in force: %1\n")
              .arg(cell(faults.value(QLatin1String("summary")).toString()))
        : QStringLiteral("- Faults in force: none\n");
    const QJsonObject policies = conditions.value(QLatin1String("policies")).toObject();
    md += QStringLiteral("- Default retry policy: %1\n")
              .arg(cell(policies.value(QLatin1String("default")).toString()));
    const QJsonObject custom = policies.value(QLatin1String("custom")).toObject();
    for (auto it = custom.constBegin(); it != custom.constEnd(); ++it)
        md += QStringLiteral("- Custom retry policy of %1: %2\n")
                  .arg(code(it.key()), cell(it.value().toString()));
}

void appendTurn(QString &md, const QJsonObject &turn, int number)
{
    md += QStringLiteral("## Turn %1 — %2\n\n")
              .arg(number)
              .arg(turn.value(QLatin1String("outcome")).toString());
    if (turn.contains(QLatin1String("scenario")))
        md += QStringLiteral("- Scenario run: %1 (not a customer's conversation)\n")
                  .arg(cell(turn.value(QLatin1String("scenario")).toString()));
    md += QStringLiteral("- Request: %1, conversation %2\n")
              .arg(code(turn.value(QLatin1String("requestId")).toString()),
                   code(turn.value(QLatin1String("conversationId")).toString()));
    md += QStringLiteral("- Status: %1 · model %2 · %3 · %4 tool round(s)\n")
              .arg(turn.value(QLatin1String("status")).toString(),
                   cell(turn.value(QLatin1String("model")).toString()),
                   ms(turn.value(QLatin1String("totalMs"))))
              .arg(turn.value(QLatin1String("toolRounds")).toInt());
    const QJsonObject layers = turn.value(QLatin1String("attemptsByLayer")).toObject();
    md += QStringLiteral("- Attempts: model %1, tools %2\n")
              .arg(layers.value(QLatin1String("model")).toInt())
              .arg(layers.value(QLatin1String("tool")).toInt());
    if (turn.contains(QLatin1String("incidentId")))
        md += QStringLiteral("- Incident: %1 (its lines of the local log below)\n")
                  .arg(code(turn.value(QLatin1String("incidentId")).toString()));
    appendConditions(md, turn.value(QLatin1String("conditions")).toObject());
    if (turn.contains(QLatin1String("toolCallsNotRun")))
        md += QStringLiteral("- Tool calls not run (over the per-message limit): %1\n")
                  .arg(turn.value(QLatin1String("toolCallsNotRun")).toInt());
    if (turn.value(QLatin1String("answerCutOff")).toBool())
        md += QStringLiteral("- The answer was cut off at the model's output limit\n");
    if (turn.value(QLatin1String("modelDeclined")).toBool())
        md += QStringLiteral("- The model declined to answer\n");
    md += QStringLiteral("\n### Question\n\n")
        + quoted(turn.value(QLatin1String("question")).toString());
    md += QStringLiteral("\n### Answer\n\n")
        + quoted(turn.value(QLatin1String("answer")).toString()) + QLatin1Char('\n');
    const QJsonArray calls = turn.value(QLatin1String("toolCalls")).toArray();
    md += QStringLiteral("### Tool calls (%1)\n\n").arg(calls.size());
    for (qsizetype i = 0; i < calls.size(); ++i)
        appendCall(md, calls.at(i).toObject(), int(i) + 1);
    appendCounters(md, turn.value(QLatin1String("counters")).toObject(),
                   QStringLiteral("### Counters of this turn"));
    const QJsonArray log = turn.value(QLatin1String("incidentLog")).toArray();
    if (!log.isEmpty()) {
        // Each line starts with its time, so none can close the fence.
        md += QStringLiteral("### Local log of incident %1\n\n```\n")
                  .arg(code(turn.value(QLatin1String("incidentId")).toString()));
        for (const QJsonValue &line : log)
            md += line.toString() + QLatin1Char('\n');
        md += QStringLiteral("```\n\n");
    }
}

// The audit trail's rows of the turns: one line each, newest first, as exported.
void appendAudit(QString &md, const QJsonObject &audit)
{
    const QJsonArray rows = audit.value(QLatin1String("rows")).toArray();
    md += QStringLiteral("## Audit trail\n\n");
    if (rows.isEmpty()) {
        md += QStringLiteral("No write of these turns is in the audit trail.\n\n");
        return;
    }
    md += QStringLiteral("| Time | Event | Staff | Tool | Operation | Arguments | Outcome |\n"
                         "|---|---|---|---|---|---|---|\n");
    for (const QJsonValue &value : rows) {
        const QJsonObject row = value.toObject();
        const auto field = [&row](const char *key) {
            return row.value(QLatin1String(key)).toString();
        };
        QString outcome = field("outcome");
        for (const char *detail : {"objectId", "resultCode"}) {
            if (!field(detail).isEmpty())
                outcome += QLatin1Char(' ') + field(detail);
        }
        if (!field("via").isEmpty())
            outcome += QStringLiteral(" (%1)").arg(field("via"));
        md += QStringLiteral("| %1 | %2 | %3 | %4 | %5 | %6 | %7 |\n")
                  .arg(cell(field("at")), cell(field("event")), cell(field("staffId")),
                       cell(field("tool")), code(field("operationId")),
                       code(compactJson(row.value(QLatin1String("arguments")).toObject())),
                       cell(outcome.trimmed()));
    }
    if (!audit.value(QLatin1String("complete")).toBool(true))
        md += QStringLiteral("\nOnly the newest %1 rows are here.\n").arg(rows.size());
    md += QLatin1Char('\n');
}

template <typename T>
T requireType(const QJsonObject &object, const char *key, QJsonValue::Type type, QString *problem)
{
    const QJsonValue value = object.value(QLatin1String(key));
    if (problem->isEmpty() && value.type() != type)
        *problem = (value.isUndefined() ? ExportWords::tr("\"%1\" is missing")
                                        : ExportWords::tr("\"%1\" has the wrong type"))
                       .arg(QLatin1String(key));
    return qvariant_cast<T>(value.toVariant());
}

} // namespace

QJsonObject retryPolicyJson(const RetryPolicy &policy)
{
    return {{QStringLiteral("describe"), policy.describe()},
            {QStringLiteral("attemptTimeoutMs"), qint64(policy.attemptTimeout.count())},
            {QStringLiteral("maxRetries"), policy.maxRetries},
            {QStringLiteral("maxAttempts"), policy.maxAttempts()},
            {QStringLiteral("initialDelayMs"), qint64(policy.initialDelay.count())},
            {QStringLiteral("multiplier"), policy.multiplier},
            {QStringLiteral("maxDelayMs"), qint64(policy.maxDelay.count())},
            {QStringLiteral("jitter"), jitterName(policy.jitter)},
            {QStringLiteral("retryAfterCapMs"), qint64(policy.retryAfterCap.count())},
            {QStringLiteral("callDeadlineMs"), qint64(policy.callDeadline.count())},
            {QStringLiteral("retryTransient"), policy.retryTransient},
            {QStringLiteral("retryAttemptTimeout"), policy.retryAttemptTimeout},
            {QStringLiteral("worstCaseMs"), qint64(policy.worstCaseDuration().count())}};
}

ExportEnvironment ExportEnvironment::current(const RuntimeOptions &options,
                                             const QString &modelName, const TeamStatus &team)
{
    ExportEnvironment environment;
    const QString appVersion = QCoreApplication::applicationVersion();
    environment.appVersion = appVersion.isEmpty() ? QStringLiteral(AGENT_CONSOLE_VERSION)
                                                  : appVersion;
    environment.qtVersion = QString::fromLatin1(qVersion());
    environment.os = QSysInfo::prettyProductName();
    const bool remote = options.model.provider == ModelOptions::Provider::OpenAiCompatible;
    environment.provider = remote ? QStringLiteral("openai-compatible")
                                  : QStringLiteral("offline");
    environment.model = modelName.isEmpty() ? options.model.model : modelName;
    if (remote && options.model.hasSecondary())
        environment.secondaryModel = options.model.secondaryModel;
    environment.backend = options.backend.kind == BackendOptions::Kind::Http
        ? QStringLiteral("rest")
        : QStringLiteral("embedded");
    environment.store = team.database.isEmpty() ? QStringLiteral("desk")
        : team.alone                            ? QStringLiteral("alone")
                                                : QStringLiteral("team");
    return environment;
}

QJsonObject ExportEnvironment::toJson() const
{
    QJsonObject json{{QStringLiteral("appVersion"), appVersion},
                     {QStringLiteral("qtVersion"), qtVersion},
                     {QStringLiteral("os"), os},
                     {QStringLiteral("provider"), provider},
                     {QStringLiteral("model"), model},
                     {QStringLiteral("backend"), backend}};
    if (!secondaryModel.isEmpty())
        json.insert(QStringLiteral("secondaryModel"), secondaryModel);
    if (!store.isEmpty())
        json.insert(QStringLiteral("store"), store);
    return json;
}

std::optional<ConversationExport::Format> ConversationExport::formatForPath(const QString &path)
{
    const QString suffix = QFileInfo(path).suffix().toLower();
    if (suffix == QLatin1String("json"))
        return Format::Json;
    if (suffix == QLatin1String("md") || suffix == QLatin1String("markdown"))
        return Format::Markdown;
    return std::nullopt;
}

ConversationExport ConversationExport::fromRuntime(const AgentRuntime &runtime,
                                                   const QList<TurnResult> &turns)
{
    ConversationExport exported = fromRuntimeState(runtime, turns);
    exported.readIncidentLogs(runtime.options().dataDirectory);
    return exported;
}

ConversationExport ConversationExport::fromRuntimeState(const AgentRuntime &runtime,
                                                        const QList<TurnResult> &turns)
{
    ConversationExport exported;
    exported.setExportedAt(QDateTime::currentDateTimeUtc());
    exported.setTurns(turns);
    exported.setEnvironment(ExportEnvironment::current(
        runtime.options(), runtime.connection()->modelName(), runtime.monitor()->team()));
    exported.setFaultPlan(runtime.faults()->plan());
    const ToolPolicies &toolPolicies = *runtime.policies();
    const QStringList custom = toolPolicies.toolsWithCustomPolicy();
    QList<ExportedPolicy> policies;
    for (const QString &tool : toolPolicies.tools())
        policies.append({tool, toolPolicies.policy(tool), custom.contains(tool)});
    exported.setPolicies(toolPolicies.defaultPolicy(), policies);
    exported.setTeamPolicy(runtime.teamPolicy()->record());
    exported.setRedactor(runtime.connection()->exportRedactor());
    return exported;
}

void ConversationExport::readIncidentLogs(const QString &dataDirectory)
{
    QStringList incidents;
    for (const TurnResult &turn : std::as_const(m_turns)) {
        if (!turn.incidentId.isEmpty())
            incidents.append(turn.incidentId);
    }
    if (incidents.isEmpty())
        return;
    // One pass over the log for all of them.
    const QHash<QString, QStringList> logs = localLogLinesNaming(dataDirectory, incidents);
    for (auto it = logs.cbegin(); it != logs.cend(); ++it)
        setIncidentLog(it.key(), it.value());
}

ConversationExport ConversationExport::fromScenarioRun(const AgentRuntime &runtime,
                                                       const Scenario &scenario,
                                                       const QList<TurnResult> &turns)
{
    ConversationExport exported = fromRuntime(runtime, turns);
    exported.setFaultPlan(scenario.faults);
    const ToolPolicies &toolPolicies = *runtime.policies();
    const QStringList custom = toolPolicies.toolsWithCustomPolicy();
    QList<ExportedPolicy> policies;
    for (const QString &tool : toolPolicies.tools()) {
        const bool set = scenario.policies.contains(tool);
        policies.append({tool, set ? scenario.policies.value(tool) : toolPolicies.policy(tool),
                         set || custom.contains(tool)});
    }
    exported.setPolicies(toolPolicies.defaultPolicy(), policies);
    return exported;
}

void ConversationExport::setAuditRows(const QList<AuditEntry> &rows, bool complete)
{
    m_hasAudit = true;
    m_auditRows = rows;
    m_auditComplete = complete;
}

void ConversationExport::setEnvironment(const ExportEnvironment &environment)
{
    m_environment = environment.toJson();
}

void ConversationExport::setFaultPlan(const FaultPlan &plan)
{
    // The plan as docs/FAULTS.md writes it (it loads again with --faults), and its one line.
    m_faults = {{QStringLiteral("active"), !plan.isEmpty()},
                {QStringLiteral("summary"), plan.summary()},
                {QStringLiteral("plan"), plan.toJson()}};
}

void ConversationExport::setPolicies(const RetryPolicy &defaultPolicy,
                                     const QList<ExportedPolicy> &tools)
{
    QJsonObject byTool;
    for (const ExportedPolicy &entry : tools) {
        QJsonObject policy = retryPolicyJson(entry.policy);
        policy.insert(QStringLiteral("custom"), entry.custom);
        byTool.insert(entry.tool, policy);
    }
    m_policies = {{QStringLiteral("default"), retryPolicyJson(defaultPolicy)},
                  {QStringLiteral("tools"), byTool}};
}

QJsonObject ConversationExport::toJson() const
{
    QJsonArray turns;
    for (const TurnResult &turn : m_turns) {
        QJsonObject json = turn.toJson();
        const auto log = m_incidentLogs.constFind(turn.incidentId);
        if (!turn.incidentId.isEmpty() && log != m_incidentLogs.cend())
            json.insert(QStringLiteral("incidentLog"), QJsonArray::fromStringList(*log));
        turns.append(json);
    }
    const QDateTime at = m_exportedAt.isValid() ? m_exportedAt : QDateTime::currentDateTimeUtc();
    QJsonObject json{{QStringLiteral("format"), formatName()},
                     {QStringLiteral("version"), kVersion},
                     {QStringLiteral("exportedAt"), at.toUTC().toString(Qt::ISODate)},
                     {QStringLiteral("environment"), m_environment},
                     {QStringLiteral("faults"), m_faults},
                     {QStringLiteral("policies"), m_policies},
                     {QStringLiteral("turns"), turns}};
    if (!m_totals.isEmpty())
        json.insert(QStringLiteral("totals"), m_totals);
    if (!m_teamPolicy.isUndefined())
        json.insert(QStringLiteral("teamPolicy"), m_teamPolicy);
    if (m_hasAudit) {
        QJsonArray rows;
        for (const AuditEntry &row : m_auditRows)
            rows.append(row.toJson());
        json.insert(QStringLiteral("audit"),
                    QJsonObject{{QStringLiteral("rows"), rows},
                                {QStringLiteral("complete"), m_auditComplete}});
    }
    return m_redactor.redact(json);
}

QString ConversationExport::toMarkdown() const
{
    const QJsonObject json = toJson();
    const QJsonArray turns = json.value(QLatin1String("turns")).toArray();
    QString md = QStringLiteral("# Agent Console conversation export\n\n");
    md += QStringLiteral("Exported %1 · %2 turn(s) · keys and secrets redacted\n\n")
              .arg(json.value(QLatin1String("exportedAt")).toString())
              .arg(turns.size());
    appendTeamPolicy(md, json.value(QLatin1String("teamPolicy")));
    for (qsizetype i = 0; i < turns.size(); ++i)
        appendTurn(md, turns.at(i).toObject(), int(i) + 1);
    if (json.contains(QLatin1String("audit")))
        appendAudit(md, json.value(QLatin1String("audit")).toObject());
    if (json.contains(QLatin1String("totals")))
        appendCounters(md, json.value(QLatin1String("totals")).toObject(),
                       QStringLiteral("## Counters over every turn"));
    appendFaults(md, json.value(QLatin1String("faults")).toObject());
    appendPolicies(md, json.value(QLatin1String("policies")).toObject());
    appendEnvironment(md, json.value(QLatin1String("environment")).toObject());
    // Once more over the whole text: what a value's redaction could not see whole.
    return m_redactor.redact(md);
}

QByteArray ConversationExport::serialize(Format format) const
{
    if (format == Format::Markdown)
        return toMarkdown().toUtf8();
    return QJsonDocument(toJson()).toJson(QJsonDocument::Indented);
}

bool ConversationExport::writeTo(const QString &path, QString *error) const
{
    const auto fail = [error, &path](const QString &why) {
        if (error)
            *error = ExportWords::tr("cannot export to %1: %2").arg(path, why);
        return false;
    };
    const std::optional<Format> format = formatForPath(path);
    if (!format)
        return fail(ExportWords::tr("name it .json or .md"));
    if (QFileInfo(path).isDir())
        return fail(ExportWords::tr("it is a directory"));
    const QByteArray bytes = serialize(*format);
    // A JSON export is read back (Open export…, fromFile): one too large to be read is not
    // written, and a file already there stays as it was.
    if (*format == Format::Json && bytes.size() > kMaxFileBytes) {
        constexpr double kMiB = 1024.0 * 1024.0;
        return fail(ExportWords::tr("it would be %1 MiB, more than the %2 MiB an export is "
                                    "opened from: export fewer turns, or as Markdown")
                        .arg(double(bytes.size()) / kMiB, 0, 'f', 1)
                        .arg(double(kMaxFileBytes) / kMiB, 0, 'f', 0));
    }
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly))
        return fail(file.errorString());
    if (file.write(bytes) != bytes.size() || !file.commit())
        return fail(file.errorString());
    return true;
}

std::optional<ConversationExport> ConversationExport::fromJson(const QByteArray &json,
                                                               QString *error)
{
    const auto fail = [error](const QString &why) -> std::optional<ConversationExport> {
        if (error)
            *error = ExportWords::tr("not a conversation export: %1").arg(why);
        return std::nullopt;
    };
    if (json.size() > kMaxFileBytes)
        return fail(ExportWords::tr("larger than %1 bytes").arg(kMaxFileBytes));
    QJsonParseError parseError;
    const QJsonDocument document = QJsonDocument::fromJson(json, &parseError);
    if (parseError.error != QJsonParseError::NoError)
        return fail(ExportWords::tr("%1 at offset %2")
                        .arg(jsonParseReason(parseError))
                        .arg(parseError.offset));
    if (!document.isObject())
        return fail(ExportWords::tr("it is not a JSON object"));
    const QJsonObject root = document.object();
    if (root.value(QLatin1String("format")).toString() != formatName())
        return fail(ExportWords::tr("\"format\" is not \"%1\"").arg(formatName()));
    const QJsonValue version = root.value(QLatin1String("version"));
    if (!version.isDouble() || version.toDouble() != kVersion)
        return fail(ExportWords::tr("version %1 is not %2 (written by another console?)")
                        .arg(version.toVariant().toString())
                        .arg(kVersion));
    static const QStringList known{QStringLiteral("format"),     QStringLiteral("version"),
                                   QStringLiteral("exportedAt"), QStringLiteral("environment"),
                                   QStringLiteral("faults"),     QStringLiteral("policies"),
                                   QStringLiteral("totals"),     QStringLiteral("turns"),
                                   QStringLiteral("audit"),      QStringLiteral("teamPolicy")};
    for (auto it = root.constBegin(); it != root.constEnd(); ++it) {
        if (!known.contains(it.key()))
            return fail(ExportWords::tr("unknown field \"%1\"").arg(it.key()));
    }

    QString problem;
    ConversationExport exported;
    const QString at = requireType<QString>(root, "exportedAt", QJsonValue::String, &problem);
    exported.m_environment = requireType<QJsonObject>(root, "environment", QJsonValue::Object,
                                                      &problem);
    exported.m_faults = requireType<QJsonObject>(root, "faults", QJsonValue::Object, &problem);
    exported.m_policies = requireType<QJsonObject>(root, "policies", QJsonValue::Object, &problem);
    const QJsonArray turns = root.value(QLatin1String("turns")).toArray();
    if (!root.value(QLatin1String("turns")).isArray() && problem.isEmpty())
        problem = ExportWords::tr("\"turns\" is missing or not an array");
    if (root.contains(QLatin1String("totals")))
        exported.m_totals = requireType<QJsonObject>(root, "totals", QJsonValue::Object, &problem);
    if (!problem.isEmpty())
        return fail(problem);
    if (root.contains(QLatin1String("teamPolicy"))) {
        exported.m_teamPolicy = root.value(QLatin1String("teamPolicy"));
        if (!TurnResult::isTeamPolicyRecord(exported.m_teamPolicy))
            return fail(ExportWords::tr("\"teamPolicy\" is neither \"none\" nor {\"version\", "
                                        "\"origin\"}"));
    }
    exported.m_exportedAt = QDateTime::fromString(at, Qt::ISODate);
    if (!exported.m_exportedAt.isValid())
        return fail(ExportWords::tr("\"exportedAt\" is not an ISO 8601 time"));
    if (turns.size() > kMaxTurns)
        return fail(ExportWords::tr("more than %1 turns").arg(kMaxTurns));
    for (qsizetype i = 0; i < turns.size(); ++i) {
        if (!turns.at(i).isObject())
            return fail(ExportWords::tr("turns[%1] is not an object").arg(i));
        QString turnProblem;
        const std::optional<TurnResult> turn = TurnResult::fromJson(turns.at(i).toObject(),
                                                                    &turnProblem);
        if (!turn)
            return fail(ExportWords::tr("turns[%1].%2").arg(i).arg(turnProblem));
        exported.m_turns.append(*turn);
    }
    if (root.contains(QLatin1String("audit"))) {
        const QJsonValue audit = root.value(QLatin1String("audit"));
        const QJsonValue rows = audit.toObject().value(QLatin1String("rows"));
        const QJsonValue complete = audit.toObject().value(QLatin1String("complete"));
        if (!audit.isObject() || !rows.isArray() || !complete.isBool())
            return fail(ExportWords::tr("\"audit\" is not {\"rows\": [...], \"complete\": "
                                        "true|false}"));
        const QJsonArray array = rows.toArray();
        if (array.size() > AuditQuery::maxPageSize)
            return fail(ExportWords::tr("more than %1 audit rows").arg(AuditQuery::maxPageSize));
        QList<AuditEntry> read;
        for (qsizetype i = 0; i < array.size(); ++i) {
            QString rowProblem;
            const std::optional<AuditEntry> row = AuditEntry::fromJson(array.at(i).toObject(),
                                                                       &rowProblem);
            if (!array.at(i).isObject() || !row)
                return fail(ExportWords::tr("audit.rows[%1]: %2").arg(i).arg(rowProblem));
            read.append(*row);
        }
        exported.setAuditRows(read, complete.toBool());
    }
    return exported;
}

std::optional<ConversationExport> ConversationExport::fromFile(const QString &path, QString *error)
{
    const std::optional<QByteArray> bytes = readBoundedRegularFile(path, kMaxFileBytes, error);
    if (!bytes)
        return std::nullopt;
    QString problem;
    std::optional<ConversationExport> exported = fromJson(*bytes, &problem);
    if (!exported && error)
        *error = ExportWords::tr("%1: %2").arg(path, problem);
    return exported;
}

QString ConversationExport::faultSummary(bool translated) const
{
    const QString exported = m_faults.value(QLatin1String("summary")).toString();
    const QJsonValue plan = m_faults.value(QLatin1String("plan"));
    if (!translated || !plan.isObject())
        return exported;
    const std::optional<FaultPlan> parsed = FaultPlan::fromJson(
        QJsonDocument(plan.toObject()).toJson(), nullptr);
    return parsed ? parsed->summary(FaultPlan::SummaryWords::Staff) : exported;
}

} // namespace AgentConsole
