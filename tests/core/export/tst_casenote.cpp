// The case note (core/export/casenote.h): what a staff member pastes into a ticket, made from
// the turns alone, and the file name every export proposes. docs/EXPORT.md, "Case note".
#include "core/export/casenote.h"
#include "core/support/supportfailures.h"

#include <QJsonObject>
#include <QTest>

using namespace AgentConsole;

namespace {

const QString kKey = QStringLiteral("envkey-Quokka-7731");
const QDate kDay(2026, 12, 7);

// The tools' words as the support tools give them (the window fills them from the loop).
ToolLabels lookupLabels(const char *title, const char *finding)
{
    ToolLabels labels;
    labels.title = QString::fromUtf8(title);
    labels.arguments = {{QStringLiteral("orderId"), QStringLiteral("Order")},
                        {QStringLiteral("sku"), QStringLiteral("SKU")}};
    labels.finding = QString::fromUtf8(finding);
    labels.resultValues = {{QStringLiteral("status"), {},
                            {{QStringLiteral("LOW_STOCK"), QStringLiteral("Low stock")},
                             {QStringLiteral("DELIVERED"), QStringLiteral("Delivered")}}}};
    return labels;
}

ToolLabels ticketLabels()
{
    ToolLabels labels;
    labels.title = QStringLiteral("Create an after-sales ticket");
    labels.arguments = {{QStringLiteral("orderId"), QStringLiteral("Order")},
                        {QStringLiteral("category"), QStringLiteral("Category"),
                         {{QStringLiteral("DAMAGED"), QStringLiteral("Damaged item")}}},
                        {QStringLiteral("description"), QStringLiteral("Description")}};
    labels.created = {QStringLiteral("ticketId"), QStringLiteral("Ticket")};
    labels.finding = QStringLiteral("{ticketId} · {category}");
    labels.resultValues = {{QStringLiteral("category"), {},
                            {{QStringLiteral("DAMAGED"), QStringLiteral("Damaged item")}}}};
    return labels;
}

ToolCallRecord call(const QString &name, const ToolLabels &labels, const QJsonObject &arguments,
                    const ToolResult &result)
{
    ToolCallRecord record;
    record.name = name;
    record.labels = labels;
    record.arguments = arguments;
    record.state = ToolCallRecord::State::Finished;
    record.result = result;
    record.operationId = QStringLiteral("t-acme:c-42:r-7:%1:0").arg(name);
    record.toolCallId = QStringLiteral("call_secret_trace");
    return record;
}

ToolCallRecord logisticsTimedOut()
{
    return call(QStringLiteral("queryLogistics"),
                lookupLabels("Track a shipment", "{status} · {currentLocation}"),
                {{QStringLiteral("orderId"), QStringLiteral("A1001")}},
                ToolResult::failure(ResultCode::ToolTimeout,
                                    QStringLiteral("The lookup timed out (http://10.0.0.5)")));
}

ToolCallRecord stockFound()
{
    return call(QStringLiteral("queryInventory"),
                lookupLabels("Check stock", "{status} · {available} available"),
                {{QStringLiteral("sku"), QStringLiteral("SKU-200")}},
                ToolResult::ok(QStringLiteral("ok"),
                               QJsonObject{{QStringLiteral("status"), QStringLiteral("LOW_STOCK")},
                                           {QStringLiteral("available"), 3}}));
}

ToolCallRecord ticketMade()
{
    return call(QStringLiteral("createTicket"), ticketLabels(),
                {{QStringLiteral("orderId"), QStringLiteral("A1001")},
                 {QStringLiteral("category"), QStringLiteral("DAMAGED")},
                 {QStringLiteral("description"),
                  QStringLiteral("The mug arrived with its handle broken off")}},
                ToolResult::ok(QStringLiteral("Created"),
                               QJsonObject{{QStringLiteral("ticketId"), QStringLiteral("T-000012")},
                                           {QStringLiteral("category"),
                                            QStringLiteral("DAMAGED")}}));
}

TurnResult turn(const QString &question, const QList<ToolCallRecord> &calls)
{
    TurnResult result;
    result.requestId = QStringLiteral("r-0a1b2c3d4e5f");
    result.conversationId = QStringLiteral("c-9f8e7d6c5b4a");
    result.question = question;
    result.answer = QStringLiteral("The model's own words, not part of the note.");
    result.toolCalls = calls;
    return result;
}

} // namespace

class tst_CaseNote final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void saysWhatWasFoundWhatNotAndTheTickets();
    void nothingInternalGoesIn();
    void aMissIsAFindingAndAnUnknownWriteIsNotDone();
    void aTicketKeptInsteadIsNamed();
    void failureSentencesFollowTheLanguage();
    void scenarioTurnsAreLeftOut();
    void secretsAreRedacted();
    void fileNameIsTheTitleAndTheDate_data();
    void fileNameIsTheTitleAndTheDate();
};

void tst_CaseNote::saysWhatWasFoundWhatNotAndTheTickets()
{
    TurnResult first = turn(QStringLiteral("Where is order A1001 and\nis SKU-200 in stock?"),
                            {logisticsTimedOut(), stockFound()});
    TurnResult second = turn(QStringLiteral("Open a ticket: A1001 mug arrived broken"),
                             {ticketMade()});
    TurnResult third = turn(QStringLiteral("Thanks!"), {});
    const QString note
        = CaseNote::text({first, second, third}, Redactor(), Language::English, kDay);
    QCOMPARE(note, QStringLiteral(
        "Case note, 2026-12-07\n"
        "\n"
        "Request 1\n"
        "Question: Where is order A1001 and is SKU-200 in stock?\n"
        "Found:\n"
        "- Check stock (SKU-200): Low stock · 3 available\n"
        "Could not be looked up:\n"
        "- “Track a shipment” (A1001) timed out, so it is temporarily unavailable.\n"
        "\n"
        "Request 2\n"
        "Question: Open a ticket: A1001 mug arrived broken\n"
        "Found:\n"
        "- Create an after-sales ticket (A1001): T-000012 · Damaged item\n"
        "Ticket: T-000012\n"
        "\n"
        "Request 3\n"
        "Question: Thanks!\n"
        "Nothing was looked up.\n"));
}

void tst_CaseNote::nothingInternalGoesIn()
{
    TurnResult failed = turn(QStringLiteral("Where is A1001?"), {logisticsTimedOut()});
    failed.status = TurnStatus::Failed;
    failed.incidentId = QStringLiteral("inc-20261207-0042");
    const QString note = CaseNote::text({failed}, Redactor(), Language::English, kDay);
    for (const QString &internal :
         {QStringLiteral("TOOL_TIMEOUT"), QStringLiteral("r-0a1b2c3d4e5f"),
          QStringLiteral("c-9f8e7d6c5b4a"), QStringLiteral("t-acme"), QStringLiteral("call_"),
          QStringLiteral("inc-"), QStringLiteral("http"), QStringLiteral("10.0.0.5"),
          QStringLiteral("queryLogistics"), QStringLiteral("model's own words")})
        QVERIFY2(!note.contains(internal), qPrintable(internal + QStringLiteral(" in:\n") + note));
    QVERIFY(note.contains(QLatin1String("The request did not finish: no answer was given.")));
}

void tst_CaseNote::aMissIsAFindingAndAnUnknownWriteIsNotDone()
{
    ToolCallRecord missing = call(
        QStringLiteral("queryOrderStatus"), lookupLabels("Order status", "{status}"),
        {{QStringLiteral("orderId"), QStringLiteral("A9999")}},
        ToolResult::failure(SupportCode::OrderNotFound, QStringLiteral("No such order")));
    ToolCallRecord unknown = ticketMade();
    unknown.result = ToolResult::failure(ResultCode::ExecutionStatusUnknown,
                                         QStringLiteral("unknown"));
    ToolCallRecord declined = ticketMade();
    declined.result = ToolResult::nobodyToConfirm(Language::English);
    const QString note = CaseNote::text({turn(QStringLiteral("A9999?"),
                                              {missing, unknown, declined})},
                                        Redactor(), Language::English, kDay);
    QVERIFY2(note.contains(QLatin1String("Found:\n- Order A9999 was not found.\n")),
             qPrintable(note));
    QVERIFY2(note.contains(QStringLiteral(
                 "Not done:\n- “Create an after-sales ticket” (A1001): It is not known whether "
                 "the action took effect; check before trying again.\n- “Create an after-sales "
                 "ticket” (A1001): not run, nobody could be asked to confirm it.\n")),
             qPrintable(note));
    QVERIFY(!note.contains(QLatin1String("Ticket:")));
    QVERIFY(!note.contains(QLatin1String("Could not be looked up")));
}

void tst_CaseNote::aTicketKeptInsteadIsNamed()
{
    ToolCallRecord kept = ticketMade();
    kept.result = ToolResult::keptExisting(Language::English, QStringLiteral("T-000001"), {});
    const QString note = CaseNote::text({turn(QStringLiteral("Ticket for A1001 again"),
                                              {kept, ticketMade()})},
                                        Redactor(), Language::English, kDay);
    QVERIFY2(note.contains(QStringLiteral(
                 "Not done:\n- “Create an after-sales ticket” (A1001): not made, the earlier "
                 "T-000001 was kept.\nTicket: T-000001 (made earlier), T-000012\n")),
             qPrintable(note));
}

void tst_CaseNote::failureSentencesFollowTheLanguage()
{
    const QString note = CaseNote::text({turn(QStringLiteral("A1001 到了吗"),
                                              {logisticsTimedOut()})},
                                        Redactor(), Language::Chinese, kDay);
    // The table's Chinese staff sentence; the note's own words come from the translator
    // installed (none here: the English source).
    QVERIFY2(note.contains(QStringLiteral("- “Track a shipment” (A1001)超时，暂时无法查询。")),
             qPrintable(note));
    QVERIFY(note.contains(QStringLiteral("Question: A1001 到了吗")));
}

void tst_CaseNote::scenarioTurnsAreLeftOut()
{
    TurnResult own = turn(QStringLiteral("Where is A1001?"), {stockFound()});
    TurnResult run = turn(QStringLiteral("Scenario question about A2002"), {ticketMade()});
    run.scenario = QStringLiteral("Logistics hangs");
    const QString note = CaseNote::text({run, own, run}, Redactor(), Language::English, kDay);
    QVERIFY(!note.contains(QLatin1String("A2002")));
    QVERIFY(!note.contains(QLatin1String("T-000012")));
    QVERIFY(note.contains(QLatin1String("Request 1\nQuestion: Where is A1001?")));
    QVERIFY(!note.contains(QLatin1String("Request 2")));
    QVERIFY2(note.endsWith(QLatin1String(
                 "\n2 scenario run turn(s) left out: not the customer's conversation.\n")),
             qPrintable(note));
    QCOMPARE(CaseNote::staffTurns({run, own, run}).size(), 1);
    const QString none = CaseNote::text({run}, Redactor(), Language::English, kDay);
    QVERIFY(none.contains(QLatin1String("No request of the staff member's own to note.")));
}

void tst_CaseNote::secretsAreRedacted()
{
    ToolCallRecord leaky = stockFound();
    leaky.labels.finding = QStringLiteral("{status} · {note}");
    QJsonObject data = leaky.result.data.toObject();
    data.insert(QStringLiteral("note"), QStringLiteral("sk-abcdef0123456789xyz"));
    leaky.result.data = data;
    Redactor redactor;
    redactor.addSecret(kKey);
    const QString note = CaseNote::text(
        {turn(QStringLiteral("My key is %1, is SKU-200 in stock?").arg(kKey), {leaky})}, redactor,
        Language::English, kDay);
    QVERIFY(!note.contains(kKey));
    QVERIFY(!note.contains(QLatin1String("sk-abcdef")));
    QVERIFY(note.contains(QLatin1String("Question: My key is [redacted], is SKU-200")));
    QCOMPARE(conversationFileTitle({turn(QStringLiteral("key %1 here").arg(kKey), {})},
                                   redactor),
             QStringLiteral("key [redacted] here"));
}

void tst_CaseNote::fileNameIsTheTitleAndTheDate_data()
{
    QTest::addColumn<QString>("question");
    QTest::addColumn<QString>("suffix");
    QTest::addColumn<QString>("expected");
    QTest::newRow("plain") << QStringLiteral("A1001 mug arrived broken") << QStringLiteral("md")
                           << QStringLiteral("A1001 mug arrived broken — 2026-12-07.md");
    QTest::newRow("unsafe characters")
        << QStringLiteral("Where is A1001? / is it \"lost\": yes|no <now>*")
        << QStringLiteral("json")
        << QStringLiteral("Where is A1001 is it lost yes no now — 2026-12-07.json");
    QTest::newRow("dots and lines")
        << QStringLiteral("../../etc/passwd\nsecond line.") << QStringLiteral("md")
        << QStringLiteral("etc passwd second line — 2026-12-07.md");
    QTest::newRow("long, cut at a word")
        << QStringLiteral("The customer says order A1001 arrived with the handle of the mug "
                          "broken off and wants a replacement")
        << QStringLiteral("md")
        << QStringLiteral("The customer says order A1001 arrived with the handle of the — "
                          "2026-12-07.md");
    QTest::newRow("chinese") << QStringLiteral("查询订单 A1001 的物流位置")
                             << QStringLiteral("md")
                             << QStringLiteral("查询订单 A1001 的物流位置 — 2026-12-07.md");
    QTest::newRow("nothing left") << QStringLiteral(" ?? .. ") << QStringLiteral("md")
                                  << QStringLiteral("Conversation — 2026-12-07.md");
}

void tst_CaseNote::fileNameIsTheTitleAndTheDate()
{
    QFETCH(QString, question);
    QFETCH(QString, suffix);
    QFETCH(QString, expected);
    TurnResult run = turn(QStringLiteral("A scenario's question"), {});
    run.scenario = QStringLiteral("Logistics hangs");
    const QString name = suggestedExportFileName({run, turn(question, {})}, Redactor(), kDay,
                                                 suffix);
    QCOMPARE(name, expected);
    QVERIFY(name.size() <= kMaxTitleLength + QStringLiteral(" — 2026-12-07.json").size());
}

QTEST_GUILESS_MAIN(tst_CaseNote)
#include "tst_casenote.moc"
