// The stored settings (QSettings, one INI file): a round trip, broken and out-of-range values
// reported with their defaults used, files that cannot be read left exactly as they were, and
// the command line winning over what is stored.
#include "core/console/connectionsettings.h"
#include "core/console/consolesettings.h"
#include "core/console/runtimecommandline.h"
#include "core/console/settingswriter.h"

#include <QCommandLineParser>
#include <QDir>
#include <QFile>
#include <QSettings>
#include <QTemporaryDir>
#include <QTest>
#include <QThread>

using namespace AgentConsole;

namespace {

QByteArray readAll(const QString &path)
{
    QFile file(path);
    return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
}

bool writeAll(const QString &path, const QByteArray &bytes)
{
    QFile file(path);
    return file.open(QIODevice::WriteOnly | QIODevice::Truncate)
        && file.write(bytes) == bytes.size();
}

ModelOptions remoteModel()
{
    ModelOptions model;
    model.provider = ModelOptions::Provider::OpenAiCompatible;
    model.baseUrl = QStringLiteral("https://api.deepseek.com");
    model.model = QStringLiteral("deepseek-v4-flash");
    model.apiKeyEnv = QStringLiteral("MY_KEY");
    model.stream = false;
    model.fallbackToOffline = false;
    model.contextChars = 50'000;
    return model;
}

std::optional<RuntimeOptions> readCommandLine(const QStringList &arguments,
                                              const RuntimeOptions &base, QString *error)
{
    const RuntimeCommandLine options;
    QCommandLineParser parser;
    options.addTo(parser);
    if (!parser.parse(QStringList{QStringLiteral("agent-console")} + arguments)) {
        *error = parser.errorText();
        return std::nullopt;
    }
    return options.read(parser, error, base);
}

} // namespace

class tst_ConsoleSettings final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void init();
    void nothingStoredGivesTheDefaults();
    void storedSettingsAreRestored();
    void brokenValueUsesItsDefault_data();
    void brokenValueUsesItsDefault();
    void fileThatCannotBeReadIsKept_data();
    void fileThatCannotBeReadIsKept();
    void passwordsAreNeverStored();
    void commandLineWinsOverStoredSettings();
    void aTeamDatabaseIsStoredWithoutPasswordAndHoldsTheLedger();
    void conversationBudgetFollowsTheProvider();
    void inTheBackgroundSavesWriteOffTheCallersThreadInOrder();
    void inTheBackgroundAFileGoneBadIsReported();

private:
    std::unique_ptr<QTemporaryDir> m_dir;
    QString m_path;
};

// Issue #43 §2: Settings › Team stores the team's database for the next start, never with a
// password; it holds the ledger, and the command line's choice of either wins over the other.
void tst_ConsoleSettings::aTeamDatabaseIsStoredWithoutPasswordAndHoldsTheLedger()
{
    QString error;
    {
        ConsoleSettings settings(m_path);
        settings.load();
        QVERIFY(
            !settings.saveTeam(QStringLiteral("postgresql://agent:hunter2@db:5432/team"), &error));
        QVERIFY2(error.contains(QLatin1String("leave the password out")), qPrintable(error));
        QVERIFY(!error.contains(QLatin1String("hunter2")));
        QVERIFY(!settings.saveTeam(QStringLiteral("mysql://db/team"), &error));
        QVERIFY(settings.saveLedger(QStringLiteral("sqlite"), &error));
        QVERIFY2(settings.saveTeam(QStringLiteral("postgresql://agent@db:5432/team"), &error),
                 qPrintable(error));
        QVERIFY(!readAll(m_path).contains("hunter2"));
    }
    ConsoleSettings stored(m_path);
    stored.load();
    QVERIFY(stored.problems().isEmpty());
    QCOMPARE(stored.settings().teamSpec, QStringLiteral("postgresql://agent@db:5432/team"));
    const RuntimeOptions base = stored.startOptions();
    QCOMPARE(base.teamSpec, QStringLiteral("postgresql://agent@db:5432/team"));
    QVERIFY(base.ledgerSpec.isEmpty()); // the team's database holds it

    std::optional<RuntimeOptions> read = readCommandLine({}, base, &error);
    QVERIFY2(read, qPrintable(error));
    QCOMPARE(read->teamSpec, base.teamSpec);
    read = readCommandLine({QStringLiteral("--ledger"), QStringLiteral("sqlite")}, base, &error);
    QVERIFY2(read, qPrintable(error)); // this start on a desk's own ledger: no team
    QVERIFY(read->teamSpec.isEmpty());
    QCOMPARE(read->ledgerSpec, QStringLiteral("sqlite"));
    read = readCommandLine({QStringLiteral("--team"), QStringLiteral("postgresql://a@b/c"),
                            QStringLiteral("--ledger"), QStringLiteral("sqlite")},
                           base, &error);
    QVERIFY(!read);
    QVERIFY(error.contains(QLatin1String("leave --ledger out")));

    // A stored address with a password (edited by hand) is not used, and not repeated.
    QSettings edit(m_path, QSettings::IniFormat);
    edit.setValue(QStringLiteral("team/database"), QStringLiteral("postgresql://a:pw9@b/c"));
    edit.sync();
    ConsoleSettings edited(m_path);
    edited.load();
    QVERIFY(edited.settings().teamSpec.isEmpty());
    QCOMPARE(edited.problems().size(), 1);
    QVERIFY(!edited.problems().constFirst().contains(QLatin1String("pw9")));
}

// Issue #24 §4: each preset's default budget, the offline model's and an unknown server's;
// one set in the settings or on the command line wins.
void tst_ConsoleSettings::conversationBudgetFollowsTheProvider()
{
    ModelOptions model;
    QCOMPARE(model.conversationBudget(), ModelOptions::defaultContextChars);
    model.provider = ModelOptions::Provider::OpenAiCompatible;
    for (const ProviderPreset &preset : providerPresets()) {
        model.baseUrl = preset.baseUrl;
        QCOMPARE(model.conversationBudget(), preset.contextChars);
    }
    model.baseUrl = QStringLiteral("http://127.0.0.1:11434/v1");
    QCOMPARE(model.conversationBudget(), 6'000); // Ollama's small default context
    model.baseUrl = QStringLiteral("https://api.deepseek.com");
    QCOMPARE(model.conversationBudget(), 96'000);
    model.baseUrl = QStringLiteral("http://127.0.0.1:8000/v1"); // a vLLM of the team's
    QCOMPARE(model.conversationBudget(), ModelOptions::defaultContextChars);
    model.contextChars = 12'345;
    QCOMPARE(model.conversationBudget(), 12'345);

    QString error;
    const auto given = readCommandLine({QStringLiteral("--context-chars"), QStringLiteral("8000")},
                                       RuntimeOptions(), &error);
    QVERIFY2(given, qPrintable(error));
    QCOMPARE(given->model.conversationBudget(), 8000);
    QVERIFY(!readCommandLine({QStringLiteral("--context-chars"), QStringLiteral("1999")},
                             RuntimeOptions(), &error));
    QVERIFY2(error.contains(QLatin1String("--context-chars")), qPrintable(error));
}

void tst_ConsoleSettings::init()
{
    m_dir = std::make_unique<QTemporaryDir>();
    QVERIFY(m_dir->isValid());
    m_path = m_dir->filePath(QStringLiteral("AgentConsole/agent-console.ini"));
}

void tst_ConsoleSettings::nothingStoredGivesTheDefaults()
{
    ConsoleSettings settings(m_path);
    settings.load();
    QVERIFY(settings.problems().isEmpty());
    QVERIFY(settings.isWritable());
    QCOMPARE(settings.settings().model.provider, ModelOptions::Provider::Offline);
    QCOMPARE(settings.settings().language, QStringLiteral("system"));
    QVERIFY(!QFile::exists(m_path)); // reading creates nothing
}

void tst_ConsoleSettings::storedSettingsAreRestored()
{
    ConsoleSettings first(m_path);
    first.load();
    BackendOptions backend;
    backend.kind = BackendOptions::Kind::Http;
    backend.url = QStringLiteral("http://127.0.0.1:8080");
    QString error;
    QVERIFY2(first.saveConnection(remoteModel(), backend, &error), qPrintable(error));
    QVERIFY2(first.saveLedger(QStringLiteral("postgresql://agent@db.local:5432/ledger"), &error),
             qPrintable(error));
    QVERIFY(first.saveLanguage(QStringLiteral("zh_CN"), &error));
    const QByteArray geometry("\x01\xd9\xd0\xcb geometry", 14);
    QVERIFY(first.saveWindow(geometry, QByteArray("state"), &error));

    // The next start.
    ConsoleSettings next(m_path);
    next.load();
    QVERIFY2(next.problems().isEmpty(), qPrintable(next.problems().join('\n')));
    const StoredSettings &stored = next.settings();
    QCOMPARE(stored.model.provider, ModelOptions::Provider::OpenAiCompatible);
    QCOMPARE(stored.model.baseUrl, remoteModel().baseUrl);
    QCOMPARE(stored.model.model, remoteModel().model);
    QCOMPARE(stored.model.apiKeyEnv, QStringLiteral("MY_KEY"));
    QCOMPARE(stored.model.stream, false);
    QCOMPARE(stored.model.fallbackToOffline, false);
    QCOMPARE(stored.model.contextChars, 50'000);
    QCOMPARE(stored.backend.kind, BackendOptions::Kind::Http);
    QCOMPARE(stored.backend.url, backend.url);
    QCOMPARE(stored.ledgerSpec, QStringLiteral("postgresql://agent@db.local:5432/ledger"));
    QCOMPARE(stored.language, QStringLiteral("zh_CN"));
    QCOMPARE(stored.windowGeometry, geometry);
    QCOMPARE(stored.windowState, QByteArray("state"));
    const RuntimeOptions start = next.startOptions();
    QCOMPARE(start.model.model, remoteModel().model);
    QCOMPARE(start.ledgerSpec, stored.ledgerSpec);
}

void tst_ConsoleSettings::brokenValueUsesItsDefault_data()
{
    QTest::addColumn<QByteArray>("ini");
    QTest::addColumn<QString>("problemKey");

    QTest::newRow("unknown provider")
        << QByteArray("[model]\nprovider=banana\n") << QStringLiteral("model/provider");
    QTest::newRow("conversation budget too small")
        << QByteArray("[model]\ncontextChars=10\n") << QStringLiteral("model/contextChars");
    QTest::newRow("conversation budget not a number")
        << QByteArray("[model]\ncontextChars=lots\n") << QStringLiteral("model/contextChars");
    QTest::newRow("provider without a base URL")
        << QByteArray("[model]\nprovider=openai\nname=x\n") << QStringLiteral("model:");
    QTest::newRow("base URL not http")
        << QByteArray("[model]\nprovider=openai\nname=x\nbaseUrl=ftp://example.com\n")
        << QStringLiteral("model:");
    QTest::newRow("base URL far too long") << QByteArray("[model]\nbaseUrl=https://")
            + QByteArray(4000, 'a') + "\n" << QStringLiteral("model/baseUrl");
    QTest::newRow("stream not a boolean")
        << QByteArray("[model]\nstream=perhaps\n") << QStringLiteral("model/stream");
    QTest::newRow("bad key variable")
        << QByteArray("[model]\napiKeyVariable=\"1 2\"\n") << QStringLiteral("model:");
    QTest::newRow("unknown backend")
        << QByteArray("[backend]\nkind=ftp\n") << QStringLiteral("backend/kind");
    QTest::newRow("REST backend without URL")
        << QByteArray("[backend]\nkind=http\n") << QStringLiteral("backend:");
    QTest::newRow("ledger of another kind")
        << QByteArray("[ledger]\nspec=mysql://x\n") << QStringLiteral("ledger/spec");
    QTest::newRow("unknown language")
        << QByteArray("[ui]\nlanguage=klingon\n") << QStringLiteral("ui/language");
    QTest::newRow("window state too large") << QByteArray("[window]\nstate=")
            + QByteArray(70000, 'x') + "\n" << QStringLiteral("window/state");
}

void tst_ConsoleSettings::brokenValueUsesItsDefault()
{
    QFETCH(QByteArray, ini);
    QFETCH(QString, problemKey);
    QVERIFY(QDir().mkpath(QFileInfo(m_path).path()));
    // A good value beside the broken one is still used.
    const QByteArray extra = ini.contains("[ui]") ? QByteArray()
                                                  : QByteArray("[ui]\nlanguage=en\n");
    QVERIFY(writeAll(m_path, ini + extra));
    ConsoleSettings settings(m_path);
    settings.load(); // never a crash
    QCOMPARE(settings.problems().size(), 1);
    QVERIFY2(settings.problems().first().startsWith(problemKey),
             qPrintable(settings.problems().first()));
    QVERIFY(settings.problems().first().endsWith(QStringLiteral("the default is used")));
    const StoredSettings defaults;
    QCOMPARE(settings.settings().model.provider, defaults.model.provider);
    QCOMPARE(settings.settings().backend.kind, defaults.backend.kind);
    QCOMPARE(settings.settings().ledgerSpec, defaults.ledgerSpec);
    QVERIFY(settings.settings().windowState.isEmpty());
    if (!extra.isEmpty())
        QCOMPARE(settings.settings().language, QStringLiteral("en"));
    // Reading rewrote nothing.
    QCOMPARE(readAll(m_path), ini + extra);
}

void tst_ConsoleSettings::fileThatCannotBeReadIsKept_data()
{
    QTest::addColumn<QString>("kind");
    QTest::newRow("a directory") << QStringLiteral("directory");
    QTest::newRow("over 1 MiB") << QStringLiteral("large");
}

void tst_ConsoleSettings::fileThatCannotBeReadIsKept()
{
    QFETCH(QString, kind);
    QVERIFY(QDir().mkpath(QFileInfo(m_path).path()));
    const QByteArray large = QByteArray("[ui]\nlanguage=en\n") + QByteArray(1100 * 1024, ';');
    if (kind == QLatin1String("directory"))
        QVERIFY(QDir().mkpath(m_path));
    else
        QVERIFY(writeAll(m_path, large));

    ConsoleSettings settings(m_path);
    settings.load();
    QCOMPARE(settings.problems().size(), 1);
    QVERIFY2(settings.problems().first().contains(QStringLiteral("it is kept as it is")),
             qPrintable(settings.problems().first()));
    QVERIFY(!settings.isWritable());
    QCOMPARE(settings.settings().language, QStringLiteral("system")); // the defaults
    // Nothing is written over it this session, whatever staff change.
    QString error;
    QVERIFY(!settings.saveWindow(QByteArray("g"), QByteArray("s"), &error));
    QVERIFY(error.contains(QStringLiteral("kept as it is")));
    QVERIFY(!settings.saveLanguage(QStringLiteral("zh_CN"), &error));
    if (kind == QLatin1String("directory"))
        QVERIFY(QFileInfo(m_path).isDir());
    else
        QCOMPARE(readAll(m_path), large);
}

void tst_ConsoleSettings::passwordsAreNeverStored()
{
    ConsoleSettings settings(m_path);
    settings.load();
    QString error;
    QVERIFY(
        !settings.saveLedger(QStringLiteral("postgresql://agent:hunter2@db:5432/ledger"), &error));
    QVERIFY2(error.contains(QStringLiteral("password")), qPrintable(error));
    QVERIFY(
        !settings.saveLedger(QStringLiteral("postgresql://db/ledger?password=hunter2"), &error));
    QVERIFY(settings.saveConnection(remoteModel(), {}, &error));
    // The key's variable is stored, never a key: there is no key to store here.
    const QByteArray file = readAll(m_path);
    QVERIFY(!file.contains("hunter2"));
    QVERIFY(file.contains("apiKeyVariable=MY_KEY"));
}

void tst_ConsoleSettings::commandLineWinsOverStoredSettings()
{
    ConsoleSettings settings(m_path);
    settings.load();
    QVERIFY(settings.saveConnection(remoteModel(), {}));
    QVERIFY(settings.saveLedger(QStringLiteral("sqlite")));
    const RuntimeOptions base = settings.startOptions();
    QString error;

    // Nothing given: the stored settings.
    std::optional<RuntimeOptions> read = readCommandLine({}, base, &error);
    QVERIFY2(read, qPrintable(error));
    QCOMPARE(read->model.provider, ModelOptions::Provider::OpenAiCompatible);
    QCOMPARE(read->model.model, remoteModel().model);
    QCOMPARE(read->model.stream, false);
    QCOMPARE(read->ledgerSpec, QStringLiteral("sqlite"));
    QVERIFY(!read->dataDirectory.isEmpty());

    // One option given: it wins, the rest stays as stored.
    read = readCommandLine({QStringLiteral("--model"), QStringLiteral("deepseek-v4-pro"),
                            QStringLiteral("--stream"), QStringLiteral("on")},
                           base, &error);
    QVERIFY2(read, qPrintable(error));
    QCOMPARE(read->model.model, QStringLiteral("deepseek-v4-pro"));
    QCOMPARE(read->model.baseUrl, remoteModel().baseUrl);
    QCOMPARE(read->model.stream, true);

    read = readCommandLine({QStringLiteral("--provider"), QStringLiteral("offline"),
                            QStringLiteral("--ledger"), QStringLiteral("sqlite:/tmp/x.sqlite")},
                           base, &error);
    QVERIFY2(read, qPrintable(error));
    QCOMPARE(read->model.provider, ModelOptions::Provider::Offline);
    QCOMPARE(read->ledgerSpec, QStringLiteral("sqlite:/tmp/x.sqlite"));

    // Without stored settings the command line reads as it always did.
    read = readCommandLine({QStringLiteral("--provider"), QStringLiteral("openai")}, {}, &error);
    QVERIFY(!read);
    QCOMPARE(error, QStringLiteral("--provider openai needs --base-url"));
}

// The window's saves (writeInBackground): the values are in force at once, the file is
// written on the writer's thread, and saves land in the order they were made; destroying the
// settings waits for them, so what was chosen last is what the next start reads.
void tst_ConsoleSettings::inTheBackgroundSavesWriteOffTheCallersThreadInOrder()
{
    QThread *writingThread = nullptr;
    {
        SettingsWriter writer;
        QVERIFY(QDir().mkpath(QFileInfo(m_path).path()));
        const QFuture<SettingsWritten> written = writer.write(m_path, [&](QSettings &settings) {
            writingThread = QThread::currentThread();
            settings.setValue(QStringLiteral("probe/value"), 1);
        });
        QTRY_VERIFY(written.isFinished());
        QVERIFY(written.result().written());
    }
    QVERIFY(writingThread && writingThread != QThread::currentThread());

    QObject context;
    QStringList failures;
    {
        ConsoleSettings settings(m_path);
        settings.load();
        settings.writeInBackground(&context, [&](const QString &reason) { failures << reason; });
        QString error;
        for (const QString &language : {QStringLiteral("en"), QStringLiteral("zh_CN"),
                                        QStringLiteral("system"), QStringLiteral("zh_CN")}) {
            QVERIFY2(settings.saveLanguage(language, &error), qPrintable(error));
            QCOMPARE(settings.settings().language, language); // in force at once
        }
        QVERIFY(settings.saveWindow(QByteArray("geometry"), QByteArray("state"), &error));
        // Refused before anything is written, as without the writer.
        QVERIFY(!settings.saveLanguage(QStringLiteral("fr"), &error));
    }
    ConsoleSettings next(m_path);
    next.load();
    QCOMPARE(next.settings().language, QStringLiteral("zh_CN"));
    QCOMPARE(next.settings().windowGeometry, QByteArray("geometry"));
    QCoreApplication::processEvents();
    QVERIFY(failures.isEmpty());
}

// A file that went bad after load() (a directory now stands there): the save answers at once,
// the writer leaves the path as it is, and the reason reaches the failure handler; later saves
// are refused at once.
void tst_ConsoleSettings::inTheBackgroundAFileGoneBadIsReported()
{
    auto window = std::make_unique<QObject>();
    QStringList failures;
    ConsoleSettings settings(m_path);
    settings.load();
    settings.writeInBackground(window.get(), [&](const QString &reason) { failures << reason; });
    QVERIFY(QDir().mkpath(m_path));
    QString error;
    QVERIFY(settings.saveLanguage(QStringLiteral("en"), &error));
    QTRY_COMPARE(failures.size(), 1);
    QVERIFY2(failures.first().contains(QStringLiteral("no longer a settings file")),
             qPrintable(failures.first()));
    QVERIFY(QFileInfo(m_path).isDir());
    QVERIFY(!settings.isWritable());
    QVERIFY(!settings.saveLanguage(QStringLiteral("zh_CN"), &error));
    QVERIFY2(error.contains(QStringLiteral("went bad during this session and is kept as it is")),
             qPrintable(error));

    // The window that was told is gone: a failure is only logged, and nothing else happens.
    ConsoleSettings again(m_dir->filePath(QStringLiteral("other.ini")));
    again.load();
    again.writeInBackground(window.get(), [&](const QString &reason) { failures << reason; });
    window.reset();
    QVERIFY(QDir().mkpath(again.filePath()));
    QVERIFY(again.saveLanguage(QStringLiteral("en"), &error));
    QTRY_VERIFY(!again.isWritable());
    QCoreApplication::processEvents();
    QCOMPARE(failures.size(), 1);
}

QTEST_GUILESS_MAIN(tst_ConsoleSettings)
#include "tst_consolesettings.moc"
