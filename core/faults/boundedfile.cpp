#include "boundedfile.h"

#include <QCoreApplication>
#include <QFile>

#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace AgentConsole {
namespace {

// Why a file is refused, in the window's language (docs/TRANSLATIONS.md); agent-cli installs
// no translator and keeps the English source.
struct BoundedFileWords
{
    Q_DECLARE_TR_FUNCTIONS(AgentConsole::BoundedFile)
};

// The system's reason in the same words: the usual ones are worded here, in the C library's
// own English (agent-cli reads as before), the rare ones stay its text.
QString systemReason(int code)
{
    switch (code) {
    case ENOENT:
        return BoundedFileWords::tr("No such file or directory");
    case EACCES:
        return BoundedFileWords::tr("Permission denied");
    case EISDIR:
        return BoundedFileWords::tr("Is a directory");
    default:
        return QString::fromLocal8Bit(std::strerror(code));
    }
}

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
    return bytes % (1024 * 1024) == 0 ? BoundedFileWords::tr("%1 MiB").arg(bytes / (1024 * 1024))
                                      : BoundedFileWords::tr("%1 bytes").arg(bytes);
}

} // namespace

// Qt's own English words (QJsonParseError::errorString()), so that agent-cli reads as before.
QString jsonParseReason(const QJsonParseError &error)
{
    switch (error.error) {
    case QJsonParseError::NoError:
        return {};
    case QJsonParseError::UnterminatedObject:
        return BoundedFileWords::tr("unterminated object");
    case QJsonParseError::MissingNameSeparator:
        return BoundedFileWords::tr("missing name separator");
    case QJsonParseError::UnterminatedArray:
        return BoundedFileWords::tr("unterminated array");
    case QJsonParseError::MissingValueSeparator:
        return BoundedFileWords::tr("missing value separator");
    case QJsonParseError::IllegalValue:
        return BoundedFileWords::tr("illegal value");
    case QJsonParseError::TerminationByNumber:
        return BoundedFileWords::tr("invalid termination by number");
    case QJsonParseError::IllegalNumber:
        return BoundedFileWords::tr("illegal number");
    case QJsonParseError::IllegalEscapeSequence:
        return BoundedFileWords::tr("invalid escape sequence");
    case QJsonParseError::IllegalUTF8String:
        return BoundedFileWords::tr("invalid UTF8 string");
    case QJsonParseError::UnterminatedString:
        return BoundedFileWords::tr("unterminated string");
    case QJsonParseError::MissingObject:
        return BoundedFileWords::tr("object is missing after a comma");
    case QJsonParseError::DeepNesting:
        return BoundedFileWords::tr("too deeply nested document");
    case QJsonParseError::DocumentTooLarge:
        return BoundedFileWords::tr("too large document");
    case QJsonParseError::GarbageAtEnd:
        return BoundedFileWords::tr("garbage at the end of the document");
    }
    return error.errorString();
}

std::optional<QByteArray> readBoundedRegularFile(const QString &path, qint64 maxBytes,
                                                 QString *error)
{
    const auto fail = [&](const QString &reason) {
        if (error)
            *error = BoundedFileWords::tr("%1: %2").arg(path, reason);
        return std::nullopt;
    };
    // O_NONBLOCK: opening a FIFO without a writer returns at once instead of waiting for one;
    // the type check below then refuses it. Regular files ignore the flag.
    const QByteArray native = QFile::encodeName(path);
    const FileDescriptor fd(::open(native.constData(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
    if (fd.get() < 0)
        return fail(BoundedFileWords::tr("cannot open it (%1)").arg(systemReason(errno)));
    struct stat info = {};
    if (::fstat(fd.get(), &info) != 0)
        return fail(BoundedFileWords::tr("cannot read it (%1)").arg(systemReason(errno)));
    if (!S_ISREG(info.st_mode))
        return fail(BoundedFileWords::tr("not a regular file"));
    if (info.st_size > maxBytes)
        return fail(BoundedFileWords::tr("larger than %1").arg(mebibytes(maxBytes)));
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
            return fail(BoundedFileWords::tr("cannot read it (%1)").arg(systemReason(errno)));
        if (got == 0)
            break;
        total += got;
    }
    if (total > maxBytes)
        return fail(BoundedFileWords::tr("larger than %1").arg(mebibytes(maxBytes)));
    contents.truncate(total);
    return contents;
}

} // namespace AgentConsole
