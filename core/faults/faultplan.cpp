#include "faultplan.h"

#include "../telemetry/logging.h"
#include "boundedfile.h"
#include "seededdraw.h"

#include <QCoreApplication>
#include <QJsonDocument>
#include <QJsonObject>
#include <QStringList>

#include <algorithm>
#include <stdexcept>
#include <type_traits>
#include <variant>

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

using Kind = FaultField::Kind;
using Scope = FaultField::Scope;

constexpr int kMaxMs = 3'600'000; // every duration, and a tool's first-N failures
constexpr int kMaxRateLimited = 1000;
constexpr int kMaxBurst = 100;

// The member a field reads into and writes from: its type follows the field's kind (a flag is
// a bool, a probability a double, the rest an int).
template <class Fault> using Member = std::variant<bool Fault::*, int Fault::*, double Fault::*>;

template <class Fault> struct Binding
{
    FaultField field;
    Member<Fault> member;
};

template <class Fault> double valueOf(const Fault &fault, const Member<Fault> &member)
{
    return std::visit([&fault](auto pointer) { return double(fault.*pointer); }, member);
}

// What a field's default is: the struct's own initializer, so that it is written once.
template <class Fault> QList<Binding<Fault>> withDefaults(QList<Binding<Fault>> bindings)
{
    const Fault none;
    for (Binding<Fault> &binding : bindings)
        binding.field.defaultValue = valueOf(none, binding.member);
    return bindings;
}

const QList<Binding<ToolFault>> &toolBindings()
{
    static const QList<Binding<ToolFault>> bindings = withDefaults<ToolFault>({
        {{.key = "latencyMs", .kind = Kind::Millis, .max = kMaxMs}, &ToolFault::latencyMs},
        {{.key = "hang"}, &ToolFault::hang},
        {{.key = "transientFailures", .kind = Kind::Count, .max = kMaxMs},
         &ToolFault::transientFailures},
        {{.key = "permanentFailure"}, &ToolFault::permanentFailure},
        {{.key = "permanentStatus",
          .kind = Kind::HttpStatus,
          .min = 400,
          .max = 422,
          .qualifies = "permanentFailure",
          .choices = {400, 404, 409, 422}},
         &ToolFault::permanentStatus},
        {{.key = "accessDenied"}, &ToolFault::accessDenied},
        {{.key = "notFound"}, &ToolFault::notFound},
        {{.key = "failureProbability", .kind = Kind::Probability}, &ToolFault::failureProbability},
        {{.key = "commitThenLoseAnswer", .scope = Scope::WriteTool},
         &ToolFault::commitThenLoseAnswer},
        {{.key = "internalError"}, &ToolFault::internalError},
    });
    return bindings;
}

const QList<Binding<ModelFault>> &modelBindings()
{
    static const QList<Binding<ModelFault>> bindings = withDefaults<ModelFault>({
        {{.key = "latencyMs", .kind = Kind::Millis, .scope = Scope::Model, .max = kMaxMs},
         &ModelFault::latencyMs},
        {{.key = "unavailable", .scope = Scope::Model}, &ModelFault::unavailable},
        {{.key = "rateLimited",
          .kind = Kind::Count,
          .scope = Scope::Model,
          .max = kMaxRateLimited},
         &ModelFault::rateLimited},
        {{.key = "retryAfterMs",
          .kind = Kind::Millis,
          .scope = Scope::Model,
          .max = kMaxMs,
          .qualifies = "rateLimited"},
         &ModelFault::retryAfterMs},
        {{.key = "quotaExhausted", .scope = Scope::Model}, &ModelFault::quotaExhausted},
        {{.key = "malformedResponse", .scope = Scope::Model}, &ModelFault::malformedResponse},
        {{.key = "streamStall", .scope = Scope::Model}, &ModelFault::streamStall},
        {{.key = "malformedToolArguments", .scope = Scope::Model},
         &ModelFault::malformedToolArguments},
        {{.key = "unknownTool", .scope = Scope::Model}, &ModelFault::unknownTool},
        {{.key = "toolCallBurst", .kind = Kind::Count, .scope = Scope::Model, .max = kMaxBurst},
         &ModelFault::toolCallBurst},
    });
    return bindings;
}

// Bounds read as words: 3600000 stays 3600000, never 3.6e+06.
QString number(double value)
{
    return QString::number(value, 'g', 16);
}

// A whole number from `min` to `max`; compared as a double before any conversion (casting
// 1e300 or NaN to an integer is undefined behaviour).
bool isWhole(const QJsonValue &value, double min, double max)
{
    const double number = value.toDouble(-1);
    return value.isDouble() && number >= min && number <= max && number == double(qint64(number));
}

QString wholeRange(double min, double max)
{
    return FaultPlanWords::tr("expected a whole number from %1 to %2")
        .arg(number(min), number(max));
}

// Why `value` is not one the field takes, or nothing when it is.
std::optional<QString> refusal(const FaultField &field, const QJsonValue &value)
{
    switch (field.kind) {
    case Kind::Flag:
        if (value.isBool())
            return std::nullopt;
        return FaultPlanWords::tr("expected true or false");
    case Kind::Millis:
    case Kind::Count:
        if (isWhole(value, field.min, field.max))
            return std::nullopt;
        return wholeRange(field.min, field.max);
    case Kind::Probability:
        if (value.isDouble() && value.toDouble() >= field.min && value.toDouble() <= field.max)
            return std::nullopt;
        return FaultPlanWords::tr("expected a number from %1 to %2")
            .arg(number(field.min), number(field.max));
    case Kind::HttpStatus: {
        if (isWhole(value, field.min, field.max) && field.choices.contains(value.toInt()))
            return std::nullopt;
        QStringList all;
        for (const int choice : field.choices)
            all.append(QString::number(choice));
        const QString last = all.isEmpty() ? QString() : all.takeLast();
        return FaultPlanWords::tr("expected %1 or %2")
            .arg(all.join(FaultPlanWords::tr(", ", "between the values of a list")), last);
    }
    }
    return FaultPlanWords::tr("unknown key");
}

template <class Fault>
void assign(Fault &fault, const Member<Fault> &member, const QJsonValue &value)
{
    std::visit(
        [&](auto pointer) {
            using Value = std::remove_cvref_t<decltype(fault.*pointer)>;
            if constexpr (std::is_same_v<Value, bool>)
                fault.*pointer = value.toBool();
            else if constexpr (std::is_same_v<Value, int>)
                fault.*pointer = value.toInt();
            else
                fault.*pointer = value.toDouble();
        },
        member);
}

template <class Fault>
const Binding<Fault> *bindingFor(const QList<Binding<Fault>> &bindings, const QString &key)
{
    for (const Binding<Fault> &binding : bindings) {
        if (key == QLatin1String(binding.field.key))
            return &binding;
    }
    return nullptr;
}

// `where` is the entry's path ("tools.queryLogistics", "backend", "models.primary"); `tool`
// is empty for the backend's entry, which applies to whichever tools have none of their own,
// and for a provider's.
template <class Fault>
bool readEntry(const QList<Binding<Fault>> &bindings, const QString &where, const QString &tool,
               const QJsonObject &json, Fault &fault, QString *error,
               const std::optional<KnownTools> &known)
{
    for (auto it = json.begin(); it != json.end(); ++it) {
        const QString path = where + QLatin1Char('.') + it.key();
        const Binding<Fault> *binding = bindingFor(bindings, it.key());
        if (!binding)
            return fail(error, path, FaultPlanWords::tr("unknown key"));
        if (const std::optional<QString> why = refusal(binding->field, it.value()))
            return fail(error, path, *why);
        if (binding->field.scope == Scope::WriteTool && known && !tool.isEmpty()
            && !known->writes.contains(tool))
            return fail(error, path,
                        FaultPlanWords::tr("only for tools that write (%1)")
                            .arg(known->writes.join(QStringLiteral(", "))));
        assign(fault, binding->member, it.value());
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
    static const QStringList routeKeys{QStringLiteral("latencyMs"),
                                       QStringLiteral("hang"),
                                       QStringLiteral("status"),
                                       QStringLiteral("dropConnection"),
                                       QStringLiteral("commitThenDrop"),
                                       QStringLiteral("commitThenHang"),
                                       QStringLiteral("times"),
                                       QStringLiteral("retryAfterSeconds"),
                                       QStringLiteral("failureProbability"),
                                       QStringLiteral("failureStatus")};
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

// Only what differs from the defaults.
template <class Fault>
QJsonObject entryJson(const QList<Binding<Fault>> &bindings, const Fault &fault)
{
    QJsonObject json;
    for (const Binding<Fault> &binding : bindings) {
        const double value = valueOf(fault, binding.member);
        if (value == binding.field.defaultValue)
            continue;
        const QString key = QLatin1String(binding.field.key);
        switch (binding.field.kind) {
        case Kind::Flag:
            json.insert(key, value != 0);
            break;
        case Kind::Millis:
        case Kind::Count:
        case Kind::HttpStatus:
            json.insert(key, qint64(value));
            break;
        case Kind::Probability:
            json.insert(key, value);
            break;
        }
    }
    return json;
}

template <class Fault> int countActive(const QList<Binding<Fault>> &bindings, const Fault &fault)
{
    return int(std::count_if(bindings.cbegin(), bindings.cend(), [&fault](const auto &binding) {
        return !binding.field.qualifies
            && valueOf(fault, binding.member) != binding.field.defaultValue;
    }));
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

std::optional<FaultPlan> FaultPlan::fromJsonSection(const QByteArray &json, QString *error,
                                                    const std::optional<KnownTools> &known)
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
            if (!isWhole(it.value(), 0, double(kMaxSeed)))
                return refuse(key, wholeRange(0, double(kMaxSeed)));
            plan.m_seed = quint64(qint64(it.value().toDouble()));
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
                if (!readEntry(toolBindings(), where, tool.key(), tool.value().toObject(), fault,
                               error, known))
                    return std::nullopt;
                plan.m_tools.insert(tool.key(), fault);
            }
        } else if (key == QLatin1String("backend")) {
            if (!it.value().isObject())
                return refuse(key, expectedObject);
            ToolFault fault;
            if (!readEntry(toolBindings(), key, QString(), it.value().toObject(), fault, error,
                           known))
                return std::nullopt;
            plan.m_backend = fault;
        } else if (key == QLatin1String("model")) {
            if (!it.value().isObject())
                return refuse(key, expectedObject);
            if (root.value(QLatin1String("models")).toObject().contains(QLatin1String("primary")))
                return refuse(key,
                              FaultPlanWords::tr("the primary is given as models.primary too"));
            ModelFault fault;
            if (!readEntry(modelBindings(), key, QString(), it.value().toObject(), fault, error,
                           known))
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
                if (!readEntry(modelBindings(), where, QString(), model.value().toObject(), fault,
                               error, known))
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
            tools.insert(it.key(), entryJson(toolBindings(), *it));
        json.insert(QStringLiteral("tools"), tools);
    }
    if (m_backend)
        json.insert(QStringLiteral("backend"), entryJson(toolBindings(), *m_backend));
    if (m_primaryModel || m_secondaryModel) {
        QJsonObject models;
        if (m_primaryModel)
            models.insert(QStringLiteral("primary"), entryJson(modelBindings(), *m_primaryModel));
        if (m_secondaryModel)
            models.insert(QStringLiteral("secondary"),
                          entryJson(modelBindings(), *m_secondaryModel));
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

int ToolFault::activeFaultCount() const
{
    return countActive(toolBindings(), *this);
}

int ModelFault::activeFaultCount() const
{
    return countActive(modelBindings(), *this);
}

const QList<FaultField> &FaultPlan::fields()
{
    static const QList<FaultField> fields = [] {
        QList<FaultField> all;
        for (const Binding<ToolFault> &binding : toolBindings())
            all.append(binding.field);
        for (const Binding<ModelFault> &binding : modelBindings())
            all.append(binding.field);
        return all;
    }();
    return fields;
}

int FaultPlan::activeFaultCount() const
{
    int count = m_sim.isEmpty() ? 0 : 1;
    for (const ToolFault &fault : m_tools)
        count += fault.activeFaultCount();
    if (m_backend)
        count += m_backend->activeFaultCount();
    for (const std::optional<ModelFault> &model : {m_primaryModel, m_secondaryModel})
        count += model ? model->activeFaultCount() : 0;
    return count;
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
                keys << (value.isBool()
                             ? (value.toBool() ? key.key() : QStringLiteral("no ") + key.key())
                             : QStringLiteral("%1 %2").arg(key.key(),
                                                           QString::number(value.toDouble())));
            }
            described << QStringLiteral("%1 %2").arg(route.key(),
                                                     keys.isEmpty()
                                                         ? QStringLiteral("none")
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
        && seededUnitDraw(m_seed,
                          {toolName.toUtf8(), callKey.toUtf8(), QByteArray::number(attempt)})
            < fault.failureProbability)
        return FaultEffect::Transient;
    if (fault.notFound)
        return FaultEffect::NotFound;
    return FaultEffect::None;
}

} // namespace AgentConsole
