#pragma once

// The reference server @modelcontextprotocol/server-everything (installed into the build tree
// with the conformance suite) over Streamable HTTP, for the suites that talk to it: started on
// a free loopback port, ready once it says it listens. Header-only, shared by tst_mcpeverything
// and tst_mcpready.

#include <QByteArray>
#include <QProcess>
#include <QProcessEnvironment>
#include <QSignalSpy>
#include <QTcpServer>

#include <memory>

namespace AgentConsole::Testing {

// Starts `node script streamableHttp` on a free port of 127.0.0.1; null when it does not say
// it listens within `waitMs` between two outputs (QProcess's destructor then ends it).
inline std::unique_ptr<QProcess> startEverythingOverHttp(const QString &node,
                                                         const QString &script, int waitMs,
                                                         quint16 *port)
{
    // A free port, taken and given back, then the server on it.
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
    return server;
}

} // namespace AgentConsole::Testing
