#include "diagnosticsdock.h"

#include "isolationspanel.h"

#include "ui/common/fixedpitchfont.h"
#include "ui/common/groovecachingstyle.h"
#include "ui/common/staffwords.h"
#include "ui/common/statuschip.h"
#include "ui/common/wraplabel.h"
#include "ui/transcript/toolcalltext.h"

#include "core/turn/agentloop.h"
#include "core/team/isolations.h"
#include "core/team/isolationwords.h"
#include "core/console/activeconnection.h"
#include "core/console/faultcontrol.h"
#include "core/console/runtimemonitor.h"
#include "core/console/runtimeoptions.h"
#include "core/console/toolpolicies.h"

#include <QCoreApplication>
#include <QEvent>
#include <QFontDatabase>
#include <QGridLayout>
#include <QHelpEvent>
#include <QLabel>
#include <QPainter>
#include <QPushButton>
#include <QScrollArea>
#include <QScrollBar>
#include <QToolTip>
#include <QVBoxLayout>

#include <algorithm>

namespace AgentConsole {

namespace {

// While a breaker's cool-down counts down: ten times a second, so that the tenths move.
constexpr int countdownIntervalMs = 100;
// Otherwise, while some breaker changed state: once a second, for "12 s ago".
constexpr int agoIntervalMs = 1000;

// The DiagnosticsDock's words outside its members, in its context (lupdate reads DockText::tr).
struct DockText
{
    Q_DECLARE_TR_FUNCTIONS(AgentConsole::DiagnosticsDock)
};

QString stateWord(BreakerStatus::Breaker state)
{
    switch (state) {
    case BreakerStatus::Breaker::Closed:
        return DockText::tr("Closed");
    case BreakerStatus::Breaker::HalfOpen:
        return DockText::tr("Half-open");
    case BreakerStatus::Breaker::Open:
        return DockText::tr("Open");
    }
    return {};
}

Tone stateTone(BreakerStatus::Breaker state)
{
    switch (state) {
    case BreakerStatus::Breaker::Closed:
        return Tone::Success;
    case BreakerStatus::Breaker::HalfOpen:
        return Tone::Warning;
    case BreakerStatus::Breaker::Open:
        return Tone::Danger;
    }
    return Tone::Danger;
}

QString agoText(qint64 ms)
{
    if (ms < 1000)
        return DockText::tr("just now");
    if (ms < 60'000)
        return DockText::tr("%1 s ago").arg(ms / 1000);
    if (ms < 3'600'000)
        return DockText::tr("%1 min ago").arg(ms / 60'000);
    return DockText::tr("%1 h ago").arg(ms / 3'600'000);
}

QString windowText(const BreakerStatus &breaker)
{
    switch (breaker.state) {
    case BreakerStatus::Breaker::Closed:
        return DockText::tr("%1 of %2 failed")
            .arg(breaker.windowFailures)
            .arg(breaker.windowCalls);
    case BreakerStatus::Breaker::HalfOpen:
        return DockText::tr("trial calls");
    case BreakerStatus::Breaker::Open:
        break;
    }
    return DockText::tr("\u2014");
}

QString windowToolTip(const BreakerStatus &breaker)
{
    return DockText::tr("The last %1 calls are judged; once at least %2 are in, a failure rate "
                        "of %3 % or more opens the breaker.")
        .arg(breaker.windowSize)
        .arg(breaker.minimumCalls)
        .arg(qRound(breaker.failureRateThreshold * 100.0));
}

QString cooldownText(const BreakerStatus &breaker)
{
    switch (breaker.state) {
    case BreakerStatus::Breaker::Closed:
        return DockText::tr("\u2014");
    case BreakerStatus::Breaker::HalfOpen:
        return DockText::tr("probing");
    case BreakerStatus::Breaker::Open:
        break;
    }
    if (breaker.probeDue)
        return DockText::tr("over: the next call probes");
    return DockText::tr("%1 left of %2")
        .arg(ToolCallText::duration(breaker.cooldownLeftMs),
             ToolCallText::duration(breaker.openCooldownMs));
}

QString lastChangeText(const BreakerStatus &breaker)
{
    if (breaker.lastChangeAgoMs < 0)
        return DockText::tr("none yet");
    return DockText::tr("%1 \u2192 %2, %3")
        .arg(stateWord(breaker.lastFrom), stateWord(breaker.lastTo),
             agoText(breaker.lastChangeAgoMs));
}

QLabel *sectionTitle(const QString &text, QWidget *parent)
{
    auto *label = new WrapLabel(text, parent);
    QFont bold = label->font();
    bold.setWeight(QFont::DemiBold);
    label->setFont(bold);
    return label;
}

QPalette mutedPalette(const QPalette &base)
{
    QPalette muted = base;
    const QColor colour = Internal::mutedTextColor(base);
    muted.setColor(QPalette::WindowText, colour);
    muted.setColor(QPalette::Text, colour);
    return muted;
}

} // namespace

// ---- LatencyHistogram ---------------------------------------------------------------------

LatencyHistogram::LatencyHistogram(QWidget *parent)
    : QWidget(parent)
{
    setObjectName(QStringLiteral("latencyHistogram"));
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
    setAccessibleName(tr("Tool latency"));
}

void LatencyHistogram::setHistograms(const QList<ToolLatencyStats::Histogram> &histograms)
{
    m_histograms = histograms;
    QStringList description;
    for (const ToolLatencyStats::Histogram &histogram : histograms) {
        QStringList buckets;
        for (int bucket = 0; bucket < ToolLatencyStats::bucketCount; ++bucket) {
            if (const int count = histogram.counts[std::size_t(bucket)])
                buckets.append(tr("%1 %2").arg(count).arg(StaffWords::latencyBucket(bucket)));
        }
        description.append(rowText(histogram) + QStringLiteral(" (")
                           + buckets.join(QStringLiteral(", ")) + QLatin1Char(')'));
    }
    setAccessibleDescription(description.join(QStringLiteral("; ")));
    updateGeometry();
    update();
}

QString LatencyHistogram::rowText(const ToolLatencyStats::Histogram &histogram)
{
    return (histogram.calls == 1 ? tr("%1: 1 call, %2")
                                 : tr("%1: %n call(s), longest %2", nullptr, histogram.calls))
        .arg(histogram.tool, ToolCallText::duration(histogram.maxMs));
}

int LatencyHistogram::rowHeight() const
{
    return fontMetrics().height() * 2 + 10; // its words, then its bars
}

qreal LatencyHistogram::chartLeft() const
{
    return 4;
}

QSize LatencyHistogram::sizeHint() const
{
    const int rows = int(m_histograms.size());
    return {fontMetrics().averageCharWidth() * 40,
            rows * rowHeight() + fontMetrics().height() + 6};
}

QSize LatencyHistogram::minimumSizeHint() const
{
    return {fontMetrics().averageCharWidth() * 24, sizeHint().height()};
}

QRectF LatencyHistogram::barRect(int row, int bucket) const
{
    if (row < 0 || row >= m_histograms.size() || bucket < 0
        || bucket >= ToolLatencyStats::bucketCount)
        return {};
    const ToolLatencyStats::Histogram &histogram = m_histograms.at(row);
    const int most = *std::max_element(histogram.counts.cbegin(), histogram.counts.cend());
    const qreal left = chartLeft();
    const qreal width = std::max<qreal>(1, this->width() - left - 4);
    const qreal slot = width / ToolLatencyStats::bucketCount;
    const qreal top = row * rowHeight() + fontMetrics().height() + 4;
    const qreal height = rowHeight() - fontMetrics().height() - 8;
    const int count = histogram.counts[std::size_t(bucket)];
    const qreal barHeight = most > 0 ? height * count / most : 0;
    // A bucket with calls is never invisible.
    const qreal shown = count > 0 ? std::max<qreal>(2, barHeight) : 0;
    return QRectF(left + bucket * slot + 1, top + height - shown, slot - 2, shown);
}

QString LatencyHistogram::toolTipAt(const QPointF &position) const
{
    const qreal left = chartLeft();
    const qreal slot = std::max<qreal>(1, width() - left - 4) / ToolLatencyStats::bucketCount;
    const int row = int(position.y()) / std::max(1, rowHeight());
    const int bucket = int((position.x() - left) / slot);
    if (row < 0 || row >= m_histograms.size() || bucket < 0
        || bucket >= ToolLatencyStats::bucketCount)
        return {};
    const ToolLatencyStats::Histogram &histogram = m_histograms.at(row);
    const int count = histogram.counts[std::size_t(bucket)];
    return tr("%1: %n call(s) took %2", nullptr, count)
        .arg(histogram.tool, StaffWords::latencyBucket(bucket));
}

bool LatencyHistogram::event(QEvent *event)
{
    if (event->type() == QEvent::ToolTip) {
        auto *help = static_cast<QHelpEvent *>(event);
        const QString text = toolTipAt(help->pos());
        if (text.isEmpty())
            QToolTip::hideText();
        else
            QToolTip::showText(help->globalPos(), text, this);
        return true;
    }
    return QWidget::event(event);
}

void LatencyHistogram::paintEvent(QPaintEvent *)
{
    QPainter painter(this);
    const QPalette &colours = palette();
    const QColor muted = Internal::mutedTextColor(colours);
    const Internal::ToneColors info = Internal::toneColors(Tone::Info, colours);
    const QFontMetrics metrics = fontMetrics();
    for (int row = 0; row < m_histograms.size(); ++row) {
        const ToolLatencyStats::Histogram &histogram = m_histograms.at(row);
        const int top = row * rowHeight();
        painter.setPen(colours.color(QPalette::Text));
        painter.drawText(QRect(int(chartLeft()), top + 2, width() - 8, metrics.height()),
                         Qt::AlignLeft | Qt::AlignVCenter,
                         metrics.elidedText(rowText(histogram), Qt::ElideRight, width() - 8));
        for (int bucket = 0; bucket < ToolLatencyStats::bucketCount; ++bucket) {
            const QRectF bar = barRect(row, bucket);
            if (bar.height() <= 0)
                continue;
            painter.setPen(QPen(info.border, 1.0));
            painter.setBrush(info.foreground);
            painter.drawRect(bar);
        }
        painter.setPen(QPen(Internal::panelBorderColor(colours), 1.0));
        const qreal baseline = top + rowHeight() - 4;
        painter.drawLine(QPointF(chartLeft(), baseline), QPointF(width() - 4, baseline));
    }
    if (m_histograms.isEmpty())
        return;
    // The axis under the last row: where the buckets start, the middle and the end.
    painter.setPen(muted);
    const int top = int(m_histograms.size()) * rowHeight();
    const QRect axis(int(chartLeft()), top, width() - 8, metrics.height() + 4);
    painter.drawText(axis, Qt::AlignLeft | Qt::AlignTop, StaffWords::latencyBucket(0));
    painter.drawText(axis, Qt::AlignHCenter | Qt::AlignTop,
                     StaffWords::latencyBucket(ToolLatencyStats::bucketCount / 2));
    painter.drawText(axis, Qt::AlignRight | Qt::AlignTop,
                     StaffWords::latencyBucket(ToolLatencyStats::bucketCount - 1));
}

// ---- DiagnosticsDock ----------------------------------------------------------------------

DiagnosticsDock::DiagnosticsDock(RuntimeMonitor *monitor, ToolPolicies *policies,
                                 FaultControl *faults, ActiveConnection *connection,
                                 QWidget *parent)
    : QDockWidget(tr("Diagnostics"), parent)
    , m_monitor(monitor)
    , m_policies(policies)
    , m_faultControl(faults)
    , m_connection(connection)
{
    Q_ASSERT(monitor && policies && faults && connection);
    setObjectName(QStringLiteral("diagnosticsDock"));
    setFeatures(QDockWidget::DockWidgetClosable | QDockWidget::DockWidgetMovable
                | QDockWidget::DockWidgetFloatable);

    auto *content = new QWidget;
    auto *layout = new QVBoxLayout(content);
    m_layout = layout;
    layout->setContentsMargins(10, 8, 10, 10);
    layout->setSpacing(6);
    const QPalette muted = mutedPalette(palette());

    // Breakers: one row each, made when core first reports it.
    layout->addWidget(sectionTitle(tr("Circuit breakers"), content));
    auto *breakers = new QWidget(content);
    m_breakerGrid = new QGridLayout(breakers);
    m_breakerGrid->setContentsMargins(0, 0, 0, 0);
    m_breakerGrid->setHorizontalSpacing(8);
    m_breakerGrid->setVerticalSpacing(4);
    m_noBreakers = new WrapLabel(
        tr("None yet: each dependency gets its breaker at its first call."), breakers);
    m_noBreakers->setWordWrap(true);
    m_noBreakers->setPalette(muted);
    m_breakerGrid->addWidget(m_noBreakers, 0, 0, 1, 2);
    layout->addWidget(breakers);

    // Counters: staff words, the name engineers grep for, the last turn, the total.
    layout->addSpacing(6);
    layout->addWidget(sectionTitle(tr("Counters"), content));
    m_countersCaption = new WrapLabel(
        tr("Last turn and in total, over every turn in this data directory."), content);
    m_countersCaption->setWordWrap(true);
    m_countersCaption->setPalette(muted);
    layout->addWidget(m_countersCaption);
    auto *counters = new QWidget(content);
    counters->setObjectName(QStringLiteral("counterTable"));
    auto *grid = new QGridLayout(counters);
    grid->setContentsMargins(0, 0, 0, 0);
    grid->setHorizontalSpacing(10);
    grid->setVerticalSpacing(2);
    QLabel *lastHeader = cell(grid, 0, 1);
    lastHeader->setText(tr("Last turn"));
    QLabel *totalHeader = cell(grid, 0, 2);
    totalHeader->setText(tr("Total"));
    for (QLabel *header : {lastHeader, totalHeader}) {
        header->setPalette(muted);
        header->setAlignment(Qt::AlignRight | Qt::AlignVCenter);
    }
    QFont fixed = fixedPitchFont();
    if (font().pointSizeF() > 0)
        fixed.setPointSizeF(font().pointSizeF() * 0.85);
    int row = 1;
    for (const Metrics::Counter counter : Metrics::allCounters()) {
        QLabel *words = cell(grid, row, 0);
        words->setText(counterWords(counter));
        words->setWordWrap(true);
        QLabel *name = cell(grid, row + 1, 0, 3); // under the words and the figures
        name->setText(Metrics::counterName(counter));
        name->setFont(fixed);
        name->setPalette(muted);
        name->setTextInteractionFlags(Qt::TextSelectableByMouse);
        QLabel *last = cell(grid, row, 1);
        QLabel *total = cell(grid, row, 2);
        for (QLabel *figure : {last, total}) {
            figure->setAlignment(Qt::AlignRight | Qt::AlignVCenter);
            figure->setText(QStringLiteral("\u2014"));
        }
        last->setObjectName(QStringLiteral("lastTurn_%1").arg(Metrics::counterName(counter)));
        total->setObjectName(QStringLiteral("total_%1").arg(Metrics::counterName(counter)));
        m_lastTurnCells.insert(int(counter), last);
        m_totalCells.insert(int(counter), total);
        row += 2;
    }
    grid->setColumnStretch(0, 1);
    layout->addWidget(counters);

    layout->addSpacing(6);
    layout->addWidget(sectionTitle(tr("Tool latency"), content));
    m_noLatency = new WrapLabel(tr("No tool has been called yet."), content);
    m_noLatency->setPalette(muted);
    layout->addWidget(m_noLatency);
    m_latency = new LatencyHistogram(content);
    m_latency->setVisible(false);
    layout->addWidget(m_latency);

    layout->addSpacing(6);
    layout->addWidget(sectionTitle(tr("Setup"), content));
    for (QLabel **label : {&m_store, &m_policy, &m_faults}) {
        *label = new WrapLabel(content);
        (*label)->setWordWrap(true);
        (*label)->setTextFormat(Qt::PlainText);
        (*label)->setTextInteractionFlags(Qt::TextSelectableByMouse);
        layout->addWidget(*label);
    }
    m_store->setObjectName(QStringLiteral("storeLabel"));
    m_policy->setObjectName(QStringLiteral("policyLabel"));
    m_faults->setObjectName(QStringLiteral("faultLabel"));
    m_store->setText(tr("Store: preparing\u2026"));
    layout->addStretch(1);

    auto *scroll = new QScrollArea;
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    scroll->setWidget(content);
    // Its bar is repainted with the counters as turns finish.
    cacheScrollBarGroove(scroll->verticalScrollBar());
    m_scroll = scroll;
    fitWidth();
    setWidget(scroll);

    m_ticker.setTimerType(Qt::CoarseTimer);
    connect(&m_ticker, &QTimer::timeout, this, &DiagnosticsDock::refreshBreakers);
    connect(m_monitor, &RuntimeMonitor::statusChanged, this, &DiagnosticsDock::refreshBreakers);
    connect(m_connection, &ActiveConnection::settingsChanged, this,
            &DiagnosticsDock::refreshSetup);
    connect(m_faultControl, &FaultControl::faultsChanged, this, &DiagnosticsDock::refreshSetup);
    connect(m_policies, &ToolPolicies::changed, this, &DiagnosticsDock::refreshSetup);
    connect(m_monitor, &RuntimeMonitor::toolLatencyChanged, this, [this] {
        const auto &histograms = m_monitor->toolLatency().histograms();
        m_latency->setHistograms(histograms);
        m_latency->setVisible(!histograms.isEmpty());
        m_noLatency->setVisible(histograms.isEmpty());
    });
    connect(m_monitor, &RuntimeMonitor::duplicateBusinessObjectsChecked, this,
            &DiagnosticsDock::refreshTotals);
}

DiagnosticsDock::~DiagnosticsDock() = default;

// As wide as the content needs, so that nothing is cut; it scrolls only vertically.
void DiagnosticsDock::fitWidth()
{
    QWidget *content = m_scroll->widget();
    content->layout()->activate();
    m_scroll->setMinimumWidth(content->minimumSizeHint().width()
                              + m_scroll->verticalScrollBar()->sizeHint().width() + 2);
}

QLabel *DiagnosticsDock::cell(QGridLayout *grid, int row, int column, int columnSpan)
{
    auto *label = new WrapLabel(grid->parentWidget());
    label->setTextFormat(Qt::PlainText);
    grid->addWidget(label, row, column, 1, columnSpan);
    return label;
}

QString DiagnosticsDock::counterWords(Metrics::Counter counter)
{
    using Metrics::Counter;
    switch (counter) {
    case Counter::ModelRetry:
        return tr("Model calls retried");
    case Counter::ToolRetry:
        return tr("Tool calls retried");
    case Counter::AgentRestart:
        return tr("Interrupted turns resumed");
    case Counter::IdempotencyHit:
        return tr("Writes answered from the ledger, not repeated");
    case Counter::IdempotencyConflict:
        return tr("Same key with other details, refused");
    case Counter::UnknownExecutionStatus:
        return tr("Writes whose outcome is unknown");
    case Counter::CircuitBreakerOpen:
        return tr("Circuit breakers opened");
    case Counter::FallbackModel:
        return tr("Answers from a fallback model");
    case Counter::DuplicateBusinessObject:
        return tr("Operations owning more than one ticket");
    }
    return Metrics::counterName(counter);
}

void DiagnosticsDock::onRuntimeReady(AgentLoop *loop)
{
    m_ready = true;
    if (loop && m_loopConnection != loop) {
        m_loopConnection = loop;
        connect(loop, &AgentLoop::turnFinished, this, &DiagnosticsDock::onTurnFinished);
    }
    refresh();
}

void DiagnosticsDock::setIsolations(Isolations *isolations)
{
    if (m_isolations || !isolations || !isolations->isEnabled())
        return;
    auto *title = sectionTitle(tr("Isolations"), m_layout->parentWidget());
    m_isolations = new IsolationsPanel(isolations, m_layout->parentWidget());
    m_layout->insertWidget(0, title);
    m_layout->insertWidget(1, m_isolations);
    m_layout->insertSpacing(2, 6);
}

void DiagnosticsDock::onRuntimeFailed()
{
    m_store->setText(tr("Store: not available"));
}

void DiagnosticsDock::refresh()
{
    refreshBreakers();
    refreshSetup();
    refreshTotals();
}

void DiagnosticsDock::onTurnFinished(const TurnResult &result)
{
    const QJsonObject counters = result.counters();
    for (const Metrics::Counter counter : Metrics::allCounters()) {
        const QJsonValue value = counters.value(Metrics::counterName(counter));
        // The duplicate count is the backend's figure, not a turn's.
        m_lastTurnCells.value(int(counter))
            ->setText(value.isUndefined() ? QStringLiteral("\u2014")
                                          : QString::number(value.toInteger()));
        // Until the journal's sum arrives, the total already counts this turn: a total
        // smaller than the last turn's figure would be shown otherwise, however briefly.
        QLabel *total = m_totalCells.value(int(counter));
        bool known = false;
        const qint64 before = total->text().toLongLong(&known);
        if (known && !value.isUndefined() && counter != Metrics::Counter::DuplicateBusinessObject)
            total->setText(QString::number(before + value.toInteger()));
    }
    // A breaker's window changes with every call, without a change of state to signal it;
    // breakers are also made at their first call.
    refreshBreakers();
    refreshTotals();
}

void DiagnosticsDock::refreshTotals()
{
    if (!m_ready)
        return;
    const quint64 request = ++m_totalsRequest;
    await(m_monitor->counterTotals(), this, [this, request](const QJsonObject &totals) {
        if (request == m_totalsRequest)
            showTotals(totals);
    });
}

void DiagnosticsDock::showTotals(const QJsonObject &totals)
{
    for (const Metrics::Counter counter : Metrics::allCounters()) {
        const QJsonValue value = totals.value(Metrics::counterName(counter));
        QString text = QString::number(value.toInteger());
        // The duplicate count is unknown until core has checked; every other counter no turn
        // has reported yet is 0.
        if (value.isUndefined() && counter == Metrics::Counter::DuplicateBusinessObject)
            text = tr("not checked yet");
        m_totalCells.value(int(counter))->setText(text);
    }
}

void DiagnosticsDock::refreshSetup()
{
    if (!m_ready)
        return;
    if (m_connection->backend().kind == BackendOptions::Kind::Http)
        m_store->setText(tr("Backend: %1").arg(m_connection->backendSummary()));
    else
        m_store->setText(tr("Store: %1").arg(m_connection->storePath()));
    QString policy = tr("Tool retry: %1").arg(StaffWords::policy(m_policies->defaultPolicy()));
    const QStringList custom = m_policies->toolsWithCustomPolicy();
    if (!custom.isEmpty())
        policy += tr(" (own policy: %1)").arg(custom.join(QStringLiteral(", ")));
    m_policy->setText(policy);
    m_policy->setToolTip(tr("The retry policy of every tool call: attempts × per-attempt "
                            "timeout, backoff, and the longest one call can take."));
    const QString faults = m_faultControl->summary(true);
    m_faults->setText(faults.isEmpty() ? tr("Faults: none") : faults);
}

DiagnosticsDock::BreakerRow &DiagnosticsDock::rowFor(const QString &dependency)
{
    auto it = m_breakerRows.find(dependency);
    if (it != m_breakerRows.end())
        return *it;
    QWidget *parent = m_breakerGrid->parentWidget();
    BreakerRow row;
    row.name = new WrapLabel(StaffWords::dependency(dependency), parent);
    // Wrapped rather than widening the dock: a breaker first seen during a turn (the first
    // call to a tool or a model) would otherwise push the conversation narrower mid-turn, and
    // every turn on screen would be laid out again at the new width.
    row.name->setWordWrap(true);
    QFont bold = row.name->font();
    bold.setWeight(QFont::DemiBold);
    row.name->setFont(bold);
    row.state = new StatusChip(parent);
    row.window = new WrapLabel(parent);
    row.cooldown = new WrapLabel(parent);
    row.lastChange = new WrapLabel(parent);
    row.lastChange->setWordWrap(true);
    row.reset = new QPushButton(tr("Reset"), parent);
    row.reset->setObjectName(QStringLiteral("reset_%1").arg(dependency));
    row.reset->setToolTip(tr("Close this breaker now and forget its recorded calls"));
    row.reset->setAccessibleName(
        tr("Reset the breaker of %1").arg(StaffWords::dependency(dependency)));
    row.reset->setAutoDefault(false);
    connect(row.reset, &QPushButton::clicked, this,
            [this, dependency] { m_monitor->resetBreaker(dependency); });
    const QPalette muted = mutedPalette(palette());
    for (QLabel *label : {row.window, row.cooldown, row.lastChange}) {
        label->setTextFormat(Qt::PlainText);
        label->setPalette(muted);
    }
    // Three lines per breaker: name, state and Reset; the window and the cool-down; the last
    // change. The dock is narrow; a wide table would be cut.
    const int top = int(m_breakerRows.size()) * 3;
    m_breakerGrid->addWidget(row.name, top, 0);
    m_breakerGrid->addWidget(row.state, top, 1, Qt::AlignRight);
    m_breakerGrid->addWidget(row.window, top + 1, 0);
    m_breakerGrid->addWidget(row.cooldown, top + 1, 1, Qt::AlignRight);
    m_breakerGrid->addWidget(row.lastChange, top + 2, 0);
    m_breakerGrid->addWidget(row.reset, top + 2, 1, Qt::AlignRight);
    m_breakerGrid->setColumnStretch(0, 1);
    // Shown now, not at the layout's next pass: a row made during a refresh reads at once.
    for (QWidget *widget : std::initializer_list<QWidget *>{
             row.name, row.state, row.window, row.cooldown, row.lastChange, row.reset})
        widget->setVisible(true);
    m_breakerOrder.append(dependency);
    fitWidth();
    return *m_breakerRows.insert(dependency, row);
}

void DiagnosticsDock::refreshBreakers()
{
    if (!m_ready)
        return;
    const RuntimeStatus status = m_monitor->status();
    m_noBreakers->setVisible(status.breakers.isEmpty());
    for (const BreakerStatus &breaker : status.breakers) {
        BreakerRow &row = rowFor(breaker.dependency);
        if (breaker.isolated) // a lead's isolation refuses whatever the state underneath
            row.state->setStatus(IsolationWords::chip(), Tone::Warning);
        else
            row.state->setStatus(stateWord(breaker.state), stateTone(breaker.state));
        row.state->setToolTip(breaker.isolation);
        row.window->setText(windowText(breaker));
        row.window->setToolTip(windowToolTip(breaker));
        row.cooldown->setText(cooldownText(breaker));
        row.lastChange->setText(lastChangeText(breaker));
        row.lastChange->setToolTip(breaker.lastChangeReason);
        row.reset->setEnabled(breaker.state != BreakerStatus::Breaker::Closed
                              || breaker.windowCalls > 0);
    }
    updateTicker(status);
}

void DiagnosticsDock::updateTicker(const RuntimeStatus &status)
{
    if (!isVisible()) {
        m_ticker.stop();
        return;
    }
    const bool coolingDown = std::any_of(status.breakers.cbegin(), status.breakers.cend(),
                                         [](const BreakerStatus &b) {
                                             return b.state == BreakerStatus::Breaker::Open
                                                 && b.cooldownLeftMs > 0;
                                         });
    const bool changed = std::any_of(status.breakers.cbegin(), status.breakers.cend(),
                                     [](const BreakerStatus &b) {
                                         return b.lastChangeAgoMs >= 0;
                                     });
    const int interval = coolingDown ? countdownIntervalMs : changed ? agoIntervalMs : 0;
    if (interval == 0) {
        m_ticker.stop();
    } else if (!m_ticker.isActive() || m_ticker.interval() != interval) {
        m_ticker.start(interval);
    }
}

void DiagnosticsDock::showEvent(QShowEvent *event)
{
    QDockWidget::showEvent(event);
    refreshBreakers(); // starts the countdown when one is due
}

void DiagnosticsDock::hideEvent(QHideEvent *event)
{
    QDockWidget::hideEvent(event);
    m_ticker.stop();
}

QStringList DiagnosticsDock::breakerNames() const
{
    return m_breakerOrder;
}

QString DiagnosticsDock::breakerStateText(const QString &dependency) const
{
    const auto it = m_breakerRows.constFind(dependency);
    return it == m_breakerRows.cend() ? QString() : it->state->text();
}

Tone DiagnosticsDock::breakerTone(const QString &dependency) const
{
    const auto it = m_breakerRows.constFind(dependency);
    return it == m_breakerRows.cend() ? Tone::Neutral : it->state->tone();
}

QString DiagnosticsDock::breakerWindowText(const QString &dependency) const
{
    const auto it = m_breakerRows.constFind(dependency);
    return it == m_breakerRows.cend() ? QString() : it->window->text();
}

QString DiagnosticsDock::breakerCooldownText(const QString &dependency) const
{
    const auto it = m_breakerRows.constFind(dependency);
    return it == m_breakerRows.cend() ? QString() : it->cooldown->text();
}

QString DiagnosticsDock::breakerLastChangeText(const QString &dependency) const
{
    const auto it = m_breakerRows.constFind(dependency);
    return it == m_breakerRows.cend() ? QString() : it->lastChange->text();
}

QPushButton *DiagnosticsDock::resetButton(const QString &dependency) const
{
    const auto it = m_breakerRows.constFind(dependency);
    return it == m_breakerRows.cend() ? nullptr : it->reset;
}

QString DiagnosticsDock::counterText(Metrics::Counter counter, Column column) const
{
    const QLabel *label = (column == Column::LastTurn ? m_lastTurnCells : m_totalCells)
                              .value(int(counter));
    return label ? label->text() : QString();
}

QString DiagnosticsDock::storeText() const
{
    return m_store->text();
}

QString DiagnosticsDock::policyText() const
{
    return m_policy->text();
}

QString DiagnosticsDock::faultsText() const
{
    return m_faults->text();
}

} // namespace AgentConsole
