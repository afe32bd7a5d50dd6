#include "policysource.h"

#include "managedpolicy.h"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QStandardPaths>

namespace AgentConsole {
namespace {

struct PolicySourceWords
{
    Q_DECLARE_TR_FUNCTIONS(AgentConsole::PolicySource)
};

} // namespace

FilePolicySource::FilePolicySource(QString path)
    : m_path(std::move(path))
{
}

QString FilePolicySource::relativePath()
{
    return QStringLiteral("AgentConsole/policy.json");
}

QStringList FilePolicySource::systemDirectories()
{
#if defined(Q_OS_UNIX) && !defined(Q_OS_MACOS)
    // The XDG Base Directory specification: $XDG_CONFIG_DIRS, else /etc/xdg. Relative entries
    // are ignored, as the specification asks.
    QStringList directories;
    const QString variable = qEnvironmentVariable("XDG_CONFIG_DIRS");
    for (const QString &directory : variable.split(QLatin1Char(':'), Qt::SkipEmptyParts)) {
        if (QDir::isAbsolutePath(directory))
            directories.append(QDir::cleanPath(directory));
    }
    if (directories.isEmpty())
        directories.append(QStringLiteral("/etc/xdg"));
    return directories;
#else
    // The system-wide locations only: the first is the user's own.
    QStringList directories = QStandardPaths::standardLocations(
        QStandardPaths::GenericConfigLocation);
    if (!directories.isEmpty())
        directories.removeFirst();
    return directories;
#endif
}

std::shared_ptr<const PolicySource> FilePolicySource::systemWide()
{
    // Looked for when read (on a worker thread), not when made.
    return std::make_shared<FilePolicySource>(QString());
}

QString FilePolicySource::systemWidePath()
{
    const QStringList directories = systemDirectories();
    for (const QString &directory : directories) {
        const QString path = QDir(directory).filePath(relativePath());
        // A name that is there but is no file is found too: it is refused, not skipped.
        if (QFileInfo(path).exists() || QFileInfo(path).isSymLink())
            return path;
    }
    // None: the first directory's, which read() finds missing.
    return QDir(directories.value(0)).filePath(relativePath());
}

PolicyText FilePolicySource::read() const
{
    if (m_path.isEmpty())
        return FilePolicySource(systemWidePath()).read();
    PolicyText result;
    const QFileInfo info(m_path);
    if (!info.exists() && !info.isSymLink())
        return result; // no policy: the console as it always was
    result.origin = QDir::toNativeSeparators(m_path);
    const auto unreadable = [&](const QString &why) {
        result.status = PolicyText::Status::Unreadable;
        result.problem = PolicySourceWords::tr("the team policy %1 %2").arg(result.origin, why);
        return result;
    };
    if (!info.isFile())
        return unreadable(PolicySourceWords::tr("is not a regular file"));
    if (info.size() > ManagedPolicy::maxBytes)
        return unreadable(PolicySourceWords::tr("is larger than 1 MiB"));
    QFile file(m_path);
    if (!file.open(QIODevice::ReadOnly))
        return unreadable(PolicySourceWords::tr("cannot be read"));
    // Bounded however the file grows while it is read.
    result.text = file.read(ManagedPolicy::maxBytes + 1);
    if (result.text.size() > ManagedPolicy::maxBytes)
        return unreadable(PolicySourceWords::tr("is larger than 1 MiB"));
    result.status = PolicyText::Status::Found;
    return result;
}

} // namespace AgentConsole
