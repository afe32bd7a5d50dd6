#pragma once

#include "mcpsecrets.h"
#include "mcptransport.h"

#include <QProcess>
#include <QStringList>
#include <QTimer>

namespace AgentConsole::Mcp {

// An MCP server as a child process: newline-delimited JSON-RPC on its stdin and stdout, its
// stderr (the server's own log) copied line by line into the local log, each line and the
// total bounded, the secrets it was given (its env's) redacted. Nothing here blocks: the process
// is started, written and ended through QProcess's signals, and a child that ignores the end of
// its stdin is terminated, then killed, on timers.
class StdioTransport final : public Transport
{
    Q_OBJECT

public:
    struct Options
    {
        QString serverName; // for the log
        QString program;
        QStringList arguments;
        QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
        QString workingDirectory;
        qsizetype maxFrameBytes = 4 * 1024 * 1024;
        int stderrLineBytes = 1024; // a longer stderr line is cut
        qsizetype stderrTotalBytes = 256 * 1024; // after this much, stderr is dropped (counted)
        int terminateAfterMs = 2000; // after stdin is closed
        int killAfterMs = 2000; // after terminate()
        // Values its stderr must not carry into the log (mcpsecrets.h: its secret env values).
        QStringList redactedValues;
    };

    explicit StdioTransport(Options options, QObject *parent = nullptr);
    ~StdioTransport() override;

    void start() override;
    void send(const JsonRpcMessage &message) override;
    void close() override;
    QString describe() const override;

    qint64 processId() const { return m_process.processId(); }

private:
    void readStdout();
    void readStderr();
    void logStderrLine(QByteArray line, bool cut = false);
    void onFinished(int exitCode, QProcess::ExitStatus status);
    void onError(QProcess::ProcessError error);
    void fail(const Error &error);
    void finishClosing();

    Options m_options;
    QProcess m_process;
    QTimer m_endTimer;
    QByteArray m_stdout;
    QByteArray m_stderr;
    SecretRedactor m_redactor;
    qsizetype m_stderrLogged = 0;
    qsizetype m_stderrDropped = 0;
    bool m_dropUntilNewline = false;
    bool m_closing = false;
    bool m_failed = false;
    bool m_closedEmitted = false;
    bool m_terminated = false;
};

} // namespace AgentConsole::Mcp
