#include "managedpolicy.h"

#include <QCoreApplication>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonParseError>
#include <QRegularExpression>
#include <QSet>

#include <cmath>

namespace AgentConsole {
namespace {

// A policy's refusals in the window's language (docs/TRANSLATIONS.md); agent-cli keeps the
// English source. Field names stay as they are in the file.
struct PolicyWords
{
    Q_DECLARE_TR_FUNCTIONS(AgentConsole::ManagedPolicy)
};

int depthOf(const QJsonValue &value)
{
    if (value.isObject()) {
        int deepest = 0;
        const QJsonObject object = value.toObject();
        for (auto it = object.begin(); it != object.end(); ++it)
            deepest = std::max(deepest, depthOf(it.value()));
        return deepest + 1;
    }
    if (value.isArray()) {
        int deepest = 0;
        for (const QJsonValue &item : value.toArray())
            deepest = std::max(deepest, depthOf(item));
        return deepest + 1;
    }
    return 0;
}

// One object read strictly: every key is taken or refused, and the first problem, naming the
// field by its path, is the one reported.
class Fields
{
public:
    Fields(const QJsonObject &object, QString path, QString *problem)
        : m_object(object)
        , m_path(std::move(path))
        , m_problem(problem)
    {
    }

    QString pathOf(const QString &key) const
    {
        return m_path.isEmpty() ? key : m_path + QLatin1Char('.') + key;
    }
    bool has(const QString &key) const { return m_object.contains(key); }
    void take(const QString &key) { m_taken.insert(key); }
    bool failed() const { return !m_problem->isEmpty(); }

    bool fail(const QString &key, const QString &why)
    {
        if (m_problem->isEmpty())
            *m_problem = PolicyWords::tr("%1: %2", "a field of the policy, then what is wrong")
                             .arg(key.isEmpty() ? m_path : pathOf(key), why);
        return false;
    }

    bool text(const QString &key, QString *value, int maxLength, bool required)
    {
        m_taken.insert(key);
        const QJsonValue found = m_object.value(key);
        if (found.isUndefined())
            return !required || fail(key, PolicyWords::tr("is missing"));
        if (!found.isString())
            return fail(key, PolicyWords::tr("expected text"));
        const QString read = found.toString();
        if (read.size() > maxLength)
            return fail(key, PolicyWords::tr("longer than %1 characters").arg(maxLength));
        if (read.contains(QLatin1Char('\n')) || read.contains(QLatin1Char('\r')))
            return fail(key, PolicyWords::tr("expected one line of text"));
        *value = read;
        return true;
    }

    // An object, or nothing when absent; false only on a problem.
    bool object(const QString &key, std::optional<QJsonObject> *value)
    {
        m_taken.insert(key);
        const QJsonValue found = m_object.value(key);
        if (found.isUndefined())
            return true;
        if (!found.isObject())
            return fail(key, PolicyWords::tr("expected an object"));
        *value = found.toObject();
        return true;
    }

    // A list of distinct names (each one line, 1 to maxTextLength characters).
    bool names(const QString &key, std::optional<QStringList> *value, int maxCount)
    {
        m_taken.insert(key);
        const QJsonValue found = m_object.value(key);
        if (found.isUndefined())
            return true;
        if (!found.isArray())
            return fail(key, PolicyWords::tr("expected a list of names"));
        const QJsonArray array = found.toArray();
        if (array.size() > maxCount)
            return fail(key, PolicyWords::tr("more than %1 entries").arg(maxCount));
        QStringList list;
        for (const QJsonValue &item : array) {
            const QString name = item.toString();
            if (!item.isString() || name.isEmpty() || name.size() > maxTextLength
                || name.contains(QLatin1Char('\n')))
                return fail(key, PolicyWords::tr("expected a list of names"));
            if (list.contains(name))
                return fail(key, PolicyWords::tr("\"%1\" is named twice").arg(name));
            list.append(name);
        }
        *value = list;
        return true;
    }

    // Every key was taken: an unknown one is refused (a misspelt "lockd" must not pass).
    bool noOtherKeys()
    {
        if (failed())
            return false;
        for (auto it = m_object.begin(); it != m_object.end(); ++it) {
            if (!m_taken.contains(it.key()))
                return fail(it.key(), PolicyWords::tr("is not a field of a policy"));
        }
        return true;
    }

private:
    static constexpr int maxTextLength = ManagedPolicy::maxTextLength;

    const QJsonObject m_object;
    const QString m_path;
    QString *m_problem;
    QSet<QString> m_taken;
};

bool integerIn(Fields &o, const QJsonObject &object, const QString &key, qint64 *value)
{
    const QJsonValue found = object.value(key);
    if (found.isUndefined())
        return true;
    const double number = found.toDouble(std::nan(""));
    // Within what a double holds exactly; RetryPolicy::problem() decides the real range.
    if (!found.isDouble() || std::floor(number) != number || std::fabs(number) > 1e12)
        return o.fail(key, PolicyWords::tr("expected a whole number"));
    *value = qint64(number);
    return true;
}

bool readProviderChain(const QJsonObject &object, const QString &path, PolicyProviderChain *chain,
                       QString *problem)
{
    Fields o(object, path, problem);
    constexpr int length = ManagedPolicy::maxTextLength;
    std::optional<QJsonObject> primary;
    std::optional<QJsonObject> secondary;
    o.object(QStringLiteral("primary"), &primary);
    o.object(QStringLiteral("secondary"), &secondary);
    o.text(QStringLiteral("fallback"), &chain->fallback, 16, false);
    if (!o.noOtherKeys())
        return false;
    if (primary) {
        Fields p(*primary, o.pathOf(QStringLiteral("primary")), problem);
        p.text(QStringLiteral("provider"), &chain->provider, 16, true);
        p.text(QStringLiteral("baseUrl"), &chain->baseUrl, length, false);
        p.text(QStringLiteral("model"), &chain->model, length, false);
        p.text(QStringLiteral("apiKeyVariable"), &chain->apiKeyVariable, 256, false);
        if (!p.noOtherKeys())
            return false;
    }
    if (secondary) {
        Fields s(*secondary, o.pathOf(QStringLiteral("secondary")), problem);
        s.text(QStringLiteral("baseUrl"), &chain->secondaryBaseUrl, length, true);
        s.text(QStringLiteral("model"), &chain->secondaryModel, length, true);
        s.text(QStringLiteral("apiKeyVariable"), &chain->secondaryApiKeyVariable, 256, false);
        if (!s.noOtherKeys())
            return false;
    }
    return true;
}

} // namespace

std::optional<RetryPolicy> retryPolicyFromJson(const QJsonObject &object, const QString &path,
                                               const RetryPolicy &base, QString *problem)
{
    using Millis = RetryPolicy::Millis;
    Fields o(object, path, problem);
    qint64 timeout = base.attemptTimeout.count();
    qint64 retries = base.maxRetries;
    qint64 initial = base.initialDelay.count();
    qint64 maxDelay = base.maxDelay.count();
    qint64 cap = base.retryAfterCap.count();
    RetryPolicy policy = base;
    const QString multiplier = QStringLiteral("multiplier");
    for (const auto &[key, value] : {std::pair{QStringLiteral("attemptTimeoutMs"), &timeout},
                                     std::pair{QStringLiteral("maxRetries"), &retries},
                                     std::pair{QStringLiteral("initialDelayMs"), &initial},
                                     std::pair{QStringLiteral("maxDelayMs"), &maxDelay},
                                     std::pair{QStringLiteral("retryAfterCapMs"), &cap}}) {
        o.take(key);
        if (!integerIn(o, object, key, value))
            return std::nullopt;
    }
    if (object.contains(multiplier)) {
        o.take(multiplier);
        if (!object.value(multiplier).isDouble()) {
            o.fail(multiplier, PolicyWords::tr("expected a number"));
            return std::nullopt;
        }
        policy.multiplier = object.value(multiplier).toDouble();
    }
    QString jitter;
    o.text(QStringLiteral("jitter"), &jitter, 16, false);
    if (!o.noOtherKeys())
        return std::nullopt;
    if (jitter == QLatin1String("none"))
        policy.jitter = JitterMode::None;
    else if (jitter == QLatin1String("full"))
        policy.jitter = JitterMode::Full;
    else if (jitter == QLatin1String("decorrelated"))
        policy.jitter = JitterMode::Decorrelated;
    else if (!jitter.isEmpty()) {
        o.fail(QStringLiteral("jitter"), PolicyWords::tr("expected none, full or decorrelated"));
        return std::nullopt;
    }
    // Clamped into int before problem() looks: a value past int's range is out of every range.
    const auto clamp = [](qint64 value) { return std::clamp<qint64>(value, -1, 1LL << 31); };
    policy.attemptTimeout = Millis(clamp(timeout));
    policy.maxRetries = int(std::clamp<qint64>(retries, -1, 1 << 30));
    policy.initialDelay = Millis(clamp(initial));
    policy.maxDelay = Millis(clamp(maxDelay));
    policy.retryAfterCap = Millis(clamp(cap));
    // The ranges are RetryPolicy's own, named by the JSON key of the member.
    if (const std::optional<RetryPolicy::RangeProblem> range = policy.rangeProblem()) {
        const std::optional<RetryPolicy::Bound> bound = RetryPolicy::bound(range->field);
        const bool millis = bound && bound->unit == RetryPolicy::Bound::Unit::Millis;
        const QString key = QLatin1String(range->field)
            + (millis ? QStringLiteral("Ms") : QString());
        o.fail(key, range->text);
        return std::nullopt;
    }
    return policy;
}

QJsonObject retryPolicyToJson(const RetryPolicy &policy)
{
    const QString jitter = policy.jitter == JitterMode::Full ? QStringLiteral("full")
        : policy.jitter == JitterMode::Decorrelated          ? QStringLiteral("decorrelated")
                                                             : QStringLiteral("none");
    return {{QStringLiteral("attemptTimeoutMs"), qint64(policy.attemptTimeout.count())},
            {QStringLiteral("maxRetries"), policy.maxRetries},
            {QStringLiteral("initialDelayMs"), qint64(policy.initialDelay.count())},
            {QStringLiteral("multiplier"), policy.multiplier},
            {QStringLiteral("maxDelayMs"), qint64(policy.maxDelay.count())},
            {QStringLiteral("retryAfterCapMs"), qint64(policy.retryAfterCap.count())},
            {QStringLiteral("jitter"), jitter}};
}

QJsonObject ManagedPolicy::recorded() const
{
    return {{QStringLiteral("version"), version}, {QStringLiteral("origin"), origin}};
}

std::optional<ManagedPolicy> ManagedPolicy::read(const QByteArray &json, const QString &origin,
                                                 const QStringList &lockableKeys, QString *problem)
{
    QString found;
    const auto refuse = [&](const QString &why) -> std::optional<ManagedPolicy> {
        if (problem)
            *problem = why;
        return std::nullopt;
    };
    if (json.size() > maxBytes)
        return refuse(PolicyWords::tr("larger than 1 MiB"));
    QJsonParseError error;
    const QJsonDocument document = QJsonDocument::fromJson(json, &error);
    if (error.error != QJsonParseError::NoError)
        return refuse(PolicyWords::tr("not JSON (%1 at character %2)")
                          .arg(error.errorString())
                          .arg(error.offset));
    if (!document.isObject())
        return refuse(PolicyWords::tr("expected a JSON object"));
    const QJsonObject top = document.object();
    if (depthOf(top) > maxDepth)
        return refuse(PolicyWords::tr("nested deeper than %1 levels").arg(maxDepth));

    ManagedPolicy policy;
    policy.origin = origin;
    Fields o(top, QString(), &found);
    std::optional<QJsonObject> toolRetry;
    std::optional<QJsonObject> modelRetry;
    std::optional<QJsonObject> mcpServers;
    std::optional<QJsonObject> chain;
    std::optional<QStringList> locked;
    o.text(QStringLiteral("version"), &policy.version, maxVersionLength, true);
    o.object(QStringLiteral("toolRetry"), &toolRetry);
    o.object(QStringLiteral("modelRetry"), &modelRetry);
    o.object(QStringLiteral("mcpServers"), &mcpServers);
    o.object(QStringLiteral("providerChain"), &chain);
    o.names(QStringLiteral("locked"), &locked, maxLockedSettings);
    if (!o.noOtherKeys())
        return refuse(found);
    if (policy.version.trimmed().isEmpty())
        return refuse(PolicyWords::tr("version: is empty"));

    if (toolRetry) {
        Fields t(*toolRetry, QStringLiteral("toolRetry"), &found);
        std::optional<QJsonObject> byDefault;
        std::optional<QJsonObject> tools;
        t.object(QStringLiteral("default"), &byDefault);
        t.object(QStringLiteral("tools"), &tools);
        if (!t.noOtherKeys())
            return refuse(found);
        if (byDefault) {
            policy.toolDefault = retryPolicyFromJson(*byDefault,
                                                     t.pathOf(QStringLiteral("default")),
                                                     RetryPolicy::defaults(), &found);
            if (!policy.toolDefault)
                return refuse(found);
        }
        if (tools) {
            const QString path = t.pathOf(QStringLiteral("tools"));
            if (tools->size() > maxToolPolicies)
                return refuse(
                    PolicyWords::tr("%1: more than %2 tools").arg(path).arg(maxToolPolicies));
            for (auto it = tools->begin(); it != tools->end(); ++it) {
                const QString toolPath = path + QLatin1Char('.') + it.key();
                if (it.key().isEmpty() || it.key().size() > 128)
                    return refuse(PolicyWords::tr("%1: not a tool's name").arg(toolPath));
                if (!it.value().isObject())
                    return refuse(PolicyWords::tr("%1: expected an object").arg(toolPath));
                const std::optional<RetryPolicy> tool = retryPolicyFromJson(
                    it.value().toObject(), toolPath,
                    policy.toolDefault.value_or(RetryPolicy::defaults()), &found);
                if (!tool)
                    return refuse(found);
                policy.toolPolicies.insert(it.key(), *tool);
            }
        }
    }
    if (modelRetry) {
        policy.modelRetry = retryPolicyFromJson(*modelRetry, QStringLiteral("modelRetry"),
                                                RetryPolicy::defaults(), &found);
        if (!policy.modelRetry)
            return refuse(found);
    }
    if (mcpServers) {
        Fields m(*mcpServers, QStringLiteral("mcpServers"), &found);
        m.names(QStringLiteral("allowed"), &policy.allowedMcpServers, maxMcpServers);
        if (!m.noOtherKeys())
            return refuse(found);
        if (!policy.allowedMcpServers)
            return refuse(PolicyWords::tr("mcpServers.allowed: is missing"));
    }
    if (chain) {
        PolicyProviderChain read;
        if (!readProviderChain(*chain, QStringLiteral("providerChain"), &read, &found))
            return refuse(found);
        policy.providerChain = read;
    }
    if (locked) {
        for (const QString &key : *locked) {
            if (!lockableKeys.contains(key))
                return refuse(PolicyWords::tr("locked: \"%1\" is not a setting a policy can "
                                              "lock (%2)")
                                  .arg(key, lockableKeys.join(QStringLiteral(", "))));
        }
        policy.locked = *locked;
    }
    return policy;
}

} // namespace AgentConsole
