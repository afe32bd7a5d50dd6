// The console window switched to a remote model through Settings > Model and backend…, over
// the real core: the OpenAI-compatible provider talks to a fake OpenAI server on 127.0.0.1
// (the one stand-in: a remote LLM cannot run here). Also the circuit breaker chip in the
// status bar and the dialog's refusal of settings core rejects.
#include "fakeopenaiserver.h"

#include "core/turn/agentloop.h"
#include "core/console/agentruntime.h"
#include "core/console/activeconnection.h"
#include "core/console/runtimetestseam.h"
#include "core/turn/turnresult.h"
#include "core/resilience/circuitbreaker.h"
#include "ui/window/consolewindow.h"
#include "ui/common/noticebanner.h"
#include "ui/transcript/questioninput.h"
#include "ui/settings/connectionsettingsdialog.h"
#include "ui/common/statuschip.h"
#include "ui/transcript/toolcallcard.h"
#include "ui/transcript/transcriptview.h"

#include "transcriptwait.h"

#include <QAction>
#include <QComboBox>
#include <QApplication>
#include <QDialogButtonBox>
#include <QDir>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QRadioButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QTest>
#include <QToolButton>

#include <algorithm>
#include <memory>

using namespace AgentConsole;
using namespace AgentConsole::Testing;
using namespace std::chrono_literals;

namespace {

constexpr int turnTimeoutMs = 20000;
const QString multiIntentQuestion =
    QStringLiteral("Where is order A1001 and is SKU-200 in stock?");
const QStringList answerPieces{QStringLiteral("Order A1001 is at Shanghai Pudong Hub. "),
                               QStringLiteral("SKU-200 is low on stock "),
                               QStringLiteral("(3 left).")};

// The model asks for both lookups in one streamed reply, the arguments split across chunks.
FakeResponse plannedToolCalls()
{
    return FakeResponse::events({
        {Sse::role()},
        {Sse::toolCall(0, QStringLiteral("call_a"), QStringLiteral("queryLogistics"),
                       QStringLiteral("{\"orderId\":"))},
        {Sse::toolArguments(0, QStringLiteral("\"A1001\"}"))},
        {Sse::toolCall(1, QStringLiteral("call_b"), QStringLiteral("queryInventory"),
                       QStringLiteral("{\"sku\":\"SKU-200\"}"))},
        {Sse::finish(QStringLiteral("tool_calls"))},
        {Sse::done()},
    });
}

// The answer in pieces `gapMs` apart, so that the window has time to show each one.
FakeResponse streamedAnswer(const QStringList &pieces, int gapMs)
{
    QList<FakeChunk> chunks{{Sse::role()}};
    for (const QString &piece : pieces)
        chunks.append({Sse::content(piece), gapMs});
    chunks.append({Sse::finish(QStringLiteral("stop"))});
    chunks.append({Sse::done()});
    return FakeResponse::events(chunks);
}

// Nested layouts settle over several event-loop passes; a screenshot waits until none is
// pending.
void settleLayouts()
{
    for (int pass = 0; pass < 16; ++pass)
        QCoreApplication::sendPostedEvents(nullptr, QEvent::LayoutRequest);
}

QString saveScreenshot(QWidget *widget, const QString &fileName)
{
    Testing::waitUntilShown(widget);
    settleLayouts();
    const QString path = QDir::current().absoluteFilePath(fileName);
    if (!widget->grab().save(path))
        return {};
    qInfo("screenshot: %s", qPrintable(path));
    return path;
}

// Replaces a line edit's text the way a user would: select everything, type over it.
void retype(QLineEdit *edit, const QString &text)
{
    edit->setFocus();
    edit->selectAll();
    QTest::keyClick(edit, Qt::Key_Backspace);
    QTest::keyClicks(edit, text);
}

// A radio button takes clicks on its circle and its label only, not on the empty rest of its
// row; click where a person would, on the label.
void clickLabel(QRadioButton *button)
{
    const int labelStart = button->iconSize().width() + button->fontMetrics().averageCharWidth();
    const int x = std::min(button->width() - 1, labelStart * 2);
    QTest::mouseClick(button, Qt::LeftButton, {}, QPoint(x, button->height() / 2));
}

QStringList sortedNames(const QList<ToolCallCard *> &cards)
{
    QStringList result;
    for (const ToolCallCard *card : cards)
        result.append(card->toolName());
    result.sort();
    return result;
}

} // namespace

class tst_ConnectionSettings final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void init();
    void cleanup();

    void remoteModelStreamsItsAnswer();
    void failingProviderFallsBackToTheOfflineModel();
    void thinkingIsFoldedAndACutOffAnswerIsMarked();
    void breakerChipFollowsTheBreakers();
    void invalidBaseUrlIsRefused();
    void dialogKeepsWhatItDoesNotEdit();
    void theConversationBudgetIsASetting();

private:
    bool startConsole();
    // Settings > Model and backend…, as a staff member opens it; null if it did not appear.
    ConnectionSettingsDialog *openSettings();
    // Chooses the fake server as the model and accepts the dialog.
    bool switchToFakeServer();
    TurnResult askAndWait(const QString &question, bool *ok);

    std::unique_ptr<FakeOpenAiServer> m_server;
    // The window goes before the runtime it points into, the runtime before its data dir.
    std::unique_ptr<QTemporaryDir> m_dataDir;
    std::unique_ptr<AgentRuntime> m_runtime;
    std::unique_ptr<ConsoleWindow> m_window;
};

void tst_ConnectionSettings::initTestCase()
{
    qRegisterMetaType<AgentConsole::TurnResult>();
    qRegisterMetaType<AgentConsole::ToolCallRecord>();
    // A test key, so that no real key of the machine ever goes anywhere (here: to 127.0.0.1).
    qputenv("AGENT_CONSOLE_API_KEY", "sk-test-ui-0c7d");
}

void tst_ConnectionSettings::init()
{
    m_server = std::make_unique<FakeOpenAiServer>();
    QVERIFY(m_server->listen());
    QCOMPARE(m_server->baseUrl().host(), QStringLiteral("127.0.0.1"));
    QVERIFY(startConsole());
}

void tst_ConnectionSettings::cleanup()
{
    m_window.reset();
    m_runtime.reset();
    m_dataDir.reset();
    m_server.reset();
}

bool tst_ConnectionSettings::startConsole()
{
    m_dataDir = std::make_unique<QTemporaryDir>();
    if (!m_dataDir->isValid())
        return false;
    RuntimeOptions options;
    options.dataDirectory = m_dataDir->path();
    m_runtime = std::make_unique<AgentRuntime>(options);
    m_window = std::make_unique<ConsoleWindow>(m_runtime.get());
    m_window->resize(1000, 760);
    m_window->show();
    if (!QTest::qWaitForWindowExposed(m_window.get()))
        return false;
    QSignalSpy ready(m_runtime.get(), &AgentRuntime::ready);
    QSignalSpy failed(m_runtime.get(), &AgentRuntime::failed);
    m_runtime->start();
    if (!QTest::qWaitFor([&] { return !ready.isEmpty() || !failed.isEmpty(); }, turnTimeoutMs)
        || ready.isEmpty()) {
        qWarning("runtime not ready");
        return false;
    }
    m_window->activateWindow();
    return true;
}

ConnectionSettingsDialog *tst_ConnectionSettings::openSettings()
{
    auto *action = m_window->findChild<QAction *>(QStringLiteral("connectionSettingsAction"));
    if (!action || !action->isEnabled()) {
        qWarning("no enabled settings action");
        return nullptr;
    }
    action->trigger();
    // open() shows the dialog at once, window-modal, without a nested event loop.
    auto *dialog = m_window->findChild<ConnectionSettingsDialog *>();
    if (!dialog || !QTest::qWaitForWindowExposed(dialog)) {
        qWarning("the settings dialog did not appear");
        return nullptr;
    }
    if (QApplication::activeModalWidget() != dialog)
        qWarning("the settings dialog is not the active modal widget");
    return dialog;
}

bool tst_ConnectionSettings::switchToFakeServer()
{
    ConnectionSettingsDialog *dialog = openSettings();
    if (!dialog)
        return false;
    auto *openAi = dialog->findChild<QRadioButton *>(QStringLiteral("openAiProvider"));
    auto *baseUrl = dialog->findChild<QLineEdit *>(QStringLiteral("modelBaseUrl"));
    auto *model = dialog->findChild<QLineEdit *>(QStringLiteral("modelName"));
    auto *buttons = dialog->findChild<QDialogButtonBox *>(QStringLiteral("settingsButtons"));
    if (!openAi || !baseUrl || !model || !buttons)
        return false;
    if (openAi->text() != QStringLiteral("OpenAI-compatible server"))
        return false;
    clickLabel(openAi);
    if (!openAi->isChecked() || !baseUrl->isEnabled())
        return false;
    retype(baseUrl, m_server->baseUrl().toString());
    retype(model, QStringLiteral("fake-model"));
    if (!dialog->problem().isEmpty()) {
        qWarning("the dialog refuses the fake server: %s", qPrintable(dialog->problem()));
        return false;
    }
    saveScreenshot(dialog, QStringLiteral("settings-dialog.png"));

    QSignalSpy changed(m_runtime->connection(), &ActiveConnection::settingsChanged);
    QSignalSpy accepted(dialog, &QDialog::accepted);
    QPushButton *ok = buttons->button(QDialogButtonBox::Ok);
    if (!ok->isEnabled())
        return false;
    QTest::mouseClick(ok, Qt::LeftButton);
    if (accepted.size() != 1 || changed.size() != 1) {
        qWarning("the settings were not applied: %s",
                 qPrintable(m_window->noticeBanner()->text()));
        return false;
    }
    return true;
}

TurnResult tst_ConnectionSettings::askAndWait(const QString &question, bool *ok)
{
    *ok = false;
    QSignalSpy finished(m_runtime->agentLoop(), &AgentLoop::turnFinished);
    m_window->questionInput()->setFocus();
    QTest::keyClicks(m_window->questionInput(), question);
    QTest::keyClick(m_window->questionInput(), Qt::Key_Return);
    if (!m_window->isTurnRunning() && finished.isEmpty()) {
        qWarning("Enter did not start a turn");
        return {};
    }
    if (finished.isEmpty() && !finished.wait(turnTimeoutMs)) {
        qWarning("the turn did not finish");
        return {};
    }
    // The transcript shows the finished turn at the next turns of the event loop.
    if (!Testing::waitUntilShown(m_window.get())) {
        qWarning("the window did not show the finished turn");
        return {};
    }
    *ok = true;
    return finished.first().first().value<TurnResult>();
}

void tst_ConnectionSettings::remoteModelStreamsItsAnswer()
{
    QVERIFY(switchToFakeServer());
    auto *modelLabel = m_window->findChild<QLabel *>(QStringLiteral("modelLabel"));
    QVERIFY(modelLabel);
    QVERIFY2(modelLabel->text().contains(QStringLiteral("fake-model")),
             qPrintable(modelLabel->text()));

    m_server->enqueue(plannedToolCalls());
    m_server->enqueue(streamedAnswer(answerPieces, 40));

    // What the window shows each time a piece of the answer arrives, while the turn runs.
    struct Seen
    {
        QString answer;
        QString status;
        QString speaker;
        bool running = false;
    };
    QList<Seen> seen;
    QObject streamWatcher; // ends the connection before the locals it captures go away
    TranscriptView *transcript = m_window->transcript();
    connect(m_runtime->agentLoop(), &AgentLoop::answerDelta, &streamWatcher,
            [&](const QString &requestId, const QString &) {
                seen.append({transcript->answerText(requestId),
                             transcript->turnStatusText(requestId),
                             transcript->speakerText(requestId), m_window->isTurnRunning()});
            });

    bool ok = false;
    const TurnResult result = askAndWait(multiIntentQuestion, &ok);
    QVERIFY(ok);
    QCOMPARE(turnStatusName(result.status), turnStatusName(TurnStatus::Completed));
    QCOMPARE(result.model, QStringLiteral("fake-model"));
    QCOMPARE(m_server->requestCount(), 2);

    // Streaming is visible: the answer grew piece by piece before the turn was over. (One
    // piece per chunk as a rule; pieces that reach the socket together may come as one.)
    const QString fullAnswer = answerPieces.join(QString());
    QVERIFY2(seen.size() >= 2, qPrintable(QString::number(seen.size())));
    for (qsizetype i = 0; i < seen.size(); ++i) {
        QVERIFY2(fullAnswer.startsWith(seen.at(i).answer), qPrintable(seen.at(i).answer));
        if (i > 0)
            QVERIFY(seen.at(i).answer.size() > seen.at(i - 1).answer.size());
        QVERIFY(seen.at(i).running);
        QVERIFY(seen.at(i).status.isEmpty());
        QCOMPARE(seen.at(i).speaker, QStringLiteral("Agent"));
    }
    QCOMPARE(seen.last().answer, fullAnswer);

    const QString requestId = result.requestId;
    QCOMPARE(transcript->answerText(requestId), fullAnswer);
    QCOMPARE(transcript->speakerText(requestId), QStringLiteral("Agent · fake-model"));
    QCOMPARE(transcript->turnStatusText(requestId), QStringLiteral("Answered"));
    const QList<ToolCallCard *> cards = transcript->toolCallCards(requestId);
    QCOMPARE(sortedNames(cards), (QStringList{QStringLiteral("queryInventory"),
                                              QStringLiteral("queryLogistics")}));
    for (const ToolCallCard *card : cards) {
        QCOMPARE(card->statusText(), QStringLiteral("OK"));
        QVERIFY(card->isVisible());
    }
    // One attempt in every layer: the footer has no per-layer detail to add.
    const QString footer = transcript->footerText(requestId);
    QVERIFY2(footer.contains(QStringLiteral("2 tool calls")), qPrintable(footer));
    QVERIFY2(!footer.contains(QStringLiteral("attempts")), qPrintable(footer));
    QVERIFY(!m_window->findChild<StatusChip *>(QStringLiteral("breakerChip"))->isVisible());

    QVERIFY(!saveScreenshot(m_window.get(), QStringLiteral("consolewindow-remote-model.png"))
                 .isEmpty());
}

// A thinking model's reasoning is never the answer: it is folded under a toggle. An answer
// stopped at the model's output limit says so and is not green.
void tst_ConnectionSettings::thinkingIsFoldedAndACutOffAnswerIsMarked()
{
    QVERIFY(switchToFakeServer());
    m_server->enqueue(FakeResponse::events({
        {Sse::role()},
        {Sse::reasoning(QStringLiteral("The staff member greets me; "))},
        {Sse::reasoning(QStringLiteral("no lookup is needed."))},
        {Sse::content(QStringLiteral("Hello! How can I help with your orders"))},
        {Sse::finish(QStringLiteral("length"))},
        {Sse::done()},
    }));
    bool ok = false;
    const TurnResult result = askAndWait(QStringLiteral("hello"), &ok);
    QVERIFY(ok);
    QCOMPARE(result.reasoning,
             QStringLiteral("The staff member greets me; no lookup is needed."));
    QVERIFY(result.answerCutOff);
    TranscriptView *transcript = m_window->transcript();
    QCOMPARE(transcript->answerText(result.requestId),
             QStringLiteral("Hello! How can I help with your orders"));
    QCOMPARE(transcript->turnStatusText(result.requestId), QStringLiteral("Partly answered"));
    auto *cutOff = m_window->findChild<StatusChip *>(QStringLiteral("cutOffChip"));
    QVERIFY(cutOff && cutOff->isVisible());
    QCOMPARE(cutOff->text(), QStringLiteral("Answer cut off"));
    QCOMPARE(cutOff->tone(), Tone::Warning);

    auto *toggle = m_window->findChild<QToolButton *>(QStringLiteral("reasoningToggle"));
    auto *reasoning = m_window->findChild<QLabel *>(QStringLiteral("reasoningText"));
    QVERIFY(toggle && reasoning);
    QVERIFY(toggle->isVisible());
    QVERIFY(!reasoning->isVisible()); // folded until asked for
    QTest::mouseClick(toggle, Qt::LeftButton);
    QVERIFY(reasoning->isVisible());
    QCOMPARE(reasoning->text(), result.reasoning);
    QVERIFY(!saveScreenshot(m_window.get(), QStringLiteral("consolewindow-thinking.png"))
                 .isEmpty());
}

void tst_ConnectionSettings::failingProviderFallsBackToTheOfflineModel()
{
    QVERIFY(switchToFakeServer());
    // Three attempts for each of the turn's two model calls; a few spare, should that change.
    for (int i = 0; i < 10; ++i)
        m_server->enqueue(FakeResponse::error(503, QStringLiteral("server_overloaded"),
                                              QStringLiteral("internal detail 10.1.2.3")));

    bool ok = false;
    const TurnResult result = askAndWait(multiIntentQuestion, &ok);
    QVERIFY(ok);
    QCOMPARE(turnStatusName(result.status), turnStatusName(TurnStatus::Completed));
    QCOMPARE(result.model, QStringLiteral("offline-demo"));
    QVERIFY(result.fallbackHops > 0);
    QVERIFY(m_server->requestCount() >= 2);

    TranscriptView *transcript = m_window->transcript();
    const QString requestId = result.requestId;
    QCOMPARE(transcript->speakerText(requestId), QStringLiteral("Agent · offline-demo"));
    QCOMPARE(transcript->turnStatusText(requestId), QStringLiteral("Answered"));
    const QString answer = transcript->answerText(requestId);
    QVERIFY2(answer.contains(QStringLiteral("Shanghai")), qPrintable(answer));
    QVERIFY(!answer.contains(QStringLiteral("10.1.2.3")));

    // The footer says the model layer retried and fell back.
    const QString footer = transcript->footerText(requestId);
    const QString expected = QStringLiteral("model: %1 attempts · fallback \u00d7%2")
                                 .arg(result.modelAttempts)
                                 .arg(result.fallbackHops);
    QVERIFY2(footer.contains(expected), qPrintable(footer + QStringLiteral(" / ") + expected));
    QVERIFY2(result.modelAttempts > result.modelCalls, qPrintable(footer));
    // The tools went through at once: the footer does not count their attempts.
    QVERIFY2(!footer.contains(QStringLiteral("tools:")), qPrintable(footer));

    QVERIFY(!saveScreenshot(m_window.get(), QStringLiteral("consolewindow-fallback.png"))
                 .isEmpty());
}

void tst_ConnectionSettings::breakerChipFollowsTheBreakers()
{
    auto *chip = m_window->findChild<StatusChip *>(QStringLiteral("breakerChip"));
    QVERIFY(chip);
    QVERIFY(!chip->isVisible());

    // A breaker the registry creates after the window connected; its own clock, so that the
    // cool-down passes without waiting.
    CircuitBreakerRegistry *breakers = RuntimeTestSeam::breakers(*m_runtime);
    QVERIFY(breakers);
    qint64 nowMs = 1'000'000;
    CircuitBreaker *breaker = breakers->breaker(QStringLiteral("model:test"));
    breaker->setClock([&nowMs] { return nowMs; });
    QSignalSpy changes(breakers, &CircuitBreakerRegistry::stateChanged);

    const CircuitBreaker::Options &options = breaker->options();
    for (int i = 0; i < options.minimumCalls; ++i) {
        QVERIFY(breaker->tryAcquire());
        breaker->recordFailure(5ms);
    }
    QCOMPARE(breaker->state(), CircuitBreaker::State::Open);
    QCOMPARE(changes.size(), 1);
    QVERIFY(chip->isVisible());
    QCOMPARE(chip->text(), QStringLiteral("Circuit open: Model \u00B7 test"));
    QCOMPARE(chip->tone(), Tone::Danger);
    QVERIFY2(chip->toolTip().contains(QStringLiteral("Model \u00B7 test"))
                 && chip->toolTip().contains(QStringLiteral("fail fast"))
                 && chip->toolTip().contains(QStringLiteral("cool-down")),
             qPrintable(chip->toolTip()));
    QVERIFY(!saveScreenshot(m_window.get(), QStringLiteral("consolewindow-breaker-open.png"))
                 .isEmpty());

    // Still cooling down: refused, and still shown as open.
    QVERIFY(!breaker->tryAcquire());
    QCOMPARE(chip->text(), QStringLiteral("Circuit open: Model \u00B7 test"));

    // After the cool-down the first call is a probe: half-open.
    nowMs += options.openCooldown.count() + 1;
    QVERIFY(breaker->tryAcquire());
    QCOMPARE(breaker->state(), CircuitBreaker::State::HalfOpen);
    QVERIFY(chip->isVisible());
    QCOMPARE(chip->text(), QStringLiteral("Half-open: Model \u00B7 test"));
    QCOMPARE(chip->tone(), Tone::Warning);
    QVERIFY2(chip->toolTip().contains(QStringLiteral("trial calls")),
             qPrintable(chip->toolTip()));

    // Every probe succeeds: closed again, and the chip goes away.
    breaker->recordSuccess(5ms);
    for (int probe = 1; probe < options.halfOpenProbes; ++probe) {
        QVERIFY(breaker->tryAcquire());
        breaker->recordSuccess(5ms);
    }
    QCOMPARE(breaker->state(), CircuitBreaker::State::Closed);
    QCOMPARE(changes.size(), 3);
    QVERIFY(!chip->isVisible());
    QVERIFY(chip->toolTip().isEmpty());
}

void tst_ConnectionSettings::invalidBaseUrlIsRefused()
{
    ConnectionSettingsDialog *dialog = openSettings();
    QVERIFY(dialog);
    auto *openAi = dialog->findChild<QRadioButton *>(QStringLiteral("openAiProvider"));
    auto *baseUrl = dialog->findChild<QLineEdit *>(QStringLiteral("modelBaseUrl"));
    auto *model = dialog->findChild<QLineEdit *>(QStringLiteral("modelName"));
    auto *problem = dialog->findChild<NoticeBanner *>(QStringLiteral("settingsProblem"));
    auto *buttons = dialog->findChild<QDialogButtonBox *>(QStringLiteral("settingsButtons"));
    QVERIFY(openAi && baseUrl && model && problem && buttons);
    QPushButton *ok = buttons->button(QDialogButtonBox::Ok);

    // The offline model needs nothing: OK is on and no problem is shown.
    QVERIFY(ok->isEnabled());
    QVERIFY(!problem->isVisible());
    const int offlineHeight = dialog->height();

    clickLabel(openAi);
    retype(model, QStringLiteral("fake-model"));
    retype(baseUrl, QStringLiteral("ftp://127.0.0.1/v1"));
    QVERIFY(!ok->isEnabled());
    QVERIFY(problem->isVisible());
    // Said as the dialog names the field, not as the command line names the option.
    QCOMPARE(dialog->problem(),
             QStringLiteral("Base URL (model): is not an http:// or https:// address"));
    QVERIFY2(!problem->text().contains(QLatin1String("--")), qPrintable(problem->text()));
    QVERIFY(problem->text().contains(dialog->problem()));
    QCOMPARE(problem->tone(), Tone::Warning);
    const int heightWithProblem = dialog->height();
    QVERIFY(heightWithProblem > offlineHeight);
    QVERIFY(!saveScreenshot(dialog, QStringLiteral("settings-dialog-invalid.png")).isEmpty());

    // Enter does not get past it either, and nothing reaches the runtime.
    QSignalSpy changed(m_runtime->connection(), &ActiveConnection::settingsChanged);
    QTest::keyClick(baseUrl, Qt::Key_Return);
    QVERIFY(dialog->isVisible());
    QCOMPARE(dialog->result(), int(QDialog::Rejected));
    QCOMPARE(changed.size(), 0);

    // Fixing the URL lets it through.
    retype(baseUrl, m_server->baseUrl().toString());
    QVERIFY(ok->isEnabled());
    QVERIFY(!problem->isVisible());
    // The dialog gives back the notice's room rather than leaving an empty band.
    QVERIFY2(dialog->height() < heightWithProblem,
             qPrintable(QStringLiteral("%1 / %2").arg(dialog->height()).arg(heightWithProblem)));
    // Back to the offline model: the key line goes too, and the dialog is as tall as before.
    clickLabel(dialog->findChild<QRadioButton *>(QStringLiteral("offlineProvider")));
    QVERIFY(ok->isEnabled());
    QCOMPARE(dialog->height(), offlineHeight);
    QTest::mouseClick(buttons->button(QDialogButtonBox::Cancel), Qt::LeftButton);
    QVERIFY(!dialog->isVisible());
    QCOMPARE(changed.size(), 0);
}

// Extra headers and a secondary provider come from the command line; the dialog has no fields
// for them and must hand them back as they were.
void tst_ConnectionSettings::dialogKeepsWhatItDoesNotEdit()
{
    ModelOptions model;
    model.provider = ModelOptions::Provider::OpenAiCompatible;
    model.baseUrl = m_server->baseUrl().toString();
    model.model = QStringLiteral("fake-model");
    model.extraHeaders = {{"X-Team", "support"}};
    model.secondaryBaseUrl = QStringLiteral("http://127.0.0.1:9/v1");
    model.secondaryModel = QStringLiteral("second-model");
    ConnectionSettingsDialog dialog(model, BackendOptions{}, m_window.get());
    QVERIFY(dialog.problem().isEmpty());

    auto *modelName = dialog.findChild<QLineEdit *>(QStringLiteral("modelName"));
    QVERIFY(modelName);
    modelName->setText(QStringLiteral("other-model"));
    const ModelOptions edited = dialog.modelOptions();
    QCOMPARE(edited.model, QStringLiteral("other-model"));
    QCOMPARE(edited.extraHeaders, model.extraHeaders);
    QCOMPARE(edited.secondaryBaseUrl, model.secondaryBaseUrl);
    QCOMPARE(edited.secondaryModel, model.secondaryModel);
    QCOMPARE(edited.secondaryApiKeyEnv, model.secondaryApiKeyEnv);
}

// Issue #24 §4: the conversation budget in Settings › Connection: at its lowest it reads as the
// provider's default (following the preset chosen), a value out of range is refused in words,
// one in range is what the dialog hands back.
void tst_ConnectionSettings::theConversationBudgetIsASetting()
{
    ConnectionSettingsDialog dialog(ModelOptions{}, BackendOptions{}, m_window.get());
    dialog.show();
    QVERIFY(QTest::qWaitForWindowExposed(&dialog));
    auto *budget = dialog.findChild<QSpinBox *>(QStringLiteral("contextChars"));
    QVERIFY(budget);
    QCOMPARE(budget->value(), 0);
    QCOMPARE(budget->text(), QStringLiteral("Provider default (32,000 characters)"));
    auto *preset = dialog.findChild<QComboBox *>(QStringLiteral("providerPreset"));
    QVERIFY(preset);
    const int ollama = preset->findText(QStringLiteral("Ollama (local)"));
    QVERIFY(ollama > 0);
    preset->setCurrentIndex(ollama);
    Q_EMIT preset->activated(ollama);
    QCOMPARE(budget->text(), QStringLiteral("Provider default (6,000 characters)"));
    QCOMPARE(dialog.modelOptions().contextChars, 0);

    budget->setValue(1000);
    QVERIFY2(dialog.problem().startsWith(QStringLiteral("Conversation budget: ")),
             qPrintable(dialog.problem()));
    budget->setValue(50'000);
    QVERIFY2(dialog.problem().isEmpty(), qPrintable(dialog.problem()));
    QCOMPARE(dialog.modelOptions().contextChars, 50'000);
    QCOMPARE(dialog.modelOptions().conversationBudget(), 50'000);
    QVERIFY(!saveScreenshot(&dialog, QStringLiteral("settings-conversation-budget.png")).isEmpty());
}

QTEST_MAIN(tst_ConnectionSettings)
#include "tst_connectionsettings.moc"
