#include "bearerchallenge.h"

#include <QHash>

namespace AgentConsole::OAuth {

namespace {

constexpr qsizetype kMaxHeaderBytes = 8 * 1024;

bool isTokenChar(char c)
{
    // RFC 7230 tchar, and the token68 characters a scheme's blob may hold.
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
        || QByteArrayView("!#$%&'*+-.^_`|~/=").contains(c);
}

// A small scanner over one header value: challenges are "scheme param=value, param="v", ...",
// separated by commas too, so a new challenge starts where a token is not followed by '='.
class Scanner
{
public:
    explicit Scanner(QByteArrayView text)
        : m_text(text)
    {
    }

    bool atEnd()
    {
        skipSpaces();
        return m_pos >= m_text.size();
    }
    void skipSpaces()
    {
        while (m_pos < m_text.size() && (m_text[m_pos] == ' ' || m_text[m_pos] == '\t'))
            ++m_pos;
    }
    bool take(char c)
    {
        skipSpaces();
        if (m_pos < m_text.size() && m_text[m_pos] == c) {
            ++m_pos;
            return true;
        }
        return false;
    }
    QByteArray token()
    {
        skipSpaces();
        const qsizetype start = m_pos;
        while (m_pos < m_text.size() && isTokenChar(m_text[m_pos]) && m_text[m_pos] != '=')
            ++m_pos;
        return m_text.sliced(start, m_pos - start).toByteArray();
    }
    // After "name": '=' then a token or a quoted string. Returns false when no '=' follows
    // (then `name` was the next challenge's scheme), leaving the position before it.
    bool value(QByteArray *out)
    {
        const qsizetype before = m_pos;
        if (!take('=')) {
            m_pos = before;
            return false;
        }
        skipSpaces();
        if (m_pos < m_text.size() && m_text[m_pos] == '"') {
            ++m_pos;
            QByteArray result;
            while (m_pos < m_text.size() && m_text[m_pos] != '"') {
                if (m_text[m_pos] == '\\' && m_pos + 1 < m_text.size())
                    ++m_pos;
                result.append(m_text[m_pos++]);
            }
            if (m_pos < m_text.size())
                ++m_pos; // the closing quote
            *out = result;
            return true;
        }
        const qsizetype start = m_pos;
        while (m_pos < m_text.size() && m_text[m_pos] != ',' && m_text[m_pos] != ' ')
            ++m_pos;
        *out = m_text.sliced(start, m_pos - start).toByteArray();
        return true;
    }

private:
    QByteArrayView m_text;
    qsizetype m_pos = 0;
};

} // namespace

BearerChallenge parseBearerChallenge(const QByteArray &header)
{
    BearerChallenge challenge;
    Scanner scan(QByteArrayView(header).first(std::min(header.size(), kMaxHeaderBytes)));
    bool inBearer = false;
    QHash<QByteArray, QByteArray> params;
    while (!scan.atEnd()) {
        if (scan.take(','))
            continue;
        const QByteArray name = scan.token();
        if (name.isEmpty())
            break; // not a header we can read further
        QByteArray value;
        if (scan.value(&value)) {
            if (inBearer && !params.contains(name.toLower()))
                params.insert(name.toLower(), value);
            continue;
        }
        // A scheme: the next challenge starts here.
        if (inBearer)
            break;
        inBearer = name.compare("Bearer", Qt::CaseInsensitive) == 0;
        if (inBearer)
            challenge.present = true;
    }
    if (!challenge.present)
        return challenge;
    challenge.error = QString::fromUtf8(params.value("error")).left(64);
    const QString scope = QString::fromUtf8(params.value("scope"));
    challenge.scopes = scope.split(QLatin1Char(' '), Qt::SkipEmptyParts);
    const QUrl metadata(QString::fromUtf8(params.value("resource_metadata")), QUrl::StrictMode);
    if (metadata.isValid()
        && (metadata.scheme() == QLatin1String("https")
            || metadata.scheme() == QLatin1String("http")))
        challenge.resourceMetadata = metadata;
    return challenge;
}

} // namespace AgentConsole::OAuth
