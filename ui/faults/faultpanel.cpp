#include "faultpanel.h"
#include "typedbound.h"

#include "ui/common/existingfiledialog.h"
#include "ui/common/noticebanner.h"
#include "ui/common/staffwords.h"
#include "ui/common/statuschip.h"

#include "core/console/activeconnection.h"
#include "core/console/faultcontrol.h"
#include "core/console/faultfile.h"
#include "core/console/faultsandpolicies.h"
#include "core/console/runtimeoptions.h"
#include "core/console/toolpolicies.h"
#include "core/turn/agentloop.h"

#include <QCheckBox>
#include <QComboBox>
#include <QCoreApplication>
#include <QDir>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QGridLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QJsonArray>
#include <QJsonDocument>
#include <QLabel>
#include <QListWidget>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QScrollArea>
#include <QSpinBox>
#include <QVBoxLayout>

#include <limits>

namespace AgentConsole {

namespace {

// The panel's words for one of core's fields (FaultPlan::fields()), found by its key and by
// whether it is a provider's: core owns the keys, kinds and bounds, the panel only says them.
struct FieldWords
{
    const char *key;
    bool model;
    const char *label;
    const char *help;
};

// In no particular order: the form follows core's.
const FieldWords kFieldWords[] = {
    // Tools and the backend.
    {"latencyMs", false, QT_TRANSLATE_NOOP("AgentConsole::FaultPanel", "Added delay"),
     QT_TRANSLATE_NOOP("AgentConsole::FaultPanel",
                       "Every attempt waits this long before it runs.")},
    {"hang", false, QT_TRANSLATE_NOOP("AgentConsole::FaultPanel", "Hangs (never answers)"),
     QT_TRANSLATE_NOOP("AgentConsole::FaultPanel",
                       "Every attempt waits until it times out or is cancelled.")},
    {"transientFailures", false,
     QT_TRANSLATE_NOOP("AgentConsole::FaultPanel", "Fails the first attempts"),
     QT_TRANSLATE_NOOP("AgentConsole::FaultPanel",
                       "The first N attempts of every call fail with a temporary error; the ones "
                       "after answer.")},
    {"permanentFailure", false,
     QT_TRANSLATE_NOOP("AgentConsole::FaultPanel", "Rejects every request"),
     QT_TRANSLATE_NOOP("AgentConsole::FaultPanel",
                       "The backend refuses every attempt; retrying does not help.")},
    {"permanentStatus", false,
     QT_TRANSLATE_NOOP("AgentConsole::FaultPanel", "Rejected with HTTP status"),
     QT_TRANSLATE_NOOP("AgentConsole::FaultPanel", "The HTTP status the rejection stands for.")},
    {"accessDenied", false, QT_TRANSLATE_NOOP("AgentConsole::FaultPanel", "Access denied"),
     QT_TRANSLATE_NOOP("AgentConsole::FaultPanel",
                       "Every attempt is refused for lack of permission (401/403).")},
    {"notFound", false, QT_TRANSLATE_NOOP("AgentConsole::FaultPanel", "Finds nothing"),
     QT_TRANSLATE_NOOP("AgentConsole::FaultPanel", "Every call answers \u201cnot found\u201d.")},
    {"failureProbability", false, QT_TRANSLATE_NOOP("AgentConsole::FaultPanel", "Fails at random"),
     QT_TRANSLATE_NOOP("AgentConsole::FaultPanel",
                       "Each attempt fails with this probability, drawn from the seed below: the "
                       "same plan fails the same attempts in every run.")},
    {"commitThenLoseAnswer", false,
     QT_TRANSLATE_NOOP("AgentConsole::FaultPanel", "Commits, then loses the answer"),
     QT_TRANSLATE_NOOP("AgentConsole::FaultPanel",
                       "The write is done, then its answer is lost: only the status query by "
                       "idempotency key can tell what happened.")},
    {"internalError", false,
     QT_TRANSLATE_NOOP("AgentConsole::FaultPanel", "Internal error (crash)"),
     QT_TRANSLATE_NOOP("AgentConsole::FaultPanel",
                       "The tool itself fails with an internal error and an incident id.")},
    // Model providers.
    {"latencyMs", true, QT_TRANSLATE_NOOP("AgentConsole::FaultPanel", "Added delay"),
     QT_TRANSLATE_NOOP("AgentConsole::FaultPanel", "Every model call waits this long first.")},
    {"unavailable", true, QT_TRANSLATE_NOOP("AgentConsole::FaultPanel", "Unavailable"),
     QT_TRANSLATE_NOOP("AgentConsole::FaultPanel",
                       "Every model call fails as if the provider were down.")},
    {"rateLimited", true, QT_TRANSLATE_NOOP("AgentConsole::FaultPanel", "Rate-limited attempts"),
     QT_TRANSLATE_NOOP("AgentConsole::FaultPanel",
                       "The first N attempts of every model call answer 429 Too Many Requests.")},
    {"retryAfterMs", true, QT_TRANSLATE_NOOP("AgentConsole::FaultPanel", "Retry-After asked for"),
     QT_TRANSLATE_NOOP("AgentConsole::FaultPanel", "The wait the 429 answers ask for.")},
    {"quotaExhausted", true, QT_TRANSLATE_NOOP("AgentConsole::FaultPanel", "Quota exhausted"),
     QT_TRANSLATE_NOOP("AgentConsole::FaultPanel",
                       "The provider refuses every call: the account's quota is used up.")},
    {"malformedResponse", true,
     QT_TRANSLATE_NOOP("AgentConsole::FaultPanel", "Malformed response"),
     QT_TRANSLATE_NOOP("AgentConsole::FaultPanel",
                       "Every response is not what the API promises.")},
    {"streamStall", true, QT_TRANSLATE_NOOP("AgentConsole::FaultPanel", "Stream stalls"),
     QT_TRANSLATE_NOOP("AgentConsole::FaultPanel",
                       "A streamed answer stops halfway and sends nothing more.")},
    {"malformedToolArguments", true,
     QT_TRANSLATE_NOOP("AgentConsole::FaultPanel", "Tool arguments not JSON"),
     QT_TRANSLATE_NOOP(
         "AgentConsole::FaultPanel",
         "Every response that calls tools gives them arguments that cannot be read.")},
    {"unknownTool", true, QT_TRANSLATE_NOOP("AgentConsole::FaultPanel", "Calls an unknown tool"),
     QT_TRANSLATE_NOOP("AgentConsole::FaultPanel",
                       "Every response that calls tools names one the console does not have.")},
    {"toolCallBurst", true, QT_TRANSLATE_NOOP("AgentConsole::FaultPanel", "Repeats a tool call"),
     QT_TRANSLATE_NOOP("AgentConsole::FaultPanel",
                       "A response that calls tools repeats its first call to N calls; over the "
                       "per-message limit the extra calls are not run.")},
};

// A rejection's HTTP status in words; a status core adds without words here shows its number.
struct StatusWords
{
    int status;
    const char *words;
};

const StatusWords kStatusWords[] = {
    {400, QT_TRANSLATE_NOOP("AgentConsole::FaultPanel", "400 Bad request")},
    {404, QT_TRANSLATE_NOOP("AgentConsole::FaultPanel", "404 Not found")},
    {409, QT_TRANSLATE_NOOP("AgentConsole::FaultPanel", "409 Conflict")},
    {422, QT_TRANSLATE_NOOP("AgentConsole::FaultPanel", "422 Unprocessable")},
};

using Kind = FaultField::Kind;
using Scope = FaultField::Scope;

// The FaultPanel's words outside its members, in its context (lupdate reads PanelText::tr).
struct PanelText
{
    Q_DECLARE_TR_FUNCTIONS(AgentConsole::FaultPanel)
};

const FieldWords *wordsFor(const FaultField &field)
{
    const bool model = field.scope == Scope::Model;
    for (const FieldWords &words : kFieldWords) {
        if (words.model == model && qstrcmp(words.key, field.key) == 0)
            return &words;
    }
    return nullptr;
}

QString statusWords(int status)
{
    for (const StatusWords &words : kStatusWords) {
        if (words.status == status)
            return PanelText::tr(words.words);
    }
    return QString::number(status);
}

bool appliesTo(const FaultField &field, bool model, bool writes)
{
    switch (field.scope) {
    case Scope::Tool:
        return !model;
    case Scope::WriteTool:
        return !model && writes;
    case Scope::Model:
        return model;
    }
    return false;
}

bool isDefault(const FaultField &field, const QJsonValue &value)
{
    if (value.isUndefined() || value.isNull())
        return true;
    if (field.kind == Kind::Flag)
        return !value.toBool();
    return value.toDouble() == field.defaultValue;
}

QJsonObject objectAt(const QJsonObject &plan, const QStringList &path)
{
    QJsonObject object = plan;
    for (const QString &key : path)
        object = object.value(key).toObject();
    return object;
}

// Puts `value` at `path`, dropping objects that become empty: an empty target is no fault.
QJsonObject withObjectAt(QJsonObject plan, const QStringList &path, const QJsonObject &value)
{
    if (path.isEmpty())
        return value;
    const QString key = path.first();
    const QJsonObject inner = withObjectAt(plan.value(key).toObject(), path.mid(1), value);
    if (inner.isEmpty())
        plan.remove(key);
    else
        plan.insert(key, inner);
    return plan;
}

} // namespace

FaultPanel::FaultPanel(FaultControl *faults, ToolPolicies *policies, ActiveConnection *connection,
                       QWidget *parent)
    : QDockWidget(tr("Faults"), parent)
    , m_faults(faults)
    , m_policies(policies)
    , m_connection(connection)
{
    Q_ASSERT(faults && policies && connection);
    setObjectName(QStringLiteral("faultPanel"));
    setAllowedAreas(Qt::LeftDockWidgetArea | Qt::RightDockWidgetArea);

    m_stateChip = new StatusChip;
    m_stateChip->setObjectName(QStringLiteral("faultPanelState"));
    m_loadButton = new QPushButton(tr("&Load fault file…"));
    m_loadButton->setObjectName(QStringLiteral("loadFaultFileButton"));
    m_loadButton->setToolTip(tr("Put a fault plan from a file in force (resources/faults)"));
    m_clearButton = new QPushButton(tr("&Clear all faults"));
    m_clearButton->setObjectName(QStringLiteral("clearAllFaultsButton"));
    m_clearButton->setToolTip(tr("Every tool and the model behave normally again, from the "
                                 "next attempt"));
    auto *buttons = new QHBoxLayout;
    buttons->addWidget(m_stateChip);
    buttons->addStretch(1);
    buttons->addWidget(m_loadButton);
    buttons->addWidget(m_clearButton);

    m_description = new QLabel;
    m_description->setObjectName(QStringLiteral("faultPlanDescription"));
    m_description->setWordWrap(true);
    m_description->setTextFormat(Qt::PlainText);

    m_notice = new NoticeBanner;
    m_notice->setObjectName(QStringLiteral("faultPanelNotice"));

    m_policyNote = new QLabel;
    m_policyNote->setObjectName(QStringLiteral("customPolicyNote"));
    m_policyNote->setWordWrap(true);
    m_resetPoliciesButton = new QPushButton(tr("&Reset policies"));
    m_resetPoliciesButton->setObjectName(QStringLiteral("resetPoliciesButton"));
    m_resetPoliciesButton->setToolTip(tr("Every tool gets the default retry policy again"));
    auto *policyRow = new QHBoxLayout;
    policyRow->addWidget(m_policyNote, 1);
    policyRow->addWidget(m_resetPoliciesButton);

    m_targetList = new QListWidget;
    m_targetList->setObjectName(QStringLiteral("faultTargets"));
    m_targetList->setAccessibleName(tr("What to break"));
    m_targetList->setSizeAdjustPolicy(QAbstractScrollArea::AdjustToContents);
    m_targetList->setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Maximum);
    setFocusProxy(m_targetList); // opened from the keyboard, the panel starts at its list
    auto *targetLabel = new QLabel(tr("&What to break:"));
    targetLabel->setBuddy(m_targetList);

    m_fieldsBox = new QGroupBox;
    // A grid, not a QFormLayout: Qt 6.4's QFormLayout writes past its own buffers when a
    // wrapped row (a refusal) is shown above rows hidden with setRowVisible (another target's
    // fields), which valgrind showed and tst_faultpanel crashed on. A grid leaves a row whose
    // widgets are hidden out, spacing and all.
    m_form = new QGridLayout(m_fieldsBox);
    m_form->setColumnStretch(1, 1);
    buildForm(m_form);

    m_seed = new QSpinBox;
    m_seed->setObjectName(QStringLiteral("faultSeed"));
    m_seed->setRange(0, std::numeric_limits<int>::max());
    m_seed->setKeyboardTracking(false);
    m_seed->setToolTip(tr("Random failures are drawn from this seed: the same seed fails the "
                          "same attempts in every run."));
    auto *seedRow = new QFormLayout;
    seedRow->addRow(tr("&Seed for random failures:"), m_seed);

    // support-sim's own faults (docs/SUPPORT-SIM.md), sent to it when the backend is REST.
    auto *simBox = new QGroupBox(tr("support-sim faults (REST backend)"));
    m_simEdit = new QPlainTextEdit;
    m_simEdit->setObjectName(QStringLiteral("simFaults"));
    m_simEdit->setAccessibleName(tr("support-sim faults, as JSON"));
    m_simEdit->setToolTip(tr("The body of support-sim's PUT /sim/faults, e.g. "
                             "{\"routes\": {\"logistics\": {\"status\": 503, \"times\": 2}}}. "
                             "Empty resets the sim's faults."));
    m_simEdit->setTabChangesFocus(true);
    m_simEdit->setPlaceholderText(tr("{\"routes\": {\"logistics\": {\"status\": 503}}}"));
    m_simEdit->setFixedHeight(m_simEdit->fontMetrics().lineSpacing() * 4 + 12);
    m_simApply = new QPushButton(tr("Send to support-&sim"));
    m_simApply->setObjectName(QStringLiteral("applySimFaultsButton"));
    m_simProblem = new QLabel;
    m_simProblem->setObjectName(QStringLiteral("simFaultsProblem"));
    m_simProblem->setWordWrap(true);
    m_simProblem->setTextFormat(Qt::PlainText);
    m_simProblem->setVisible(false);
    QPalette danger = m_simProblem->palette();
    danger.setColor(QPalette::WindowText,
                    Internal::toneColors(Tone::Danger, palette()).foreground);
    m_simProblem->setPalette(danger);
    auto *simLayout = new QVBoxLayout(simBox);
    simLayout->addWidget(m_simEdit);
    simLayout->addWidget(m_simProblem);
    simLayout->addWidget(m_simApply, 0, Qt::AlignRight);

    auto *content = new QWidget;
    auto *layout = new QVBoxLayout(content);
    layout->addLayout(buttons);
    layout->addWidget(m_description);
    layout->addWidget(m_notice);
    layout->addLayout(policyRow);
    layout->addWidget(targetLabel);
    layout->addWidget(m_targetList);
    layout->addWidget(m_fieldsBox);
    layout->addLayout(seedRow);
    layout->addWidget(simBox);
    layout->addStretch(1);

    // Wide enough for a label, its field and "5000 attempts" side by side.
    content->setMinimumWidth(fontMetrics().averageCharWidth() * 64);
    auto *scroll = new QScrollArea;
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    scroll->setWidget(content);
    setWidget(scroll);

    connect(m_loadButton, &QPushButton::clicked, this, &FaultPanel::chooseFaultFile);
    connect(m_clearButton, &QPushButton::clicked, this, &FaultPanel::clearAllFaults);
    connect(m_resetPoliciesButton, &QPushButton::clicked, m_policies,
            &ToolPolicies::resetPolicies);
    connect(m_targetList, &QListWidget::currentRowChanged, this, &FaultPanel::onTargetChanged);
    connect(m_seed, &QSpinBox::valueChanged, this, &FaultPanel::onSeedEdited);
    connect(m_simApply, &QPushButton::clicked, this, &FaultPanel::applySimFaults);
    // The sim's answer comes later: a refusal is said here, the rest of the plan is in force.
    connect(m_faults, &FaultControl::faultsRefused, this, [this](const QString &reason) {
        m_notice->showNotice(tr("Part of the plan is not in force"), reason, Tone::Warning);
    });
    connect(m_faults, &FaultControl::simFaultsApplied, this, [this] {
        if (m_notice->tone() == Tone::Warning)
            m_notice->clearNotice();
    });
    connect(m_faults, &FaultControl::faultsChanged, this, &FaultPanel::onFaultsChanged);
    connect(m_policies, &ToolPolicies::changed, this, &FaultPanel::updateSummary);
    connect(m_connection, &ActiveConnection::settingsChanged, this, &FaultPanel::refresh);
    refresh();
}

void FaultPanel::onRuntimeReady(const AgentLoop *loop)
{
    m_loop = loop;
    refresh();
}

FaultPanel::~FaultPanel() = default;

void FaultPanel::buildForm(QGridLayout *form)
{
    m_rows.reserve(FaultPlan::fields().size());
    for (const FaultField &field : FaultPlan::fields()) {
        // A field without words is left out: fieldsWithoutWords() names it, and a suite fails.
        const FieldWords *words = wordsFor(field);
        if (!words)
            continue;
        FieldRow row;
        row.field = &field;
        const QString label = PanelText::tr(words->label);
        const QString help = PanelText::tr(words->help);
        switch (field.kind) {
        case Kind::Flag: {
            auto *box = new QCheckBox(tr("on"));
            connect(box, &QCheckBox::toggled, this,
                    [this, index = m_rows.size()] { onFieldEdited(&m_rows[index]); });
            row.editor = box;
            break;
        }
        case Kind::Millis:
        case Kind::Count: {
            auto *spin = new QSpinBox;
            spin->setRange(int(std::min(0.0, field.min)), Internal::typedMaximum(field.max));
            spin->setKeyboardTracking(false); // applied on Enter or leaving, not per digit
            if (field.kind == Kind::Millis) {
                spin->setSuffix(tr(" ms"));
                spin->setSingleStep(100);
            } else {
                spin->setSuffix(tr(" attempts"));
            }
            if (field.defaultValue == 0)
                spin->setSpecialValueText(tr("off"));
            connect(spin, &QSpinBox::valueChanged, this,
                    [this, index = m_rows.size()] { onFieldEdited(&m_rows[index]); });
            row.editor = spin;
            break;
        }
        case Kind::Probability: {
            auto *spin = new QDoubleSpinBox;
            spin->setRange(field.min, field.max);
            spin->setDecimals(2);
            spin->setSingleStep(0.05);
            spin->setKeyboardTracking(false);
            spin->setSpecialValueText(tr("off"));
            connect(spin, &QDoubleSpinBox::valueChanged, this,
                    [this, index = m_rows.size()] { onFieldEdited(&m_rows[index]); });
            row.editor = spin;
            break;
        }
        case Kind::HttpStatus: {
            auto *combo = new QComboBox;
            for (const int status : field.choices)
                combo->addItem(statusWords(status), status);
            connect(combo, &QComboBox::currentIndexChanged, this,
                    [this, index = m_rows.size()] { onFieldEdited(&m_rows[index]); });
            row.editor = combo;
            break;
        }
        }
        row.editor->setObjectName(QStringLiteral("fault_%1").arg(QLatin1String(field.key)));
        row.editor->setToolTip(help);
        row.editor->setAccessibleName(label);
        row.editor->setAccessibleDescription(help);

        if (field.kind != Kind::Flag)
            row.editor->setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);

        // Below its field, across the whole panel: a refusal can be a long sentence.
        row.problem = new QLabel;
        row.problem->setWordWrap(true);
        row.problem->setTextFormat(Qt::PlainText);
        QPalette danger = row.problem->palette();
        danger.setColor(QPalette::WindowText,
                        Internal::toneColors(Tone::Danger, palette()).foreground);
        row.problem->setPalette(danger);

        row.label = new QLabel(label);
        row.label->setBuddy(row.editor);
        row.label->setToolTip(help);
        const int at = 2 * int(m_rows.size());
        form->addWidget(row.label, at, 0);
        // A flag keeps its size, as a form's field would; the rest grow with the panel.
        form->addWidget(row.editor, at, 1,
                        field.kind == Kind::Flag ? Qt::AlignLeft : Qt::Alignment());
        form->addWidget(row.problem, at + 1, 0, 1, 2);
        row.problem->hide();
        m_rows.append(row);
    }
}

QString FaultPanel::toolLabel(const AgentLoop *loop, const QString &toolName)
{
    // The descriptors are the one home of a tool's words (core/support, or an MCP server's
    // title): the window spells no tool name of its own.
    const QString title = loop ? loop->toolLabels(toolName).title : QString();
    if (title.isEmpty())
        return toolName;
    return QCoreApplication::translate(ToolLabels::TranslationContext, title.toUtf8().constData());
}

QString FaultPanel::toolTitle(const AgentLoop *loop, const QString &toolName)
{
    const QString label = toolLabel(loop, toolName);
    return label == toolName ? label : tr("%1 (%2)").arg(label, toolName);
}

QStringList FaultPanel::fieldsWithoutWords()
{
    const auto name = [](bool model, const char *key) {
        return (model ? QStringLiteral("model:") : QStringLiteral("tool:")) + QLatin1String(key);
    };
    QStringList unmatched;
    QList<const FieldWords *> used;
    for (const FaultField &field : FaultPlan::fields()) {
        if (const FieldWords *words = wordsFor(field))
            used.append(words);
        else
            unmatched.append(QStringLiteral("no words: ")
                             + name(field.scope == Scope::Model, field.key));
    }
    for (const FieldWords &words : kFieldWords) {
        if (!used.contains(&words))
            unmatched.append(QStringLiteral("no field: ") + name(words.model, words.key));
    }
    return unmatched;
}

void FaultPanel::refresh()
{
    const QString selected = currentTarget();
    m_targets.clear();
    const KnownTools known = m_faults->knownTools();
    for (const QString &name : known.names) {
        Target tool;
        tool.id = QStringLiteral("tool:") + name;
        tool.label = toolTitle(m_loop, name);
        tool.path = QStringList{QStringLiteral("tools"), name};
        tool.tool = name;
        tool.writes = known.writes.contains(name);
        m_targets.append(tool);
    }
    Target backend;
    backend.id = QStringLiteral("backend");
    backend.label = tr("Backend (every tool without faults of its own)");
    backend.path = QStringList{QStringLiteral("backend")};
    backend.writes = true; // its lost answer applies to the writes without an entry of their own
    m_targets.append(backend);
    Target primary;
    primary.id = QStringLiteral("model:primary");
    const QString modelName = m_connection->modelName();
    primary.label = modelName.isEmpty() ? tr("Model: primary provider")
                                        : tr("Model: primary provider (%1)").arg(modelName);
    primary.path = QStringList{QStringLiteral("models"), QStringLiteral("primary")};
    primary.model = true;
    m_targets.append(primary);
    Target secondary;
    secondary.id = QStringLiteral("model:secondary");
    // Its faults wait for one to be configured (Settings > Model and backend).
    const ModelOptions &model = m_connection->model();
    secondary.label = !model.hasSecondary() ? tr("Model: secondary provider (none configured)")
        : model.secondaryModel.isEmpty()
        ? tr("Model: secondary provider")
        : tr("Model: secondary provider (%1)").arg(model.secondaryModel);
    secondary.path = QStringList{QStringLiteral("models"), QStringLiteral("secondary")};
    secondary.model = true;
    secondary.secondary = true;
    m_targets.append(secondary);

    m_plan = m_faults->plan().toJson();
    {
        const QSignalBlocker blocker(m_targetList);
        m_targetList->clear();
        for (const Target &target : std::as_const(m_targets)) {
            auto *item = new QListWidgetItem(target.label, m_targetList);
            item->setData(Qt::UserRole, target.id);
        }
    }
    if (!selectTarget(selected) && !m_targets.isEmpty())
        m_targetList->setCurrentRow(0);
    onTargetChanged();
    showSimSection();
    updateTargetList();
    updateSummary();
}

QStringList FaultPanel::targets() const
{
    QStringList ids;
    for (const Target &target : m_targets)
        ids.append(target.id);
    return ids;
}

QString FaultPanel::currentTarget() const
{
    const QListWidgetItem *item = m_targetList->currentItem();
    return item ? item->data(Qt::UserRole).toString() : QString();
}

bool FaultPanel::selectTarget(const QString &target)
{
    for (int row = 0; row < m_targetList->count(); ++row) {
        if (m_targetList->item(row)->data(Qt::UserRole).toString() == target) {
            m_targetList->setCurrentRow(row);
            return true;
        }
    }
    return false;
}

const FaultPanel::Target *FaultPanel::target(const QString &id) const
{
    for (const Target &candidate : m_targets) {
        if (candidate.id == id)
            return &candidate;
    }
    return nullptr;
}

QWidget *FaultPanel::fieldEditor(const QString &key) const
{
    for (const FieldRow &row : m_rows) {
        if (!!row.shown && QLatin1String(row.field->key) == key)
            return row.editor;
    }
    return nullptr;
}

QString FaultPanel::fieldProblem(const QString &key) const
{
    for (const FieldRow &row : m_rows) {
        if (!!row.shown && QLatin1String(row.field->key) == key)
            return row.problem->text();
    }
    return {};
}

QString FaultPanel::noticeText() const
{
    return m_notice->isHidden() ? QString() : m_notice->text();
}

void FaultPanel::showProblem(FieldRow &row, const QString &problem)
{
    row.problem->setText(problem);
    row.problem->setVisible(row.shown && !problem.isEmpty());
}

void FaultPanel::onTargetChanged()
{
    const Target *current = target(currentTarget());
    m_fieldsBox->setEnabled(current != nullptr);
    m_fieldsBox->setTitle(current ? current->label : QString());
    for (FieldRow &row : m_rows) {
        const bool shown = current && appliesTo(*row.field, current->model, current->writes);
        row.shown = shown;
        row.label->setVisible(shown);
        row.editor->setVisible(shown);
        showProblem(row, QString());
    }
    showTargetValues();
}

// Shows the plan's values for the selected target; a field the plan leaves out shows its
// default.
void FaultPanel::showTargetValues()
{
    const Target *current = target(currentTarget());
    const QJsonObject object = current ? objectAt(m_plan, current->path) : QJsonObject();
    for (FieldRow &row : m_rows) {
        if (!row.shown)
            continue;
        const QJsonValue value = object.value(QLatin1String(row.field->key));
        const QSignalBlocker blocker(row.editor);
        switch (row.field->kind) {
        case Kind::Flag:
            static_cast<QCheckBox *>(row.editor)->setChecked(value.toBool());
            break;
        case Kind::Millis:
        case Kind::Count:
            static_cast<QSpinBox *>(row.editor)
                ->setValue(value.toInt(int(row.field->defaultValue)));
            break;
        case Kind::Probability:
            static_cast<QDoubleSpinBox *>(row.editor)->setValue(value.toDouble(0.0));
            break;
        case Kind::HttpStatus: {
            auto *combo = static_cast<QComboBox *>(row.editor);
            combo->setCurrentIndex(
                std::max(0, combo->findData(value.toInt(int(row.field->defaultValue)))));
            break;
        }
        }
    }
    // A qualifying field only means something while its fault is on.
    for (FieldRow &row : m_rows) {
        if (!row.field->qualifies || !row.shown)
            continue;
        row.editor->setEnabled(object.contains(QLatin1String(row.field->qualifies)));
    }
    const QSignalBlocker blocker(m_seed);
    m_seed->setValue(int(std::min<double>(m_plan.value(QLatin1String("seed")).toDouble(),
                                          std::numeric_limits<int>::max())));
}

namespace {

QJsonValue editorValue(const FaultField &field, const QWidget *editor)
{
    switch (field.kind) {
    case Kind::Flag:
        return static_cast<const QCheckBox *>(editor)->isChecked();
    case Kind::Millis:
    case Kind::Count:
        return static_cast<const QSpinBox *>(editor)->value();
    case Kind::Probability:
        return static_cast<const QDoubleSpinBox *>(editor)->value();
    case Kind::HttpStatus:
        return static_cast<const QComboBox *>(editor)->currentData().toInt();
    }
    return {};
}

} // namespace

void FaultPanel::onFieldEdited(FieldRow *row)
{
    const Target *current = target(currentTarget());
    if (!current)
        return;
    QJsonObject object = objectAt(m_plan, current->path);
    const auto put = [&object](const FaultField &field, const QJsonValue &value, bool on) {
        if (on && !isDefault(field, value))
            object.insert(QLatin1String(field.key), value);
        else
            object.remove(QLatin1String(field.key));
    };
    const bool qualifiedOn = !row->field->qualifies
        || object.contains(QLatin1String(row->field->qualifies));
    put(*row->field, editorValue(*row->field, row->editor), qualifiedOn);
    // The fields that qualify this one follow it: written while it is on, dropped when off.
    const bool on = object.contains(QLatin1String(row->field->key));
    for (FieldRow &other : m_rows) {
        if (!other.shown || !other.field->qualifies
            || QLatin1String(other.field->qualifies) != QLatin1String(row->field->key))
            continue;
        put(*other.field, editorValue(*other.field, other.editor), on);
        other.editor->setEnabled(on);
    }
    QString error;
    if (!applyPlan(withObjectAt(m_plan, current->path, object), &error))
        showProblem(*row, tr("Not applied: %1").arg(error));
}

void FaultPanel::onSeedEdited()
{
    QJsonObject candidate = m_plan;
    if (m_seed->value() > 0)
        candidate.insert(QLatin1String("seed"), m_seed->value());
    else
        candidate.remove(QLatin1String("seed"));
    QString error;
    if (!applyPlan(candidate, &error))
        m_notice->showNotice(tr("Not applied"), error, Tone::Danger);
}

// The sim's section as typed: empty sends the sim's reset. Core checks its shape and key
// names; the sim judges its values and says so through faultsRefused().
void FaultPanel::applySimFaults()
{
    const QString text = m_simEdit->toPlainText().trimmed();
    QJsonObject candidate = m_plan;
    if (text.isEmpty()) {
        candidate.remove(QLatin1String("sim"));
    } else {
        QJsonParseError parseError;
        const QJsonDocument document = QJsonDocument::fromJson(text.toUtf8(), &parseError);
        if (parseError.error != QJsonParseError::NoError || !document.isObject()) {
            m_simProblem->setText(tr("Not applied: not a JSON object (%1)")
                                      .arg(parseError.error != QJsonParseError::NoError
                                               ? parseError.errorString()
                                               : tr("top level")));
            m_simProblem->setVisible(true);
            return;
        }
        candidate.insert(QLatin1String("sim"), document.object());
    }
    QString error;
    if (!applyPlan(candidate, &error)) {
        m_simProblem->setText(tr("Not applied: %1").arg(error));
        m_simProblem->setVisible(true);
    }
}

QString FaultPanel::simProblem() const
{
    return m_simProblem->isHidden() ? QString() : m_simProblem->text();
}

void FaultPanel::showSimSection()
{
    const QJsonObject sim = m_plan.value(QLatin1String("sim")).toObject();
    m_simEdit->setPlainText(
        sim.isEmpty() ? QString()
                      : QString::fromUtf8(QJsonDocument(sim).toJson(QJsonDocument::Indented)));
    m_simProblem->clear();
    m_simProblem->setVisible(false);
}

// Refused (false, with core's reason): the field keeps what was typed and the plan in force is
// unchanged; the caller shows the reason beside the field.
bool FaultPanel::applyPlan(const QJsonObject &candidate, QString *error)
{
    const std::optional<FaultPlan> plan = FaultPlan::fromJson(
        QJsonDocument(candidate).toJson(QJsonDocument::Compact), error, m_faults->knownTools());
    if (!plan)
        return false;
    for (FieldRow &each : m_rows)
        showProblem(each, QString());
    m_notice->clearNotice();
    m_simProblem->setVisible(false);
    m_plan = candidate;
    m_applying = true;
    m_faults->setPlan(*plan);
    m_applying = false;
    updateTargetList();
    updateSummary();
    return true;
}

void FaultPanel::onFaultsChanged()
{
    if (m_applying)
        return; // our own change: m_plan is what was set
    m_plan = m_faults->plan().toJson();
    onTargetChanged();
    showSimSection();
    updateTargetList();
    updateSummary();
}

void FaultPanel::updateTargetList()
{
    const FaultPlan plan = m_faults->plan();
    const auto faultCount = [&plan](const Target &target) {
        if (target.model) {
            const std::optional<ModelFault> fault = plan.modelFault(
                target.secondary ? FaultPlan::Provider::Secondary : FaultPlan::Provider::Primary);
            return fault ? fault->activeFaultCount() : 0;
        }
        const std::optional<ToolFault> fault = target.tool.isEmpty() ? plan.backendFault()
                                                                     : plan.faultFor(target.tool);
        return fault ? fault->activeFaultCount() : 0;
    };
    QFont bold = m_targetList->font();
    bold.setBold(true);
    for (int index = 0; index < m_targetList->count() && index < m_targets.size(); ++index) {
        const Target &each = m_targets.at(index);
        const int count = faultCount(each);
        QListWidgetItem *item = m_targetList->item(index);
        item->setText(count == 0 ? each.label
                                 : tr("%1 \u2014 %n fault(s)", nullptr, count).arg(each.label));
        item->setFont(count > 0 ? bold : m_targetList->font());
    }
}

void FaultPanel::updateSummary()
{
    const int count = m_faults->plan().activeFaultCount();
    if (count == 0) {
        m_stateChip->setStatus(tr("No faults"), Tone::Success);
    } else {
        m_stateChip->setStatus(tr("%n fault(s) active", nullptr, count), Tone::Warning);
    }
    m_clearButton->setEnabled(count > 0 || !m_plan.isEmpty());
    const QString description = m_plan.value(QLatin1String("description")).toString();
    m_description->setText(StaffWords::faultPlanDescription(description));
    m_description->setVisible(!description.isEmpty());

    const QStringList custom = m_policies->toolsWithCustomPolicy();
    QStringList labels;
    for (const QString &name : custom)
        labels.append(toolLabel(m_loop, name));
    m_policyNote->setText(
        custom.size() == 1
            ? tr("Custom retry policy: %1").arg(labels.first())
            : tr("Custom retry policies: %1").arg(labels.join(QStringLiteral(", "))));
    m_policyNote->setVisible(!custom.isEmpty());
    m_resetPoliciesButton->setVisible(!custom.isEmpty());
}

// The dialog is opened, never exec()'d: no event loop of its own inside this panel's slot.
void FaultPanel::chooseFaultFile()
{
    QString directory = QDir(QCoreApplication::applicationDirPath())
                            .absoluteFilePath(QStringLiteral("../resources/faults"));
    if (!QDir(directory).exists())
        directory = QDir::current().absoluteFilePath(QStringLiteral("resources/faults"));
    QFileDialog *dialog = openExistingFileDialog(this, tr("Load a fault file"), directory,
                                                 tr("Fault plans (*.json)"));
    connect(dialog, &QFileDialog::fileSelected, this, &FaultPanel::loadFaultFile);
}

void FaultPanel::loadFaultFile(const QString &path)
{
    const auto answered = [this](const FileRead<FaultPlan> &read) {
        const QString notLoaded = tr("The fault file was not loaded");
        if (!read.value) {
            m_notice->showNotice(notLoaded, read.error, Tone::Danger);
            Q_EMIT faultFileAnswered(false);
            return;
        }
        // A scenario that started while the file was read holds the faults until it ends.
        if (!widget()->isEnabled()) {
            m_notice->showNotice(notLoaded,
                                 tr("A scenario is running; its faults hold until it ends."),
                                 Tone::Warning);
            Q_EMIT faultFileAnswered(false);
            return;
        }
        m_notice->clearNotice();
        m_faults->setPlan(*read.value); // onFaultsChanged() reads it back, and describes it
        Q_EMIT faultFileAnswered(true);
    };
    await(readFaultFile(path, m_faults->knownTools()), this, answered);
}

void FaultPanel::clearAllFaults()
{
    m_notice->clearNotice();
    m_faults->clear();
}

} // namespace AgentConsole
