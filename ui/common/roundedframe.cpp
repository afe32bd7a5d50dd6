#include "roundedframe.h"

#include <QHash>
#include <QPainter>
#include <QPixmap>
#include <QPixmapCache>

#include <cmath>

namespace AgentConsole {

namespace {

void paintDirectly(QPainter &painter, const QRect &rect, qreal inset, qreal radius, qreal penWidth,
                   const QColor &outline, const QColor &fill)
{
    painter.save();
    painter.setRenderHint(QPainter::Antialiasing);
    painter.setPen(QPen(outline, penWidth));
    painter.setBrush(fill);
    painter.drawRoundedRect(QRectF(rect).adjusted(inset, inset, -inset, -inset), radius, radius);
    painter.restore();
}

// What a tile is made of. Looked up at every paint of every card and chip: a hash of a few
// numbers (a string key formatted with seven arguments was a sixth of a card's paint).
struct TileKey
{
    qreal inset;
    qreal radius;
    qreal penWidth;
    QRgb outline;
    QRgb fill;
    qreal ratio;
    int height;

    friend bool operator==(const TileKey &, const TileKey &) = default;
    friend size_t qHash(const TileKey &key, size_t seed = 0)
    {
        return qHashMulti(seed, key.inset, key.radius, key.penWidth, key.outline, key.fill,
                          key.ratio, key.height);
    }
};

// The tiles' keys in Qt's pixmap cache (which holds the pixmaps, may drop them, and goes with
// the application). GUI thread only, as painting on widgets is. A few colours and sizes per
// theme; forgotten all at once past a bound that palette changes could reach.
QHash<TileKey, QPixmapCache::Key> &tileKeys()
{
    static QHash<TileKey, QPixmapCache::Key> keys;
    if (keys.size() > 256)
        keys.clear();
    return keys;
}

} // namespace

void paintRoundedFrame(QPainter &painter, const QRect &rect, qreal inset, qreal radius,
                       qreal penWidth, const QColor &outline, const QColor &fill)
{
    const qreal ratio = painter.device() ? painter.device()->devicePixelRatioF() : 1.0;
    // The corner: everything the curve and its antialiasing touch, and a pixel more. The
    // tile is two corners and one pixel of straight edge between them, each way; a pill (a
    // chip whose corners meet top to bottom) has no straight side edges, and its tile is as
    // high as it is: only its top and bottom edges are stretched.
    const int corner = int(std::ceil(inset + radius + penWidth)) + 1;
    const int tileWidth = 2 * corner + 1;
    const bool pill = rect.height() < tileWidth;
    const int tileHeight = pill ? rect.height() : tileWidth;
    if (ratio != std::floor(ratio) || rect.width() < tileWidth || rect.height() < 1
        || fill.alpha() != 255) {
        paintDirectly(painter, rect, inset, radius, penWidth, outline, fill);
        return;
    }
    const TileKey key{inset, radius, penWidth, outline.rgba(), fill.rgba(), ratio, tileHeight};
    QPixmapCache::Key &cached = tileKeys()[key];
    QPixmap pieces;
    if (!QPixmapCache::find(cached, &pieces)) {
        pieces = QPixmap(QSize(tileWidth, tileHeight) * ratio);
        pieces.setDevicePixelRatio(ratio);
        pieces.fill(Qt::transparent);
        QPainter tilePainter(&pieces);
        paintDirectly(tilePainter, QRect(0, 0, tileWidth, tileHeight), inset, radius, penWidth,
                      outline, fill);
        tilePainter.end();
        cached = QPixmapCache::insert(pieces);
    }
    // Source rectangles in the tile's device pixels; targets in the painter's coordinates.
    const auto source = [ratio](int x, int y, int w, int h) {
        return QRectF(x * ratio, y * ratio, w * ratio, h * ratio);
    };
    const int left = rect.left();
    const int top = rect.top();
    const int middleWidth = rect.width() - 2 * corner;
    const int right = left + corner + middleWidth;
    painter.save();
    painter.setRenderHint(QPainter::Antialiasing, false);
    painter.setRenderHint(QPainter::SmoothPixmapTransform, false);
    if (pill) {
        painter.drawPixmap(QRectF(left, top, corner, tileHeight), pieces,
                           source(0, 0, corner, tileHeight));
        painter.drawPixmap(QRectF(left + corner, top, middleWidth, tileHeight), pieces,
                           source(corner, 0, 1, tileHeight));
        painter.drawPixmap(QRectF(right, top, corner, tileHeight), pieces,
                           source(corner + 1, 0, corner, tileHeight));
        painter.restore();
        return;
    }
    const int middleHeight = rect.height() - 2 * corner;
    const int bottom = top + corner + middleHeight;
    painter.drawPixmap(QRectF(left, top, corner, corner), pieces, source(0, 0, corner, corner));
    painter.drawPixmap(QRectF(right, top, corner, corner), pieces,
                       source(corner + 1, 0, corner, corner));
    painter.drawPixmap(QRectF(left, bottom, corner, corner), pieces,
                       source(0, corner + 1, corner, corner));
    painter.drawPixmap(QRectF(right, bottom, corner, corner), pieces,
                       source(corner + 1, corner + 1, corner, corner));
    // The straight edges: one pixel of the tile's edge, stretched (nearest, so exact).
    painter.drawPixmap(QRectF(left + corner, top, middleWidth, corner), pieces,
                       source(corner, 0, 1, corner));
    painter.drawPixmap(QRectF(left + corner, bottom, middleWidth, corner), pieces,
                       source(corner, corner + 1, 1, corner));
    painter.drawPixmap(QRectF(left, top + corner, corner, middleHeight), pieces,
                       source(0, corner, corner, 1));
    painter.drawPixmap(QRectF(right, top + corner, corner, middleHeight), pieces,
                       source(corner + 1, corner, corner, 1));
    painter.fillRect(QRect(left + corner, top + corner, middleWidth, middleHeight), fill);
    painter.restore();
}

} // namespace AgentConsole
