#include "journalsegments.h"

#include "../turnjournal.h"

#include <QCryptographicHash>
#include <QHash>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSqlError>
#include <QSqlQuery>
#include <QVariant>

#include <utility>

namespace AgentConsole {

namespace {

QByteArray compactBytes(const QJsonValue &message)
{
    // A message is an object; anything else (a damaged row's) is hashed as a one-element
    // array, so that it cannot be taken for an object's text.
    if (message.isObject())
        return QJsonDocument(message.toObject()).toJson(QJsonDocument::Compact);
    return QJsonDocument(QJsonArray{message}).toJson(QJsonDocument::Compact);
}

} // namespace

QByteArray journalMessageHash(const QByteArray &previous, const QJsonValue &message)
{
    QCryptographicHash hash(QCryptographicHash::Sha256);
    hash.addData(previous);
    hash.addData(compactBytes(message));
    return hash.result();
}

namespace Internal {

namespace {

QString hex(const QByteArray &hash)
{
    return QString::fromLatin1(hash.toHex());
}

QString arrayText(const QJsonArray &messages)
{
    return QString::fromUtf8(QJsonDocument(messages).toJson(QJsonDocument::Compact));
}

QJsonArray slice(const QJsonArray &messages, qsizetype from, qsizetype to)
{
    QJsonArray part;
    for (qsizetype i = from; i < to; ++i)
        part.append(messages.at(i));
    return part;
}

QString failure(const QSqlQuery &query)
{
    return query.lastError().text();
}

// What went wrong in writeTurnSegment, kept whole: a full disk is told by its error code.
QSqlError sqlFailure(const QSqlQuery &query)
{
    return query.lastError();
}

// " AND owner = ?" (with `prefix` before the column) in a team's journal, whose rows are each
// their owner's; nothing in a desk's file (internal/journalsegments.h, "Owners").
QString ownerAnd(const QString &owner, QLatin1String prefix = QLatin1String(""))
{
    return owner.isEmpty() ? QString() : QStringLiteral(" AND %1owner = ?").arg(prefix);
}

void bindOwner(QSqlQuery &query, const QString &owner)
{
    if (!owner.isEmpty())
        query.addBindValue(owner);
}

// One segment as stored: messages[from..to) after `parent`.
struct NewSegment
{
    int parent = 0;
    qsizetype from = 0;
    qsizetype to = 0;
};

// The next segment's number in the conversation (1, 2, ...): made after every segment it can
// continue, so a parent's number is always smaller than its child's.
int nextSegment(const QSqlDatabase &db, const QString &conversationId, const QString &owner,
                QSqlError *error)
{
    QSqlQuery query(db);
    query.prepare(QStringLiteral("SELECT COALESCE(MAX(segment), 0) + 1 FROM "
                                 "conversation_segments WHERE conversation_id = ?")
                  + ownerAnd(owner));
    query.addBindValue(conversationId);
    bindOwner(query, owner);
    if (!query.exec() || !query.next()) {
        *error = sqlFailure(query);
        return 0;
    }
    return query.value(0).toInt();
}

// Stores a segment; its number, or 0 with *error.
int insertSegment(QSqlDatabase &db, const QString &conversationId, const QString &owner,
                  const QJsonArray &messages, const QList<QByteArray> &hashes,
                  const NewSegment &segment, qint64 *bytes, QSqlError *error)
{
    const int number = nextSegment(db, conversationId, owner, error);
    if (number == 0)
        return 0;
    const QString text = arrayText(slice(messages, segment.from, segment.to));
    QSqlQuery query(db);
    query.prepare(owner.isEmpty()
                      ? QStringLiteral("INSERT INTO conversation_segments (conversation_id, "
                                       "segment, parent, start_index, end_index, start_hash, "
                                       "end_hash, messages_json) VALUES (?, ?, ?, ?, ?, ?, ?, ?)")
                      : QStringLiteral("INSERT INTO conversation_segments (conversation_id, "
                                       "segment, parent, start_index, end_index, start_hash, "
                                       "end_hash, messages_json, owner) "
                                       "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"));
    query.addBindValue(conversationId);
    query.addBindValue(number);
    query.addBindValue(segment.parent);
    query.addBindValue(qint64(segment.from));
    query.addBindValue(qint64(segment.to));
    query.addBindValue(segment.from > 0 ? hex(hashes.at(segment.from - 1)) : QStringLiteral(""));
    query.addBindValue(segment.to > 0 ? hex(hashes.at(segment.to - 1)) : QStringLiteral(""));
    query.addBindValue(text);
    bindOwner(query, owner);
    if (!query.exec()) {
        *error = sqlFailure(query);
        return 0;
    }
    *bytes += text.toUtf8().size();
    return number;
}

// The first segment of the conversation that ends after `length` messages whose running hash
// is `hash`: 0 when none does, -1 with *error.
int segmentEndingAt(const QSqlDatabase &db, const QString &conversationId, const QString &owner,
                    const QString &hash, qsizetype length, QSqlError *error)
{
    QSqlQuery query(db);
    query.prepare(QStringLiteral("SELECT segment FROM conversation_segments WHERE "
                                 "conversation_id = ? AND end_hash = ? AND end_index = ?%1 "
                                 "ORDER BY segment LIMIT 1")
                      .arg(ownerAnd(owner)));
    query.addBindValue(conversationId);
    query.addBindValue(hash);
    query.addBindValue(qint64(length));
    bindOwner(query, owner);
    if (!query.exec()) {
        *error = sqlFailure(query);
        return -1;
    }
    return query.next() ? query.value(0).toInt() : 0;
}

// Whether another segment continues `segment` (it must not change then).
std::optional<bool> isContinued(const QSqlDatabase &db, const QString &conversationId,
                                const QString &owner, int segment, QSqlError *error)
{
    QSqlQuery query(db);
    query.prepare(QStringLiteral("SELECT 1 FROM conversation_segments WHERE conversation_id = ? "
                                 "AND parent = ?%1 LIMIT 1")
                      .arg(ownerAnd(owner)));
    query.addBindValue(conversationId);
    query.addBindValue(segment);
    bindOwner(query, owner);
    if (!query.exec()) {
        *error = sqlFailure(query);
        return std::nullopt;
    }
    return query.next();
}

} // namespace

QList<QByteArray> runningHashes(const QJsonArray &messages)
{
    QList<QByteArray> hashes;
    hashes.reserve(messages.size());
    QByteArray previous;
    for (const QJsonValue &message : messages) {
        previous = journalMessageHash(previous, message);
        hashes.append(previous);
    }
    return hashes;
}

SegmentWrite writeTurnSegment(QSqlDatabase &db, const QString &conversationId,
                              const QString &owner, const QJsonArray &messages,
                              const QList<QByteArray> &hashes, qsizetype turnStart, int current)
{
    SegmentWrite write;
    const qsizetype length = messages.size();
    if (hashes.size() != length || turnStart < 0 || turnStart > length) {
        write.error = QSqlError(QString(),
                                QStringLiteral("a conversation of %1 messages with %2 hashes, "
                                               "its turn starting at %3")
                                    .arg(length)
                                    .arg(hashes.size())
                                    .arg(turnStart),
                                QSqlError::UnknownError);
        return write;
    }
    const QString startHash = turnStart > 0 ? hex(hashes.at(turnStart - 1)) : QStringLiteral("");
    // The turn's own segment so far is rewritten in place when it still follows the same
    // earlier part and nothing continues it: every checkpoint of a turn but its first.
    if (current > 0) {
        QSqlQuery query(db);
        query.prepare(QStringLiteral("SELECT start_index, start_hash FROM conversation_segments "
                                     "WHERE conversation_id = ? AND segment = ?")
                      + ownerAnd(owner));
        query.addBindValue(conversationId);
        query.addBindValue(current);
        bindOwner(query, owner);
        if (!query.exec()) {
            write.error = sqlFailure(query);
            return write;
        }
        const bool samePlace = query.next() && query.value(0).toLongLong() == turnStart
            && query.value(1).toString() == startHash;
        query.finish();
        if (samePlace) {
            const std::optional<bool> continued = isContinued(db, conversationId, owner, current,
                                                              &write.error);
            if (!continued)
                return write;
            if (!*continued) {
                const QString text = arrayText(slice(messages, turnStart, length));
                QSqlQuery update(db);
                update.prepare(
                    QStringLiteral("UPDATE conversation_segments SET end_index = ?, end_hash = ?, "
                                   "messages_json = ? WHERE conversation_id = ? AND segment = ?")
                    + ownerAnd(owner));
                update.addBindValue(qint64(length));
                update.addBindValue(length > 0 ? hex(hashes.at(length - 1)) : QStringLiteral(""));
                update.addBindValue(text);
                update.addBindValue(conversationId);
                update.addBindValue(current);
                bindOwner(update, owner);
                if (!update.exec()) {
                    write.error = sqlFailure(update);
                    return write;
                }
                write.segment = current;
                write.bytes = text.toUtf8().size();
                return write;
            }
        }
    }
    // A new segment, after the one that ends where this turn begins.
    NewSegment own{0, turnStart, length};
    if (turnStart > 0) {
        own.parent = segmentEndingAt(db, conversationId, owner, startHash, turnStart,
                                     &write.error);
        if (own.parent < 0)
            return write;
        if (own.parent == 0) {
            // Put together elsewhere (or its last turn's final checkpoint was never saved): the
            // earlier part is stored once, as a segment of its own.
            own.parent = insertSegment(db, conversationId, owner, messages, hashes,
                                       {0, 0, turnStart}, &write.earlierPartBytes, &write.error);
            if (own.parent == 0)
                return write;
        }
    }
    write.bytes = write.earlierPartBytes;
    write.segment = insertSegment(db, conversationId, owner, messages, hashes, own, &write.bytes,
                                  &write.error);
    if (write.segment == 0)
        return write;
    // The turn's segment before (a request asked again, or a turn carried on after another
    // part) goes, unless it is what this one or another continues.
    if (current > 0 && current != own.parent) {
        const std::optional<bool> continued = isContinued(db, conversationId, owner, current,
                                                          &write.error);
        if (!continued)
            return write;
        if (!*continued) {
            QSqlQuery remove(db);
            remove.prepare(QStringLiteral("DELETE FROM conversation_segments "
                                          "WHERE conversation_id = ? AND segment = ?")
                           + ownerAnd(owner));
            remove.addBindValue(conversationId);
            remove.addBindValue(current);
            bindOwner(remove, owner);
            if (!remove.exec())
                write.error = sqlFailure(remove);
        }
    }
    return write;
}

SegmentRead readConversation(const QSqlDatabase &db, const QString &conversationId,
                             const QString &owner, int segment)
{
    SegmentRead read;
    const auto damaged = [&](const QString &why) {
        read.messages.reset();
        read.error = QStringLiteral("its conversation is not stored whole (%1)").arg(why);
        return read;
    };
    // The segment and its parents; a parent is always made before its child, so the walk
    // ends even in an edited file.
    QSqlQuery query(db);
    query.setForwardOnly(true);
    query.prepare(
        QStringLiteral(
            "WITH RECURSIVE chain (segment, parent, start_index, end_index, messages_json) AS ("
            "SELECT segment, parent, start_index, end_index, messages_json "
            "FROM conversation_segments WHERE conversation_id = ? AND segment = ?%1 "
            "UNION ALL "
            "SELECT s.segment, s.parent, s.start_index, s.end_index, s.messages_json "
            "FROM conversation_segments s JOIN chain c ON s.conversation_id = ?%2 "
            "AND s.segment = c.parent AND s.segment < c.segment) "
            "SELECT segment, parent, start_index, end_index, messages_json FROM chain "
            "ORDER BY start_index, segment")
            .arg(ownerAnd(owner), ownerAnd(owner, QLatin1String("s."))));
    query.addBindValue(conversationId);
    query.addBindValue(segment);
    bindOwner(query, owner);
    query.addBindValue(conversationId);
    bindOwner(query, owner);
    if (!query.exec())
        return damaged(failure(query));
    QJsonArray messages;
    int previous = 0;
    qsizetype end = 0;
    bool any = false;
    while (query.next()) {
        const int number = query.value(0).toInt();
        const int parent = query.value(1).toInt();
        const qsizetype startIndex = query.value(2).toLongLong();
        const qsizetype endIndex = query.value(3).toLongLong();
        if (parent != previous || startIndex != end || endIndex < startIndex)
            return damaged(
                QStringLiteral("segment %1 does not follow segment %2").arg(number).arg(previous));
        QJsonParseError error;
        const QJsonDocument part = QJsonDocument::fromJson(query.value(4).toString().toUtf8(),
                                                           &error);
        if (error.error != QJsonParseError::NoError || !part.isArray()
            || part.array().size() != endIndex - startIndex)
            return damaged(QStringLiteral("segment %1 is not readable").arg(number));
        for (const QJsonValue &message : part.array())
            messages.append(message);
        read.ownStart = startIndex;
        previous = number;
        end = endIndex;
        any = true;
    }
    if (!any || previous != segment)
        return damaged(QStringLiteral("segment %1 is missing").arg(segment));
    read.messages = messages;
    return read;
}

QString removeUnusedSegments(QSqlDatabase &db, const QString &conversationId, const QString &owner)
{
    // In a team's journal a turn keeps only its own owner's segments.
    const QString sameOwner = owner.isEmpty() ? QString()
                                              : QStringLiteral(" AND t.owner = s.owner");
    QSqlQuery query(db);
    query.prepare(
        QStringLiteral(
            "DELETE FROM conversation_segments WHERE conversation_id = ?%1 AND segment NOT IN ("
            "WITH RECURSIVE needed (segment, parent) AS ("
            "SELECT s.segment, s.parent FROM conversation_segments s JOIN turn_checkpoints t "
            "ON t.conversation_id = s.conversation_id AND t.segment = s.segment%2 "
            "WHERE s.conversation_id = ?%3 "
            "UNION "
            "SELECT s.segment, s.parent FROM conversation_segments s JOIN needed n "
            "ON s.conversation_id = ?%3 AND s.segment = n.parent) "
            "SELECT segment FROM needed)")
            .arg(ownerAnd(owner), sameOwner, ownerAnd(owner, QLatin1String("s."))));
    query.addBindValue(conversationId);
    bindOwner(query, owner);
    query.addBindValue(conversationId);
    bindOwner(query, owner);
    query.addBindValue(conversationId);
    bindOwner(query, owner);
    return query.exec() ? QString() : failure(query);
}

QString splitStoredConversations(QSqlDatabase &db)
{
    // The rows in the order their turns were saved, a conversation at a time: a turn's earlier
    // part is then found among the segments of the turns before it. (The migration reads
    // SQLite files, whose rowid is the order of insertion.)
    QList<std::pair<qint64, QString>> rows;
    {
        QSqlQuery query(db);
        query.setForwardOnly(true);
        if (!query.exec(QStringLiteral("SELECT rowid, conversation_id FROM turn_checkpoints "
                                       "ORDER BY conversation_id, created_at, rowid")))
            return failure(query);
        while (query.next())
            rows.append({query.value(0).toLongLong(), query.value(1).toString()});
    }
    // Per conversation: where each segment ends, by its end hash.
    struct End
    {
        int segment = 0;
        qsizetype index = 0;
    };
    QHash<QString, End> ends;
    QString conversationId;
    for (const auto &[rowid, conversation] : std::as_const(rows)) {
        if (conversation != conversationId) {
            conversationId = conversation;
            ends.clear();
        }
        QSqlQuery read(db);
        read.prepare(QStringLiteral("SELECT state_json FROM turn_checkpoints WHERE rowid = ?"));
        read.addBindValue(rowid);
        if (!read.exec() || !read.next())
            return failure(read);
        const std::optional<QJsonObject> stored = storedJsonObject(read.value(0).toString());
        read.finish();
        if (!stored)
            continue; // damaged: kept as it is, read back as damaged
        QJsonObject state = *stored;
        const QJsonValue conversationValue = state.value(QLatin1String("conversation"));
        const qsizetype turnStart = state.value(QLatin1String("turnStart")).toInteger(-1);
        if (!conversationValue.isArray())
            continue;
        const QJsonArray messages = conversationValue.toArray();
        if (turnStart < 0 || turnStart > messages.size())
            continue;
        const QList<QByteArray> hashes = runningHashes(messages);
        QSqlError error;
        qint64 bytes = 0;
        NewSegment own{0, turnStart, messages.size()};
        if (turnStart > 0) {
            // The longest earlier part a segment ends with; the rest of it is stored once.
            qsizetype from = turnStart;
            for (; from > 0; --from) {
                const auto found = ends.constFind(hex(hashes.at(from - 1)));
                if (found != ends.constEnd() && found->index == from) {
                    own.parent = found->segment;
                    break;
                }
            }
            if (from < turnStart) {
                own.parent = insertSegment(db, conversationId, {}, messages, hashes,
                                           {own.parent, from, turnStart}, &bytes, &error);
                if (own.parent == 0)
                    return error.text();
                ends.insert(hex(hashes.at(turnStart - 1)), {own.parent, turnStart});
            }
        }
        const int segment = insertSegment(db, conversationId, {}, messages, hashes, own, &bytes,
                                          &error);
        if (segment == 0)
            return error.text();
        if (own.to > 0 && !ends.contains(hex(hashes.at(own.to - 1))))
            ends.insert(hex(hashes.at(own.to - 1)), {segment, own.to});
        state.remove(QLatin1String("conversation"));
        QSqlQuery update(db);
        update.prepare(QStringLiteral("UPDATE turn_checkpoints SET state_json = ?, segment = ? "
                                      "WHERE rowid = ?"));
        update.addBindValue(
            QString::fromUtf8(QJsonDocument(state).toJson(QJsonDocument::Compact)));
        update.addBindValue(segment);
        update.addBindValue(rowid);
        if (!update.exec())
            return failure(update);
    }
    return {};
}

} // namespace Internal
} // namespace AgentConsole
