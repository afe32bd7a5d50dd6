#pragma once

// Header-only helpers for suites that leave a data directory as an earlier, killed process
// would have: interrupted turns in its journal.

#include "core/turn/turncheckpoint.h"
#include "core/ledger/turnjournal.h"

#include <QDir>
#include <QFuture>
#include <QList>
#include <QString>
#include <QStringList>
#include <QTest>

namespace AgentConsole::Testing {

// The demo store's first staff member and tenant, whom the runtime picks without --user.
inline const QString demoUser = QStringLiteral("u-1001");
inline const QString demoTenant = QStringLiteral("t-acme");

// Waits for a future without blocking the event loop (the journal's thread reports to it).
template <typename T>
bool settled(const QFuture<T> &future, int timeoutMs = 20000)
{
    return QTest::qWaitFor([&future] { return future.isFinished(); }, timeoutMs);
}

// What a process killed right after RECEIVED leaves in turns.sqlite.
inline TurnCheckpoint receivedTurn(const QString &requestId, const QString &conversationId,
                                   const QString &question, const QString &userId = demoUser)
{
    TurnCheckpoint checkpoint;
    checkpoint.stage = TurnStage::Received;
    checkpoint.userId = userId;
    checkpoint.tenantId = demoTenant;
    checkpoint.conversationId = conversationId;
    checkpoint.language = Language::English;
    checkpoint.conversation = {ChatMessage::user(question)};
    checkpoint.turnStart = 0;
    checkpoint.result.requestId = requestId;
    checkpoint.result.question = question;
    return checkpoint;
}

// The turns' request ids, in order: what a list of offered turns is compared by.
inline QStringList requestIds(const QList<TurnCheckpoint> &turns)
{
    QStringList ids;
    for (const TurnCheckpoint &turn : turns)
        ids.append(turn.result.requestId);
    return ids;
}

// Saves `turns` in `directory`'s turns.sqlite; what went wrong, or empty if all were saved.
inline QString writeCheckpoints(const QString &directory, const QList<TurnCheckpoint> &turns)
{
    TurnJournal journal(QDir(directory).filePath(QStringLiteral("turns.sqlite")));
    const QFuture<JournalOpenResult> opened = journal.open();
    if (!settled(opened))
        return QStringLiteral("the journal did not open in time");
    if (!opened.result().ok)
        return opened.result().detail;
    for (const TurnCheckpoint &turn : turns) {
        const QFuture<JournalWrite> saved = journal.save(turn.toEntry());
        if (!settled(saved))
            return QStringLiteral("a checkpoint was not saved in time");
        if (!saved.result().ok)
            return saved.result().detail;
    }
    return {};
}

} // namespace AgentConsole::Testing
