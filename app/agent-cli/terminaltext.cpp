#include "terminaltext.h"

namespace AgentConsole {
namespace {

constexpr char16_t kEsc = 0x1b;
constexpr char16_t kBel = 0x07;

bool isBidiControl(char16_t c)
{
    return (c >= 0x202a && c <= 0x202e) || (c >= 0x2066 && c <= 0x2069);
}

// Where a sequence opened by ESC, or by its 8-bit twin, ends (one past its last character).
qsizetype endOfSequence(QStringView text, qsizetype i, char16_t kind)
{
    const qsizetype n = text.size();
    switch (kind) {
    case u'[': // CSI: parameters and intermediates up to a final byte
        while (i < n && !(text[i].unicode() >= 0x40 && text[i].unicode() <= 0x7e))
            ++i;
        return std::min(n, i + 1);
    case u']': // OSC, DCS, SOS, PM, APC: up to BEL or the string terminator
    case u'P':
    case u'X':
    case u'^':
    case u'_':
        while (i < n) {
            const char16_t c = text[i].unicode();
            if (c == kBel || c == 0x9c)
                return i + 1;
            if (c == kEsc && i + 1 < n && text[i + 1] == u'\\')
                return i + 2;
            ++i;
        }
        return n;
    default:
        return i;
    }
}

} // namespace

QString terminalSafe(QStringView text)
{
    QString safe;
    safe.reserve(text.size());
    const qsizetype n = text.size();
    for (qsizetype i = 0; i < n;) {
        const char16_t c = text[i].unicode();
        if (c == kEsc) {
            if (i + 1 >= n)
                break;
            const char16_t kind = text[i + 1].unicode();
            const qsizetype end = endOfSequence(text, i + 2, kind);
            i = end > i + 2 ? end : i + 2; // a two-character escape such as ESC c
            continue;
        }
        if (c == 0x9b || c == 0x9d || c == 0x90 || c == 0x98 || c == 0x9e || c == 0x9f) {
            const char16_t kind = c == 0x9b ? u'[' : c == 0x90 ? u'P' : u']';
            i = endOfSequence(text, i + 1, kind);
            continue;
        }
        const bool control = (c < 0x20 && c != u'\n' && c != u'\t') || (c >= 0x7f && c <= 0x9f);
        if (!control && !isBidiControl(c))
            safe.append(text[i]);
        ++i;
    }
    return safe;
}

} // namespace AgentConsole
