// An exported conversation opened for viewing (docs/EXPORT.md): ConversationExport::fromJson,
// then the redactor over the same bytes as text.
// Properties: a refused file says why in one line; an accepted one is within its bounds, and
// written again and read back it is the same export; a known secret never survives redaction.

#include "fuzzsupport.h"

#include "core/export/conversationexport.h"

using namespace AgentConsole;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    Fuzz::ensureApplication();
    const QByteArray json = Fuzz::bytesOf(data, size);

    static const Redactor redactor = [] {
        Redactor known;
        known.addSecret(QStringLiteral("fuzz-known-secret"));
        return known;
    }();
    const QString text = QString::fromUtf8(json);
    FUZZ_CHECK(!redactor.redact(text).contains(QStringLiteral("fuzz-known-secret")));

    QString error;
    const std::optional<ConversationExport> read = ConversationExport::fromJson(json, &error);
    FUZZ_CHECK(read.has_value() == error.isEmpty());
    if (!read) {
        FUZZ_CHECK(error.startsWith(QStringLiteral("not a conversation export: ")));
        return 0;
    }
    FUZZ_CHECK(read->turns().size() <= ConversationExport::kMaxTurns);
    FUZZ_CHECK(read->exportedAt().isValid());
    // Written again (redacted once more) and read back: the same file.
    const QByteArray again = read->serialize(ConversationExport::Format::Json);
    const std::optional<ConversationExport> reread = ConversationExport::fromJson(again, &error);
    FUZZ_CHECK(reread.has_value());
    FUZZ_CHECK(reread->turns().size() == read->turns().size());
    FUZZ_CHECK(reread->serialize(ConversationExport::Format::Json) == again);
    (void)read->toMarkdown();
    return 0;
}
