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
    static const QRegularExpression ready(
        QStringLiteral("support-sim listening on (http://127\\.0\\.0\\.1:(\\d+))\n"));
    QByteArray output;
    QRegularExpressionMatch match;
    QSignalSpy readable(&m_process, &QProcess::readyReadStandardOutput);
    for (int waits = 0; waits < 20 && !match.hasMatch(); ++waits) {
        output += m_process.readAllStandardOutput();
        match = ready.match(QString::fromUtf8(output));
        if (!match.hasMatch() && m_process.state() == QProcess::Running)
            readable.wait(500);
    }
    if (!match.hasMatch() || match.captured(2).toInt() <= 0) {
        *error = QStringLiteral("support-sim did not say it was listening: ")
            + QString::fromUtf8(output);
        return false;
    }
    m_baseUrl = QUrl(match.captured(1));
    return true;
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
