#pragma once

// Not part of the API: how ArgumentSchema makes a schema from outside safe for the validator
// (valijson 1.0). Two things in valijson can crash or freeze the thread that uses it, and both
// are kept from it here:
//  - a $ref cycle ("$ref": "#") recurses without end while the schema is read;
//  - "pattern" and "patternProperties" run through std::regex, which backtracks
//    (catastrophically on "^(a+)+$") and recurses once per character (a stack overflow on a
//    20,000-character string); valijson 1.0 takes no other engine.
// So a schema is walked once, bounded (depth and size through every $ref, enum lengths,
// patterns), its $refs checked to be local and acyclic, and its patterns compiled with RE2,
// which matches in time linear in the text and refuses what it cannot run so (backreferences,
// lookaround). The validator never sees a pattern. The common one, a "pattern" in the schema of
// one of the root's properties, only says "this property, when a string, matches": it is lifted
// out and checked on its own, and the rest of the schema is read once for all calls. Any other
// pattern (under "not", "anyOf", "items", a $ref...) changes the meaning of what is around it:
// for each call the schema is rewritten for the arguments at hand, every pattern replaced by
// the list of the arguments' strings it does or does not match (computed with RE2), which
// says the same thing for these arguments.

#include "../argumentschema.h"

#include <QJsonObject>
#include <QJsonValue>
#include <QList>
#include <QString>
#include <QStringList>

#include <memory>

namespace AgentConsole::Internal {

class LinearPatterns;

// A "pattern" lifted out of the schema of the root's property `property`.
struct PropertyPattern
{
    QString property;
    QString pattern;
};

struct BoundedSchema
{
    QString problem; // why the schema is refused; empty when it is usable
    // The schema as the validator reads it: annotations that valijson would act on removed
    // ("format": its date checks use std::regex too; "$id" and "$schema"), and the
    // propertyPatterns lifted out.
    QJsonObject schema;
    // Every pattern of the schema, compiled; null when it has none.
    std::shared_ptr<const LinearPatterns> patterns;
    // Checked on their own, beside the validator.
    QList<PropertyPattern> propertyPatterns;
    // `schema` still holds patterns: it is rewritten for each call (schemaForInstance).
    bool rewrittenPerCall = false;
};

BoundedSchema boundSchema(const QJsonObject &schema, const SchemaLimits &limits);

// `bounded.schema` rewritten for `instance`: each "pattern" becomes a list of the instance's
// strings, and each "patternProperties" the properties of the instance's names it matches.
// Only for a schema rewritten per call.
QJsonObject schemaForInstance(const BoundedSchema &bounded, const QJsonValue &instance);

// The root properties of `arguments` that break a lifted pattern (a string it does not match).
QStringList propertiesFailingPatterns(const BoundedSchema &bounded, const QJsonObject &arguments);

} // namespace AgentConsole::Internal
