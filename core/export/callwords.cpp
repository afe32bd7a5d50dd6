#include "callwords.h"

#include "../turn/turnresult.h"

#include <QCoreApplication>
#include <QJsonArray>
#include <QJsonDocument>
#include <QStringList>

namespace AgentConsole::CallWords {
namespace {

constexpr int kMaxSubjectLength = 24;

QString toolLabel(const QString &text)
{
    return QCoreApplication::translate(ToolLabels::TranslationContext, text.toUtf8().constData());
}

} // namespace

QString value(const QJsonValue &value)
{
    switch (value.type()) {
    case QJsonValue::String:
        return value.toString();
    case QJsonValue::Double:
        return QString::number(value.toDouble(), 'g', 15);
    case QJsonValue::Bool:
        return value.toBool() ? QStringLiteral("true") : QStringLiteral("false");
    case QJsonValue::Null:
        return QStringLiteral("null");
    case QJsonValue::Array:
        return QString::fromUtf8(QJsonDocument(value.toArray()).toJson(QJsonDocument::Compact));
    case QJsonValue::Object:
        return QString::fromUtf8(QJsonDocument(value.toObject()).toJson(QJsonDocument::Compact));
    case QJsonValue::Undefined:
        break;
    }
    return {};
}

QString valueLabel(const ToolLabels::Argument &field, const QJsonValue &value)
{
    const QString exact = CallWords::value(value);
    for (const ToolLabels::Value &known : field.values) {
        if (known.value == exact)
            return toolLabel(known.label);
    }
    return exact;
}

QString title(const ToolCallRecord &call)
{
    return call.labels.title.isEmpty() ? call.name : toolLabel(call.labels.title);
}

QString subject(const ToolCallRecord &call)
{
    QStringList values;
    for (const ToolLabels::Argument &argument : call.labels.arguments) {
        const QJsonValue value = call.arguments.value(argument.key);
        if (value.isString() && argument.values.isEmpty() && !value.toString().isEmpty()
            && value.toString().size() <= kMaxSubjectLength)
            values.append(value.toString());
    }
    return values.join(QStringLiteral(", "));
}

QString titleWithSubject(const ToolCallRecord &call)
{
    const QString about = subject(call);
    if (about.isEmpty())
        return title(call);
    return QCoreApplication::translate("AgentConsole::ToolCallText", "%1 (%2)")
        .arg(title(call), about);
}

QString finding(const ToolCallRecord &call, bool chinese)
{
    if (call.state != ToolCallRecord::State::Finished || !call.result.success
        || call.labels.finding.isEmpty() || !call.result.data.isObject())
        return {};
    const QJsonObject data = call.result.data.toObject();
    const auto valueOf = [&](const QString &key, bool count) -> QString {
        const QJsonValue value = data.value(key);
        if (count)
            return value.isArray() ? QString::number(value.toArray().size()) : QString();
        for (const ToolLabels::Argument &field : call.labels.resultValues) {
            if (field.key == key)
                return valueLabel(field, value);
        }
        // The backend's own words in Chinese where it gave both.
        const QJsonValue translated = data.value(key + QStringLiteral("Zh"));
        if (chinese && translated.isString() && !translated.toString().isEmpty())
            return translated.toString();
        return CallWords::value(value);
    };
    // The template is the tool's own, a few fields long: read by hand, no pattern needed.
    const QString pattern = toolLabel(call.labels.finding);
    QString text;
    for (qsizetype i = 0; i < pattern.size(); ++i) {
        const qsizetype close = pattern.at(i) == u'{' ? pattern.indexOf(u'}', i) : -1;
        if (close < 0) {
            text += pattern.at(i);
            continue;
        }
        QString key = pattern.mid(i + 1, close - i - 1);
        const bool count = key.endsWith(u'#');
        if (count)
            key.chop(1);
        const QString value = valueOf(key, count);
        text += value.isEmpty() ? QStringLiteral("—") : value;
        i = close;
    }
    return text.simplified();
}

QString createdId(const ToolCallRecord &call)
{
    if (call.state != ToolCallRecord::State::Finished || !call.result.success
        || call.labels.created.key.isEmpty() || !call.result.data.isObject())
        return {};
    const QJsonValue id = call.result.data.toObject().value(call.labels.created.key);
    return id.isString() ? id.toString() : QString();
}

} // namespace AgentConsole::CallWords
