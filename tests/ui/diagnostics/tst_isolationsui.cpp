// A lead's isolation in the window (docs/TEAM.md), over real runtimes and a real PostgreSQL
// (AGENT_CONSOLE_TEST_PG): the lead isolates logistics from the diagnostics dock's Isolate…
// form, a staff console's card of a refused lookup says who, when and why, the staff dock shows
// the isolation with a disabled Lift and its reason, and the lead lifts it. In English and in
// zh_CN (the new strings through NEW_STRINGS_isolation.tsv's proposed translations, as the .ts
// files will have them). Saves screenshots isolation-*.png.
#include "consolefixture.h"
#include "screenshots.h"

#include "ui/diagnostics/diagnosticsdock.h"
#include "ui/diagnostics/isolationspanel.h"
#include "ui/transcript/toolcallcard.h"
#include "ui/transcript/toolcalltext.h"
#include "ui/window/consolelanguage.h"

#include "core/ledger/postgresledger.h"
#include "core/resilience/circuitbreaker.h"
#include "core/team/isolations.h"
#include "core/team/isolationwords.h"

#include "teamsetup.h"
#include "testdatabases.h"

#include <QComboBox>
#include <QFile>
#include <QLineEdit>
#include <QPushButton>
#include <QScopeGuard>
#include <QSqlDatabase>
#include <QSqlError>
#include <QSqlQuery>
#include <QTranslator>
#include <QUrl>

using namespace AgentConsole;
using namespace AgentConsole::Testing;

namespace {

constexpr int timeoutMs = 20000;

// The proposed zh_CN strings of this branch, until lupdate puts them in the .ts files.
class ProposedTranslations final : public QTranslator
{
public:
    bool load(const QString &tsv)
    {
        QFile file(tsv);
        if (!file.open(QIODevice::ReadOnly | QIODevice::Text))
            return false;
        file.readLine(); // the header
        while (!file.atEnd()) {
            const QStringList fields
                = QString::fromUtf8(file.readLine()).chopped(1).split(QLatin1Char('\t'));
            if (fields.size() < 3)
                continue;
            QString source = fields.at(1);
            source.replace(QStringLiteral("\\n"), QStringLiteral("\n"));
            m_words.insert(fields.at(0) + QLatin1Char('\x1f') + source, fields.at(2));
        }
        return !m_words.isEmpty();
    }
    bool isEmpty() const override { return m_words.isEmpty(); }
    QString translate(const char *context, const char *source, const char *, int) const override
    {
        return m_words.value(QString::fromUtf8(context) + QLatin1Char('\x1f')
                             + QString::fromUtf8(source));
    }

private:
    QHash<QString, QString> m_words;
};

} // namespace

class tst_IsolationsUi final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void leadIsolatesAndStaffSeeWhoWhenAndWhy_data();
    void leadIsolatesAndStaffSeeWhoWhenAndWhy();

private:
    QString urlAs(const QString &url, const QString &role) const;

    Testing::TestDatabases m_databases{QStringLiteral("isolation_ui")};
    QString m_lead;
    QString m_staff;
};

QString tst_IsolationsUi::urlAs(const QString &url, const QString &role) const
{
    QUrl as(url);
    as.setUserName(role);
    return as.toString();
}

void tst_IsolationsUi::initTestCase()
{
    qRegisterMetaType<AgentConsole::TurnResult>();
    qRegisterMetaType<AgentConsole::ToolCallRecord>();
    const QString admin = qEnvironmentVariable(qPrintable(TestDatabases::variable()));
    if (admin.isEmpty())
        QFAIL("AGENT_CONSOLE_TEST_PG is not set: the isolations need PostgreSQL.");
    const qint64 pid = QCoreApplication::applicationPid();
    m_lead = QStringLiteral("isolation_ui_lead_%1").arg(pid);
    m_staff = QStringLiteral("isolation_ui_staff_%1").arg(pid);
    QString error;
    const auto where = PostgresLocation::fromUrl(admin, &error);
    QVERIFY2(where, qPrintable(error));
    {
        QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QPSQL"),
                                                    QStringLiteral("isolation-ui-admin"));
        db.setHostName(where->host);
        db.setPort(where->port);
        db.setUserName(where->userName);
        db.setDatabaseName(where->database);
        QVERIFY2(db.open(), qPrintable(db.lastError().text()));
        QSqlQuery query(db);
        QVERIFY(query.exec(QStringLiteral(
            "DO $$ BEGIN "
            "IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'agentconsole_staff') "
            "THEN CREATE ROLE agentconsole_staff NOLOGIN; END IF; "
            "IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'agentconsole_lead') "
            "THEN CREATE ROLE agentconsole_lead NOLOGIN; END IF; END $$")));
        query.exec(QStringLiteral("DROP ROLE IF EXISTS %1").arg(m_lead));
        query.exec(QStringLiteral("DROP ROLE IF EXISTS %1").arg(m_staff));
        // A lead is an agent too: in both groups (docs/TEAM.md, setup B).
        QVERIFY(query.exec(QStringLiteral("CREATE ROLE %1 LOGIN IN ROLE agentconsole_staff, "
                                          "agentconsole_lead")
                               .arg(m_lead)));
        QVERIFY(query.exec(
            QStringLiteral("CREATE ROLE %1 LOGIN IN ROLE agentconsole_staff").arg(m_staff)));
    }
}

void tst_IsolationsUi::cleanupTestCase()
{
    m_databases.dropAll();
    {
        QSqlDatabase db = QSqlDatabase::database(QStringLiteral("isolation-ui-admin"));
        QSqlQuery query(db);
        query.exec(QStringLiteral("DROP ROLE IF EXISTS %1").arg(m_lead));
        query.exec(QStringLiteral("DROP ROLE IF EXISTS %1").arg(m_staff));
    }
    QSqlDatabase::removeDatabase(QStringLiteral("isolation-ui-admin"));
    ConsoleLanguage::install(QStringLiteral("en"));
}

void tst_IsolationsUi::leadIsolatesAndStaffSeeWhoWhenAndWhy_data()
{
    QTest::addColumn<QString>("language");
    QTest::addColumn<QString>("chip");
    QTest::newRow("en") << "en"
                        << "Isolated";
    QTest::newRow("zh_CN") << "zh_CN"
                           << "已隔离";
}

void tst_IsolationsUi::leadIsolatesAndStaffSeeWhoWhenAndWhy()
{
    QFETCH(QString, language);
    QFETCH(QString, chip);
    ConsoleLanguage::install(language);
    ProposedTranslations proposed;
    if (language != QLatin1String("en")) {
        QVERIFY(
            proposed.load(QStringLiteral(AGENT_CONSOLE_SOURCE_DIR "/NEW_STRINGS_isolation.tsv")));
        QCoreApplication::installTranslator(&proposed);
    }
    const auto english = qScopeGuard([&proposed] {
        QCoreApplication::removeTranslator(&proposed);
        ConsoleLanguage::install(QStringLiteral("en"));
    });

    QString error;
    const QString url = m_databases.create(&error);
    QVERIFY2(!url.isEmpty(), qPrintable(error));
    {
        // The database's owner migrates it first, as the first console of a team does.
        CircuitBreakerRegistry breakers;
        Isolations owner;
        QVERIFY(owner.start(url, QStringLiteral("DBA"), &breakers, [] { return QStringList(); }));
        QTRY_COMPARE_WITH_TIMEOUT(owner.connection(), Isolations::Connection::Connected,
                                  timeoutMs);
    }
    // The rest of the first start (the ledger, the journal) and who each role is.
    QVERIFY2(setUpTeamDatabase(url,
                               {{m_lead, QStringLiteral("t-acme"), QStringLiteral("u-1002")},
                                {m_staff, QStringLiteral("t-acme"), QStringLiteral("u-1001")}},
                               &error),
             qPrintable(error));

    RuntimeOptions leadOptions;
    leadOptions.teamSpec = urlAs(url, m_lead);
    leadOptions.userId = QStringLiteral("u-1002");
    ConsoleFixture lead;
    QVERIFY(lead.start(leadOptions));
    Isolations *leadIsolations = lead.runtime->isolations();
    QTRY_COMPARE_WITH_TIMEOUT(leadIsolations->connection(), Isolations::Connection::Connected,
                              timeoutMs);
    QVERIFY(leadIsolations->isLead());
    DiagnosticsDock *leadDock = lead.window->diagnosticsDock();
    leadDock->show();
    IsolationsPanel *leadPanel = leadDock->isolationsPanel();
    QVERIFY(leadPanel);
    QVERIFY(!leadPanel->isolateButton()->isHidden());
    QVERIFY(leadPanel->isolateButton()->isEnabled());

    // Isolate… as a lead does it: the name, the reason, OK.
    QTest::mouseClick(leadPanel->isolateButton(), Qt::LeftButton);
    IsolateDialog *dialog = leadPanel->openDialog();
    QVERIFY(dialog);
    QVERIFY(!dialog->okButton()->isEnabled()); // a reason is required
    const int logistics = dialog->nameBox()->findText(QStringLiteral("logistics"));
    QVERIFY2(logistics >= 0, qPrintable(leadIsolations->knownNames().join(QLatin1Char(' '))));
    dialog->nameBox()->setCurrentIndex(logistics);
    QTest::keyClicks(dialog->reasonEdit(), QStringLiteral("logistics vendor outage"));
    QVERIFY(dialog->okButton()->isEnabled());
    saveScreenshot(dialog, QStringLiteral("isolation-dialog-%1.png").arg(language));
    QTest::mouseClick(dialog->okButton(), Qt::LeftButton);
    QTRY_COMPARE_WITH_TIMEOUT(leadIsolations->current().size(), 1, timeoutMs);

    // A staff console (not a lead) started afterwards: its lookup is refused with the words.
    RuntimeOptions staffOptions;
    staffOptions.teamSpec = urlAs(url, m_staff);
    staffOptions.userId = QStringLiteral("u-1001");
    ConsoleFixture staff;
    QVERIFY(staff.start(staffOptions));
    Isolations *staffIsolations = staff.runtime->isolations();
    QTRY_COMPARE_WITH_TIMEOUT(staffIsolations->current().size(), 1, timeoutMs);
    QVERIFY(!staffIsolations->isLead());
    bool ok = false;
    const TurnResult turn = staff.askAndWait(QStringLiteral("Where is order A1001?"), &ok);
    QVERIFY(ok);
    const ToolCallRecord *refused = nullptr;
    for (const ToolCallRecord &call : turn.toolCalls) {
        if (!call.isolation.isNull())
            refused = &call;
    }
    QVERIFY2(refused, "no call was refused by the isolation");
    QCOMPARE(refused->isolation.leadStaffId, QStringLiteral("u-1002"));
    QCOMPARE(refused->isolation.leadRole, m_lead);
    QCOMPARE(ToolCallText::statusOf(*refused).text, chip);
    const QStringList lines = ToolCallText::timeline(*refused);
    QVERIFY(!lines.isEmpty());
    QCOMPARE(lines.constFirst(), IsolationWords::refusal(refused->isolation));
    QVERIFY2(lines.constFirst().contains(QStringLiteral("u-1002"))
                 && lines.constFirst().contains(QStringLiteral("logistics vendor outage"))
                 && lines.constFirst().contains(IsolationWords::time(refused->isolation.since)),
             qPrintable(lines.constFirst()));
    if (language == QLatin1String("en"))
        QVERIFY2(lines.constFirst().startsWith(
                     QStringLiteral("Isolated by the shift lead (staff u-1002) at ")),
                 qPrintable(lines.constFirst()));
    // The card opened, as staff open it to read why.
    for (ToolCallCard *card : staff.window->findChildren<ToolCallCard *>())
        card->setExpanded(true);
    saveScreenshot(staff.window.get(), QStringLiteral("isolation-card-%1.png").arg(language));

    // The staff dock: the isolation in the same words, Lift disabled and why, no Isolate….
    DiagnosticsDock *staffDock = staff.window->diagnosticsDock();
    staffDock->show();
    IsolationsPanel *staffPanel = staffDock->isolationsPanel();
    QVERIFY(staffPanel);
    QCOMPARE(staffPanel->lines().size(), 1);
    QVERIFY(staffPanel->lines().constFirst().contains(QStringLiteral("logistics vendor outage")));
    QVERIFY(staffPanel->isolateButton()->isHidden());
    QPushButton *staffLift = staffPanel->liftButton(QStringLiteral("logistics"));
    QVERIFY(staffLift);
    QVERIFY(!staffLift->isEnabled());
    QCOMPARE(staffLift->toolTip(), IsolationWords::whyNotLead());
    // The breaker's own row says it is isolated, not closed.
    QCOMPARE(staffDock->breakerStateText(QStringLiteral("logistics:embedded")), chip);
    saveScreenshot(staffDock, QStringLiteral("isolation-dock-staff-%1.png").arg(language));
    saveScreenshot(leadDock, QStringLiteral("isolation-dock-lead-%1.png").arg(language));

    // The lead lifts it; the staff console's dock says so.
    QPushButton *lift = leadPanel->liftButton(QStringLiteral("logistics"));
    QVERIFY(lift && lift->isEnabled());
    QTest::mouseClick(lift, Qt::LeftButton);
    QTRY_VERIFY_WITH_TIMEOUT(staffIsolations->current().isEmpty(), timeoutMs);
    QTRY_VERIFY(staffPanel->lines().isEmpty());
}

QTEST_MAIN(tst_IsolationsUi)
#include "tst_isolationsui.moc"
