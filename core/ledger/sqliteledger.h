#pragma once

#include "sqlledger.h"

namespace AgentConsole {

// The embedded ledger: one SQLite file in WAL mode, which several processes may share (the
// busy timeout makes a writer wait for another's lock instead of failing).
class SqliteLedger final : public Internal::SqlLedger
{
public:
    SqliteLedger(const QString &filePath, const LedgerOptions &options);
};

} // namespace AgentConsole
