#include "exportfile.h"

#include "../async/fileworkpool.h"

#include <QtConcurrent/QtConcurrentRun>

namespace AgentConsole {

QFuture<ExportWritten> writeExportFile(QThreadPool *pool, ConversationExport report,
                                       const QString &path, const QString &dataDirectory)
{
    return QtConcurrent::run(pool ? pool : fileWorkPool(),
                             [report = std::move(report), path, dataDirectory]() mutable {
        report.readIncidentLogs(dataDirectory);
        ExportWritten answer;
        answer.written = report.writeTo(path, &answer.error);
        return answer;
    });
}

QFuture<FileRead<ConversationExport>> readExportFile(QThreadPool *pool, const QString &path)
{
    return QtConcurrent::run(pool ? pool : fileWorkPool(), [path] {
        FileRead<ConversationExport> read;
        read.value = ConversationExport::fromFile(path, &read.error);
        return read;
    });
}

} // namespace AgentConsole
