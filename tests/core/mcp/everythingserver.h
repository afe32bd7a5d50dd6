#pragma once

// The reference server @modelcontextprotocol/server-everything (installed into the build tree
// with the conformance suite) over Streamable HTTP, for the suites that talk to it: started on
// a free loopback port, ready once it says it listens and the port answers as it does.
// Header-only, shared by tst_mcpeverything and tst_mcpready.

#include <QByteArray>
#include <QProcess>
#include <QProcessEnvironment>
#include <QSignalSpy>
#include <QTcpServer>
#include <QTcpSocket>

#include <memory>

namespace AgentConsole::Testing {

namespace Detail {

// Whether what answers on `port` is server-everything: its Express app answers a GET without
// a session with 400 and names the MCP headers it exposes. Another suite's server that took
// the port first answers otherwise, or nothing listens there at all.
inline bool answersAsEverything(quint16 port, int waitMs)
{
    QTcpSocket socket;
    socket.connectToHost(QHostAddress::LocalHost, port);
    if (!socket.waitForConnected(waitMs))
        return false;
    socket.write("GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
    QByteArray answer;
    while (!answer.contains("\r\n\r\n") && socket.waitForReadyRead(waitMs))
        answer += socket.readAll();
    return answer.startsWith("HTTP/1.1 400")
           && answer.contains("X-Powered-By: Express")
           && answer.contains("mcp-session-id");
}

} // namespace Detail

// Starts `node script streamableHttp` on a free port of 127.0.0.1; null when it does not
// listen within `waitMs` between two outputs (QProcess's destructor then ends it).
//
// The port is taken from the kernel and given back before the server binds it, so another
// suite running beside this one can take it in between; the server then still prints that it
// listens (Express calls the listen callback with the error) and exits. Such a start is
// recognised and made again on another port, a few times at most.
inline std::unique_ptr<QProcess> startEverythingOverHttp(const QString &node,
                                                         const QString &script, int waitMs,
                                                         quint16 *port)
{
    constexpr int kStarts = 5;
    for (int start = 0; start < kStarts; ++start) {
        QTcpServer probe;
        if (!probe.listen(QHostAddress::LocalHost))
            return nullptr;
        *port = probe.serverPort();
        probe.close();
        auto server = std::make_unique<QProcess>();
        QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
        environment.insert(QStringLiteral("PORT"), QString::number(*port));
        server->setProcessEnvironment(environment);
        server->setProcessChannelMode(QProcess::MergedChannels);
        server->start(node, {script, QStringLiteral("streamableHttp")});
        QByteArray said;
        QSignalSpy output(server.get(), &QProcess::readyRead);
        while (!said.contains("listening")) {
            if (!output.wait(waitMs))
                return nullptr;
            said += server->readAll();
        }
        const bool ours = Detail::answersAsEverything(*port, waitMs);
        // Node writes to a pipe synchronously, and a failed listen is reported in the same
        // turn as the "listening" line: by the time the port has answered, it has been said.
        said += server->readAll();
        if (ours && !said.contains("Failed") && server->state() == QProcess::Running)
            return server;
        server->kill();
        server->waitForFinished(waitMs);
    }
    return nullptr;
}

} // namespace AgentConsole::Testing
