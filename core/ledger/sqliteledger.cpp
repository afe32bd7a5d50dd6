#include "sqliteledger.h"

#include <QCoreApplication>
#include <QFileInfo>

namespace AgentConsole {

namespace {

// Worded where it is found, in the window's language (docs/TRANSLATIONS.md); agent-cli
// installs no translator and keeps the English source.
struct SqliteWords
{
    Q_DECLARE_TR_FUNCTIONS(AgentConsole::Ledger)
};

Internal::SqlStoreRecipe sqliteRecipe(const QString &filePath, const LedgerOptions &options)
{
    Internal::SqlStoreRecipe recipe;
    recipe.dialect = Internal::SqlDialect::Sqlite;
    recipe.driver = QStringLiteral("QSQLITE");
    recipe.databaseName = QFileInfo(filePath).absoluteFilePath();
    const auto busyMs = QString::number(options.busyTimeout.count());
    recipe.connectOptions = QStringLiteral("QSQLITE_BUSY_TIMEOUT=") + busyMs;
    const bool full = options.synchronous == SqliteSynchronous::Full;
    recipe.sessionStatements = {
        // WAL: readers never block the writer, and a commit is one append to the log.
        QStringLiteral("PRAGMA journal_mode = WAL=>wal"),
        QStringLiteral("PRAGMA synchronous = ")
            + (full ? QLatin1String("FULL") : QLatin1String("NORMAL")),
        QStringLiteral("PRAGMA busy_timeout = ") + busyMs,
    };
    recipe.description = QStringLiteral("SQLite ledger %1").arg(recipe.databaseName);
    recipe.shownName = SqliteWords::tr("SQLite ledger %1").arg(recipe.databaseName);
    recipe.owner = options.owner;
    recipe.keptPath = options.keptCompletionsPath;
    return recipe;
}

} // namespace

SqliteLedger::SqliteLedger(const QString &filePath, const LedgerOptions &options)
    : SqlLedger(sqliteRecipe(filePath, options))
{
}

} // namespace AgentConsole
