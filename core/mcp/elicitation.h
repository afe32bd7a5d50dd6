#pragma once

#include <QDeadlineTimer>
#include <QJsonObject>
#include <QJsonValue>
#include <QList>
#include <QMetaType>
#include <QString>
#include <QStringList>

#include <optional>

namespace AgentConsole::Mcp {

// An MCP server's question to staff (elicitation/create, form mode, MCP 2025-11-25): the
// message and the form its requestedSchema describes, as plain values read and bounded here,
// so that the window and agent-cli build the form without reading JSON Schema. Everything in
// it came from a server that may not be trusted: shown as plain text, never as markup.
struct ElicitationField
{
    // The schema's flat primitive types: string, number, integer, boolean, and a string with
    // a closed list of values (enum, or oneOf of const/title pairs).
    enum class Type { Text, Number, Integer, Boolean, Choice };

    QString name; // the property's key: what the answer carries
    Type type = Type::Text;
    QString title; // the server's label; empty: show the name
    QString description;
    bool required = false;
    // The server's default (SEP-1034), already checked against the field; undefined when it
    // gave none or one that does not fit (such a default is dropped, not the question).
    QJsonValue defaultValue = QJsonValue(QJsonValue::Undefined);
    QStringList choices; // Choice: the values sent back
    QStringList choiceTitles; // Choice: what staff read, one for each value
    std::optional<double> minimum; // Number, Integer
    std::optional<double> maximum;
    int minLength = 0; // Text
    int maxLength = 0; // Text: at most ElicitationQuestion::maxTextLength
    QString format; // Text: "email", "uri", "date", "date-time" or empty

    QString label() const { return title.isEmpty() ? name : title; }
};

struct ElicitationQuestion
{
    // Bounds on what a server may ask (DESIGN.md, "Bounds"): a question over them is declined.
    static constexpr int maxFields = 32;
    static constexpr int maxMessageLength = 4000;
    static constexpr int maxLabelLength = 200; // a title, a choice's title
    static constexpr int maxDescriptionLength = 1000;
    static constexpr int maxChoices = 64;
    static constexpr int maxTextLength = 4000; // what staff may type in one field
    static constexpr int maxNameLength = 64; // a property's key

    QString server; // the mcp.json name of the server that asks
    QString message; // the server's question
    QList<ElicitationField> fields;
    // The tool call the question belongs to, when known: its operation id and title.
    QString operationId;
    QString toolTitle;
    // When the question is withdrawn at the latest if nobody answers: its call's hard maximum
    // or its caller's deadline (the turn's), whichever comes first, or the question's own
    // bound when it belongs to no call. Front ends show the time left.
    QDeadlineTimer answerBy{QDeadlineTimer::Forever};
};

// What staff did with a question (the answer's "action").
enum class ElicitationAction { Accept, Decline, Cancel };

QString elicitationActionName(ElicitationAction action); // "accept", "decline", "cancel"

// Why an answer does not fit its question, by field, in kinds the front ends word for staff.
struct ElicitationProblem
{
    enum class Kind {
        None,
        Missing,
        WrongType,
        NotAChoice,
        TooShort,
        TooLong,
        TooSmall,
        TooLarge,
        BadFormat,
        Unknown
    };
    Kind kind = Kind::None;
    QString field; // the property's key

    bool isProblem() const { return kind != Kind::None; }
};

// Reads elicitation/create's params. Null, with the reason for the log in `problem`, when the
// question cannot be asked safely: another mode than form (url), a schema outside the flat
// subset MCP allows, over a bound, or not an object.
std::optional<ElicitationQuestion> parseElicitation(const QJsonObject &params, QString *problem);

// The answer's content with each field staff left out filled from its default (SEP-1034:
// the client applies the defaults it shows); fields without one stay out.
QJsonObject withDefaults(const ElicitationQuestion &question, const QJsonObject &content);

// Whether `content` answers the question: each value of the field's type and within its
// bounds, every required field present, nothing the question did not ask.
ElicitationProblem checkAnswer(const ElicitationQuestion &question, const QJsonObject &content);

// One field's value from what staff typed (agent-cli, the window's text fields): null when
// the text is not of the field's type; an empty text is no value.
std::optional<QJsonValue> fieldValueFromText(const ElicitationField &field, const QString &text);

} // namespace AgentConsole::Mcp

Q_DECLARE_METATYPE(AgentConsole::Mcp::ElicitationQuestion)
