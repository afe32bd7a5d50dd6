// An MCP server's question to staff in the window (elicitation, form mode): the form built
// from the schema with the server's defaults filled in, Accept giving typed content, a refusal
// shown beside the form, the server's text as plain text; through the real window and runtime
// against the fake server's "ask" tool: the dialog opens, Accept reaches the server, and an
// unanswered question is closed when its call's time runs out. The card says so. Screenshots
// (mcp-question-en.png, mcp-question-zh_CN.png, mcp-question-card-en.png and -zh_CN.png) go
// to AGENT_CONSOLE_SCREENSHOT_DIR.
#include "mcpcall.h"
#include "consolefixture.h"
#include "screenshots.h"

#include "core/resilience/toolexecutor.h"
#include "core/tools/toolregistry.h"
#include "ui/window/consolelanguage.h"
#include "ui/mcp/mcpquestiondialog.h"
#include "ui/transcript/toolcallcard.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QStandardPaths>
#include <QVBoxLayout>

using namespace AgentConsole;
using namespace AgentConsole::Testing;

namespace {

constexpr int kWaitMs = 20000;

// The fake server's question (tests/core/mcp/fakemcpserver.cpp, "ask"), as core reads it.
McpQuestion refundQuestion()
{
    const QJsonObject params = QJsonDocument::fromJson(R"({
        "mode": "form", "message": "Refund <b>order</b> A1001?\nPlease confirm the details.",
        "requestedSchema": {"type": "object", "required": ["reason"], "properties": {
            "reason": {"type": "string", "title": "Reason", "default": "damaged",
                       "description": "Why the refund is asked for", "maxLength": 200},
            "amount": {"type": "number", "title": "Amount", "minimum": 0, "maximum": 500,
                       "default": 20.5},
            "count": {"type": "integer", "title": "Items", "default": 1},
            "urgent": {"type": "boolean", "title": "Urgent", "default": false},
            "channel": {"type": "string", "title": "Reply by", "enum": ["email", "phone"],
                        "enumNames": ["Email", "Phone"], "default": "email"},
            "note": {"type": "string", "title": "Note"}}}})").object();
    QString problem;
    McpQuestion question = *Mcp::parseElicitation(params, &problem);
    question.server = QStringLiteral("refunds");
    question.toolTitle = QStringLiteral("refunds__create_refund");
    question.answerBy = QDeadlineTimer(14500); // the call's hard maximum, as core sets it
    return question;
}

template<typename T>
T *editor(McpQuestionDialog *dialog, const char *field)
{
    return dialog->findChild<T *>(QStringLiteral("field_") + QLatin1String(field));
}

} // namespace

class tst_McpQuestion : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void cleanupTestCase();
    void formFromTheSchemaWithDefaults();
    void acceptGivesTypedContent();
    void refusalIsShownAndNothingSent();
    void declineAndCancelSendNoContent();
    void screenshots_data();
    void screenshots();
    void cardShowsTheWaitAndTheEnd_data() { screenshots_data(); }
    void cardShowsTheWaitAndTheEnd();
    void windowAsksAndTheServerHearsTheAnswer();
    void windowClosesAWithdrawnQuestion();
    void theDialogCountsDownTheTimeToAnswer();

private:
    bool startWithServer(ConsoleFixture *console, QTemporaryDir *dir, int idleTimeoutMs,
                         int hardMaximumMs = 15000);
};

void tst_McpQuestion::initTestCase()
{
    QStandardPaths::setTestModeEnabled(true);
    qRegisterMetaType<McpAnswer>();
}

void tst_McpQuestion::cleanupTestCase()
{
    ConsoleLanguage::install(QStringLiteral("en"));
}

void tst_McpQuestion::formFromTheSchemaWithDefaults()
{
    McpQuestionDialog dialog(QStringLiteral("q1"), refundQuestion());
    QVERIFY(!dialog.isModal());
    QCOMPARE(dialog.editors().size(), 6);
    QCOMPARE(editor<QLineEdit>(&dialog, "reason")->text(), QStringLiteral("damaged"));
    QCOMPARE(editor<QLineEdit>(&dialog, "amount")->text(), QStringLiteral("20.5"));
    QCOMPARE(editor<QLineEdit>(&dialog, "count")->text(), QStringLiteral("1"));
    QCOMPARE(editor<QLineEdit>(&dialog, "note")->text(), QString());
    QVERIFY(!editor<QCheckBox>(&dialog, "urgent")->isChecked());
    QComboBox *channel = editor<QComboBox>(&dialog, "channel");
    QCOMPARE(channel->currentText(), QStringLiteral("Email"));
    QCOMPARE(channel->count(), 2); // a default: no "no choice" entry
    // The server's words are plain text: its markup is shown, never obeyed.
    auto *message = dialog.findChild<QLabel *>(QStringLiteral("questionMessage"));
    QCOMPARE(message->textFormat(), Qt::PlainText);
    QVERIFY(message->text().contains(QStringLiteral("<b>order</b>")));
    for (QLabel *label : dialog.findChildren<QLabel *>())
        QCOMPARE(label->textFormat(), Qt::PlainText);
    QVERIFY(dialog.windowTitle().contains(QStringLiteral("refunds")));
    QVERIFY(dialog.findChild<QLabel *>(QStringLiteral("questionAsker"))->text()
                .contains(QStringLiteral("refunds")));
}

void tst_McpQuestion::acceptGivesTypedContent()
{
    McpQuestionDialog dialog(QStringLiteral("q1"), refundQuestion());
    dialog.show();
    QVERIFY(QTest::qWaitForWindowExposed(&dialog));
    QSignalSpy answered(&dialog, &McpQuestionDialog::answered);
    editor<QLineEdit>(&dialog, "amount")->setText(QStringLiteral("42.75"));
    editor<QLineEdit>(&dialog, "note")->setText(QStringLiteral("call after 5 pm"));
    editor<QCheckBox>(&dialog, "urgent")->setChecked(true);
    QComboBox *channel = editor<QComboBox>(&dialog, "channel");
    channel->setCurrentIndex(channel->findData(QStringLiteral("phone")));
    dialog.findChild<QPushButton *>(QStringLiteral("acceptQuestion"))->click();
    QCOMPARE(answered.size(), 1);
    QCOMPARE(answered.first().at(0).toString(), QStringLiteral("q1"));
    QCOMPARE(answered.first().at(1).value<McpAnswer>(), McpAnswer::Accept);
    // Typed as the schema says: numbers as numbers, the box as a boolean, the choice's value.
    const QJsonObject expected{{"reason", "damaged"}, {"amount", 42.75}, {"count", 1},
                               {"urgent", true}, {"channel", "phone"},
                               {"note", "call after 5 pm"}};
    QCOMPARE(answered.first().at(2).toJsonObject(), expected);
}

void tst_McpQuestion::refusalIsShownAndNothingSent()
{
    McpQuestionDialog dialog(QStringLiteral("q1"), refundQuestion());
    dialog.show();
    QVERIFY(QTest::qWaitForWindowExposed(&dialog));
    QSignalSpy answered(&dialog, &McpQuestionDialog::answered);
    editor<QLineEdit>(&dialog, "amount")->setText(QStringLiteral("900"));
    dialog.findChild<QPushButton *>(QStringLiteral("acceptQuestion"))->click();
    QCOMPARE(answered.size(), 0);
    auto *problem = dialog.findChild<QLabel *>(QStringLiteral("questionProblem"));
    QVERIFY(problem->isVisible());
    QVERIFY2(problem->text().contains(QStringLiteral("Amount")), qPrintable(problem->text()));
    editor<QLineEdit>(&dialog, "count")->setText(QStringLiteral("2.5"));
    editor<QLineEdit>(&dialog, "amount")->setText(QStringLiteral("12"));
    dialog.findChild<QPushButton *>(QStringLiteral("acceptQuestion"))->click();
    QCOMPARE(answered.size(), 0);
    QVERIFY2(problem->text().contains(QStringLiteral("Items")), qPrintable(problem->text()));
}

void tst_McpQuestion::declineAndCancelSendNoContent()
{
    McpQuestionDialog dialog(QStringLiteral("q1"), refundQuestion());
    QSignalSpy answered(&dialog, &McpQuestionDialog::answered);
    editor<QLineEdit>(&dialog, "note")->setText(QStringLiteral("typed, then declined"));
    dialog.findChild<QPushButton *>(QStringLiteral("declineQuestion"))->click();
    dialog.findChild<QPushButton *>(QStringLiteral("cancelQuestion"))->click();
    dialog.reject(); // Escape, or the window's close button: Cancel
    QCOMPARE(answered.size(), 3);
    QCOMPARE(answered.at(0).at(1).value<McpAnswer>(), McpAnswer::Decline);
    QCOMPARE(answered.at(1).at(1).value<McpAnswer>(), McpAnswer::Cancel);
    QCOMPARE(answered.at(2).at(1).value<McpAnswer>(), McpAnswer::Cancel);
    for (const QList<QVariant> &signal : answered)
        QVERIFY(signal.at(2).toJsonObject().isEmpty());
}

void tst_McpQuestion::screenshots_data()
{
    QTest::addColumn<QString>("language");
    QTest::newRow("en") << QStringLiteral("en");
    QTest::newRow("zh_CN") << QStringLiteral("zh_CN");
}

void tst_McpQuestion::screenshots()
{
    QFETCH(QString, language);
    QCOMPARE(ConsoleLanguage::install(language), language);
    McpQuestionDialog dialog(QStringLiteral("q1"), refundQuestion());
    dialog.show();
    QVERIFY(QTest::qWaitForWindowExposed(&dialog));
    editor<QLineEdit>(&dialog, "amount")->setText(QStringLiteral("900"));
    dialog.findChild<QPushButton *>(QStringLiteral("acceptQuestion"))->click();
    dialog.adjustSize();
    // Nothing cut off: every label gets the height its wrapped text needs.
    for (QLabel *label : dialog.findChildren<QLabel *>()) {
        if (label->isVisible() && label->wordWrap())
            QVERIFY2(label->height() >= label->heightForWidth(label->width()),
                     qPrintable(label->text()));
    }
    QVERIFY(!saveScreenshot(&dialog, QStringLiteral("mcp-question-%1.png").arg(language))
                 .isEmpty());
    ConsoleLanguage::install(QStringLiteral("en"));
}

void tst_McpQuestion::cardShowsTheWaitAndTheEnd()
{
    QFETCH(QString, language);
    QCOMPARE(ConsoleLanguage::install(language), language);
    ToolCallRecord call;
    call.name = QStringLiteral("refunds__create_refund");
    call.operationId = QStringLiteral("t-acme:c1:r1:refunds__create_refund:0");
    call.arguments = {{QStringLiteral("orderId"), QStringLiteral("A1001")}};
    call.state = ToolCallRecord::State::Running;
    call.runningAttempt = 1;
    call.runningAttemptStartedMs = 0;
    call.attemptTimeoutMs = 30000;
    call.question = ToolCallRecord::Question::Waiting;
    call.questionFrom = QStringLiteral("refunds");
    QWidget cards;
    auto *layout = new QVBoxLayout(&cards);
    auto *waiting = new ToolCallCard(&cards);
    waiting->setToolCall(call);
    ToolCallRecord withdrawn = call;
    withdrawn.index = 1;
    withdrawn.state = ToolCallRecord::State::Finished;
    withdrawn.question = ToolCallRecord::Question::Withdrawn;
    withdrawn.result = ToolResult::failure(ResultCode::ToolTimeout, Language::English);
    withdrawn.runningAttempt = 0;
    withdrawn.runningAttemptStartedMs = -1;
    AttemptRecord timedOut;
    timedOut.attempt = 1;
    timedOut.durationMs = 30000;
    timedOut.outcome = AttemptOutcome::TimedOut;
    withdrawn.attempts = {timedOut};
    withdrawn.totalMs = 30000;
    withdrawn.maxAttempts = 1;
    auto *ended = new ToolCallCard(&cards);
    ended->setToolCall(withdrawn);
    layout->addWidget(waiting);
    layout->addWidget(ended);
    cards.resize(620, cards.sizeHint().height());
    cards.show();
    QVERIFY(QTest::qWaitForWindowExposed(&cards));
    QVERIFY(waiting->questionNoteText().contains(QStringLiteral("refunds")));
    if (language == QLatin1String("en")) {
        QVERIFY2(waiting->questionNoteText().contains(QStringLiteral("Waiting for your answer")),
                 qPrintable(waiting->questionNoteText()));
        QVERIFY2(ended->questionNoteText().contains(QStringLiteral("withdrawn")),
                 qPrintable(ended->questionNoteText()));
    } else {
        QVERIFY2(ended->questionNoteText().contains(QStringLiteral("已撤回")),
                 qPrintable(ended->questionNoteText()));
    }
    QVERIFY(!saveScreenshot(&cards, QStringLiteral("mcp-question-card-%1.png").arg(language))
                 .isEmpty());
    ConsoleLanguage::install(QStringLiteral("en"));
}

bool tst_McpQuestion::startWithServer(ConsoleFixture *console, QTemporaryDir *dir,
                                      int idleTimeoutMs, int hardMaximumMs)
{
    const QString path = dir->filePath(QStringLiteral("mcp.json"));
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly))
        return false;
    file.write(QJsonDocument(QJsonObject{
        {"mcpServers", QJsonObject{{"refunds", QJsonObject{{"command", FAKE_MCP_SERVER},
                                                           {"args", QJsonArray{"elicit"}}}}}}})
                   .toJson());
    file.close();
    RuntimeOptions options;
    options.mcpConfigFile = path;
    options.mcpIdleTimeoutMs = idleTimeoutMs;
    options.mcpHardMaximumMs = hardMaximumMs;
    if (!console->start(options))
        return false;
    return QTest::qWaitFor([console] {
        return console->runtime->tools()->find(QStringLiteral("refunds__ask")) != nullptr;
    }, kWaitMs);
}

void tst_McpQuestion::windowAsksAndTheServerHearsTheAnswer()
{
    ConsoleFixture console;
    QTemporaryDir dir;
    QVERIFY(startWithServer(&console, &dir, 15000));
    const QFuture<ToolCallOutcome> call =
        Testing::runMcpCall(console.runtime.get(), QStringLiteral("refunds__ask"),
                            QStringLiteral("op-1"));
    QTRY_COMPARE_WITH_TIMEOUT(console.window->mcpQuestionDialogs().size(), 1, kWaitMs);
    McpQuestionDialog *dialog = console.window->mcpQuestionDialogs().constFirst();
    QVERIFY(dialog->isVisible());
    QVERIFY(!dialog->isModal()); // the window stays usable
    QVERIFY(dialog->windowTitle().contains(QStringLiteral("refunds")));
    editor<QLineEdit>(dialog, "note")->setText(QStringLiteral("from the window"));
    dialog->findChild<QPushButton *>(QStringLiteral("acceptQuestion"))->click();
    QTRY_VERIFY_WITH_TIMEOUT(call.isFinished(), kWaitMs);
    QTRY_VERIFY_WITH_TIMEOUT(console.window->mcpQuestionDialogs().isEmpty(), kWaitMs);
    const QJsonObject received = call.result().result.data.toObject()
                                     .value(QStringLiteral("structuredContent")).toObject();
    QCOMPARE(received.value(QStringLiteral("action")).toString(), QStringLiteral("accept"));
    QCOMPARE(received.value(QStringLiteral("content")).toObject()
                 .value(QStringLiteral("note")).toString(), QStringLiteral("from the window"));
}

void tst_McpQuestion::windowClosesAWithdrawnQuestion()
{
    ConsoleFixture console;
    QTemporaryDir dir;
    QVERIFY(startWithServer(&console, &dir, 1000, 2000));
    const QFuture<ToolCallOutcome> call =
        Testing::runMcpCall(console.runtime.get(), QStringLiteral("refunds__ask"),
                            QStringLiteral("op-2"));
    QTRY_COMPARE_WITH_TIMEOUT(console.window->mcpQuestionDialogs().size(), 1, kWaitMs);
    // Nobody answers: the call's hard maximum (2 s; its 1 s idle clock stops while a question
    // is open) ends the wait and the dialog, which showed the time left till then.
    auto *timeLeft = console.window->mcpQuestionDialogs().constFirst()->findChild<QLabel *>(
        QStringLiteral("questionTimeLeft"));
    QVERIFY(timeLeft);
    QVERIFY2(timeLeft->text() == QStringLiteral("2 seconds left to answer.")
                 || timeLeft->text() == QStringLiteral("1 second left to answer."),
             qPrintable(timeLeft->text()));
    QTRY_VERIFY_WITH_TIMEOUT(console.window->mcpQuestionDialogs().isEmpty(), kWaitMs);
    QTRY_VERIFY_WITH_TIMEOUT(call.isFinished(), kWaitMs);
    QCOMPARE(call.result().result.code, ResultCode::ToolTimeout);
}

void tst_McpQuestion::theDialogCountsDownTheTimeToAnswer()
{
    const auto shown = [](QDeadlineTimer answerBy) {
        McpQuestion question = refundQuestion();
        question.answerBy = answerBy;
        McpQuestionDialog dialog(QStringLiteral("q1"), question);
        auto *label = dialog.findChild<QLabel *>(QStringLiteral("questionTimeLeft"));
        return label ? label->text() : QStringLiteral("(none)");
    };
    // Whole seconds rounded up, whole minutes rounded down from two minutes on; nothing
    // without a bound.
    QCOMPARE(shown(QDeadlineTimer(90'000)), QStringLiteral("90 seconds left to answer."));
    QCOMPARE(shown(QDeadlineTimer(300'000)), QStringLiteral("5 minutes left to answer."));
    QCOMPARE(shown(QDeadlineTimer(179'000)), QStringLiteral("2 minutes left to answer."));
    QCOMPARE(shown(QDeadlineTimer(0)), QStringLiteral("The time to answer is up."));
    QCOMPARE(shown(QDeadlineTimer(QDeadlineTimer::Forever)), QStringLiteral("(none)"));

    // It counts down once a second while the dialog is open.
    McpQuestion question = refundQuestion();
    question.answerBy = QDeadlineTimer(1500);
    McpQuestionDialog dialog(QStringLiteral("q1"), question);
    auto *label = dialog.findChild<QLabel *>(QStringLiteral("questionTimeLeft"));
    QCOMPARE(label->text(), QStringLiteral("2 seconds left to answer."));
    QTRY_COMPARE_WITH_TIMEOUT(label->text(), QStringLiteral("1 second left to answer."), kWaitMs);
    QTRY_COMPARE_WITH_TIMEOUT(label->text(), QStringLiteral("The time to answer is up."), kWaitMs);
}

QTEST_MAIN(tst_McpQuestion)
#include "tst_mcpquestion.moc"
