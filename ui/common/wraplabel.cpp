#include "wraplabel.h"

#include <QEvent>
#include <QHash>
#include <QMargins>
#include <QPainter>
#include <QStyle>
#include <QStyleOption>
#include <QTextDocument>
#include <QTextLayout>

#include <cmath>

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
            && a.pixelRatio == b.pixelRatio && a.contents == b.contents && a.minimum == b.minimum
            && a.maximum == b.maximum && a.wrap == b.wrap && a.rightToLeft == b.rightToLeft
            && a.text == b.text && a.font == b.font;
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

LabelKey keyOf(const QLabel &label, const QString &fontKey, int width)
{
    return {label.text(),
            fontKey,
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
const LabelSizes &sharedHints(const QLabel &label, const QString &fontKey)
{
    auto &sizes = sharedSizes();
    const LabelKey key = keyOf(label, fontKey, -1);
    auto found = sizes.constFind(key);
    if (found == sizes.cend())
        found = sizes.insert(key, {label.QLabel::sizeHint(), label.QLabel::minimumSizeHint()});
    return *found;
}

} // namespace

// The text laid out as QPainter::drawText(rect, flags, text) lays out a QLabel's plain text
// (one QTextLine per line, lines on whole pixels with the font's leading between them), kept
// for as long as the text, the font and the width it wraps at stay the same.
struct WrapLabel::LaidOutText
{
    QString text;
    QFont font;
    qreal lineWidth = 0;
    bool wrap = false;
    int boxHeight = 0; // lines below it are not laid out
    QTextLayout layout;
    qreal width = 0; // of the widest line
    qreal height = 0; // of every line, leading between them
};

WrapLabel::WrapLabel(QWidget *parent, Qt::WindowFlags flags)
    : QLabel(parent, flags)
{
}

WrapLabel::WrapLabel(const QString &text, QWidget *parent, Qt::WindowFlags flags)
    : QLabel(text, parent, flags)
{
}

WrapLabel::~WrapLabel() = default;

int WrapLabel::s_textsLaidOut = 0;

// Plain text without a text control (selectable text is laid out by a document, whose sizes
// depend on more than the key holds) and without a buddy's mnemonic.
bool WrapLabel::isShareable() const
{
    constexpr Qt::TextInteractionFlags control = Qt::TextSelectableByMouse
        | Qt::TextSelectableByKeyboard | Qt::TextEditable;
    const Qt::TextFormat format = textFormat();
    return (format == Qt::PlainText || (format == Qt::AutoText && !Qt::mightBeRichText(text())))
        && !text().isEmpty() && !(textInteractionFlags() & control) && !buddy();
}

// QFont::key() formats the whole font as text: a tenth of measuring a transcript's turn when
// it was asked at every size hint. Kept until the font changes (event()).
const QString &WrapLabel::fontKey() const
{
    ensurePolished(); // the style may give the label its font
    if (m_fontKey.isEmpty())
        m_fontKey = font().key();
    return m_fontKey;
}

QSize WrapLabel::sizeHint() const
{
    return isShareable() ? sharedHints(*this, fontKey()).hint : QLabel::sizeHint();
}

QSize WrapLabel::minimumSizeHint() const
{
    return isShareable() ? sharedHints(*this, fontKey()).minimum : QLabel::minimumSizeHint();
}

int WrapLabel::heightForWidth(int width) const
{
    if (isShareable()) {
        auto &sizes = sharedSizes();
        const LabelKey key = keyOf(*this, fontKey(), width);
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

// What QLabel draws with QStyle::drawItemText(), in the cases drawn the same way here: plain
// text (no tabs, no text of several length variants, no justification), left to right, no
// frame or indent, enabled (a disabled label's text may be drawn otherwise), in a style that
// draws item text as QStyle does (Fusion, Windows; not a style sheet, not a platform style
// that may draw it its own way).
bool WrapLabel::drawsItsOwnText() const
{
    const QString &shown = text();
    const QString styleName = style()->name();
    return isShareable() && frameWidth() == 0 && indent() <= 0
        && layoutDirection() == Qt::LeftToRight && isEnabled() && !(alignment() & Qt::AlignJustify)
        && !shown.contains(QLatin1Char('\t')) && !shown.contains(QChar(0x9c))
        && (styleName.compare(QLatin1String("fusion"), Qt::CaseInsensitive) == 0
            || styleName.compare(QLatin1String("windows"), Qt::CaseInsensitive) == 0);
}

const WrapLabel::LaidOutText &WrapLabel::laidOut(qreal lineWidth, bool wrap, int boxHeight)
{
    const QFont &current = font();
    if (m_laidOut && m_laidOut->text == text() && m_laidOut->lineWidth == lineWidth
        && m_laidOut->wrap == wrap && m_laidOut->boxHeight == boxHeight
        && m_laidOut->font == current && m_laidOut->font.resolveMask() == current.resolveMask())
        return *m_laidOut;
    m_laidOut = std::make_unique<LaidOutText>();
    ++s_textsLaidOut;
    LaidOutText &laid = *m_laidOut;
    laid.text = text();
    laid.font = current;
    laid.lineWidth = lineWidth;
    laid.wrap = wrap;
    laid.boxHeight = boxHeight;
    QString lines = laid.text;
    lines.replace(QLatin1Char('\n'), QChar::LineSeparator);
    laid.layout.setText(lines);
    laid.layout.setFont(current);
    QTextOption option;
    option.setTextDirection(Qt::LeftToRight);
    option.setAlignment(Qt::AlignLeft); // aligned line by line when drawn
    laid.layout.setTextOption(option);
    laid.layout.setCacheEnabled(true); // keeps the shaped glyphs for the next paints
    const qreal leading = QFontMetricsF(current).leading();
    qreal height = -leading;
    laid.layout.beginLayout();
    for (QTextLine line = laid.layout.createLine(); line.isValid();
         line = laid.layout.createLine()) {
        line.setLineWidth(lineWidth);
        height = std::ceil(height + leading);
        line.setPosition(QPointF(0, height));
        height += line.ascent() + line.descent(); // not height(): that is rounded up
        laid.width = std::max(laid.width, line.naturalTextWidth());
        if (height >= boxHeight) // the rest would be clipped away: not laid out either
            break;
    }
    laid.layout.endLayout();
    laid.height = height;
    return laid;
}

void WrapLabel::paintEvent(QPaintEvent *event)
{
    if (!drawsItsOwnText()) {
        QLabel::paintEvent(event);
        return;
    }
    QPainter painter(this);
    QStyleOption option;
    option.initFrom(this);
    painter.setPen(QPen(option.palette.brush(foregroundRole()), painter.pen().widthF()));
    const QRect rect = contentsRect().marginsRemoved(
        QMargins(margin(), margin(), margin(), margin()));
    const Qt::Alignment align = alignment();
    // Unwrapped text is laid out on a line as long as QPainter's (it never breaks).
    const LaidOutText &laid = laidOut(wordWrap() ? std::max(0, rect.width()) : 0x01000000,
                                      wordWrap(), rect.height());
    qreal top = rect.y();
    if (align & Qt::AlignBottom)
        top += rect.height() - laid.height;
    else if (align & Qt::AlignVCenter)
        top += (rect.height() - laid.height) / 2;
    const bool clip = !QRectF(rect).contains(QRectF(rect.x(), top, laid.width, laid.height));
    if (clip)
        painter.setClipRect(rect, Qt::IntersectClip);
    for (int i = 0; i < laid.layout.lineCount(); ++i) {
        const QTextLine line = laid.layout.lineAt(i);
        qreal left = rect.x();
        if (align & Qt::AlignRight)
            left += rect.width() - line.horizontalAdvance();
        else if (align & Qt::AlignHCenter)
            left += (rect.width() - line.horizontalAdvance()) / 2;
        line.draw(&painter, QPointF(left, top));
    }
}

bool WrapLabel::event(QEvent *event)
{
    switch (event->type()) {
    case QEvent::FontChange:
    case QEvent::StyleChange:
        m_fontKey.clear();
        m_measures[0] = m_measures[1] = {};
        break;
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
