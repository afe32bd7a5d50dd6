#pragma once

#include "ui/common/consolepalette.h"

#include "core/console/runtimestatus.h"
#include "core/turn/toollatencystats.h"
#include "core/turn/turnresult.h" // Metrics::Counter

#include <QDockWidget>
#include <QHash>
#include <QJsonObject>
#include <QPointer>
#include <QTimer>

class QGridLayout;
class QVBoxLayout;
class QLabel;
class QPushButton;
class QScrollArea;

namespace AgentConsole {

class ActiveConnection;
class AgentLoop;
class FaultControl;
class Isolations;
class IsolationsPanel;
class RuntimeMonitor;
class ToolPolicies;
class StatusChip;
struct TurnResult;

// Per-tool latency as small painted histograms, one row per tool, in the fixed buckets of
// ToolLatencyStats; each row also says its count and longest call in words.
class LatencyHistogram final : public QWidget
{
    Q_OBJECT

public:
    explicit LatencyHistogram(QWidget *parent = nullptr);

    void setHistograms(const QList<ToolLatencyStats::Histogram> &histograms);
    const QList<ToolLatencyStats::Histogram> &histograms() const { return m_histograms; }
    // "queryLogistics: 12 calls, longest 660 ms": the words beside a row.
    static QString rowText(const ToolLatencyStats::Histogram &histogram);
    // Where row `row`'s bar of `bucket` is drawn (empty when out of range), and its tooltip.
    QRectF barRect(int row, int bucket) const;
    QString toolTipAt(const QPointF &position) const;

    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

protected:
    bool event(QEvent *event) override;
    void paintEvent(QPaintEvent *event) override;

private:
    int rowHeight() const;
    qreal chartLeft() const;

    QList<ToolLatencyStats::Histogram> m_histograms;
};

// What the console's resilience is doing, for presenters and testers: every circuit breaker
// (its state, the failures in its window, the cool-down left counting down, the last change,
// and a Reset button), DESIGN.md's counters for the last turn and in total (in staff words,
// each with its name beside it), per-tool latency, and the console's setup (store, policy,
// fault plan). It shows what core decided (RuntimeStatus, TurnResult::counters(),
// RuntimeMonitor::counterTotals(), toolLatency()) and decides nothing; its only action is
// RuntimeMonitor::resetBreaker(). The countdown reads the monitor again every tick while a
// breaker is open, only while the dock is visible.
class DiagnosticsDock final : public QDockWidget
{
    Q_OBJECT

public:
    enum class Column { LastTurn, Total };
    Q_ENUM(Column)

    // What it shows comes from the runtime's services, which outlive it: `monitor` (breakers,
    // counters, latency), and for the setup `policies`, `faults` and `connection` (the store or
    // the backend).
    DiagnosticsDock(RuntimeMonitor *monitor, ToolPolicies *policies, FaultControl *faults,
                    ActiveConnection *connection, QWidget *parent = nullptr);
    ~DiagnosticsDock() override;

    // The runtime is ready: `loop`'s finished turns are counted from now on.
    void onRuntimeReady(AgentLoop *loop);
    // The runtime did not start: there is no store to show.
    void onRuntimeFailed();
    // The team's isolations (docs/TEAM.md), shown first, when there is a team database (a
    // service of the runtime's, which outlives this); without one, no section at all.
    void setIsolations(Isolations *isolations);
    IsolationsPanel *isolationsPanel() const { return m_isolations; }

    // "Model calls retried": a counter in staff words (its name is counterName()).
    static QString counterWords(Metrics::Counter counter);

    // What the dock shows, as text, for tests and for anyone reading it aloud.
    QStringList breakerNames() const;
    QString breakerStateText(const QString &dependency) const;
    Tone breakerTone(const QString &dependency) const;
    QString breakerWindowText(const QString &dependency) const;
    QString breakerCooldownText(const QString &dependency) const;
    QString breakerLastChangeText(const QString &dependency) const;
    QPushButton *resetButton(const QString &dependency) const;
    QString counterText(Metrics::Counter counter, Column column) const;
    QString storeText() const;
    QString policyText() const;
    QString faultsText() const;
    LatencyHistogram *latencyHistogram() const { return m_latency; }
    // The live countdown (or the "ago" clock) is ticking.
    bool isTicking() const { return m_ticker.isActive(); }
    int tickInterval() const { return m_ticker.interval(); }

public Q_SLOTS:
    void refresh();

protected:
    void showEvent(QShowEvent *event) override;
    void hideEvent(QHideEvent *event) override;

private:
    struct BreakerRow
    {
        QLabel *name = nullptr;
        StatusChip *state = nullptr;
        QLabel *window = nullptr;
        QLabel *cooldown = nullptr;
        QLabel *lastChange = nullptr;
        QPushButton *reset = nullptr;
    };

    void onTurnFinished(const TurnResult &result);
    void refreshBreakers();
    void refreshSetup();
    void refreshTotals();
    void showTotals(const QJsonObject &totals);
    void updateTicker(const RuntimeStatus &status);
    BreakerRow &rowFor(const QString &dependency);
    QLabel *cell(QGridLayout *grid, int row, int column, int columnSpan = 1);
    void fitWidth();

    RuntimeMonitor *m_monitor = nullptr;
    ToolPolicies *m_policies = nullptr;
    FaultControl *m_faultControl = nullptr;
    ActiveConnection *m_connection = nullptr;
    bool m_ready = false;
    QScrollArea *m_scroll = nullptr;
    QVBoxLayout *m_layout = nullptr;
    IsolationsPanel *m_isolations = nullptr;
    QPointer<QObject> m_loopConnection; // the loop whose turns are counted
    QGridLayout *m_breakerGrid = nullptr;
    QLabel *m_noBreakers = nullptr;
    QHash<QString, BreakerRow> m_breakerRows;
    QStringList m_breakerOrder;
    QHash<int, QLabel *> m_lastTurnCells; // by Metrics::Counter
    QHash<int, QLabel *> m_totalCells;
    QLabel *m_countersCaption = nullptr;
    LatencyHistogram *m_latency = nullptr;
    QLabel *m_noLatency = nullptr;
    QLabel *m_store = nullptr;
    QLabel *m_policy = nullptr;
    QLabel *m_faults = nullptr;
    QTimer m_ticker;
    quint64 m_totalsRequest = 0; // the newest request wins
};

} // namespace AgentConsole
