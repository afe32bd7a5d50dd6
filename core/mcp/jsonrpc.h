#pragma once

#include "mcperror.h"

#include <QByteArray>
#include <QByteArrayView>
#include <QJsonObject>
#include <QJsonValue>
#include <QList>
#include <QString>

namespace AgentConsole::Mcp {

// One JSON-RPC 2.0 message (MCP's wire unit), as read from or written to a transport.
struct JsonRpcMessage
{
    enum class Kind { Request, Notification, Result, Error };

    Kind kind = Kind::Notification;
    QJsonValue id; // requests and responses: an integer or a string
    QString method; // requests and notifications
    QJsonObject params; // requests and notifications (absent params read as {})
    QJsonValue result; // results
    int errorCode = 0; // errors
    QString errorMessage;
    QJsonValue errorData;

    bool isResponse() const { return kind == Kind::Result || kind == Kind::Error; }
    QJsonObject toJson() const;
    QByteArray toBytes() const; // compact JSON, no newline

    static JsonRpcMessage request(qint64 id, const QString &method, const QJsonObject &params);
    static JsonRpcMessage notification(const QString &method, const QJsonObject &params = {});
    static JsonRpcMessage resultFor(const QJsonValue &id, const QJsonValue &result);
    static JsonRpcMessage errorFor(const QJsonValue &id, int code, const QString &message);
};

// What one transport frame (a stdio line, an HTTP body, an SSE event's data) held: one
// message, or a batch (an array, which older servers may send). Anything that is not JSON-RPC
// 2.0 ends in `error` (Malformed or Oversized) and yields no messages: a frame is taken whole
// or not at all.
struct ParsedFrame
{
    QList<JsonRpcMessage> messages;
    Error error;
};

struct FrameLimits
{
    qsizetype maxBytes = 4 * 1024 * 1024; // one message; DESIGN.md "Bounds"
    int maxDepth = 64; // nesting of arrays and objects, measured before parsing
    int maxBatch = 64; // messages in one array
    int maxMethodLength = 256;
    int maxIdLength = 256; // a string id
};

ParsedFrame parseFrame(QByteArrayView bytes, const FrameLimits &limits = {});
// One JSON object already parsed (used by parseFrame for each element).
JsonRpcMessage parseMessage(const QJsonObject &object, const FrameLimits &limits, Error *error);

} // namespace AgentConsole::Mcp
