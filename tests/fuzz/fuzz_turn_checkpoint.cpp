// A stored turn as the journal reads it back after a restart (another process's, an older
// console's, or a damaged file's): the row's text columns (journalEntryFromRow), the tool
// results appended after it (storedJsonObject), then TurnCheckpoint::fromEntry. Input: fields
// separated by "\n--\n": requestId, conversationId, stage, resumable, state JSON, counters
// JSON, createdAt, updatedAt, appended results (one "<call index> <JSON>" a line).
// Properties: a damaged row is never resumed; a checkpoint that was read is written and read
// back to the same stored state.

#include "fuzzsupport.h"

#include "core/turn/turncheckpoint.h"
#include "core/ledger/turnjournal.h"

using namespace AgentConsole;

namespace {

JournalEntry entryOf(const QList<QByteArray> &fields)
{
    JournalRow row;
    row.requestId = QString::fromUtf8(fields.at(0));
    row.conversationId = QString::fromUtf8(fields.at(1));
    row.stage = QString::fromUtf8(fields.at(2));
    row.resumable = fields.at(3).trimmed().toInt();
    row.stateJson = QString::fromUtf8(fields.at(4));
    row.countersJson = QString::fromUtf8(fields.at(5));
    row.createdAt = QString::fromUtf8(fields.at(6));
    row.updatedAt = QString::fromUtf8(fields.at(7));
    JournalEntry entry = journalEntryFromRow(row);
    // As TurnJournal reads turn_tool_results: a result that is not JSON damages the turn.
    for (const QByteArray &line : fields.at(8).split('\n')) {
        if (line.isEmpty())
            continue;
        const qsizetype space = line.indexOf(' ');
        const int index = line.left(space).toInt();
        const std::optional<QJsonObject> record =
            storedJsonObject(QString::fromUtf8(space < 0 ? QByteArray() : line.mid(space + 1)));
        if (!record) {
            entry.damage = QStringLiteral("tool result %1 is not readable JSON").arg(index);
            break;
        }
        entry.appendedResults.insert(index, *record);
    }
    return entry;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    Fuzz::ensureApplication();
    const JournalEntry entry = entryOf(Fuzz::fieldsOf(Fuzz::bytesOf(data, size), 9));

    QString error;
    const std::optional<TurnCheckpoint> checkpoint = TurnCheckpoint::fromEntry(entry, &error);
    FUZZ_CHECK(checkpoint.has_value() == error.isEmpty());
    if (!checkpoint)
        return 0;
    FUZZ_CHECK(entry.damage.isEmpty());
    FUZZ_CHECK(checkpoint->turnStart >= 0
               && checkpoint->turnStart <= checkpoint->conversation.size());
    (void)checkpoint->isResumable();

    // Saved again (as the loop saves it) and read back: the same turn.
    JournalEntry saved = checkpoint->toEntry();
    saved.createdAt = entry.createdAt;
    saved.updatedAt = entry.updatedAt;
    const std::optional<TurnCheckpoint> again = TurnCheckpoint::fromEntry(saved, &error);
    FUZZ_CHECK(again.has_value());
    const JournalEntry resaved = again->toEntry();
    FUZZ_CHECK(resaved.state == saved.state);
    FUZZ_CHECK(resaved.stage == saved.stage);
    FUZZ_CHECK(resaved.resumable == saved.resumable);
    for (const ToolCallRecord &call : checkpoint->result.toolCalls)
        (void)TurnCheckpoint::toolCallJson(call);
    return 0;
}
