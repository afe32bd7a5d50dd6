#include "boundedschema.h"

#include "subschemas.h"

#include <QHash>
#include <QJsonArray>
#include <QSet>
#include <QUrl>

#include <re2/re2.h>

#include <algorithm>
#include <vector>

namespace AgentConsole::Internal {

// Every pattern of a schema compiled once with RE2; thread-safe (RE2's matching is const).
class LinearPatterns final
{
public:
    // Empty when compiled; else why not (for the reason the tool is refused).
    QString add(const QString &pattern)
    {
        if (m_index.contains(pattern))
            return {};
        RE2::Options options;
        options.set_log_errors(false);
        // RE2's own bound on a compiled pattern's memory (its default is 8 MiB): a pattern
        // that needs more ("(a{1000}){1000}") fails to compile and is refused.
        options.set_max_mem(kMaxPatternMemory);
        const QByteArray text = pattern.toUtf8();
        auto compiled = std::make_unique<RE2>(re2::StringPiece(text.constData(), text.size()),
                                              options);
        if (!compiled->ok())
            return QString::fromStdString(compiled->error()).left(120);
        m_index.insert(pattern, int(m_compiled.size()));
        m_compiled.push_back(std::move(compiled));
        return {};
    }

    // JSON Schema's "pattern" is a search, not a whole-string match.
    bool matches(const QString &pattern, const QByteArray &utf8) const
    {
        const int index = m_index.value(pattern, -1);
        Q_ASSERT(index >= 0);
        return RE2::PartialMatch(re2::StringPiece(utf8.constData(), utf8.size()),
                                 *m_compiled[std::size_t(index)]);
    }

    int size() const { return int(m_compiled.size()); }

private:
    static constexpr int64_t kMaxPatternMemory = 2 * 1024 * 1024;
    QHash<QString, int> m_index;
    std::vector<std::unique_ptr<RE2>> m_compiled;
};

namespace {

QString decodedToken(QString token)
{
    token.replace(QLatin1String("~1"), QLatin1String("/"));
    token.replace(QLatin1String("~0"), QLatin1String("~"));
    return token;
}

// The value a local reference ("#", "#/$defs/a") points at in `root`, and its canonical
// pointer; nullopt when it points nowhere.
std::optional<std::pair<QJsonValue, QString>> resolve(const QJsonObject &root,
                                                      const QString &reference)
{
    // A URI fragment: percent-encoded, then a JSON pointer.
    const QString pointer = QUrl::fromPercentEncoding(reference.mid(1).toUtf8());
    if (!pointer.isEmpty() && !pointer.startsWith(QLatin1Char('/')))
        return std::nullopt; // "#name" (a plain-name fragment) names an $id valijson ignores
    QJsonValue at = root;
    QString canonical;
    const QStringList tokens = pointer.split(QLatin1Char('/'));
    for (qsizetype i = 1; i < tokens.size(); ++i) {
        const QString token = decodedToken(tokens.at(i));
        if (at.isObject()) {
            const QJsonObject object = at.toObject();
            if (!object.contains(token))
                return std::nullopt;
            at = object.value(token);
        } else if (at.isArray()) {
            bool isIndex = false;
            const int index = token.toInt(&isIndex);
            if (!isIndex || index < 0 || index >= at.toArray().size())
                return std::nullopt;
            at = at.toArray().at(index);
        } else {
            return std::nullopt;
        }
        canonical += QLatin1Char('/') + pointerToken(token);
    }
    return std::make_pair(at, canonical);
}

// The walk that bounds a schema: each subschema visited once (by its pointer), its $refs
// followed, its size and height counted as if every $ref were written out in full.
class SchemaWalk
{
public:
    SchemaWalk(const QJsonObject &root, const SchemaLimits &limits, LinearPatterns *patterns)
        : m_root(root)
        , m_limits(limits)
        , m_patterns(patterns)
    {
    }

    QString problem() { return m_problem; }

    void run()
    {
        const Size size = visit(m_root, QString());
        if (!m_problem.isEmpty())
            return;
        if (size.height > m_limits.maxDepth)
            refuse(QStringLiteral("it is nested deeper than %1 levels").arg(m_limits.maxDepth));
        else if (size.count > m_limits.maxSubschemas)
            refuse(QStringLiteral("it has more than %1 schemas once its $refs are followed")
                       .arg(m_limits.maxSubschemas));
    }

private:
    struct Size
    {
        qint64 count = 0; // schemas, every $ref written out; capped just past the bound
        int height = 0; // levels below this one
    };

    void refuse(const QString &why)
    {
        if (m_problem.isEmpty())
            m_problem = why;
    }

    static QString where(const QString &pointer)
    {
        return pointer.isEmpty() ? QStringLiteral("#") : QLatin1Char('#') + pointer.left(120);
    }

    Size visit(const QJsonValue &node, const QString &pointer)
    {
        if (!m_problem.isEmpty())
            return {};
        if (node.isBool())
            return {1, 0};
        if (!node.isObject()) {
            refuse(QStringLiteral("%1 is not a schema").arg(where(pointer)));
            return {};
        }
        if (const auto known = m_sizes.constFind(pointer); known != m_sizes.constEnd())
            return known.value();
        if (m_onPath.contains(pointer)) {
            refuse(QStringLiteral("its $ref at %1 leads back to itself").arg(where(pointer)));
            return {};
        }
        // Deeper than the bound already: stop before the walk's own recursion gets deep.
        if (m_onPath.size() > m_limits.maxDepth) {
            refuse(QStringLiteral("it is nested deeper than %1 levels").arg(m_limits.maxDepth));
            return {};
        }
        m_onPath.insert(pointer);
        const QJsonObject schema = node.toObject();
        checkKeywords(schema, pointer);
        Size size{1, 0};
        const auto add = [this, &size](const Size &child) {
            size.count = std::min<qint64>(size.count + child.count, m_limits.maxSubschemas + 1);
            size.height = std::max(size.height, child.height + 1);
        };
        if (const QJsonValue reference = schema.value(QLatin1String("$ref"));
            !reference.isUndefined()) {
            add(followReference(reference, pointer));
        }
        forEachSubschema(schema, [&](const QString &steps, const QJsonValue &child) {
            if (steps.startsWith(QLatin1String("/dependencies/")) && child.isArray())
                return; // names of properties, not a schema
            add(visit(child, pointer + steps));
        });
        m_onPath.remove(pointer);
        if (size.count > m_limits.maxSubschemas)
            refuse(QStringLiteral("it has more than %1 schemas once its $refs are followed")
                       .arg(m_limits.maxSubschemas));
        m_sizes.insert(pointer, size);
        return size;
    }

    Size followReference(const QJsonValue &reference, const QString &pointer)
    {
        const QString target = reference.toString();
        if (!reference.isString() || !target.startsWith(QLatin1Char('#'))) {
            refuse(QStringLiteral("its $ref at %1 is not local").arg(where(pointer)));
            return {};
        }
        const auto resolved = resolve(m_root, target);
        if (!resolved) {
            refuse(QStringLiteral("its $ref at %1 points nowhere").arg(where(pointer)));
            return {};
        }
        // The rewrite of patternProperties (schemaForInstance) moves what is under it.
        if (resolved->second.contains(QLatin1String("/patternProperties/"))) {
            refuse(QStringLiteral("its $ref at %1 points into patternProperties")
                       .arg(where(pointer)));
            return {};
        }
        return visit(resolved->first, resolved->second);
    }

    void checkKeywords(const QJsonObject &schema, const QString &pointer)
    {
        if (const QJsonValue values = schema.value(QLatin1String("enum")); !values.isUndefined()) {
            if (!values.isArray())
                refuse(QStringLiteral("its enum at %1 is not a list").arg(where(pointer)));
            else if (values.toArray().size() > m_limits.maxEnumValues)
                refuse(QStringLiteral("its enum at %1 has more than %2 values")
                           .arg(where(pointer))
                           .arg(m_limits.maxEnumValues));
        }
        if (const QJsonValue pattern = schema.value(QLatin1String("pattern"));
            !pattern.isUndefined()) {
            if (!pattern.isString())
                refuse(QStringLiteral("its pattern at %1 is not a string").arg(where(pointer)));
            else
                addPattern(pattern.toString(), pointer);
        }
        if (const QJsonValue properties = schema.value(QLatin1String("patternProperties"));
            !properties.isUndefined()) {
            if (!properties.isObject()) {
                refuse(QStringLiteral("its patternProperties at %1 is not an object")
                           .arg(where(pointer)));
            }
            const QJsonObject byPattern = properties.toObject();
            for (auto it = byPattern.constBegin(); it != byPattern.constEnd(); ++it)
                addPattern(it.key(), pointer);
        }
    }

    void addPattern(const QString &pattern, const QString &pointer)
    {
        if (pattern.size() > m_limits.maxPatternLength) {
            refuse(QStringLiteral("a pattern at %1 is longer than %2 characters")
                       .arg(where(pointer))
                       .arg(m_limits.maxPatternLength));
            return;
        }
        if (const QString why = m_patterns->add(pattern); !why.isEmpty()) {
            refuse(QStringLiteral("a pattern at %1 cannot run in linear time (%2)")
                       .arg(where(pointer), why));
            return;
        }
        if (m_patterns->size() > m_limits.maxPatterns)
            refuse(QStringLiteral("it has more than %1 patterns").arg(m_limits.maxPatterns));
    }

    const QJsonObject &m_root;
    const SchemaLimits &m_limits;
    LinearPatterns *m_patterns;
    QString m_problem;
    QHash<QString, Size> m_sizes;
    QSet<QString> m_onPath;
};

// What valijson would act on although it asserts nothing here, removed from every schema.
QJsonValue withoutActingAnnotations(const QJsonValue &node)
{
    if (!node.isObject())
        return node;
    QJsonObject schema = node.toObject();
    schema.remove(QLatin1String("format"));
    schema.remove(QLatin1String("$id"));
    schema.remove(QLatin1String("$schema"));
    return mapSubschemas(schema, withoutActingAnnotations);
}

// The strings of one call's arguments that a pattern may be asked about: string values and
// property names; and the names alone (for patternProperties).
void collectStrings(const QJsonValue &value, QSet<QString> *strings, QSet<QString> *names)
{
    if (value.isString()) {
        strings->insert(value.toString());
    } else if (value.isArray()) {
        for (const QJsonValue &item : value.toArray())
            collectStrings(item, strings, names);
    } else if (value.isObject()) {
        const QJsonObject object = value.toObject();
        for (auto it = object.constBegin(); it != object.constEnd(); ++it) {
            strings->insert(it.key()); // "propertyNames" checks names against patterns too
            names->insert(it.key());
            collectStrings(it.value(), strings, names);
        }
    }
}

class InstanceRewrite
{
public:
    InstanceRewrite(const LinearPatterns &patterns, const QJsonValue &instance)
        : m_patterns(patterns)
    {
        QSet<QString> strings;
        QSet<QString> names;
        collectStrings(instance, &strings, &names);
        m_strings = QList<QString>(strings.cbegin(), strings.cend());
        std::sort(m_strings.begin(), m_strings.end()); // the same schema for the same call
        for (const QString &string : std::as_const(m_strings))
            m_utf8.append(string.toUtf8());
        m_names = QList<QString>(names.cbegin(), names.cend());
        std::sort(m_names.begin(), m_names.end());
    }

    QJsonValue rewrite(const QJsonValue &node) const
    {
        if (!node.isObject())
            return node;
        QJsonObject schema = mapSubschemas(node.toObject(), [this](const QJsonValue &child) {
            return rewrite(child);
        });
        QJsonArray conditions = schema.value(QLatin1String("allOf")).toArray();
        const qsizetype before = conditions.size();
        if (const QJsonValue pattern = schema.take(QLatin1String("pattern")); pattern.isString()) {
            if (const QJsonObject condition = patternCondition(pattern.toString());
                !condition.isEmpty()) {
                conditions.append(condition);
            }
        }
        if (const QJsonValue byPattern = schema.take(QLatin1String("patternProperties"));
            byPattern.isObject()) {
            // Each name of the instance that a pattern matches is given, as a property, the
            // schemas of every pattern it matches; and a name a pattern matches is never
            // "additional", so it is listed (as anything) among the properties.
            QJsonObject matched;
            QJsonObject properties = schema.value(QLatin1String("properties")).toObject();
            const QJsonObject patterns = byPattern.toObject();
            for (const QString &name : m_names) {
                const QByteArray utf8 = name.toUtf8();
                QJsonArray schemas;
                for (auto it = patterns.constBegin(); it != patterns.constEnd(); ++it) {
                    if (m_patterns.matches(it.key(), utf8))
                        schemas.append(it.value()); // rewritten above, with the other children
                }
                if (schemas.isEmpty())
                    continue;
                matched.insert(name,
                               schemas.size() == 1
                                   ? schemas.first()
                                   : QJsonObject{{QStringLiteral("allOf"), schemas}});
                if (!properties.contains(name))
                    properties.insert(name, QJsonObject());
            }
            if (!matched.isEmpty()) {
                schema.insert(QStringLiteral("properties"), properties);
                conditions.append(QJsonObject{{QStringLiteral("properties"), matched}});
            }
        }
        if (conditions.size() != before)
            schema.insert(QStringLiteral("allOf"), conditions);
        return schema;
    }

private:
    // "pattern" says: a string must match. For these arguments that is "a string is one of
    // those that match", or "is none of those that do not", whichever list is shorter; empty
    // when every string matches (nothing to say).
    QJsonObject patternCondition(const QString &pattern) const
    {
        QJsonArray matching;
        QJsonArray failing;
        for (qsizetype i = 0; i < m_strings.size(); ++i)
            (m_patterns.matches(pattern, m_utf8.at(i)) ? matching : failing)
                .append(m_strings.at(i));
        if (failing.isEmpty())
            return {};
        if (failing.size() <= matching.size())
            return {{QStringLiteral("not"), QJsonObject{{QStringLiteral("enum"), failing}}}};
        const QJsonObject notAString{
            {QStringLiteral("not"),
             QJsonObject{{QStringLiteral("type"), QStringLiteral("string")}}}};
        if (matching.isEmpty())
            return notAString;
        const QJsonObject oneOfThose{{QStringLiteral("enum"), matching}};
        return {{QStringLiteral("anyOf"), QJsonArray{notAString, oneOfThose}}};
    }

    const LinearPatterns &m_patterns;
    QList<QString> m_strings;
    QList<QByteArray> m_utf8;
    QList<QString> m_names;
};

} // namespace

// Whether `node` or a schema inside it has one of `keywords`.
bool hasKeyword(const QJsonValue &node, const QStringList &keywords)
{
    if (!node.isObject())
        return false;
    const QJsonObject schema = node.toObject();
    for (const QString &keyword : keywords) {
        if (schema.contains(keyword))
            return true;
    }
    bool found = false;
    forEachSubschema(schema, [&found, &keywords](const QString &, const QJsonValue &child) {
        found = found || hasKeyword(child, keywords);
    });
    return found;
}

// Takes each "pattern" out of the schemas of the root's properties. Not in a schema with a
// $ref anywhere: a $ref to "#/properties/x" would lose the pattern with it.
QList<PropertyPattern> liftPropertyPatterns(QJsonObject *root)
{
    if (hasKeyword(*root, {QStringLiteral("$ref")}))
        return {};
    QJsonObject properties = root->value(QLatin1String("properties")).toObject();
    QList<PropertyPattern> lifted;
    for (auto it = properties.begin(); it != properties.end(); ++it) {
        QJsonObject property = it.value().toObject();
        const QJsonValue pattern = property.take(QLatin1String("pattern"));
        if (!pattern.isString())
            continue;
        lifted.append({it.key(), pattern.toString()});
        it.value() = property;
    }
    if (!lifted.isEmpty())
        root->insert(QLatin1String("properties"), properties);
    return lifted;
}

BoundedSchema boundSchema(const QJsonObject &schema, const SchemaLimits &limits)
{
    BoundedSchema bounded;
    auto patterns = std::make_shared<LinearPatterns>();
    SchemaWalk walk(schema, limits, patterns.get());
    walk.run();
    bounded.problem = walk.problem();
    if (!bounded.problem.isEmpty())
        return bounded;
    bounded.schema = withoutActingAnnotations(schema).toObject();
    if (patterns->size() == 0)
        return bounded;
    bounded.propertyPatterns = liftPropertyPatterns(&bounded.schema);
    bounded.rewrittenPerCall = hasKeyword(
        bounded.schema, {QStringLiteral("pattern"), QStringLiteral("patternProperties")});
    bounded.patterns = std::move(patterns);
    return bounded;
}

QStringList propertiesFailingPatterns(const BoundedSchema &bounded, const QJsonObject &arguments)
{
    QStringList failing;
    for (const PropertyPattern &lifted : bounded.propertyPatterns) {
        const QJsonValue value = arguments.value(lifted.property);
        if (value.isString()
            && !bounded.patterns->matches(lifted.pattern, value.toString().toUtf8())
            && !failing.contains(lifted.property))
            failing.append(lifted.property);
    }
    return failing;
}

QJsonObject schemaForInstance(const BoundedSchema &bounded, const QJsonValue &instance)
{
    Q_ASSERT(bounded.patterns);
    return InstanceRewrite(*bounded.patterns, instance).rewrite(bounded.schema).toObject();
}

} // namespace AgentConsole::Internal
