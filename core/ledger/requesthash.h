#pragma once

#include <QByteArray>
#include <QJsonObject>
#include <QJsonValue>

namespace AgentConsole {

// The canonical text of a JSON value: object keys sorted (by UTF-16 code units) at every
// depth, no whitespace, strings and numbers written exactly as QJsonDocument's compact form
// writes them. Two argument objects that differ only in key order or layout have one text.
QByteArray canonicalJson(const QJsonValue &value);

// The ledger's request_hash: lower-case hex SHA-256 of canonicalJson(arguments). Storing it
// with the idempotency key lets a reused key with different arguments be told apart from a
// genuine retry.
QByteArray requestHash(const QJsonObject &arguments);

} // namespace AgentConsole
