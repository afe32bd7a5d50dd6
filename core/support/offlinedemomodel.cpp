#include "offlinedemomodel.h"

#include "../telemetry/logging.h"
#include "internal/lookupanswerwriter.h"
#include "internal/supportquestion.h"

#include <QHash>
#include <QMap>
#include <QSet>
#include <QJsonDocument>
#include <QJsonObject>
#include <QJsonParseError>
#include <QTimer>

namespace AgentConsole {
namespace {

using namespace Internal;

const QString &demoModelName()
{
    static const QString name = QStringLiteral("offline-demo");
    return name;
}

// One computed reply: the text chunks to stream, then the response finished() carries.
struct DemoTurn
{
    QStringList chunks;
    ChatResponse response;
};

DemoTurn textTurn(const QStringList &chunks)
{
    DemoTurn turn;
    turn.chunks = chunks;
    turn.response.model = demoModelName();
    turn.response.content = turn.chunks.join(QString());
    turn.response.finishReason = FinishReason::Stop;
    return turn;
}

qsizetype lastUserIndex(const QList<ChatMessage> &messages)
{
    for (qsizetype i = messages.size() - 1; i >= 0; --i) {
        if (messages.at(i).role == ChatMessage::Role::User)
            return i;
    }
    return -1;
}

// Tool results for the last question mean "answer now", however many rounds came before:
// the demo model never asks for a tool twice, so the agent loop cannot spin on it. A call
// without any result counts too (it is answered as "no result"), for the same reason.
bool hasToolRound(const QList<ChatMessage> &messages, qsizetype lastUser)
{
    for (qsizetype i = lastUser + 1; i < messages.size(); ++i) {
        const ChatMessage &message = messages.at(i);
        if (message.role == ChatMessage::Role::Tool
            || (message.role == ChatMessage::Role::Assistant && !message.toolCalls.isEmpty())) {
            return true;
        }
    }
    return false;
}

QString argumentText(const QJsonValue &value)
{
    if (value.isString())
        return value.toString();
    if (value.isDouble())
        return QString::number(value.toDouble(), 'g', 15);
    return {};
}

QString subjectOf(const QString &arguments)
{
    const QJsonObject object = QJsonDocument::fromJson(arguments.toUtf8()).object();
    for (const char *key : {"orderId", "sku"}) {
        const QJsonValue value = object.value(QLatin1String(key));
        if (value.isString() || value.isDouble())
            return argumentText(value);
    }
    return {};
}

// The order and the SKU a call was made for, as its arguments give them.
QList<NamedSubject> subjectsOfCall(const ModelToolCall &call)
{
    const QJsonObject object = QJsonDocument::fromJson(call.arguments.toUtf8()).object();
    QList<NamedSubject> subjects;
    const QString orderId = argumentText(object.value(QLatin1String("orderId")));
    if (!orderId.isEmpty())
        subjects.append({orderId, true});
    const QString sku = argumentText(object.value(QLatin1String("sku")));
    if (!sku.isEmpty())
        subjects.append({sku, false});
    return subjects;
}

// The latest turn before `lastUser` that named any order or SKU: what it named, in its question
// or in the arguments of the calls made for it, and what it looked up for its orders. A
// follow-up speaks of that turn; an older one, past a turn about something else, would be a
// guess.
struct EarlierTurn
{
    QList<NamedSubject> subjects;
    // The lookups made for each of its orders when they were the same for all of them
    // (status, logistics or both); empty when it looked up none, or different things.
    QList<LookupKind> orderKinds;
};

EarlierTurn latestTurn(const QList<ChatMessage> &messages, qsizetype lastUser)
{
    EarlierTurn turn;
    const auto add = [&turn](const QList<NamedSubject> &named) {
        for (const NamedSubject &subject : named) {
            if (!turn.subjects.contains(subject))
                turn.subjects.append(subject);
        }
    };
    qsizetype turnEnd = lastUser;
    for (qsizetype i = lastUser - 1; i >= 0; --i) {
        if (messages.at(i).role != ChatMessage::Role::User)
            continue;
        add(subjectsNamedIn(messages.at(i).content));
        // QMap, not QHash: iterated below, and the order must not differ between runs.
        QMap<QString, QList<LookupKind>> kindsByOrder;
        for (qsizetype j = i + 1; j < turnEnd; ++j) {
            for (const ModelToolCall &call : messages.at(j).toolCalls) {
                add(subjectsOfCall(call));
                const std::optional<LookupKind> kind = lookupKindForTool(call.name);
                if (!kind || *kind == LookupKind::Inventory)
                    continue;
                for (const NamedSubject &subject : subjectsOfCall(call)) {
                    QList<LookupKind> &kinds = kindsByOrder[subject.subject];
                    if (subject.isOrder && !kinds.contains(*kind))
                        kinds.append(*kind);
                }
            }
        }
        if (!turn.subjects.isEmpty()) {
            const bool same = std::all_of(kindsByOrder.cbegin(), kindsByOrder.cend(),
                                          [&kindsByOrder](const QList<LookupKind> &kinds) {
                                              return QSet<LookupKind>(kinds.cbegin(), kinds.cend())
                                                  == QSet<LookupKind>(
                                                         kindsByOrder.first().cbegin(),
                                                         kindsByOrder.first().cend());
                                          });
            if (!kindsByOrder.isEmpty() && same)
                turn.orderKinds = kindsByOrder.first();
            return turn;
        }
        turnEnd = i;
    }
    return turn;
}

// The ticket the previous turn asked the reason of: a ticket request that named its order but
// not what it is about, answered with that question and no createTicket call (the lookups it
// also asked for may have run). The next message may be that reason
// (SupportQuestion::ticketReasonIn).
std::optional<PlannedTicket> ticketAwaitingReason(const QList<ChatMessage> &messages,
                                                  qsizetype lastUser)
{
    for (qsizetype i = lastUser - 1; i >= 0; --i) {
        const ChatMessage &message = messages.at(i);
        const bool filed = std::any_of(message.toolCalls.cbegin(), message.toolCalls.cend(),
                                       [](const ModelToolCall &call) {
                                           return call.name == createTicketToolName();
                                       });
        if (filed)
            return std::nullopt;
        if (message.role != ChatMessage::Role::User)
            continue;
        const SupportQuestion earlier = SupportQuestion::parse(message.content);
        if (earlier.ticket && !earlier.ticket->orderId.isEmpty() && !earlier.ticket->reasonGiven)
            return earlier.ticket;
        return std::nullopt;
    }
    return std::nullopt;
}

// Anything that is not the JSON of ToolResult::toJson() is a failed lookup, never a fact.
LookupOutcome::State readToolContent(const QString &content, ToolResult *result)
{
    QJsonParseError error;
    const QJsonDocument document = QJsonDocument::fromJson(content.toUtf8(), &error);
    if (error.error != QJsonParseError::NoError || !document.isObject()
        || !document.object().value(QLatin1String("success")).isBool()) {
        return LookupOutcome::State::Malformed;
    }
    *result = ToolResult::fromJson(document.object());
    return LookupOutcome::State::Answered;
}

// The outcome of every lookup asked for since the last user message, in the order the calls
// were made. Results are matched to calls by tool call id; a lookup repeated in a later
// round keeps its first place and takes the later result.
QList<LookupOutcome> outcomesAfter(const QList<ChatMessage> &messages, qsizetype lastUser)
{
    QList<LookupOutcome> outcomes;
    // Used for look-ups only, never iterated: QHash order differs between runs.
    QHash<QString, qsizetype> slotByCallId;
    QHash<QString, qsizetype> slotByLookup;
    for (qsizetype i = lastUser + 1; i < messages.size(); ++i) {
        const ChatMessage &message = messages.at(i);
        if (message.role == ChatMessage::Role::Assistant) {
            for (const ModelToolCall &call : message.toolCalls) {
                const QString subject = subjectOf(call.arguments);
                const QString lookupKey = call.name + QLatin1Char('\n') + subject;
                qsizetype slot = subject.isEmpty() ? -1 : slotByLookup.value(lookupKey, -1);
                if (slot < 0) {
                    slot = outcomes.size();
                    outcomes.append({call.name, subject, LookupOutcome::State::Missing, {}});
                    if (!subject.isEmpty())
                        slotByLookup.insert(lookupKey, slot);
                }
                if (!call.id.isEmpty())
                    slotByCallId.insert(call.id, slot);
            }
        } else if (message.role == ChatMessage::Role::Tool) {
            qsizetype slot = slotByCallId.value(message.toolCallId, -1);
            if (slot < 0) {
                qCDebug(lcLlm) << "offline demo model: tool message without a known call"
                               << message.toolCallId;
                slot = outcomes.size();
                outcomes.append({message.toolName, {}, LookupOutcome::State::Missing, {}});
            }
            LookupOutcome &outcome = outcomes[slot];
            ToolResult result;
            outcome.state = readToolContent(message.content, &result);
            outcome.result = result;
            if (outcome.state == LookupOutcome::State::Malformed) {
                qCWarning(lcLlm) << "offline demo model: unreadable tool result for"
                                 << outcome.toolName << "of" << message.content.size() << "chars";
            }
        }
    }
    return outcomes;
}

bool isOffered(const QList<ToolDescriptor> &tools, const QString &name)
{
    return std::any_of(tools.cbegin(), tools.cend(),
                       [&name](const ToolDescriptor &tool) { return tool.name == name; });
}

QString compactJson(const QJsonObject &object)
{
    return QString::fromUtf8(QJsonDocument(object).toJson(QJsonDocument::Compact));
}

// What to say instead of calling createTicket for `ticket`, or nothing when it can be called.
QStringList ticketAskBack(const ChatRequest &request, const PlannedTicket &ticket,
                          const LookupAnswerWriter &writer)
{
    if (!isOffered(request.tools, createTicketToolName()))
        return writer.ticketNotOffered();
    if (ticket.orderId.isEmpty())
        return writer.askForTicketOrder();
    if (!ticket.reasonGiven)
        return writer.askForTicketReason(ticket.orderId);
    return {};
}

DemoTurn planTurn(const ChatRequest &request, const SupportQuestion &question)
{
    const LookupAnswerWriter writer(question.language);
    if (!question.ambiguousSubjects.isEmpty())
        return textTurn(writer.chunks(writer.askWhichSubject(question.ambiguousSubjects)));
    if (question.lookups.isEmpty() && !question.ticket)
        return textTurn(writer.chunks(writer.askForIdentifiers(question)));

    QList<ModelToolCall> calls;
    const auto call = [&calls](const QString &name, const QJsonObject &arguments) {
        calls.append(
            {QStringLiteral("call_%1").arg(calls.size() + 1), name, compactJson(arguments)});
    };
    for (const PlannedLookup &lookup : question.lookups) {
        const QString name = toolNameFor(lookup.kind);
        if (isOffered(request.tools, name))
            call(name, QJsonObject{{argumentNameFor(lookup.kind), lookup.subject}});
    }

    // The write comes after the reads: it waits for the staff member's confirmation, and by
    // then the answers they may want to see before confirming are already in.
    // When lookups run too, the answer turn says this after their results (answerTurn).
    QStringList ticketReply;
    if (question.ticket) {
        const PlannedTicket &ticket = *question.ticket;
        ticketReply = ticketAskBack(request, ticket, writer);
        if (ticketReply.isEmpty()) {
            call(createTicketToolName(),
                 QJsonObject{{QStringLiteral("orderId"), ticket.orderId},
                             {QStringLiteral("category"), ticket.category},
                             {QStringLiteral("description"), ticket.description}});
        }
    }

    if (calls.isEmpty()) {
        QStringList sentences = ticketReply;
        if (!question.lookups.isEmpty())
            sentences.append(writer.lookupsNotOffered(question.lookups));
        return textTurn(writer.chunks(sentences));
    }

    DemoTurn turn;
    turn.response.model = demoModelName();
    turn.response.toolCalls = calls;
    turn.response.finishReason = FinishReason::ToolCalls;
    return turn;
}

// The answer from the results; and when the question also asked for a ticket that could not be
// called (no order, no reason, no tool), what the planning turn would have said about it.
DemoTurn answerTurn(const ChatRequest &request, qsizetype lastUser, const QString &text,
                    Language language)
{
    const LookupAnswerWriter writer(language);
    const QList<LookupOutcome> outcomes = outcomesAfter(request.messages, lastUser);
    LookupAnswerWriter::Answer written = writer.answer(outcomes);
    const bool ticketCalled = std::any_of(outcomes.cbegin(), outcomes.cend(),
                                          [](const LookupOutcome &outcome) {
                                              return outcome.toolName == createTicketToolName();
                                          });
    const SupportQuestion question = SupportQuestion::parse(text);
    if (question.ticket && !ticketCalled)
        written.closing += ticketAskBack(request, *question.ticket, writer);
    return textTurn(writer.chunks(written));
}

// Delivers a precomputed turn the way a network model would: nothing before the caller is
// back in the event loop, then one chunk per timer tick, then finished() on a later tick.
class OfflineDemoReply final : public ChatReply
{
public:
    OfflineDemoReply(DemoTurn turn, Language language, std::chrono::milliseconds interval)
        : m_turn(std::move(turn))
        , m_language(language)
    {
        // Paced demos want even gaps; a coarse timer may fire several ms early or late.
        m_timer.setTimerType(Qt::PreciseTimer);
        m_timer.setInterval(interval);
        connect(&m_timer, &QTimer::timeout, this, &OfflineDemoReply::deliverNext);
        m_timer.start();
    }

    void abort() override
    {
        if (isFinished())
            return;
        m_timer.stop();
        ChatResponse response;
        response.model = demoModelName();
        response.finishReason = FinishReason::Error;
        response.errorCode = ModelError::Cancelled;
        response.errorMessage = m_language == Language::Chinese
            ? QStringLiteral("模型调用已取消。")
            : QStringLiteral("The model call was cancelled.");
        finishWith(std::move(response));
    }

private:
    void deliverNext()
    {
        if (m_next < m_turn.chunks.size()) {
            // Nothing is touched after the emit: a receiver may abort, or even delete, the
            // reply from its slot.
            Q_EMIT contentDelta(m_turn.chunks.at(m_next++));
            return;
        }
        m_timer.stop();
        finishWith(m_turn.response);
    }

    DemoTurn m_turn;
    Language m_language;
    QTimer m_timer{this};
    qsizetype m_next = 0;
};

} // namespace

OfflineDemoModel::OfflineDemoModel(QObject *parent)
    : ChatModel(parent)
{
}

QString OfflineDemoModel::modelName() const
{
    return demoModelName();
}

ChatReply *OfflineDemoModel::complete(const ChatRequest &request)
{
    const qsizetype lastUser = lastUserIndex(request.messages);
    const QString question = lastUser >= 0 ? request.messages.at(lastUser).content : QString();
    if (hasToolRound(request.messages, lastUser)) {
        const Language language = languageOf(question);
        return new OfflineDemoReply(answerTurn(request, lastUser, question, language), language,
                                    m_chunkInterval);
    }
    SupportQuestion parsed = SupportQuestion::parse(question);
    const std::optional<PlannedTicket> awaiting = ticketAwaitingReason(request.messages, lastUser);
    const std::optional<PlannedTicket> reasoned = awaiting
        ? SupportQuestion::ticketReasonIn(question, awaiting->orderId)
        : std::nullopt;
    if (reasoned) {
        parsed.lookups.clear();
        parsed.ticket = reasoned;
    } else if (parsed.isFollowUp()) {
        parsed.resolveFollowUp(latestTurn(request.messages, lastUser).subjects);
    } else if (parsed.namesOnlyOrders) {
        parsed.carryIntent(latestTurn(request.messages, lastUser).orderKinds);
    }
    return new OfflineDemoReply(planTurn(request, parsed), parsed.language, m_chunkInterval);
}

} // namespace AgentConsole
