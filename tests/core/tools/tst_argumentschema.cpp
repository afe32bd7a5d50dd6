// ArgumentSchema against schemas and arguments meant to crash or freeze the thread that checks
// them (issue #40 §2): $ref cycles and expansion bombs, depth, enums, and patterns that make
// std::regex backtrack for minutes or recurse past the stack. Each is refused with a reason or
// answered, and what a pattern says is still enforced wherever it stands (under not, oneOf,
// items, a $ref, patternProperties).

#include "core/tools/argumentschema.h"

#include <QElapsedTimer>
#include <QJsonArray>
#include <QJsonDocument>
#include <QTest>
#include <QThread>

#include <atomic>
#include <memory>
#include <vector>

using namespace AgentConsole;

namespace {

QJsonObject json(const char *text)
{
    QJsonParseError error;
    const QJsonDocument document = QJsonDocument::fromJson(QByteArray(text), &error);
    Q_ASSERT_X(error.error == QJsonParseError::NoError, "json", text);
    return document.object();
}

// A freeze is what these tests look for, not a speed: std::regex took 14-69 s on the first
// two of them. A bound a thousand times what RE2 needs tells a hang from an answer.
constexpr qint64 kAnswersWithinMs = 2000;

QJsonObject stringProperty(const QString &pattern)
{
    return QJsonObject{
        {"type", "object"},
        {"properties", QJsonObject{{"s", QJsonObject{{"type", "string"}, {"pattern", pattern}}}}}};
}

QJsonObject nestedProperties(int levels)
{
    QJsonObject schema{{"type", "string"}};
    for (int i = 0; i < levels; ++i)
        schema = QJsonObject{{"type", "object"}, {"properties", QJsonObject{{"a", schema}}}};
    return schema;
}

// Fourteen definitions, each using the next twice: 2^14 schemas once written out, within the
// depth bound (two levels a definition).
QJsonObject expansionBomb()
{
    QJsonObject definitions;
    for (int i = 0; i < 14; ++i) {
        const QString next = QStringLiteral("#/definitions/d%1").arg(i + 1);
        definitions.insert(QStringLiteral("d%1").arg(i),
                           QJsonObject{{"allOf", QJsonArray{QJsonObject{{"$ref", next}},
                                                            QJsonObject{{"$ref", next}}}}});
    }
    definitions.insert(QStringLiteral("d14"), QJsonObject{{"type", "string"}});
    return QJsonObject{{"definitions", definitions}, {"$ref", "#/definitions/d0"}};
}

} // namespace

class tst_ArgumentSchema : public QObject
{
    Q_OBJECT

private slots:
    void hostileSchemasAreRefusedWithAReason_data();
    void hostileSchemasAreRefusedWithAReason();
    void boundedSchemasAreUsable_data();
    void boundedSchemasAreUsable();
    void backtrackingPatternAnswersAtOnce();
    void longArgumentAgainstARecursivePatternAnswersAtOnce();
    void patternsMeanWhatTheySayWhereverTheyStand_data();
    void patternsMeanWhatTheySayWhereverTheyStand();
    void aPropertyPatternNamesItsField();
    void aDateFormatOnAHugeStringIsNoCrash();
    void tooManyValuesAreRefusedUnchecked();
    void checksFromSeveralThreadsAgree();
};

void tst_ArgumentSchema::hostileSchemasAreRefusedWithAReason_data()
{
    QTest::addColumn<QJsonObject>("schema");
    QTest::addColumn<QString>("reason");
    QTest::newRow("$ref to the root") << json(R"({"type":"object","$ref":"#"})") << "leads back";
    QTest::newRow("$ref cycle through definitions")
        << json(R"({"definitions":{"a":{"$ref":"#/definitions/b"},"b":{"items":{"$ref":"#/definitions/a"}}},
                   "properties":{"x":{"$ref":"#/definitions/a"}}})")
        << "leads back";
    QTest::newRow("$ref to itself") << json(R"({"definitions":{"a":{"$ref":"#/definitions/a"}},
                                               "$ref":"#/definitions/a"})")
                                    << "leads back";
    QTest::newRow("$ref nowhere") << json(R"({"properties":{"x":{"$ref":"#/definitions/none"}}})")
                                  << "points nowhere";
    QTest::newRow("$ref remote") << json(R"({"properties":{"x":{"$ref":"http://127.0.0.1:9/s.json"}}})")
                                 << "not local";
    QTest::newRow("$ref not a string") << json(R"({"properties":{"x":{"$ref":7}}})") << "not local";
    QTest::newRow("deeper than 32") << nestedProperties(40) << "deeper than 32";
    QTest::newRow("expansion bomb") << expansionBomb() << "more than 4096 schemas";
    QJsonArray values;
    for (int i = 0; i < 1500; ++i)
        values.append(i);
    QTest::newRow("enum of 1500") << QJsonObject{{"enum", values}} << "more than 1024 values";
    QTest::newRow("backreference") << stringProperty(QStringLiteral("^(a)\\1$")) << "linear time";
    QTest::newRow("lookahead") << stringProperty(QStringLiteral("^(?=a)a$")) << "linear time";
    QTest::newRow("pattern too long") << stringProperty(QString(2000, QLatin1Char('a')))
                                      << "longer than 1024";
    QTest::newRow("pattern too large to compile")
        << stringProperty(QStringLiteral("((((a{100}){100}){100}){100})")) << "linear time";
    QTest::newRow("pattern not a string") << json(R"({"properties":{"s":{"pattern":1}}})")
                                          << "not a string";
    QTest::newRow("subschema not a schema") << json(R"({"properties":{"s":"string"}})")
                                            << "is not a schema";
}

void tst_ArgumentSchema::hostileSchemasAreRefusedWithAReason()
{
    QFETCH(QJsonObject, schema);
    QFETCH(QString, reason);
    const ArgumentSchema checked(schema);
    QVERIFY2(checked.problem().contains(reason), qPrintable(checked.problem()));
    // An unusable schema accepts nothing.
    QCOMPARE(checked.invalidFields({{"s", "a"}}), QStringList{"(arguments)"});
}

void tst_ArgumentSchema::boundedSchemasAreUsable_data()
{
    QTest::addColumn<QJsonObject>("schema");
    QTest::addColumn<QJsonObject>("valid");
    QTest::addColumn<QJsonObject>("invalid");
    QTest::newRow("local $ref used twice")
        << json(R"({"$defs":{"id":{"type":"string","maxLength":3}},
                    "properties":{"a":{"$ref":"#/$defs/id"},"b":{"$ref":"#/$defs/id"}}})")
        << json(R"({"a":"x","b":"y"})") << json(R"({"a":"x","b":"long"})");
    QTest::newRow("escaped pointer")
        << json(R"({"definitions":{"a/b":{"type":"integer"}},
                    "properties":{"n":{"$ref":"#/definitions/a~1b"}}})")
        << json(R"({"n":1})") << json(R"({"n":"1"})");
    QTest::newRow("32 levels") << nestedProperties(31) << QJsonObject{} << QJsonObject{};
}

void tst_ArgumentSchema::boundedSchemasAreUsable()
{
    QFETCH(QJsonObject, schema);
    QFETCH(QJsonObject, valid);
    QFETCH(QJsonObject, invalid);
    const ArgumentSchema checked(schema);
    QVERIFY2(checked.problem().isEmpty(), qPrintable(checked.problem()));
    QCOMPARE(checked.invalidFields(valid), QStringList{});
    if (!invalid.isEmpty())
        QVERIFY(!checked.invalidFields(invalid).isEmpty());
}

void tst_ArgumentSchema::backtrackingPatternAnswersAtOnce()
{
    const ArgumentSchema checked(stringProperty(QStringLiteral("^(a+)+$")));
    QVERIFY2(checked.problem().isEmpty(), qPrintable(checked.problem()));
    QElapsedTimer clock;
    clock.start();
    QVERIFY(checked.invalidFields({{"s", QString(30, QLatin1Char('a')) + QLatin1Char('!')}})
                .contains("s"));
    QCOMPARE(checked.invalidFields({{"s", QString(30, QLatin1Char('a'))}}), QStringList{});
    QVERIFY2(clock.elapsed() < kAnswersWithinMs, qPrintable(QString::number(clock.elapsed())));
}

void tst_ArgumentSchema::longArgumentAgainstARecursivePatternAnswersAtOnce()
{
    const ArgumentSchema checked(stringProperty(QStringLiteral("^(a|b)*$")));
    QVERIFY2(checked.problem().isEmpty(), qPrintable(checked.problem()));
    QString text;
    for (int i = 0; i < 20000; ++i)
        text.append(i % 3 ? QLatin1Char('a') : QLatin1Char('b'));
    QElapsedTimer clock;
    clock.start();
    QCOMPARE(checked.invalidFields({{"s", text}}), QStringList{});
    QVERIFY(checked.invalidFields({{"s", text + QLatin1Char('c')}}).contains("s"));
    QVERIFY2(clock.elapsed() < kAnswersWithinMs, qPrintable(QString::number(clock.elapsed())));
}

void tst_ArgumentSchema::patternsMeanWhatTheySayWhereverTheyStand_data()
{
    QTest::addColumn<QJsonObject>("schema");
    QTest::addColumn<QJsonObject>("arguments");
    QTest::addColumn<bool>("valid");
    const QJsonObject plain = stringProperty(QStringLiteral("^A\\d{4,10}$"));
    QTest::newRow("plain, matches") << plain << json(R"({"s":"A1001"})") << true;
    QTest::newRow("plain, does not") << plain << json(R"({"s":"B1001"})") << false;
    QTest::newRow("search, not whole match") << stringProperty(QStringLiteral("\\d"))
                                             << json(R"({"s":"ab1"})") << true;
    QTest::newRow("not a string is not asked") << json(R"({"properties":{"s":{"pattern":"^x$"}}})")
                                               << json(R"({"s":5})") << true;
    const QJsonObject negated = json(R"({"properties":{"s":{"not":{"pattern":"^x"}}}})");
    QTest::newRow("under not, matches") << negated << json(R"({"s":"xa"})") << false;
    QTest::newRow("under not, does not") << negated << json(R"({"s":"ya"})") << true;
    const QJsonObject either = json(
        R"({"properties":{"s":{"oneOf":[{"pattern":"^a"},{"pattern":"b$"}]}}})");
    QTest::newRow("oneOf, first") << either << json(R"({"s":"ax"})") << true;
    QTest::newRow("oneOf, both") << either << json(R"({"s":"ab"})") << false;
    QTest::newRow("oneOf, none") << either << json(R"({"s":"xx"})") << false;
    const QJsonObject byName = json(R"({"type":"object",
        "properties":{"id":{"type":"integer"}},
        "patternProperties":{"^S_":{"type":"string"},"_n$":{"type":"string","maxLength":2}},
        "additionalProperties":false})");
    QTest::newRow("patternProperties, fits") << byName << json(R"({"id":1,"S_a":"xyz"})") << true;
    QTest::newRow("patternProperties, wrong type") << byName << json(R"({"S_a":1})") << false;
    QTest::newRow("patternProperties, two patterns") << byName << json(R"({"S_n":"xyz"})")
                                                     << false;
    QTest::newRow("patternProperties, additional") << byName << json(R"({"b":"x"})") << false;
    QTest::newRow("patternProperties, nested object")
        << json(R"({"properties":{"o":{"patternProperties":{"^k":{"type":"integer"}}}}})")
        << json(R"({"o":{"k1":"x"},"k2":"y"})") << false;
    const QJsonObject items = json(R"({"properties":{"l":{"items":{"pattern":"^[0-9]+$"}}}})");
    QTest::newRow("items, all match") << items << json(R"({"l":["1","22","333"]})") << true;
    QTest::newRow("items, one does not") << items << json(R"({"l":["1","x","333"]})") << false;
    QTest::newRow("through a $ref")
        << json(R"({"$defs":{"id":{"pattern":"^A"}},"properties":{"s":{"$ref":"#/$defs/id"}}})")
        << json(R"({"s":"B1"})") << false;
    QTest::newRow("unicode") << stringProperty(QStringLiteral("^\\p{Han}+$"))
                             << json(R"({"s":"物流"})") << true;
    // A property's own pattern is checked beside the validator; one elsewhere in the same
    // schema still through the per-call rewrite: both hold, whichever fails.
    const QJsonObject mixed = json(R"({"properties":{"s":{"pattern":"^A"},
        "t":{"anyOf":[{"pattern":"^x"},{"type":"integer"}]}},"required":["s"]})");
    QTest::newRow("mixed, both hold") << mixed << json(R"({"s":"A1","t":"xy"})") << true;
    QTest::newRow("mixed, property's fails") << mixed << json(R"({"s":"B1","t":"xy"})") << false;
    QTest::newRow("mixed, anyOf's fails") << mixed << json(R"({"s":"A1","t":"yy"})") << false;
    QTest::newRow("mixed, required still") << mixed << json(R"({"t":"xy"})") << false;
    // A $ref into a property's schema takes its pattern along: nothing is lifted there.
    QTest::newRow("$ref to a property's schema")
        << json(R"({"properties":{"s":{"pattern":"^A"},"u":{"$ref":"#/properties/s"}}})")
        << json(R"({"s":"A1","u":"B2"})") << false;
}

void tst_ArgumentSchema::patternsMeanWhatTheySayWhereverTheyStand()
{
    QFETCH(QJsonObject, schema);
    QFETCH(QJsonObject, arguments);
    QFETCH(bool, valid);
    const ArgumentSchema checked(schema);
    QVERIFY2(checked.problem().isEmpty(), qPrintable(checked.problem()));
    QCOMPARE(checked.invalidFields(arguments).isEmpty(), valid);
}

// The failing field is named, the pattern's as any other's: the model is told which to mend.
void tst_ArgumentSchema::aPropertyPatternNamesItsField()
{
    const ArgumentSchema checked(json(R"({"type":"object","properties":{
        "orderId":{"type":"string","pattern":"^A\\d{4,10}$"},"n":{"type":"integer"}}})"));
    QVERIFY(checked.problem().isEmpty());
    QCOMPARE(checked.invalidFields(json(R"({"orderId":"B1001"})")),
             QStringList{QStringLiteral("orderId")});
    const QStringList both = checked.invalidFields(json(R"({"orderId":"B1001","n":"x"})"));
    QVERIFY2(both.contains(QStringLiteral("n")) && both.contains(QStringLiteral("orderId")),
             qPrintable(both.join(u',')));
    QCOMPARE(both.count(QStringLiteral("orderId")), 1);
    QVERIFY(checked.invalidFields(json(R"({"orderId":"A1001","n":1})")).isEmpty());
}

void tst_ArgumentSchema::aDateFormatOnAHugeStringIsNoCrash()
{
    // valijson checks "date-time" with std::regex, which recursed once per character: the
    // format is an annotation here (argumentschema.cpp) and never reaches it.
    const ArgumentSchema checked(json(R"({"properties":{"d":{"type":"string","format":"date-time"}}})"));
    QVERIFY2(checked.problem().isEmpty(), qPrintable(checked.problem()));
    QCOMPARE(checked.invalidFields({{"d", QString(200000, QLatin1Char('1'))}}), QStringList{});
}

void tst_ArgumentSchema::tooManyValuesAreRefusedUnchecked()
{
    const ArgumentSchema checked(json(R"({"properties":{"l":{"type":"array","uniqueItems":true}}})"));
    QJsonArray many;
    for (int i = 0; i < ArgumentSchema::maxCheckedValues; ++i)
        many.append(i);
    QCOMPARE(checked.invalidFields({{"l", many}}), QStringList{"(arguments)"});
    many.removeLast();
    many.removeLast();
    QCOMPARE(checked.invalidFields({{"l", many}}), QStringList{}); // the object, l and its items
    QCOMPARE(jsonValueCount(QJsonValue(many), 5), 6);
}

void tst_ArgumentSchema::checksFromSeveralThreadsAgree()
{
    const ArgumentSchema checked(stringProperty(QStringLiteral("^A\\d{4}$")));
    std::vector<std::unique_ptr<QThread>> threads;
    std::atomic<int> wrong{0};
    for (int t = 0; t < 4; ++t) {
        threads.emplace_back(QThread::create([&checked, &wrong, t] {
            for (int i = 0; i < 200; ++i) {
                const bool good = (i + t) % 2 == 0;
                const QString id = good ? QStringLiteral("A%1").arg(1000 + i)
                                        : QStringLiteral("B%1").arg(1000 + i);
                if (checked.invalidFields({{"s", id}}).isEmpty() != good)
                    ++wrong;
            }
        }));
        threads.back()->start();
    }
    for (const auto &thread : threads)
        QVERIFY(thread->wait(QDeadlineTimer(60000)));
    QCOMPARE(wrong.load(), 0);
}

QTEST_GUILESS_MAIN(tst_ArgumentSchema)
#include "tst_argumentschema.moc"
