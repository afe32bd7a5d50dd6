#include "ledgeropening.h"

#include "postgresledger.h"
#include "sqliteledger.h"

#include <QCoreApplication>
#include <QDir>

namespace AgentConsole {

namespace {

// Worded where it is found, in the window's language (docs/TRANSLATIONS.md); agent-cli
// installs no translator and keeps the English source.
struct LedgerWords
{
    Q_DECLARE_TR_FUNCTIONS(AgentConsole::Ledger)
};

} // namespace

LedgerOpening openLedger(const QString &spec, const QString &dataDir,
                         const LedgerOptions &givenOptions)
{
    LedgerOptions options = givenOptions;
    // This console's completions that its store could not take, whichever store it is.
    if (options.keptCompletionsPath.isEmpty() && !dataDir.isEmpty())
        options.keptCompletionsPath = QDir(dataDir).filePath(QStringLiteral("ledger-kept.json"));
    const QString trimmed = spec.trimmed();
    if (trimmed.isEmpty() || trimmed == QLatin1String("sqlite")) {
        const QString file = QDir(dataDir).filePath(QStringLiteral("ledger.sqlite"));
        return {std::make_unique<SqliteLedger>(file, options), {}};
    }
    if (trimmed.startsWith(QLatin1String("sqlite:"))) {
        const QString file = trimmed.mid(int(qstrlen("sqlite:")));
        if (file.isEmpty())
            return {nullptr, LedgerWords::tr("The ledger spec 'sqlite:' names no file.")};
        return {std::make_unique<SqliteLedger>(file, options), {}};
    }
    if (trimmed.startsWith(QLatin1String("postgresql:"))
        || trimmed.startsWith(QLatin1String("postgres:"))) {
        QString error;
        const std::optional<PostgresLocation> location = PostgresLocation::fromUrl(trimmed,
                                                                                   &error);
        if (!location)
            return {nullptr, error};
        return {std::make_unique<PostgresLedger>(*location, options), {}};
    }
    // The spec is not echoed: a mistyped URL may still hold a password.
    return {nullptr,
            LedgerWords::tr("Unknown ledger; use 'sqlite', 'sqlite:/path/file' or "
                            "postgresql://user:password@host:port/database.")};
}

} // namespace AgentConsole
