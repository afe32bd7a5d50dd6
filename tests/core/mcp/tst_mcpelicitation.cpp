// MCP elicitation (form mode): the question read and bounded from requestedSchema, the
// defaults applied (SEP-1034), the answer checked; through a session against the fake server
// (whose "ask" tool asks mid-call and answers the call with what it got back): accepted,
// declined, cancelled, withdrawn when the call times out, declined when nobody listens or the
// schema is not one MCP allows; and through the runtime, as the window and agent-cli see it.
#include "mcpcall.h"
#include "fakeopenaiserver.h"
#include "pseudoterminal.h"

#include "core/console/agentruntime.h"
#include "core/console/mcpservers.h"
#include "core/turn/agentloop.h"
#include "core/mcp/elicitation.h"
#include "core/mcp/mcpsession.h"
#include "core/mcp/stdiotransport.h"
#include "core/resilience/resultcode.h"
#include "core/resilience/toolexecutor.h"
#include "core/tools/toolregistry.h"

#include <QElapsedTimer>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QPointer>
#include <QProcess>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QTimer>

using namespace AgentConsole;
using namespace AgentConsole::Mcp;

namespace {

constexpr int kWaitMs = 10000; // an upper bound for waits, never a sleep

std::unique_ptr<Session> makeSession(bool elicitation)
{
    StdioTransport::Options transport;
    transport.serverName = QStringLiteral("fake-elicit");
    transport.program = QStringLiteral(FAKE_MCP_SERVER);
    transport.arguments = {QStringLiteral("elicit")};
    transport.terminateAfterMs = 300;
    transport.killAfterMs = 300;
    Session::Options options;
    options.elicitation = elicitation;
    return std::make_unique<Session>(std::make_unique<StdioTransport>(transport), options);
}

Reply await(PendingRequest *request)
{
    QSignalSpy finished(request, &PendingRequest::finished);
    if (!finished.wait(kWaitMs))
        return {{}, Error::of(Failure::Timeout, QStringLiteral("the test gave up")), {}};
    return finished.first().first().value<Reply>();
}

// `hardMaximumMs` > 0: the call asks for progress (as McpTool's calls do), with `timeoutMs` its
// idle timeout and `hardMaximumMs` its hard maximum.
PendingRequest *ask(Session *session, bool bad = false, int timeoutMs = 0, int hardMaximumMs = 0)
{
    RequestOptions options;
    options.timeoutMs = timeoutMs;
    options.hardMaximumMs = hardMaximumMs;
    options.progress = hardMaximumMs > 0;
    options.tag = QStringLiteral("op-1");
    return session->request(QStringLiteral("tools/call"),
                            {{QStringLiteral("name"), QStringLiteral("ask")},
                             {QStringLiteral("arguments"),
                              QJsonObject{{QStringLiteral("bad"), bad}}}},
                            options);
}

// A session to the fake server, started; null if it did not become ready.
std::unique_ptr<Session> startedSession()
{
    auto session = makeSession(true);
    QSignalSpy ready(session.get(), &Session::ready);
    session->start();
    return ready.wait(kWaitMs) ? std::move(session) : nullptr;
}

// Calls "ask" asking for progress (idle timeout `idleMs`, hard maximum `hardMs`) and waits
// for the server's question; null if none came. The call cannot end before the question is
// answered or its idle timeout passes, so the caller has time to watch it.
PendingRequest *askAndAwaitQuestion(Session *session, int idleMs, int hardMs,
                                    QPointer<PendingElicitation> *question)
{
    QSignalSpy asked(session, &Session::elicitationRequested);
    PendingRequest *call = ask(session, false, idleMs, hardMs);
    if (!asked.wait(kWaitMs))
        return nullptr;
    *question = asked.first().first().value<PendingElicitation *>();
    return call;
}

// What the fake server received as the answer to its question (the call's structured result).
QJsonObject received(const Reply &reply)
{
    return reply.result.toObject().value(QStringLiteral("structuredContent")).toObject();
}

QJsonObject stats(Session *session)
{
    const Reply reply = await(session->request(
        QStringLiteral("tools/call"), {{QStringLiteral("name"), QStringLiteral("stats")},
                                       {QStringLiteral("arguments"), QJsonObject{}}}));
    return reply.result.toObject().value(QStringLiteral("structuredContent")).toObject();
}

const ElicitationField *fieldOf(const ElicitationQuestion &question, const QString &name)
{
    for (const ElicitationField &field : question.fields) {
        if (field.name == name)
            return &field;
    }
    return nullptr;
}

} // namespace

class tst_McpElicitation : public QObject
{
    Q_OBJECT

private slots:
    void parsesTheFlatSubset();
    void refusesWhatCannotBeAsked_data();
    void refusesWhatCannotBeAsked();
    void defaultThatDoesNotFitIsDropped();
    void checksTheAnswer();
    void valuesFromTypedText();

    void declaresFormModeOnlyWhenOffered();
    void acceptedWithDefaultsApplied();
    void declined();
    void cancelled();
    void callTimeoutWithdrawsTheQuestion();
    void anOpenQuestionStopsTheCallsIdleClock();
    void theHardMaximumStillWithdrawsTheQuestion();
    void theCallersDeadlineComesFirst();
    void nobodyListeningDeclines();
    void badSchemaIsDeclined();
    void notOfferedIsRefused();

    void runtimeAsksThroughItsSignal();
    void theTurnsDeadlineComesWithTheCall();
    void runtimeWithNobodyListeningDeclines();
    void agentCliWithoutATerminalDeclinesEvenWithYes();
    void agentCliCancelsAQuestionWhenTheTerminalCloses();

private:
    std::unique_ptr<AgentRuntime> startRuntime(QTemporaryDir *dir, int idleTimeoutMs,
                                               int hardMaximumMs = 15000);
};

void tst_McpElicitation::parsesTheFlatSubset()
{
    const QJsonObject params = QJsonDocument::fromJson(R"({
        "mode": "form", "message": "Refund?",
        "requestedSchema": {"type": "object", "required": ["name"], "properties": {
            "name": {"type": "string", "title": "Name", "default": "John", "maxLength": 20},
            "age": {"type": "integer", "minimum": 0, "maximum": 150, "default": 30},
            "score": {"type": "number", "default": 95.5},
            "status": {"type": "string", "enum": ["a", "b"], "enumNames": ["A", "B"],
                       "default": "b"},
            "size": {"type": "string", "oneOf": [{"const": "s", "title": "Small"},
                                                 {"const": "l", "title": "Large"}]},
            "ok": {"type": "boolean", "default": true},
            "mail": {"type": "string", "format": "email"}}}})").object();
    QString problem;
    const std::optional<ElicitationQuestion> question = parseElicitation(params, &problem);
    QVERIFY2(question, qPrintable(problem));
    QCOMPARE(question->message, QStringLiteral("Refund?"));
    QCOMPARE(question->fields.size(), 7);
    const ElicitationField *name = fieldOf(*question, QStringLiteral("name"));
    QVERIFY(name);
    QCOMPARE(name->type, ElicitationField::Type::Text);
    QVERIFY(name->required);
    QCOMPARE(name->maxLength, 20);
    QCOMPARE(name->defaultValue, QJsonValue(QStringLiteral("John")));
    QCOMPARE(fieldOf(*question, QStringLiteral("age"))->type, ElicitationField::Type::Integer);
    QCOMPARE(*fieldOf(*question, QStringLiteral("age"))->maximum, 150.0);
    QCOMPARE(fieldOf(*question, QStringLiteral("score"))->defaultValue, QJsonValue(95.5));
    const ElicitationField *status = fieldOf(*question, QStringLiteral("status"));
    QCOMPARE(status->type, ElicitationField::Type::Choice);
    QCOMPARE(status->choices, QStringList({"a", "b"}));
    QCOMPARE(status->choiceTitles, QStringList({"A", "B"}));
    QCOMPARE(fieldOf(*question, QStringLiteral("size"))->choiceTitles,
             QStringList({"Small", "Large"}));
    QCOMPARE(fieldOf(*question, QStringLiteral("ok"))->defaultValue, QJsonValue(true));
    QCOMPARE(fieldOf(*question, QStringLiteral("mail"))->format, QStringLiteral("email"));

    // Defaults fill what staff left out (SEP-1034), and the result fits.
    const QJsonObject filled = withDefaults(*question, {{QStringLiteral("age"), 41}});
    QCOMPARE(filled.value(QStringLiteral("age")), QJsonValue(41));
    QCOMPARE(filled.value(QStringLiteral("name")), QJsonValue(QStringLiteral("John")));
    QCOMPARE(filled.value(QStringLiteral("status")), QJsonValue(QStringLiteral("b")));
    QVERIFY(!filled.contains(QStringLiteral("size"))); // no default: left out
    QVERIFY(!checkAnswer(*question, filled).isProblem());
}

void tst_McpElicitation::refusesWhatCannotBeAsked_data()
{
    QTest::addColumn<QByteArray>("params");
    QTest::newRow("url mode") << QByteArray(R"({"mode": "url", "message": "m", "url": "https://x",
                                               "elicitationId": "1"})");
    QTest::newRow("no message") << QByteArray(R"({"requestedSchema": {"type": "object"}})");
    QTest::newRow("not an object schema")
        << QByteArray(R"({"message": "m", "requestedSchema": {"type": "array"}})");
    QTest::newRow("nested object") << QByteArray(R"({"message": "m", "requestedSchema":
        {"type": "object", "properties": {"a": {"type": "object"}}}})");
    QTest::newRow("multi-select") << QByteArray(R"({"message": "m", "requestedSchema":
        {"type": "object", "properties": {"a": {"type": "array",
         "items": {"type": "string", "enum": ["x"]}}}}})");
    QTest::newRow("required not a field") << QByteArray(R"({"message": "m", "requestedSchema":
        {"type": "object", "properties": {}, "required": ["ghost"]}})");
    QTest::newRow("minimum above maximum") << QByteArray(R"({"message": "m", "requestedSchema":
        {"type": "object", "properties": {"n": {"type": "number", "minimum": 5,
                                                "maximum": 1}}}})");
    QJsonObject many;
    for (int i = 0; i <= ElicitationQuestion::maxFields; ++i)
        many.insert(QStringLiteral("f%1").arg(i), QJsonObject{{"type", "boolean"}});
    QTest::newRow("too many fields")
        << QJsonDocument(QJsonObject{{"message", "m"},
                                     {"requestedSchema", QJsonObject{{"type", "object"},
                                                                     {"properties", many}}}})
               .toJson();
    QJsonArray choices;
    for (int i = 0; i <= ElicitationQuestion::maxChoices; ++i)
        choices.append(QString::number(i));
    QTest::newRow("too many choices")
        << QJsonDocument(QJsonObject{
               {"message", "m"},
               {"requestedSchema",
                QJsonObject{{"type", "object"},
                            {"properties", QJsonObject{{"c", QJsonObject{{"type", "string"},
                                                                         {"enum", choices}}}}}}}})
               .toJson();
}

void tst_McpElicitation::refusesWhatCannotBeAsked()
{
    QFETCH(QByteArray, params);
    QString problem;
    QVERIFY(!parseElicitation(QJsonDocument::fromJson(params).object(), &problem));
    QVERIFY(!problem.isEmpty());
}

void tst_McpElicitation::defaultThatDoesNotFitIsDropped()
{
    const QJsonObject params = QJsonDocument::fromJson(R"({"message": "m", "requestedSchema":
        {"type": "object", "properties": {
            "n": {"type": "integer", "maximum": 10, "default": 99},
            "c": {"type": "string", "enum": ["x"], "default": "y"},
            "t": {"type": "string", "maxLength": 2, "default": "long"}}}})").object();
    QString problem;
    const std::optional<ElicitationQuestion> question = parseElicitation(params, &problem);
    QVERIFY2(question, qPrintable(problem));
    for (const ElicitationField &field : question->fields)
        QVERIFY2(field.defaultValue.isUndefined(), qPrintable(field.name));
    // A long message is cut to its bound, not refused.
    QJsonObject longMessage = params;
    longMessage.insert(QStringLiteral("message"), QString(10000, QLatin1Char('m')));
    QCOMPARE(parseElicitation(longMessage, &problem)->message.size(),
             ElicitationQuestion::maxMessageLength);
}

void tst_McpElicitation::checksTheAnswer()
{
    const QJsonObject params = QJsonDocument::fromJson(R"({"message": "m", "requestedSchema":
        {"type": "object", "required": ["n"], "properties": {
            "n": {"type": "integer", "minimum": 1, "maximum": 10},
            "c": {"type": "string", "enum": ["x", "y"]},
            "m": {"type": "string", "format": "email"},
            "d": {"type": "string", "format": "date"},
            "b": {"type": "boolean"}}}})").object();
    QString problem;
    const ElicitationQuestion question = *parseElicitation(params, &problem);
    using Kind = ElicitationProblem::Kind;
    const auto kindOf = [&](const QJsonObject &content) {
        return checkAnswer(question, content).kind;
    };
    QCOMPARE(kindOf({{"n", 3}}), Kind::None);
    QCOMPARE(kindOf({}), Kind::Missing);
    QCOMPARE(kindOf({{"n", 3.5}}), Kind::WrongType);
    QCOMPARE(kindOf({{"n", "3"}}), Kind::WrongType);
    QCOMPARE(kindOf({{"n", 0}}), Kind::TooSmall);
    QCOMPARE(kindOf({{"n", 11}}), Kind::TooLarge);
    QCOMPARE(kindOf({{"n", 1}, {"c", "z"}}), Kind::NotAChoice);
    QCOMPARE(kindOf({{"n", 1}, {"m", "not-an-address"}}), Kind::BadFormat);
    QCOMPARE(kindOf({{"n", 1}, {"m", "a@b.cn"}, {"d", "2026-12-04"}}), Kind::None);
    QCOMPARE(kindOf({{"n", 1}, {"d", "04/12/2026"}}), Kind::BadFormat);
    QCOMPARE(kindOf({{"n", 1}, {"b", 1}}), Kind::WrongType);
    QCOMPARE(kindOf({{"n", 1}, {"extra", 1}}), Kind::Unknown);
    QCOMPARE(checkAnswer(question, {{"n", 11}}).field, QStringLiteral("n"));
}

void tst_McpElicitation::valuesFromTypedText()
{
    ElicitationField integer;
    integer.type = ElicitationField::Type::Integer;
    QCOMPARE(*fieldValueFromText(integer, QStringLiteral(" 42 ")), QJsonValue(42));
    QVERIFY(!fieldValueFromText(integer, QStringLiteral("4.2")));
    QVERIFY(fieldValueFromText(integer, QString())->isUndefined());
    ElicitationField flag;
    flag.type = ElicitationField::Type::Boolean;
    QCOMPARE(*fieldValueFromText(flag, QStringLiteral("Yes")), QJsonValue(true));
    QCOMPARE(*fieldValueFromText(flag, QStringLiteral("n")), QJsonValue(false));
    QVERIFY(!fieldValueFromText(flag, QStringLiteral("maybe")));
    ElicitationField choice;
    choice.type = ElicitationField::Type::Choice;
    choice.choices = {QStringLiteral("email"), QStringLiteral("phone")};
    choice.choiceTitles = {QStringLiteral("Email"), QStringLiteral("Phone")};
    QCOMPARE(*fieldValueFromText(choice, QStringLiteral("2")),
             QJsonValue(QStringLiteral("phone")));
    QCOMPARE(*fieldValueFromText(choice, QStringLiteral("email")),
             QJsonValue(QStringLiteral("email")));
    QCOMPARE(*fieldValueFromText(choice, QStringLiteral("PHONE")),
             QJsonValue(QStringLiteral("phone")));
    QVERIFY(!fieldValueFromText(choice, QStringLiteral("3")));
}

void tst_McpElicitation::declaresFormModeOnlyWhenOffered()
{
    for (const bool offered : {true, false}) {
        auto session = makeSession(offered);
        QSignalSpy ready(session.get(), &Session::ready);
        session->start();
        QVERIFY(ready.wait(kWaitMs));
        const QJsonObject capabilities =
            stats(session.get()).value(QStringLiteral("clientCapabilities")).toObject();
        // Form mode only; roots and sampling never.
        const QJsonObject expected = offered
            ? QJsonObject{{"elicitation", QJsonObject{{"form", QJsonObject{}}}}}
            : QJsonObject{};
        QCOMPARE(capabilities, expected);
    }
}

void tst_McpElicitation::acceptedWithDefaultsApplied()
{
    auto session = makeSession(true);
    QSignalSpy ready(session.get(), &Session::ready);
    session->start();
    QVERIFY(ready.wait(kWaitMs));
    QSignalSpy asked(session.get(), &Session::elicitationRequested);
    PendingRequest *call = ask(session.get());
    const qint64 callId = call->id();
    QSignalSpy finished(call, &PendingRequest::finished);
    QVERIFY(asked.wait(kWaitMs));
    QPointer<PendingElicitation> question = asked.first().first().value<PendingElicitation *>();
    QVERIFY(question);
    // It belongs to the only tools/call in flight (stdio cannot say more), with its tag.
    QCOMPARE(question->relatedRequestId(), callId);
    QCOMPARE(question->relatedTag(), QStringLiteral("op-1"));
    // The server's text stays as it is: the front ends show it as plain text.
    QCOMPARE(question->question().message,
             QStringLiteral("Refund <b>order</b> A1001?\nPlease confirm."));
    QCOMPARE(question->question().fields.size(), 6);

    // An answer that does not fit is not sent: the question stays open.
    ElicitationProblem problem;
    QVERIFY(!question->answer(ElicitationAction::Accept, {{"amount", 900}}, &problem));
    QCOMPARE(problem.kind, ElicitationProblem::Kind::TooLarge);
    QCOMPARE(problem.field, QStringLiteral("amount"));
    QVERIFY(!question->isFinished());

    QSignalSpy ended(question, &PendingElicitation::ended);
    QVERIFY(question->answer(ElicitationAction::Accept, {{"note", "call after 5 pm"},
                                                         {"urgent", true}}));
    QCOMPARE(ended.size(), 1);
    QCOMPARE(ended.first().first().value<PendingElicitation::End>(),
             PendingElicitation::End::Answered);
    QVERIFY(!question->answer(ElicitationAction::Decline)); // once only
    QVERIFY(finished.wait(kWaitMs));
    const Reply reply = finished.first().first().value<Reply>();
    QVERIFY2(reply.ok(), qPrintable(reply.error.describe()));
    const QJsonObject expected{
        {"action", "accept"},
        {"content", QJsonObject{{"amount", 20.5}, {"channel", "email"}, {"count", 1},
                                {"note", "call after 5 pm"}, {"reason", "damaged"},
                                {"urgent", true}}}};
    QCOMPARE(received(reply), expected);
}

void tst_McpElicitation::declined()
{
    auto session = makeSession(true);
    QSignalSpy ready(session.get(), &Session::ready);
    session->start();
    QVERIFY(ready.wait(kWaitMs));
    connect(session.get(), &Session::elicitationRequested, this, [](PendingElicitation *q) {
        // Content with a decline is not sent, whatever was typed.
        q->answer(ElicitationAction::Decline, {{"note", "typed, then declined"}});
    });
    const Reply reply = await(ask(session.get()));
    QCOMPARE(received(reply), (QJsonObject{{"action", "decline"}}));
}

void tst_McpElicitation::cancelled()
{
    auto session = makeSession(true);
    QSignalSpy ready(session.get(), &Session::ready);
    session->start();
    QVERIFY(ready.wait(kWaitMs));
    connect(session.get(), &Session::elicitationRequested, this,
            [](PendingElicitation *q) { q->answer(ElicitationAction::Cancel); });
    const Reply reply = await(ask(session.get()));
    QCOMPARE(received(reply), (QJsonObject{{"action", "cancel"}}));
}

void tst_McpElicitation::callTimeoutWithdrawsTheQuestion()
{
    auto session = makeSession(true);
    QSignalSpy ready(session.get(), &Session::ready);
    session->start();
    QVERIFY(ready.wait(kWaitMs));
    QSignalSpy asked(session.get(), &Session::elicitationRequested);
    // Nobody answers: the call's own timeout (300 ms, no progress asked, so no hard maximum
    // beyond it) ends the wait; nothing extends it.
    PendingRequest *call = ask(session.get(), false, 300);
    const qint64 callId = call->id();
    QSignalSpy finished(call, &PendingRequest::finished);
    QVERIFY(asked.wait(kWaitMs));
    QPointer<PendingElicitation> question = asked.first().first().value<PendingElicitation *>();
    QSignalSpy ended(question, &PendingElicitation::ended);
    QVERIFY(finished.wait(kWaitMs));
    QCOMPARE(finished.first().first().value<Reply>().error.failure, Failure::Timeout);
    // Withdrawn as the call ended, before anyone hears the call's end.
    QCOMPARE(ended.size(), 1);
    QCOMPARE(ended.first().first().value<PendingElicitation::End>(),
             PendingElicitation::End::Withdrawn);
    QTRY_VERIFY_WITH_TIMEOUT(!question, kWaitMs); // deleted by the session
    // The server heard both: the call cancelled, the question answered "cancel".
    const QJsonObject seen = stats(session.get());
    QCOMPARE(seen.value(QStringLiteral("cancelled")).toArray(), QJsonArray{double(callId)});
    QCOMPARE(seen.value(QStringLiteral("elicitationAnswers")).toArray(),
             (QJsonArray{QJsonObject{{"action", "cancel"}}}));
}

void tst_McpElicitation::anOpenQuestionStopsTheCallsIdleClock()
{
    const auto session = startedSession();
    QVERIFY(session);
    // Idle 1 s (far beyond a loaded machine's delay in asking), hard maximum 8 s: the server
    // waits on staff, so the idle clock stops.
    QElapsedTimer sinceCall;
    sinceCall.start();
    QPointer<PendingElicitation> question;
    PendingRequest *call = askAndAwaitQuestion(session.get(), 1000, 8000, &question);
    QVERIFY(call && question);
    QSignalSpy finished(call, &PendingRequest::finished);
    // The front ends are told when it is withdrawn at the latest: at the call's hard maximum.
    const qint64 left = question->question().answerBy.remainingTime();
    QVERIFY2(left > 8000 - sinceCall.elapsed() - 50 && left <= 8000,
             qPrintable(QString::number(left)));

    // Answered two and a half idle timeouts later (a timer, as staff would): still open, and
    // the call goes on with the answer. Before, the idle timeout withdrew the question at 1 s.
    bool taken = false;
    qint64 answeredAtMs = 0;
    QTimer staff; // stopped with the test, should it end first
    staff.setSingleShot(true);
    staff.setTimerType(Qt::PreciseTimer); // a coarse one may fire 5 % early
    connect(&staff, &QTimer::timeout, this, [&] {
        answeredAtMs = sinceCall.elapsed();
        taken = question && question->answer(ElicitationAction::Accept, {{"reason", "late"}});
    });
    staff.start(2500);
    QVERIFY(finished.wait(kWaitMs));
    QVERIFY2(answeredAtMs >= 2500,
             qPrintable(finished.first().first().value<Reply>().error.describe()));
    QVERIFY(taken);
    const Reply reply = finished.first().first().value<Reply>();
    QVERIFY2(reply.ok(), qPrintable(reply.error.describe()));
    QCOMPARE(received(reply).value(QStringLiteral("action")).toString(), QStringLiteral("accept"));
}

void tst_McpElicitation::theHardMaximumStillWithdrawsTheQuestion()
{
    const auto session = startedSession();
    QVERIFY(session);
    QElapsedTimer sinceCall;
    sinceCall.start();
    QPointer<PendingElicitation> question;
    PendingRequest *call = askAndAwaitQuestion(session.get(), 1000, 2500, &question);
    QVERIFY(call && question);
    QSignalSpy finished(call, &PendingRequest::finished);
    QSignalSpy ended(question, &PendingElicitation::ended);
    // Nobody answers: not the idle timeout (1 s) but the hard maximum (2.5 s) ends the call,
    // and the question with it; the server hears both.
    QVERIFY(finished.wait(kWaitMs));
    QVERIFY2(sinceCall.elapsed() >= 2500, qPrintable(QString::number(sinceCall.elapsed())));
    const Reply reply = finished.first().first().value<Reply>();
    QCOMPARE(reply.error.failure, Failure::Timeout);
    QVERIFY2(reply.error.detail.contains(QStringLiteral("hard maximum")),
             qPrintable(reply.error.detail));
    QCOMPARE(ended.size(), 1);
    QCOMPARE(ended.first().first().value<PendingElicitation::End>(),
             PendingElicitation::End::Withdrawn);
    const QJsonObject seen = stats(session.get());
    QCOMPARE(seen.value(QStringLiteral("elicitationAnswers")).toArray(),
             (QJsonArray{QJsonObject{{"action", "cancel"}}}));
}

// A caller that gives up before the call's hard maximum (McpTool: its attempt's end, which
// the turn's deadline caps) says so with the request: its questions are to be answered by then.
void tst_McpElicitation::theCallersDeadlineComesFirst()
{
    const auto session = startedSession();
    QVERIFY(session);
    QSignalSpy asked(session.get(), &Session::elicitationRequested);
    RequestOptions options;
    options.timeoutMs = 1000;
    options.hardMaximumMs = 8000;
    options.progress = true;
    options.tag = QStringLiteral("op-1");
    options.deadline = QDeadlineTimer(1500, Qt::PreciseTimer);
    PendingRequest *call = session->request(
        QStringLiteral("tools/call"),
        {{QStringLiteral("name"), QStringLiteral("ask")},
         {QStringLiteral("arguments"), QJsonObject{{QStringLiteral("bad"), false}}}},
        options);
    QSignalSpy finished(call, &PendingRequest::finished);
    QVERIFY(asked.wait(kWaitMs));
    QPointer<PendingElicitation> question = asked.first().first().value<PendingElicitation *>();
    QVERIFY(question);
    const qint64 left = question->question().answerBy.remainingTime();
    QVERIFY2(left > 0 && left <= 1500, qPrintable(QString::number(left)));
    QVERIFY(question->answer(ElicitationAction::Decline));
    QVERIFY(finished.wait(kWaitMs));
    QCOMPARE(received(finished.first().first().value<Reply>()),
             (QJsonObject{{"action", "decline"}}));
}

void tst_McpElicitation::nobodyListeningDeclines()
{
    auto session = makeSession(true);
    QSignalSpy ready(session.get(), &Session::ready);
    session->start();
    QVERIFY(ready.wait(kWaitMs));
    const Reply reply = await(ask(session.get()));
    QCOMPARE(received(reply), (QJsonObject{{"action", "decline"}}));
}

void tst_McpElicitation::badSchemaIsDeclined()
{
    auto session = makeSession(true);
    QSignalSpy ready(session.get(), &Session::ready);
    session->start();
    QVERIFY(ready.wait(kWaitMs));
    QSignalSpy asked(session.get(), &Session::elicitationRequested);
    const Reply reply = await(ask(session.get(), true));
    QCOMPARE(received(reply), (QJsonObject{{"action", "decline"}}));
    QCOMPARE(asked.size(), 0); // staff never see a question that cannot be asked safely
}

void tst_McpElicitation::notOfferedIsRefused()
{
    auto session = makeSession(false);
    QSignalSpy ready(session.get(), &Session::ready);
    session->start();
    QVERIFY(ready.wait(kWaitMs));
    const Reply reply = await(ask(session.get()));
    QCOMPARE(received(reply).value(QStringLiteral("error")).toObject()
                 .value(QStringLiteral("code")).toInt(), -32601);
}

std::unique_ptr<AgentRuntime> tst_McpElicitation::startRuntime(QTemporaryDir *dir,
                                                                int idleTimeoutMs,
                                                                int hardMaximumMs)
{
    const QString path = dir->filePath(QStringLiteral("mcp.json"));
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly))
        return nullptr;
    file.write(QJsonDocument(QJsonObject{
        {"mcpServers", QJsonObject{{"fake", QJsonObject{{"command", FAKE_MCP_SERVER},
                                                        {"args", QJsonArray{"elicit"}}}}}}})
                   .toJson());
    file.close();
    RuntimeOptions options;
    options.dataDirectory = dir->filePath(QStringLiteral("data"));
    options.mcpConfigFile = path;
    options.mcpIdleTimeoutMs = idleTimeoutMs;
    options.mcpHardMaximumMs = hardMaximumMs;
    auto runtime = std::make_unique<AgentRuntime>(options);
    QSignalSpy settled(runtime->mcp(), &McpServers::settled);
    runtime->start();
    if (!settled.wait(kWaitMs * 2) || !runtime->isReady()
        || !runtime->tools()->find(QStringLiteral("fake__ask")))
        return nullptr;
    return runtime;
}

void tst_McpElicitation::runtimeAsksThroughItsSignal()
{
    QTemporaryDir dir;
    auto runtime = startRuntime(&dir, 1000, 2000);
    QVERIFY(runtime);
    QSignalSpy asked(runtime->mcp(), &McpServers::questionAsked);
    QSignalSpy ended(runtime->mcp(), &McpServers::questionEnded);

    // Answered through the runtime, by id: the question names the server and the call.
    const QFuture<ToolCallOutcome> answered =
        Testing::runMcpCall(runtime.get(), QStringLiteral("fake__ask"),
                            QStringLiteral("op-answer"));
    QVERIFY(asked.wait(kWaitMs));
    const QString id = asked.first().at(0).toString();
    const McpQuestion question = asked.first().at(1).value<McpQuestion>();
    QCOMPARE(question.server, QStringLiteral("fake"));
    QCOMPARE(question.operationId, QStringLiteral("op-answer"));
    // Withdrawn at the latest at the call's hard maximum, which the front ends show.
    QVERIFY(!question.answerBy.isForever());
    QVERIFY(question.answerBy.remainingTime() <= 2000);
    QVERIFY(runtime->mcp()->answer(id, McpAnswer::Accept, {{"reason", "late"}}));
    QVERIFY(!runtime->mcp()->answer(id, McpAnswer::Decline)); // ended
    QCOMPARE(ended.size(), 1);
    QCOMPARE(ended.first().at(1).value<McpQuestionEnd>(), McpQuestionEnd::Answered);
    QTRY_VERIFY_WITH_TIMEOUT(answered.isFinished(), kWaitMs);
    const ToolCallOutcome outcome = answered.result();
    QVERIFY(outcome.result.success);
    QVERIFY2(QJsonDocument(outcome.result.data.toObject()).toJson().contains("late"),
             QJsonDocument(outcome.result.data.toObject()).toJson().constData());

    // Unanswered: not the attempt's idle timeout (1 s; the clock stops while the question is
    // open) but its hard maximum (2 s) withdraws it; the call timed out.
    const QFuture<ToolCallOutcome> unanswered =
        Testing::runMcpCall(runtime.get(), QStringLiteral("fake__ask"),
                            QStringLiteral("op-wait"));
    QVERIFY(asked.wait(kWaitMs));
    const QString waiting = asked.last().at(0).toString();
    QTRY_COMPARE_WITH_TIMEOUT(ended.size(), 2, kWaitMs);
    QCOMPARE(ended.last().at(0).toString(), waiting);
    QCOMPARE(ended.last().at(1).value<McpQuestionEnd>(), McpQuestionEnd::Withdrawn);
    QVERIFY(!runtime->mcp()->answer(waiting, McpAnswer::Accept));
    QTRY_VERIFY_WITH_TIMEOUT(unanswered.isFinished(), kWaitMs);
    QCOMPARE(unanswered.result().result.code, ResultCode::ToolTimeout);
}

// The turn's deadline travels with the call, once: the budget the call carries caps its
// attempt, whose end the request and so the question know. The runtime tells staff when to
// answer by without asking the agent loop, which here runs no turn at all.
void tst_McpElicitation::theTurnsDeadlineComesWithTheCall()
{
    QTemporaryDir dir;
    auto runtime = startRuntime(&dir, 1000, 8000);
    QVERIFY(runtime);
    QVERIFY(!runtime->agentLoop()->isBusy());
    QSignalSpy asked(runtime->mcp(), &McpServers::questionAsked);
    const auto budget = std::make_shared<RetryBudget>(0, QDeadlineTimer(3000, Qt::PreciseTimer));
    const QFuture<ToolCallOutcome> call = Testing::runMcpCall(
        runtime.get(), QStringLiteral("fake__ask"), QStringLiteral("op-turn"), budget);
    QVERIFY(asked.wait(kWaitMs));
    const McpQuestion question = asked.first().at(1).value<McpQuestion>();
    QCOMPARE(question.operationId, QStringLiteral("op-turn"));
    // Not the call's hard maximum (8 s): the turn's deadline, 3 s from the call's start.
    const qint64 left = question.answerBy.remainingTime();
    QVERIFY2(left > 0 && left <= 3000, qPrintable(QString::number(left)));
    QVERIFY2(left >= budget->deadline().remainingTime() - 50,
             qPrintable(QString::number(left)));
    QVERIFY(runtime->mcp()->answer(asked.first().at(0).toString(), McpAnswer::Accept,
                                   {{"reason", "in time"}}));
    QTRY_VERIFY_WITH_TIMEOUT(call.isFinished(), kWaitMs);
    QVERIFY(call.result().result.success);
}

void tst_McpElicitation::runtimeWithNobodyListeningDeclines()
{
    QTemporaryDir dir;
    auto runtime = startRuntime(&dir, 5000);
    QVERIFY(runtime);
    // Nobody is connected to mcpQuestionAsked: declined at once, the call goes on.
    const QFuture<ToolCallOutcome> call =
        Testing::runMcpCall(runtime.get(), QStringLiteral("fake__ask"),
                            QStringLiteral("op-1"));
    QTRY_VERIFY_WITH_TIMEOUT(call.isFinished(), kWaitMs);
    QVERIFY(call.result().result.success);
    QVERIFY2(QJsonDocument(call.result().result.data.toObject()).toJson().contains("decline"),
             QJsonDocument(call.result().result.data.toObject()).toJson().constData());
}

namespace {

// agent-cli asked "Refund order A1001" by a model (`model`, faked on 127.0.0.1) that calls the
// fake MCP server's tool, which asks staff a question; then the model answers. Started; the
// data directory and mcp.json in `dir`.
bool startCliWithAQuestion(QProcess &cli, const QTemporaryDir &dir,
                           AgentConsole::Testing::FakeOpenAiServer &model,
                           const QStringList &extraArguments)
{
    using namespace AgentConsole::Testing;
    const QString config = dir.filePath(QStringLiteral("mcp.json"));
    QFile file(config);
    if (!file.open(QIODevice::WriteOnly))
        return false;
    file.write(QJsonDocument(QJsonObject{
        {"mcpServers", QJsonObject{{"fake", QJsonObject{{"command", FAKE_MCP_SERVER},
                                                        {"args", QJsonArray{"elicit"}}}}}}})
                   .toJson());
    file.close();
    if (!model.listen())
        return false;
    model.enqueue(FakeResponse::events({{Sse::role()},
                                        {Sse::toolCall(0, QStringLiteral("call_0"),
                                                       QStringLiteral("fake__ask"),
                                                       QStringLiteral("{}"))},
                                        {Sse::finish(QStringLiteral("tool_calls"))},
                                        {Sse::done()}}));
    model.enqueue(FakeResponse::events({{Sse::role()}, {Sse::content(QStringLiteral("done"))},
                                        {Sse::finish(QStringLiteral("stop"))}, {Sse::done()}}));
    QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
    environment.insert(QStringLiteral("AGENT_CONSOLE_API_KEY"), QStringLiteral("sk-test-elicit"));
    cli.setProcessEnvironment(environment);
    cli.start(QStringLiteral(AGENT_CLI_PATH),
              QStringList{QStringLiteral("--data-dir"), dir.filePath(QStringLiteral("data")),
                          QStringLiteral("--mcp-config"), config, QStringLiteral("--provider"),
                          QStringLiteral("openai"), QStringLiteral("--base-url"),
                          model.baseUrl().toString(), QStringLiteral("--model"),
                          QStringLiteral("fake-model"), QStringLiteral("--fallback"),
                          QStringLiteral("none"), QStringLiteral("--json")}
                  + extraArguments + QStringList{QStringLiteral("Refund order A1001")});
    return cli.waitForStarted(10'000);
}

} // namespace

void tst_McpElicitation::agentCliWithoutATerminalDeclinesEvenWithYes()
{
    QTemporaryDir dir;
    AgentConsole::Testing::FakeOpenAiServer model;
    QProcess cli;
    QSignalSpy finished(&cli, &QProcess::finished);
    // Standard input is a pipe, not a terminal; --yes confirms writes, never questions.
    QVERIFY(startCliWithAQuestion(cli, dir, model, {QStringLiteral("--yes")}));
    cli.closeWriteChannel();
    QVERIFY(finished.wait(60000));
    const QByteArray out = cli.readAllStandardOutput();
    const QByteArray err = cli.readAllStandardError();
    QCOMPARE(cli.exitCode(), 0);
    QVERIFY2(err.contains("asks a question and there is no terminal"),
             (err + "\n---\n" + out).constData());
    // The server heard "decline" and said so in its result, which the turn carries.
    QVERIFY2(out.contains("decline") && !out.contains("accept"), out.constData());
}

// Asked on its terminal, the staff member ends the input (Ctrl-D): the question is dismissed
// ("cancel": nobody chose), not left to wait for the call's hard maximum.
void tst_McpElicitation::agentCliCancelsAQuestionWhenTheTerminalCloses()
{
    QTemporaryDir dir;
    AgentConsole::Testing::FakeOpenAiServer model;
    AgentConsole::Testing::PseudoTerminal terminal;
    QVERIFY(terminal.isOpen());
    QProcess cli;
    terminal.attach(cli, true); // standard input a terminal too: questions are asked on it
    QSignalSpy finished(&cli, &QProcess::finished);
    QVERIFY(startCliWithAQuestion(cli, dir, model, {}));
    QVERIFY2(terminal.waitForShown("MCP server fake asks", kWaitMs), terminal.shown().constData());
    QVERIFY(terminal.type("\x04")); // Ctrl-D: the end of the input
    QVERIFY(finished.wait(60000));
    const QByteArray out = cli.readAllStandardOutput();
    const QByteArray err = cli.readAllStandardError();
    QCOMPARE(cli.exitCode(), 0);
    QVERIFY2(err.contains("the terminal closed; 1 question(s) of MCP servers cancelled"),
             (err + "\n---\n" + out).constData());
    // The server heard "cancel" and said so in its result, which the turn carries (the call
    // succeeded: it was not withdrawn at its hard maximum).
    QVERIFY2(out.contains("cancel") && !out.contains("accept"), out.constData());
    QVERIFY2(out.contains("\"code\":\"OK\""), out.constData());
}

QTEST_GUILESS_MAIN(tst_McpElicitation)
#include "tst_mcpelicitation.moc"
