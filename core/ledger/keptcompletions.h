#pragma once

#include "idempotencyledger.h"

#include <QJsonObject>
#include <QList>
#include <QString>

#include <functional>

namespace AgentConsole::Internal {

// Completions the store could not take (PostgreSQL down, SQLite busy or its disk full), kept
// until it can: a write that ran must not read "in progress" for ever because its answer met
// an outage (DESIGN.md, "Write tools and idempotency"). Kept in memory on the database thread
// and in a file beside the ledger, so that a console closed during the outage records them
// at its next start. Only this ledger's owner can complete its rows, so recording one late,
// or twice, moves nothing that is not still its PROCESSING row.
class KeptCompletions final
{
public:
    // At most this many are kept; beyond it the oldest is given up (logged): its row reads
    // "in progress" until a resume of its turn settles it.
    static constexpr qsizetype MaxKept = 10000;
    // A file larger than this is not read (and not replaced).
    static constexpr qint64 MaxFileBytes = 64 * 1024 * 1024;

    struct Entry
    {
        QString key;
        LedgerStatus status = LedgerStatus::Succeeded;
        QJsonObject result;
    };

    // `path`: the file; empty keeps them in memory only.
    explicit KeptCompletions(QString path);

    // Reads the file a run before left, if any. A file that cannot be read is left as it is
    // and not written over (what it holds is not lost); the reason goes to the log.
    void load();
    void keep(Entry entry);
    bool isEmpty() const { return m_entries.isEmpty(); }
    qsizetype size() const { return m_entries.size(); }

    using Complete = std::function<LedgerCompletion(const Entry &)>;
    // Records each, oldest first, until the store fails again; what the store took (or
    // answered NotProcessing: settled meanwhile) is forgotten. The number left.
    qsizetype recordWith(const Complete &complete);

private:
    void save();

    QString m_path;
    bool m_fileUnusable = false; // a file that could not be read: never written over
    QList<Entry> m_entries;
};

} // namespace AgentConsole::Internal
