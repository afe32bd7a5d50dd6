#include "exportfile.h"

#include <QtConcurrent/QtConcurrentRun>

namespace AgentConsole {

QFuture<ExportWritten> writeExportFile(QThreadPool *pool, ConversationExport report,
                                       const QString &path, const QString &dataDirectory)
{
    return QtConcurrent::run(pool, [report = std::move(report), path, dataDirectory]() mutable {
        report.readIncidentLogs(dataDirectory);
        ExportWritten answer;
        answer.written = report.writeTo(path, &answer.error);
        return answer;
    });
}

QFuture<FileRead<ConversationExport>> readExportFile(QThreadPool *pool, const QString &path)
{
    return QtConcurrent::run(pool, [path] {
        FileRead<ConversationExport> read;
        read.value = ConversationExport::fromFile(path, &read.error);
        return read;
    });
}

} // namespace AgentConsole
