#pragma once

#include <QJsonObject>

namespace AgentConsole::Mcp {

struct SummaryLimits
{
    int maxTextChars = 8000; // all text blocks together
    int maxStructuredBytes = 8000; // structuredContent, as compact JSON
    int maxBlocks = 32; // content blocks looked at
    int maxLinkChars = 512; // a resource link's uri or name
};

// What the model reads of a tools/call result (CallToolResult): its text (bounded, cut with
// a mark), its structured content (kept only while small), resource links (uri, name, mime
// type), and a note for each block it is not shown (images, audio, embedded resources' blobs).
// Never the server's text unbounded: `truncated` says when anything was left out.
QJsonObject summariseToolResult(const QJsonObject &result, const SummaryLimits &limits = {});

} // namespace AgentConsole::Mcp
