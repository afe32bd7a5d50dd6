#include "settingswriter.h"

#include "../async/await.h"

#include <QSettings>
#include <QThreadPool>
#include <QtConcurrent/QtConcurrentRun>

namespace AgentConsole {

SettingsWritten writeSettingsNow(const QString &path, const SettingsWriter::Change &change,
                                 const SettingsWriter::Check &check)
{
    using Outcome = SettingsWritten::Outcome;
    if (check) {
        if (QString problem = check(); !problem.isEmpty())
            return {Outcome::Refused, problem};
    }
    QSettings settings(path, QSettings::IniFormat);
    if (settings.status() != QSettings::NoError)
        return {Outcome::Unreadable, {}};
    change(settings);
    settings.sync();
    if (settings.status() != QSettings::NoError)
        return {Outcome::Unwritten, {}};
    return {};
}

SettingsWriter::SettingsWriter()
    : m_pool(std::make_unique<QThreadPool>())
{
    // One thread: the writes keep the order they were asked in.
    m_pool->setMaxThreadCount(1);
    m_pool->setObjectName(QStringLiteral("settings writer"));
}

SettingsWriter::~SettingsWriter()
{
    m_pool->waitForDone();
}

QFuture<SettingsWritten> SettingsWriter::write(const QString &path, Change change, Check check)
{
    return QtConcurrent::run(m_pool.get(),
                             [path, change = std::move(change), check = std::move(check)] {
                                 return writeSettingsNow(path, change, check);
                             });
}

void SettingsWriter::write(const QString &path, Change change, QObject *context,
                           std::function<void(const SettingsWritten &)> done, Check check)
{
    await(write(path, std::move(change), std::move(check)), context, std::move(done));
}

} // namespace AgentConsole
