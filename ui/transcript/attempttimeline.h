#pragma once

#include "ui/common/consolepalette.h"

#include "core/turn/turnresult.h"

#include <QElapsedTimer>
#include <QList>
#include <QPixmap>
#include <QRectF>
#include <QWidget>

#include <functional>
#include <optional>

class QPainter;

namespace AgentConsole {

// One tool call drawn on a time axis, under its card: each attempt a bar coloured by its
// outcome and labelled with it ("1 timeout", "2 ok": never colour alone), the attempt timeout
// as a tick, the gaps between attempts (the policy's backoff, or a server's Retry-After),
// attempts that were not made (cancelled or refused while waiting), and the call's worst case
// and the turn's deadline as markers. While the call runs the axis grows with the clock
// (repainted at most 30 times a second, with every other running timeline, only while the
// call runs and the widget is visible);
// the widget only reads what core recorded and never waits for anything.
// Hovering a bar, gap or marker shows its facts; the accessible description says them all.
class AttemptTimeline final : public QWidget
{
    Q_OBJECT

public:
    // Frames per second while the call runs; the timer stops when it ends or is hidden.
    static constexpr int maxFramesPerSecond = 30;

    struct Bar
    {
        int attempt = 0;
        AttemptOutcome outcome = AttemptOutcome::Succeeded;
        bool running = false; // the attempt under way (outcome not known yet)
        bool made = true; // false: a mark for an attempt that was not made
        Tone tone = Tone::Neutral;
        QString text; // "1 timeout", "2 running…", "3 not made: cancelled"
        QString toolTip; // "Attempt 1: timed out after 200 ms (timeout 200 ms)"
        qint64 startMs = 0;
        qint64 durationMs = 0;
        QRectF rect; // the bar (or the mark) in widget coordinates
        QRectF labelRect; // where its text is drawn: inside the bar when it fits, else below
        bool labelInside = false;
    };

    struct Gap
    {
        enum class Kind { Backoff, RetryAfter };
        Kind kind = Kind::Backoff;
        bool underway = false; // the call is waiting it out now
        int afterAttempt = 0;
        qint64 startMs = 0;
        qint64 durationMs = 0;
        QString text; // "backoff 200 ms", "Retry-After 1 s"
        QString toolTip;
        QRectF rect;
        QRectF labelRect; // empty when the text does not fit (the tooltip still says it)
    };

    struct Marker
    {
        enum class Kind { AttemptTimeout, WorstCase, TurnDeadline };
        Kind kind = Kind::WorstCase;
        int attempt = 0; // AttemptTimeout: whose timeout
        qint64 atMs = 0;
        qreal x = 0; // where it is drawn
        bool beyond = false; // past the axis' end: drawn at the edge with an arrow
        QString text; // "worst case 6.6 s", "turn deadline 45 s"
        QString toolTip;
    };

    struct Model
    {
        QList<Bar> bars;
        QList<Gap> gaps;
        QList<Marker> markers;
        qint64 nowMs = 0; // the call's time the model was laid out at
        qint64 spanMs = 0; // the axis' length
        bool running = false;
        QRectF axis; // the time axis' extent in widget coordinates
    };

    explicit AttemptTimeline(QWidget *parent = nullptr);
    ~AttemptTimeline() override;

    void setToolCall(const ToolCallRecord &call);
    const ToolCallRecord &toolCall() const { return m_call; }
    // Worth showing: the call made or is making attempts.
    static bool hasContent(const ToolCallRecord &call);

    // The model as it would be painted now, at the widget's current size.
    Model model() const;
    // What hovering at `position` shows; empty over nothing.
    QString toolTipAt(const QPointF &position) const;
    // The live repaints run (the call runs and the widget is visible): one clock for every
    // running timeline, so that a frame repaints them all in one pass.
    bool isAnimating() const;
    // Frames painted so far (for tests of the repaint rate).
    int paintCount() const { return m_paints; }
    // Labels shaped so far by every timeline (for tests: a label is shaped once, not per paint).
    static int labelsShaped();
    // A frame of the live repaints: asks for a paint of only what moved since the last one
    // (the running attempt's growing bar, mostly), or of nothing when nothing did.
    void nextFrame();
    // Tests: the milliseconds since core's last report come from `sinceReportMs` instead of
    // the wall clock.
    void setReportClock(std::function<qint64()> sinceReportMs);

    // Laid out for a call at call time `nowMs` in a `size` widget with `metrics`' font.
    static Model layout(const ToolCallRecord &call, qint64 nowMs, const QSizeF &size,
                        const QFontMetricsF &metrics);
    // The facts of the call in sentences, for the accessible description.
    static QString describe(const ToolCallRecord &call);

    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

protected:
    bool event(QEvent *event) override;
    void paintEvent(QPaintEvent *event) override;
    void showEvent(QShowEvent *event) override;
    void hideEvent(QHideEvent *event) override;

private:
    bool isRunning() const;
    qint64 nowMs() const;
    void updateTicker();
    QFont labelFont() const;
    void paintTimeline(QPainter &painter);

    ToolCallRecord m_call;
    // The call's clock as this widget knows it: the latest call time core reported, and the
    // wall time since then. Never behind what core reported.
    QElapsedTimer m_sinceReport;
    qint64 m_reportedMs = 0;
    std::function<qint64()> m_sinceReportClock; // tests only; else m_sinceReport
    int m_paints = 0;
    // What the last paint showed, for nextFrame(); none until the first paint.
    std::optional<Model> m_painted;
    // The model a frame asked to paint, and the size it was laid out for.
    std::optional<Model> m_frame;
    QSize m_frameSize;
    // The picture of a call that is over, painted once (null while it runs, or when
    // anything it shows changed).
    QPixmap m_still;
};

} // namespace AgentConsole
