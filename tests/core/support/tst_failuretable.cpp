// The failure table (DESIGN.md, "Failure taxonomy"): one row for every result code, the
// mechanism's and the support domain's, the wire names exactly as checkpoints, the ledger and
// --json store them, and the retry, ledger and severity columns as DESIGN.md says, written out
// here row by row; a code this console does not recognise kept as given. And the other
// printable enums with a stored name: model errors, turn status, outcome and stage, and the
// counters.

#include "tests/support/resultcodeprinting.h"

#include "core/turn/failures.h"
#include "core/turn/turncheckpoint.h"
#include "core/turn/turnresult.h"
#include "core/llm/modelerror.h"
#include "core/resilience/failuretable.h"
#include "core/support/supportfailures.h"

#include <QJsonArray>
#include <QJsonObject>
#include <QMetaEnum>
#include <QTest>

#include <memory>

using namespace AgentConsole;
using Code = ResultCode::Code;
using Severity = FailureTable::Severity;
using LedgerRow = FailureTable::LedgerRow;

class tst_FailureTable final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void everyCodeHasExactlyOneRow();
    void supportRowsLiveWithTheSupportWing();
    void wireNames_data();
    void wireNames();
    void unknownWireNamesStayUnknown();
    void unknownCodeFromAServerSurvivesTheRoundTrip_data();
    void unknownCodeFromAServerSurvivesTheRoundTrip();
    void columnsAreDesigns_data();
    void columnsAreDesigns();
    void everyFailureIsWordedInBothLanguages();
    void failureIsWordedByItsRow();
    void codesPrintByName();
    void modelErrors_data();
    void modelErrors();
    void turnNames();
    void counterNames();
};

namespace {

// A code's printed name. QTest::toString hands over a new[] string (LSan reported each one).
QByteArray printed(Code code)
{
    const std::unique_ptr<char[]> name(ResultCode::toString(code));
    return QByteArray(name.get());
}

// The codes a result can be made with: the mechanism's enum (but the two it only reads) and
// the support domain's codes.
QList<Code> allCodes()
{
    const QMetaEnum meta = QMetaEnum::fromType<Code>();
    QList<Code> codes;
    for (int i = 0; i < meta.keyCount(); ++i) {
        if (!ResultCode::isUnrecognized(Code(meta.value(i))))
            codes.append(Code(meta.value(i)));
    }
    return codes + QList<Code>{SupportCode::OrderNotFound, SupportCode::LogisticsNotFound,
                               SupportCode::SkuNotFound};
}

int rowsFor(Code code, std::span<const FailureTable::Row> rows)
{
    return int(std::count_if(rows.begin(), rows.end(),
                             [code](const FailureTable::Row &row) { return row.code == code; }));
}

} // namespace

void tst_FailureTable::everyCodeHasExactlyOneRow()
{
    const QList<Code> codes = allCodes();
    QCOMPARE(failureTable().codes(), codes);
    for (const Code code : codes) {
        const int rows = rowsFor(code, FailureTable::mechanismRows())
            + rowsFor(code, supportFailureRows());
        QVERIFY2(rows == 1, qPrintable(QStringLiteral("%1 has %2 rows")
                                           .arg(QString::fromLatin1(printed(code))).arg(rows)));
        const FailureTable::Row *row = failureTable().find(code);
        QVERIFY(row);
        QCOMPARE(row->code, code);
        QVERIFY(row->wire);
        QCOMPARE(ResultCode::fromWireName(ResultCode::wireName(code)), std::optional(code));
    }
    // The two rows for what is read and not recognised: nothing else, and no name of their own.
    for (const Code code : {Code::Unrecognized, Code::UnrecognizedNotFound}) {
        QCOMPARE(rowsFor(code, FailureTable::mechanismRows()), 1);
        QVERIFY(!failureTable().find(code)->wire);
        QVERIFY(ResultCode::wireName(code).isEmpty());
    }
    QCOMPARE(qsizetype(FailureTable::mechanismRows().size() + supportFailureRows().size()),
             codes.size() + 2);
}

// The support codes and their rows come from core/support, numbered apart from the
// mechanism's; the mechanism's rows have none of them, so nothing below support words an order.
// They join the one table that the loop and the window read (core/turn/failures.h).
void tst_FailureTable::supportRowsLiveWithTheSupportWing()
{
    QList<Code> support;
    for (const FailureTable::Row &row : supportFailureRows())
        support.append(row.code);
    QCOMPARE(support, (QList<Code>{SupportCode::OrderNotFound, SupportCode::LogisticsNotFound,
                                   SupportCode::SkuNotFound}));
    for (const Code code : support) {
        QVERIFY(int(code) >= ResultCode::firstDomainCode);
        QVERIFY(QMetaEnum::fromType<Code>().valueToKey(int(code)) == nullptr);
        QCOMPARE(rowsFor(code, FailureTable::mechanismRows()), 0);
        QVERIFY(failureTable().find(code));
        QVERIFY(failureTable().isNothingFound(code));
    }
    QCOMPARE(&failureTable(), &FailureTable::instance());
}

void tst_FailureTable::wireNames_data()
{
    QTest::addColumn<Code>("code");
    QTest::addColumn<QString>("wire");
    // Stored in checkpoints, the ledger's result_json, agent-cli --json and the tests: these
    // strings must never change.
    QTest::newRow("ok") << Code::Ok << "OK";
    QTest::newRow("invalid") << Code::InvalidArgument << "INVALID_ARGUMENT";
    QTest::newRow("order") << SupportCode::OrderNotFound << "ORDER_NOT_FOUND";
    QTest::newRow("logistics") << SupportCode::LogisticsNotFound << "LOGISTICS_NOT_FOUND";
    QTest::newRow("sku") << SupportCode::SkuNotFound << "SKU_NOT_FOUND";
    QTest::newRow("context") << Code::ContextMissing << "CONTEXT_MISSING";
    QTest::newRow("unknown tool") << Code::UnknownTool << "UNKNOWN_TOOL";
    QTest::newRow("timeout") << Code::ToolTimeout << "TOOL_TIMEOUT";
    QTest::newRow("unavailable") << Code::ToolUnavailable << "TOOL_UNAVAILABLE";
    QTest::newRow("rejected") << Code::ToolRejected << "TOOL_REJECTED";
    QTest::newRow("denied") << Code::ToolAccessDenied << "TOOL_ACCESS_DENIED";
    QTest::newRow("cancelled") << Code::Cancelled << "CANCELLED";
    QTest::newRow("internal") << Code::InternalError << "INTERNAL_ERROR";
    QTest::newRow("declined") << Code::ConfirmationDeclined << "CONFIRMATION_DECLINED";
    QTest::newRow("conflict") << Code::IdempotencyConflict << "IDEMPOTENCY_CONFLICT";
    QTest::newRow("unknown") << Code::ExecutionStatusUnknown << "EXECUTION_STATUS_UNKNOWN";
    QTest::newRow("in progress") << Code::OperationInProgress << "OPERATION_IN_PROGRESS";
    QTest::newRow("sign-in") << Code::SignInRequired << "SIGN_IN_REQUIRED";
    QTest::newRow("call limit") << Code::ToolCallLimit << "TOOL_CALL_LIMIT";
}

void tst_FailureTable::wireNames()
{
    QFETCH(Code, code);
    QFETCH(QString, wire);
    QCOMPARE(ResultCode::wireName(code), wire);
    QCOMPARE(ResultCode::fromWireName(wire), std::optional<Code>(code));
    // Through a stored result and back, as a checkpoint or the ledger keeps it.
    ToolResult result = code == Code::Ok ? ToolResult::ok(QStringLiteral("fine"), QJsonValue())
                                         : failureTable().failure(code, Language::English);
    QCOMPARE(result.code, code);
    QCOMPARE(result.codeName(), wire);
    QVERIFY(result.unrecognizedCode.isEmpty());
    QCOMPARE(result.toJson().value(QLatin1String("code")).toString(), wire);
    const ToolResult stored = ToolResult::fromJson(result.toJson());
    QCOMPARE(stored.code, code);
    QCOMPARE(stored, result);
}

void tst_FailureTable::unknownWireNamesStayUnknown()
{
    for (const QString &name : {QStringLiteral("TICKET_NOT_FOUND"), QStringLiteral("ok"),
                                QStringLiteral(""), QStringLiteral("ORDER_NOT_FOUND ")}) {
        QVERIFY2(!ResultCode::fromWireName(name), qPrintable(name));
        QVERIFY(ResultCode::isUnrecognized(ResultCode::read(name)));
    }
    // A result with no code at all (a call still running) is written with none, as before.
    QCOMPARE(ToolResult().toJson().value(QLatin1String("code")), QJsonValue(QString()));
    QCOMPARE(ToolResult::fromJson(ToolResult().toJson()), ToolResult());
}

void tst_FailureTable::unknownCodeFromAServerSurvivesTheRoundTrip_data()
{
    QTest::addColumn<QString>("wire");
    QTest::addColumn<Code>("code");
    QTest::addColumn<bool>("notFound");
    QTest::addColumn<Severity>("severity");
    QTest::addColumn<QString>("label");
    // A newer console on the same team ledger, a newer backend: names this one does not
    // know. One that says nothing matched is told as that; any other as a general failure,
    // its name shown as given.
    QTest::newRow("newer failure") << "TICKET_QUOTA_EXCEEDED" << Code::Unrecognized << false
                                   << Severity::Error << QString();
    QTest::newRow("newer miss") << "WAREHOUSE_NOT_FOUND" << Code::UnrecognizedNotFound << true
                                << Severity::Neutral << "Not found";
    QTest::newRow("almost ours") << "ORDER_NOT_FOUND " << Code::Unrecognized << false
                                 << Severity::Error << QString();
}

void tst_FailureTable::unknownCodeFromAServerSurvivesTheRoundTrip()
{
    QFETCH(QString, wire);
    QFETCH(Code, code);
    QFETCH(bool, notFound);
    QFETCH(Severity, severity);
    QFETCH(QString, label);
    const QJsonObject given{{QStringLiteral("success"), false},
                            {QStringLiteral("code"), wire},
                            {QStringLiteral("message"), QStringLiteral("Quota exceeded")},
                            {QStringLiteral("errors"), QJsonArray{}}};
    const ToolResult stored = ToolResult::fromJson(given);
    QCOMPARE(stored.code, code);
    QCOMPARE(stored.unrecognizedCode, wire);
    QCOMPARE(stored.codeName(), wire);
    // Kept as given: written back byte for byte, as the ledger, the journal and exports do.
    QCOMPARE(stored.toJson(), given);
    QCOMPARE(ToolResult::fromJson(stored.toJson()), stored);
    // Classified as the table's row for such a code says: never retried, final for a write,
    // worded for the model in general words, and a miss only when it says so.
    const FailureTable::Row *row = failureTable().find(stored.code);
    QVERIFY(row);
    QCOMPARE(row->severity, severity);
    QCOMPARE(row->ledger, LedgerRow::FailedFinal);
    QVERIFY(!row->retryable);
    QCOMPARE(QString::fromLatin1(row->label), label);
    QCOMPARE(stored.isNotFound(), notFound);
    QCOMPARE(failureTable().message(stored.code, Language::English),
             QStringLiteral("The lookup failed"));
    QVERIFY(failureTable().retryHint(stored.code, Language::English).isEmpty());
    // In a turn's record, as agent-cli --json and exports write it and read it back.
    TurnResult turn;
    turn.status = TurnStatus::Completed;
    ToolCallRecord call;
    call.name = QStringLiteral("createTicket");
    call.state = ToolCallRecord::State::Finished;
    call.result = stored;
    turn.toolCalls.append(call);
    const QJsonObject json = turn.toJson();
    QCOMPARE(json.value(QLatin1String("toolCalls")).toArray().at(0).toObject()
                 .value(QLatin1String("code")).toString(),
             wire);
    QString error;
    const std::optional<TurnResult> back = TurnResult::fromJson(json, &error);
    QVERIFY2(back, qPrintable(error));
    QCOMPARE(back->toolCalls.at(0).result.code, code);
    QCOMPARE(back->toolCalls.at(0).result.codeName(), wire);
    QCOMPARE(back->toJson(), json);
    QCOMPARE(back->outcome(), notFound ? TurnOutcome::Answered : TurnOutcome::Unanswered);
}

void tst_FailureTable::columnsAreDesigns_data()
{
    QTest::addColumn<Code>("code");
    QTest::addColumn<bool>("retryable");
    QTest::addColumn<LedgerRow>("ledger");
    QTest::addColumn<Severity>("severity");
    // DESIGN.md, "Failure taxonomy": only a slow attempt (TOOL_TIMEOUT) and a transient
    // technical failure (TOOL_UNAVAILABLE) are retried. "Write tools and idempotency": a
    // write that timed out or whose status is unknown is never retried blindly; its row stays
    // FAILED_RETRYABLE so that a later run asks the backend first, as does a write that never
    // reached the backend (unavailable, cancelled). Everything else is final.
    const auto row = [](const char *name, Code code, bool retryable, LedgerRow ledger,
                        Severity severity) {
        QTest::newRow(name) << code << retryable << ledger << severity;
    };
    row("OK", Code::Ok, false, LedgerRow::Succeeded, Severity::Success);
    row("INVALID_ARGUMENT", Code::InvalidArgument, false, LedgerRow::FailedFinal,
        Severity::Error);
    row("ORDER_NOT_FOUND", SupportCode::OrderNotFound, false, LedgerRow::FailedFinal,
        Severity::Neutral);
    row("LOGISTICS_NOT_FOUND", SupportCode::LogisticsNotFound, false, LedgerRow::FailedFinal,
        Severity::Neutral);
    row("SKU_NOT_FOUND", SupportCode::SkuNotFound, false, LedgerRow::FailedFinal,
        Severity::Neutral);
    row("CONTEXT_MISSING", Code::ContextMissing, false, LedgerRow::FailedFinal, Severity::Error);
    row("UNKNOWN_TOOL", Code::UnknownTool, false, LedgerRow::FailedFinal, Severity::Error);
    row("TOOL_TIMEOUT", Code::ToolTimeout, true, LedgerRow::FailedRetryable, Severity::Warning);
    row("TOOL_UNAVAILABLE", Code::ToolUnavailable, true, LedgerRow::FailedRetryable,
        Severity::Warning);
    row("TOOL_REJECTED", Code::ToolRejected, false, LedgerRow::FailedFinal, Severity::Error);
    row("TOOL_ACCESS_DENIED", Code::ToolAccessDenied, false, LedgerRow::FailedFinal,
        Severity::Error);
    row("CANCELLED", Code::Cancelled, false, LedgerRow::FailedRetryable, Severity::Neutral);
    row("INTERNAL_ERROR", Code::InternalError, false, LedgerRow::FailedFinal, Severity::Error);
    row("CONFIRMATION_DECLINED", Code::ConfirmationDeclined, false, LedgerRow::FailedFinal,
        Severity::Neutral);
    row("IDEMPOTENCY_CONFLICT", Code::IdempotencyConflict, false, LedgerRow::FailedFinal,
        Severity::Error);
    row("EXECUTION_STATUS_UNKNOWN", Code::ExecutionStatusUnknown, false,
        LedgerRow::FailedRetryable, Severity::Warning);
    row("OPERATION_IN_PROGRESS", Code::OperationInProgress, false, LedgerRow::FailedFinal,
        Severity::Info);
    row("SIGN_IN_REQUIRED", Code::SignInRequired, false, LedgerRow::FailedFinal,
        Severity::Warning);
    row("TOOL_CALL_LIMIT", Code::ToolCallLimit, false, LedgerRow::FailedFinal, Severity::Error);
    // What a code nobody here recognises is told as (unknownCodeFromAServer... shows them).
    row("unrecognised", Code::Unrecognized, false, LedgerRow::FailedFinal, Severity::Error);
    row("unrecognised *_NOT_FOUND", Code::UnrecognizedNotFound, false, LedgerRow::FailedFinal,
        Severity::Neutral);
}

void tst_FailureTable::columnsAreDesigns()
{
    QFETCH(Code, code);
    QFETCH(bool, retryable);
    QFETCH(LedgerRow, ledger);
    QFETCH(Severity, severity);
    const FailureTable::Row *row = failureTable().find(code);
    QVERIFY(row);
    QCOMPARE(row->retryable, retryable);
    QCOMPARE(row->ledger, ledger);
    QCOMPARE(row->severity, severity);
}

void tst_FailureTable::everyFailureIsWordedInBothLanguages()
{
    for (const Code code : allCodes()) {
        const FailureTable::Row &row = *failureTable().find(code);
        const QByteArray name = printed(code);
        if (code == Code::Ok) {
            QVERIFY(row.model.isNull()); // a success carries the tool's own message
            continue;
        }
        QVERIFY2(!row.model.isNull(), name);
        QVERIFY2(!row.model.in(Language::English).isEmpty(), name);
        QVERIFY2(!row.model.in(Language::Chinese).isEmpty(), name);
        QVERIFY2(row.model.in(Language::English) != row.model.in(Language::Chinese), name);
        // Every code has a status word: staff never read a wire name.
        QVERIFY2(row.label, name);
        for (const FailureTable::Sentence &staff : {row.staff, row.staffAboutSubject}) {
            if (staff.isNull())
                continue;
            QVERIFY2(staff.chinese, name);
            QVERIFY2(!staff.in(Language::Chinese).isEmpty(), name);
        }
    }
}

void tst_FailureTable::failureIsWordedByItsRow()
{
    const ToolResult timeout = failureTable().failure(Code::ToolTimeout, Language::Chinese,
                                                      {QStringLiteral("first")});
    QVERIFY(!timeout.success);
    QCOMPARE(timeout.code, ResultCode::ToolTimeout);
    QCOMPARE(timeout.codeName(), QStringLiteral("TOOL_TIMEOUT"));
    QCOMPARE(timeout.message, QStringLiteral("查询超时"));
    QCOMPARE(timeout.errors, (QStringList{QStringLiteral("first"),
                                          QStringLiteral("服务暂时响应较慢或不可用，请稍后重试")}));
    // The mechanism's own ToolResult::failure words its codes the same way.
    QCOMPARE(ToolResult::failure(ResultCode::ToolTimeout, Language::Chinese,
                                 {QStringLiteral("first")}),
             timeout);

    const ToolResult order = ToolResult::failure(SupportCode::OrderNotFound, Language::English);
    QCOMPARE(order.code, SupportCode::OrderNotFound);
    QCOMPARE(order.codeName(), QStringLiteral("ORDER_NOT_FOUND"));
    QCOMPARE(order.message, QStringLiteral("No such order"));
    QVERIFY(order.errors.isEmpty()); // not retryable: no hint
}

void tst_FailureTable::codesPrintByName()
{
    const std::unique_ptr<char[]> mechanism(QTest::toString(Code::ExecutionStatusUnknown));
    QCOMPARE(QByteArray(mechanism.get()), QByteArray("ExecutionStatusUnknown"));
    // A domain's code is outside the enum: the suites print it by its wire name.
    QCOMPARE(printed(Code::ExecutionStatusUnknown), QByteArray("ExecutionStatusUnknown"));
    QCOMPARE(printed(SupportCode::SkuNotFound), QByteArray("SKU_NOT_FOUND"));
    QCOMPARE(QByteArray(QMetaEnum::fromType<Severity>().valueToKey(int(Severity::Warning))),
             QByteArray("Warning"));
    QCOMPARE(QByteArray(QMetaEnum::fromType<LedgerRow>().valueToKey(
                 int(LedgerRow::FailedRetryable))),
             QByteArray("FailedRetryable"));
}

void tst_FailureTable::modelErrors_data()
{
    using M = ModelError::Code;
    QTest::addColumn<M>("code");
    QTest::addColumn<QString>("wire");
    QTest::addColumn<bool>("takesProviderOut");
    QTest::addColumn<bool>("providerFailure");
    QTest::addColumn<bool>("configuration");
    // DESIGN.md, "Retry boundaries" and "Circuit breakers, fallbacks": a quota or credential
    // error (and a redirect, never followed) takes the provider out; 429, 5xx, timeouts and
    // broken answers count against its breaker; credentials, bad requests and a moved
    // endpoint point at the configuration.
    QTest::newRow("rate limited") << M::RateLimited << "MODEL_RATE_LIMITED" << false << true
                                  << false;
    QTest::newRow("quota") << M::QuotaExhausted << "MODEL_QUOTA_EXHAUSTED" << true << true
                           << false;
    QTest::newRow("auth") << M::AuthFailed << "MODEL_AUTH_FAILED" << true << false << true;
    QTest::newRow("bad request") << M::BadRequest << "MODEL_BAD_REQUEST" << false << false
                                 << true;
    QTest::newRow("unavailable") << M::Unavailable << "MODEL_UNAVAILABLE" << false << true
                                 << false;
    QTest::newRow("timeout") << M::Timeout << "MODEL_TIMEOUT" << false << true << false;
    QTest::newRow("truncated") << M::Truncated << "MODEL_STREAM_TRUNCATED" << false << true
                               << false;
    QTest::newRow("invalid") << M::InvalidResponse << "MODEL_INVALID_RESPONSE" << false << true
                             << false;
    QTest::newRow("moved") << M::EndpointMoved << "MODEL_ENDPOINT_MOVED" << true << false
                           << true;
    QTest::newRow("circuit open") << M::CircuitOpen << "MODEL_CIRCUIT_OPEN" << false << false
                                  << false;
    QTest::newRow("cancelled") << M::Cancelled << "CANCELLED" << false << false << false;
}

void tst_FailureTable::modelErrors()
{
    QFETCH(ModelError::Code, code);
    QFETCH(QString, wire);
    QFETCH(bool, takesProviderOut);
    QFETCH(bool, providerFailure);
    QFETCH(bool, configuration);
    QCOMPARE(ModelError::wireName(code), wire);
    QCOMPARE(ModelError::fromWireName(wire), std::optional<ModelError::Code>(code));
    const ModelError::Row *row = ModelError::find(wire);
    QVERIFY(row);
    QCOMPARE(row->code, code);
    QCOMPARE(row->takesProviderOut, takesProviderOut);
    QCOMPARE(row->providerFailure, providerFailure);
    QCOMPARE(row->configuration, configuration);
    // Every model error but the open circuit (worded where it happens) has its sentence.
    const QString general = QStringLiteral("The model call failed.");
    QCOMPARE(ModelError::message(wire, Language::English) == general,
             code == ModelError::Code::CircuitOpen);
    QVERIFY(!ModelError::message(wire, Language::Chinese).isEmpty());
    QVERIFY(!ModelError::fromWireName(wire.toLower()));
    QCOMPARE(QMetaEnum::fromType<ModelError::Code>().keyCount(), ModelError::codeCount);
}

// The names the journal and agent-cli --json store: byte-identical to what they were.
void tst_FailureTable::turnNames()
{
    const QList<QPair<TurnStage, QString>> stages{
        {TurnStage::Received, QStringLiteral("RECEIVED")},
        {TurnStage::Planned, QStringLiteral("PLANNED")},
        {TurnStage::ToolsExecuted, QStringLiteral("TOOLS_EXECUTED")},
        {TurnStage::AnswerGenerating, QStringLiteral("ANSWER_GENERATING")},
        {TurnStage::Completed, QStringLiteral("COMPLETED")},
        {TurnStage::Failed, QStringLiteral("FAILED")}};
    QCOMPARE(QMetaEnum::fromType<TurnStage>().keyCount(), int(stages.size()));
    for (const auto &[stage, name] : stages) {
        QCOMPARE(turnStageName(stage), name);
        QCOMPARE(turnStageFromName(name), std::optional<TurnStage>(stage));
    }
    QVERIFY(!turnStageFromName(QStringLiteral("received")));

    const QList<QPair<TurnStatus, QString>> statuses{
        {TurnStatus::Completed, QStringLiteral("completed")},
        {TurnStatus::Failed, QStringLiteral("failed")},
        {TurnStatus::Cancelled, QStringLiteral("cancelled")}};
    QCOMPARE(QMetaEnum::fromType<TurnStatus>().keyCount(), int(statuses.size()));
    for (const auto &[status, name] : statuses) {
        QCOMPARE(turnStatusName(status), name);
        QCOMPARE(turnStatusFromName(name), std::optional<TurnStatus>(status));
    }
    QVERIFY(!turnStatusFromName(u"COMPLETED"));

    QCOMPARE(turnOutcomeName(TurnOutcome::Answered), QStringLiteral("answered"));
    QCOMPARE(turnOutcomeName(TurnOutcome::Partial), QStringLiteral("partial"));
    QCOMPARE(turnOutcomeName(TurnOutcome::Unanswered), QStringLiteral("unanswered"));
    QCOMPARE(turnOutcomeName(TurnOutcome::Failed), QStringLiteral("failed"));
    QCOMPARE(QMetaEnum::fromType<TurnOutcome>().keyCount(), 4);
    const std::unique_ptr<char[]> stage(QTest::toString(TurnStage::ToolsExecuted));
    QCOMPARE(QByteArray(stage.get()), QByteArray("ToolsExecuted"));
}

void tst_FailureTable::counterNames()
{
    using Metrics::Counter;
    const QStringList expected{
        QStringLiteral("model_retry_count"),          QStringLiteral("tool_retry_count"),
        QStringLiteral("agent_restart_count"),        QStringLiteral("idempotency_hit_count"),
        QStringLiteral("idempotency_conflict_count"),
        QStringLiteral("unknown_execution_status_count"),
        QStringLiteral("circuit_breaker_open_count"), QStringLiteral("fallback_model_count"),
        QStringLiteral("duplicate_business_object_count")};
    QStringList names;
    for (const Counter counter : Metrics::allCounters()) {
        names.append(Metrics::counterName(counter));
        QCOMPARE(Metrics::counterFromName(names.last()), std::optional<Counter>(counter));
    }
    QCOMPARE(names, expected);

    // A turn reports every counter but the backend's duplicate figure, by these names.
    TurnResult turn;
    turn.restarts = 2;
    turn.fallbackHops = 1;
    const QJsonObject counters = turn.counters();
    QCOMPARE(counters.keys().size(), expected.size() - 1);
    QVERIFY(!counters.contains(QStringLiteral("duplicate_business_object_count")));
    QCOMPARE(counters.value(QStringLiteral("agent_restart_count")).toInt(), 2);
    QCOMPARE(counters.value(QStringLiteral("fallback_model_count")).toInt(), 1);
    QCOMPARE(counters.value(QStringLiteral("tool_retry_count")).toInt(), 0);
}

QTEST_GUILESS_MAIN(tst_FailureTable)
#include "tst_failuretable.moc"
