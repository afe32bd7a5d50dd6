// A fault plan file (docs/FAULTS.md) as staff or a test writes it: FaultPlan::fromJson, checked
// against the real tools' names, then everything the console asks of a plan it accepted.
// Properties: a refused plan says why; an accepted plan names only known tools; an accepted
// plan written back with toJson() reads back as the same plan (the exports' round trip).

#include "fuzzsupport.h"

#include "core/faults/faultplan.h"
#include "core/support/createtickettool.h"
#include "core/support/supportbackend.h"
#include "core/support/supporttools.h"
#include "core/support/ticketbackend.h"
#include "core/tools/toolregistry.h"

#include <QJsonDocument>

using namespace AgentConsole;

namespace {

// As the runtime makes it (agentruntime.cpp, registeredTools).
const KnownTools &knownTools()
{
    static const KnownTools known = [] {
        ToolRegistry registry;
        registerSupportTools(registry, std::shared_ptr<const SupportBackend>(), nullptr);
        registerTicketTool(registry, std::shared_ptr<const TicketBackend>());
        KnownTools made;
        for (const ToolDescriptor &tool : registry.descriptors()) {
            made.names.append(tool.name);
            if (tool.hasSideEffects)
                made.writes.append(tool.name);
        }
        return made;
    }();
    return known;
}

void use(const FaultPlan &plan)
{
    (void)plan.summary();
    (void)plan.isEmpty();
    (void)plan.modelFault(FaultPlan::Provider::Primary);
    (void)plan.modelFault(FaultPlan::Provider::Secondary);
    (void)plan.backendFault();
    (void)plan.simFaults();
    for (const QString &name : plan.faultedTools())
        FUZZ_CHECK(knownTools().names.contains(name));

    QString error;
    const QByteArray written = QJsonDocument(plan.toJson()).toJson();
    const std::optional<FaultPlan> again = FaultPlan::fromJson(written, &error, knownTools());
    FUZZ_CHECK(again.has_value());
    FUZZ_CHECK(*again == plan);

    const CancellationToken cancellation;
    for (const QString &name : knownTools().names) {
        const std::optional<ToolFault> fault = plan.effectiveFaultFor(name);
        // Latency and hangs wait on the clock: the rest of apply() is pure.
        if (!fault || fault->latencyMs > 0 || fault->hang)
            continue;
        for (int attempt = 1; attempt <= 3; ++attempt) {
            const FaultEffect effect = plan.apply(name, QStringLiteral("{\"orderId\":\"A1001\"}"),
                                                  attempt, cancellation);
            FUZZ_CHECK(effect != FaultEffect::Cancelled);
        }
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    Fuzz::ensureApplication();
    const QByteArray json = Fuzz::bytesOf(data, size);

    QString error;
    const std::optional<FaultPlan> checked = FaultPlan::fromJson(json, &error, knownTools());
    FUZZ_CHECK(checked.has_value() == error.isEmpty());
    QString looseError;
    const std::optional<FaultPlan> loose = FaultPlan::fromJson(json, &looseError);
    FUZZ_CHECK(loose.has_value() == looseError.isEmpty());
    // The tool names only narrow what is accepted.
    if (checked)
        FUZZ_CHECK(loose.has_value());
    if (checked) {
        FUZZ_CHECK(checked->seed() <= quint64(FaultPlan::kMaxSeed));
        use(*checked);
    }
    return 0;
}
