#pragma once

#include <QString>
#include <QUrl>

namespace AgentConsole::Http {

// `encodedPath` (starting with '/', already percent-encoded) below the base URL's own path,
// however many slashes that path ends in: "http://h/v1/" + "/chat/completions" ->
// "http://h/v1/chat/completions". Scheme, user, host, port, query and fragment stay as the
// base has them (a provider may need a query such as "?api-version=...").
QUrl joinPath(const QUrl &baseUrl, const QString &encodedPath);

} // namespace AgentConsole::Http
