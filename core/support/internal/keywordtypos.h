#pragma once

#include <QString>

namespace AgentConsole::Internal {

// The text with each English word that is one slip away from a word the planner reads
// ("pakage", "logistcs", "retrun", "staus", "stattus", "logestics") replaced by that word;
// everything else is kept as written. A slip is one letter left out, one added or doubled
// (not in front: "border" is not "order") or two neighbouring letters swapped, in a word of at
// least 5 letters, or one letter (not the first) typed wrong in a word of at least 7, unless
// the typed word is a word of its own ("skipping", "misting"); shorter words have too many
// real neighbours ("sock", "rack", "statue") and only a few known slips of them are read
// ("stok", "oder"), with pinyin typed without the input method ("wuliu"). "wear is" or "were
// is" at the start of a clause is "where is". Chinese slips are the other character of the
// same sound that a pinyin input method offers ("务流" for 物流, "定单" for 订单, "到那了" for
// 到哪了), for pairs that are not words of their own.
QString withKeywordTyposCorrected(const QString &text);

} // namespace AgentConsole::Internal
