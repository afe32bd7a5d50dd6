#include "postgresledger.h"

#include <QCoreApplication>
#include <QUrl>
#include <QUrlQuery>

namespace AgentConsole {

namespace {

// Worded where it is found, in the window's language (docs/TRANSLATIONS.md); agent-cli
// installs no translator and keeps the English source.
struct PostgresWords
{
    Q_DECLARE_TR_FUNCTIONS(AgentConsole::Ledger)
};

} // namespace

std::optional<PostgresLocation> PostgresLocation::fromUrl(const QString &text, QString *error)
{
    const QUrl url(text, QUrl::StrictMode);
    const QString scheme = url.scheme().toLower();
    if (!url.isValid()
        || (scheme != QLatin1String("postgresql") && scheme != QLatin1String("postgres"))) {
        *error = PostgresWords::tr("The ledger URL is not valid; expected "
                                   "postgresql://user:password@host:port/database.");
        return std::nullopt;
    }
    const QUrlQuery query(url);
    PostgresLocation location;
    location.host = url.host();
    if (query.hasQueryItem(QStringLiteral("host")))
        location.host = query.queryItemValue(QStringLiteral("host"), QUrl::FullyDecoded);
    location.port = url.port(5432);
    if (query.hasQueryItem(QStringLiteral("port"))) {
        bool ok = false;
        location.port = query.queryItemValue(QStringLiteral("port")).toInt(&ok);
        if (!ok || location.port <= 0 || location.port > 65535) {
            *error = PostgresWords::tr("The ledger URL has an invalid port.");
            return std::nullopt;
        }
    }
    location.userName = url.userName(QUrl::FullyDecoded);
    if (query.hasQueryItem(QStringLiteral("user")))
        location.userName = query.queryItemValue(QStringLiteral("user"), QUrl::FullyDecoded);
    location.password = url.password(QUrl::FullyDecoded);
    location.database = url.path(QUrl::FullyDecoded).mid(1); // drop the leading '/'
    if (location.database.contains(QLatin1Char('/'))) {
        *error = PostgresWords::tr("The ledger URL names no single database.");
        return std::nullopt;
    }
    return location;
}

QString PostgresLocation::safeName() const
{
    QString name;
    if (!userName.isEmpty())
        name += userName + QLatin1Char('@');
    name += host.isEmpty() ? QStringLiteral("localhost") : host;
    name += QLatin1Char(':') + QString::number(port) + QLatin1Char('/') + database;
    return name;
}

Internal::SqlStoreRecipe postgresStoreRecipe(const PostgresLocation &location,
                                             std::chrono::seconds connectTimeout)
{
    Internal::SqlStoreRecipe recipe;
    recipe.dialect = Internal::SqlDialect::Postgres;
    recipe.driver = QStringLiteral("QPSQL");
    recipe.databaseName = location.database;
    recipe.hostName = location.host;
    recipe.port = location.port;
    recipe.userName = location.userName;
    recipe.password = location.password;
    // Without a timeout libpq may wait minutes for a host that drops packets; the keepalives
    // and the user timeout notice a connection that died silently mid-statement (the ledger's
    // one thread would wait on it, and every write behind it).
    recipe.connectOptions = QStringLiteral(
                                "connect_timeout=%1;keepalives=1;keepalives_idle=5;"
                                "keepalives_interval=2;keepalives_count=3;tcp_user_timeout=10000")
                                .arg(qMax<qint64>(1, connectTimeout.count()));
    // Each claim and completion must be on disk before it is reported; a server configured
    // otherwise is overridden for this session.
    recipe.sessionStatements = {
        QStringLiteral("SET synchronous_commit = on"),
        // Notices ("relation already exists, skipping") would go to stderr via libpq.
        QStringLiteral("SET client_min_messages = warning"),
        // A server that stalls (locks held elsewhere, a frozen disk) answers StoreError.
        QStringLiteral("SET statement_timeout = 10000"),
    };
    return recipe;
}

namespace {

Internal::SqlStoreRecipe postgresRecipe(const PostgresLocation &location,
                                        const LedgerOptions &options)
{
    Internal::SqlStoreRecipe recipe = postgresStoreRecipe(location, options.connectTimeout);
    recipe.description = QStringLiteral("PostgreSQL ledger %1").arg(location.safeName());
    recipe.shownName = PostgresWords::tr("PostgreSQL ledger %1").arg(location.safeName());
    recipe.owner = options.owner;
    recipe.keptPath = options.keptCompletionsPath;
    return recipe;
}

} // namespace

PostgresLedger::PostgresLedger(const PostgresLocation &location, const LedgerOptions &options)
    : SqlLedger(postgresRecipe(location, options))
{
}

} // namespace AgentConsole
