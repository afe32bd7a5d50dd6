#include "idempotencyledger.h"

#include "postgresledger.h"
#include "sqliteledger.h"

#include <QDir>

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

LedgerOpening openLedger(const QString &spec, const QString &dataDir,
                         const LedgerOptions &options)
{
    const QString trimmed = spec.trimmed();
    if (trimmed.isEmpty() || trimmed == QLatin1String("sqlite")) {
        const QString file = QDir(dataDir).filePath(QStringLiteral("ledger.sqlite"));
        return {std::make_unique<SqliteLedger>(file, options), {}};
    }
    if (trimmed.startsWith(QLatin1String("sqlite:"))) {
        const QString file = trimmed.mid(int(qstrlen("sqlite:")));
        if (file.isEmpty())
            return {nullptr, QStringLiteral("The ledger spec 'sqlite:' names no file.")};
        return {std::make_unique<SqliteLedger>(file, options), {}};
    }
    if (trimmed.startsWith(QLatin1String("postgresql:"))
        || trimmed.startsWith(QLatin1String("postgres:"))) {
        QString error;
        const std::optional<PostgresLocation> location =
            PostgresLocation::fromUrl(trimmed, &error);
        if (!location)
            return {nullptr, error};
        return {std::make_unique<PostgresLedger>(*location, options), {}};
    }
    // The spec is not echoed: a mistyped URL may still hold a password.
    return {nullptr, QStringLiteral("Unknown ledger; use 'sqlite', 'sqlite:/path/file' or "
                                    "postgresql://user:password@host:port/database.")};
}

} // namespace AgentConsole
