#include "elicitation.h"

#include <QDate>
#include <QDateTime>
#include <QJsonArray>
#include <QRegularExpression>
#include <QSet>
#include <QUrl>

#include <cmath>

namespace AgentConsole::Mcp {

namespace {

using Question = ElicitationQuestion;
using Field = ElicitationField;

QString cut(const QString &text, int limit)
{
    return text.size() <= limit ? text : text.left(limit - 1) + QStringLiteral("…");
}

bool isIntegral(double value)
{
    return std::isfinite(value) && std::floor(value) == value && std::fabs(value) < 9.0e15;
}

bool fitsFormat(const QString &format, const QString &text)
{
    if (format == QLatin1String("email")) {
        static const QRegularExpression email(QStringLiteral("^[^@\\s]+@[^@\\s]+\\.[^@\\s]+$"));
        return email.match(text).hasMatch();
    }
    if (format == QLatin1String("uri")) {
        const QUrl url(text, QUrl::StrictMode);
        return url.isValid() && !url.scheme().isEmpty();
    }
    if (format == QLatin1String("date"))
        return QDate::fromString(text, Qt::ISODate).isValid();
    if (format == QLatin1String("date-time"))
        return QDateTime::fromString(text, Qt::ISODate).isValid();
    return true;
}

// The problem of one value for its field; Kind::None when it fits.
ElicitationProblem::Kind checkValue(const Field &field, const QJsonValue &value)
{
    using Kind = ElicitationProblem::Kind;
    switch (field.type) {
    case Field::Type::Text: {
        if (!value.isString())
            return Kind::WrongType;
        const QString text = value.toString();
        if (text.size() < field.minLength)
            return Kind::TooShort;
        if (text.size() > field.maxLength)
            return Kind::TooLong;
        return fitsFormat(field.format, text) ? Kind::None : Kind::BadFormat;
    }
    case Field::Type::Number:
    case Field::Type::Integer: {
        if (!value.isDouble() || !std::isfinite(value.toDouble()))
            return Kind::WrongType;
        const double number = value.toDouble();
        if (field.type == Field::Type::Integer && !isIntegral(number))
            return Kind::WrongType;
        if (field.minimum && number < *field.minimum)
            return Kind::TooSmall;
        if (field.maximum && number > *field.maximum)
            return Kind::TooLarge;
        return Kind::None;
    }
    case Field::Type::Boolean:
        return value.isBool() ? Kind::None : Kind::WrongType;
    case Field::Type::Choice:
        if (!value.isString())
            return Kind::WrongType;
        return field.choices.contains(value.toString()) ? Kind::None : Kind::NotAChoice;
    }
    return Kind::WrongType;
}

std::optional<double> numberOf(const QJsonObject &schema, const char *key)
{
    const QJsonValue value = schema.value(QLatin1String(key));
    if (value.isDouble() && std::isfinite(value.toDouble()))
        return value.toDouble();
    return std::nullopt;
}

// One property of requestedSchema as a field; false with the reason when it is outside the
// flat subset MCP allows (nested objects, arrays, other types) or over a bound.
bool readField(const QString &name, const QJsonObject &schema, Field *field, QString *problem)
{
    field->name = name;
    field->title = cut(schema.value(QStringLiteral("title")).toString(), Question::maxLabelLength);
    field->description = cut(schema.value(QStringLiteral("description")).toString(),
                             Question::maxDescriptionLength);
    const QString type = schema.value(QStringLiteral("type")).toString();
    if (type == QLatin1String("string")) {
        const QJsonValue values = schema.value(QStringLiteral("enum"));
        const QJsonValue titled = schema.value(QStringLiteral("oneOf"));
        if (values.isArray() || titled.isArray()) {
            field->type = Field::Type::Choice;
            const QJsonArray list = values.isArray() ? values.toArray() : titled.toArray();
            if (list.isEmpty() || list.size() > Question::maxChoices) {
                *problem = QStringLiteral("field %1 has %2 choices").arg(name).arg(list.size());
                return false;
            }
            const QJsonArray names = schema.value(QStringLiteral("enumNames")).toArray();
            for (qsizetype i = 0; i < list.size(); ++i) {
                const QJsonValue entry = list.at(i);
                const QJsonValue value = values.isArray()
                    ? entry
                    : entry.toObject().value(QStringLiteral("const"));
                if (!value.isString() || value.toString().size() > Question::maxTextLength) {
                    *problem = QStringLiteral("field %1 has a choice that is not a string")
                                   .arg(name);
                    return false;
                }
                QString title = values.isArray()
                    ? (names.size() == list.size() ? names.at(i).toString() : QString())
                    : entry.toObject().value(QStringLiteral("title")).toString();
                if (title.isEmpty())
                    title = value.toString();
                field->choices.append(value.toString());
                field->choiceTitles.append(cut(title, Question::maxLabelLength));
            }
        } else {
            field->type = Field::Type::Text;
            field->minLength = std::clamp(schema.value(QStringLiteral("minLength")).toInt(0), 0,
                                          Question::maxTextLength);
            const int maxLength = schema.value(QStringLiteral("maxLength"))
                                      .toInt(Question::maxTextLength);
            field->maxLength = std::clamp(maxLength, field->minLength, Question::maxTextLength);
            const QString format = schema.value(QStringLiteral("format")).toString();
            static const QSet<QString> known{QStringLiteral("email"), QStringLiteral("uri"),
                                             QStringLiteral("date"), QStringLiteral("date-time")};
            if (known.contains(format))
                field->format = format;
        }
    } else if (type == QLatin1String("number") || type == QLatin1String("integer")) {
        field->type = type == QLatin1String("number") ? Field::Type::Number : Field::Type::Integer;
        field->minimum = numberOf(schema, "minimum");
        field->maximum = numberOf(schema, "maximum");
        if (field->minimum && field->maximum && *field->minimum > *field->maximum) {
            *problem = QStringLiteral("field %1 has its minimum above its maximum").arg(name);
            return false;
        }
    } else if (type == QLatin1String("boolean")) {
        field->type = Field::Type::Boolean;
    } else {
        // Multi-select (array) and anything nested are not asked: declined.
        *problem = QStringLiteral("field %1 has type \"%2\", which this client does not ask")
                       .arg(name, type.left(32));
        return false;
    }
    const QJsonValue value = schema.value(QStringLiteral("default"));
    // A default that does not fit its own field is the server's mistake: dropped, so staff
    // are never shown (or sent) a value the server itself would refuse.
    if (!value.isUndefined() && checkValue(*field, value) == ElicitationProblem::Kind::None)
        field->defaultValue = value;
    return true;
}

} // namespace

QString elicitationActionName(ElicitationAction action)
{
    switch (action) {
    case ElicitationAction::Accept:
        return QStringLiteral("accept");
    case ElicitationAction::Decline:
        return QStringLiteral("decline");
    case ElicitationAction::Cancel:
        break;
    }
    return QStringLiteral("cancel");
}

std::optional<ElicitationQuestion> parseElicitation(const QJsonObject &params, QString *problem)
{
    const QJsonValue mode = params.value(QStringLiteral("mode"));
    if (!mode.isUndefined() && mode.toString() != QLatin1String("form")) {
        *problem = QStringLiteral("mode \"%1\" is not asked (form only)")
                       .arg(mode.toString().left(32));
        return std::nullopt;
    }
    const QJsonValue message = params.value(QStringLiteral("message"));
    if (!message.isString()) {
        *problem = QStringLiteral("no message");
        return std::nullopt;
    }
    const QJsonValue schemaValue = params.value(QStringLiteral("requestedSchema"));
    const QJsonObject schema = schemaValue.toObject();
    const QJsonValue schemaType = schema.value(QStringLiteral("type"));
    if (!schemaValue.isObject()
        || (!schemaType.isUndefined() && schemaType != QLatin1String("object"))) {
        *problem = QStringLiteral("requestedSchema is not an object schema");
        return std::nullopt;
    }
    const QJsonValue propertiesValue = schema.value(QStringLiteral("properties"));
    if (!propertiesValue.isUndefined() && !propertiesValue.isObject()) {
        *problem = QStringLiteral("requestedSchema's properties is not an object");
        return std::nullopt;
    }
    const QJsonObject properties = propertiesValue.toObject();
    if (properties.size() > Question::maxFields) {
        *problem = QStringLiteral("%1 fields (at most %2)")
                       .arg(properties.size())
                       .arg(Question::maxFields);
        return std::nullopt;
    }
    ElicitationQuestion question;
    question.message = cut(message.toString(), Question::maxMessageLength);
    // The schema's own order is lost in a QJsonObject (keys sorted); the server's key order
    // cannot be recovered from Qt's JSON, so the form follows the sorted keys.
    for (auto it = properties.constBegin(); it != properties.constEnd(); ++it) {
        if (it.key().isEmpty() || it.key().size() > Question::maxNameLength
            || !it.value().isObject()) {
            *problem = QStringLiteral("a field's name or schema is not usable");
            return std::nullopt;
        }
        Field field;
        if (!readField(it.key(), it.value().toObject(), &field, problem))
            return std::nullopt;
        question.fields.append(field);
    }
    const QJsonValue required = schema.value(QStringLiteral("required"));
    if (!required.isUndefined() && !required.isArray()) {
        *problem = QStringLiteral("required is not a list");
        return std::nullopt;
    }
    for (const QJsonValue &name : required.toArray()) {
        auto field = std::find_if(question.fields.begin(), question.fields.end(),
                                  [&](const Field &f) { return f.name == name.toString(); });
        if (!name.isString() || field == question.fields.end()) {
            *problem = QStringLiteral("a required field is not in the schema");
            return std::nullopt;
        }
        field->required = true;
    }
    return question;
}

QJsonObject withDefaults(const ElicitationQuestion &question, const QJsonObject &content)
{
    QJsonObject filled = content;
    for (const Field &field : question.fields) {
        if (!filled.contains(field.name) && !field.defaultValue.isUndefined())
            filled.insert(field.name, field.defaultValue);
    }
    return filled;
}

ElicitationProblem checkAnswer(const ElicitationQuestion &question, const QJsonObject &content)
{
    for (auto it = content.constBegin(); it != content.constEnd(); ++it) {
        const auto field = std::find_if(question.fields.cbegin(), question.fields.cend(),
                                        [&](const Field &f) { return f.name == it.key(); });
        if (field == question.fields.cend())
            return {ElicitationProblem::Kind::Unknown, it.key().left(Question::maxNameLength)};
        const ElicitationProblem::Kind kind = checkValue(*field, it.value());
        if (kind != ElicitationProblem::Kind::None)
            return {kind, field->name};
    }
    for (const Field &field : question.fields) {
        if (field.required && !content.contains(field.name))
            return {ElicitationProblem::Kind::Missing, field.name};
    }
    return {};
}

std::optional<QJsonValue> fieldValueFromText(const ElicitationField &field, const QString &text)
{
    const QString trimmed = text.trimmed();
    if (field.type != Field::Type::Text && trimmed.isEmpty())
        return QJsonValue(QJsonValue::Undefined);
    switch (field.type) {
    case Field::Type::Text:
        if (text.isEmpty())
            return QJsonValue(QJsonValue::Undefined);
        return QJsonValue(text);
    case Field::Type::Number:
    case Field::Type::Integer: {
        bool ok = false;
        const double number = trimmed.toDouble(&ok);
        if (!ok || !std::isfinite(number)
            || (field.type == Field::Type::Integer && !isIntegral(number)))
            return std::nullopt;
        return QJsonValue(number);
    }
    case Field::Type::Boolean: {
        const QString word = trimmed.toLower();
        if (word == QLatin1String("y") || word == QLatin1String("yes")
            || word == QLatin1String("true"))
            return QJsonValue(true);
        if (word == QLatin1String("n") || word == QLatin1String("no")
            || word == QLatin1String("false"))
            return QJsonValue(false);
        return std::nullopt;
    }
    case Field::Type::Choice: {
        // A choice is typed as its value, its title, or its number in the list (1-based).
        bool ok = false;
        const int number = trimmed.toInt(&ok);
        if (ok && number >= 1 && number <= field.choices.size())
            return QJsonValue(field.choices.at(number - 1));
        for (qsizetype i = 0; i < field.choices.size(); ++i) {
            if (field.choices.at(i) == trimmed
                || field.choiceTitles.value(i).compare(trimmed, Qt::CaseInsensitive) == 0)
                return QJsonValue(field.choices.at(i));
        }
        return std::nullopt;
    }
    }
    return std::nullopt;
}

} // namespace AgentConsole::Mcp
