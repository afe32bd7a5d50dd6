#pragma once

#include "sqlledger.h"

#include <optional>

namespace AgentConsole {

// Where a PostgreSQL ledger lives, parsed from "postgresql://user:pass@host:port/db". A Unix
// socket directory is given libpq's way, "postgresql://user@/db?host=/run/dir&port=5432".
struct PostgresLocation
{
    QString host; // empty: libpq's default socket directory
    int port = 5432;
    QString userName; // empty: the operating-system user, as libpq does
    QString password; // never logged
    QString database; // empty: libpq's default (the user name)

    // Null and `error` set (one line, no password) when the URL cannot be used.
    static std::optional<PostgresLocation> fromUrl(const QString &url, QString *error);
    // "user@host:port/db", for staff and logs.
    QString safeName() const;
};

// How to connect to the database at `location` (no name or migrations: the store says those):
// libpq's timeouts and keepalives, and a session that commits synchronously and gives up on a
// statement that stalls. Without a password libpq reads ~/.pgpass (or PGPASSFILE) and a
// service file, as every PostgreSQL tool does.
Internal::SqlStoreRecipe postgresStoreRecipe(
    const PostgresLocation &location,
    std::chrono::seconds connectTimeout = std::chrono::seconds(5));

// The shared ledger of a team: consoles on many machines claim keys in one PostgreSQL table.
class PostgresLedger final : public Internal::SqlLedger
{
public:
    PostgresLedger(const PostgresLocation &location, const LedgerOptions &options);
};

} // namespace AgentConsole
