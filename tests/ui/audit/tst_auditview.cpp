// View › Audit trail (docs/AUDIT.md) in the real window over a real runtime: two tickets
// confirmed by the staff member, their rows newest first in staff words (English and
// Simplified Chinese, screenshots), the filters by order, agent and day, nothing editable, and
// an export from the Conversation menu that carries the rows of its turns.
#include "consolefixture.h"
#include "screenshots.h"

#include "core/console/agentruntime.h"
#include "core/console/writeaudit.h"
#include "core/export/conversationexport.h"
#include "ui/audit/auditrowsmodel.h"
#include "ui/audit/audittraildock.h"
#include "ui/export/conversationexporter.h"
#include "ui/transcript/confirmationpanel.h"
#include "ui/transcript/toolcallcard.h"
#include "ui/window/consolelanguage.h"

#include <QAction>
#include <QCheckBox>
#include <QDateEdit>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSignalSpy>
#include <QTableView>
#include <QTest>

using namespace AgentConsole;
using namespace AgentConsole::Testing;

namespace {

QString ticketQuestion(const QString &order)
{
    return QStringLiteral("Create an after-sales ticket for order %1: the mug arrived broken")
        .arg(order);
}

} // namespace

class tst_AuditView : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void cleanup();
    void confirmedWritesAreListed_data();
    void confirmedWritesAreListed();
    void anExportCarriesTheRowsOfItsTurns();

private:
    // Asks for a ticket, confirms it on its card as staff do, and waits for the turn's end;
    // the ticket's id, empty when it was not made.
    QString confirmTicket(const QString &order);
    // Opens View › Audit trail and waits for its first page.
    AuditTrailDock *openAuditTrail();
    // Sets a filter and waits for the page it reads.
    bool waitForPage(AuditTrailDock *dock, const std::function<void()> &change);

    std::unique_ptr<ConsoleFixture> m_console;
};

void tst_AuditView::cleanup()
{
    m_console.reset();
    ConsoleLanguage::install(QStringLiteral("en"));
}

QString tst_AuditView::confirmTicket(const QString &order)
{
    QSignalSpy finished(m_console->loop(), &AgentLoop::turnFinished);
    const QString requestId = m_console->loop()->ask(ticketQuestion(order));
    if (requestId.isEmpty())
        return {};
    ConfirmationPanel *panel = nullptr;
    (void)QTest::qWaitFor([&] {
        for (ToolCallCard *card : m_console->window->transcript()->toolCallCards(requestId)) {
            if (card->toolName() == QLatin1String("createTicket"))
                panel = card->confirmationPanel();
        }
        return panel && panel->isAwaitingAnswer() && panel->confirmButton()->isEnabled();
    }, 20000);
    if (!panel)
        return {};
    QTest::mouseClick(panel->confirmButton(), Qt::LeftButton);
    if (finished.isEmpty() && !finished.wait(20000))
        return {};
    const TurnResult turn = finished.first().first().value<TurnResult>();
    return turn.toolCalls.value(0).result.data.toObject().value(u"ticketId").toString();
}

AuditTrailDock *tst_AuditView::openAuditTrail()
{
    auto *action = m_console->window->findChild<QAction *>(QStringLiteral("auditTrailAction"));
    if (!action)
        return nullptr;
    AuditTrailDock *dock = m_console->window->auditTrailDock();
    QSignalSpy shown(dock, &AuditTrailDock::pageShown);
    action->trigger();
    if (!dock->isVisible() || (shown.isEmpty() && !shown.wait(20000)))
        return nullptr;
    return dock;
}

bool tst_AuditView::waitForPage(AuditTrailDock *dock, const std::function<void()> &change)
{
    QSignalSpy shown(dock, &AuditTrailDock::pageShown);
    change();
    return shown.wait(20000);
}

void tst_AuditView::confirmedWritesAreListed_data()
{
    QTest::addColumn<QString>("language");
    QTest::addColumn<QString>("category"); // DAMAGED in staff words
    QTest::addColumn<QString>("viewTitle"); // the View menu's entry, as translated
    QTest::newRow("en") << "en" << "Damaged item" << "Audit trail";
    QTest::newRow("zh_CN") << "zh_CN" << "商品破损" << "";
}

void tst_AuditView::confirmedWritesAreListed()
{
    QFETCH(QString, language);
    QFETCH(QString, category);
    QFETCH(QString, viewTitle);
    ConsoleLanguage::install(language);
    m_console = std::make_unique<ConsoleFixture>();
    QVERIFY(m_console->start());
    const QString staff = m_console->loop()->session().userId;

    const QString first = confirmTicket(QStringLiteral("A1001"));
    const QString second = confirmTicket(QStringLiteral("A1002"));
    QVERIFY(first.startsWith(QLatin1String("T-")));
    QVERIFY(second.startsWith(QLatin1String("T-")));

    AuditTrailDock *dock = openAuditTrail();
    QVERIFY(dock);
    if (!viewTitle.isEmpty())
        QCOMPARE(dock->windowTitle(), viewTitle);
    // Newest first: the second ticket's outcome, its confirmation, then the first's.
    QStringList rows = dock->rowTexts();
    QCOMPARE(rows.size(), 4);
    QVERIFY2(rows[0].contains(second) && rows[0].contains(QLatin1String("A1002")),
             qPrintable(rows[0]));
    QVERIFY2(rows[2].contains(first) && rows[2].contains(QLatin1String("A1001")),
             qPrintable(rows[2]));
    for (const QString &row : rows) {
        QVERIFY2(row.contains(staff), qPrintable(row));
        QVERIFY2(row.contains(category), qPrintable(row)); // the argument in staff words
        QVERIFY2(!row.contains(QLatin1String("DAMAGED")), qPrintable(row));
        QVERIFY2(!row.contains(QLatin1String("createTicket")), qPrintable(row)); // its title
    }
    const QList<AuditEntry> &entries = dock->rowsModel()->rows();
    QCOMPARE(entries[0].event, AuditEntry::Event::Outcome);
    QCOMPARE(entries[0].outcome, AuditEntry::Outcome::Succeeded);
    QCOMPARE(entries[0].objectId, second);
    QCOMPARE(entries[1].event, AuditEntry::Event::Confirmed);
    if (language == QLatin1String("en")) {
        QVERIFY2(rows[0].contains(QStringLiteral("Succeeded: Ticket %1").arg(second)),
                 qPrintable(rows[0]));
        QVERIFY2(rows[1].contains(QLatin1String("Confirmed")), qPrintable(rows[1]));
        QVERIFY2(rows[1].contains(QLatin1String("Order: A1002")), qPrintable(rows[1]));
        QCOMPARE(dock->statusLabel()->text(), QStringLiteral("Rows shown: 4, newest first"));
    }

    m_console->window->resize(1400, 900);
    QVERIFY(!saveScreenshot(m_console->window.get(),
                            QStringLiteral("audit-trail-%1.png").arg(language))
                 .isEmpty());

    // Read-only: nothing to edit, nothing to delete.
    QCOMPARE(dock->table()->editTriggers(), QAbstractItemView::NoEditTriggers);
    const QModelIndex cell = dock->table()->model()->index(0, AuditRowsModel::Outcome);
    QVERIFY(!(dock->table()->model()->flags(cell) & Qt::ItemIsEditable));

    // By order: only the writes about A1001.
    QVERIFY(waitForPage(dock, [&] { dock->orderFilter()->setText(QStringLiteral("A1001")); }));
    rows = dock->rowTexts();
    QCOMPARE(rows.size(), 2);
    for (const QString &row : rows)
        QVERIFY2(row.contains(QLatin1String("A1001")) && !row.contains(QLatin1String("A1002")),
                 qPrintable(row));
    QVERIFY(!saveScreenshot(dock, QStringLiteral("audit-trail-order-%1.png").arg(language))
                 .isEmpty());

    // By agent: the staff member's own, and nobody else's.
    QVERIFY(waitForPage(dock, [&] { dock->agentFilter()->setText(staff); }));
    QCOMPARE(dock->rowTexts().size(), 2);
    QVERIFY(waitForPage(dock, [&] { dock->agentFilter()->setText(QStringLiteral("u-9999")); }));
    QVERIFY(dock->rowTexts().isEmpty());
    if (language == QLatin1String("en"))
        QCOMPARE(dock->statusLabel()->text(), QStringLiteral("No write matches these filters."));

    // By day: today has them, yesterday none.
    QVERIFY(waitForPage(dock, [&] {
        dock->orderFilter()->clear();
        dock->agentFilter()->clear();
        dock->refresh();
    }));
    QCOMPARE(dock->rowTexts().size(), 4);
    QVERIFY(waitForPage(dock, [&] { dock->dayFilterBox()->setChecked(true); }));
    QCOMPARE(dock->dayFilter()->date(), QDate::currentDate());
    QCOMPARE(dock->rowTexts().size(), 4);
    QVERIFY(waitForPage(dock,
                        [&] { dock->dayFilter()->setDate(QDate::currentDate().addDays(-1)); }));
    QVERIFY(dock->rowTexts().isEmpty());

    // A third ticket while the view is open: it reads again by itself.
    QVERIFY(waitForPage(dock, [&] { dock->dayFilterBox()->setChecked(false); }));
    QSignalSpy shown(dock, &AuditTrailDock::pageShown);
    const QString third = confirmTicket(QStringLiteral("A1003"));
    QVERIFY(!third.isEmpty());
    QVERIFY(shown.wait(20000) || !shown.isEmpty());
    QTRY_COMPARE(dock->rowTexts().size(), 6);
    QVERIFY(dock->rowTexts().first().contains(third));
}

void tst_AuditView::anExportCarriesTheRowsOfItsTurns()
{
    m_console = std::make_unique<ConsoleFixture>();
    QVERIFY(m_console->start());
    const QString ticket = confirmTicket(QStringLiteral("A1001"));
    QVERIFY(!ticket.isEmpty());
    ConversationExporter *exporter = m_console->window->exporter();
    QAction *include = exporter->includeAuditTrailAction();
    QVERIFY(include->isCheckable());
    QVERIFY(!include->isChecked()); // off until chosen
    include->trigger();
    QVERIFY(exporter->includesAuditTrail());

    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("with-audit.json"));
    QSignalSpy exported(exporter, &ConversationExporter::exported);
    QSignalSpy failed(exporter, &ConversationExporter::failed);
    exporter->exportConversation(path);
    QTRY_VERIFY_WITH_TIMEOUT(!exported.isEmpty() || !failed.isEmpty(), 20000);
    QVERIFY2(failed.isEmpty(), qPrintable(failed.value(0).value(1).toString()));
    QString error;
    const std::optional<ConversationExport> read = ConversationExport::fromFile(path, &error);
    QVERIFY2(read, qPrintable(error));
    QVERIFY(read->hasAuditRows());
    QVERIFY(read->auditComplete());
    QCOMPARE(read->auditRows().size(), 2);
    QCOMPARE(read->auditRows().first().objectId, ticket);
    QCOMPARE(read->auditRows().last().event, AuditEntry::Event::Confirmed);

    // Without the check box, no audit rows.
    include->trigger();
    const QString plain = dir.filePath(QStringLiteral("plain.json"));
    exporter->exportConversation(plain);
    QTRY_VERIFY_WITH_TIMEOUT(exported.size() == 2 || !failed.isEmpty(), 20000);
    QVERIFY(!ConversationExport::fromFile(plain, &error)->hasAuditRows());
}

QTEST_MAIN(tst_AuditView)
#include "tst_auditview.moc"
