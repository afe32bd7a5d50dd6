// canonicalJson and requestHash: layout and key order never change the hash; any change of a
// value, a key or a type does.

#include "core/ledger/requesthash.h"

#include <QCryptographicHash>
#include <QJsonDocument>
#include <QTest>

using namespace AgentConsole;

namespace {

QJsonObject parse(const char *json)
{
    QJsonParseError error;
    const QJsonDocument document = QJsonDocument::fromJson(QByteArray(json), &error);
    if (error.error != QJsonParseError::NoError || !document.isObject())
        qFatal("test data is not a JSON object: %s", json);
    return document.object();
}

} // namespace

class TestRequestHash : public QObject
{
    Q_OBJECT

private slots:
    void canonicalText_data();
    void canonicalText();
    void layoutAndOrderDoNotMatter_data();
    void layoutAndOrderDoNotMatter();
    void anyValueChangeMatters_data();
    void anyValueChangeMatters();
    void hashIsLowerCaseHexSha256();
};

void TestRequestHash::canonicalText_data()
{
    QTest::addColumn<QByteArray>("json");
    QTest::addColumn<QByteArray>("canonical");

    QTest::newRow("empty") << QByteArray("{}") << QByteArray("{}");
    QTest::newRow("sorted keys, no spaces")
        << QByteArray(R"({ "b" : 1, "a" : [ true, null, "x" ] })")
        << QByteArray(R"({"a":[true,null,"x"],"b":1})");
    QTest::newRow("nested objects sorted too")
        << QByteArray(R"({"z":{"d":1,"c":{"f":2,"e":3}},"y":[{"b":1,"a":2}]})")
        << QByteArray(R"({"y":[{"a":2,"b":1}],"z":{"c":{"e":3,"f":2},"d":1}})");
    QTest::newRow("numbers as JSON writes them")
        << QByteArray(R"({"i":10,"f":1.5,"e":1e3,"n":-0.25})")
        << QByteArray(R"({"e":1000,"f":1.5,"i":10,"n":-0.25})");
    QTest::newRow("strings escaped as compact JSON")
        << QByteArray(R"({"s":"line\nquote\" slash\\ 工单"})")
        << QByteArray("{\"s\":\"line\\nquote\\\" slash\\\\ \xe5\xb7\xa5\xe5\x8d\x95\"}");
}

void TestRequestHash::canonicalText()
{
    QFETCH(QByteArray, json);
    QFETCH(QByteArray, canonical);
    QCOMPARE(canonicalJson(parse(json.constData())), canonical);
}

void TestRequestHash::layoutAndOrderDoNotMatter_data()
{
    QTest::addColumn<QByteArray>("first");
    QTest::addColumn<QByteArray>("second");

    QTest::newRow("key order")
        << QByteArray(R"({"orderId":"A1001","category":"refund","description":"broken"})")
        << QByteArray(R"({"description":"broken","category":"refund","orderId":"A1001"})");
    QTest::newRow("whitespace and newlines")
        << QByteArray(R"({"orderId":"A1001","category":"refund"})")
        << QByteArray("{\n  \"orderId\" :\t\"A1001\",\n  \"category\": \"refund\"\n}\n");
    QTest::newRow("nested key order")
        << QByteArray(R"({"x":{"a":1,"b":{"c":[1,{"d":2,"e":3}]}}})")
        << QByteArray(R"({"x":{"b":{"c":[1,{"e":3,"d":2}]},"a":1}})");
    QTest::newRow("same number, other spelling")
        << QByteArray(R"({"n":1000})") << QByteArray(R"({"n":1e3})");
}

void TestRequestHash::layoutAndOrderDoNotMatter()
{
    QFETCH(QByteArray, first);
    QFETCH(QByteArray, second);
    QCOMPARE(requestHash(parse(first.constData())), requestHash(parse(second.constData())));
}

void TestRequestHash::anyValueChangeMatters_data()
{
    QTest::addColumn<QByteArray>("first");
    QTest::addColumn<QByteArray>("second");

    const QByteArray base = R"({"orderId":"A1001","amount":100,"tags":["a","b"],"o":{"k":true}})";
    QTest::newRow("string value")
        << base
        << QByteArray(R"({"orderId":"A1002","amount":100,"tags":["a","b"],"o":{"k":true}})");
    QTest::newRow("number value")
        << base
        << QByteArray(R"({"orderId":"A1001","amount":200,"tags":["a","b"],"o":{"k":true}})");
    QTest::newRow("number becomes string")
        << base
        << QByteArray(R"({"orderId":"A1001","amount":"100","tags":["a","b"],"o":{"k":true}})");
    QTest::newRow("array order")
        << base
        << QByteArray(R"({"orderId":"A1001","amount":100,"tags":["b","a"],"o":{"k":true}})");
    QTest::newRow("nested value")
        << base
        << QByteArray(R"({"orderId":"A1001","amount":100,"tags":["a","b"],"o":{"k":false}})");
    QTest::newRow("key renamed")
        << base
        << QByteArray(R"({"orderID":"A1001","amount":100,"tags":["a","b"],"o":{"k":true}})");
    QTest::newRow("key added")
        << base
        << QByteArray(R"({"orderId":"A1001","amount":100,"tags":["a","b"],"o":{"k":true},)"
                      R"("x":null})");
    QTest::newRow("case of a value")
        << base
        << QByteArray(R"({"orderId":"a1001","amount":100,"tags":["a","b"],"o":{"k":true}})");
}

void TestRequestHash::anyValueChangeMatters()
{
    QFETCH(QByteArray, first);
    QFETCH(QByteArray, second);
    QVERIFY(requestHash(parse(first.constData())) != requestHash(parse(second.constData())));
}

void TestRequestHash::hashIsLowerCaseHexSha256()
{
    const QJsonObject arguments = parse(R"({"b":1,"a":"x"})");
    const QByteArray hash = requestHash(arguments);
    QCOMPARE(hash.size(), 64);
    QCOMPARE(hash, hash.toLower());
    QCOMPARE(hash,
             QCryptographicHash::hash(QByteArray(R"({"a":"x","b":1})"), QCryptographicHash::Sha256)
                 .toHex());
    // Pinned, so that a change of canonical form (which would orphan every stored row's
    // hash) cannot pass unnoticed: printf '{"a":"x","b":1}' | sha256sum
    QCOMPARE(hash,
             QByteArray("cdab067e9f3beb32d1252cfd63e492592"
                        "fecbf591b0d08cadb24bb17f3864246"));
}

QTEST_GUILESS_MAIN(TestRequestHash)
#include "tst_requesthash.moc"
