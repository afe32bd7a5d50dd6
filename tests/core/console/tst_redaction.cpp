// The redactor of exports: each kind of secret goes, ordinary ids stay (docs/EXPORT.md).
#include "core/console/redaction.h"
#include "core/console/runtimeoptions.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>

using namespace AgentConsole;

class tst_Redaction final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void secretsAreRedacted_data();
    void secretsAreRedacted();
    void ordinaryIdsStay_data();
    void ordinaryIdsStay();
    void knownKeyValuesGoWhateverTheirShape();
    void keysAreReadFromTheModelsVariables();
    void shortOrEmptyKnownValuesAreNotLookedFor();
    void jsonIsRedactedRecursively();
};

void tst_Redaction::secretsAreRedacted_data()
{
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("secret"); // must be gone
    QTest::addColumn<QString>("expected"); // the whole result, when it is fixed

    QTest::newRow("sk- key") << "my key is sk-proj-4f1c2e9a7b3d5e6f, thanks"
                             << "4f1c2e9a7b3d5e6f"
                             << "my key is [redacted], thanks";
    QTest::newRow("sk_live_") << "stripe sk_live_51HxYzAbCdEf0123"
                              << "51HxYzAbCdEf0123"
                              << "stripe [redacted]";
    QTest::newRow("github token") << "ghp_abcdefghijklmnopqrstuvwxyz0123456789"
                                  << "abcdefghijklmnop"
                                  << "[redacted]";
    QTest::newRow("aws key id") << "AKIAIOSFODNN7EXAMPLE in use"
                                << "AKIAIOSFODNN7EXAMPLE"
                                << "[redacted] in use";
    QTest::newRow("bearer") << "sent Bearer abc.def-ghi_jkl123 to it"
                            << "abc.def-ghi_jkl123"
                            << "sent Bearer [redacted] to it";
    QTest::newRow("authorization header") << "Authorization: Basic dXNlcjpwYXNzd29yZA==\nnext line"
                                          << "dXNlcjpwYXNzd29yZA"
                                          << "Authorization: [redacted]\nnext line";
    QTest::newRow("authorization bearer") << "authorization: Bearer tok3n-value-1"
                                          << "tok3n"
                                          << "authorization: [redacted]";
    QTest::newRow("query api_key") << "GET /v1?model=x&api_key=s3cr3tvalue&n=2"
                                   << "s3cr3tvalue"
                                   << "GET /v1?model=x&api_key=[redacted]&n=2";
    QTest::newRow("query apikey") << "https://h/p?apikey=zzz111yyy"
                                  << "zzz111yyy"
                                  << "https://h/p?apikey=[redacted]";
    QTest::newRow("query token") << "callback?token=abc123&x=1"
                                 << "abc123"
                                 << "callback?token=[redacted]&x=1";
    QTest::newRow("password=") << "login with password=hunter22 please"
                               << "hunter22"
                               << "login with password=[redacted] please";
    QTest::newRow("json field in text") << R"({"orderId":"A1001","password":"p@ss \"w\""})"
                                        << "p@ss"
                                        << R"({"orderId":"A1001","password": "[redacted]"})";
    QTest::newRow("json api-key number") << R"({"api_key": 1234567})"
                                         << "1234567"
                                         << R"({"api_key": "[redacted]"})";
    QTest::newRow("url user:password@") << "see https://admin:pa55word@db.internal:5432/x"
                                        << "pa55word"
                                        << "see https://[redacted]@db.internal:5432/x";
    QTest::newRow("postgres url") << "postgresql://u:secret1@host/db"
                                  << "secret1"
                                  << "postgresql://[redacted]@host/db";
    QTest::newRow("long high-entropy token")
        << "token 9f8e7d6c5b4a39281706f5e4d3c2b1a0f9e8d7c6 seen"
        << "9f8e7d6c5b4a392817"
        << "token [redacted] seen";
    QTest::newRow("jwt") << "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.x"
                         << "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9" << QString();
    QTest::newRow("in Chinese text") << "密钥是 sk-abcdef0123456789 请勿外传"
                                     << "abcdef0123456789"
                                     << "密钥是 [redacted] 请勿外传";
}

void tst_Redaction::secretsAreRedacted()
{
    QFETCH(QString, text);
    QFETCH(QString, secret);
    QFETCH(QString, expected);
    const QString redacted = Redactor().redact(text);
    QVERIFY2(!redacted.contains(secret), qPrintable(redacted));
    QVERIFY2(redacted.contains(Redactor::placeholder()), qPrintable(redacted));
    if (!expected.isEmpty())
        QCOMPARE(redacted, expected);
    // Redacting twice changes nothing more.
    QCOMPARE(Redactor().redact(redacted), redacted);
}

void tst_Redaction::ordinaryIdsStay_data()
{
    QTest::addColumn<QString>("text");
    QTest::newRow("operation id") << "t-acme:c-1a2b3c4d5e6f:r-0a1b2c3d4e5f:queryLogistics:0";
    QTest::newRow("long operation id")
        << "t-acme:conversation-2026-12-01-export-test:r-0a1b2c3d4e5f7a8b:createTicket:3";
    QTest::newRow("order ids") << "Where is order A1001 and A2001, SKU-200 and SKU-900?";
    QTest::newRow("ticket and incident ids") << "ticket T-000012, incident INC-1A2B3C4D";
    QTest::newRow("tracking number") << "tracking SF10010001 at Shanghai Pudong Hub";
    QTest::newRow("uuid") << "console 123e4567-e89b-12d3-a456-426614174000 started";
    QTest::newRow("uuid upper") << "id 123E4567-E89B-12D3-A456-426614174000";
    QTest::newRow("request id") << "request r-9c1d2e3f4a5b, call_abc123";
    QTest::newRow("long words") << "queryLogistics_for_the_order_and_the_inventory_sku";
    QTest::newRow("fault summary") << "queryLogistics: hang; model: unavailable; seed 7";
    QTest::newRow("policy") << "3 attempts × 2 s, backoff 200 ms ×2 ≤ 1 s; worst case 6.6 s";
    QTest::newRow("counter names") << "model_retry_count: 2, tool_retry_count: 0";
    QTest::newRow("tokens as a word") << "the model used 120 tokens; token budget left";
    QTest::newRow("Chinese") << "查询订单 A1001 的物流位置";
    QTest::newRow("url without credentials") << "https://api.deepseek.com/v1/chat/completions";
    QTest::newRow("SKU like sk") << "SKU-100 is in stock; task-12345678 done";
}

void tst_Redaction::ordinaryIdsStay()
{
    QFETCH(QString, text);
    QCOMPARE(Redactor().redact(text), text);
}

void tst_Redaction::knownKeyValuesGoWhateverTheirShape()
{
    Redactor redactor;
    redactor.addSecret(QStringLiteral("  plain-words-key  ")); // trimmed, as the key is read
    redactor.addSecret(QStringLiteral("Tr0ub4dor&3"));
    QCOMPARE(redactor.knownSecrets(), 2);
    QCOMPARE(redactor.redact(QStringLiteral("a plain-words-key and Tr0ub4dor&3!")),
        QStringLiteral("a [redacted] and [redacted]!"));
}

void tst_Redaction::keysAreReadFromTheModelsVariables()
{
    qputenv("TST_REDACTION_PRIMARY", "primary-Secret-Value");
    qputenv("TST_REDACTION_SECONDARY", " second@ry-value ");
    ModelOptions model;
    model.apiKeyEnv = QStringLiteral("TST_REDACTION_PRIMARY");
    model.secondaryApiKeyEnv = QStringLiteral("TST_REDACTION_SECONDARY");
    const Redactor redactor = Redactor::forModel(model, {QStringLiteral("from-the-keychain")});
    QCOMPARE(redactor.knownSecrets(), 3);
    QCOMPARE(redactor.redact(
                 QStringLiteral("primary-Secret-Value / second@ry-value / from-the-keychain")),
        QStringLiteral("[redacted] / [redacted] / [redacted]"));
    qunsetenv("TST_REDACTION_PRIMARY");
    qunsetenv("TST_REDACTION_SECONDARY");
}

void tst_Redaction::shortOrEmptyKnownValuesAreNotLookedFor()
{
    Redactor redactor;
    redactor.addSecret(QString());
    redactor.addSecret(QStringLiteral("abc"));
    QCOMPARE(redactor.knownSecrets(), 0);
    QCOMPARE(redactor.redact(QStringLiteral("abc abc")), QStringLiteral("abc abc"));
}

void tst_Redaction::jsonIsRedactedRecursively()
{
    Redactor redactor;
    redactor.addSecret(QStringLiteral("the-env-key-1"));
    const QJsonObject input{
        {QStringLiteral("answer"), QStringLiteral("key the-env-key-1 leaked")},
        {QStringLiteral("operationId"), QStringLiteral("t-acme:c-1:r-2:queryOrder:0")},
        {QStringLiteral("password"), 12345},
        {QStringLiteral("apiKey"), QJsonObject{{QStringLiteral("nested"), 1}}},
        {QStringLiteral("Authorization"), QStringLiteral("anything")},
        {QStringLiteral("attempts"), 3},
        {QStringLiteral("toolCalls"),
            QJsonArray{QJsonObject{
                {QStringLiteral("arguments"),
                    QJsonObject{{QStringLiteral("note"), QStringLiteral("Bearer abcdefgh1234")},
                        {QStringLiteral("orderId"), QStringLiteral("A1001")}}},
                {QStringLiteral("rawArguments"), QStringLiteral(R"({"token":"zzz-123"})")}}}},
    };
    const QJsonObject out = redactor.redact(input);
    const QByteArray text = QJsonDocument(out).toJson(QJsonDocument::Compact);
    for (const char *gone :
        {"the-env-key-1", "12345", "nested", "anything", "abcdefgh1234", "zzz-123"})
        QVERIFY2(!text.contains(gone), text.constData());
    QCOMPARE(out.value(QLatin1String("operationId")).toString(),
        QStringLiteral("t-acme:c-1:r-2:queryOrder:0"));
    QCOMPARE(out.value(QLatin1String("attempts")).toInt(), 3);
    QCOMPARE(out.value(QLatin1String("password")).toString(), Redactor::placeholder());
    QCOMPARE(out.value(QLatin1String("apiKey")).toString(), Redactor::placeholder());
    const QJsonObject arguments = out.value(QLatin1String("toolCalls"))
                                      .toArray()
                                      .first()
                                      .toObject()
                                      .value(QLatin1String("arguments"))
                                      .toObject();
    QCOMPARE(arguments.value(QLatin1String("orderId")).toString(), QStringLiteral("A1001"));
    QCOMPARE(
        arguments.value(QLatin1String("note")).toString(), QStringLiteral("Bearer [redacted]"));
}

QTEST_GUILESS_MAIN(tst_Redaction)
#include "tst_redaction.moc"
