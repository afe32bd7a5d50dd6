#include "requesthash.h"

#include <QCryptographicHash>
#include <QJsonArray>
#include <QJsonDocument>

#include <algorithm>

namespace AgentConsole {

namespace {

// A scalar as QJsonDocument writes it. Wrapping it in an array is the one public way to get
// Qt's own escaping and number formatting, which "numbers as JSON writes them" means here.
QByteArray scalarText(const QJsonValue &value)
{
    const QByteArray wrapped = QJsonDocument(QJsonArray{value}).toJson(QJsonDocument::Compact);
    return wrapped.mid(1, wrapped.size() - 2);
}

void append(QByteArray &out, const QJsonValue &value)
{
    if (value.isObject()) {
        const QJsonObject object = value.toObject();
        QStringList keys = object.keys();
        // QString's operator< compares UTF-16 code units, the order RFC 8785 uses; sorting
        // here keeps the text independent of QJsonObject's internal order.
        std::sort(keys.begin(), keys.end());
        out += '{';
        for (qsizetype i = 0; i < keys.size(); ++i) {
            if (i > 0)
                out += ',';
            out += scalarText(QJsonValue(keys.at(i)));
            out += ':';
            append(out, object.value(keys.at(i)));
        }
        out += '}';
    } else if (value.isArray()) {
        const QJsonArray array = value.toArray();
        out += '[';
        for (qsizetype i = 0; i < array.size(); ++i) {
            if (i > 0)
                out += ',';
            append(out, array.at(i));
        }
        out += ']';
    } else {
        out += scalarText(value);
    }
}

} // namespace

QByteArray canonicalJson(const QJsonValue &value)
{
    QByteArray out;
    append(out, value);
    return out;
}

QByteArray requestHash(const QJsonObject &arguments)
{
    return QCryptographicHash::hash(canonicalJson(arguments), QCryptographicHash::Sha256).toHex();
}

} // namespace AgentConsole
