#include "soakplan.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QStringList>

#include <algorithm>

namespace AgentConsole::Soak {
namespace {

// SplitMix64's finaliser: a well-mixed 64-bit hash of one value.
std::uint64_t mix(std::uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

// Where a draw is made; one domain per kind of decision.
enum Domain : std::uint64_t {
    Repeat = 1,
    RoundCount,
    CallCount,
    CallKind,
    Argument,
    ModelFaultDraw,
    ModelFaultKind,
    RouteFault,
    RouteDetail,
    Decline,
    Language,
    TicketInRound,
    FloodRound,
    QuietEpoch,
    SlowDraw,
};

const QStringList kOwnOrders{QStringLiteral("A1001"), QStringLiteral("A1002"),
    QStringLiteral("A1003"), QStringLiteral("A1004")};
// Another tenant's order, an order that does not exist, and one that is malformed.
const QStringList kOtherOrders{
    QStringLiteral("A2001"), QStringLiteral("A1099"), QStringLiteral("B77")};
const QStringList kSkus{QStringLiteral("SKU-100"), QStringLiteral("SKU-200"),
    QStringLiteral("SKU-300"), QStringLiteral("SKU-900"), QStringLiteral("SKU-404"),
    QStringLiteral("sku-1")};
const QStringList kCategories{QStringLiteral("RETURN"), QStringLiteral("EXCHANGE"),
    QStringLiteral("REFUND"), QStringLiteral("DAMAGED"), QStringLiteral("MISSING_ITEM"),
    QStringLiteral("OTHER")};

QString json(const QJsonObject &object)
{
    return QString::fromUtf8(QJsonDocument(object).toJson(QJsonDocument::Compact));
}

} // namespace

int TurnPlan::writes() const
{
    int count = 0;
    for (const QList<PlannedCall> &calls : rounds)
        count += int(std::count_if(calls.cbegin(), calls.cend(),
            [](const PlannedCall &call) { return call.name == QLatin1String("createTicket"); }));
    return count;
}

QString modelFaultName(ModelFault fault)
{
    switch (fault) {
    case ModelFault::None:
        return QStringLiteral("none");
    case ModelFault::RateLimited:
        return QStringLiteral("429");
    case ModelFault::RateLimitedRetryAfter:
        return QStringLiteral("429+retry-after-ms");
    case ModelFault::UnavailableRetryAfter:
        return QStringLiteral("503+Retry-After");
    case ModelFault::ServerError:
        return QStringLiteral("500");
    case ModelFault::MalformedJson:
        return QStringLiteral("malformed-json");
    case ModelFault::MalformedSse:
        return QStringLiteral("malformed-sse");
    case ModelFault::SlowHeaders:
        return QStringLiteral("slow-headers");
    case ModelFault::CutStream:
        return QStringLiteral("cut-stream");
    case ModelFault::StalledStream:
        return QStringLiteral("stalled-stream");
    case ModelFault::SlowStream:
        return QStringLiteral("slow-stream");
    }
    return QString();
}

SoakPlan::SoakPlan(const Settings &settings)
    : m_settings(settings)
{ }

double SoakPlan::uniform(std::uint64_t a, std::uint64_t b, std::uint64_t c, std::uint64_t d) const
{
    const std::uint64_t h = mix(mix(mix(mix(m_settings.seed ^ mix(a)) ^ b) ^ c) ^ d);
    return double(h >> 11) * (1.0 / 9007199254740992.0);
}

int SoakPlan::below(
    int bound, std::uint64_t a, std::uint64_t b, std::uint64_t c, std::uint64_t d) const
{
    return std::min(bound - 1, int(uniform(a, b, c, d) * bound));
}

bool SoakPlan::startsConversation(int turn) const
{
    return turn % std::max(1, m_settings.conversationTurns) == 0;
}

TurnPlan SoakPlan::turn(int turn, const TurnPlan *previous) const
{
    TurnPlan plan;
    plan.turn = turn;
    plan.declineWrites = uniform(Decline, turn) < 0.05;
    // Asking again under the last request id (agent-cli --request-id): its write must come
    // from the ledger, never run twice. Only within one conversation, and never a repeat of
    // a repeat.
    if (previous && !previous->repeat && !startsConversation(turn)
        && uniform(Repeat, turn) < 0.06) {
        plan.rounds = previous->rounds;
        plan.requestId = previous->requestId;
        plan.question = previous->question;
        plan.answer = previous->answer;
        plan.repeat = true;
        // Now and then with another description: the same key with other arguments.
        if (previous->writes() > 0 && uniform(Repeat, turn, 1) < 0.2) {
            plan.changedTicket = true;
            for (QList<PlannedCall> &calls : plan.rounds) {
                for (PlannedCall &call : calls) {
                    if (call.name == QLatin1String("createTicket"))
                        call.arguments.replace(
                            QStringLiteral("soak "), QStringLiteral("soak (changed) "));
                }
            }
        }
        return plan;
    }

    plan.requestId = QStringLiteral("soak-%1").arg(turn);
    const double rounds = uniform(RoundCount, turn);
    // 10 % answer at once, most need one or two rounds, 2 % ask for more than the loop allows.
    const int roundCount = rounds < 0.10 ? 0
        : rounds < 0.65                  ? 1
        : rounds < 0.90                  ? 2
        : rounds < 0.98                  ? 3
                                         : 6;
    for (int r = 0; r < roundCount; ++r)
        plan.rounds.append(round(turn, r));
    const QString order = kOwnOrders.at(below(int(kOwnOrders.size()), Argument, turn, 99));
    const QString sku = kSkus.at(below(3, Argument, turn, 98));
    // The question is one the offline demo model understands too, for when the chain falls
    // back to it; it never asks for a ticket, so only the scripted model writes.
    plan.question = uniform(Language, turn) < 0.3
        ? QStringLiteral("查询订单 %1 的物流位置，%2 还有库存吗？(soak %3)")
              .arg(order, sku)
              .arg(turn)
        : QStringLiteral("Where is order %1, and is %2 in stock? (soak %3)")
              .arg(order, sku)
              .arg(turn);
    plan.answer = QStringLiteral("Soak turn %1: here is what the tools said.").arg(turn);
    return plan;
}

QList<PlannedCall> SoakPlan::round(int turn, int round) const
{
    QList<PlannedCall> calls;
    // A flood now and then: more calls in one message than the loop runs (16).
    const int count
        = uniform(FloodRound, turn, round) < 0.02 ? 18 : 1 + below(4, CallCount, turn, round);
    for (int i = 0; i < count; ++i)
        calls.append(call(turn, round, i));
    if (count <= 4 && uniform(TicketInRound, turn, round) < 0.22) {
        const QString order
            = kOwnOrders.at(below(int(kOwnOrders.size()), Argument, turn, round, 50));
        const QString category
            = kCategories.at(below(int(kCategories.size()), Argument, turn, round, 51));
        // Unique per planned write: a description in two tickets is one intent made twice.
        calls.insert(below(int(calls.size()) + 1, Argument, turn, round, 52),
            {QStringLiteral("createTicket"),
                json({{QStringLiteral("orderId"), order}, {QStringLiteral("category"), category},
                    {QStringLiteral("description"),
                        QStringLiteral("soak %1 turn %2 round %3: the item arrived damaged")
                            .arg(m_settings.seed)
                            .arg(turn)
                            .arg(round)}})});
    }
    return calls;
}

PlannedCall SoakPlan::call(int turn, int round, int index) const
{
    const double kind = uniform(CallKind, turn, round, index);
    const double pick = uniform(Argument, turn, round, index);
    const auto orderId = [&] {
        return pick < 0.85 ? kOwnOrders.at(int(pick / 0.85 * kOwnOrders.size()))
                           : kOtherOrders.at(std::min(int(kOtherOrders.size()) - 1,
                               int((pick - 0.85) / 0.15 * kOtherOrders.size())));
    };
    if (kind < 0.35)
        return {
            QStringLiteral("queryOrderStatus"), json({{QStringLiteral("orderId"), orderId()}})};
    if (kind < 0.65)
        return {QStringLiteral("queryLogistics"), json({{QStringLiteral("orderId"), orderId()}})};
    if (kind < 0.94) {
        const QString sku = kSkus.at(std::min(int(kSkus.size()) - 1, int(pick * kSkus.size())));
        return {QStringLiteral("queryInventory"), json({{QStringLiteral("sku"), sku}})};
    }
    if (kind < 0.97) // arguments that are not JSON: INVALID_ARGUMENT, nothing runs
        return {QStringLiteral("queryOrderStatus"), QStringLiteral("{\"orderId\": \"A10")};
    return {QStringLiteral("queryWeather"), QStringLiteral("{\"city\":\"Suzhou\"}")};
}

ModelFault SoakPlan::modelFault(int turn, int round, int attempt) const
{
    if (uniform(SlowDraw, turn, round, attempt) < m_settings.slowStreamRate)
        return ModelFault::SlowStream;
    if (uniform(ModelFaultDraw, turn, round, attempt) >= m_settings.modelFaultRate)
        return ModelFault::None;
    constexpr int kinds = int(ModelFault::StalledStream);
    return ModelFault(1 + below(kinds, ModelFaultKind, turn, round, attempt));
}

QJsonObject SoakPlan::routeFault(int epoch, int route, bool tickets) const
{
    const double draw = uniform(RouteFault, epoch, route);
    const auto detail = [&](int bound, int salt) {
        return below(bound, RouteDetail, epoch, route, salt);
    };
    static const int statuses[] = {429, 500, 502, 503, 504};
    if (draw < 0.50)
        return {};
    if (draw < 0.65) {
        QJsonObject fault{{QStringLiteral("failureProbability"), 0.05 + 0.05 * detail(6, 1)},
            {QStringLiteral("failureStatus"), statuses[detail(5, 2)]}};
        if (detail(2, 3) == 0)
            fault.insert(QStringLiteral("retryAfterSeconds"), 1);
        return fault;
    }
    if (draw < 0.75) // one in four past the attempt timeout
        return {{QStringLiteral("latencyMs"), 20 + 30 * detail(10, 4)}};
    if (draw < 0.85) {
        QJsonObject fault{{QStringLiteral("status"), statuses[detail(5, 5)]},
            {QStringLiteral("times"), 1 + detail(6, 6)}};
        if (detail(2, 7) == 0)
            fault.insert(QStringLiteral("retryAfterSeconds"), 1);
        return fault;
    }
    if (draw < 0.93) {
        // On tickets, half of the drops come after the ticket was committed.
        const bool committed = tickets && detail(2, 9) == 0;
        return {{committed ? QStringLiteral("commitThenDrop") : QStringLiteral("dropConnection"),
                    true},
            {QStringLiteral("times"), 1 + detail(4, 8)}};
    }
    if (draw < 0.97)
        return {};
    return {{QStringLiteral("hang"), true}}; // every request of the epoch, until the limit
}

QJsonObject SoakPlan::simFaults(int epoch) const
{
    static const char *const routes[] = {"orders", "logistics", "inventory", "tickets"};
    QJsonObject perRoute;
    if (uniform(QuietEpoch, epoch) >= 0.2) { // one epoch in five has no backend faults
        for (int route = 0; route < 4; ++route) {
            const QJsonObject fault = routeFault(epoch, route, route == 3);
            if (!fault.isEmpty())
                perRoute.insert(QLatin1String(routes[route]), fault);
        }
    }
    return {{QStringLiteral("description"), QStringLiteral("soak epoch %1").arg(epoch)},
        {QStringLiteral("seed"), double((m_settings.seed + std::uint64_t(epoch)) & 0xffffffffULL)},
        {QStringLiteral("hangLimitMs"), 2000}, {QStringLiteral("routes"), perRoute}};
}

QJsonObject SoakPlan::toolFaultPlan() const
{
    const auto flaky = [](double probability) {
        return QJsonObject{{QStringLiteral("failureProbability"), probability}};
    };
    return {{QStringLiteral("description"), QStringLiteral("soak: seeded failures on every tool")},
        {QStringLiteral("seed"), double(m_settings.seed & 0xffffffffULL)},
        {QStringLiteral("tools"),
            QJsonObject{{QStringLiteral("queryOrderStatus"), flaky(0.08)},
                {QStringLiteral("queryLogistics"), flaky(0.12)},
                {QStringLiteral("queryInventory"), flaky(0.08)},
                {QStringLiteral("createTicket"), flaky(0.08)}}}};
}

} // namespace AgentConsole::Soak
