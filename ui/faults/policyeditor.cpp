#include "policyeditor.h"

#include "faultpanel.h"
#include "typedbound.h"
#include "ui/common/noticebanner.h"
#include "ui/common/policylock.h"
#include "ui/common/statuschip.h"

#include "ui/common/staffwords.h"

#include "core/console/toolpolicies.h"

#include <QComboBox>
#include <QCoreApplication>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QListWidget>
#include <QPushButton>
#include <QScrollArea>
#include <QSpinBox>
#include <QVBoxLayout>

#include <cmath>

namespace AgentConsole {

namespace Internal {

// The jitter is a choice; every other member the editor shows has a range of core's
// (RetryPolicy::bound()), which gives its spin box and the "%1 to %2" of its help.
enum class PolicyFieldKind { Ranged, Jitter };

// One member of RetryPolicy in staff words; `key` is the member's name, as RetryPolicy::bound()
// and rangeProblem() name it, so that a refusal is shown beside its field.
struct PolicyField
{
    const char *key;
    PolicyFieldKind kind;
    const char *label;
    const char *help;
    double (*get)(const RetryPolicy &);
    void (*set)(RetryPolicy &, double);
};

} // namespace Internal

namespace {

using Internal::PolicyField;
using Internal::PolicyFieldKind;
using Millis = RetryPolicy::Millis;

Millis millis(double value)
{
    return Millis{qint64(value)};
}

const PolicyField kFields[] = {
    {"attemptTimeout", PolicyFieldKind::Ranged,
     QT_TRANSLATE_NOOP("AgentConsole::PolicyEditor", "Attempt timeout"),
     QT_TRANSLATE_NOOP("AgentConsole::PolicyEditor",
                       "How long one attempt may take before it is abandoned (%1 to %2)."),
     [](const RetryPolicy &p) { return double(p.attemptTimeout.count()); },
     [](RetryPolicy &p, double v) { p.attemptTimeout = millis(v); }},
    {"maxRetries", PolicyFieldKind::Ranged,
     QT_TRANSLATE_NOOP("AgentConsole::PolicyEditor", "Retries"),
     QT_TRANSLATE_NOOP("AgentConsole::PolicyEditor",
                       "How many times a failed attempt is tried again (%1 to %2)."),
     [](const RetryPolicy &p) { return double(p.maxRetries); },
     [](RetryPolicy &p, double v) { p.maxRetries = int(v); }},
    {"initialDelay", PolicyFieldKind::Ranged,
     QT_TRANSLATE_NOOP("AgentConsole::PolicyEditor", "First delay"),
     QT_TRANSLATE_NOOP("AgentConsole::PolicyEditor",
                       "The wait before the first retry (%1 to %2)."),
     [](const RetryPolicy &p) { return double(p.initialDelay.count()); },
     [](RetryPolicy &p, double v) { p.initialDelay = millis(v); }},
    {"multiplier", PolicyFieldKind::Ranged,
     QT_TRANSLATE_NOOP("AgentConsole::PolicyEditor", "Multiplier"),
     QT_TRANSLATE_NOOP("AgentConsole::PolicyEditor",
                       "Each wait is the one before times this (%1 to %2)."),
     [](const RetryPolicy &p) { return p.multiplier; },
     [](RetryPolicy &p, double v) { p.multiplier = v; }},
    {"maxDelay", PolicyFieldKind::Ranged,
     QT_TRANSLATE_NOOP("AgentConsole::PolicyEditor", "Maximum delay"),
     QT_TRANSLATE_NOOP("AgentConsole::PolicyEditor",
                       "No wait is longer than this (%1 to %2, not below the first delay)."),
     [](const RetryPolicy &p) { return double(p.maxDelay.count()); },
     [](RetryPolicy &p, double v) { p.maxDelay = millis(v); }},
    {"jitter", PolicyFieldKind::Jitter, QT_TRANSLATE_NOOP("AgentConsole::PolicyEditor", "Jitter"),
     QT_TRANSLATE_NOOP("AgentConsole::PolicyEditor",
                       "Randomises the waits so that many callers do not retry at the same "
                       "moment."),
     [](const RetryPolicy &p) { return double(int(p.jitter)); },
     [](RetryPolicy &p, double v) { p.jitter = JitterMode(int(v)); }},
    {"retryAfterCap", PolicyFieldKind::Ranged,
     QT_TRANSLATE_NOOP("AgentConsole::PolicyEditor", "Retry-After cap"),
     QT_TRANSLATE_NOOP("AgentConsole::PolicyEditor",
                       "The longest wait a server may ask for with Retry-After (%1 to %2); never "
                       "more than the maximum delay."),
     [](const RetryPolicy &p) { return double(p.retryAfterCap.count()); },
     [](RetryPolicy &p, double v) { p.retryAfterCap = millis(v); }},
};

// An end of core's range as the help says it: a duration in the cards' words.
QString endWords(const RetryPolicy::Bound &bound, double value)
{
    if (bound.unit == RetryPolicy::Bound::Unit::Millis)
        return StaffWords::duration(qint64(value));
    return QString::number(value, 'g', 16);
}

// The PolicyEditor's words outside its members, in its context (lupdate reads EditorText::tr).
struct EditorText
{
    Q_DECLARE_TR_FUNCTIONS(AgentConsole::PolicyEditor)
};

// A bound reads rounded up: 1950 ms is "2.0 s", never "1.9 s".
QString boundText(Millis value)
{
    const qint64 ms = value.count();
    if (ms < 1000)
        return EditorText::tr("%1 ms").arg(ms);
    if (ms % 1000 == 0)
        return EditorText::tr("%1 s").arg(ms / 1000);
    return EditorText::tr("%1 s").arg(std::ceil(double(ms) / 100.0) / 10.0, 0, 'f', 1);
}

} // namespace

PolicyEditor::PolicyEditor(ToolPolicies *policies, QWidget *parent)
    : QDockWidget(tr("Retry policies"), parent)
    , m_policies(policies)
{
    Q_ASSERT(policies);
    setObjectName(QStringLiteral("policyEditor"));
    setAllowedAreas(Qt::LeftDockWidgetArea | Qt::RightDockWidgetArea);

    m_toolList = new QListWidget;
    m_toolList->setObjectName(QStringLiteral("policyTools"));
    m_toolList->setAccessibleName(tr("Tool"));
    m_toolList->setSizeAdjustPolicy(QAbstractScrollArea::AdjustToContents);
    m_toolList->setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Maximum);
    setFocusProxy(m_toolList); // opened from the keyboard, the editor starts at its list
    auto *toolLabel = new QLabel(tr("&Tool:"));
    toolLabel->setBuddy(m_toolList);

    m_stateChip = new StatusChip;
    m_stateChip->setObjectName(QStringLiteral("policyState"));

    m_fieldsBox = new QGroupBox;
    m_form = new QFormLayout(m_fieldsBox);
    m_form->setFieldGrowthPolicy(QFormLayout::ExpandingFieldsGrow);
    buildForm(m_form);

    m_worstCase = new QLabel;
    m_worstCase->setObjectName(QStringLiteral("policyWorstCase"));
    QFont emphasised = m_worstCase->font();
    emphasised.setWeight(QFont::DemiBold);
    m_worstCase->setFont(emphasised);
    m_worstCaseDetail = new QLabel;
    m_worstCaseDetail->setObjectName(QStringLiteral("policyWorstCaseDetail"));
    m_worstCaseDetail->setWordWrap(true);
    m_worstCaseDetail->setTextFormat(Qt::PlainText);

    m_problem = new NoticeBanner;
    m_problem->setObjectName(QStringLiteral("policyProblem"));

    m_applyButton = new QPushButton(tr("&Apply"));
    m_applyButton->setObjectName(QStringLiteral("applyPolicyButton"));
    m_applyButton->setToolTip(tr("The tool uses this policy from its next call"));
    m_resetButton = new QPushButton(tr("Reset to &default"));
    m_resetButton->setObjectName(QStringLiteral("resetPolicyButton"));
    m_resetButton->setToolTip(tr("The tool uses the default policy again; edits not applied "
                                 "are dropped"));
    auto *buttons = new QHBoxLayout;
    buttons->addWidget(m_stateChip);
    buttons->addStretch(1);
    buttons->addWidget(m_resetButton);
    buttons->addWidget(m_applyButton);

    // When the team's policy locks the tools' policies: a lock and its words, the fields shown
    // but not edited (docs/POLICY.md).
    m_lockRow = new QWidget;
    m_lockRow->setObjectName(QStringLiteral("policyLocked"));
    auto *lockLayout = new QHBoxLayout(m_lockRow);
    lockLayout->setContentsMargins(0, 0, 0, 0);
    m_lock = new PolicyLock(QString(), m_lockRow);
    m_lockWords = new QLabel(m_lockRow);
    m_lockWords->setObjectName(QStringLiteral("policyLockedWords"));
    m_lockWords->setWordWrap(true);
    m_lockWords->setTextFormat(Qt::PlainText);
    lockLayout->addWidget(m_lock, 0, Qt::AlignTop);
    lockLayout->addWidget(m_lockWords, 1);
    m_lockRow->setVisible(false);

    auto *content = new QWidget;
    auto *layout = new QVBoxLayout(content);
    layout->addWidget(m_lockRow);
    layout->addWidget(toolLabel);
    layout->addWidget(m_toolList);
    layout->addWidget(m_fieldsBox);
    layout->addWidget(m_worstCase);
    layout->addWidget(m_worstCaseDetail);
    layout->addWidget(m_problem);
    layout->addLayout(buttons);
    layout->addStretch(1);

    content->setMinimumWidth(fontMetrics().averageCharWidth() * 60);
    auto *scroll = new QScrollArea;
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    scroll->setWidget(content);
    setWidget(scroll);

    connect(m_toolList, &QListWidget::currentRowChanged, this, &PolicyEditor::onToolChanged);
    connect(m_applyButton, &QPushButton::clicked, this, &PolicyEditor::apply);
    connect(m_resetButton, &QPushButton::clicked, this, &PolicyEditor::resetToDefault);
    connect(m_policies, &ToolPolicies::changed, this, &PolicyEditor::onPoliciesChanged);
    refresh();
}

void PolicyEditor::onRuntimeReady(const AgentLoop *loop)
{
    m_loop = loop;
    refresh();
}

PolicyEditor::~PolicyEditor() = default;

void PolicyEditor::buildForm(QFormLayout *form)
{
    for (const PolicyField &field : kFields) {
        FieldRow row;
        row.field = &field;
        QString help = EditorText::tr(field.help);
        const std::optional<RetryPolicy::Bound> bound = RetryPolicy::bound(field.key);
        switch (field.kind) {
        case PolicyFieldKind::Ranged: {
            // A member core no longer bounds is left out; a suite fails on it.
            if (!bound)
                continue;
            help = help.arg(endWords(*bound, bound->min), endWords(*bound, bound->max));
            const double lowest = std::min(0.0, bound->min);
            if (bound->unit == RetryPolicy::Bound::Unit::Factor) {
                auto *spin = new QDoubleSpinBox;
                spin->setRange(lowest, Internal::typedMaximum(bound->max));
                spin->setDecimals(2);
                spin->setSingleStep(0.5);
                spin->setPrefix(QStringLiteral("\u00d7 "));
                connect(spin, &QDoubleSpinBox::valueChanged, this, &PolicyEditor::onFieldEdited);
                row.editor = spin;
                break;
            }
            auto *spin = new QSpinBox;
            spin->setRange(int(lowest), Internal::typedMaximum(bound->max));
            if (bound->unit == RetryPolicy::Bound::Unit::Millis) {
                spin->setSuffix(tr(" ms"));
                spin->setSingleStep(100);
                spin->setAccelerated(true);
            }
            connect(spin, &QSpinBox::valueChanged, this, &PolicyEditor::onFieldEdited);
            row.editor = spin;
            break;
        }
        case PolicyFieldKind::Jitter: {
            auto *combo = new QComboBox;
            combo->addItem(tr("None: the waits as computed"), int(JitterMode::None));
            combo->addItem(tr("Full: random, up to the computed wait"), int(JitterMode::Full));
            combo->addItem(tr("Decorrelated: random, grows from the last wait"),
                           int(JitterMode::Decorrelated));
            connect(combo, &QComboBox::currentIndexChanged, this, &PolicyEditor::onFieldEdited);
            row.editor = combo;
            break;
        }
        }
        const QString label = EditorText::tr(field.label);
        row.editor->setObjectName(QStringLiteral("policy_%1").arg(QLatin1String(field.key)));
        row.editor->setToolTip(help);
        row.editor->setAccessibleName(label);
        row.editor->setAccessibleDescription(help);

        if (!bound || bound->unit != RetryPolicy::Bound::Unit::Count)
            row.editor->setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);

        // Below its field, across the whole form: the reason is a sentence.
        row.problem = new QLabel;
        row.problem->setObjectName(
            QStringLiteral("policyProblem_%1").arg(QLatin1String(field.key)));
        row.problem->setWordWrap(true);
        row.problem->setTextFormat(Qt::PlainText);
        QPalette danger = row.problem->palette();
        danger.setColor(QPalette::WindowText,
                        Internal::toneColors(Tone::Danger, palette()).foreground);
        row.problem->setPalette(danger);

        auto *rowLabel = new QLabel(label);
        rowLabel->setBuddy(row.editor);
        rowLabel->setToolTip(help);
        form->addRow(rowLabel, row.editor);
        form->addRow(row.problem);
        form->setRowVisible(row.problem, false);
        m_rows.append(row);
    }
}

void PolicyEditor::refresh()
{
    const QString selected = currentTool();
    {
        const QSignalBlocker blocker(m_toolList);
        m_toolList->clear();
        for (const QString &name : m_policies->tools()) {
            auto *item = new QListWidgetItem(FaultPanel::toolTitle(m_loop, name), m_toolList);
            item->setData(Qt::UserRole, name);
        }
    }
    if (!selectTool(selected) && m_toolList->count() > 0)
        m_toolList->setCurrentRow(0);
    onToolChanged();
}

QStringList PolicyEditor::tools() const
{
    QStringList names;
    for (int row = 0; row < m_toolList->count(); ++row)
        names.append(m_toolList->item(row)->data(Qt::UserRole).toString());
    return names;
}

QString PolicyEditor::currentTool() const
{
    const QListWidgetItem *item = m_toolList->currentItem();
    return item ? item->data(Qt::UserRole).toString() : QString();
}

bool PolicyEditor::selectTool(const QString &toolName)
{
    for (int row = 0; row < m_toolList->count(); ++row) {
        if (m_toolList->item(row)->data(Qt::UserRole).toString() == toolName) {
            m_toolList->setCurrentRow(row);
            return true;
        }
    }
    return false;
}

QWidget *PolicyEditor::fieldEditor(const QString &key) const
{
    for (const FieldRow &row : m_rows) {
        if (QLatin1String(row.field->key) == key)
            return row.editor;
    }
    return nullptr;
}

RetryPolicy PolicyEditor::draft() const
{
    // Starts from the policy in force, so the fields the editor does not show (the jitter
    // seed, what is retried, the call deadline) are kept.
    RetryPolicy policy = m_policies->policy(currentTool());
    for (const FieldRow &row : m_rows) {
        double value = 0;
        if (const auto *spin = qobject_cast<const QSpinBox *>(row.editor))
            value = spin->value();
        else if (const auto *spin = qobject_cast<const QDoubleSpinBox *>(row.editor))
            value = spin->value();
        else if (const auto *combo = qobject_cast<const QComboBox *>(row.editor))
            value = combo->currentData().toInt();
        row.field->set(policy, value);
    }
    return policy;
}

bool PolicyEditor::hasUnappliedEdits(const QString &toolName) const
{
    return m_drafts.contains(toolName);
}

QString PolicyEditor::problemText() const
{
    return draft().problem().value_or(QString());
}

QString PolicyEditor::fieldProblem(const QString &key) const
{
    for (const FieldRow &row : m_rows) {
        if (QLatin1String(row.field->key) == key)
            return row.problem->text();
    }
    return {};
}

QString PolicyEditor::worstCaseText() const
{
    return m_worstCase->text();
}

QString PolicyEditor::stateText() const
{
    return m_stateChip->text();
}

void PolicyEditor::showPolicy(const RetryPolicy &policy)
{
    for (FieldRow &row : m_rows) {
        const QSignalBlocker blocker(row.editor);
        const double value = row.field->get(policy);
        if (auto *spin = qobject_cast<QSpinBox *>(row.editor))
            spin->setValue(int(value));
        else if (auto *spin = qobject_cast<QDoubleSpinBox *>(row.editor))
            spin->setValue(value);
        else if (auto *combo = qobject_cast<QComboBox *>(row.editor))
            combo->setCurrentIndex(std::max(0, combo->findData(int(value))));
    }
}

void PolicyEditor::onToolChanged()
{
    const QString tool = currentTool();
    m_fieldsBox->setEnabled(!tool.isEmpty() && m_policies->lockRefusal().isEmpty());
    m_fieldsBox->setTitle(tool.isEmpty() ? QString() : FaultPanel::toolTitle(m_loop, tool));
    showPolicy(m_drafts.value(tool, m_policies->policy(tool)));
    updateState();
}

void PolicyEditor::onFieldEdited()
{
    const QString tool = currentTool();
    if (tool.isEmpty())
        return;
    const RetryPolicy policy = draft();
    if (policy == m_policies->policy(tool))
        m_drafts.remove(tool);
    else
        m_drafts.insert(tool, policy);
    updateState();
}

void PolicyEditor::onPoliciesChanged()
{
    if (m_applying)
        return;
    // Another part (the fault panel's reset, a scenario) changed a policy: a tool without
    // edits of its own shows what is now in force.
    const QString tool = currentTool();
    if (!m_drafts.contains(tool))
        showPolicy(m_policies->policy(tool));
    updateState();
}

void PolicyEditor::updateState()
{
    const QString tool = currentTool();
    const RetryPolicy policy = draft();
    const std::optional<RetryPolicy::RangeProblem> range = policy.rangeProblem();
    const std::optional<QString> problem = range ? std::optional<QString>(range->text)
                                                 : std::nullopt;
    const bool edited = m_drafts.contains(tool);
    const bool custom = m_policies->toolsWithCustomPolicy().contains(tool);

    for (FieldRow &row : m_rows) {
        const bool here = range && qstrcmp(range->field, row.field->key) == 0;
        row.problem->setText(here ? *problem : QString());
        m_form->setRowVisible(row.problem, here);
    }
    if (problem) {
        m_worstCase->setText(tr("Worst case of one call: \u2014"));
        m_worstCaseDetail->setText(tr("Shown once every value is in range."));
        m_problem->showNotice(tr("Not applied: %1").arg(*problem),
                              tr("%1 keeps the policy it has; your value stays in the field "
                                 "until you change it.")
                                  .arg(FaultPanel::toolLabel(m_loop, tool)),
                              Tone::Danger);
    } else {
        m_problem->clearNotice();
        m_worstCase->setText(
            tr("Worst case of one call: %1").arg(boundText(policy.worstCaseDuration())));
        QString detail = StaffWords::policy(policy);
        if (policy.worstCaseWithServerDelays() > policy.worstCaseDuration()) {
            detail += QLatin1Char('\n')
                + tr("A server's Retry-After never makes it longer: the call is cut at %1.")
                      .arg(boundText(policy.effectiveDeadline()));
        }
        const RetryPolicy fallback = m_policies->defaultPolicy();
        if (policy != fallback) {
            detail += QLatin1Char('\n') + tr("The default: %1").arg(StaffWords::policy(fallback));
        }
        m_worstCaseDetail->setText(detail);
    }

    // Locked by the team's policy: what core says, shown; nothing here changes it.
    const QString locked = m_policies->lockRefusal();
    m_lockRow->setVisible(!locked.isEmpty());
    m_lockWords->setText(locked);
    m_lock->setToolTip(locked);
    m_lock->setAccessibleName(locked);
    const bool team = m_policies->toolsWithTeamPolicy().contains(tool);
    if (edited)
        m_stateChip->setStatus(tr("Edited, not applied"), Tone::Info);
    else if (custom)
        m_stateChip->setStatus(tr("Custom policy"), Tone::Warning);
    else if (team)
        m_stateChip->setStatus(tr("Team policy"), Tone::Neutral);
    else
        m_stateChip->setStatus(tr("Default policy"), Tone::Neutral);
    m_fieldsBox->setEnabled(!tool.isEmpty() && locked.isEmpty());
    m_applyButton->setEnabled(edited && !problem && locked.isEmpty());
    m_resetButton->setEnabled((edited || custom) && locked.isEmpty());
    updateToolList();
}

void PolicyEditor::updateToolList()
{
    const QStringList custom = m_policies->toolsWithCustomPolicy();
    QFont bold = m_toolList->font();
    bold.setBold(true);
    for (int row = 0; row < m_toolList->count(); ++row) {
        QListWidgetItem *item = m_toolList->item(row);
        const QString name = item->data(Qt::UserRole).toString();
        QString text = FaultPanel::toolTitle(m_loop, name);
        if (m_drafts.contains(name))
            text = tr("%1 \u2014 edited, not applied").arg(text);
        else if (custom.contains(name))
            text = tr("%1 \u2014 custom policy").arg(text);
        item->setText(text);
        item->setFont(custom.contains(name) || m_drafts.contains(name) ? bold
                                                                       : m_toolList->font());
    }
}

bool PolicyEditor::apply()
{
    const QString tool = currentTool();
    if (tool.isEmpty())
        return false;
    const RetryPolicy policy = draft();
    QString error;
    m_applying = true;
    const bool applied = m_policies->setPolicy(tool, policy, &error);
    m_applying = false;
    if (!applied) {
        // Refused: the fields keep what was typed, the tool keeps its policy.
        m_problem->showNotice(
            tr("Not applied: %1").arg(error),
            tr("%1 keeps the policy it has.").arg(FaultPanel::toolLabel(m_loop, tool)),
            Tone::Danger);
        return false;
    }
    m_drafts.remove(tool);
    updateState();
    return true;
}

void PolicyEditor::resetToDefault()
{
    const QString tool = currentTool();
    if (tool.isEmpty())
        return;
    m_drafts.remove(tool);
    m_applying = true;
    m_policies->resetPolicy(tool);
    m_applying = false;
    showPolicy(m_policies->policy(tool));
    updateState();
}

} // namespace AgentConsole
