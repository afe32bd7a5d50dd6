#include "boundedfile.h"

#include <QFile>

#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace AgentConsole {
namespace {

// Closes the descriptor on every return path.
class FileDescriptor final
{
public:
    explicit FileDescriptor(int fd)
        : m_fd(fd)
    {
    }
    ~FileDescriptor()
    {
        if (m_fd >= 0)
            ::close(m_fd);
    }
    FileDescriptor(const FileDescriptor &) = delete;
    FileDescriptor &operator=(const FileDescriptor &) = delete;
    int get() const { return m_fd; }

private:
    int m_fd;
};

QString mebibytes(qint64 bytes)
{
    return bytes % (1024 * 1024) == 0 ? QStringLiteral("%1 MiB").arg(bytes / (1024 * 1024))
                                      : QStringLiteral("%1 bytes").arg(bytes);
}

} // namespace

std::optional<QByteArray> readBoundedRegularFile(const QString &path, qint64 maxBytes,
                                                 QString *error)
{
    const auto fail = [&](const QString &reason) {
        if (error)
            *error = QStringLiteral("%1: %2").arg(path, reason);
        return std::nullopt;
    };
    // O_NONBLOCK: opening a FIFO without a writer returns at once instead of waiting for one;
    // the type check below then refuses it. Regular files ignore the flag.
    const QByteArray native = QFile::encodeName(path);
    const FileDescriptor fd(::open(native.constData(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
    if (fd.get() < 0)
        return fail(QStringLiteral("cannot open it (%1)").arg(QString::fromLocal8Bit(
                                                               std::strerror(errno))));
    struct stat info = {};
    if (::fstat(fd.get(), &info) != 0)
        return fail(QStringLiteral("cannot read it (%1)").arg(QString::fromLocal8Bit(
                                                               std::strerror(errno))));
    if (!S_ISREG(info.st_mode))
        return fail(QStringLiteral("not a regular file"));
    if (info.st_size > maxBytes)
        return fail(QStringLiteral("larger than %1").arg(mebibytes(maxBytes)));
    // Read at most one byte more than allowed: a file that grows while it is read is caught
    // without holding more than the limit.
    QByteArray contents;
    contents.resize(maxBytes + 1);
    qint64 total = 0;
    while (total < contents.size()) {
        const ssize_t got = ::read(fd.get(), contents.data() + total,
                                   std::size_t(contents.size() - total));
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0)
            return fail(QStringLiteral("cannot read it (%1)").arg(QString::fromLocal8Bit(
                                                                   std::strerror(errno))));
        if (got == 0)
            break;
        total += got;
    }
    if (total > maxBytes)
        return fail(QStringLiteral("larger than %1").arg(mebibytes(maxBytes)));
    contents.truncate(total);
    return contents;
}

} // namespace AgentConsole
