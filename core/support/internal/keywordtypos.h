#pragma once

#include <QString>

namespace AgentConsole::Internal {

// The text with each English word that is one slip away from a word the planner reads
// ("pakage", "logistcs", "retrun", "staus") replaced by that word; everything else is kept as
// written. A slip is one letter left out or two neighbouring letters swapped, in a word of
// at least 5 letters; shorter words have too many real neighbours ("sock", "rack") and only a
// few known slips of them are read ("stok", "oder"). Chinese needs none of this: a character
// is typed whole or not at all.
QString withKeywordTyposCorrected(const QString &text);

} // namespace AgentConsole::Internal
