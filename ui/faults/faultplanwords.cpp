// The shipped fault plans' descriptions (resources/faults), for lupdate: the fault panel
// translates them in the "FaultPlans" context (StaffWords::faultPlanDescription). The files
// stay the source; tst_translations checks that every shipped one is listed here. A plan of
// the team's own is shown as written.
#include <QtGlobal>

namespace {

[[maybe_unused]] const char *const kFaultPlanWords[] = {
    // logistics-down.json
    QT_TRANSLATE_NOOP(
        "FaultPlans",
        "The logistics service hangs: every attempt times out; other tools still answer."),
    // logistics-flaky.json
    QT_TRANSLATE_NOOP("FaultPlans",
                      "The logistics service fails twice per call, then answers: retries win."),
    // mixed-chaos.json
    QT_TRANSLATE_NOOP("FaultPlans",
                      "Every tool is slow and fails a third of its attempts, reproducibly."),
    // model-quota-falls-back.json
    QT_TRANSLATE_NOOP(
        "FaultPlans",
        "The primary model's quota is spent: it is never retried, it is taken out of the "
        "chain, and the next model (the offline demo model, with --fallback offline) "
        "answers. Works with no network: the faulted offline model stands in for the "
        "provider."),
    // model-rate-limited.json
    QT_TRANSLATE_NOOP(
        "FaultPlans",
        "The primary model answers 429 to the first two attempts of every call, with "
        "Retry-After: 1 s; the model layer waits and retries, and the third attempt "
        "answers (model_retry_count 2 per call)."),
    // sim-logistics-flaky.json
    QT_TRANSLATE_NOOP(
        "FaultPlans",
        "With --backend http and support-sim: the sim's logistics route answers 503 with "
        "Retry-After: 1 to its next two requests, then heals; the console's retries win."),
    // ticket-lost-answer.json
    QT_TRANSLATE_NOOP(
        "FaultPlans",
        "The embedded store commits every ticket, then its answer is lost: the status "
        "query by idempotency key finds the one ticket, and no second one is made."),
};

} // namespace
