#pragma once

#include "idempotencyledger.h"

#include <QString>

#include <memory>

namespace AgentConsole {

struct LedgerOpening
{
    std::unique_ptr<IdempotencyLedger> ledger; // null when the spec is bad
    QString error; // one line for staff when ledger is null
};

// Makes (but does not open) the ledger a spec names: "" or "sqlite" -> SQLite file
// "ledger.sqlite" in dataDir; "sqlite:/path/file.sqlite" -> that file;
// "postgresql://user:pass@host:port/db" (also "postgres://"; "?host=/socket/dir" for a Unix
// socket) -> PostgreSQL. Does no I/O; reachability is learned from open().
LedgerOpening openLedger(const QString &spec, const QString &dataDir,
                         const LedgerOptions &options = {});

} // namespace AgentConsole
