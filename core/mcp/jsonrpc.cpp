#include "jsonrpc.h"

#include "../tools/argumentschema.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonParseError>

#include <cmath>

namespace AgentConsole::Mcp {

namespace {

const QString kJsonRpc = QStringLiteral("jsonrpc");
const QString kId = QStringLiteral("id");
const QString kMethod = QStringLiteral("method");
const QString kParams = QStringLiteral("params");
const QString kResult = QStringLiteral("result");
const QString kError = QStringLiteral("error");

// An id is an integer (a double without a fraction, as QJsonValue holds numbers) or a bounded
// string; null ids only appear on errors about a request that could not be read.
bool validId(const QJsonValue &id, const FrameLimits &limits)
{
    if (id.isString())
        return id.toString().size() <= limits.maxIdLength;
    if (id.isDouble()) {
        const double value = id.toDouble();
        return std::isfinite(value) && value == std::floor(value) && std::abs(value) < 9.0e15;
    }
    return false;
}

} // namespace

QJsonObject JsonRpcMessage::toJson() const
{
    QJsonObject json{{kJsonRpc, QStringLiteral("2.0")}};
    switch (kind) {
    case Kind::Request:
        json.insert(kId, id);
        json.insert(kMethod, method);
        json.insert(kParams, params);
        break;
    case Kind::Notification:
        json.insert(kMethod, method);
        if (!params.isEmpty())
            json.insert(kParams, params);
        break;
    case Kind::Result:
        json.insert(kId, id);
        json.insert(kResult, result);
        break;
    case Kind::Error: {
        QJsonObject error{{QStringLiteral("code"), errorCode},
                          {QStringLiteral("message"), errorMessage}};
        if (!errorData.isUndefined())
            error.insert(QStringLiteral("data"), errorData);
        json.insert(kId, id);
        json.insert(kError, error);
        break;
    }
    }
    return json;
}

QByteArray JsonRpcMessage::toBytes() const
{
    return QJsonDocument(toJson()).toJson(QJsonDocument::Compact);
}

JsonRpcMessage JsonRpcMessage::request(qint64 id, const QString &method, const QJsonObject &params)
{
    JsonRpcMessage message;
    message.kind = Kind::Request;
    message.id = QJsonValue(double(id));
    message.method = method;
    message.params = params;
    return message;
}

JsonRpcMessage JsonRpcMessage::notification(const QString &method, const QJsonObject &params)
{
    JsonRpcMessage message;
    message.kind = Kind::Notification;
    message.method = method;
    message.params = params;
    return message;
}

JsonRpcMessage JsonRpcMessage::resultFor(const QJsonValue &id, const QJsonValue &result)
{
    JsonRpcMessage message;
    message.kind = Kind::Result;
    message.id = id;
    message.result = result;
    return message;
}

JsonRpcMessage JsonRpcMessage::errorFor(const QJsonValue &id, int code, const QString &text)
{
    JsonRpcMessage message;
    message.kind = Kind::Error;
    message.id = id;
    message.errorCode = code;
    message.errorMessage = text;
    return message;
}

JsonRpcMessage parseMessage(const QJsonObject &object, const FrameLimits &limits, Error *error)
{
    JsonRpcMessage message;
    const auto malformed = [error](const char *why) {
        *error = Error::of(Failure::Malformed, QString::fromLatin1(why));
    };
    if (object.value(kJsonRpc).toString() != QLatin1String("2.0")) {
        malformed("not JSON-RPC 2.0 (the jsonrpc member is not \"2.0\")");
        return message;
    }
    const QJsonValue id = object.value(kId);
    const QJsonValue method = object.value(kMethod);
    if (!method.isUndefined()) {
        if (!method.isString() || method.toString().isEmpty()
            || method.toString().size() > limits.maxMethodLength) {
            malformed("a method that is not a short string");
            return message;
        }
        const QJsonValue params = object.value(kParams);
        if (!params.isUndefined() && !params.isObject() && !params.isNull()) {
            malformed("params that are not an object");
            return message;
        }
        message.method = method.toString();
        message.params = params.toObject();
        if (id.isUndefined()) {
            message.kind = JsonRpcMessage::Kind::Notification;
        } else if (validId(id, limits)) {
            message.kind = JsonRpcMessage::Kind::Request;
            message.id = id;
        } else {
            malformed("a request whose id is neither an integer nor a short string");
        }
        return message;
    }
    const bool hasResult = object.contains(kResult);
    const bool hasError = object.contains(kError);
    if (hasResult == hasError) {
        malformed("neither a request nor a response (result and error both or neither)");
        return message;
    }
    if (hasResult) {
        if (!validId(id, limits)) {
            malformed("a result without a valid id");
            return message;
        }
        message.kind = JsonRpcMessage::Kind::Result;
        message.id = id;
        message.result = object.value(kResult);
        return message;
    }
    const QJsonObject errorObject = object.value(kError).toObject();
    const QJsonValue code = errorObject.value(QStringLiteral("code"));
    if (!code.isDouble() || code.toDouble() != std::floor(code.toDouble())
        || !errorObject.value(QStringLiteral("message")).isString()
        || !(id.isNull() || validId(id, limits))) {
        malformed("an error object without an integer code, a message string or a valid id");
        return message;
    }
    message.kind = JsonRpcMessage::Kind::Error;
    message.id = id;
    message.errorCode = code.toInt();
    message.errorMessage = errorObject.value(QStringLiteral("message")).toString().left(1024);
    message.errorData = errorObject.value(QStringLiteral("data"));
    return message;
}

ParsedFrame parseFrame(QByteArrayView bytes, const FrameLimits &limits)
{
    ParsedFrame frame;
    if (bytes.size() > limits.maxBytes) {
        frame.error = Error::of(Failure::Oversized,
                                QStringLiteral("a message of %1 bytes (the bound is %2)")
                                    .arg(bytes.size())
                                    .arg(limits.maxBytes));
        return frame;
    }
    // Measured on the text: a hostile document nested a million deep is never built.
    if (jsonNestingDepth(bytes) > limits.maxDepth) {
        frame.error = Error::of(
            Failure::Oversized,
            QStringLiteral("a message nested deeper than %1 levels").arg(limits.maxDepth));
        return frame;
    }
    QJsonParseError parseError;
    const QJsonDocument document = QJsonDocument::fromJson(
        QByteArray::fromRawData(bytes.data(), bytes.size()), &parseError);
    if (parseError.error != QJsonParseError::NoError) {
        frame.error = Error::of(Failure::Malformed,
                                QStringLiteral("not JSON: %1 at offset %2")
                                    .arg(parseError.errorString())
                                    .arg(parseError.offset),
                                JsonRpcCode::ParseError);
        return frame;
    }
    QList<QJsonObject> objects;
    if (document.isObject()) {
        objects.append(document.object());
    } else {
        const QJsonArray array = document.array();
        if (array.isEmpty() || array.size() > limits.maxBatch) {
            frame.error = Error::of(Failure::Malformed,
                                    QStringLiteral("a batch of %1 messages").arg(array.size()));
            return frame;
        }
        for (const QJsonValue &element : array) {
            if (!element.isObject()) {
                frame.error = Error::of(Failure::Malformed,
                                        QStringLiteral("a batch element that is not an object"));
                return frame;
            }
            objects.append(element.toObject());
        }
    }
    for (const QJsonObject &object : objects) {
        JsonRpcMessage message = parseMessage(object, limits, &frame.error);
        if (frame.error.isError()) {
            frame.messages.clear();
            return frame;
        }
        frame.messages.append(std::move(message));
    }
    return frame;
}

} // namespace AgentConsole::Mcp
