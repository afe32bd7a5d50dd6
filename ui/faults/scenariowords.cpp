// The shipped scenarios' titles and summaries (resources/scenarios), for lupdate: the panel
// and the menu translate them in the "Scenarios" context (StaffWords::scenarioTitle). The
// files stay the source; tst_translations checks that every shipped one is listed here.
#include <QtGlobal>

namespace {

[[maybe_unused]] const char *const kScenarioWords[] = {
    // access-denied.json
    QT_TRANSLATE_NOOP("Scenarios", "Access denied"),
    QT_TRANSLATE_NOOP(
        "Scenarios",
        "The order-status backend refuses like a 401/403: the lookup is denied on its first "
        "attempt and never retried, while the logistics lookup answers."),
    // all-good.json
    QT_TRANSLATE_NOOP("Scenarios", "Everything answers"),
    QT_TRANSLATE_NOOP(
        "Scenarios",
        "Two lookups in one question, no faults: both answer on the first attempt and the "
        "turn is answered."),
    // backend-down.json
    QT_TRANSLATE_NOOP("Scenarios", "The whole backend down"),
    QT_TRANSLATE_NOOP(
        "Scenarios",
        "The plan's backend entry makes every tool without an entry of its own fail like a "
        "503: both lookups are still unavailable after three attempts and the answer says "
        "plainly that nothing could be looked up, without guessing."),
    // bad-key.json
    QT_TRANSLATE_NOOP("Scenarios", "Bad key (provider refuses)"),
    QT_TRANSLATE_NOOP(
        "Scenarios",
        "The model provider refuses every call, as with a wrong API key: the offline default "
        "has no key to get wrong, so the plan's model fault 'unavailable' stands for the "
        "refusal; nothing is retried and the next model in the chain (the un-faulted offline "
        "model) answers instead."),
    // cancelled.json
    QT_TRANSLATE_NOOP("Scenarios", "Cancelled by staff"),
    QT_TRANSLATE_NOOP(
        "Scenarios",
        "The logistics lookup hangs and the staff member cancels the turn after 500 ms: the "
        "running attempt is cancelled and the turn ends cancelled, not as a timeout."),
    // context-missing.json
    QT_TRANSLATE_NOOP("Scenarios", "No staff member in the session"),
    QT_TRANSLATE_NOOP(
        "Scenarios",
        "The question is asked with no user and no tenant in the trusted session: the lookup "
        "is refused before any attempt for want of the staff member's context, since "
        "identity never comes from the model."),
    // crash-between-lookups.json
    QT_TRANSLATE_NOOP("Scenarios", "A crash between two lookups, then resume"),
    QT_TRANSLATE_NOOP(
        "Scenarios",
        "A child agent-cli is killed right after the first of two lookup results was "
        "checkpointed; the console resumes the turn from its checkpoint and it is answered, "
        "the stored result kept rather than looked up again."),
    // crash-during-write.json
    QT_TRANSLATE_NOOP("Scenarios", "A crash during a write, then resume"),
    QT_TRANSLATE_NOOP(
        "Scenarios",
        "A child agent-cli on the same data directory is killed right after the store "
        "committed the ticket, before its answer came back; the console then resumes the "
        "turn, recovers the write through the ledger and the backend, and exactly one ticket "
        "exists."),
    // declined-confirmation.json
    QT_TRANSLATE_NOOP("Scenarios", "Declined confirmation"),
    QT_TRANSLATE_NOOP(
        "Scenarios",
        "The staff member declines the after-sales ticket shown for confirmation: nothing is "
        "sent, the call ends declined and no ticket exists."),
    // down-breaker-opens.json
    QT_TRANSLATE_NOOP("Scenarios", "Down, and the breaker opens"),
    QT_TRANSLATE_NOOP(
        "Scenarios",
        "The logistics backend is down (every attempt fails like a 503): three calls are "
        "still unavailable after three attempts each, the logistics breaker opens on the "
        "tenth failure and the next call fails fast without an attempt, while the stock "
        "lookup, behind its own breaker, keeps answering."),
    // flaky-then-ok.json
    QT_TRANSLATE_NOOP("Scenarios", "Flaky, then OK on attempt 3"),
    QT_TRANSLATE_NOOP(
        "Scenarios",
        "The logistics lookup fails like a 503 twice, then answers: the executor retries "
        "with backoff and the call succeeds on its third attempt."),
    // internal-error.json
    QT_TRANSLATE_NOOP("Scenarios", "A bug in a tool"),
    QT_TRANSLATE_NOOP(
        "Scenarios",
        "The stock lookup's body throws: the executor catches it once and reports an "
        "internal error without retrying; a bug fails the whole turn with a generic message "
        "and an incident id (details only in the local log), though the logistics lookup had "
        "answered."),
    // invalid-argument.json
    QT_TRANSLATE_NOOP("Scenarios", "Malformed order number"),
    QT_TRANSLATE_NOOP(
        "Scenarios",
        "The question names order A12, which is not a valid order number: the call is "
        "refused as invalid before any attempt and never retried."),
    // malformed-tool-arguments.json
    QT_TRANSLATE_NOOP("Scenarios", "Malformed tool arguments"),
    QT_TRANSLATE_NOOP(
        "Scenarios",
        "The model calls the logistics lookup with arguments that are not JSON: the call is "
        "refused as invalid before any attempt, and the raw text is kept for the bug report."),
    // model-rate-limited.json
    QT_TRANSLATE_NOOP("Scenarios", "Rate-limited model with Retry-After"),
    QT_TRANSLATE_NOOP(
        "Scenarios",
        "The model answers 429 with Retry-After 300 ms to the first two attempts of every "
        "call: the model layer waits as told and retries, each retry counted, and the turn "
        "is answered."),
    // not-found.json
    QT_TRANSLATE_NOOP("Scenarios", "Not found"),
    QT_TRANSLATE_NOOP(
        "Scenarios",
        "An order that does not exist, an order not shipped yet and an unknown SKU: each is "
        "answered \"not found\" at once, never retried, and the turn still counts as "
        "answered."),
    // operation-in-progress.json
    QT_TRANSLATE_NOOP("Scenarios", "A write still in progress"),
    QT_TRANSLATE_NOOP(
        "Scenarios",
        "A child agent-cli claims the ticket's idempotency key and is killed before it sends "
        "anything; asking the same request afresh (not resuming it) finds the write still in "
        "progress and says so instead of writing a second time."),
    // quota-exhausted.json
    QT_TRANSLATE_NOOP("Scenarios", "Quota exhausted, falls back"),
    QT_TRANSLATE_NOOP(
        "Scenarios",
        "The model's quota is exhausted: the error is final, never retried, and the provider "
        "is taken out of the chain; the next model in the chain (the un-faulted offline "
        "model, with no key and no network) plans and answers both model calls, so the turn "
        "is still answered."),
    // rejected.json
    QT_TRANSLATE_NOOP("Scenarios", "Rejected by the backend"),
    QT_TRANSLATE_NOOP(
        "Scenarios",
        "The inventory backend rejects the request like a 400: the lookup is rejected on its "
        "first attempt and never retried, while the logistics lookup answers."),
    // same-key-conflict.json
    QT_TRANSLATE_NOOP("Scenarios", "Same key, other details"),
    QT_TRANSLATE_NOOP(
        "Scenarios",
        "A request makes a ticket; replayed under the same request id it is answered from "
        "the ledger; asked again under that id with other details it is refused as a "
        "conflict and nothing new is written."),
    // slow-past-timeout.json
    QT_TRANSLATE_NOOP("Scenarios", "Slow past the timeout"),
    QT_TRANSLATE_NOOP(
        "Scenarios",
        "The logistics lookup takes 5 s against a 300 ms attempt timeout: three attempts "
        "time out and the call gives up as timed out, while the stock lookup still answers."),
    // ticket-answer-lost.json
    QT_TRANSLATE_NOOP("Scenarios", "Ticket answer lost, status query settles it"),
    QT_TRANSLATE_NOOP(
        "Scenarios",
        "The ticket is committed but its answer is lost: the same attempt asks the backend "
        "for the idempotency key's status, finds the ticket and succeeds with exactly one "
        "ticket."),
    // ticket-flaky-then-ok.json
    QT_TRANSLATE_NOOP("Scenarios", "Ticket write flaky, then OK"),
    QT_TRANSLATE_NOOP(
        "Scenarios",
        "The first two ticket attempts fail like a 503 before anything is sent; the third "
        "asks the backend for the key's status (none), then writes: exactly one ticket, "
        "never a blind retry."),
    // tool-call-limit.json
    QT_TRANSLATE_NOOP("Scenarios", "Too many calls in one message"),
    QT_TRANSLATE_NOOP(
        "Scenarios",
        "One question asks for seventeen stock lookups, one more than a model message may "
        "run: sixteen run and answer, the seventeenth is not run and the answer says so."),
    // unknown-tool.json
    QT_TRANSLATE_NOOP("Scenarios", "Unknown tool"),
    QT_TRANSLATE_NOOP(
        "Scenarios",
        "The model names a tool that does not exist: nothing runs, the call is answered as "
        "an unknown tool, and the answer says the lookup could not be made."),
    // write-outcome-unknown.json
    QT_TRANSLATE_NOOP("Scenarios", "Write outcome unknown"),
    QT_TRANSLATE_NOOP(
        "Scenarios",
        "Every ticket attempt hangs past its 300 ms timeout and the status query cannot be "
        "answered either: the call ends with its outcome unknown, with no blind retry and no "
        "ticket."),
};

} // namespace
