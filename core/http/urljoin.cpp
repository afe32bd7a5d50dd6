#include "urljoin.h"

namespace AgentConsole::Http {

QUrl joinPath(const QUrl &baseUrl, const QString &encodedPath)
{
    QUrl url = baseUrl;
    // The base path as written: a '%' it encodes stays an encoding, not a literal.
    QString basePath = url.path(QUrl::FullyEncoded);
    while (basePath.endsWith(QLatin1Char('/')))
        basePath.chop(1);
    url.setPath(basePath + encodedPath, QUrl::TolerantMode);
    return url;
}

} // namespace AgentConsole::Http
