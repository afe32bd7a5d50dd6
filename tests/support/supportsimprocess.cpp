#include "supportsimprocess.h"

#include <QFile>
#include <QJsonDocument>
#include <QNetworkReply>
#include <QRegularExpression>
#include <QSignalSpy>

#include <memory>

namespace AgentConsole::Testing {
namespace {

struct DeleteLater
{
    void operator()(QObject *object) const { object->deleteLater(); }
};

} // namespace

SupportSimProcess::~SupportSimProcess()
{
    stop();
    // No stdout slot may run while the members go.
    disconnect(&m_process, nullptr, this, nullptr);
}

bool SupportSimProcess::start(const QStringList &extraArguments, QString *error)
{
    // A missing sim fails the suite loudly; it is never skipped.
    if (!QFile::exists(QStringLiteral(SUPPORT_SIM_PATH))) {
        *error = QStringLiteral("no support-sim at %1").arg(QStringLiteral(SUPPORT_SIM_PATH));
        return false;
    }
    m_process.setProgram(QStringLiteral(SUPPORT_SIM_PATH));
    m_process.setArguments(QStringList{QStringLiteral("--port"), QStringLiteral("0"),
                                       QStringLiteral("--host"), QStringLiteral("127.0.0.1")}
                           + extraArguments);
    m_process.setProcessChannelMode(QProcess::ForwardedErrorChannel);
    m_process.start();
    if (!m_process.waitForStarted(10'000)) {
        *error = m_process.errorString();
        return false;
    }
    m_baseUrl.clear();
    m_startOutput.clear();
    m_partialLine.clear();
    m_committedKeys.clear();
    connect(&m_process, &QProcess::readyReadStandardOutput, this,
            &SupportSimProcess::readStandardOutput, Qt::UniqueConnection);
    QSignalSpy readable(&m_process, &QProcess::readyReadStandardOutput);
    for (int waits = 0; waits < 20 && !m_baseUrl.isValid(); ++waits) {
        readStandardOutput();
        if (!m_baseUrl.isValid() && m_process.state() == QProcess::Running)
            readable.wait(500);
    }
    if (!m_baseUrl.isValid()) {
        *error = QStringLiteral("support-sim did not say it was listening: ")
            + QString::fromUtf8(m_startOutput + m_partialLine);
        return false;
    }
    return true;
}

void SupportSimProcess::readStandardOutput()
{
    static const QRegularExpression ready(
        QStringLiteral("^support-sim listening on (http://127\\.0\\.0\\.1:(\\d+))$"));
    static const QByteArray committedPrefix = QByteArrayLiteral("support-sim: committed ");
    // One read may carry several lines, or part of one: only whole lines are looked at.
    m_partialLine += m_process.readAllStandardOutput();
    qsizetype newline;
    while ((newline = m_partialLine.indexOf('\n')) >= 0) {
        const QByteArray line = m_partialLine.left(newline);
        m_partialLine.remove(0, newline + 1);
        if (!m_baseUrl.isValid()) {
            const QRegularExpressionMatch match = ready.match(QString::fromUtf8(line));
            if (match.hasMatch() && match.captured(2).toInt() > 0)
                m_baseUrl = QUrl(match.captured(1));
            else
                m_startOutput += line + '\n';
        } else if (line.startsWith(committedPrefix)) {
            const QString key = QString::fromUtf8(line.mid(committedPrefix.size()));
            m_committedKeys.append(key);
            Q_EMIT committed(key);
        }
    }
}

bool SupportSimProcess::stop()
{
    if (m_process.state() == QProcess::NotRunning)
        return m_process.exitStatus() == QProcess::NormalExit;
    m_process.terminate(); // the sim quits its event loop on SIGTERM
    if (!m_process.waitForFinished(5000)) {
        m_process.kill();
        m_process.waitForFinished(5000);
    }
    return m_process.exitStatus() == QProcess::NormalExit;
}

SimControlReply SupportSimProcess::control(const QByteArray &verb, const QString &path,
                                           const QByteArray &body,
                                           const QList<std::pair<QByteArray, QByteArray>> &headers)
{
    QUrl url = m_baseUrl;
    const qsizetype question = path.indexOf(QLatin1Char('?'));
    url.setPath(path.left(question));
    if (question >= 0)
        url.setQuery(path.mid(question + 1));
    QNetworkRequest request(url);
    request.setHeader(QNetworkRequest::ContentTypeHeader, QByteArrayLiteral("application/json"));
    request.setTransferTimeout(5000);
    for (const auto &[name, value] : headers)
        request.setRawHeader(name, value);
    std::unique_ptr<QNetworkReply, DeleteLater> reply(
        m_network.sendCustomRequest(request, verb, body));
    QSignalSpy finished(reply.get(), &QNetworkReply::finished);
    if (!reply->isFinished() && !finished.wait(6000))
        qFatal("the sim did not answer %s %s", verb.constData(), qPrintable(path));
    return {reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt(),
            QJsonDocument::fromJson(reply->readAll()).object()};
}

bool SupportSimProcess::putFaults(const QByteArray &json, QString *error)
{
    const SimControlReply reply = control("PUT", QStringLiteral("/sim/faults"), json);
    if (reply.status == 200)
        return true;
    *error = QString::fromUtf8(QJsonDocument(reply.body).toJson());
    return false;
}

QJsonObject SupportSimProcess::stats()
{
    return control("GET", QStringLiteral("/sim/stats")).body;
}

} // namespace AgentConsole::Testing
