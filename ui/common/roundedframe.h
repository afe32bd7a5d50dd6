#pragma once

#include <QtGlobal>

class QColor;
class QPainter;
class QRect;

namespace AgentConsole {

// Paints what an antialiased QPainter::drawRoundedRect() of `rect` inset by `inset` on every
// side, with `radius` corners, a `penWidth` outline in `outline` and `fill` inside paints (to
// within two steps of 255 per colour, at whole device pixel ratios), from a cached picture of
// its corners and edges: a few copies and a fill instead of a curved path through the raster
// engine's antialiasing. The card frames and chips of a transcript are painted whole whenever
// it scrolls, and their outlines were the costliest part of those paints.
// Falls back to drawRoundedRect() for a rect too narrow to have a middle, a translucent fill
// or a fractional device pixel ratio.
void paintRoundedFrame(QPainter &painter, const QRect &rect, qreal inset, qreal radius,
                       qreal penWidth, const QColor &outline, const QColor &fill);

} // namespace AgentConsole
