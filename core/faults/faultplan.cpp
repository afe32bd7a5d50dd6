#include "faultplan.h"

#include "../telemetry/logging.h"
#include "boundedfile.h"
#include "seededdraw.h"

#include <QCoreApplication>
#include <QJsonDocument>
#include <QJsonObject>
#include <QStringList>

#include <algorithm>
#include <iterator>
#include <stdexcept>

namespace AgentConsole {
namespace {

// Why a plan is refused, worded where it is found in the window's language
// (docs/TRANSLATIONS.md); agent-cli installs no translator and keeps the English source. The
// key path stays as it is written in the file.
struct FaultPlanWords
{
    Q_DECLARE_TR_FUNCTIONS(AgentConsole::FaultPlan)
};

// One line naming the key, e.g. "tools.queryLogistics.latncyMs: unknown key" (fromJson puts
// "fault plan: " before it).
bool fail(QString *error, const QString &key, const QString &what)
{
    if (error)
        *error = FaultPlanWords::tr("%1: %2").arg(key, what);
    return false;
}

// A whole number from 0 to `max`; compared as a double before any conversion (casting 1e300
// or NaN to an integer is undefined behaviour).
bool readWhole(const QJsonValue &value, int max, int &out)
{
    const double number = value.toDouble(-1);
    if (!value.isDouble() || !(number >= 0 && number <= max)
        || number != double(qint64(number)))
        return false;
    out = int(number);
    return true;
}

QString wholeRange(int max)
{
    return FaultPlanWords::tr("expected a whole number from 0 to %1").arg(max);
}

constexpr int kMaxMs = 3'600'000;
constexpr int kMaxRateLimited = 1000;
constexpr int kMaxBurst = 100;
constexpr int kRejectionStatuses[] = {400, 404, 409, 422};

// `where` is the entry's path ("tools.queryLogistics", "backend"); `tool` is empty for the
// backend's entry, which applies to whichever tools have none of their own.
bool readTool(const QString &where, const QString &tool, const QJsonObject &json,
              ToolFault &fault, QString *error, const std::optional<KnownTools> &known)
{
    for (auto it = json.begin(); it != json.end(); ++it) {
        const QString key = it.key();
        const QString path = where + QLatin1Char('.') + key;
        const QJsonValue value = it.value();
        if (key == QLatin1String("latencyMs") || key == QLatin1String("transientFailures")) {
            int number = 0;
            if (!readWhole(value, kMaxMs, number))
                return fail(error, path, wholeRange(kMaxMs));
            (key == QLatin1String("latencyMs") ? fault.latencyMs : fault.transientFailures)
                = number;
        } else if (key == QLatin1String("permanentStatus")) {
            int status = 0;
            if (!readWhole(value, 999, status)
                || !std::count(std::begin(kRejectionStatuses), std::end(kRejectionStatuses),
                               status))
                return fail(error, path, FaultPlanWords::tr("expected 400, 404, 409 or 422"));
            fault.permanentStatus = status;
        } else if (key == QLatin1String("hang") || key == QLatin1String("permanentFailure")
                   || key == QLatin1String("accessDenied")
                   || key == QLatin1String("notFound")
                   || key == QLatin1String("commitThenLoseAnswer")
                   || key == QLatin1String("internalError")) {
            if (!value.isBool())
                return fail(error, path, FaultPlanWords::tr("expected true or false"));
            if (key == QLatin1String("commitThenLoseAnswer") && known && !tool.isEmpty()
                && !known->writes.contains(tool))
                return fail(error, path,
                    FaultPlanWords::tr("only for tools that write (%1)")
                        .arg(known->writes.join(QStringLiteral(", "))));
            bool &flag = key == QLatin1String("hang") ? fault.hang
                : key == QLatin1String("permanentFailure") ? fault.permanentFailure
                : key == QLatin1String("accessDenied") ? fault.accessDenied
                : key == QLatin1String("notFound") ? fault.notFound
                : key == QLatin1String("internalError") ? fault.internalError
                : fault.commitThenLoseAnswer;
            flag = value.toBool();
        } else if (key == QLatin1String("failureProbability")) {
            if (!value.isDouble() || !(value.toDouble() >= 0.0 && value.toDouble() <= 1.0))
                return fail(error, path, FaultPlanWords::tr("expected a number from 0 to 1"));
            fault.failureProbability = value.toDouble();
        } else {
            return fail(error, path, FaultPlanWords::tr("unknown key"));
        }
    }
    return true;
}

bool readModel(const QString &where, const QJsonObject &json, ModelFault &fault,
               QString *error)
{
    for (auto it = json.begin(); it != json.end(); ++it) {
        const QString key = it.key();
        const QString path = where + QLatin1Char('.') + key;
        const QJsonValue value = it.value();
        const auto whole = [&](int max, int &out) {
            return readWhole(value, max, out) || fail(error, path, wholeRange(max));
        };
        if (key == QLatin1String("latencyMs") || key == QLatin1String("retryAfterMs")) {
            if (!whole(kMaxMs, key == QLatin1String("latencyMs") ? fault.latencyMs
                                                                 : fault.retryAfterMs))
                return false;
        } else if (key == QLatin1String("rateLimited")) {
            if (!whole(kMaxRateLimited, fault.rateLimited))
                return false;
        } else if (key == QLatin1String("toolCallBurst")) {
            if (!whole(kMaxBurst, fault.toolCallBurst))
                return false;
        } else if (key == QLatin1String("unavailable") || key == QLatin1String("quotaExhausted")
                   || key == QLatin1String("malformedResponse")
                   || key == QLatin1String("streamStall")
                   || key == QLatin1String("malformedToolArguments")
                   || key == QLatin1String("unknownTool")) {
            if (!value.isBool())
                return fail(error, path, FaultPlanWords::tr("expected true or false"));
            bool &flag = key == QLatin1String("unavailable") ? fault.unavailable
                : key == QLatin1String("quotaExhausted") ? fault.quotaExhausted
                : key == QLatin1String("malformedResponse") ? fault.malformedResponse
                : key == QLatin1String("streamStall") ? fault.streamStall
                : key == QLatin1String("malformedToolArguments") ? fault.malformedToolArguments
                : fault.unknownTool;
            flag = value.toBool();
        } else {
            return fail(error, path, FaultPlanWords::tr("unknown key"));
        }
    }
    return true;
}

// The sim judges its own body's values (PUT /sim/faults answers 400 naming the key); here only
// its shape and key names, so that a typo is refused when the plan is read, not when it is
// sent.
bool readSim(const QJsonObject &json, QString *error)
{
    static const QStringList topKeys{QStringLiteral("description"), QStringLiteral("seed"),
                                     QStringLiteral("hangLimitMs"), QStringLiteral("routes")};
    static const QStringList routes{QStringLiteral("orders"), QStringLiteral("logistics"),
                                    QStringLiteral("inventory"), QStringLiteral("tickets")};
    static const QStringList routeKeys{
        QStringLiteral("latencyMs"),      QStringLiteral("hang"),
        QStringLiteral("status"),         QStringLiteral("dropConnection"),
        QStringLiteral("commitThenDrop"), QStringLiteral("commitThenHang"),
        QStringLiteral("times"),          QStringLiteral("retryAfterSeconds"),
        QStringLiteral("failureProbability"), QStringLiteral("failureStatus")};
    for (auto it = json.begin(); it != json.end(); ++it) {
        const QString path = QStringLiteral("sim.") + it.key();
        if (!topKeys.contains(it.key()))
            return fail(error, path, FaultPlanWords::tr("unknown key"));
        if (it.key() != QLatin1String("routes"))
            continue;
        if (!it.value().isObject())
            return fail(error, path, FaultPlanWords::tr("expected an object"));
        const QJsonObject routesJson = it.value().toObject();
        for (auto route = routesJson.begin(); route != routesJson.end(); ++route) {
            const QString routePath = path + QLatin1Char('.') + route.key();
            if (!routes.contains(route.key()))
                return fail(error, routePath,
                    FaultPlanWords::tr("no such route (the routes are %1)")
                        .arg(routes.join(QStringLiteral(", "))));
            if (!route.value().isObject())
                return fail(error, routePath, FaultPlanWords::tr("expected an object"));
            const QJsonObject keys = route.value().toObject();
            for (auto key = keys.begin(); key != keys.end(); ++key) {
                if (!routeKeys.contains(key.key()))
                    return fail(error, routePath + QLatin1Char('.') + key.key(),
                        FaultPlanWords::tr("unknown key"));
            }
        }
    }
    return true;
}

QJsonObject toolJson(const ToolFault &fault)
{
    const ToolFault none;
    QJsonObject json;
    if (fault.latencyMs != none.latencyMs)
        json.insert(QStringLiteral("latencyMs"), fault.latencyMs);
    if (fault.hang)
        json.insert(QStringLiteral("hang"), true);
    if (fault.transientFailures != none.transientFailures)
        json.insert(QStringLiteral("transientFailures"), fault.transientFailures);
    if (fault.permanentFailure)
        json.insert(QStringLiteral("permanentFailure"), true);
    if (fault.permanentStatus != none.permanentStatus)
        json.insert(QStringLiteral("permanentStatus"), fault.permanentStatus);
    if (fault.accessDenied)
        json.insert(QStringLiteral("accessDenied"), true);
    if (fault.notFound)
        json.insert(QStringLiteral("notFound"), true);
    if (fault.failureProbability != none.failureProbability)
        json.insert(QStringLiteral("failureProbability"), fault.failureProbability);
    if (fault.commitThenLoseAnswer)
        json.insert(QStringLiteral("commitThenLoseAnswer"), true);
    if (fault.internalError)
        json.insert(QStringLiteral("internalError"), true);
    return json;
}

QJsonObject modelJson(const ModelFault &fault)
{
    const ModelFault none;
    QJsonObject json;
    if (fault.unavailable)
        json.insert(QStringLiteral("unavailable"), true);
    if (fault.latencyMs != none.latencyMs)
        json.insert(QStringLiteral("latencyMs"), fault.latencyMs);
    if (fault.rateLimited != none.rateLimited)
        json.insert(QStringLiteral("rateLimited"), fault.rateLimited);
    if (fault.retryAfterMs != none.retryAfterMs)
        json.insert(QStringLiteral("retryAfterMs"), fault.retryAfterMs);
    if (fault.quotaExhausted)
        json.insert(QStringLiteral("quotaExhausted"), true);
    if (fault.malformedResponse)
        json.insert(QStringLiteral("malformedResponse"), true);
    if (fault.streamStall)
        json.insert(QStringLiteral("streamStall"), true);
    if (fault.malformedToolArguments)
        json.insert(QStringLiteral("malformedToolArguments"), true);
    if (fault.unknownTool)
        json.insert(QStringLiteral("unknownTool"), true);
    if (fault.toolCallBurst != none.toolCallBurst)
        json.insert(QStringLiteral("toolCallBurst"), fault.toolCallBurst);
    return json;
}

// The summary's words: as written for the log, or translated for the window.
struct Words
{
    bool translated = false;
    QString operator()(const char *text) const
    {
        return translated ? QCoreApplication::translate("AgentConsole::FaultPlan", text)
                          : QString::fromUtf8(text);
    }
};

QString toolEffects(const ToolFault &f, const Words &w)
{
    QStringList effects;
    if (f.latencyMs > 0)
        effects << w(QT_TRANSLATE_NOOP("AgentConsole::FaultPlan", "+%1 ms")).arg(f.latencyMs);
    if (f.hang)
        effects << w(QT_TRANSLATE_NOOP("AgentConsole::FaultPlan", "hang"));
    if (f.internalError)
        effects << w(QT_TRANSLATE_NOOP("AgentConsole::FaultPlan", "internal error"));
    if (f.transientFailures > 0)
        effects << w(QT_TRANSLATE_NOOP("AgentConsole::FaultPlan", "first %1 attempts fail"))
                       .arg(f.transientFailures);
    if (f.permanentFailure)
        effects << (f.permanentStatus == 400
                ? w(QT_TRANSLATE_NOOP("AgentConsole::FaultPlan", "rejected"))
                : w(QT_TRANSLATE_NOOP("AgentConsole::FaultPlan", "rejected (%1)"))
                      .arg(f.permanentStatus));
    if (f.accessDenied)
        effects << w(QT_TRANSLATE_NOOP("AgentConsole::FaultPlan", "access denied"));
    if (f.notFound)
        effects << w(QT_TRANSLATE_NOOP("AgentConsole::FaultPlan", "not found"));
    if (f.failureProbability > 0)
        effects << w(QT_TRANSLATE_NOOP("AgentConsole::FaultPlan", "fails %1%"))
                       .arg(f.failureProbability * 100.0, 0, 'g', 3);
    if (f.commitThenLoseAnswer)
        effects << w(QT_TRANSLATE_NOOP("AgentConsole::FaultPlan", "answer lost after the commit"));
    return effects.isEmpty() ? w(QT_TRANSLATE_NOOP("AgentConsole::FaultPlan", "none"))
                             : effects.join(QStringLiteral(", "));
}

QString modelEffects(const ModelFault &f, const Words &w)
{
    QStringList effects;
    if (f.unavailable)
        effects << w(QT_TRANSLATE_NOOP("AgentConsole::FaultPlan", "unavailable"));
    if (f.latencyMs > 0)
        effects << w(QT_TRANSLATE_NOOP("AgentConsole::FaultPlan", "+%1 ms")).arg(f.latencyMs);
    if (f.rateLimited > 0)
        effects << w(QT_TRANSLATE_NOOP("AgentConsole::FaultPlan",
                         "first %1 attempts rate-limited (retry after %2 ms)"))
                       .arg(f.rateLimited)
                       .arg(f.retryAfterMs);
    if (f.quotaExhausted)
        effects << w(QT_TRANSLATE_NOOP("AgentConsole::FaultPlan", "quota exhausted"));
    if (f.malformedResponse)
        effects << w(QT_TRANSLATE_NOOP("AgentConsole::FaultPlan", "unreadable answer"));
    if (f.streamStall)
        effects << w(QT_TRANSLATE_NOOP("AgentConsole::FaultPlan", "stream stalls"));
    if (f.malformedToolArguments)
        effects << w(QT_TRANSLATE_NOOP("AgentConsole::FaultPlan", "broken tool arguments"));
    if (f.unknownTool)
        effects << w(QT_TRANSLATE_NOOP("AgentConsole::FaultPlan", "calls an unknown tool"));
    if (f.toolCallBurst > 0)
        effects << w(QT_TRANSLATE_NOOP("AgentConsole::FaultPlan", "repeats a tool call %1 times"))
                       .arg(f.toolCallBurst);
    return effects.isEmpty() ? w(QT_TRANSLATE_NOOP("AgentConsole::FaultPlan", "none"))
                             : effects.join(QStringLiteral(", "));
}

} // namespace

std::optional<FaultPlan> FaultPlan::fromJson(const QByteArray &json, QString *error,
                                             const std::optional<KnownTools> &known)
{
    QString reason;
    std::optional<FaultPlan> plan = fromJsonSection(json, &reason, known);
    if (!plan && error)
        *error = FaultPlanWords::tr("fault plan: %1").arg(reason);
    return plan;
}

std::optional<FaultPlan> FaultPlan::fromJsonSection(
    const QByteArray &json, QString *error, const std::optional<KnownTools> &known)
{
    QJsonParseError parseError;
    const QJsonDocument document = QJsonDocument::fromJson(json, &parseError);
    if (parseError.error != QJsonParseError::NoError) {
        if (error)
            *error = FaultPlanWords::tr("not valid JSON at offset %1 (%2)")
                         .arg(parseError.offset)
                         .arg(jsonParseReason(parseError));
        return std::nullopt;
    }
    if (!document.isObject()) {
        if (error)
            *error = FaultPlanWords::tr("the top level must be an object");
        return std::nullopt;
    }
    FaultPlan plan;
    const QJsonObject root = document.object();
    const auto refuse = [error](const QString &key, const QString &what) {
        fail(error, key, what);
        return std::nullopt;
    };
    const QString expectedObject = FaultPlanWords::tr("expected an object");
    for (auto it = root.begin(); it != root.end(); ++it) {
        const QString key = it.key();
        if (key == QLatin1String("seed")) {
            // Compared as a double before any conversion: casting 1e300 (or NaN) to an
            // integer is undefined behaviour.
            const double seed = it.value().toDouble(-1);
            if (!it.value().isDouble() || !(seed >= 0 && seed <= double(kMaxSeed))
                || seed != double(qint64(seed)))
                return refuse(
                    key, FaultPlanWords::tr("expected a whole number from 0 to %1").arg(kMaxSeed));
            plan.m_seed = quint64(qint64(seed));
        } else if (key == QLatin1String("description")) {
            if (!it.value().isString())
                return refuse(key, FaultPlanWords::tr("expected a string"));
            plan.m_description = it.value().toString();
        } else if (key == QLatin1String("tools")) {
            if (!it.value().isObject())
                return refuse(key, expectedObject);
            const QJsonObject tools = it.value().toObject();
            for (auto tool = tools.begin(); tool != tools.end(); ++tool) {
                const QString where = QStringLiteral("tools.") + tool.key();
                if (known && !known->names.contains(tool.key()))
                    return refuse(where,
                        FaultPlanWords::tr("no such tool (the tools are %1)")
                            .arg(known->names.join(QStringLiteral(", "))));
                if (!tool.value().isObject())
                    return refuse(where, expectedObject);
                ToolFault fault;
                if (!readTool(where, tool.key(), tool.value().toObject(), fault, error, known))
                    return std::nullopt;
                plan.m_tools.insert(tool.key(), fault);
            }
        } else if (key == QLatin1String("backend")) {
            if (!it.value().isObject())
                return refuse(key, expectedObject);
            ToolFault fault;
            if (!readTool(key, QString(), it.value().toObject(), fault, error, known))
                return std::nullopt;
            plan.m_backend = fault;
        } else if (key == QLatin1String("model")) {
            if (!it.value().isObject())
                return refuse(key, expectedObject);
            if (root.value(QLatin1String("models")).toObject().contains(QLatin1String("primary")))
                return refuse(
                    key, FaultPlanWords::tr("the primary is given as models.primary too"));
            ModelFault fault;
            if (!readModel(key, it.value().toObject(), fault, error))
                return std::nullopt;
            plan.m_primaryModel = fault;
        } else if (key == QLatin1String("models")) {
            if (!it.value().isObject())
                return refuse(key, expectedObject);
            const QJsonObject models = it.value().toObject();
            for (auto model = models.begin(); model != models.end(); ++model) {
                const QString where = QStringLiteral("models.") + model.key();
                const bool primary = model.key() == QLatin1String("primary");
                if (!primary && model.key() != QLatin1String("secondary"))
                    return refuse(where, FaultPlanWords::tr("unknown key (primary or secondary)"));
                if (!model.value().isObject())
                    return refuse(where, expectedObject);
                ModelFault fault;
                if (!readModel(where, model.value().toObject(), fault, error))
                    return std::nullopt;
                (primary ? plan.m_primaryModel : plan.m_secondaryModel) = fault;
            }
        } else if (key == QLatin1String("sim")) {
            if (!it.value().isObject())
                return refuse(key, expectedObject);
            if (!readSim(it.value().toObject(), error))
                return std::nullopt;
            plan.m_sim = it.value().toObject();
        } else {
            return refuse(key, FaultPlanWords::tr("unknown key"));
        }
    }
    return plan;
}

QJsonObject FaultPlan::toJson() const
{
    QJsonObject json;
    if (!m_description.isEmpty())
        json.insert(QStringLiteral("description"), m_description);
    // A double holds every seed up to kMaxSeed exactly.
    json.insert(QStringLiteral("seed"), double(m_seed));
    if (!m_tools.isEmpty()) {
        QJsonObject tools;
        for (auto it = m_tools.cbegin(); it != m_tools.cend(); ++it)
            tools.insert(it.key(), toolJson(*it));
        json.insert(QStringLiteral("tools"), tools);
    }
    if (m_backend)
        json.insert(QStringLiteral("backend"), toolJson(*m_backend));
    if (m_primaryModel || m_secondaryModel) {
        QJsonObject models;
        if (m_primaryModel)
            models.insert(QStringLiteral("primary"), modelJson(*m_primaryModel));
        if (m_secondaryModel)
            models.insert(QStringLiteral("secondary"), modelJson(*m_secondaryModel));
        json.insert(QStringLiteral("models"), models);
    }
    if (!m_sim.isEmpty())
        json.insert(QStringLiteral("sim"), m_sim);
    return json;
}

std::optional<FaultPlan> FaultPlan::fromFile(const QString &path, QString *error,
                                             const std::optional<KnownTools> &tools)
{
    QString reason;
    const auto contents = readBoundedRegularFile(path, kMaxPlanFileBytes, &reason);
    if (!contents) {
        if (error)
            *error = FaultPlanWords::tr("fault plan: %1").arg(reason);
        return std::nullopt;
    }
    return fromJson(*contents, error, tools);
}

bool FaultPlan::isEmpty() const
{
    return m_tools.isEmpty() && !m_backend && !m_primaryModel && !m_secondaryModel
        && m_sim.isEmpty();
}

QStringList FaultPlan::faultedTools() const
{
    QStringList names = m_tools.keys();
    names.sort();
    return names;
}

std::optional<ToolFault> FaultPlan::faultFor(const QString &toolName) const
{
    const auto it = m_tools.constFind(toolName);
    if (it == m_tools.cend())
        return std::nullopt;
    return *it;
}

std::optional<ToolFault> FaultPlan::effectiveFaultFor(const QString &toolName) const
{
    const auto it = m_tools.constFind(toolName);
    if (it == m_tools.cend())
        return m_backend;
    return *it;
}

void FaultPlan::setFault(const QString &toolName, const ToolFault &fault)
{
    m_tools.insert(toolName, fault);
}

void FaultPlan::removeFault(const QString &toolName)
{
    m_tools.remove(toolName);
}

std::optional<ModelFault> FaultPlan::modelFault(Provider provider) const
{
    return provider == Provider::Primary ? m_primaryModel : m_secondaryModel;
}

void FaultPlan::setModelFault(Provider provider, const std::optional<ModelFault> &fault)
{
    (provider == Provider::Primary ? m_primaryModel : m_secondaryModel) = fault;
}

QString FaultPlan::summary(SummaryWords words) const
{
    const Words w{words == SummaryWords::Staff};
    QStringList parts;
    for (const QString &name : faultedTools())
        parts << w(QT_TRANSLATE_NOOP("AgentConsole::FaultPlan", "%1: %2"))
                     .arg(name, toolEffects(m_tools[name], w));
    if (m_backend)
        parts << w(QT_TRANSLATE_NOOP("AgentConsole::FaultPlan", "other tools: %1"))
                     .arg(toolEffects(*m_backend, w));
    // "model" alone while there is no secondary fault: the words staff already know.
    if (m_primaryModel)
        parts << w(QT_TRANSLATE_NOOP("AgentConsole::FaultPlan", "%1: %2"))
                     .arg(m_secondaryModel
                             ? w(QT_TRANSLATE_NOOP("AgentConsole::FaultPlan", "primary model"))
                             : w(QT_TRANSLATE_NOOP("AgentConsole::FaultPlan", "model")),
                         modelEffects(*m_primaryModel, w));
    if (m_secondaryModel)
        parts << w(QT_TRANSLATE_NOOP("AgentConsole::FaultPlan", "secondary model: %1"))
                     .arg(modelEffects(*m_secondaryModel, w));
    if (!m_sim.isEmpty()) {
        // The sim's own words (docs/SUPPORT-SIM.md): "logistics status 503, times 2".
        const QJsonObject routes = m_sim.value(QLatin1String("routes")).toObject();
        QStringList described;
        for (auto route = routes.begin(); route != routes.end(); ++route) {
            QStringList keys;
            const QJsonObject fault = route.value().toObject();
            for (auto key = fault.begin(); key != fault.end(); ++key) {
                const QJsonValue value = key.value();
                keys << (value.isBool() ? (value.toBool() ? key.key()
                                                          : QStringLiteral("no ") + key.key())
                                        : QStringLiteral("%1 %2").arg(
                                              key.key(), QString::number(value.toDouble())));
            }
            described << QStringLiteral("%1 %2").arg(
                route.key(), keys.isEmpty() ? QStringLiteral("none")
                                            : keys.join(QStringLiteral(", ")));
        }
        parts << QStringLiteral("support-sim: %1")
                     .arg(described.isEmpty() ? QStringLiteral("none")
                                              : described.join(QStringLiteral("; ")));
    }
    return parts.join(QStringLiteral("; "));
}

QString FaultPlan::rejectionDetail(const QString &toolName) const
{
    const std::optional<ToolFault> fault = effectiveFaultFor(toolName);
    return QStringLiteral("fault plan: request rejected (stands for HTTP %1)")
        .arg(fault ? fault->permanentStatus : ToolFault().permanentStatus);
}

void throwInjectedToolBug(const QString &toolName)
{
    throw std::runtime_error("fault plan: injected internal error in " + toolName.toStdString());
}

FaultEffect FaultPlan::apply(const QString &toolName, const QString &callKey, int attempt,
                             const CancellationToken &cancellation) const
{
    const std::optional<ToolFault> entry = effectiveFaultFor(toolName);
    if (!entry)
        return FaultEffect::None;
    const ToolFault &fault = *entry;
    if (fault.latencyMs > 0
        && cancellation.waitForCancellation(std::chrono::milliseconds(fault.latencyMs)))
        return FaultEffect::Cancelled;
    if (fault.hang) {
        cancellation.waitUntilCancelled();
        return FaultEffect::Cancelled;
    }
    if (fault.internalError)
        return FaultEffect::InternalError;
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
