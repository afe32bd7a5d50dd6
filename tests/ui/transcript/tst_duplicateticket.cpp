// The card of a ticket the order already has (issue #41 §1), in the real window over a real
// runtime: the check's findings in staff words, in English and Simplified Chinese, "Open it"
// keeping the existing ticket and "Create another anyway" making a second one on purpose.
#include "consolefixture.h"
#include "screenshots.h"

#include "core/console/agentruntime.h"
#include "ui/transcript/confirmationpanel.h"
#include "ui/transcript/toolcallcard.h"
#include "ui/window/consolelanguage.h"

#include <QPushButton>
#include <QSignalSpy>
#include <QTest>

using namespace AgentConsole;
using namespace AgentConsole::Testing;

namespace {

const QString kDamaged =
    QStringLiteral("Create an after-sales ticket for order A1001: the mug arrived broken");

} // namespace

class tst_DuplicateTicket : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void cleanup();
    void aSecondTicketShowsTheFirst_data();
    void aSecondTicketShowsTheFirst();

private:
    // Asks and waits for the ticket's card to wait for staff with its check back.
    ConfirmationPanel *askForTicket(QString *requestId);

    std::unique_ptr<ConsoleFixture> m_console;
};

void tst_DuplicateTicket::cleanup()
{
    m_console.reset();
    ConsoleLanguage::install(QStringLiteral("en"));
}

ConfirmationPanel *tst_DuplicateTicket::askForTicket(QString *requestId)
{
    *requestId = m_console->loop()->ask(kDamaged);
    if (requestId->isEmpty())
        return nullptr;
    ConfirmationPanel *panel = nullptr;
    (void)QTest::qWaitFor([&] {
        for (ToolCallCard *card : m_console->window->transcript()->toolCallCards(*requestId)) {
            if (card->toolName() == QLatin1String("createTicket"))
                panel = card->confirmationPanel();
        }
        // The check is back when Confirm can be pressed.
        return panel && panel->isAwaitingAnswer() && panel->confirmButton()->isEnabled();
    }, 20000);
    return panel;
}

void tst_DuplicateTicket::aSecondTicketShowsTheFirst_data()
{
    QTest::addColumn<QString>("language");
    QTest::addColumn<QString>("category");   // DAMAGED in staff words
    QTest::addColumn<QString>("none");       // the check found nothing
    QTest::addColumn<QString>("another");    // the button that makes one anyway
    QTest::addColumn<QString>("keptNote");   // the settled card's note, %1 the ticket
    QTest::newRow("en") << "en" << "Damaged item" << "This order's tickets: none"
                        << "Create another anyway" << "Not run: you kept %1 instead.";
    QTest::newRow("zh_CN") << "zh_CN" << "商品破损" << "该订单的工单：无" << "仍然新建一张"
                           << "未执行：已沿用 %1。";
}

void tst_DuplicateTicket::aSecondTicketShowsTheFirst()
{
    QFETCH(QString, language);
    QFETCH(QString, category);
    QFETCH(QString, none);
    QFETCH(QString, another);
    QFETCH(QString, keptNote);
    ConsoleLanguage::install(language);
    m_console = std::make_unique<ConsoleFixture>();
    QVERIFY(m_console->start());
    QSignalSpy finished(m_console->loop(), &AgentLoop::turnFinished);

    QString first;
    ConfirmationPanel *panel = askForTicket(&first);
    QVERIFY(panel);
    QCOMPARE(panel->priorWritesText(), none);
    QVERIFY(panel->duplicateText().isEmpty());
    QVERIFY(!panel->keepExistingButton()->isVisible());
    QTest::mouseClick(panel->confirmButton(), Qt::LeftButton);
    QVERIFY(finished.wait(20000));
    const TurnResult made = finished.takeFirst().first().value<TurnResult>();
    const QString ticketId = made.toolCalls.value(0).result.data.toObject()
                                 .value(QLatin1String("ticketId")).toString();
    QVERIFY(!ticketId.isEmpty());

    QString second;
    panel = askForTicket(&second);
    QVERIFY(panel);
    // The sentence names the order, the category in staff words, the ticket and who made it.
    const QString duplicate = panel->duplicateText();
    QVERIFY2(duplicate.contains(QLatin1String("A1001")), qPrintable(duplicate));
    QVERIFY2(duplicate.contains(category), qPrintable(duplicate));
    QVERIFY2(duplicate.contains(ticketId), qPrintable(duplicate));
    QVERIFY2(!duplicate.contains(QLatin1String("DAMAGED")), qPrintable(duplicate));
    QVERIFY2(panel->priorWritesText().contains(ticketId), qPrintable(panel->priorWritesText()));
    QVERIFY(panel->keepExistingButton()->isVisible());
    QVERIFY(panel->keepExistingButton()->text().contains(ticketId));
    QCOMPARE(panel->confirmButton()->text(), another);

    for (const QSize size : {QSize(1024, 700), QSize(1600, 1000)}) {
        m_console->window->resize(size);
        QVERIFY(!saveScreenshot(m_console->window.get(),
                                QStringLiteral("duplicate-ticket-%1-%2x%3.png")
                                    .arg(language)
                                    .arg(size.width())
                                    .arg(size.height()))
                     .isEmpty());
    }

    // "Open it": nothing new; the card and the model are told which ticket was kept.
    QTest::mouseClick(panel->keepExistingButton(), Qt::LeftButton);
    QVERIFY(finished.wait(20000));
    const TurnResult kept = finished.takeFirst().first().value<TurnResult>();
    QCOMPARE(kept.toolCalls.value(0).result.keptExistingId(), ticketId);
    QTRY_COMPARE(panel->noteText(), keptNote.arg(ticketId));
}

QTEST_MAIN(tst_DuplicateTicket)
#include "tst_duplicateticket.moc"
