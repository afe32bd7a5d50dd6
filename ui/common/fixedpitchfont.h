#pragma once

class QFont;

namespace AgentConsole {

// A font whose characters all take the same width, as staff see it drawn, for text laid out
// in columns (mcp.json in its editor, the diagnostics' figures). The platform's fixed font is
// not always one: fontconfig's "monospace" can name a family whose metrics Qt does not take
// as fixed, or one whose drawn glyphs are not (it depends on the fonts a desktop installed).
// So the candidates are measured, not trusted by name: the platform's, then well-known
// monospaced families, then any family the font database lists as fixed. Chosen once.
QFont fixedPitchFont();

// Whether every character of a sample of narrow and wide ones advances by the same width in
// `font` (what a reader sees, whatever the font's name or flags say).
bool drawsFixedPitch(const QFont &font);

} // namespace AgentConsole
