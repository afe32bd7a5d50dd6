#pragma once

#include <QByteArray>
#include <QJsonArray>
#include <QList>
#include <QSqlDatabase>
#include <QSqlError>
#include <QString>

#include <optional>

namespace AgentConsole::Internal {

// How the turn journal keeps conversations (schema version 5, issue #43 §1): each turn's own
// messages, from its question on, are one segment of its conversation; a segment names the one
// before it (its parent), so a turn's whole conversation is its segment after its parents'.
// A checkpoint therefore stores what its turn adds, whatever came before.
//
// A segment is found by the running hash of the conversation up to its last message (its end
// hash, journalMessageHash): a turn finds the earlier turns' part of its conversation by the
// hash of what came before its question, without reading it. A segment another one continues
// is never changed again; the turn's own, while nobody continues it, is rewritten by the
// turn's next checkpoint. A conversation that no stored segment ends where it does (one put
// together elsewhere) has that earlier part stored as a segment of its own, once.
//
// The SQL is what PostgreSQL runs too (no rowid, no JSON functions); runs on the journal's
// database thread, inside the caller's transaction.
//
// Owners: a desk's file keeps every staff member's segments together (`owner` empty). A team's
// journal on PostgreSQL keeps each owner's apart (`owner`: the turn rows' owner, tenant/staff):
// every statement reads and writes that owner's rows only, so that no conversation of one
// agent is reachable from another's, whatever the conversation ids.

// The running hashes of `messages`: [i] is that of messages 0..i.
QList<QByteArray> runningHashes(const QJsonArray &messages);

struct SegmentWrite
{
    QSqlError error; // isValid(): not written
    int segment = 0; // the turn's own segment
    qint64 bytes = 0; // JSON bytes written, the earlier part's included
    qint64 earlierPartBytes = 0; // of them, an earlier part no segment held
};

// Stores messages[turnStart..] as the turn's own segment, after the segment ending where
// messages[..turnStart] ends. `hashes` are the running hashes of `messages`; `current` the
// segment the turn's row names now (0: none yet).
SegmentWrite writeTurnSegment(QSqlDatabase &db, const QString &conversationId,
                              const QString &owner, const QJsonArray &messages,
                              const QList<QByteArray> &hashes, qsizetype turnStart, int current);

struct SegmentRead
{
    std::optional<QJsonArray> messages; // nullopt: not stored whole
    qsizetype ownStart = 0; // where the segment itself begins (the turn's turnStart)
    QString error;
};

// The conversation through `segment`: its parents' messages, then its own.
SegmentRead readConversation(const QSqlDatabase &db, const QString &conversationId,
                             const QString &owner, int segment);

// Deletes the conversation's segments no turn row needs any more (its own or as a parent).
QString removeUnusedSegments(QSqlDatabase &db, const QString &conversationId,
                             const QString &owner);

// Schema version 5's rewrite of the rows before it, each of which held its whole conversation
// in its state: that state keeps what only the turn has, its messages go to its segment, the
// earlier ones are found in the segments of the turns before it. A row whose conversation
// cannot be split (not JSON, no list of messages, a turnStart out of range) is kept as it was
// and reads back as before.
QString splitStoredConversations(QSqlDatabase &db);

} // namespace AgentConsole::Internal
