#include "idempotencyledger.h"

namespace AgentConsole {

namespace {

struct StatusName
{
    LedgerStatus status;
    const char *name;
};

constexpr StatusName StatusNames[] = {
    {LedgerStatus::Processing, "PROCESSING"},
    {LedgerStatus::Succeeded, "SUCCEEDED"},
    {LedgerStatus::FailedRetryable, "FAILED_RETRYABLE"},
    {LedgerStatus::FailedFinal, "FAILED_FINAL"},
    {LedgerStatus::OutcomeUnknown, "OUTCOME_UNKNOWN"},
};

} // namespace

QString LedgerState::name(Status status)
{
    for (const StatusName &entry : StatusNames) {
        if (entry.status == status)
            return QString::fromLatin1(entry.name);
    }
    Q_UNREACHABLE();
    return {};
}

std::optional<LedgerStatus> LedgerState::fromName(const QString &name)
{
    for (const StatusName &entry : StatusNames) {
        if (name == QLatin1String(entry.name))
            return entry.status;
    }
    return std::nullopt;
}

} // namespace AgentConsole
