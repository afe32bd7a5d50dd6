#pragma once

#include "../../resilience/toolresult.h"
#include "supportquestion.h"

#include <QList>
#include <QString>
#include <QStringList>

namespace AgentConsole::Internal {

// What came back for one tool call of the current question.
struct LookupOutcome
{
    enum class State {
        Answered, // a well-formed ToolResult, success or failure
        Malformed, // content that is not a ToolResult's JSON
        Missing, // the call was made but no tool message answers it
    };

    QString toolName;
    QString subject; // the order id or SKU from the call's arguments; may be empty
    // (for createTicket: its orderId)
    State state = State::Missing;
    ToolResult result; // valid when state is Answered
};

// Turns tool outcomes into the demo model's answer, one sentence per entry, following the
// failure rules of DESIGN.md: successes with their real data, failures as plain sentences
// that never invent data, partial success stated part by part. Also writes the replies
// that need no tool at all. Pure functions of their input: the model must be deterministic.
class LookupAnswerWriter final
{
public:
    // An answer in parts: a block per thing looked up (its first sentence says what was found,
    // the others are its details) and closing sentences about the whole (try again later).
    struct Answer
    {
        QList<QStringList> blocks;
        QStringList closing;
    };

    explicit LookupAnswerWriter(Language language)
        : m_language(language)
    {
    }

    Answer answer(const QList<LookupOutcome> &outcomes) const;
    // The question named no order number and no SKU.
    QStringList askForIdentifiers(const SupportQuestion &question) const;
    // A follow-up ("and its logistics?") after a question that named several candidates.
    QStringList askWhichSubject(const QList<NamedSubject> &candidates) const;
    // Every lookup the question needs is missing from the tools the console offered.
    QStringList lookupsNotOffered(const QList<PlannedLookup> &lookups) const;
    // The question asks for a ticket, but the console offered no createTicket tool.
    QStringList ticketNotOffered() const;
    // The question asks for a ticket but names no order to file it for.
    QStringList askForTicketOrder() const;
    // The question asks for a ticket for `orderId` but says nothing of what it is about.
    QStringList askForTicketReason(const QString &orderId) const;

    // The text of the sentences, as the reply streams them: chunk i is what answer i adds.
    QStringList chunks(const QStringList &sentences) const;
    // An answer as the reply streams it. Up to three facts about one thing read as sentences;
    // more
    // become a Markdown list (#41 §4): a block's details under its first sentence, several
    // blocks a bullet each, the closing sentences a paragraph after the list.
    QStringList chunks(const Answer &answer) const;

private:
    bool chinese() const { return m_language == Language::Chinese; }
    QString text(const char *en, const char *zh) const;
    // A value in words in the answer's language: `key`'s Chinese sibling (chinesefields.h) in
    // a Chinese answer, the value itself in an English one; either falls back to the other.
    QString shown(const QJsonObject &object, const char *key) const;
    QString lookupName(const LookupOutcome &outcome) const;

    QStringList describeSuccess(const LookupOutcome &outcome) const;
    QStringList describeOrder(const QJsonObject &data, const QString &subject) const;
    QStringList describeLogistics(const QJsonObject &data, const QString &subject) const;
    QStringList describeInventory(const QJsonObject &data, const QString &subject) const;
    QString describeFailure(const LookupOutcome &outcome) const;
    QString describeInvalidArgument(const LookupOutcome &outcome) const;
    QStringList describeTicket(const LookupOutcome &outcome) const;
    QString describeTicketFailure(const LookupOutcome &outcome) const;
    QString categoryName(const QString &category) const;

    Language m_language;
};

} // namespace AgentConsole::Internal
