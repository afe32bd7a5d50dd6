// The policy editor over a real runtime on a temporary data directory, offscreen: the worst
// case follows what is typed, a value out of range is refused with its reason and the tool
// keeps its policy, and an applied policy governs the tool's next call. No mocks.
#include "consoletestsupport.h"

#include "ui/faults/faultpanel.h"
#include "ui/faults/policyeditor.h"
#include "ui/common/staffwords.h"

#include <QComboBox>
#include <QLabel>
#include <QDoubleSpinBox>
#include <QLineEdit>
#include <QListWidget>
#include <QPushButton>
#include <QSpinBox>

using namespace AgentConsole;
using namespace AgentConsole::UiTest;

namespace {

// Replaces a spin box's text as typed keys, so valueChanged fires as it would for a tester.
void typeInto(QAbstractSpinBox *spin, const QString &text)
{
    spin->setFocus();
    spin->selectAll();
    QTest::keyClick(spin, Qt::Key_Backspace);
    QTest::keyClicks(spin, text);
}

} // namespace

class tst_PolicyEditor final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void theWorstCaseFollowsTheEdit();
    void anInvalidValueIsRefusedAndNothingIsLost();
    void anAppliedPolicyGovernsTheNextCall();
    void editsOfAnotherToolAreKept();
    void itsRangesAndHelpAreCores();
};

void tst_PolicyEditor::initTestCase()
{
    registerTypes();
}

void tst_PolicyEditor::theWorstCaseFollowsTheEdit()
{
    const std::unique_ptr<Console> console = startConsole({});
    QVERIFY(console);
    PolicyEditor *editor = console->window->policyEditor();
    QVERIFY(editor);
    editor->show();
    QVERIFY(editor->selectTool(QStringLiteral("queryLogistics")));
    // The default: 3 attempts x 2 s, 200 ms then 400 ms of backoff.
    QCOMPARE(editor->worstCaseText(), QStringLiteral("Worst case of one call: 6.6 s"));
    QCOMPARE(editor->stateText(), QStringLiteral("Default policy"));
    QVERIFY(!editor->applyButton()->isEnabled());

    auto *timeout
        = qobject_cast<QSpinBox *>(editor->fieldEditor(QStringLiteral("attemptTimeout")));
    QVERIFY(timeout);
    typeInto(timeout, QStringLiteral("1000"));
    // Shown at once, before anything is applied: 1 + 0.2 + 1 + 0.4 + 1 s.
    QCOMPARE(editor->worstCaseText(), QStringLiteral("Worst case of one call: 3.6 s"));
    QCOMPARE(editor->stateText(), QStringLiteral("Edited, not applied"));
    QVERIFY(editor->findChild<QLabel *>(QStringLiteral("policyWorstCaseDetail"))
                ->text()
                .contains(QStringLiteral("The default: 3 attempts")));
    QCOMPARE(
        console->policies()->policy(QStringLiteral("queryLogistics")).attemptTimeout, 2000ms);
    QVERIFY(!console->window->windowTitle().contains(QStringLiteral("POLICY")));

    auto *retries = qobject_cast<QSpinBox *>(editor->fieldEditor(QStringLiteral("maxRetries")));
    typeInto(retries, QStringLiteral("0"));
    QCOMPARE(editor->worstCaseText(), QStringLiteral("Worst case of one call: 1 s"));
    auto *jitter = qobject_cast<QComboBox *>(editor->fieldEditor(QStringLiteral("jitter")));
    QVERIFY(jitter);
    jitter->setCurrentIndex(jitter->findData(int(JitterMode::Decorrelated)));
    QCOMPARE(editor->draft().jitter, JitterMode::Decorrelated);

    QVERIFY(editor->applyButton()->isEnabled());
    QTest::mouseClick(editor->applyButton(), Qt::LeftButton);
    const RetryPolicy applied = console->policies()->policy(QStringLiteral("queryLogistics"));
    QCOMPARE(applied.attemptTimeout, 1000ms);
    QCOMPARE(applied.maxRetries, 0);
    QCOMPARE(applied.jitter, JitterMode::Decorrelated);
    QCOMPARE(console->policies()->toolsWithCustomPolicy(),
             QStringList{QStringLiteral("queryLogistics")});
    QCOMPARE(editor->stateText(), QStringLiteral("Custom policy"));
    QCOMPARE(console->window->windowTitle(),
        QStringLiteral("Lin Wei (u-1001) \u00b7 t-acme \u2014 CUSTOM RETRY POLICY"));
    QCOMPARE(console->window->faultChip()->text(), QStringLiteral("1 custom policy"));
    const auto *list = editor->findChild<QListWidget *>(QStringLiteral("policyTools"));
    QVERIFY(list->currentItem()->text().contains(QStringLiteral("custom policy")));

    QVERIFY(editor->resetButton()->isEnabled());
    QTest::mouseClick(editor->resetButton(), Qt::LeftButton);
    QVERIFY(console->policies()->toolsWithCustomPolicy().isEmpty());
    QCOMPARE(timeout->value(), 2000);
    QCOMPARE(editor->worstCaseText(), QStringLiteral("Worst case of one call: 6.6 s"));
    QCOMPARE(console->window->windowTitle(),
        QStringLiteral("Lin Wei (u-1001) \u00b7 t-acme"));
    QVERIFY(!console->window->faultChip()->isVisible());
}

void tst_PolicyEditor::anInvalidValueIsRefusedAndNothingIsLost()
{
    const std::unique_ptr<Console> console = startConsole({});
    QVERIFY(console);
    PolicyEditor *editor = console->window->policyEditor();
    editor->show();
    editor->raise();
    QVERIFY(editor->selectTool(QStringLiteral("queryInventory")));
    const RetryPolicy before = console->policies()->policy(QStringLiteral("queryInventory"));

    auto *timeout
        = qobject_cast<QSpinBox *>(editor->fieldEditor(QStringLiteral("attemptTimeout")));
    typeInto(timeout, QStringLiteral("5"));
    QCOMPARE(editor->fieldProblem(QStringLiteral("attemptTimeout")),
        QStringLiteral("attempt timeout: from 10 ms to 120 s"));
    QCOMPARE(editor->problemText(), QStringLiteral("attempt timeout: from 10 ms to 120 s"));
    QVERIFY(!editor->applyButton()->isEnabled());
    QVERIFY(editor->worstCaseText().contains(QStringLiteral("\u2014")));
    // Applying anyway (Alt+A, or a script) is refused the same way.
    QVERIFY(!editor->apply());
    QCOMPARE(console->policies()->policy(QStringLiteral("queryInventory")), before);
    QCOMPARE(timeout->value(), 5);
    QVERIFY(console->policies()->toolsWithCustomPolicy().isEmpty());
    const auto *problem = editor->findChild<NoticeBanner *>(QStringLiteral("policyProblem"));
    QVERIFY(problem->isVisible());
    QVERIFY(problem->text().contains(QStringLiteral("Check stock keeps the policy it has")));
    QVERIFY(!saveScreenshot(console->window.get(), QStringLiteral("policyeditor-invalid.png"))
                 .isEmpty());

    // A rule between two fields: the maximum delay is refused beside its own field.
    typeInto(timeout, QStringLiteral("1500"));
    QVERIFY(editor->problemText().isEmpty());
    auto *maxDelay = qobject_cast<QSpinBox *>(editor->fieldEditor(QStringLiteral("maxDelay")));
    typeInto(maxDelay, QStringLiteral("100"));
    QCOMPARE(editor->fieldProblem(QStringLiteral("maxDelay")),
        QStringLiteral("maximum delay: not below the first delay"));
    QVERIFY(editor->fieldProblem(QStringLiteral("attemptTimeout")).isEmpty());
    auto *multiplier
        = qobject_cast<QDoubleSpinBox *>(editor->fieldEditor(QStringLiteral("multiplier")));
    typeInto(maxDelay, QStringLiteral("1000"));
    typeInto(multiplier, QStringLiteral("0.5"));
    QCOMPARE(editor->fieldProblem(QStringLiteral("multiplier")),
        QStringLiteral("multiplier: from 1 to 10"));
    QCOMPARE(console->policies()->policy(QStringLiteral("queryInventory")), before);

    // Corrected, it applies.
    typeInto(multiplier, QStringLiteral("3"));
    QVERIFY(editor->problemText().isEmpty());
    QVERIFY(editor->apply());
    QCOMPARE(
        console->policies()->policy(QStringLiteral("queryInventory")).attemptTimeout, 1500ms);
    QCOMPARE(console->policies()->policy(QStringLiteral("queryInventory")).multiplier, 3.0);
}

// One attempt of 300 ms for logistics, which hangs: the next call times out once, at 300 ms,
// under the policy just applied; no restart.
void tst_PolicyEditor::anAppliedPolicyGovernsTheNextCall()
{
    const std::unique_ptr<Console> console = startConsole({});
    QVERIFY(console);
    FaultPlan hang;
    ToolFault fault;
    fault.hang = true;
    hang.setFault(QStringLiteral("queryLogistics"), fault);
    console->faults()->setPlan(hang);

    PolicyEditor *editor = console->window->policyEditor();
    editor->show();
    QVERIFY(editor->selectTool(QStringLiteral("queryLogistics")));
    typeInto(qobject_cast<QSpinBox *>(editor->fieldEditor(QStringLiteral("attemptTimeout"))),
        QStringLiteral("300"));
    typeInto(qobject_cast<QSpinBox *>(editor->fieldEditor(QStringLiteral("maxRetries"))),
        QStringLiteral("0"));
    QCOMPARE(editor->worstCaseText(), QStringLiteral("Worst case of one call: 300 ms"));
    QVERIFY(editor->apply());

    bool ok = false;
    const TurnResult turn = askAndWait(
        *console, QStringLiteral("Where is order A1001 and is SKU-200 in stock?"), &ok);
    QVERIFY(ok);
    const ToolCallRecord *call = callNamed(turn, QStringLiteral("queryLogistics"));
    QVERIFY(call);
    QCOMPARE(call->result.code, ResultCode::ToolTimeout);
    QCOMPARE(call->attemptsMade(), 1);
    QCOMPARE(call->attemptTimeoutMs, 300);
    QCOMPARE(call->worstCaseMs, 300);
    // The other lookup kept the default.
    const ToolCallRecord *stock = callNamed(turn, QStringLiteral("queryInventory"));
    QVERIFY(stock);
    QCOMPARE(stock->result.code, ResultCode::Ok);
    QCOMPARE(stock->attemptTimeoutMs, 2000);
}

// Edits not applied stay with their tool while another is shown, and are flagged.
void tst_PolicyEditor::editsOfAnotherToolAreKept()
{
    const std::unique_ptr<Console> console = startConsole({});
    QVERIFY(console);
    PolicyEditor *editor = console->window->policyEditor();
    editor->show();
    QVERIFY(editor->selectTool(QStringLiteral("createTicket")));
    auto *timeout
        = qobject_cast<QSpinBox *>(editor->fieldEditor(QStringLiteral("attemptTimeout")));
    typeInto(timeout, QStringLiteral("4000"));
    QVERIFY(editor->hasUnappliedEdits(QStringLiteral("createTicket")));

    QVERIFY(editor->selectTool(QStringLiteral("queryOrderStatus")));
    QCOMPARE(timeout->value(), 2000);
    QCOMPARE(editor->stateText(), QStringLiteral("Default policy"));
    const auto *list = editor->findChild<QListWidget *>(QStringLiteral("policyTools"));
    // createTicket comes after the four lookups.
    QVERIFY(list->item(4)->text().contains(QStringLiteral("edited, not applied")));

    QVERIFY(editor->selectTool(QStringLiteral("createTicket")));
    QCOMPARE(timeout->value(), 4000);
    QCOMPARE(editor->stateText(), QStringLiteral("Edited, not applied"));
    // Typing the old value back is no edit.
    typeInto(timeout, QStringLiteral("2000"));
    QVERIFY(!editor->hasUnappliedEdits(QStringLiteral("createTicket")));
    QVERIFY(!editor->applyButton()->isEnabled());
}

// Every range RetryPolicy publishes (RetryPolicy::bounds()) is a field here, but the call
// deadline, which the editor keeps as the policy has it; each field takes all of core's
// range, its help says core's ends in the cards' words, and a value one past an end is typed
// whole and refused beside its field with core's reason. A range written again in the editor
// fails here once core's changes.
void tst_PolicyEditor::itsRangesAndHelpAreCores()
{
    const std::unique_ptr<Console> console = startConsole({});
    QVERIFY(console);
    PolicyEditor *editor = console->window->policyEditor();
    editor->show();
    QVERIFY(editor->selectTool(QStringLiteral("queryInventory")));
    const RetryPolicy before = console->policies()->policy(QStringLiteral("queryInventory"));

    // The words as a tester reads them.
    QVERIFY2(editor->fieldEditor(QStringLiteral("attemptTimeout"))
                 ->toolTip()
                 .contains(QStringLiteral("(10 ms to 120 s)")),
             qPrintable(editor->fieldEditor(QStringLiteral("attemptTimeout"))->toolTip()));

    QStringList notShown;
    for (const RetryPolicy::Bound &bound : RetryPolicy::bounds()) {
        const QString key = QLatin1String(bound.field);
        QWidget *field = editor->fieldEditor(key);
        if (!field) {
            notShown.append(key);
            continue;
        }
        const bool millis = bound.unit == RetryPolicy::Bound::Unit::Millis;
        const auto words = [&](double value) {
            return millis ? StaffWords::duration(qint64(value)) : QString::number(value);
        };
        const QString help = field->toolTip();
        const QString range = QStringLiteral("(%1 to %2").arg(words(bound.min), words(bound.max));
        QVERIFY2(help.contains(range), qPrintable(help + QStringLiteral(" lacks ") + range));
        QCOMPARE(field->accessibleDescription(), help);

        auto *spin = qobject_cast<QAbstractSpinBox *>(field);
        QVERIFY2(spin, qPrintable(key));
        const double step = bound.unit == RetryPolicy::Bound::Unit::Factor ? 0.5 : 1;
        const auto number = [](double value) { return QString::number(value, 'g', 16); };
        QString shown;
        if (auto *whole = qobject_cast<QSpinBox *>(spin)) {
            QVERIFY2(whole->minimum() <= bound.min && whole->maximum() > bound.max,
                     qPrintable(key));
            shown = whole->cleanText();
        } else {
            auto *factor = qobject_cast<QDoubleSpinBox *>(spin);
            QVERIFY2(factor, qPrintable(key));
            QVERIFY2(factor->minimum() <= bound.min && factor->maximum() > bound.max,
                     qPrintable(key));
            shown = factor->cleanText();
        }
        typeInto(spin, number(bound.max + step));
        const std::optional<RetryPolicy::RangeProblem> refused = editor->draft().rangeProblem();
        QVERIFY2(refused, qPrintable(key));
        QCOMPARE(QLatin1String(refused->field), key);
        QCOMPARE(editor->fieldProblem(key), refused->text);
        QVERIFY(!editor->applyButton()->isEnabled());
        typeInto(spin, number(bound.max));
        QVERIFY2(editor->fieldProblem(key).isEmpty(), qPrintable(editor->fieldProblem(key)));
        // Back to what it showed, so that the next field is judged alone.
        typeInto(spin, shown);
        QVERIFY2(editor->problemText().isEmpty(), qPrintable(key + editor->problemText()));
    }
    QCOMPARE(notShown, QStringList{QStringLiteral("callDeadline")});
    QVERIFY(!editor->hasUnappliedEdits(QStringLiteral("queryInventory")));
    QCOMPARE(console->policies()->policy(QStringLiteral("queryInventory")), before);
}

QTEST_MAIN(tst_PolicyEditor)
#include "tst_policyeditor.moc"
