#include "stdiotransport.h"

#include "../telemetry/logging.h"

namespace AgentConsole::Mcp {

StdioTransport::StdioTransport(Options options, QObject *parent)
    : Transport(parent)
    , m_options(std::move(options))
{
    m_redactor.add(m_options.redactedValues);
    m_options.redactedValues.clear(); // kept once, in the redactor
    m_process.setProgram(m_options.program);
    m_process.setArguments(m_options.arguments);
    m_process.setProcessEnvironment(m_options.environment);
    if (!m_options.workingDirectory.isEmpty())
        m_process.setWorkingDirectory(m_options.workingDirectory);
    m_endTimer.setSingleShot(true);
    connect(&m_process, &QProcess::started, this, &Transport::started);
    connect(&m_process, &QProcess::readyReadStandardOutput, this, &StdioTransport::readStdout);
    connect(&m_process, &QProcess::readyReadStandardError, this, &StdioTransport::readStderr);
    connect(&m_process, &QProcess::finished, this, &StdioTransport::onFinished);
    connect(&m_process, &QProcess::errorOccurred, this, &StdioTransport::onError);
    connect(&m_endTimer, &QTimer::timeout, this, [this] {
        if (m_process.state() == QProcess::NotRunning)
            return;
        if (!m_terminated) {
            qCInfo(lcMcp).noquote() << describe() << "did not exit after its stdin closed;"
                                    << "terminating it";
            m_terminated = true;
            m_process.terminate();
            m_endTimer.start(m_options.killAfterMs);
        } else {
            qCWarning(lcMcp).noquote() << describe() << "ignored SIGTERM; killing it";
            m_process.kill();
        }
    });
}

StdioTransport::~StdioTransport()
{
    // QProcess's destructor would wait for the child it kills (and warn); killing first and
    // reaping here keeps that wait to the moment the kernel takes, never a server's own
    // shutdown.
    disconnect(&m_process, nullptr, this, nullptr);
    if (m_process.state() != QProcess::NotRunning) {
        m_process.kill();
        m_process.waitForFinished(1000);
    }
}

void StdioTransport::start()
{
    qCInfo(lcMcp).noquote() << "starting" << describe();
    m_process.start(QIODevice::ReadWrite);
}

void StdioTransport::send(const JsonRpcMessage &message)
{
    if (m_process.state() != QProcess::Running || m_closing)
        return;
    QByteArray bytes = message.toBytes();
    bytes.append('\n');
    m_process.write(bytes);
}

void StdioTransport::close()
{
    if (m_closing)
        return;
    m_closing = true;
    if (m_process.state() == QProcess::NotRunning) {
        finishClosing();
        return;
    }
    // MCP's stdio shutdown: close the child's input, wait, SIGTERM, wait, SIGKILL.
    m_process.closeWriteChannel();
    m_endTimer.start(m_options.terminateAfterMs);
}

QString StdioTransport::describe() const
{
    return QStringLiteral("stdio server \"%1\"").arg(m_options.serverName);
}

void StdioTransport::readStdout()
{
    m_stdout.append(m_process.readAllStandardOutput());
    qsizetype start = 0;
    while (true) {
        const qsizetype newline = m_stdout.indexOf('\n', start);
        if (newline < 0)
            break;
        QByteArray line = m_stdout.mid(start, newline - start);
        start = newline + 1;
        if (line.endsWith('\r'))
            line.chop(1);
        if (line.trimmed().isEmpty())
            continue;
        if (line.size() > m_options.maxFrameBytes) {
            fail(Error::of(Failure::Oversized,
                           QStringLiteral("a stdout line of %1 bytes").arg(line.size())));
            return;
        }
        Q_EMIT frameReceived(line);
        if (m_failed)
            return;
    }
    m_stdout.remove(0, start);
    // An unfinished line past the bound is refused before it grows further.
    if (m_stdout.size() > m_options.maxFrameBytes) {
        m_stdout.clear();
        fail(Error::of(
            Failure::Oversized,
            QStringLiteral("a stdout line longer than %1 bytes").arg(m_options.maxFrameBytes)));
    }
}

void StdioTransport::readStderr()
{
    const QByteArray bytes = m_process.readAllStandardError();
    for (const char c : bytes) {
        if (c == '\n') {
            if (!m_dropUntilNewline)
                logStderrLine(m_stderr);
            m_stderr.clear();
            m_dropUntilNewline = false;
            continue;
        }
        if (m_dropUntilNewline)
            continue;
        if (m_stderr.size() >= m_options.stderrLineBytes) {
            logStderrLine(m_stderr, true);
            m_stderr.clear();
            m_dropUntilNewline = true; // the rest of a long line is not kept
            continue;
        }
        m_stderr.append(c);
    }
}

void StdioTransport::logStderrLine(QByteArray line, bool cut)
{
    if (line.endsWith('\r'))
        line.chop(1);
    if (line.isEmpty())
        return;
    if (m_stderrLogged >= m_options.stderrTotalBytes) {
        if (m_stderrDropped++ == 0)
            qCWarning(lcMcp).noquote()
                << describe() << "stderr: more than" << m_options.stderrTotalBytes
                << "bytes logged; the rest is dropped";
        return;
    }
    m_stderrLogged += line.size();
    // A server may echo its token ("using key abc…"): a secret is never logged, also not the
    // start of one where the line was cut.
    const QString text = QString::fromUtf8(line);
    qCInfo(lcMcp).noquote() << describe() << "stderr:"
                            << (cut ? m_redactor.redactCut(text) + QStringLiteral("…")
                                    : m_redactor.redact(text));
}

void StdioTransport::onFinished(int exitCode, QProcess::ExitStatus status)
{
    m_endTimer.stop();
    if (!m_stderr.isEmpty())
        logStderrLine(m_stderr);
    m_stderr.clear();
    if (m_closing) {
        qCInfo(lcMcp).noquote() << describe() << "ended, exit code" << exitCode;
        finishClosing();
        return;
    }
    fail(Error::of(Failure::TransportClosed,
                   status == QProcess::CrashExit
                       ? QStringLiteral("the server crashed")
                       : QStringLiteral("the server exited with code %1").arg(exitCode)));
}

void StdioTransport::onError(QProcess::ProcessError error)
{
    if (error != QProcess::FailedToStart)
        return; // crashes and exits come through finished()
    fail(Error::of(
        Failure::TransportFailed,
        QStringLiteral("could not start %1: %2").arg(m_options.program, m_process.errorString())));
    if (m_closing)
        finishClosing();
}

void StdioTransport::fail(const Error &error)
{
    if (m_failed)
        return;
    m_failed = true;
    qCWarning(lcMcp).noquote() << describe() << error.describe();
    if (m_process.state() != QProcess::NotRunning)
        m_process.kill(); // a server that broke the protocol is not spoken to again
    Q_EMIT failed(error);
}

void StdioTransport::finishClosing()
{
    if (m_closedEmitted)
        return;
    m_closedEmitted = true;
    Q_EMIT closed();
}

} // namespace AgentConsole::Mcp
