#include "attempttimeline.h"

#include "toolcalltext.h"

#include <QBasicTimer>
#include <QCoreApplication>
#include <QEvent>
#include <QHelpEvent>
#include <QPainter>
#include <QPainterPath>
#include <QPointer>
#include <QStaticText>
#include <QTimerEvent>
#include <QToolTip>

#include <algorithm>
#include <cmath>

namespace AgentConsole {

namespace {

// The labels' shapes, kept. A running timeline repaints up to 30 times a second with the same
// few labels, and shaping each again three times a frame (measured, elided, drawn) was most of
// a timeline's paint time; on a busy machine that CPU is what keeps the GUI thread waiting
// for a core (docs/PERFORMANCE.md, "ui_stall_bench"). The GUI thread's, for
// one font at a time; bounded.
class LabelShapes final
{
public:
    // The shapes for `metrics`, kept while the same metrics come back. Metrics compare equal
    // only when made from the same font object: callers pass ones made from labelFont(),
    // which hands out one shared object (a fresh font each time would start over each time).
    static LabelShapes &of(const QFontMetricsF &metrics)
    {
        static std::optional<LabelShapes> shapes;
        if (!shapes || !(shapes->m_metrics == metrics))
            shapes.emplace(metrics);
        return *shapes;
    }

    explicit LabelShapes(const QFontMetricsF &metrics)
        : m_metrics(metrics)
    {
    }

    qreal advance(const QString &text) { return shape(text).advance; }
    static int shapedCount() { return s_shaped; }

    // As QPainter::drawText(rect, alignment, text) with the text elided to the rect's width;
    // the painter's font is the metrics' one.
    void draw(QPainter &painter, const QRectF &rect, int alignment, const QString &text)
    {
        Shape &label = shape(text);
        if (label.advance > rect.width()) { // rare: shaped anew, elided
            painter.drawText(rect, alignment,
                             m_metrics.elidedText(text, Qt::ElideRight, rect.width()));
            return;
        }
        const qreal x = (alignment & Qt::AlignHCenter) ? rect.center().x() - label.advance / 2.0
            : (alignment & Qt::AlignRight)             ? rect.right() - label.advance
                                                       : rect.left();
        const qreal y = (alignment & Qt::AlignVCenter)
            ? rect.top() + (rect.height() - m_metrics.height()) / 2.0
            : rect.top();
        painter.drawStaticText(QPointF(x, y), label.glyphs);
    }

private:
    struct Shape
    {
        qreal advance = 0;
        QStaticText glyphs; // laid out at its first drawing, then drawn as glyph runs
    };

    Shape &shape(const QString &text)
    {
        auto found = m_shapes.find(text);
        if (found != m_shapes.end())
            return *found;
        ++s_shaped;
        if (m_shapes.size() >= 256)
            m_shapes.clear();
        Shape label;
        label.advance = m_metrics.horizontalAdvance(text);
        label.glyphs.setText(text);
        label.glyphs.setTextFormat(Qt::PlainText);
        label.glyphs.setPerformanceHint(QStaticText::AggressiveCaching);
        return *m_shapes.insert(text, label);
    }

    QFontMetricsF m_metrics;
    QHash<QString, Shape> m_shapes;
    static inline int s_shaped = 0; // labels shaped so far, by every LabelShapes
};

constexpr qreal sidePadding = 2.0;
constexpr qreal labelSpacing = 6.0;
constexpr qreal minimumBarWidth = 3.0;
constexpr qreal markWidth = 9.0;
// A turn deadline this much beyond the rest of the axis is drawn at the edge, as "beyond":
// stretching the axis to it would squeeze the attempts into a few pixels.
constexpr double deadlineStretch = 1.5;

QString ms(qint64 milliseconds)
{
    return ToolCallText::duration(milliseconds);
}

// "#2 timed out after 200 ms, backoff 10 ms" -> "timed out after 200 ms, backoff 10 ms"
QString sentenceOf(const AttemptRecord &attempt, const ToolCallRecord &call)
{
    QString line = ToolCallText::attemptLine(attempt, call);
    const qsizetype space = line.indexOf(QLatin1Char(' '));
    return space > 0 && line.startsWith(QLatin1Char('#')) ? line.mid(space + 1) : line;
}

struct Rows
{
    qreal barTop = 0;
    qreal barHeight = 0;
    qreal labelTop = 0;
    qreal labelHeight = 0;
    qreal axisY = 0;
    qreal axisLabelTop = 0;
    qreal height = 0;
};

Rows rowsFor(const QFontMetricsF &metrics)
{
    Rows rows;
    rows.barTop = 1;
    rows.barHeight = std::ceil(metrics.height()) + 6;
    rows.labelTop = rows.barTop + rows.barHeight + 2;
    rows.labelHeight = std::ceil(metrics.height());
    rows.axisY = rows.labelTop + rows.labelHeight + 3;
    rows.axisLabelTop = rows.axisY + 2;
    rows.height = rows.axisLabelTop + std::ceil(metrics.height()) + 1;
    return rows;
}

bool callRuns(const ToolCallRecord &call)
{
    return call.state == ToolCallRecord::State::Running
        || (call.state == ToolCallRecord::State::Pending && !call.attempts.isEmpty());
}

// The latest time of the call that core has reported.
qint64 reportedTime(const ToolCallRecord &call)
{
    if (call.state == ToolCallRecord::State::Finished)
        return call.totalMs;
    qint64 latest = std::max<qint64>(0, call.runningAttemptStartedMs);
    for (const AttemptRecord &attempt : call.attempts)
        latest = std::max(latest, attempt.startedMs + attempt.durationMs);
    return latest;
}

// Places a label of `width` in the label row at `x` or after `cursor`, within the axis;
// empty when not even a short part of it fits.
QRectF placeLabel(qreal x, qreal width, qreal &cursor, const QRectF &axis, const Rows &rows)
{
    qreal left = std::max(x, cursor);
    if (left + width > axis.right())
        left = std::max(cursor, axis.right() - width);
    const qreal available = axis.right() - left;
    if (available < 12)
        return {};
    const QRectF rect(left, rows.labelTop, std::min(width, available), rows.labelHeight);
    cursor = rect.right() + labelSpacing;
    return rect;
}

// One clock for every running timeline: a frame repaints all of them in one pass, rather
// than each card's own timer asking for a paint of its own at its own time. It runs only
// while some timeline is registered (a running call, visible), and goes with the application.
class FrameClock final : public QObject
{
public:
    static FrameClock *instance()
    {
        static QPointer<FrameClock> clock;
        if (!clock)
            clock = new FrameClock(QCoreApplication::instance());
        return clock;
    }

    void add(AttemptTimeline *timeline)
    {
        if (!m_timelines.contains(timeline))
            m_timelines.append(timeline);
        if (!m_timer.isActive())
            m_timer.start((1000 + AttemptTimeline::maxFramesPerSecond - 1)
                              / AttemptTimeline::maxFramesPerSecond,
                          this);
    }
    void remove(AttemptTimeline *timeline)
    {
        m_timelines.removeOne(timeline);
        if (m_timelines.isEmpty())
            m_timer.stop();
    }
    bool contains(const AttemptTimeline *timeline) const
    {
        return m_timelines.contains(const_cast<AttemptTimeline *>(timeline));
    }

protected:
    void timerEvent(QTimerEvent *event) override
    {
        if (event->timerId() != m_timer.timerId())
            return;
        for (AttemptTimeline *timeline : std::as_const(m_timelines)) {
            // A card scrolled out of sight costs nothing but this check.
            if (!timeline->visibleRegion().isEmpty())
                timeline->nextFrame();
        }
    }

private:
    explicit FrameClock(QObject *parent)
        : QObject(parent)
    {
    }

    QList<AttemptTimeline *> m_timelines; // they remove themselves when they stop or go
    QBasicTimer m_timer;
};

} // namespace

AttemptTimeline::AttemptTimeline(QWidget *parent)
    : QWidget(parent)
{
    setObjectName(QStringLiteral("attemptTimeline"));
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
    setAttribute(Qt::WA_OpaquePaintEvent, false);
    m_sinceReport.start();
}

AttemptTimeline::~AttemptTimeline()
{
    if (QCoreApplication::instance())
        FrameClock::instance()->remove(this);
}

bool AttemptTimeline::isAnimating() const
{
    return QCoreApplication::instance() && FrameClock::instance()->contains(this);
}

bool AttemptTimeline::hasContent(const ToolCallRecord &call)
{
    return !call.attempts.isEmpty() || call.runningAttempt > 0
        || call.state == ToolCallRecord::State::Running;
}

void AttemptTimeline::setToolCall(const ToolCallRecord &call)
{
    const bool wasRunning = isRunning();
    m_call = call;
    const qint64 reported = reportedTime(call);
    // Never behind what core said; a clock that ran ahead of a late report keeps its lead.
    if (!wasRunning || reported > nowMs()) {
        m_reportedMs = reported;
        m_sinceReport.restart();
    }
    setAccessibleName(tr("Attempt timeline of %1").arg(call.name));
    setAccessibleDescription(describe(call));
    updateTicker();
    m_frame.reset(); // laid out for the call as it was
    m_still = QPixmap();
    update();
}

bool AttemptTimeline::isRunning() const
{
    return callRuns(m_call);
}

qint64 AttemptTimeline::nowMs() const
{
    if (!isRunning())
        return reportedTime(m_call);
    return m_reportedMs + (m_sinceReportClock ? m_sinceReportClock() : m_sinceReport.elapsed());
}

void AttemptTimeline::setReportClock(std::function<qint64()> sinceReportMs)
{
    m_sinceReportClock = std::move(sinceReportMs);
    m_still = QPixmap();
    update();
}

void AttemptTimeline::updateTicker()
{
    if (isRunning() && isVisible())
        FrameClock::instance()->add(this);
    else if (QCoreApplication::instance())
        FrameClock::instance()->remove(this);
}

void AttemptTimeline::showEvent(QShowEvent *event)
{
    QWidget::showEvent(event);
    updateTicker();
}

void AttemptTimeline::hideEvent(QHideEvent *event)
{
    QWidget::hideEvent(event);
    updateTicker();
}

QFont AttemptTimeline::labelFont() const
{
    QFont small = font();
    if (small.pointSizeF() > 0)
        small.setPointSizeF(small.pointSizeF() * 0.85);
    // One font object for every timeline while the font stays the same. LabelShapes keeps the
    // shaped labels of one QFontMetricsF, and metrics are equal only when made from the same
    // font object: a fresh copy per call made every paint of every timeline throw them all
    // away and lay each label out again (a fifth of the window's paint time in the bench).
    static QFont shared;
    if (!(shared == small) || shared.resolveMask() != small.resolveMask())
        shared = small;
    return shared;
}

int AttemptTimeline::labelsShaped()
{
    return LabelShapes::shapedCount();
}

QSize AttemptTimeline::sizeHint() const
{
    const QFontMetricsF metrics(labelFont());
    return {int(metrics.averageCharWidth() * 60), int(std::ceil(rowsFor(metrics).height))};
}

QSize AttemptTimeline::minimumSizeHint() const
{
    const QFontMetricsF metrics(labelFont());
    return {int(metrics.averageCharWidth() * 16), int(std::ceil(rowsFor(metrics).height))};
}

AttemptTimeline::Model AttemptTimeline::model() const
{
    return layout(m_call, nowMs(), size(), QFontMetricsF(labelFont()));
}

AttemptTimeline::Model AttemptTimeline::layout(const ToolCallRecord &call, qint64 now,
                                               const QSizeF &size, const QFontMetricsF &metrics)
{
    Model model;
    model.running = callRuns(call);
    model.nowMs = std::max<qint64>(0, now);
    const Rows rows = rowsFor(metrics);
    model.axis = QRectF(sidePadding, rows.barTop,
                        std::max<qreal>(1, size.width() - 2 * sidePadding),
                        rows.axisY - rows.barTop);

    // The axis: everything that happened or is planned, and the policy's worst case.
    qint64 end = model.nowMs;
    for (const AttemptRecord &attempt : call.attempts) {
        end = std::max(end,
                       attempt.startedMs + attempt.durationMs
                           + std::max<qint64>(0, attempt.nextDelayMs));
        if (attempt.made)
            end = std::max(end, attempt.startedMs + call.attemptTimeoutMs);
    }
    if (model.running && call.runningAttempt > 0)
        end = std::max(end, call.runningAttemptStartedMs + call.attemptTimeoutMs);
    end = std::max(end, call.worstCaseMs);
    const bool deadlineOnAxis = call.turnDeadlineLeftMs >= 0
        && double(call.turnDeadlineLeftMs) <= deadlineStretch * double(std::max<qint64>(end, 1));
    if (deadlineOnAxis)
        end = std::max(end, call.turnDeadlineLeftMs);
    // A little room after the last thing, so that its marker is not on the edge.
    model.spanMs = std::max<qint64>(1, end + end / 40);
    const QRectF &axis = model.axis;
    const auto xAt = [&](qint64 t) {
        return axis.left()
            + axis.width() * double(std::clamp<qint64>(t, 0, model.spanMs)) / double(model.spanMs);
    };

    // Attempts and the gaps between them, in time order.
    for (qsizetype i = 0; i < call.attempts.size(); ++i) {
        const AttemptRecord &attempt = call.attempts.at(i);
        Bar bar;
        bar.attempt = attempt.attempt;
        bar.outcome = attempt.outcome;
        bar.made = attempt.made;
        bar.startMs = attempt.startedMs;
        bar.durationMs = attempt.durationMs;
        const ToolCallText::Status status = ToolCallText::attemptStatus(attempt, call);
        bar.tone = status.tone;
        const QString sentence = sentenceOf(attempt, call);
        if (attempt.made) {
            bar.text = QStringLiteral("%1 %2").arg(attempt.attempt).arg(status.text);
            bar.toolTip = tr("Attempt %1: %2\nStarted %3 after the call began; it ran %4 of "
                             "its %5 timeout")
                              .arg(attempt.attempt)
                              .arg(sentence, ms(attempt.startedMs), ms(attempt.durationMs),
                                   ms(call.attemptTimeoutMs));
            const qreal left = xAt(attempt.startedMs);
            const qreal right = std::max(left + minimumBarWidth,
                                         xAt(attempt.startedMs + attempt.durationMs));
            bar.rect = QRectF(left, rows.barTop, right - left, rows.barHeight);
        } else {
            bar.text = attempt.outcome == AttemptOutcome::CircuitOpen
                ? QStringLiteral("%1 %2").arg(attempt.attempt).arg(status.text)
                : tr("%1 not made: %2").arg(attempt.attempt).arg(status.text);
            bar.toolTip = tr("Attempt %1: %2").arg(attempt.attempt).arg(sentence);
            const qreal x = xAt(attempt.startedMs);
            bar.rect = QRectF(x - markWidth / 2, rows.barTop, markWidth, rows.barHeight);
        }
        model.bars.append(bar);

        if (attempt.made && call.attemptTimeoutMs > 0) {
            Marker timeout;
            timeout.kind = Marker::Kind::AttemptTimeout;
            timeout.attempt = attempt.attempt;
            timeout.atMs = attempt.startedMs + call.attemptTimeoutMs;
            timeout.x = xAt(timeout.atMs);
            timeout.text = tr("timeout of %1").arg(attempt.attempt);
            timeout.toolTip = tr("Attempt %1's timeout: %2 after it started")
                                  .arg(attempt.attempt)
                                  .arg(ms(call.attemptTimeoutMs));
            model.markers.append(timeout);
        }

        if (attempt.nextDelayMs >= 0) {
            Gap gap;
            gap.kind = attempt.retryAfterMs >= 0 ? Gap::Kind::RetryAfter : Gap::Kind::Backoff;
            gap.afterAttempt = attempt.attempt;
            gap.startMs = attempt.startedMs + attempt.durationMs;
            gap.durationMs = attempt.nextDelayMs;
            const bool last = i == call.attempts.size() - 1;
            gap.underway = last && model.running && call.runningAttempt == 0;
            gap.text = gap.kind == Gap::Kind::RetryAfter
                ? tr("Retry-After %1").arg(ms(gap.durationMs))
                : tr("backoff %1").arg(ms(gap.durationMs));
            gap.toolTip = gap.kind == Gap::Kind::RetryAfter
                ? tr("Waited %1 before attempt %2, as the server asked (Retry-After), in "
                     "place of the policy's backoff")
                      .arg(ms(gap.durationMs))
                      .arg(attempt.attempt + 1)
                : tr("Backoff of %1 before attempt %2 (the retry policy's delay)")
                      .arg(ms(gap.durationMs))
                      .arg(attempt.attempt + 1);
            const qreal left = xAt(gap.startMs);
            const qreal right = std::max(left + 1, xAt(gap.startMs + gap.durationMs));
            gap.rect = QRectF(left, rows.barTop, right - left, rows.barHeight);
            model.gaps.append(gap);
        }
    }

    if (model.running && call.runningAttempt > 0) {
        Bar bar;
        bar.attempt = call.runningAttempt;
        bar.running = true;
        bar.tone = Tone::Info;
        bar.startMs = std::max<qint64>(0, call.runningAttemptStartedMs);
        bar.durationMs = std::max<qint64>(0, model.nowMs - bar.startMs);
        bar.text = tr("%1 running\u2026").arg(call.runningAttempt);
        bar.toolTip = tr("Attempt %1: running for %2 so far (it times out at %3)")
                          .arg(call.runningAttempt)
                          .arg(ms(bar.durationMs), ms(call.attemptTimeoutMs));
        const qreal left = xAt(bar.startMs);
        const qreal right = std::max(left + minimumBarWidth, xAt(model.nowMs));
        bar.rect = QRectF(left, rows.barTop, right - left, rows.barHeight);
        model.bars.append(bar);
        if (call.attemptTimeoutMs > 0) {
            Marker timeout;
            timeout.kind = Marker::Kind::AttemptTimeout;
            timeout.attempt = call.runningAttempt;
            timeout.atMs = bar.startMs + call.attemptTimeoutMs;
            timeout.x = xAt(timeout.atMs);
            timeout.text = tr("timeout of %1").arg(call.runningAttempt);
            timeout.toolTip = tr("Attempt %1 times out %2 after it started")
                                  .arg(call.runningAttempt)
                                  .arg(ms(call.attemptTimeoutMs));
            model.markers.append(timeout);
        }
    }

    // Labels: inside their bar or gap when they fit, else in the row below, left to right in
    // time order, each after the one before it.
    struct Pending
    {
        qreal x;
        qreal width;
        QRectF *rect;
    };
    QList<Pending> below;
    for (Bar &bar : model.bars) {
        const qreal width = LabelShapes::of(metrics).advance(bar.text) + 2;
        if (bar.made && width + 8 <= bar.rect.width()) {
            bar.labelInside = true;
            bar.labelRect = bar.rect.adjusted(4, 0, -4, 0);
        } else {
            below.append({bar.rect.left(), width, &bar.labelRect});
        }
    }
    for (Gap &gap : model.gaps) {
        const qreal width = LabelShapes::of(metrics).advance(gap.text) + 2;
        if (width + 6 <= gap.rect.width()) {
            gap.labelRect = QRectF(gap.rect.center().x() - width / 2, rows.barTop, width,
                                   rows.barHeight);
        } else {
            below.append({gap.rect.left(), width, &gap.labelRect});
        }
    }
    std::stable_sort(below.begin(), below.end(),
                     [](const Pending &a, const Pending &b) { return a.x < b.x; });
    qreal cursor = axis.left();
    for (const Pending &label : std::as_const(below))
        *label.rect = placeLabel(label.x, label.width, cursor, axis, rows);

    if (call.worstCaseMs > 0) {
        Marker worst;
        worst.kind = Marker::Kind::WorstCase;
        worst.atMs = call.worstCaseMs;
        worst.x = xAt(worst.atMs);
        worst.text = tr("worst case %1").arg(ms(call.worstCaseMs));
        worst.toolTip = tr("The policy's worst case: %1 (every attempt times out, every "
                           "backoff at its longest); the call ends by then")
                            .arg(ms(call.worstCaseMs));
        model.markers.append(worst);
    }
    if (call.turnDeadlineLeftMs >= 0) {
        Marker deadline;
        deadline.kind = Marker::Kind::TurnDeadline;
        deadline.atMs = call.turnDeadlineLeftMs;
        deadline.beyond = !deadlineOnAxis;
        deadline.x = deadlineOnAxis ? xAt(deadline.atMs) : axis.right();
        deadline.text = deadlineOnAxis ? tr("turn deadline %1").arg(ms(deadline.atMs))
                                       : tr("turn deadline %1 \u2192").arg(ms(deadline.atMs));
        deadline.toolTip = tr("The turn's deadline: %1 after this call started; the whole "
                              "question must be answered by then")
                               .arg(ms(deadline.atMs));
        model.markers.append(deadline);
    }
    return model;
}

QString AttemptTimeline::describe(const ToolCallRecord &call)
{
    QStringList sentences;
    for (const AttemptRecord &attempt : call.attempts) {
        const QString sentence = sentenceOf(attempt, call);
        sentences.append(tr("Attempt %1 %2.").arg(attempt.attempt).arg(sentence));
    }
    if (callRuns(call)) {
        sentences.append(call.runningAttempt > 0
                             ? tr("Attempt %1 is running.").arg(call.runningAttempt)
                             : tr("Waiting before the next attempt."));
    }
    if (call.attemptTimeoutMs > 0)
        sentences.append(tr("Each attempt times out after %1.").arg(ms(call.attemptTimeoutMs)));
    if (call.worstCaseMs > 0)
        sentences.append(tr("Worst case %1.").arg(ms(call.worstCaseMs)));
    if (call.turnDeadlineLeftMs >= 0)
        sentences.append(
            tr("Turn deadline %1 after the call started.").arg(ms(call.turnDeadlineLeftMs)));
    return sentences.join(QLatin1Char(' '));
}

QString AttemptTimeline::toolTipAt(const QPointF &position) const
{
    const Model current = model();
    // Bars and marks first (the most specific), then their labels, gaps and markers.
    // The last drawn is on top: a mark drawn over an earlier bar answers for itself.
    for (auto it = current.bars.crbegin(); it != current.bars.crend(); ++it) {
        const Bar &bar = *it;
        if (bar.rect.adjusted(-1, 0, 1, 0).contains(position)
            || (!bar.labelInside && bar.labelRect.contains(position)))
            return bar.toolTip;
    }
    for (const Gap &gap : current.gaps) {
        if (gap.rect.contains(position) || gap.labelRect.contains(position))
            return gap.toolTip;
    }
    for (const Marker &marker : current.markers) {
        if (std::abs(marker.x - position.x()) <= 3)
            return marker.toolTip;
    }
    return {};
}

bool AttemptTimeline::event(QEvent *event)
{
    if (event->type() == QEvent::ToolTip) {
        auto *help = static_cast<QHelpEvent *>(event);
        const QString text = toolTipAt(help->pos());
        if (text.isEmpty()) {
            QToolTip::hideText();
            event->ignore();
        } else {
            QToolTip::showText(help->globalPos(), text, this);
        }
        return true;
    }
    switch (event->type()) {
    case QEvent::FontChange:
    case QEvent::PaletteChange:
    case QEvent::StyleChange:
    case QEvent::LanguageChange:
        m_frame.reset(); // laid out with what changed; the full paint that follows lays out anew
        m_still = QPixmap();
        break;
    case QEvent::ActivationChange: // the palette's colour group changes with these
    case QEvent::EnabledChange:
        m_still = QPixmap();
        break;
    default:
        break;
    }
    return QWidget::event(event);
}

namespace {

// An axis-aligned line of the timeline, as filled rectangles: the raster engine strokes a
// dashed or thick pen piece by piece through its path stroker, which made the lines most of a
// timeline's paint time (16 of them paint in one frame while their calls run). The dash
// patterns are Qt's pen styles with its default square caps, in units of the line's width.
void paintStraightLine(QPainter &painter, QPointF from, QPointF to, qreal width,
                       const QColor &colour, Qt::PenStyle style = Qt::SolidLine)
{
    const bool horizontal = qFuzzyCompare(from.y(), to.y());
    if (!horizontal && !qFuzzyCompare(from.x(), to.x())) {
        painter.setPen(QPen(colour, width, style));
        painter.drawLine(from, to);
        return;
    }
    const qreal across = horizontal ? from.y() : from.x();
    const qreal start = (horizontal ? std::min(from.x(), to.x()) : std::min(from.y(), to.y()))
        - width / 2;
    const qreal end = (horizontal ? std::max(from.x(), to.x()) : std::max(from.y(), to.y()))
        + width / 2;
    const auto fill = [&](qreal a, qreal b) {
        painter.fillRect(horizontal ? QRectF(a, across - width / 2, b - a, width)
                                    : QRectF(across - width / 2, a, width, b - a),
                         colour);
    };
    QList<qreal> pattern;
    switch (style) {
    case Qt::DashLine:
        pattern = {5, 1};
        break;
    case Qt::DotLine:
        pattern = {2, 1};
        break;
    case Qt::DashDotLine:
        pattern = {5, 1, 2, 1};
        break;
    default:
        fill(start, end);
        return;
    }
    qreal at = start;
    for (int i = 0; at < end; i = (i + 1) % int(pattern.size())) {
        const qreal next = std::min(end, at + pattern.at(i) * width);
        if (i % 2 == 0)
            fill(at, next);
        at = next;
    }
}

} // namespace

namespace {

// Where `before` and `after` differ, for a frame's paint; nullopt when the whole widget must be
// painted again (the axis' scale moved, an attempt or a gap came or went, a marker moved: the
// markers' names are laid out against each other).
std::optional<QRegion> changedRegion(const AttemptTimeline::Model &before,
                                     const AttemptTimeline::Model &after)
{
    if (before.axis != after.axis || before.spanMs != after.spanMs
        || before.running != after.running || before.bars.size() != after.bars.size()
        || before.gaps.size() != after.gaps.size()
        || before.markers.size() != after.markers.size())
        return std::nullopt;
    for (qsizetype i = 0; i < before.markers.size(); ++i) {
        const AttemptTimeline::Marker &a = before.markers.at(i);
        const AttemptTimeline::Marker &b = after.markers.at(i);
        if (a.x != b.x || a.beyond != b.beyond || a.text != b.text || a.kind != b.kind)
            return std::nullopt;
    }
    QRectF dirty;
    const auto add = [&dirty](const QRectF &rect) {
        if (!rect.isEmpty())
            dirty = dirty.united(rect.adjusted(-2, -2, 2, 2)); // pens and antialiasing
    };
    // A bar or gap that changed at all: where it was and where it is, with their labels.
    const auto addChanged = [&add](const auto &was, const auto &is, auto same) {
        for (qsizetype i = 0; i < was.size(); ++i) {
            const auto &a = was.at(i);
            const auto &b = is.at(i);
            if (a.rect == b.rect && a.labelRect == b.labelRect && a.text == b.text && same(a, b))
                continue;
            for (const QRectF &rect : {a.rect, b.rect, a.labelRect, b.labelRect})
                add(rect);
        }
    };
    addChanged(before.bars, after.bars,
               [](const AttemptTimeline::Bar &a, const AttemptTimeline::Bar &b) {
                   return a.tone == b.tone && a.made == b.made && a.running == b.running
                       && a.outcome == b.outcome;
               });
    addChanged(before.gaps, after.gaps,
               [](const AttemptTimeline::Gap &a, const AttemptTimeline::Gap &b) {
                   return a.kind == b.kind;
               });
    return QRegion(dirty.toAlignedRect());
}

} // namespace

// On a busy machine the GUI thread's CPU per frame is what makes it wait for a core
// (docs/PERFORMANCE.md, "ui_stall_bench"): a frame paints only the strip its running bar
// grew by.
// The frame's model is kept for its paint, so that what is painted is exactly what the region
// was computed from (a later clock would grow the bar past the region's edge).
void AttemptTimeline::nextFrame()
{
    Model next = model();
    const std::optional<QRegion> changed = m_painted ? changedRegion(*m_painted, next)
                                                     : std::nullopt;
    if (changed && changed->isEmpty())
        return; // nothing moved by a pixel
    m_frame = std::move(next);
    m_frameSize = size();
    if (changed)
        update(*changed);
    else
        update();
}

void AttemptTimeline::paintEvent(QPaintEvent *)
{
    ++m_paints;
    if (isRunning()) {
        m_still = QPixmap();
        QPainter painter(this);
        paintTimeline(painter);
        return;
    }
    // A call that is over no longer changes its picture: drawn once, then copied whenever
    // its card is moved, scrolled or painted over (a transcript's new turn repaints every
    // finished timeline on screen, and the bars' antialiased outlines were half their cost).
    const qreal ratio = devicePixelRatioF();
    if (ratio != std::floor(ratio)) { // a picture would be scaled when copied: painted afresh
        m_still = QPixmap();
        QPainter painter(this);
        paintTimeline(painter);
        return;
    }
    if (m_still.isNull() || m_still.deviceIndependentSize() != QSizeF(size())
        || !qFuzzyCompare(m_still.devicePixelRatio(), ratio)) {
        QPixmap still(size() * ratio);
        still.setDevicePixelRatio(ratio);
        still.fill(Qt::transparent);
        QPainter painter(&still);
        paintTimeline(painter);
        painter.end();
        m_still = std::move(still);
    }
    QPainter(this).drawPixmap(0, 0, m_still);
}

void AttemptTimeline::paintTimeline(QPainter &painter)
{
    const QFont font = labelFont();
    const QFontMetricsF metrics(font);
    Model current = m_frame && m_frameSize == size() ? std::move(*m_frame)
                                                     : layout(m_call, nowMs(), size(), metrics);
    m_frame.reset();
    const Rows rows = rowsFor(metrics);
    LabelShapes &labels = LabelShapes::of(metrics);
    const QPalette &colours = palette();
    const QColor muted = Internal::mutedTextColor(colours);
    const QColor text = colours.color(QPalette::Text);

    painter.setRenderHint(QPainter::Antialiasing);
    painter.setFont(font);

    // The axis, with 0 at its start.
    paintStraightLine(painter, QPointF(current.axis.left(), rows.axisY + 0.5),
                      QPointF(current.axis.right(), rows.axisY + 0.5), 1.0,
                      Internal::panelBorderColor(colours));
    painter.setPen(muted);
    const QRectF axisLabels(current.axis.left(), rows.axisLabelTop, current.axis.width(),
                            metrics.height());
    static const QString zero = QStringLiteral("0");
    labels.draw(painter, axisLabels, Qt::AlignLeft | Qt::AlignTop, zero);
    qreal axisCursor = current.axis.left() + labels.advance(zero) + 8;

    // Gaps: a thin line for the policy's backoff, a dashed one in the info colour for a
    // server's Retry-After, each named in its own words when there is room.
    const qreal middle = rows.barTop + rows.barHeight / 2.0;
    const Internal::ToneColors info = Internal::toneColors(Tone::Info, colours);
    for (const Gap &gap : current.gaps) {
        const bool server = gap.kind == Gap::Kind::RetryAfter;
        paintStraightLine(painter, QPointF(gap.rect.left(), middle),
                          QPointF(gap.rect.right(), middle), server ? 2.0 : 1.5,
                          server ? info.foreground : muted, server ? Qt::DashLine : Qt::DotLine);
        if (gap.labelRect.isEmpty())
            continue;
        const bool inside = gap.labelRect.top() < rows.labelTop;
        if (inside)
            painter.fillRect(gap.labelRect, colours.color(QPalette::Base));
        painter.setPen(server ? info.foreground : muted);
        const int alignment = inside ? int(Qt::AlignCenter)
                                     : int(Qt::AlignLeft | Qt::AlignVCenter);
        labels.draw(painter, gap.labelRect, alignment, gap.text);
    }

    // Attempts, in the chips' colours, each with its number and outcome in words.
    for (const Bar &bar : current.bars) {
        const Internal::ToneColors tone = Internal::toneColors(bar.tone, colours);
        if (bar.made) {
            // The outline as the difference of two filled shapes, not a stroke: the shape of
            // a 1 px pen on the rect inset by half a pixel with radius 3 (a corner pixel's
            // shade differs a little), and the antialiased stroke was half of a running
            // timeline's paint.
            painter.setPen(Qt::NoPen);
            painter.setBrush(tone.border);
            painter.drawRoundedRect(bar.rect, 3.5, 3.5);
            painter.setBrush(tone.background);
            painter.drawRoundedRect(bar.rect.adjusted(1, 1, -1, -1), 2.5, 2.5);
            painter.setPen(QPen(tone.border, 1.0));
            if (bar.outcome == AttemptOutcome::Cancelled
                || bar.outcome == AttemptOutcome::DeadlineReached) {
                // Cut short, not failed: hatched, so that it reads apart from a timeout.
                painter.setBrush(QBrush(tone.border, Qt::BDiagPattern));
                painter.drawRoundedRect(bar.rect.adjusted(0.5, 0.5, -0.5, -0.5), 3, 3);
            }
            if (bar.running) {
                // The growing end.
                paintStraightLine(painter, QPointF(bar.rect.right() - 1, bar.rect.top() + 2),
                                  QPointF(bar.rect.right() - 1, bar.rect.bottom() - 2), 2.0,
                                  tone.foreground);
            }
        } else {
            // An attempt not made: a cross where it would have started.
            painter.setPen(QPen(tone.foreground, 2.0));
            const QRectF box = bar.rect.adjusted(1, bar.rect.height() / 2 - 4, -1,
                                                 -(bar.rect.height() / 2 - 4));
            painter.drawLine(box.topLeft(), box.bottomRight());
            painter.drawLine(box.bottomLeft(), box.topRight());
        }
        if (bar.labelRect.isEmpty())
            continue;
        painter.setPen(bar.labelInside ? tone.foreground : text);
        labels.draw(painter, bar.labelRect, Qt::AlignLeft | Qt::AlignVCenter, bar.text);
    }
    painter.setBrush(Qt::NoBrush);

    // Markers: each attempt's timeout as a short tick over its bar row; the worst case and
    // the turn's deadline as lines down to the axis, named under it.
    const Internal::ToneColors warning = Internal::toneColors(Tone::Warning, colours);
    const Internal::ToneColors danger = Internal::toneColors(Tone::Danger, colours);
    for (const Marker &marker : current.markers) {
        switch (marker.kind) {
        case Marker::Kind::AttemptTimeout:
            paintStraightLine(painter, QPointF(marker.x, rows.barTop - 1),
                              QPointF(marker.x, rows.barTop + rows.barHeight + 1), 1.0, muted,
                              Qt::DashLine);
            continue;
        case Marker::Kind::WorstCase:
            if (!marker.beyond)
                paintStraightLine(painter, QPointF(marker.x, rows.barTop),
                                  QPointF(marker.x, rows.axisY + 3), 1.5, warning.foreground,
                                  Qt::DashLine);
            break;
        case Marker::Kind::TurnDeadline:
            if (!marker.beyond)
                paintStraightLine(painter, QPointF(marker.x, rows.barTop),
                                  QPointF(marker.x, rows.axisY + 3), 1.5, danger.foreground,
                                  Qt::DashDotLine);
            break;
        }
    }
    // Their names under the axis, laid out from the right: each ends at its line (the turn
    // deadline beyond the axis at the edge) or, when the next one needs the room, before it.
    QList<const Marker *> named;
    for (const Marker &marker : current.markers) {
        if (marker.kind != Marker::Kind::AttemptTimeout)
            named.append(&marker);
    }
    std::sort(named.begin(), named.end(),
              [](const Marker *a, const Marker *b) { return a->x > b->x; });
    qreal limit = current.axis.right();
    for (const Marker *marker : std::as_const(named)) {
        const qreal width = labels.advance(marker->text) + 2;
        const qreal right = std::min(marker->beyond ? current.axis.right() : marker->x - 3, limit);
        const qreal left = std::max(right - width, axisCursor);
        if (right - left < width)
            break; // no room; the tooltip and the description still name it
        painter.setPen(marker->kind == Marker::Kind::WorstCase ? warning.foreground
                                                               : danger.foreground);
        labels.draw(painter, QRectF(left, rows.axisLabelTop, width, metrics.height()),
                    Qt::AlignLeft | Qt::AlignTop, marker->text);
        limit = left - 10;
    }
    m_painted = std::move(current);
}

} // namespace AgentConsole
