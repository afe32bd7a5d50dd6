#include "scriptedmodel.h"

#include "fakeopenaiserver.h"

#include <QJsonArray>

namespace AgentConsole::Soak {

using Testing::FakeChunk;
using Testing::FakeResponse;
namespace Sse = Testing::Sse;

namespace {

// Which tool round a request belongs to: the assistant messages with tool calls since the
// staff member's latest question.
int roundOf(const QJsonObject &request)
{
    const QJsonArray messages = request.value(QLatin1String("messages")).toArray();
    int round = 0;
    for (const QJsonValue &value : messages) {
        const QJsonObject message = value.toObject();
        const QString role = message.value(QLatin1String("role")).toString();
        if (role == QLatin1String("user"))
            round = 0;
        else if (role == QLatin1String("assistant")
            && !message.value(QLatin1String("tool_calls")).toArray().isEmpty())
            ++round;
    }
    return round;
}

QList<FakeChunk> chunksOf(const QList<QByteArray> &events)
{
    QList<FakeChunk> chunks;
    for (const QByteArray &event : events)
        chunks.append({event, 0});
    return chunks;
}

FakeResponse toolCallsResponse(const TurnPlan &plan, int round)
{
    QList<QByteArray> events{Sse::role()};
    const QList<PlannedCall> &calls = plan.rounds.at(round);
    for (int i = 0; i < calls.size(); ++i) {
        const PlannedCall &call = calls.at(i);
        const QString id = QStringLiteral("call_%1_%2_%3").arg(plan.turn).arg(round).arg(i);
        // Arguments in two pieces, as providers stream them.
        const qsizetype half = call.arguments.size() / 2;
        events.append(Sse::toolCall(i, id, call.name, call.arguments.left(half)));
        events.append(Sse::toolArguments(i, call.arguments.mid(half)));
    }
    events.append(Sse::finish(QStringLiteral("tool_calls")));
    events.append(Sse::done());
    return FakeResponse::events(chunksOf(events));
}

FakeResponse answerResponse(const TurnPlan &plan)
{
    const qsizetype half = plan.answer.size() / 2;
    return FakeResponse::events(chunksOf({Sse::role(), Sse::content(plan.answer.left(half)),
        Sse::content(plan.answer.mid(half)), Sse::finish(QStringLiteral("stop")), Sse::done()}));
}

} // namespace

ScriptedModel::ScriptedModel(
    Testing::FakeOpenAiServer *server, const SoakPlan *plan, Timing timing, QObject *parent)
    : QObject(parent)
    , m_server(server)
    , m_plan(plan)
    , m_timing(timing)
{
    // Emitted before the server takes the next scripted response: the answer is made for
    // exactly this request.
    connect(server, &Testing::FakeOpenAiServer::requestReceived, this, &ScriptedModel::answer);
}

void ScriptedModel::setTurn(const TurnPlan &plan)
{
    m_turn = plan;
    m_attemptsOfRound.clear();
    m_server->clearRequests(); // nothing of earlier turns is kept
}

void ScriptedModel::answer(int index)
{
    ++m_requests;
    const int round = roundOf(m_server->requests().at(index).json);
    const int attempt = ++m_attemptsOfRound[round];
    const bool answers = round >= m_turn.rounds.size();
    FakeResponse normal = answers ? answerResponse(m_turn) : toolCallsResponse(m_turn, round);
    const ModelFault fault = m_plan->modelFault(m_turn.turn, round, attempt);
    ++m_faults[int(fault)];
    switch (fault) {
    case ModelFault::None:
        m_server->enqueue(normal);
        return;
    case ModelFault::RateLimited:
        m_server->enqueue(FakeResponse::error(
            429, QStringLiteral("rate_limit_exceeded"), QStringLiteral("slow down")));
        return;
    case ModelFault::RateLimitedRetryAfter: {
        FakeResponse response = FakeResponse::error(
            429, QStringLiteral("rate_limit_exceeded"), QStringLiteral("slow down"));
        response.headers.append(qMakePair(QByteArray("retry-after-ms"), QByteArray("30")));
        m_server->enqueue(response);
        return;
    }
    case ModelFault::UnavailableRetryAfter: {
        FakeResponse response = FakeResponse::error(
            503, QStringLiteral("server_overloaded"), QStringLiteral("busy"));
        response.headers.append(qMakePair(QByteArray("Retry-After"), QByteArray("1")));
        m_server->enqueue(response);
        return;
    }
    case ModelFault::ServerError:
        m_server->enqueue(
            FakeResponse::error(500, QStringLiteral("internal_error"), QStringLiteral("oops")));
        return;
    case ModelFault::MalformedJson: {
        FakeResponse response;
        response.body = QByteArrayLiteral("{\"id\":\"chatcmpl-x\",\"choices\":[{\"message\":");
        m_server->enqueue(response);
        return;
    }
    case ModelFault::MalformedSse:
        m_server->enqueue(FakeResponse::events(chunksOf({Sse::role(),
            QByteArrayLiteral("data: {\"choices\":[{\"delta\":{\"con\n\n"), Sse::done()})));
        return;
    case ModelFault::SlowHeaders:
        normal.headerDelayMs = m_timing.connectTimeoutMs + 200;
        m_server->enqueue(normal);
        return;
    case ModelFault::CutStream:
        normal.dropAfterChunks = 1;
        m_server->enqueue(normal);
        return;
    case ModelFault::StalledStream:
        normal.stallAfterChunks = 1;
        m_server->enqueue(normal);
        return;
    case ModelFault::SlowStream:
        for (int i = 0; i < 8; ++i)
            normal.chunks.prepend({Sse::role(), 0});
        for (FakeChunk &chunk : normal.chunks)
            chunk.delayMs = 450;
        m_server->enqueue(normal);
        return;
    }
}

} // namespace AgentConsole::Soak
