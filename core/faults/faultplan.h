#pragma once

#include "../resilience/cancellationtoken.h"

#include <QHash>
#include <QString>
#include <QStringList>

#include <optional>

namespace AgentConsole {

// What a fault plan does to one tool (docs/FAULTS.md describes the JSON).
struct ToolFault
{
    int latencyMs = 0;          // added before every attempt (cancellable)
    bool hang = false;          // every attempt waits until it is cancelled
    int transientFailures = 0;  // the first N attempts of every call fail transiently
    bool permanentFailure = false; // every attempt is rejected by the backend (400)
    bool accessDenied = false;  // every attempt is refused (401/403)
    bool notFound = false;      // every call answers "not found"
    double failureProbability = 0.0; // each attempt fails transiently with this probability
    // Writes only (createTicket): the write is committed, then its answer is lost, so that
    // only the status query by idempotency key can tell what happened.
    bool commitThenLoseAnswer = false;
};

// What a fault plan does to the model provider.
struct ModelFault
{
    bool unavailable = false; // every model call fails as if the provider were down
    int latencyMs = 0;        // added before every model call
};

// The tools a plan may name: the tool registry's names, and which of them write (only those
// can take write faults such as commitThenLoseAnswer).
struct KnownTools
{
    QStringList names;
    QStringList writes;
};

// The effect a fault has on one attempt once its latency or hang has passed.
enum class FaultEffect { None, Transient, Permanent, AccessDenied, NotFound, Cancelled };

// Deterministic fault injection for demos, manual QA and tests. Random failures are drawn
// from a hash of (seed, tool, call key, attempt), so the same plan and the same calls fail the
// same way in every run, whatever the thread interleaving.
class FaultPlan final
{
public:
    FaultPlan() = default;

    // The largest seed: every whole number up to it is exact in a JSON number (a double).
    static constexpr qint64 kMaxSeed = (qint64(1) << 53) - 1;

    // Strict: unknown keys, wrong types and out-of-range values are errors, reported as one
    // line that names the offending key. With `tools` (from the tool registry), a plan that
    // names any other tool, or gives a write fault to a tool that does not write, is refused
    // too: a typo must not silently leave a demo without its fault.
    static std::optional<FaultPlan> fromJson(const QByteArray &json, QString *error,
                                             const std::optional<KnownTools> &tools = {});
    // As fromJson, from a regular file of at most 1 MiB (anything else is refused, naming
    // the file, before it is read).
    static std::optional<FaultPlan> fromFile(const QString &path, QString *error,
                                             const std::optional<KnownTools> &tools = {});

    bool isEmpty() const { return m_tools.isEmpty() && !m_model; }
    quint64 seed() const { return m_seed; }
    std::optional<ToolFault> faultFor(const QString &toolName) const;
    void setFault(const QString &toolName, const ToolFault &fault);
    std::optional<ModelFault> modelFault() const { return m_model; }
    QString summary() const;

    // Runs on the tool's pool thread: waits out latency or a hang (returning early when the
    // attempt is cancelled), then says what the attempt should do.
    // Effects are checked in this order: latency, hang, access denied, rejected, first-N
    // failures, probability, not found. commitThenLoseAnswer is the write tool's to apply.
    FaultEffect apply(const QString &toolName, const QString &callKey, int attempt,
                      const CancellationToken &cancellation) const;

private:
    quint64 m_seed = 0;
    QHash<QString, ToolFault> m_tools;
    std::optional<ModelFault> m_model;
};

} // namespace AgentConsole
