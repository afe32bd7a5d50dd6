#pragma once

#include <QByteArray>

class QIODevice;
class QObject;

namespace AgentConsole::Http {

// A request body that Qt's HTTP stack can send once and never again, for every POST whose
// repetition could act twice (an MCP tools/call, a ticket, a model request paid per token).
// Qt 6.4 sends a request again by itself when its connection closes before the first byte of
// the answer, on a fresh or a reused connection and whatever the method (up to three times:
// QHttpNetworkConnectionChannel's reconnectAttempts); the one thing it checks first is that
// the body can be rewound. No request attribute turns this off in 6.4, nor do
// "Connection: close" or a fresh QNetworkAccessManager. This body refuses to rewind once any
// of it was read, so such a reply ends instead, with QNetworkReply::ContentReSendError (a
// request that was sent and whose answer was lost: networkFailureOf says ConnectionLost).
// HTTP/2 never re-sends a request, and gets the same body.
// The device is parented to `parent`; reparent it to the reply once there is one.
QIODevice *oneShotBody(const QByteArray &bytes, QObject *parent);

} // namespace AgentConsole::Http
