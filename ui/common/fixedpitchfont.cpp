#include "fixedpitchfont.h"

#include <QFont>
#include <QFontDatabase>
#include <QFontInfo>
#include <QFontMetricsF>

namespace AgentConsole {

namespace {

// Narrow, wide, digits, punctuation, braces: what mcp.json and the figures are made of.
constexpr QStringView kSample = u"iMW0l.:{}\"_ ";

QFont measured()
{
    const QFont platform = QFontDatabase::systemFont(QFontDatabase::FixedFont);
    if (drawsFixedPitch(platform))
        return platform;
    const auto sized = [&platform](const QString &family) {
        QFont font(family);
        font.setStyleHint(QFont::TypeWriter);
        if (platform.pointSizeF() > 0)
            font.setPointSizeF(platform.pointSizeF());
        return font;
    };
    static const char *const kKnown[] = {"DejaVu Sans Mono", "Noto Sans Mono", "Noto Mono",
                                         "Liberation Mono",  "Cousine",        "Ubuntu Mono",
                                         "Source Code Pro",  "Hack",           "Menlo",
                                         "Consolas",         "Courier New",    "FreeMono"};
    for (const char *family : kKnown) {
        const QFont font = sized(QString::fromLatin1(family));
        if (QFontInfo(font).family() == QLatin1String(family) && drawsFixedPitch(font))
            return font;
    }
    const QStringList families = QFontDatabase::families();
    for (const QString &family : families) {
        if (!QFontDatabase::isFixedPitch(family))
            continue;
        const QFont font = sized(family);
        if (drawsFixedPitch(font))
            return font;
    }
    return platform; // none draws fixed: the platform's is the best guess left
}

} // namespace

bool drawsFixedPitch(const QFont &font)
{
    const QFontMetricsF metrics(font);
    const qreal width = metrics.horizontalAdvance(kSample.first());
    if (width <= 0)
        return false;
    for (const QChar c : kSample) {
        if (!qFuzzyCompare(metrics.horizontalAdvance(c), width))
            return false;
    }
    return true;
}

QFont fixedPitchFont()
{
    static const QFont chosen = measured();
    return chosen;
}

} // namespace AgentConsole
