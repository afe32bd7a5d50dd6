#include "faultplan.h"

#include "../telemetry/logging.h"
#include "boundedfile.h"
#include "seededdraw.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QStringList>

namespace AgentConsole {
namespace {

bool readTool(const QString &name, const QJsonObject &json, ToolFault &fault, QString *error,
              const std::optional<KnownTools> &tools)
{
    const auto fail = [&](const QString &key, const QString &what) {
        if (error)
            *error = QStringLiteral("fault plan: tools.%1.%2: %3").arg(name, key, what);
        return false;
    };
    for (auto it = json.begin(); it != json.end(); ++it) {
        const QString key = it.key();
        const QJsonValue value = it.value();
        if (key == QLatin1String("latencyMs") || key == QLatin1String("transientFailures")) {
            if (!value.isDouble() || value.toDouble() < 0 || value.toDouble() > 3'600'000
                || value.toDouble() != double(qint64(value.toDouble())))
                return fail(key, QStringLiteral("expected a whole number from 0 to 3600000"));
            (key == QLatin1String("latencyMs") ? fault.latencyMs : fault.transientFailures)
                = value.toInt();
        } else if (key == QLatin1String("hang") || key == QLatin1String("permanentFailure")
                   || key == QLatin1String("accessDenied")
                   || key == QLatin1String("notFound")
                   || key == QLatin1String("commitThenLoseAnswer")) {
            if (!value.isBool())
                return fail(key, QStringLiteral("expected true or false"));
            if (key == QLatin1String("commitThenLoseAnswer") && tools
                && !tools->writes.contains(name))
                return fail(key, QStringLiteral("only for tools that write (%1)")
                                     .arg(tools->writes.join(QStringLiteral(", "))));
            bool &flag = key == QLatin1String("hang") ? fault.hang
                : key == QLatin1String("permanentFailure") ? fault.permanentFailure
                : key == QLatin1String("accessDenied") ? fault.accessDenied
                : key == QLatin1String("notFound") ? fault.notFound
                : fault.commitThenLoseAnswer;
            flag = value.toBool();
        } else if (key == QLatin1String("failureProbability")) {
            if (!value.isDouble() || value.toDouble() < 0.0 || value.toDouble() > 1.0)
                return fail(key, QStringLiteral("expected a number from 0 to 1"));
            fault.failureProbability = value.toDouble();
        } else {
            return fail(key, QStringLiteral("unknown key"));
        }
    }
    return true;
}

bool readModel(const QJsonObject &json, ModelFault &fault, QString *error)
{
    for (auto it = json.begin(); it != json.end(); ++it) {
        const auto fail = [&](const QString &what) {
            if (error)
                *error = QStringLiteral("fault plan: model.%1: %2").arg(it.key(), what);
            return false;
        };
        if (it.key() == QLatin1String("unavailable")) {
            if (!it.value().isBool())
                return fail(QStringLiteral("expected true or false"));
            fault.unavailable = it.value().toBool();
        } else if (it.key() == QLatin1String("latencyMs")) {
            const double value = it.value().toDouble(-1);
            if (!it.value().isDouble() || value < 0 || value > 3'600'000
                || value != double(qint64(value)))
                return fail(QStringLiteral("expected a whole number from 0 to 3600000"));
            fault.latencyMs = int(value);
        } else {
            return fail(QStringLiteral("unknown key"));
        }
    }
    return true;
}

} // namespace

std::optional<FaultPlan> FaultPlan::fromJson(const QByteArray &json, QString *error,
                                             const std::optional<KnownTools> &known)
{
    QJsonParseError parseError;
    const QJsonDocument document = QJsonDocument::fromJson(json, &parseError);
    if (parseError.error != QJsonParseError::NoError) {
        if (error)
            *error = QStringLiteral("fault plan: not valid JSON at offset %1 (%2)")
                         .arg(parseError.offset)
                         .arg(parseError.errorString());
        return std::nullopt;
    }
    if (!document.isObject()) {
        if (error)
            *error = QStringLiteral("fault plan: the top level must be an object");
        return std::nullopt;
    }
    FaultPlan plan;
    const QJsonObject root = document.object();
    for (auto it = root.begin(); it != root.end(); ++it) {
        if (it.key() == QLatin1String("seed")) {
            // Compared as a double before any conversion: casting 1e300 (or NaN) to an
            // integer is undefined behaviour.
            const double seed = it.value().toDouble(-1);
            if (!it.value().isDouble() || !(seed >= 0 && seed <= double(kMaxSeed))
                || seed != double(qint64(seed))) {
                if (error)
                    *error = QStringLiteral("fault plan: seed: expected a whole number from 0 "
                                            "to %1")
                                 .arg(kMaxSeed);
                return std::nullopt;
            }
            plan.m_seed = quint64(qint64(seed));
        } else if (it.key() == QLatin1String("description")) {
            if (!it.value().isString()) {
                if (error)
                    *error = QStringLiteral("fault plan: description: expected a string");
                return std::nullopt;
            }
        } else if (it.key() == QLatin1String("tools")) {
            if (!it.value().isObject()) {
                if (error)
                    *error = QStringLiteral("fault plan: tools: expected an object");
                return std::nullopt;
            }
            const QJsonObject tools = it.value().toObject();
            for (auto tool = tools.begin(); tool != tools.end(); ++tool) {
                if (known && !known->names.contains(tool.key())) {
                    if (error)
                        *error = QStringLiteral("fault plan: tools.%1: no such tool (the "
                                                "tools are %2)")
                                     .arg(tool.key(), known->names.join(QStringLiteral(", ")));
                    return std::nullopt;
                }
                if (!tool.value().isObject()) {
                    if (error)
                        *error = QStringLiteral("fault plan: tools.%1: expected an object")
                                     .arg(tool.key());
                    return std::nullopt;
                }
                ToolFault fault;
                if (!readTool(tool.key(), tool.value().toObject(), fault, error, known))
                    return std::nullopt;
                plan.m_tools.insert(tool.key(), fault);
            }
        } else if (it.key() == QLatin1String("model")) {
            ModelFault fault;
            if (!it.value().isObject()) {
                if (error)
                    *error = QStringLiteral("fault plan: model: expected an object");
                return std::nullopt;
            }
            if (!readModel(it.value().toObject(), fault, error))
                return std::nullopt;
            plan.m_model = fault;
        } else {
            if (error)
                *error = QStringLiteral("fault plan: %1: unknown key").arg(it.key());
            return std::nullopt;
        }
    }
    return plan;
}

std::optional<FaultPlan> FaultPlan::fromFile(const QString &path, QString *error,
                                             const std::optional<KnownTools> &tools)
{
    QString reason;
    const auto contents = readBoundedRegularFile(path, kMaxPlanFileBytes, &reason);
    if (!contents) {
        if (error)
            *error = QStringLiteral("fault plan: ") + reason;
        return std::nullopt;
    }
    return fromJson(*contents, error, tools);
}

std::optional<ToolFault> FaultPlan::faultFor(const QString &toolName) const
{
    const auto it = m_tools.constFind(toolName);
    if (it == m_tools.cend())
        return std::nullopt;
    return *it;
}

void FaultPlan::setFault(const QString &toolName, const ToolFault &fault)
{
    m_tools.insert(toolName, fault);
}

QString FaultPlan::summary() const
{
    QStringList parts;
    QStringList names = m_tools.keys();
    names.sort();
    for (const QString &name : names) {
        const ToolFault &f = m_tools[name];
        QStringList effects;
        if (f.latencyMs > 0)
            effects << QStringLiteral("+%1 ms").arg(f.latencyMs);
        if (f.hang)
            effects << QStringLiteral("hang");
        if (f.transientFailures > 0)
            effects << QStringLiteral("first %1 attempts fail").arg(f.transientFailures);
        if (f.permanentFailure)
            effects << QStringLiteral("rejected");
        if (f.accessDenied)
            effects << QStringLiteral("access denied");
        if (f.notFound)
            effects << QStringLiteral("not found");
        if (f.failureProbability > 0)
            effects << QStringLiteral("fails %1%").arg(f.failureProbability * 100.0, 0, 'g', 3);
        if (f.commitThenLoseAnswer)
            effects << QStringLiteral("answer lost after the commit");
        parts << QStringLiteral("%1: %2").arg(name, effects.isEmpty()
                                                        ? QStringLiteral("none")
                                                        : effects.join(QStringLiteral(", ")));
    }
    if (m_model) {
        QStringList effects;
        if (m_model->unavailable)
            effects << QStringLiteral("unavailable");
        if (m_model->latencyMs > 0)
            effects << QStringLiteral("+%1 ms").arg(m_model->latencyMs);
        parts << QStringLiteral("model: %1")
                     .arg(effects.isEmpty() ? QStringLiteral("none")
                                            : effects.join(QStringLiteral(", ")));
    }
    return parts.join(QStringLiteral("; "));
}

FaultEffect FaultPlan::apply(const QString &toolName, const QString &callKey, int attempt,
                             const CancellationToken &cancellation) const
{
    const auto it = m_tools.constFind(toolName);
    if (it == m_tools.cend())
        return FaultEffect::None;
    const ToolFault &fault = *it;
    if (fault.latencyMs > 0
        && cancellation.waitForCancellation(std::chrono::milliseconds(fault.latencyMs)))
        return FaultEffect::Cancelled;
    if (fault.hang) {
        cancellation.waitUntilCancelled();
        return FaultEffect::Cancelled;
    }
    if (fault.accessDenied)
        return FaultEffect::AccessDenied;
    if (fault.permanentFailure)
        return FaultEffect::Permanent;
    if (attempt <= fault.transientFailures)
        return FaultEffect::Transient;
    if (fault.failureProbability > 0
        && seededUnitDraw(m_seed, {toolName.toUtf8(), callKey.toUtf8(),
                                   QByteArray::number(attempt)})
            < fault.failureProbability)
        return FaultEffect::Transient;
    if (fault.notFound)
        return FaultEffect::NotFound;
    return FaultEffect::None;
}

} // namespace AgentConsole
