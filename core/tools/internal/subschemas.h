#pragma once

// Not part of the API: where a JSON Schema (draft 7, as the validator reads it) keeps the
// schemas inside it, in one table, for every walk over a schema (bounds, unsupported keywords,
// the per-call rewrite of patterns).

#include <QJsonObject>
#include <QJsonValue>
#include <QString>

#include <functional>

namespace AgentConsole::Internal {

// Calls `visit` for each schema directly inside `schema`, with the JSON pointer steps that lead
// to it from `schema` (e.g. "/properties/orderId", "/anyOf/1"), escaped as RFC 6901 asks.
// Values in a schema's place that are not objects (true, false, a list of names under
// "dependencies") are passed too; the visitor decides what they mean.
void forEachSubschema(
    const QJsonObject &schema,
    const std::function<void(const QString &steps, const QJsonValue &child)> &visit);

// `schema` with each schema directly inside it replaced by map(child); the rest unchanged.
QJsonObject mapSubschemas(const QJsonObject &schema,
                          const std::function<QJsonValue(const QJsonValue &child)> &map);

// One RFC 6901 reference token: "~" and "/" escaped.
QString pointerToken(const QString &key);

} // namespace AgentConsole::Internal
