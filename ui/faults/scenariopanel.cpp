#include "scenariopanel.h"

#include "scenarioverdicttext.h"

#include "ui/common/existingfiledialog.h"
#include "ui/common/noticebanner.h"
#include "ui/common/statuschip.h"

#include "ui/common/staffwords.h"

#include "core/console/faultcontrol.h"
#include "core/console/faultsandpolicies.h"
#include "core/scenarios/scenariofile.h"
#include "core/scenarios/scenariorunner.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QLabel>
#include <QListWidget>
#include <QScrollArea>
#include <QScrollBar>
#include <QPushButton>
#include <QVBoxLayout>

#include <algorithm>

namespace AgentConsole {

class ScenarioPanel::Private
{
public:
    QList<Scenario> catalogue;
    ScenarioRunner *runner = nullptr;
    QString running; // the title of the scenario under way
    int turnCount = 0;
    std::optional<bool> lastMatched;
};

ScenarioPanel::ScenarioPanel(ScenarioRunner *runner, FaultControl *faults, QWidget *parent)
    : QDockWidget(tr("Scenarios"), parent)
    , d(std::make_unique<Private>())
    , m_faults(faults)
{
    Q_ASSERT(runner && faults);
    setObjectName(QStringLiteral("scenarioPanel"));
    setAllowedAreas(Qt::LeftDockWidgetArea | Qt::RightDockWidgetArea);

    m_list = new QListWidget;
    m_list->setObjectName(QStringLiteral("scenarioList"));
    m_list->setAccessibleName(tr("Scenarios"));
    m_list->setAlternatingRowColors(true);
    // Six titles stay readable however short the dock is (the panel scrolls instead).
    m_list->setMinimumHeight(m_list->fontMetrics().height() * 6 + 2 * m_list->frameWidth());
    // The selected scenario's sentence, under the list of titles.
    m_summary = new QLabel;
    m_summary->setObjectName(QStringLiteral("scenarioSummary"));
    m_summary->setWordWrap(true);
    m_summary->setTextFormat(Qt::PlainText);
    setFocusProxy(m_list); // opened from the keyboard, the panel starts at its list
    auto *listLabel = new QLabel(tr("&Scenario (Enter runs it):"));
    listLabel->setBuddy(m_list);

    m_runButton = new QPushButton(tr("&Run"));
    m_runButton->setObjectName(QStringLiteral("runScenarioButton"));
    m_runButton->setToolTip(tr("Sets the scenario's faults and policies, asks its questions "
                               "and compares what happens with what it expects"));
    m_openButton = new QPushButton(tr("&Open scenario file…"));
    m_openButton->setObjectName(QStringLiteral("openScenarioFileButton"));
    m_stopButton = new QPushButton(tr("S&top"));
    m_stopButton->setObjectName(QStringLiteral("stopScenarioButton"));
    m_stopButton->setToolTip(tr("Cancels the running turn; the scenario ends as not matched"));
    auto *buttons = new QHBoxLayout;
    buttons->addWidget(m_runButton);
    buttons->addWidget(m_stopButton);
    buttons->addStretch(1);
    buttons->addWidget(m_openButton);

    m_stateChip = new StatusChip;
    m_stateChip->setObjectName(QStringLiteral("scenarioState"));
    m_stateChip->setVisible(false);
    m_heading = new QLabel;
    m_heading->setObjectName(QStringLiteral("scenarioHeading"));
    m_heading->setWordWrap(true);
    m_heading->setTextFormat(Qt::PlainText);
    QFont bold = m_heading->font();
    bold.setWeight(QFont::DemiBold);
    m_heading->setFont(bold);
    auto *state = new QHBoxLayout;
    state->addWidget(m_stateChip, 0, Qt::AlignTop);
    state->addWidget(m_heading, 1);
    m_progress = new QLabel;
    m_progress->setObjectName(QStringLiteral("scenarioProgress"));
    m_progress->setWordWrap(true);
    m_progress->setTextFormat(Qt::PlainText);
    m_result = new QLabel;
    m_result->setObjectName(QStringLiteral("scenarioResult"));
    m_result->setWordWrap(true);
    m_result->setTextFormat(Qt::PlainText);
    m_result->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_notice = new NoticeBanner;
    m_notice->setObjectName(QStringLiteral("scenarioNotice"));

    auto *content = new QWidget;
    content->setMinimumWidth(fontMetrics().averageCharWidth() * 56);
    auto *layout = new QVBoxLayout(content);
    layout->addWidget(listLabel);
    layout->addWidget(m_list, 1);
    layout->addWidget(m_summary);
    layout->addLayout(buttons);
    layout->addWidget(m_notice);
    layout->addLayout(state);
    layout->addWidget(m_progress);
    layout->addWidget(m_result);
    layout->addStretch(0);
    // Stacked under the diagnostics dock the panel can be short: it scrolls rather than
    // squeezing its labels over each other.
    auto *scroll = new QScrollArea;
    scroll->setObjectName(QStringLiteral("scenarioScroll"));
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    scroll->setWidget(content);
    // As wide as the content needs: it scrolls only vertically.
    scroll->setMinimumWidth(content->minimumWidth()
                            + scroll->verticalScrollBar()->sizeHint().width());
    setWidget(scroll);

    QStringList problems;
    d->catalogue = ScenarioCatalogue::builtIn(&problems);
    for (const Scenario &scenario : std::as_const(d->catalogue))
        addItem(scenario);
    if (m_list->count() > 0)
        m_list->setCurrentRow(0);
    if (!problems.isEmpty()) {
        m_notice->showNotice(tr("Some shipped scenarios cannot be used"),
                             problems.join(QLatin1Char('\n')), Tone::Warning);
    }

    d->runner = runner;
    d->runner->setParent(this);
    connect(d->runner, &ScenarioRunner::turnStarted, this, &ScenarioPanel::onTurnStarted);
    connect(d->runner, &ScenarioRunner::finished, this, &ScenarioPanel::onFinished);
    connect(m_runButton, &QPushButton::clicked, this, &ScenarioPanel::runSelected);
    connect(m_list, &QListWidget::itemActivated, this, &ScenarioPanel::runSelected);
    connect(m_list, &QListWidget::currentRowChanged, this, &ScenarioPanel::showSummary);
    showSummary(); // the first row was selected before the connection
    connect(m_openButton, &QPushButton::clicked, this, &ScenarioPanel::chooseScenarioFile);
    connect(m_stopButton, &QPushButton::clicked, this, &ScenarioPanel::cancel);
    updateControls();
}

void ScenarioPanel::onRuntimeReady(const AgentLoop *loop)
{
    m_loop = loop;
    updateControls();
}

ScenarioPanel::~ScenarioPanel() = default;

void ScenarioPanel::addItem(const Scenario &scenario)
{
    const QString title = scenario.title.isEmpty() ? scenario.name
                                                   : StaffWords::scenarioTitle(scenario.title);
    auto *item = new QListWidgetItem(
        scenario.file.startsWith(QLatin1Char(':')) ? title : tr("%1 (file)").arg(title), m_list);
    item->setData(Qt::UserRole, scenario.name);
    item->setToolTip(ScenarioVerdictText::description(scenario));
}

void ScenarioPanel::showSummary()
{
    const QListWidgetItem *item = m_list->currentItem();
    const QString name = item ? item->data(Qt::UserRole).toString() : QString();
    for (const Scenario &scenario : std::as_const(d->catalogue)) {
        if (scenario.name != name)
            continue;
        m_summary->setText(ScenarioVerdictText::description(scenario));
        return;
    }
    m_summary->clear();
}

QString ScenarioPanel::scenarioDescription(const QString &name) const
{
    for (const Scenario &scenario : std::as_const(d->catalogue)) {
        if (scenario.name == name)
            return ScenarioVerdictText::description(scenario);
    }
    return {};
}

QString ScenarioPanel::descriptionText() const
{
    return m_summary->text();
}

void ScenarioPanel::setLanguage(Language language)
{
    d->runner->setLanguage(language);
}

QStringList ScenarioPanel::scenarioNames() const
{
    QStringList names;
    for (const Scenario &scenario : std::as_const(d->catalogue))
        names.append(scenario.name);
    return names;
}

QString ScenarioPanel::scenarioTitle(const QString &name) const
{
    for (const Scenario &scenario : std::as_const(d->catalogue)) {
        if (scenario.name == name)
            return scenario.title.isEmpty() ? scenario.name
                                            : StaffWords::scenarioTitle(scenario.title);
    }
    return {};
}

bool ScenarioPanel::isRunning() const
{
    return d->runner->isRunning();
}

QString ScenarioPanel::setAsideConversation() const
{
    return d->runner ? d->runner->setAsideConversation() : QString();
}

QString ScenarioPanel::runningScenario() const
{
    return isRunning() ? d->running : QString();
}

QString ScenarioPanel::stateText() const
{
    return m_stateChip->isHidden() ? QString() : m_stateChip->text();
}

QString ScenarioPanel::resultText() const
{
    return m_result->text();
}

std::optional<bool> ScenarioPanel::lastMatched() const
{
    return d->lastMatched;
}

QString ScenarioPanel::noticeText() const
{
    return m_notice->isHidden() ? QString() : m_notice->text();
}

void ScenarioPanel::runSelected()
{
    const QListWidgetItem *item = m_list->currentItem();
    if (item)
        runScenario(item->data(Qt::UserRole).toString());
}

bool ScenarioPanel::runScenario(const QString &name)
{
    for (const Scenario &scenario : std::as_const(d->catalogue)) {
        if (scenario.name != name)
            continue;
        QString error;
        if (!d->runner->start(scenario, &error)) {
            m_notice->showNotice(tr("The scenario did not start"), error, Tone::Warning);
            return false;
        }
        m_notice->clearNotice();
        for (int row = 0; row < m_list->count(); ++row) {
            if (m_list->item(row)->data(Qt::UserRole).toString() == name) {
                m_list->setCurrentRow(row);
                m_list->scrollToItem(m_list->item(row));
            }
        }
        d->running = scenario.title.isEmpty() ? scenario.name
                                              : StaffWords::scenarioTitle(scenario.title);
        d->turnCount = int(scenario.turns.size());
        d->lastMatched.reset();
        m_stateChip->setStatus(tr("Running\u2026"), Tone::Info);
        m_stateChip->setVisible(true);
        m_heading->setText(d->running);
        m_progress->setText(StaffWords::scenarioSummary(scenario.summary));
        m_result->clear();
        m_result->setToolTip(QString());
        updateControls();
        Q_EMIT runningChanged(true);
        return true;
    }
    m_notice->showNotice(tr("No such scenario"), name, Tone::Warning);
    return false;
}

void ScenarioPanel::runScenarioFile(const QString &path)
{
    await(readScenarioFile(path, m_faults->knownTools()), this,
          [this](const FileRead<Scenario> &read) {
              if (!read.value) {
                  m_notice->showNotice(tr("The scenario file was not loaded"), read.error,
                                       Tone::Danger);
                  Q_EMIT scenarioFileAnswered(false);
                  return;
              }
              // Runs it as a catalogue entry of this session: the panel keeps to one way of
              // starting.
              const Scenario &scenario = *read.value;
              const bool known = std::any_of(d->catalogue.cbegin(), d->catalogue.cend(),
                                             [&](const Scenario &s) {
                                                 return s.name == scenario.name;
                                             });
              d->catalogue.removeIf([&](const Scenario &s) { return s.name == scenario.name; });
              d->catalogue.append(scenario);
              if (!known)
                  addItem(scenario);
              Q_EMIT scenarioFileAnswered(runScenario(scenario.name));
          });
}

// The dialog is opened, never exec()'d: no event loop of its own inside this panel's slot.
void ScenarioPanel::chooseScenarioFile()
{
    QString directory = QDir(QCoreApplication::applicationDirPath())
                            .absoluteFilePath(QStringLiteral("../resources/scenarios"));
    if (!QDir(directory).exists())
        directory = QDir::currentPath();
    QFileDialog *dialog = openExistingFileDialog(this, tr("Open a scenario file"), directory,
                                                 tr("Scenarios (*.json)"));
    connect(dialog, &QFileDialog::fileSelected, this, &ScenarioPanel::runScenarioFile);
}

void ScenarioPanel::cancel()
{
    if (isRunning())
        d->runner->cancel();
}

void ScenarioPanel::onTurnStarted(int turnIndex, const QString &question)
{
    m_progress->setText(d->turnCount > 1 ? tr("Turn %1 of %2: \u201c%3\u201d")
                                               .arg(turnIndex + 1)
                                               .arg(d->turnCount)
                                               .arg(question)
                                         : tr("Asking: \u201c%1\u201d").arg(question));
}

void ScenarioPanel::onFinished(const ScenarioVerdict &verdict)
{
    d->lastMatched = verdict.matched;
    const QString restored = ScenarioVerdictText::restored(verdict);
    // The mark and the words carry the verdict; the colour only helps the eye.
    if (verdict.matched) {
        m_stateChip->setStatus(tr("\u2713 As expected"), Tone::Success);
        m_progress->setText(tr("Every turn ended as the scenario expects, in %1.")
                                .arg(ScenarioVerdictText::elapsed(verdict.elapsedMs)));
        m_result->setText(restored);
    } else {
        m_stateChip->setStatus(tr("\u2717 Not as expected"), Tone::Danger);
        m_progress->setText(
            tr("What differed (after %1):").arg(ScenarioVerdictText::elapsed(verdict.elapsedMs)));
        QStringList lines;
        for (const ScenarioDifference &difference : verdict.differences)
            lines.append(QStringLiteral("\u2022 ")
                         + ScenarioVerdictText::difference(difference, m_loop));
        if (!restored.isEmpty())
            lines << QString() << restored;
        m_result->setText(lines.join(QLatin1Char('\n')));
    }
    // What differed as the scenario file spells it (tool names, result codes), for testers.
    m_result->setToolTip(ScenarioVerdictText::testerLines(verdict));
    updateControls();
    Q_EMIT runningChanged(false);
    Q_EMIT finished(verdict.matched);
}

void ScenarioPanel::updateControls()
{
    const bool running = isRunning();
    const bool ready = m_loop != nullptr;
    m_runButton->setEnabled(!running && ready && m_list->count() > 0);
    m_openButton->setEnabled(!running && ready);
    m_stopButton->setEnabled(running);
    m_list->setEnabled(!running);
}

} // namespace AgentConsole
