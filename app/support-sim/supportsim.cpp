#include "supportsim.h"

#include "core/support/supportfailures.h"
#include "core/support/supportstore.h"
#include "core/support/ticketrequest.h"

#include <QHttpServer>
#include <QHttpServerRequest>
#include <QHttpServerResponder>
#include <QJsonDocument>
#include <QLoggingCategory>
#include <QPointer>
#include <QRegularExpression>
#include <QTcpSocket>
#include <QTimer>

#include <functional>

Q_LOGGING_CATEGORY(lcSim, "agentconsole.sim", QtWarningMsg)

namespace AgentConsole {
namespace {

using StatusCode = QHttpServerResponder::StatusCode;

QJsonObject errorBody(const char *code)
{
    return QJsonObject{{QStringLiteral("error"), QString::fromLatin1(code)}};
}

// The API's errors that are result codes are spelled by their names (the console reads them
// back as those codes): ORDER_NOT_FOUND, INVALID_ARGUMENT, ...
QJsonObject errorBody(ResultCode::Code code)
{
    return QJsonObject{{QStringLiteral("error"), ResultCode::wireName(code)}};
}

void send(QHttpServerResponder &responder, int status, const QJsonObject &body,
          int retryAfterSeconds = -1)
{
    const QByteArray bytes = QJsonDocument(body).toJson(QJsonDocument::Compact);
    responder.writeStatusLine(StatusCode(status));
    responder.writeHeader("Content-Type", "application/json");
    responder.writeHeader("Content-Length", QByteArray::number(bytes.size()));
    if (retryAfterSeconds >= 0)
        responder.writeHeader("Retry-After", QByteArray::number(retryAfterSeconds));
    responder.writeBody(bytes);
}

// An answer that is not given at once: after a latency, never (a hang, bounded by the hang
// limit), or as a dropped connection. Holds the responder and watches its socket: QHttpServer
// deletes a socket when its peer disconnects, and a responder must not write to it after that.
class DeferredAnswer final : public QObject
{
public:
    using Action = std::function<void(QHttpServerResponder &)>;

    DeferredAnswer(QHttpServerResponder &&responder, int delayMs, Action action,
                   std::function<void()> clientGone, QObject *parent)
        : QObject(parent)
        , m_responder(std::move(responder))
        , m_socket(m_responder.socket())
        , m_action(std::move(action))
        , m_clientGone(std::move(clientGone))
    {
        if (!m_socket) {
            finish();
            return;
        }
        // Held on purpose: the connection is not idle while the answer waits.
        SimConnectionGuard::holdAnswer(m_socket);
        connect(m_socket, &QAbstractSocket::disconnected, this, [this] {
            if (m_done)
                return;
            m_clientGone();
            finish();
        });
        m_timer.setSingleShot(true);
        m_timer.setTimerType(Qt::PreciseTimer);
        connect(&m_timer, &QTimer::timeout, this, [this] {
            if (m_done)
                return;
            m_done = true; // before the action: a drop disconnects synchronously
            if (m_socket && m_socket->state() == QAbstractSocket::ConnectedState)
                m_action(m_responder);
            finish();
        });
        m_timer.start(delayMs);
    }

private:
    void finish()
    {
        if (m_socket && !m_released) {
            m_released = true;
            SimConnectionGuard::releaseAnswer(m_socket);
        }
        m_done = true;
        m_timer.stop();
        deleteLater();
    }

    QHttpServerResponder m_responder;
    QPointer<QTcpSocket> m_socket;
    Action m_action;
    std::function<void()> m_clientGone;
    QTimer m_timer;
    bool m_done = false;
    bool m_released = false;
};

const QRegularExpression &orderIdPattern()
{
    static const QRegularExpression pattern(QStringLiteral("^A\\d{4,10}$"));
    return pattern;
}

const QRegularExpression &skuPattern()
{
    static const QRegularExpression pattern(QStringLiteral("^SKU-\\d{1,10}$"));
    return pattern;
}

} // namespace

QJsonObject SupportSim::Stats::toJson() const
{
    QJsonObject perRoute;
    for (std::size_t route = 0; route < kSimRouteCount; ++route)
        perRoute.insert(SimFaults::routeName(SimRoute(route)), requests[route]);
    return QJsonObject{{QStringLiteral("requests"), perRoute},
                       {QStringLiteral("clientAborts"), clientAborts},
                       {QStringLiteral("dropped"), dropped},
                       {QStringLiteral("hangLimitReached"), hangLimitReached},
                       {QStringLiteral("ticketsCreated"), ticketsCreated},
                       {QStringLiteral("ticketReplays"), ticketReplays},
                       {QStringLiteral("ticketConflicts"), ticketConflicts},
                       {QStringLiteral("refused"), refused},
                       {QStringLiteral("idleClosed"), idleClosed}};
}

// Who is asking, or why they are refused.
struct SupportSim::Caller
{
    std::optional<SimResponse> refusal;
    QString userId;
    QString tenantId;
};

SupportSim::Caller SupportSim::authorize(const QByteArray &staffId,
                                         const QByteArray &tenantId) const
{
    if (staffId.isEmpty())
        return {SimResponse{401, errorBody("UNAUTHENTICATED")}, {}, {}};
    const auto staff = m_store->staffMember(QString::fromUtf8(staffId));
    if (!staff)
        return {SimResponse{401, errorBody("UNAUTHENTICATED")}, {}, {}};
    if (tenantId.isEmpty())
        return {SimResponse{400, errorBody("TENANT_REQUIRED")}, {}, {}};
    const QString tenant = QString::fromUtf8(tenantId);
    if (staff->tenantId != tenant)
        return {SimResponse{403, errorBody("FORBIDDEN")}, {}, {}};
    return {std::nullopt, staff->userId, tenant};
}

QJsonObject SupportSim::statsJson() const
{
    QJsonObject json = m_stats.toJson();
    // Asked of the data itself, not counted: this is the check that must read 0.
    json.insert(QStringLiteral("duplicateTickets"), m_store->duplicateTicketKeys());
    return json;
}

SupportSim::SupportSim(std::shared_ptr<SupportStore> store, SimFaults faults, QObject *parent)
    : QObject(parent)
    , m_store(std::move(store))
    , m_faults(std::move(faults))
    , m_server(std::make_unique<QHttpServer>())
    , m_pending(std::make_unique<QObject>())
{
    addRoutes();
}

SupportSim::~SupportSim() = default;

quint16 SupportSim::listen(const QHostAddress &address, quint16 port, QString *error)
{
    auto guard = std::make_unique<SimConnectionGuard>(m_limits);
    if (!guard->listen(address, port)) {
        if (error)
            *error = QStringLiteral("cannot listen on %1:%2 (%3)")
                         .arg(address.toString())
                         .arg(port)
                         .arg(guard->errorString());
        return 0;
    }
    connect(guard.get(), &SimConnectionGuard::refused, this, [this] { ++m_stats.refused; });
    connect(guard.get(), &SimConnectionGuard::idleClosed, this, [this] { ++m_stats.idleClosed; });
    const quint16 bound = guard->serverPort();
    m_server->bind(guard.release()); // the server takes it as its child
    return bound;
}

void SupportSim::setFaults(SimFaults faults)
{
    m_faults = std::move(faults);
}

void SupportSim::addRoutes()
{
    using Method = QHttpServerRequest::Method;
    // The longer path first: the router takes the first rule that matches.
    m_server->route(QStringLiteral("/api/v1/orders/<arg>/logistics"), Method::Get,
                    [this](const QString &orderId, const QHttpServerRequest &request,
                           QHttpServerResponder &&responder) {
                        serve(SimRoute::Logistics, request, std::move(responder), [&] {
                            return answer(SimRoute::Logistics, orderId,
                                          request.value("X-Staff-Id"),
                                          request.value("X-Tenant-Id"));
                        });
                    });
    m_server->route(QStringLiteral("/api/v1/orders/<arg>/tickets"), Method::Get,
                    [this](const QString &orderId, const QHttpServerRequest &request,
                           QHttpServerResponder &&responder) {
                        serve(SimRoute::Tickets, request, std::move(responder), [&] {
                            return orderTickets(orderId, request.value("X-Staff-Id"),
                                                request.value("X-Tenant-Id"));
                        });
                    });
    m_server->route(QStringLiteral("/api/v1/orders/<arg>"), Method::Get,
                    [this](const QString &orderId, const QHttpServerRequest &request,
                           QHttpServerResponder &&responder) {
                        serve(SimRoute::Orders, request, std::move(responder), [&] {
                            return answer(SimRoute::Orders, orderId, request.value("X-Staff-Id"),
                                          request.value("X-Tenant-Id"));
                        });
                    });
    m_server->route(QStringLiteral("/api/v1/inventory/<arg>"), Method::Get,
                    [this](const QString &sku, const QHttpServerRequest &request,
                           QHttpServerResponder &&responder) {
                        serve(SimRoute::Inventory, request, std::move(responder), [&] {
                            return answer(SimRoute::Inventory, sku, request.value("X-Staff-Id"),
                                          request.value("X-Tenant-Id"));
                        });
                    });
    m_server->route(QStringLiteral("/api/v1/tickets"), Method::Post,
                    [this](const QHttpServerRequest &request, QHttpServerResponder &&responder) {
                        serve(SimRoute::Tickets, request, std::move(responder), [&] {
                            return createTicket(request.value("X-Staff-Id"),
                                                request.value("X-Tenant-Id"),
                                                request.value("Idempotency-Key"), request.body());
                        });
                    });
    m_server->route(QStringLiteral("/api/v1/tickets"), Method::Get,
                    [this](const QHttpServerRequest &request, QHttpServerResponder &&responder) {
                        serve(SimRoute::Tickets, request, std::move(responder), [&] {
                            return ticketStatus(
                                request.value("X-Staff-Id"), request.value("X-Tenant-Id"),
                                request.query().queryItemValue(QStringLiteral("idempotencyKey"),
                                                               QUrl::FullyDecoded));
                        });
                    });

    m_server->route(QStringLiteral("/sim/faults"), Method::Get,
                    [this](const QHttpServerRequest &, QHttpServerResponder &&responder) {
                        send(responder, 200, m_faults.toJson());
                    });
    m_server->route(QStringLiteral("/sim/faults"), Method::Put,
                    [this](const QHttpServerRequest &request, QHttpServerResponder &&responder) {
                        QString error;
                        auto faults = SimFaults::fromJson(request.body(), &error);
                        if (!faults) {
                            QJsonObject body = errorBody("INVALID_FAULTS");
                            body.insert(QStringLiteral("detail"), error);
                            send(responder, 400, body);
                            return;
                        }
                        setFaults(std::move(*faults));
                        qCInfo(lcSim).noquote()
                            << "faults replaced:"
                            << QJsonDocument(m_faults.toJson()).toJson(QJsonDocument::Compact);
                        send(responder, 200, m_faults.toJson());
                    });
    m_server->route(QStringLiteral("/sim/faults/reset"), Method::Post,
                    [this](const QHttpServerRequest &, QHttpServerResponder &&responder) {
                        setFaults(SimFaults());
                        send(responder, 200, m_faults.toJson());
                    });
    m_server->route(QStringLiteral("/sim/stats"), Method::Get,
                    [this](const QHttpServerRequest &, QHttpServerResponder &&responder) {
                        send(responder, 200, statsJson());
                    });
    m_server->route(QStringLiteral("/sim/stats/reset"), Method::Post,
                    [this](const QHttpServerRequest &, QHttpServerResponder &&responder) {
                        resetStats();
                        send(responder, 200, statsJson());
                    });
}

SimResponse SupportSim::answer(SimRoute route, const QString &key, const QByteArray &staffId,
                               const QByteArray &tenantId) const
{
    const Caller caller = authorize(staffId, tenantId);
    if (caller.refusal)
        return *caller.refusal;
    const QString &tenant = caller.tenantId;

    const bool isSku = route == SimRoute::Inventory;
    if (!(isSku ? skuPattern() : orderIdPattern()).match(key).hasMatch())
        return {400, errorBody(ResultCode::InvalidArgument)};

    StoreAnswer answer;
    ResultCode::Code notFound = SupportCode::OrderNotFound;
    switch (route) {
    case SimRoute::Orders:
        answer = m_store->order(tenant, key);
        break;
    case SimRoute::Logistics:
        answer = m_store->logistics(tenant, key);
        notFound = SupportCode::LogisticsNotFound;
        break;
    case SimRoute::Inventory:
        answer = m_store->inventory(tenant, key);
        notFound = SupportCode::SkuNotFound;
        break;
    case SimRoute::Tickets:
        // Tickets have their own handlers (createTicket, ticketStatus).
        Q_ASSERT(false);
        return {500, errorBody("INTERNAL")};
    }
    switch (answer.status) {
    case StoreAnswer::Status::Found:
        return {200, answer.data};
    case StoreAnswer::Status::NotFound:
        // A shipment of an order that does not exist is ORDER_NOT_FOUND, as the store says.
        return {404, errorBody(answer.notFoundCode.value_or(notFound))};
    case StoreAnswer::Status::Failed:
        break;
    }
    qCWarning(lcSim).noquote() << "store error:" << answer.detail;
    return {500, errorBody("INTERNAL")};
}

SimResponse SupportSim::createTicket(const QByteArray &staffId, const QByteArray &tenantId,
                                     const QByteArray &idempotencyKey, const QByteArray &body)
{
    const Caller caller = authorize(staffId, tenantId);
    if (caller.refusal)
        return *caller.refusal;
    const QString key = QString::fromUtf8(idempotencyKey);
    if (!TicketRequest::keyProblem(key).isEmpty())
        return {400, errorBody("IDEMPOTENCY_KEY_REQUIRED")};
    const QJsonDocument document = QJsonDocument::fromJson(body);
    const TicketRequest request = TicketRequest::fromJson(document.object());
    const QString problem = document.isObject() ? request.problem()
                                                : QStringLiteral("the body is not a JSON object");
    if (!problem.isEmpty()) {
        QJsonObject refusal = errorBody(ResultCode::InvalidArgument);
        refusal.insert(QStringLiteral("detail"), problem);
        return {400, refusal};
    }

    const TicketAnswer answer = m_store->createTicket(caller.tenantId, caller.userId,
                                                      request.orderId, request.category,
                                                      request.description, key);
    switch (answer.status) {
    case TicketAnswer::Status::Created:
        ++m_stats.ticketsCreated;
        return {201, answer.ticket};
    case TicketAnswer::Status::Existed:
        ++m_stats.ticketReplays;
        return {200, answer.ticket};
    case TicketAnswer::Status::Conflict:
        ++m_stats.ticketConflicts;
        return {409, errorBody(ResultCode::IdempotencyConflict)};
    case TicketAnswer::Status::OrderNotFound:
        return {404, errorBody(SupportCode::OrderNotFound)};
    case TicketAnswer::Status::Invalid:
        return {400, errorBody(ResultCode::InvalidArgument)};
    case TicketAnswer::Status::Failed:
        break;
    }
    qCWarning(lcSim).noquote() << "store error:" << answer.detail;
    return {500, errorBody("INTERNAL")};
}

SimResponse SupportSim::orderTickets(const QString &orderId, const QByteArray &staffId,
                                     const QByteArray &tenantId) const
{
    const Caller caller = authorize(staffId, tenantId);
    if (caller.refusal)
        return *caller.refusal;
    if (!orderIdPattern().match(orderId).hasMatch())
        return {400, errorBody(ResultCode::InvalidArgument)};
    const StoreAnswer answer = m_store->orderTickets(caller.tenantId, orderId);
    switch (answer.status) {
    case StoreAnswer::Status::Found:
        return {200, answer.data};
    case StoreAnswer::Status::NotFound:
        return {404, errorBody(SupportCode::OrderNotFound)};
    case StoreAnswer::Status::Failed:
        break;
    }
    qCWarning(lcSim).noquote() << "store error:" << answer.detail;
    return {500, errorBody("INTERNAL")};
}

SimResponse SupportSim::ticketStatus(const QByteArray &staffId, const QByteArray &tenantId,
                                     const QString &idempotencyKey) const
{
    const Caller caller = authorize(staffId, tenantId);
    if (caller.refusal)
        return *caller.refusal;
    if (!TicketRequest::keyProblem(idempotencyKey).isEmpty())
        return {400, errorBody("IDEMPOTENCY_KEY_REQUIRED")};
    const StoreAnswer answer = m_store->ticketByIdempotencyKey(caller.tenantId, idempotencyKey);
    switch (answer.status) {
    case StoreAnswer::Status::Found:
        return {200, answer.data};
    case StoreAnswer::Status::NotFound:
        return {404, errorBody(kTicketNotFoundError)};
    case StoreAnswer::Status::Failed:
        break;
    }
    qCWarning(lcSim).noquote() << "store error:" << answer.detail;
    return {500, errorBody("INTERNAL")};
}

void SupportSim::serve(SimRoute route, const QHttpServerRequest &request,
                       QHttpServerResponder &&responder,
                       const std::function<SimResponse()> &respond)
{
    const bool isWrite = request.method() == QHttpServerRequest::Method::Post;
    ++m_stats.requests[std::size_t(route)];
    const SimDecision decision = m_faults.decide(route, isWrite);
    qCInfo(lcSim).noquote() << (isWrite ? "POST" : "GET") << request.url().path() << "request id"
                            << request.value("X-Request-Id") << "->" << int(decision.action)
                            << decision.status;

    const auto clientGone = [this] { ++m_stats.clientAborts; };
    const auto dropLater = [&](int delayMs) {
        // Even without latency the drop is deferred: closing the socket while QHttpServer is
        // still inside its request handler would keep it from cleaning the socket up.
        new DeferredAnswer(
            std::move(responder), delayMs,
            [this](QHttpServerResponder &held) {
                ++m_stats.dropped;
                held.socket()->abort();
            },
            clientGone, m_pending.get());
    };
    const auto hang = [&] {
        new DeferredAnswer(
            std::move(responder), m_faults.hangLimitMs(),
            [this](QHttpServerResponder &held) {
                ++m_stats.hangLimitReached;
                held.socket()->abort();
            },
            clientGone, m_pending.get());
    };
    switch (decision.action) {
    case SimDecision::Action::Hang:
        hang();
        return;
    case SimDecision::Action::Drop:
        dropLater(decision.latencyMs);
        return;
    case SimDecision::Action::CommitThenDrop:
        // The backend acts on the request at once; only its answer is lost (after the
        // latency, if any): the case where a client must ask before it retries.
        respond();
        dropLater(decision.latencyMs);
        return;
    case SimDecision::Action::CommitThenHang: {
        // As above, but the answer is held, and the commit is announced before the hold: a
        // crash test kills the client at that moment, with the ticket committed and unanswered.
        // A refused write (no ticket for the key) is held too, but announces nothing.
        const SimResponse response = respond();
        if (response.status == 200 || response.status == 201)
            Q_EMIT committedThenHeld(request.value("Idempotency-Key"));
        hang();
        return;
    }
    case SimDecision::Action::Respond:
    case SimDecision::Action::Serve:
        break;
    }

    SimResponse response;
    int retryAfter = -1;
    if (decision.action == SimDecision::Action::Respond) {
        response = {decision.status,
                    errorBody(decision.status == 429       ? "RATE_LIMITED"
                                  : decision.status >= 500 ? "UNAVAILABLE"
                                                           : "FAULT_INJECTED")};
        retryAfter = decision.retryAfterSeconds;
    } else {
        response = respond();
    }
    if (decision.latencyMs <= 0) {
        send(responder, response.status, response.body, retryAfter);
        return;
    }
    new DeferredAnswer(
        std::move(responder), decision.latencyMs,
        [response, retryAfter](QHttpServerResponder &held) {
            send(held, response.status, response.body, retryAfter);
        },
        clientGone, m_pending.get());
}

} // namespace AgentConsole
