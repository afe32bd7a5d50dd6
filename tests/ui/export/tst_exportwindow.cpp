// Export from the window and the read-only view of an export, offscreen over the real core
// (real store, executor and offline demo model; no mocks). docs/EXPORT.md.
#include "core/turn/agentloop.h"
#include "core/console/agentruntime.h"
#include "core/console/faultcontrol.h"
#include "core/console/toolpolicies.h"
#include "core/turn/finishedturns.h"
#include "core/turn/turnresult.h"
#include "core/faults/faultplan.h"
#include "core/resilience/retrypolicy.h"
#include "core/telemetry/locallog.h"
#include "ui/export/conversationexporter.h"
#include "ui/faults/faultpanel.h"
#include "ui/faults/scenariopanel.h"
#include "ui/export/exportviewer.h"
#include "ui/window/consolelanguage.h"
#include "ui/window/consolewindow.h"
#include "ui/common/noticebanner.h"
#include "ui/transcript/questioninput.h"
#include "ui/transcript/toolcallcard.h"
#include "ui/transcript/transcriptview.h"

#include "screenshots.h"

#include <QAction>
#include <QClipboard>
#include <QDate>
#include <QDir>
#include <QGuiApplication>
#include <QMessageBox>
#include <QPointer>
#include <QPushButton>
#include <QFileDialog>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLineEdit>
#include <QMenu>
#include <QMenuBar>
#include <QPlainTextEdit>
#include <QScopeGuard>
#include <QScrollBar>
#include <QSemaphore>
#include <QSet>
#include <QSignalSpy>
#include <QStatusBar>
#include <QTemporaryDir>
#include <QTest>
#include <QTextEdit>
#include <QThreadPool>

#include <functional>
#include <memory>

using namespace AgentConsole;

namespace {

constexpr int kTurnTimeoutMs = 20000;
const QByteArray kSecret = "envkey-Wombat-90210-export";

QByteArray readAll(const QString &path)
{
    QFile file(path);
    return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
}

void settleLayouts()
{
    for (int pass = 0; pass < 16; ++pass)
        QCoreApplication::sendPostedEvents(nullptr, QEvent::LayoutRequest);
}

} // namespace

class tst_ExportWindow final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void init();
    void cleanup();
    void exportsTheConversationAndOpensItReadOnly();
    void aRightClickedTurnIsTheOneExported();
    void aNewConversationStartsAnEmptyExport();
    void aDamagedExportIsRefusedWithItsName();
    void eachTurnKeepsTheFaultsItRanUnder();
    void anExportHoldsOneConversationUnlessAskedForMore();
    void anIncidentsLogLinesGoWithItsTurn();
    void filesWaitOnTheirPoolWhileTheWindowWorks();
    void aCaseNoteIsCopiedAndSavedUnderTheConversationsName();
    void aCaseNoteFollowsTheWindowsLanguage();
    void saveDialogsProposeTheTitleAndTheDate();
    void aMarkdownFileIsExplainedAndItsJsonOffered();

private:
    QString copyCaseNote();
    TurnResult ask(const QString &question, bool *ok);
    bool answered(const std::function<void()> &ask, QString *reason = nullptr,
                  QVariant *first = nullptr);
    void setFaults(const char *json);
    QJsonObject exportJson(ConversationExporter::Scope scope
                           = ConversationExporter::Scope::ThisConversation);

    std::unique_ptr<QTemporaryDir> m_dir;
    std::unique_ptr<AgentRuntime> m_runtime;
    std::unique_ptr<ConsoleWindow> m_window;
};

void tst_ExportWindow::initTestCase()
{
    qRegisterMetaType<AgentConsole::TurnResult>();
    qRegisterMetaType<AgentConsole::ToolCallRecord>();
    qRegisterMetaType<QMessageBox *>(); // ConversationExporter::markdownNotOpened
    // The key the console would send to a remote model: an export must never carry it.
    qputenv("AGENT_CONSOLE_API_KEY", kSecret);
}

void tst_ExportWindow::init()
{
    m_dir = std::make_unique<QTemporaryDir>();
    QVERIFY(m_dir->isValid());
    RuntimeOptions options;
    options.dataDirectory = m_dir->filePath(QStringLiteral("data"));
    QVERIFY(QDir().mkpath(options.dataDirectory));
    m_runtime = std::make_unique<AgentRuntime>(options);
    m_window = std::make_unique<ConsoleWindow>(m_runtime.get());
    m_window->resize(1000, 760);
    m_window->show();
    QVERIFY(QTest::qWaitForWindowExposed(m_window.get()));
    QSignalSpy ready(m_runtime.get(), &AgentRuntime::ready);
    m_runtime->start();
    QVERIFY(ready.wait(kTurnTimeoutMs));
}

void tst_ExportWindow::cleanup()
{
    m_window.reset(); // before the runtime it points into
    m_runtime.reset();
    m_dir.reset();
}

TurnResult tst_ExportWindow::ask(const QString &question, bool *ok)
{
    *ok = false;
    QSignalSpy finished(m_runtime->agentLoop(), &AgentLoop::turnFinished);
    QTest::keyClicks(m_window->questionInput(), question);
    QTest::keyClick(m_window->questionInput(), Qt::Key_Return);
    if (finished.isEmpty() && !finished.wait(kTurnTimeoutMs))
        return {};
    *ok = true;
    return finished.first().first().value<TurnResult>();
}

// The exporter's answer to what `ask` started: true when exported or opened (`first`: the
// signal's first argument), false with the reason when it failed. Never within the call:
// files are written and read on a pool thread.
bool tst_ExportWindow::answered(const std::function<void()> &ask, QString *reason,
                                QVariant *first)
{
    ConversationExporter *exporter = m_window->exporter();
    QSignalSpy exported(exporter, &ConversationExporter::exported);
    QSignalSpy opened(exporter, &ConversationExporter::opened);
    QSignalSpy failed(exporter, &ConversationExporter::failed);
    const auto none = [&] { return exported.isEmpty() && opened.isEmpty() && failed.isEmpty(); };
    ask();
    if (!none()) {
        qWarning("the exporter answered within the call");
        return false;
    }
    if (!QTest::qWaitFor([&] { return !none(); }, kTurnTimeoutMs)) {
        if (reason)
            *reason = QStringLiteral("no answer within %1 ms").arg(kTurnTimeoutMs);
        return false;
    }
    if (!failed.isEmpty()) {
        if (reason)
            *reason = failed.first().at(1).toString();
        return false;
    }
    const QSignalSpy &answer = exported.isEmpty() ? opened : exported;
    if (answer.isEmpty()) {
        if (reason)
            *reason = QStringLiteral("no answer within %1 ms").arg(kTurnTimeoutMs);
        return false;
    }
    if (first)
        *first = answer.first().first();
    return true;
}

void tst_ExportWindow::exportsTheConversationAndOpensItReadOnly()
{
    ConversationExporter *exporter = m_window->exporter();
    QVERIFY(!exporter->exportConversationAction()->isEnabled()); // nothing finished yet
    QVERIFY(exporter->openExportAction()->isEnabled());
    // The actions are in the window's menu.
    QVERIFY(m_window->findChild<QAction *>(QStringLiteral("exportConversationAction")));

    bool ok = false;
    // The staff member pasted the key into a question: the export must not carry it.
    const TurnResult first = ask(
        QStringLiteral("Where is order A1001? (key %1)").arg(QString::fromLatin1(kSecret)), &ok);
    QVERIFY(ok);
    const TurnResult second = ask(QStringLiteral("Is SKU-200 in stock?"), &ok);
    QVERIFY(ok);
    QVERIFY(exporter->exportConversationAction()->isEnabled());
    QCOMPARE(exporter->finishedTurns()->turns().size(), 2);

    // The faults and a policy in force when exporting go with it.
    QString planError;
    const std::optional<FaultPlan> plan = FaultPlan::fromJson(
        R"({"tools": {"queryLogistics": {"latencyMs": 5}}})", &planError,
        m_runtime->faults()->knownTools());
    QVERIFY2(plan, qPrintable(planError));
    m_runtime->faults()->setPlan(*plan);
    RetryPolicy patient;
    patient.maxRetries = 4;
    QVERIFY(
        m_runtime->policies()->setPolicy(QStringLiteral("queryInventory"), patient, &planError));

    QSignalSpy exported(exporter, &ConversationExporter::exported);
    const QString json = m_dir->filePath(QStringLiteral("conversation.json"));
    QString error;
    QVERIFY2(answered([&] { m_window->exportConversation(json); }, &error), qPrintable(error));
    QCOMPARE(exported.size(), 1);
    QCOMPARE(exported.first().at(1).toInt(), 2);
    const QByteArray bytes = readAll(json);
    QVERIFY(!bytes.contains(kSecret));
    const QJsonObject root = QJsonDocument::fromJson(bytes).object();
    QCOMPARE(
        root.value(QLatin1String("format")).toString(), QStringLiteral("agent-console-export"));
    const QJsonArray turns = root.value(QLatin1String("turns")).toArray();
    QCOMPARE(turns.size(), 2);
    QCOMPARE(turns.at(1).toObject(), second.toJson()); // agent-cli --json's shape
    QVERIFY(turns.at(0)
                .toObject()
                .value(QLatin1String("question"))
                .toString()
                .contains(QLatin1String("[redacted]")));
    const QJsonObject policies = root.value(QLatin1String("policies"))
                                     .toObject()
                                     .value(QLatin1String("tools"))
                                     .toObject();
    QVERIFY(policies.contains(QLatin1String("queryOrderStatus")));
    QVERIFY(policies.value(QLatin1String("queryInventory"))
                .toObject()
                .value(QLatin1String("custom"))
                .toBool());
    QCOMPARE(policies.value(QLatin1String("queryInventory"))
                 .toObject()
                 .value(QLatin1String("maxAttempts"))
                 .toInt(),
        5);
    const QJsonObject faults = root.value(QLatin1String("faults")).toObject();
    QVERIFY(faults.value(QLatin1String("active")).toBool());
    QCOMPARE(faults.value(QLatin1String("plan")).toObject(), plan->toJson());

    // The latest turn alone, as Markdown.
    const QString md = m_dir->filePath(QStringLiteral("turn.md"));
    QVERIFY2(answered([&] { exporter->exportTurn(md); }, &error), qPrintable(error));
    const QByteArray report = readAll(md);
    QVERIFY(report.contains("> Is SKU-200 in stock?"));
    QVERIFY(!report.contains("A1001?"));
    QVERIFY(report.contains("| Attempt | Outcome | Started | Duration | Next delay |"));
    QVERIFY(!report.contains(kSecret));

    // Opened read-only: the same turns, with their cards, and nothing to type into.
    QVariant opened;
    QVERIFY2(answered([&] { exporter->openExport(json); }, &error, &opened), qPrintable(error));
    auto *viewer = opened.value<ExportViewer *>();
    QVERIFY(viewer);
    QVERIFY(QTest::qWaitForWindowExposed(viewer));
    QVERIFY(viewer->windowTitle().contains(QLatin1String("read-only")));
    QVERIFY(viewer->banner()->text().contains(QLatin1String("Read-only")));
    QVERIFY(viewer->banner()->text().contains(QString::fromLatin1(qVersion())));
    QVERIFY(viewer->banner()->text().contains(QLatin1String("Faults active then")));
    TranscriptView *transcript = viewer->transcript();
    QCOMPARE(transcript->requestIds(), (QStringList{first.requestId, second.requestId}));
    QCOMPARE(transcript->answerText(second.requestId), second.answer);
    QCOMPARE(transcript->turnStatusText(second.requestId), QStringLiteral("Answered"));
    const QList<ToolCallCard *> cards = transcript->toolCallCards(second.requestId);
    QCOMPARE(cards.size(), second.toolCalls.size());
    QCOMPARE(cards.first()->statusText(), QStringLiteral("OK"));
    QVERIFY(!transcript->questionText(first.requestId).contains(QString::fromLatin1(kSecret)));
    QVERIFY(viewer->findChildren<QuestionInput *>().isEmpty());
    for (const QLineEdit *edit : viewer->findChildren<QLineEdit *>())
        QVERIFY(edit->isReadOnly() || !edit->isVisible());
    for (const QPlainTextEdit *edit : viewer->findChildren<QPlainTextEdit *>())
        QVERIFY(edit->isReadOnly() || !edit->isVisible());
    for (const QTextEdit *edit : viewer->findChildren<QTextEdit *>())
        QVERIFY(edit->isReadOnly() || !edit->isVisible());
    settleLayouts();
    const QString shot = QDir::current().absoluteFilePath(QStringLiteral("export-viewer.png"));
    QVERIFY(viewer->grab().save(shot));
    qInfo("screenshot: %s", qPrintable(shot));
    viewer->close(); // deletes itself
}

void tst_ExportWindow::aRightClickedTurnIsTheOneExported()
{
    bool ok = false;
    const TurnResult first = ask(QStringLiteral("Where is order A1001?"), &ok);
    QVERIFY(ok);
    const TurnResult second = ask(QStringLiteral("Is SKU-200 in stock?"), &ok);
    QVERIFY(ok);
    settleLayouts();
    TranscriptView *transcript = m_window->transcript();
    transcript->verticalScrollBar()->setValue(0);
    auto *turn = transcript->findChild<QWidget *>(QStringLiteral("turn-") + first.requestId);
    QVERIFY(turn);
    const QPoint inViewport = turn->mapTo(transcript->viewport(), QPoint(turn->width() / 2, 4));
    QCOMPARE(transcript->requestIdAt(inViewport), first.requestId);

    // The right-click offers that turn; the file dialog (opened, not exec'd) takes a name
    // without an extension and the Markdown filter.
    emit transcript->customContextMenuRequested(inViewport);
    QMenu *menu = transcript->findChild<QMenu *>();
    QVERIFY(menu);
    QCOMPARE(menu->actions().size(), 1);
    menu->actions().first()->trigger();
    menu->close();
    QFileDialog *dialog = m_window->findChild<QFileDialog *>();
    QVERIFY(dialog);
    QVERIFY(dialog->isVisible());
    QSignalSpy exported(m_window->exporter(), &ConversationExporter::exported);
    dialog->selectNameFilter(dialog->nameFilters().at(1));
    Q_EMIT dialog->filterSelected(dialog->nameFilters().at(1));
    dialog->selectFile(m_dir->filePath(QStringLiteral("first")));
    static_cast<QDialog *>(dialog)->accept(); // QFileDialog::accept, as the Save button
    QTRY_COMPARE(exported.size(), 1);
    const QString md = m_dir->filePath(QStringLiteral("first.md"));
    QCOMPARE(exported.first().first().toString(), md);
    QString error;
    const QByteArray report = readAll(md);
    QVERIFY(report.contains("> Where is order A1001?"));
    QVERIFY(!report.contains("SKU-200 in stock"));
    QVERIFY(!answered([&] { m_window->exporter()->exportTurn(md, QStringLiteral("r-nope")); },
                      &error));
    QVERIFY2(error.contains(QLatin1String("has not finished")), qPrintable(error));
}

void tst_ExportWindow::aNewConversationStartsAnEmptyExport()
{
    bool ok = false;
    ask(QStringLiteral("Where is order A1001?"), &ok);
    QVERIFY(ok);
    QVERIFY(m_window->exporter()->exportConversationAction()->isEnabled());
    QAction *newConversation = nullptr;
    for (QAction *action : m_window->findChildren<QAction *>()) {
        if (action->shortcut() == QKeySequence(QKeySequence::New))
            newConversation = action;
    }
    QVERIFY(newConversation);
    newConversation->trigger();
    QVERIFY(!m_window->exporter()->exportConversationAction()->isEnabled());
    QString error;
    QVERIFY(!answered(
        [&] { m_window->exportConversation(m_dir->filePath(QStringLiteral("x.json"))); },
        &error));
    QVERIFY2(error.contains(QLatin1String("no finished turn")), qPrintable(error));
    QVERIFY(!QFile::exists(m_dir->filePath(QStringLiteral("x.json"))));
}

void tst_ExportWindow::aDamagedExportIsRefusedWithItsName()
{
    const QString path = m_dir->filePath(QStringLiteral("damaged.json"));
    QFile file(path);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write(R"({"format": "agent-console-export", "version": 7})");
    file.close();
    QString error;
    ConversationExporter *exporter = m_window->exporter();
    QVERIFY(!answered([&] { exporter->openExport(path); }, &error));
    QVERIFY2(
        error.contains(path) && error.contains(QLatin1String("version 7")), qPrintable(error));
    QVERIFY(!answered([&] { exporter->openExport(m_dir->path()); }, &error)); // a directory
    QVERIFY(!error.isEmpty());
    QVERIFY(m_window->findChildren<ExportViewer *>().isEmpty());
}

void tst_ExportWindow::setFaults(const char *json)
{
    QString error;
    const std::optional<FaultPlan> plan = FaultPlan::fromJson(json, &error,
                                                              m_runtime->faults()->knownTools());
    QVERIFY2(plan, qPrintable(error));
    m_runtime->faults()->setPlan(*plan);
}

QJsonObject tst_ExportWindow::exportJson(ConversationExporter::Scope scope)
{
    const QString path = m_dir->filePath(QStringLiteral("export-%1.json").arg(int(scope)));
    QString error;
    if (!answered([&] { m_window->exporter()->exportConversation(path, scope); }, &error)) {
        qWarning("not exported: %s", qPrintable(error));
        return {};
    }
    return QJsonDocument::fromJson(readAll(path)).object();
}

// Issue #24 §2: four turns, the first two under faults, then Clear all faults and a custom
// policy: each exported turn says what it ran under, whatever is in force at export time.
void tst_ExportWindow::eachTurnKeepsTheFaultsItRanUnder()
{
    setFaults(R"({"tools": {"queryLogistics": {"permanentFailure": true}}})");
    bool ok = false;
    ask(QStringLiteral("Where is order A1001?"), &ok);
    QVERIFY(ok);
    ask(QStringLiteral("Where is order A1002?"), &ok);
    QVERIFY(ok);
    m_window->faultPanel()->clearAllFaults();
    QVERIFY(!m_runtime->faults()->hasActiveFaults());
    RetryPolicy patient;
    patient.maxRetries = 4;
    QString error;
    QVERIFY(m_runtime->policies()->setPolicy(QStringLiteral("queryInventory"), patient, &error));
    ask(QStringLiteral("Is SKU-200 in stock?"), &ok);
    QVERIFY(ok);
    ask(QStringLiteral("Where is order A1003?"), &ok);
    QVERIFY(ok);

    const QJsonObject json = exportJson();
    const QJsonArray turns = json.value(u"turns").toArray();
    QCOMPARE(turns.size(), 4);
    QVERIFY(!json.value(u"faults").toObject().value(u"active").toBool()); // at export time
    for (int i = 0; i < 4; ++i) {
        const QJsonObject conditions = turns.at(i).toObject().value(u"conditions").toObject();
        const QJsonObject faults = conditions.value(u"faults").toObject();
        QCOMPARE(faults.value(u"active").toBool(), i < 2);
        if (i < 2) {
            QVERIFY2(faults.value(u"summary").toString().contains(u"queryLogistics"),
                     qPrintable(faults.value(u"summary").toString()));
            QVERIFY(faults.value(u"plan").toObject().contains(u"tools"));
        }
        const QJsonObject custom
            = conditions.value(u"policies").toObject().value(u"custom").toObject();
        QCOMPARE(custom.contains(u"queryInventory"), i >= 2);
    }
    // The bug report says it per turn.
    const QString path = m_dir->filePath(QStringLiteral("report.md"));
    QVERIFY2(answered([&] { m_window->exporter()->exportConversation(path); }, &error),
             qPrintable(error));
    const QString md = QString::fromUtf8(readAll(path));
    QCOMPARE(md.count(QStringLiteral("- Faults in force: none\n")), 2);
    QCOMPARE(md.count(QStringLiteral("- Faults in force: queryLogistics")), 2);
    QCOMPARE(md.count(QStringLiteral("- Custom retry policy of ` queryInventory `")), 2);
}

// Issue #24 §2: turns of other conversations (here a scenario's, in a conversation of its
// own while the staff member's goes on, #41 §2) are not in "Export conversation…";
// "Export every conversation…" has them.
void tst_ExportWindow::anExportHoldsOneConversationUnlessAskedForMore()
{
    bool ok = false;
    ask(QStringLiteral("Where is order A1001?"), &ok);
    QVERIFY(ok);
    const QString mine = m_runtime->agentLoop()->session().conversationId;
    ScenarioPanel *scenarios = m_window->scenarioPanel();
    QSignalSpy finished(scenarios, &ScenarioPanel::finished);
    QVERIFY(scenarios->runScenario(QStringLiteral("flaky-then-ok")));
    QVERIFY(finished.wait(kTurnTimeoutMs));
    ask(QStringLiteral("Is SKU-200 in stock?"), &ok);
    QVERIFY(ok);
    const QString now = m_runtime->agentLoop()->session().conversationId;

    const QJsonArray one = exportJson().value(u"turns").toArray();
    QVERIFY(!one.isEmpty());
    for (const QJsonValue &turn : one)
        QCOMPARE(turn.toObject().value(u"conversationId").toString(), now);
    const QJsonArray every
        = exportJson(ConversationExporter::Scope::EveryConversation).value(u"turns").toArray();
    QSet<QString> conversations;
    for (const QJsonValue &turn : every)
        conversations.insert(turn.toObject().value(u"conversationId").toString());
    QVERIFY(every.size() > one.size());
    QCOMPARE(now, mine); // the staff member's conversation went on after the run
    QVERIFY(conversations.contains(mine));
    QCOMPARE(conversations.size(), 2); // the scenario's own too
    QVERIFY(m_window->findChild<QAction *>(QStringLiteral("exportEveryConversationAction")));
}

// Issue #24 §2: an incident's lines of the local log go into the export with its turn (and
// into the bug report), found by its id.
void tst_ExportWindow::anIncidentsLogLinesGoWithItsTurn()
{
    QString problem;
    const QString log = installLocalLog(m_runtime->options().dataDirectory, false, &problem);
    QVERIFY2(problem.isEmpty(), qPrintable(problem));
    setFaults(R"({"tools": {"queryInventory": {"internalError": true}}})");
    bool ok = false;
    const TurnResult turn = ask(QStringLiteral("Is SKU-200 in stock?"), &ok);
    QVERIFY(ok);
    QVERIFY(!turn.incidentId.isEmpty());
    qInstallMessageHandler(nullptr); // the rest of the suite logs to the terminal again

    const QJsonObject exported = exportJson().value(u"turns").toArray().last().toObject();
    QCOMPARE(exported.value(u"incidentId").toString(), turn.incidentId);
    const QJsonArray lines = exported.value(u"incidentLog").toArray();
    QVERIFY2(!lines.isEmpty(), qPrintable(log));
    for (const QJsonValue &line : lines)
        QVERIFY(line.toString().contains(turn.incidentId));
    QVERIFY(std::any_of(lines.cbegin(), lines.cend(), [](const QJsonValue &line) {
        return line.toString().contains(u"queryInventory");
    }));
    const QString path = m_dir->filePath(QStringLiteral("incident.md"));
    QString error;
    QVERIFY2(answered([&] { m_window->exporter()->exportConversation(path); }, &error),
             qPrintable(error));
    QVERIFY(QString::fromUtf8(readAll(path))
                .contains(QStringLiteral("### Local log of incident ` %1 `").arg(turn.incidentId)));
}

// The disk is slow today: the pool the exporter writes and reads on is held. The window
// answers a question meanwhile, and the files come when the pool is let go; nothing was
// written or read on the GUI thread (it would have answered within the call).
void tst_ExportWindow::filesWaitOnTheirPoolWhileTheWindowWorks()
{
    bool ok = false;
    const TurnResult first = ask(QStringLiteral("Where is order A1001?"), &ok);
    QVERIFY(ok);
    ConversationExporter *exporter = m_window->exporter();
    QSemaphore slowDisk;
    QSemaphore held;
    QThreadPool disk; // after the semaphores: its end waits for its tasks
    disk.setMaxThreadCount(1);
    exporter->setFilePool(&disk);
    const auto letGo = qScopeGuard([&] { // also when a check fails below
        slowDisk.release();
        exporter->setFilePool(nullptr);
    });
    disk.start([&] {
        held.release();
        slowDisk.acquire();
    });
    QVERIFY(held.tryAcquire(1, kTurnTimeoutMs));

    QSignalSpy exported(exporter, &ConversationExporter::exported);
    QSignalSpy opened(exporter, &ConversationExporter::opened);
    QSignalSpy failed(exporter, &ConversationExporter::failed);
    const QString json = m_dir->filePath(QStringLiteral("held.json"));
    exporter->exportConversation(json);
    QCOMPARE(exporter->filesInFlight(), 1);
    QVERIFY2(m_window->statusBar()->currentMessage().startsWith(
                 QStringLiteral("Writing the export to ")),
             qPrintable(m_window->statusBar()->currentMessage()));
    // The staff member goes on working while the file waits.
    ask(QStringLiteral("Is SKU-200 in stock?"), &ok);
    QVERIFY(ok);
    QVERIFY(exported.isEmpty() && failed.isEmpty());
    QVERIFY(!QFile::exists(json));
    // An export of a file that has not been written yet: read in its turn, after it.
    exporter->openExport(json);
    QCOMPARE(exporter->filesInFlight(), 2);

    slowDisk.release();
    QTRY_COMPARE_WITH_TIMEOUT(opened.size(), 1, kTurnTimeoutMs);
    QVERIFY2(failed.isEmpty(), qPrintable(failed.value(0).value(1).toString()));
    QCOMPARE(exported.size(), 1);
    QCOMPARE(exported.first().at(1).toInt(), 1); // the first turn only: the second came later
    QCOMPARE(exporter->filesInFlight(), 0);
    QVERIFY(m_window->statusBar()->currentMessage().isEmpty()); // the view is there to see
    auto *viewer = opened.first().first().value<ExportViewer *>();
    QVERIFY(viewer);
    QCOMPARE(viewer->transcript()->requestIds(), QStringList{first.requestId});
    viewer->close();
}

namespace {

// A case note as a staff member sees it once pasted: a plain text box, for the screenshot.
QString caseNoteScreenshot(const QString &note, const QString &fileName)
{
    QPlainTextEdit box;
    box.setPlainText(note);
    box.setReadOnly(true);
    box.resize(760, 420);
    box.show();
    if (!QTest::qWaitForWindowExposed(&box))
        return {};
    return Testing::saveScreenshot(&box, fileName);
}

// The exporter's day in the new suites (ConversationExporter::setToday): midnight cannot come
// between what it writes and what is compared.
const QDate kDay(2026, 12, 7);

QString today()
{
    return kDay.toString(Qt::ISODate);
}

} // namespace

// The clipboard's text once the case note is copied (it is made on the file pool).
QString tst_ExportWindow::copyCaseNote()
{
    ConversationExporter *exporter = m_window->exporter();
    exporter->setToday(kDay);
    QSignalSpy copied(exporter, &ConversationExporter::caseNoteCopied);
    QGuiApplication::clipboard()->setText(QStringLiteral("before"));
    exporter->copyCaseNoteAction()->trigger();
    if (!copied.isEmpty()) {
        qWarning("copied within the call");
        return {};
    }
    if (!copied.wait(kTurnTimeoutMs))
        return {};
    return QGuiApplication::clipboard()->text();
}


// Issue #41 §8: a case note an agent can paste into a ticket, copied and saved, saying what
// the cards said and nothing of the console's internals.
void tst_ExportWindow::aCaseNoteIsCopiedAndSavedUnderTheConversationsName()
{
    setFaults(R"({"tools": {"queryLogistics": {"permanentFailure": true}}})");
    ConversationExporter *exporter = m_window->exporter();
    QVERIFY(!exporter->copyCaseNoteAction()->isEnabled()); // nothing finished yet
    QVERIFY(!exporter->exportCaseNoteAction()->isEnabled());
    bool ok = false;
    const TurnResult first = ask(QStringLiteral("Where is order A1001?"), &ok);
    QVERIFY(ok);
    const TurnResult second = ask(QStringLiteral("Is SKU-200 in stock?"), &ok);
    QVERIFY(ok);
    QVERIFY(exporter->copyCaseNoteAction()->isEnabled());
    QVERIFY(exporter->exportCaseNoteAction()->isEnabled());

    const QString note = copyCaseNote();
    QVERIFY(!note.isEmpty());
    QVERIFY2(note.startsWith(QStringLiteral("Case note, %1\n").arg(today())), qPrintable(note));
    QVERIFY(note.contains(QLatin1String("Request 1\nQuestion: Where is order A1001?\n")));
    QVERIFY(note.contains(QLatin1String("Request 2\nQuestion: Is SKU-200 in stock?\n")));
    // What the cards found is what the note says was found; the failed lookup is said by
    // the failure table's sentence, under its own heading.
    int findings = 0;
    for (const TurnResult &turn : {first, second}) {
        for (ToolCallCard *card : m_window->transcript()->toolCallCards(turn.requestId)) {
            if (card->findingText().isEmpty())
                continue;
            ++findings;
            QVERIFY2(note.contains(card->findingText()),
                     qPrintable(card->findingText() + QStringLiteral(" not in:\n") + note));
        }
    }
    QVERIFY(findings > 0);
    QVERIFY2(note.contains(QLatin1String("Could not be looked up:\n- ")), qPrintable(note));
    for (const QString &internal :
         {first.requestId, first.conversationId, QStringLiteral("queryLogistics"),
          QStringLiteral("TOOL_"), QStringLiteral("REJECTED"), QStringLiteral("http"),
          first.answer.left(30)})
        QVERIFY2(!note.contains(internal), qPrintable(internal + QStringLiteral(" in:\n") + note));
    QVERIFY(m_window->statusBar()->currentMessage().contains(QLatin1String("Copied")));

    // Saved: the dialog proposes the conversation's title and today's date; .txt on request.
    QSignalSpy exported(exporter, &ConversationExporter::exported);
    exporter->exportCaseNoteAction()->trigger();
    auto *dialog = m_window->findChild<QFileDialog *>(QStringLiteral("caseNoteDialog"));
    QVERIFY(dialog);
    QVERIFY(dialog->isVisible());
    QCOMPARE(QFileInfo(dialog->selectedFiles().value(0)).fileName(),
             QStringLiteral("Where is order A1001 — %1.md").arg(today()));
    dialog->selectNameFilter(dialog->nameFilters().at(1));
    Q_EMIT dialog->filterSelected(dialog->nameFilters().at(1));
    const QString txt = QStringLiteral("Where is order A1001 — %1.txt").arg(today());
    QCOMPARE(QFileInfo(dialog->selectedFiles().value(0)).fileName(), txt);
    dialog->selectFile(m_dir->filePath(txt));
    static_cast<QDialog *>(dialog)->accept();
    QTRY_COMPARE(exported.size(), 1);
    QCOMPARE(exported.first().at(0).toString(), m_dir->filePath(txt));
    QCOMPARE(exported.first().at(1).toInt(), 2);
    QCOMPARE(QString::fromUtf8(readAll(m_dir->filePath(txt))), note);
    const QString shot = caseNoteScreenshot(note, QStringLiteral("case-note-en.png"));
    QVERIFY(!shot.isEmpty());
}

// The note is in the window's language: its words, the tools' and the failure sentences.
void tst_ExportWindow::aCaseNoteFollowsTheWindowsLanguage()
{
    setFaults(R"({"tools": {"queryLogistics": {"permanentFailure": true}}})");
    bool ok = false;
    ask(QStringLiteral("Where is order A1001?"), &ok);
    QVERIFY(ok);
    ask(QStringLiteral("Is SKU-200 in stock?"), &ok);
    QVERIFY(ok);
    QCOMPARE(ConsoleLanguage::install(QStringLiteral("zh_CN")), QStringLiteral("zh_CN"));
    const auto english = qScopeGuard([] { ConsoleLanguage::install(QStringLiteral("en")); });
    const QString note = copyCaseNote();
    QVERIFY2(note.startsWith(QStringLiteral("案例记录，%1\n").arg(today())), qPrintable(note));
    QVERIFY2(note.contains(QStringLiteral("问题：Where is order A1001?")), qPrintable(note));
    QVERIFY2(note.contains(QStringLiteral("查到：\n- ")), qPrintable(note));
    QVERIFY2(note.contains(QStringLiteral("未能查询：\n- ")), qPrintable(note));
    QVERIFY2(!note.contains(QLatin1String("Found")) && !note.contains(QLatin1String("Request")),
             qPrintable(note));
    const QString shot = caseNoteScreenshot(note, QStringLiteral("case-note-zh_CN.png"));
    QVERIFY(!shot.isEmpty());
}

void tst_ExportWindow::saveDialogsProposeTheTitleAndTheDate()
{
    bool ok = false;
    ask(QStringLiteral("A1001: mug arrived broken?"), &ok);
    QVERIFY(ok);
    ConversationExporter *exporter = m_window->exporter();
    exporter->setToday(kDay);
    exporter->exportConversationAction()->trigger();
    QFileDialog *dialog = m_window->findChild<QFileDialog *>();
    QVERIFY(dialog);
    const QString json = QStringLiteral("A1001 mug arrived broken — %1.json").arg(today());
    QCOMPARE(QFileInfo(dialog->selectedFiles().value(0)).fileName(), json);
    QVERIFY(dialog->nameFilters().at(0).contains(QLatin1String("JSON")));
    dialog->selectNameFilter(dialog->nameFilters().at(1));
    Q_EMIT dialog->filterSelected(dialog->nameFilters().at(1));
    const QString md = QStringLiteral("A1001 mug arrived broken — %1.md").arg(today());
    QCOMPARE(QFileInfo(dialog->selectedFiles().value(0)).fileName(), md);
    QSignalSpy exported(exporter, &ConversationExporter::exported);
    dialog->selectFile(m_dir->filePath(md));
    static_cast<QDialog *>(dialog)->accept();
    QTRY_COMPARE(exported.size(), 1);
    QVERIFY(readAll(m_dir->filePath(md)).startsWith("# Agent Console conversation export"));
    QTRY_VERIFY(!m_window->findChild<QFileDialog *>()); // deleted on close

    // Open export… says in its filter what it opens.
    exporter->openExportAction()->trigger();
    QFileDialog *open = m_window->findChild<QFileDialog *>();
    QVERIFY(open);
    QCOMPARE(open->nameFilters().size(), 1);
    QVERIFY2(open->nameFilters().first().contains(QLatin1String("JSON exports"))
                 && open->nameFilters().first().endsWith(QLatin1String("(*.json)")),
             qPrintable(open->nameFilters().first()));
    open->reject();
}

// Issue #41 §8: Open export… refused the app's own Markdown with "illegal value at offset
// 1". It says plainly what it opens, in a box the staff member closes, and offers the JSON.
void tst_ExportWindow::aMarkdownFileIsExplainedAndItsJsonOffered()
{
    bool ok = false;
    ask(QStringLiteral("Where is order A1001?"), &ok);
    QVERIFY(ok);
    ConversationExporter *exporter = m_window->exporter();
    const QString json = m_dir->filePath(QStringLiteral("A1001.json"));
    const QString md = m_dir->filePath(QStringLiteral("A1001.md"));
    QString error;
    QVERIFY2(answered([&] { exporter->exportConversation(json); }, &error), qPrintable(error));
    QVERIFY2(answered([&] { exporter->exportConversation(md); }, &error), qPrintable(error));

    QSignalSpy notOpened(exporter, &ConversationExporter::markdownNotOpened);
    QSignalSpy failed(exporter, &ConversationExporter::failed);
    QSignalSpy opened(exporter, &ConversationExporter::opened);
    exporter->openExport(md);
    QVERIFY(notOpened.isEmpty()); // the file is looked at on the pool
    QVERIFY(notOpened.wait(kTurnTimeoutMs));
    QCOMPARE(notOpened.first().at(0).toString(), md);
    QCOMPARE(notOpened.first().at(1).toString(), json);
    QVERIFY(failed.isEmpty()); // no red banner: the box says it, and closes
    QPointer<QMessageBox> box = notOpened.first().at(2).value<QMessageBox *>();
    QVERIFY(box);
    QVERIFY(box->isVisible());
    QVERIFY(box->text().contains(QLatin1String("opens JSON exports")));
    QVERIFY2(box->informativeText().contains(QLatin1String("A1001.json")),
             qPrintable(box->informativeText()));
    QVERIFY(!box->informativeText().contains(QLatin1String("offset")));
    auto *openJson = box->findChild<QPushButton *>(QStringLiteral("openJsonBesideButton"));
    QVERIFY(openJson);
    openJson->click();
    QVERIFY(opened.wait(kTurnTimeoutMs));
    auto *viewer = opened.first().first().value<ExportViewer *>();
    QCOMPARE(viewer->sourcePath(), json);
    QTRY_VERIFY(!box);

    // The export opened gives the same case note as the conversation it came from, dated
    // the day it was exported.
    const QString fromWindow = copyCaseNote();
    QVERIFY(!fromWindow.isEmpty());
    QSignalSpy viewerCopied(viewer, &ExportViewer::caseNoteCopied);
    QGuiApplication::clipboard()->setText(QStringLiteral("before"));
    QVERIFY(QTest::qWaitForWindowExposed(viewer));
    settleLayouts();
    // Shown on the banner, not only there (a button added to a banner already shown stays
    // hidden).
    QVERIFY(viewer->copyCaseNoteButton()->isVisible());
    QVERIFY(!viewer->copyCaseNoteButton()->visibleRegion().isEmpty());
    QVERIFY(viewer->banner()->geometry().contains(
        viewer->copyCaseNoteButton()->mapTo(viewer, QPoint(1, 1))));
    viewer->copyCaseNoteButton()->click();
    QVERIFY(viewerCopied.wait(kTurnTimeoutMs));
    const QString fromExport = QGuiApplication::clipboard()->text();
    QVERIFY2(fromExport.startsWith(QStringLiteral("Case note, %1\n")
                                       .arg(QDate::currentDate().toString(Qt::ISODate)))
                 || fromExport.startsWith(QStringLiteral("Case note, %1\n")
                                              .arg(QDate::currentDate().addDays(-1)
                                                       .toString(Qt::ISODate))),
             qPrintable(fromExport));
    QCOMPARE(fromExport.section(QLatin1Char('\n'), 1), fromWindow.section(QLatin1Char('\n'), 1));
    QCOMPARE(viewer->copyCaseNoteButton()->text(), QStringLiteral("Copied"));
    viewer->close();

    // Without a JSON beside it, the box says how to make one, and Close closes it.
    QVERIFY(QFile::remove(json));
    notOpened.clear();
    exporter->openExport(md);
    QVERIFY(notOpened.wait(kTurnTimeoutMs));
    QCOMPARE(notOpened.first().at(1).toString(), QString());
    box = notOpened.first().at(2).value<QMessageBox *>();
    QVERIFY(box);
    QVERIFY(!box->findChild<QPushButton *>(QStringLiteral("openJsonBesideButton")));
    QVERIFY(box->informativeText().contains(QLatin1String("export it as JSON")));
    box->button(QMessageBox::Close)->click();
    QTRY_VERIFY(!box);

    // A bug report renamed .json is recognised as such too, not refused at offset 1.
    const QString renamed = m_dir->filePath(QStringLiteral("renamed.json"));
    QVERIFY(QFile::copy(md, renamed));
    notOpened.clear();
    exporter->openExport(renamed);
    QVERIFY(notOpened.wait(kTurnTimeoutMs));
    QCOMPARE(notOpened.first().at(0).toString(), renamed);
    notOpened.first().at(2).value<QMessageBox *>()->close();
    QVERIFY(failed.isEmpty());
}

QTEST_MAIN(tst_ExportWindow)
#include "tst_exportwindow.moc"
