#include "storagefull.h"

#include <QFileInfo>
#include <QSqlError>
#include <QStorageInfo>

namespace AgentConsole {

namespace {

constexpr qint64 kFullDiskBytes = 1024 * 1024;
constexpr int kSqliteFull = 13;

} // namespace

bool sqliteReportsFullDisk(const QSqlError &error)
{
    return (error.nativeErrorCode().toInt() & 0xff) == kSqliteFull;
}

bool diskIsFull(const QString &path)
{
    const QFileInfo where(path);
    const QStorageInfo disk(where.isDir() ? where.absoluteFilePath() : where.absolutePath());
    return disk.isValid() && disk.bytesAvailable() >= 0 && disk.bytesAvailable() < kFullDiskBytes;
}

} // namespace AgentConsole
