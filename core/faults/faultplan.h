#pragma once

#include "../resilience/cancellationtoken.h"

#include <QHash>
#include <QJsonObject>
#include <QList>
#include <QString>
#include <QStringList>

#include <algorithm>
#include <optional>

namespace AgentConsole {

// What a fault plan does to one tool (docs/FAULTS.md describes the JSON). Built field by
// field, never aggregate-initialized: fields are added as the panel learns new faults.
struct ToolFault
{
    int latencyMs = 0; // added before every attempt (cancellable)
    bool hang = false; // every attempt waits until it is cancelled
    int transientFailures = 0; // the first N attempts of every call fail transiently
    bool permanentFailure = false; // every attempt is rejected by the backend (permanentStatus)
    bool accessDenied = false; // every attempt is refused (401/403)
    bool notFound = false; // every call answers "not found"
    double failureProbability = 0.0; // each attempt fails transiently with this probability
    // Writes only (createTicket): the write is committed, then its answer is lost, so that
    // only the status query by idempotency key can tell what happened.
    bool commitThenLoseAnswer = false;
    // The HTTP status a permanentFailure stands for (logged): 400, 404, 409 or 422. The result
    // is TOOL_REJECTED whatever it is; a 404 too, like support-sim's bare 404 (a wrong URL).
    int permanentStatus = 400;
    // The tool body throws, as a bug would: the executor answers INTERNAL_ERROR with an
    // incident id.
    bool internalError = false;

    // One per fault that is on (FaultField: a field that only qualifies another is none).
    int activeFaultCount() const;

    friend bool operator==(const ToolFault &, const ToolFault &) = default;
};

// What a fault plan does to one model provider. Built field by field, like ToolFault.
struct ModelFault
{
    bool unavailable = false; // every model call fails as if the provider were down
    int latencyMs = 0; // added before every model call
    int rateLimited = 0; // the first N attempts of every call answer 429
    int retryAfterMs = 1000; // the Retry-After of those 429s
    bool quotaExhausted = false; // every call: MODEL_QUOTA_EXHAUSTED, never retried
    bool malformedResponse = false; // every call: a body that cannot be read
    bool streamStall = false; // the stream stops after its first chunk: MODEL_TIMEOUT
    // Rewrite the inner model's responses that call tools: arguments that are not JSON, a
    // tool that does not exist, or the first call repeated to N calls (0: off).
    bool malformedToolArguments = false;
    bool unknownTool = false;
    int toolCallBurst = 0;

    // One per fault that is on, as ToolFault's.
    int activeFaultCount() const;

    friend bool operator==(const ModelFault &, const ModelFault &) = default;
};

// One key a plan takes for a tool or a model provider, with its bounds (docs/FAULTS.md): the
// one place they are stated. FaultPlan::fromJson reads and refuses by these, toJson writes by
// them; a form is built from FaultPlan::fields() and only adds its own words.
struct FaultField
{
    enum class Kind {
        Flag, // true or false
        Millis, // a whole number of milliseconds, from min to max
        Count, // a whole number, from min to max
        Probability, // a number from min to max
        HttpStatus, // one of `choices`
    };
    // Which entries take it: a tool's and the backend's; only a writing tool's and the
    // backend's (which stands for the writes without an entry of their own); a provider's.
    enum class Scope { Tool, WriteTool, Model };

    const char *key = nullptr;
    Kind kind = Kind::Flag;
    Scope scope = Scope::Tool;
    double min = 0;
    double max = 1;
    double defaultValue = 0; // what an entry without the key means (a flag: 0, off)
    // The key of the fault this one only qualifies ("permanentFailure" for "permanentStatus"):
    // it means something only while that one is on, and is counted as no fault of its own.
    const char *qualifies = nullptr;
    QList<int> choices = {}; // HttpStatus only, in order
};

// The tools a plan may name: the tool registry's names, and which of them write (only those
// can take write faults such as commitThenLoseAnswer).
struct KnownTools
{
    QStringList names;
    QStringList writes;
};

// The effect a fault has on one attempt once its latency or hang has passed.
enum class FaultEffect {
    None,
    Transient,
    Permanent,
    AccessDenied,
    NotFound,
    Cancelled,
    InternalError, // the tool body must throw (an injected bug)
};

// Deterministic fault injection for demos, manual QA and tests. Random failures are drawn
// from a hash of (seed, tool, call key, attempt), so the same plan and the same calls fail the
// same way in every run, whatever the thread interleaving.
class FaultPlan final
{
public:
    FaultPlan() = default;

    // The largest seed: every whole number up to it is exact in a JSON number (a double).
    static constexpr qint64 kMaxSeed = (qint64(1) << 53) - 1;

    // Every key an entry of "tools", "backend" or "models" takes, tools' first, in the order
    // a form shows them.
    static const QList<FaultField> &fields();

    // Strict: unknown keys, wrong types and out-of-range values are errors, reported as one
    // line that names the offending key. With `tools` (from the tool registry), a plan that
    // names any other tool, or gives a write fault to a tool that does not write, is refused
    // too: a typo must not silently leave a demo without its fault.
    static std::optional<FaultPlan> fromJson(const QByteArray &json, QString *error,
                                             const std::optional<KnownTools> &tools = {});
    // The same, with the reason alone ("tools.x.latencyMs: unknown key", no "fault plan: "
    // before it), for a plan inside another file (a scenario's "faults") that names it itself.
    static std::optional<FaultPlan> fromJsonSection(const QByteArray &json, QString *reason,
                                                    const std::optional<KnownTools> &tools = {});
    // As fromJson, from a regular file of at most 1 MiB (anything else is refused, naming
    // the file, before it is read).
    static std::optional<FaultPlan> fromFile(const QString &path, QString *error,
                                             const std::optional<KnownTools> &tools = {});

    // Which model provider a model fault is for: the runtime wraps the primary and, when one
    // is configured, the secondary.
    enum class Provider { Primary, Secondary };

    // The same JSON back: fromJson(toJson()) gives an equal plan. Only what differs from the
    // defaults is written, tools in name order.
    QJsonObject toJson() const;

    bool isEmpty() const;
    // One per fault that is on, over every tool, the backend and both providers (the same
    // fault on two tools is two); a support-sim section counts once, whatever it holds.
    int activeFaultCount() const;
    quint64 seed() const { return m_seed; }
    void setSeed(quint64 seed) { m_seed = std::min<quint64>(seed, quint64(kMaxSeed)); }
    QString description() const { return m_description; }
    void setDescription(const QString &text) { m_description = text; }

    // The tools with an entry of their own, in name order.
    QStringList faultedTools() const;
    // The tool's own entry (what the fault panel edits), without the backend's.
    std::optional<ToolFault> faultFor(const QString &toolName) const;
    // What applies to the tool: its own entry, else the backend's.
    std::optional<ToolFault> effectiveFaultFor(const QString &toolName) const;
    void setFault(const QString &toolName, const ToolFault &fault);
    void removeFault(const QString &toolName);
    // For every tool without an entry of its own in "tools".
    std::optional<ToolFault> backendFault() const { return m_backend; }
    void setBackendFault(const std::optional<ToolFault> &fault) { m_backend = fault; }

    std::optional<ModelFault> modelFault(Provider provider = Provider::Primary) const;
    void setModelFault(Provider provider, const std::optional<ModelFault> &fault);

    // support-sim's PUT /sim/faults body (docs/SUPPORT-SIM.md), sent when the backend is REST;
    // empty when the plan has none. Its values are judged by the sim.
    QJsonObject simFaults() const { return m_sim; }
    bool hasSimFaults() const { return !m_sim.isEmpty(); }
    void setSimFaults(const QJsonObject &body) { m_sim = body; }

    // One line in short staff words: every tool, the backend, the models and the sim. The
    // log's words are English; the window's are translated ("AgentConsole::FaultPlan").
    enum class SummaryWords { Log, Staff };
    QString summary(SummaryWords words = SummaryWords::Log) const;

    friend bool operator==(const FaultPlan &, const FaultPlan &) = default;

    // Runs on the tool's pool thread: waits out latency or a hang (returning early when the
    // attempt is cancelled), then says what the attempt should do.
    // The tool's own entry applies, else the backend's. Effects are checked in this order:
    // latency, hang, internal error, access denied, rejected, first-N failures, probability,
    // not found. commitThenLoseAnswer is the write tool's to apply.
    FaultEffect apply(const QString &toolName, const QString &callKey, int attempt,
                      const CancellationToken &cancellation) const;
    // The local log's words for a Permanent effect: the HTTP status the rejection stands for.
    QString rejectionDetail(const QString &toolName) const;

private:
    quint64 m_seed = 0;
    QString m_description;
    QHash<QString, ToolFault> m_tools;
    std::optional<ToolFault> m_backend;
    std::optional<ModelFault> m_primaryModel;
    std::optional<ModelFault> m_secondaryModel;
    QJsonObject m_sim;
};

// What a tool body does with FaultEffect::InternalError: throws, as a bug would, so that the
// executor's boundary catches it (INTERNAL_ERROR with an incident id; the text is logged only).
[[noreturn]] void throwInjectedToolBug(const QString &toolName);

} // namespace AgentConsole
