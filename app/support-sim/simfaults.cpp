#include "simfaults.h"

#include "core/faults/seededdraw.h"

#include <QJsonDocument>
#include <QSet>

namespace AgentConsole {
namespace {

constexpr std::array<SimRoute, kSimRouteCount> kRoutes{SimRoute::Orders, SimRoute::Logistics,
                                                       SimRoute::Inventory, SimRoute::Tickets};

// Statuses a fault may answer with: the failures a real backend or its gateway produces.
const QSet<int> &faultStatuses()
{
    static const QSet<int> statuses{400, 401, 403, 404, 408, 409, 422,
                                    429, 500, 501, 502, 503, 504};
    return statuses;
}

bool isWholeNumber(const QJsonValue &value, double low, double high)
{
    const double number = value.toDouble();
    return value.isDouble() && number >= low && number <= high && number == double(qint64(number));
}

bool readRoute(const QString &name, const QJsonObject &json, RouteFault &fault, QString *error)
{
    const auto fail = [&](const QString &key, const QString &what) {
        if (error)
            *error = QStringLiteral("sim faults: routes.%1.%2: %3").arg(name, key, what);
        return false;
    };
    const QString statusHint = QStringLiteral("expected one of 400 401 403 404 408 409 422 429 "
                                              "500 501 502 503 504");
    for (auto it = json.begin(); it != json.end(); ++it) {
        const QString key = it.key();
        const QJsonValue value = it.value();
        if (key == QLatin1String("latencyMs")) {
            if (!isWholeNumber(value, 0, 600'000))
                return fail(key, QStringLiteral("expected a whole number from 0 to 600000"));
            fault.latencyMs = value.toInt();
        } else if (key == QLatin1String("hang") || key == QLatin1String("dropConnection")) {
            if (!value.isBool())
                return fail(key, QStringLiteral("expected true or false"));
            (key == QLatin1String("hang") ? fault.hang : fault.dropConnection) = value.toBool();
        } else if (key == QLatin1String("commitThenDrop")
                   || key == QLatin1String("commitThenHang")) {
            if (name != SimFaults::routeName(SimRoute::Tickets))
                return fail(key, QStringLiteral("only the tickets route commits anything"));
            if (!value.isBool())
                return fail(key, QStringLiteral("expected true or false"));
            (key == QLatin1String("commitThenDrop") ? fault.commitThenDrop : fault.commitThenHang)
                = value.toBool();
        } else if (key == QLatin1String("status") || key == QLatin1String("failureStatus")) {
            if (!value.isDouble() || !faultStatuses().contains(value.toInt())
                || value.toDouble() != double(value.toInt()))
                return fail(key, statusHint);
            (key == QLatin1String("status") ? fault.status : fault.failureStatus) = value.toInt();
        } else if (key == QLatin1String("times")) {
            if (!isWholeNumber(value, -1, 1'000'000))
                return fail(key, QStringLiteral("expected a whole number from -1 to 1000000"));
            fault.times = value.toInt();
        } else if (key == QLatin1String("retryAfterSeconds")) {
            if (!isWholeNumber(value, -1, 86'400))
                return fail(key, QStringLiteral("expected a whole number from -1 to 86400"));
            fault.retryAfterSeconds = value.toInt();
        } else if (key == QLatin1String("failureProbability")) {
            if (!value.isDouble() || value.toDouble() < 0.0 || value.toDouble() > 1.0)
                return fail(key, QStringLiteral("expected a number from 0 to 1"));
            fault.failureProbability = value.toDouble();
        } else {
            return fail(key, QStringLiteral("unknown key"));
        }
    }
    if (fault.commitThenDrop && (fault.status != 0 || fault.dropConnection))
        return fail(QStringLiteral("commitThenDrop"),
                    QStringLiteral("excludes status and dropConnection"));
    // `hang` would hold the status queries too, and the write would never be committed.
    if (fault.commitThenHang
        && (fault.status != 0 || fault.dropConnection || fault.commitThenDrop || fault.hang))
        return fail(QStringLiteral("commitThenHang"),
                    QStringLiteral("excludes status, dropConnection, commitThenDrop and hang"));
    if (json.contains(QLatin1String("times")) && fault.status == 0 && !fault.dropConnection
        && !fault.commitThenDrop && !fault.commitThenHang)
        return fail(QStringLiteral("times"),
                    QStringLiteral("needs status, dropConnection, commitThenDrop or "
                                   "commitThenHang"));
    return true;
}

QJsonObject routeJson(const RouteFault &fault)
{
    QJsonObject json;
    if (fault.latencyMs > 0)
        json.insert(QStringLiteral("latencyMs"), fault.latencyMs);
    if (fault.hang)
        json.insert(QStringLiteral("hang"), true);
    if (fault.status != 0)
        json.insert(QStringLiteral("status"), fault.status);
    if (fault.dropConnection)
        json.insert(QStringLiteral("dropConnection"), true);
    if (fault.commitThenDrop)
        json.insert(QStringLiteral("commitThenDrop"), true);
    if (fault.commitThenHang)
        json.insert(QStringLiteral("commitThenHang"), true);
    if (fault.status != 0 || fault.dropConnection || fault.commitThenDrop || fault.commitThenHang)
        json.insert(QStringLiteral("times"), fault.times);
    if (fault.retryAfterSeconds >= 0)
        json.insert(QStringLiteral("retryAfterSeconds"), fault.retryAfterSeconds);
    if (fault.failureProbability > 0) {
        json.insert(QStringLiteral("failureProbability"), fault.failureProbability);
        json.insert(QStringLiteral("failureStatus"), fault.failureStatus);
    }
    return json;
}

} // namespace

QString SimFaults::routeName(SimRoute route)
{
    switch (route) {
    case SimRoute::Orders:
        return QStringLiteral("orders");
    case SimRoute::Logistics:
        return QStringLiteral("logistics");
    case SimRoute::Inventory:
        return QStringLiteral("inventory");
    case SimRoute::Tickets:
        return QStringLiteral("tickets");
    }
    return {};
}

std::optional<SimFaults> SimFaults::fromJson(const QByteArray &json, QString *error)
{
    const auto fail = [error](const QString &what) -> std::optional<SimFaults> {
        if (error)
            *error = QStringLiteral("sim faults: ") + what;
        return std::nullopt;
    };
    QJsonParseError parseError;
    const QJsonDocument document = QJsonDocument::fromJson(json, &parseError);
    if (parseError.error != QJsonParseError::NoError)
        return fail(QStringLiteral("not valid JSON at offset %1 (%2)")
                        .arg(parseError.offset)
                        .arg(parseError.errorString()));
    if (!document.isObject())
        return fail(QStringLiteral("the top level must be an object"));

    SimFaults faults;
    const QJsonObject root = document.object();
    for (auto it = root.begin(); it != root.end(); ++it) {
        const QString key = it.key();
        if (key == QLatin1String("description")) {
            if (!it.value().isString())
                return fail(QStringLiteral("description: expected a string"));
            faults.m_description = it.value().toString();
        } else if (key == QLatin1String("seed")) {
            if (!isWholeNumber(it.value(), 0, 9.0e15))
                return fail(QStringLiteral("seed: expected a whole number >= 0"));
            faults.m_seed = quint64(it.value().toDouble());
        } else if (key == QLatin1String("hangLimitMs")) {
            if (!isWholeNumber(it.value(), 1, 600'000))
                return fail(QStringLiteral("hangLimitMs: expected a whole number from 1 to "
                                           "600000"));
            faults.m_hangLimitMs = it.value().toInt();
        } else if (key == QLatin1String("routes")) {
            if (!it.value().isObject())
                return fail(QStringLiteral("routes: expected an object"));
            const QJsonObject routes = it.value().toObject();
            for (auto route = routes.begin(); route != routes.end(); ++route) {
                const auto known = std::find_if(kRoutes.begin(), kRoutes.end(), [&](SimRoute r) {
                    return routeName(r) == route.key();
                });
                if (known == kRoutes.end())
                    return fail(QStringLiteral("routes.%1: unknown route (orders, logistics, "
                                               "inventory, tickets)")
                                    .arg(route.key()));
                if (!route.value().isObject())
                    return fail(QStringLiteral("routes.%1: expected an object").arg(route.key()));
                RouteFault fault;
                if (!readRoute(route.key(), route.value().toObject(), fault, error))
                    return std::nullopt;
                faults.setFault(*known, fault);
            }
        } else {
            return fail(QStringLiteral("%1: unknown key").arg(key));
        }
    }
    return faults;
}

QJsonObject SimFaults::toJson() const
{
    QJsonObject routes;
    for (SimRoute route : kRoutes) {
        if (const auto fault = faultFor(route))
            routes.insert(routeName(route), routeJson(*fault));
    }
    QJsonObject json{{QStringLiteral("seed"), double(m_seed)},
                     {QStringLiteral("hangLimitMs"), m_hangLimitMs},
                     {QStringLiteral("routes"), routes}};
    if (!m_description.isEmpty())
        json.insert(QStringLiteral("description"), m_description);
    return json;
}

std::optional<RouteFault> SimFaults::faultFor(SimRoute route) const
{
    return m_routes[std::size_t(route)];
}

void SimFaults::setFault(SimRoute route, const RouteFault &fault)
{
    m_routes[std::size_t(route)] = fault;
}

SimDecision SimFaults::decide(SimRoute route, bool isWrite)
{
    const quint64 requestNumber = ++m_requestNumbers[std::size_t(route)];
    std::optional<RouteFault> &slot = m_routes[std::size_t(route)];
    SimDecision decision;
    if (!slot)
        return decision;
    RouteFault &fault = *slot;
    decision.latencyMs = fault.latencyMs;
    if (fault.hang) {
        decision.action = SimDecision::Action::Hang;
        return decision;
    }
    const bool commitsThenDrops = fault.commitThenDrop && isWrite;
    const bool commitsThenHangs = fault.commitThenHang && isWrite;
    if ((fault.dropConnection || fault.status != 0 || commitsThenDrops || commitsThenHangs)
        && fault.times != 0) {
        if (fault.times > 0)
            --fault.times;
        if (fault.dropConnection) {
            decision.action = SimDecision::Action::Drop;
        } else if (commitsThenDrops) {
            decision.action = SimDecision::Action::CommitThenDrop;
        } else if (commitsThenHangs) {
            decision.action = SimDecision::Action::CommitThenHang;
        } else {
            decision.action = SimDecision::Action::Respond;
            decision.status = fault.status;
            decision.retryAfterSeconds = fault.retryAfterSeconds;
        }
        return decision;
    }
    if (fault.failureProbability > 0
        && seededUnitDraw(m_seed, {routeName(route).toUtf8(), QByteArray::number(requestNumber)})
            < fault.failureProbability) {
        decision.action = SimDecision::Action::Respond;
        decision.status = fault.failureStatus;
        decision.retryAfterSeconds = fault.retryAfterSeconds;
    }
    return decision;
}

} // namespace AgentConsole
