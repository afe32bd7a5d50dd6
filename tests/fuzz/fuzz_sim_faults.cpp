// support-sim's fault file and its PUT /sim/faults body (SimFaults::fromJson), then the
// decisions it makes. Properties: what toJson() writes, fromJson() reads back unchanged, also
// after decisions have used up some of `times`.

#include "fuzzsupport.h"

#include "app/support-sim/simfaults.h"

#include <QJsonDocument>

using namespace AgentConsole;

namespace {

void checkReadsBack(const SimFaults &faults)
{
    const QByteArray written = QJsonDocument(faults.toJson()).toJson(QJsonDocument::Compact);
    QString error;
    const std::optional<SimFaults> again = SimFaults::fromJson(written, &error);
    FUZZ_CHECK(again.has_value());
    FUZZ_CHECK(again->toJson() == faults.toJson());
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    Fuzz::ensureApplication();
    const QByteArray json = Fuzz::bytesOf(data, size);

    QString error;
    std::optional<SimFaults> faults = SimFaults::fromJson(json, &error);
    FUZZ_CHECK(faults.has_value() == error.isEmpty());
    if (!faults)
        return 0;
    FUZZ_CHECK(faults->hangLimitMs() > 0);
    checkReadsBack(*faults);
    for (int request = 0; request < 3; ++request) {
        for (std::size_t route = 0; route < kSimRouteCount; ++route) {
            const SimDecision decision = faults->decide(SimRoute(route), request % 2 == 1);
            FUZZ_CHECK(decision.latencyMs >= 0);
            if (decision.action == SimDecision::Action::Respond)
                FUZZ_CHECK(decision.status >= 400 && decision.status < 600);
        }
    }
    checkReadsBack(*faults);
    return 0;
}
