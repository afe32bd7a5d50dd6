#include "wraplabel.h"

#include <QEvent>
#include <QHash>
#include <QMargins>
#include <QTextDocument>

namespace AgentConsole {

namespace {

// Everything QLabel's sizes of a plain text depend on, and the width asked for (-1: the
// size hints).
struct LabelKey
{
    QString text;
    QString font; // QFont::key(): family, size, weight, style
    int width = -1;
    int alignment = 0;
    int margin = 0;
    int indent = 0;
    int frameWidth = 0;
    int dpi = 0;
    int pixelRatio = 0; // device pixel ratio, in hundredths
    QMargins contents;
    QSize minimum; // a wrapped label's hint is bounded by these
    QSize maximum;
    bool wrap = false;
    bool rightToLeft = false;

    friend bool operator==(const LabelKey &a, const LabelKey &b)
    {
        return a.width == b.width && a.alignment == b.alignment && a.margin == b.margin
            && a.indent == b.indent && a.frameWidth == b.frameWidth && a.dpi == b.dpi
            && a.pixelRatio == b.pixelRatio && a.contents == b.contents
            && a.minimum == b.minimum && a.maximum == b.maximum && a.wrap == b.wrap
            && a.rightToLeft == b.rightToLeft && a.text == b.text && a.font == b.font;
    }
    friend size_t qHash(const LabelKey &key, size_t seed = 0)
    {
        return qHashMulti(seed, key.text, key.font, key.width, key.alignment, key.wrap);
    }
};

struct LabelSizes
{
    QSize hint;
    QSize minimum;
    int height = -1; // for the key's width
};

// The GUI thread's only (widgets live there). Bounded: forgotten whole when full, which costs
// one measure per label on screen.
QHash<LabelKey, LabelSizes> &sharedSizes()
{
    static QHash<LabelKey, LabelSizes> sizes;
    constexpr qsizetype maxEntries = 4096;
    if (sizes.size() > maxEntries)
        sizes.clear();
    return sizes;
}

LabelKey keyOf(const QLabel &label, int width)
{
    return {label.text(),
            label.font().key(),
            width,
            int(label.alignment()),
            label.margin(),
            label.indent(),
            label.frameWidth(),
            label.logicalDpiY(),
            qRound(label.devicePixelRatioF() * 100),
            label.contentsMargins(),
            label.minimumSize(),
            label.maximumSize(),
            label.wordWrap(),
            label.layoutDirection() == Qt::RightToLeft};
}

// Both hints at once, as QLabel computes them together (its own, not WrapLabel's).
const LabelSizes &sharedHints(const QLabel &label)
{
    label.ensurePolished();
    auto &sizes = sharedSizes();
    const LabelKey key = keyOf(label, -1);
    auto found = sizes.constFind(key);
    if (found == sizes.cend())
        found = sizes.insert(key, {label.QLabel::sizeHint(), label.QLabel::minimumSizeHint()});
    return *found;
}

} // namespace

// Plain text without a text control (selectable text is laid out by a document, whose sizes
// depend on more than the key holds) and without a buddy's mnemonic.
bool WrapLabel::isShareable() const
{
    constexpr Qt::TextInteractionFlags control
        = Qt::TextSelectableByMouse | Qt::TextSelectableByKeyboard | Qt::TextEditable;
    const Qt::TextFormat format = textFormat();
    return (format == Qt::PlainText || (format == Qt::AutoText && !Qt::mightBeRichText(text())))
        && !text().isEmpty()
        && !(textInteractionFlags() & control) && !buddy();
}

QSize WrapLabel::sizeHint() const
{
    return isShareable() ? sharedHints(*this).hint : QLabel::sizeHint();
}

QSize WrapLabel::minimumSizeHint() const
{
    return isShareable() ? sharedHints(*this).minimum : QLabel::minimumSizeHint();
}

int WrapLabel::heightForWidth(int width) const
{
    if (isShareable()) {
        auto &sizes = sharedSizes();
        const LabelKey key = keyOf(*this, width);
        auto found = sizes.constFind(key);
        if (found == sizes.cend())
            found = sizes.insert(key, {{}, {}, QLabel::heightForWidth(width)});
        return found->height;
    }
    // Selectable or rich text: its own last heights, for its text.
    if (m_measuredText != text() || m_measuredWrap != wordWrap()) {
        m_measuredText = text();
        m_measuredWrap = wordWrap();
        m_measures[0] = m_measures[1] = {};
    }
    for (const Measure &measure : m_measures) {
        if (measure.width == width)
            return measure.height;
    }
    const int height = QLabel::heightForWidth(width);
    m_measures[m_nextMeasure] = {width, height};
    m_nextMeasure = 1 - m_nextMeasure;
    return height;
}

bool WrapLabel::event(QEvent *event)
{
    switch (event->type()) {
    case QEvent::FontChange:
    case QEvent::StyleChange:
    case QEvent::ContentsRectChange:
    case QEvent::LayoutDirectionChange:
        m_measures[0] = m_measures[1] = {};
        break;
    default:
        break;
    }
    return QLabel::event(event);
}

} // namespace AgentConsole
