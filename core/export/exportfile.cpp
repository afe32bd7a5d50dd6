#include "exportfile.h"

#include "../async/fileworkpool.h"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QSaveFile>
#include <QtConcurrent/QtConcurrentRun>

namespace AgentConsole {
namespace {

struct ExportFileWords
{
    Q_DECLARE_TR_FUNCTIONS(AgentConsole::ConversationExport)
};

// The first line of every Markdown bug report (ConversationExport::toMarkdown).
constexpr QByteArrayView kMarkdownHeading = "# Agent Console conversation export";

bool startsAsBugReport(const QString &path)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return false;
    return file.read(kMarkdownHeading.size()) == kMarkdownHeading;
}

} // namespace

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

QFuture<ExportOpened> openExportFile(QThreadPool *pool, const QString &path)
{
    return QtConcurrent::run(pool ? pool : fileWorkPool(), [path] {
        ExportOpened opened;
        const QFileInfo info(path);
        opened.markdown = ConversationExport::formatForPath(path)
                == ConversationExport::Format::Markdown
            || (info.isFile() && startsAsBugReport(path));
        if (!opened.markdown) {
            opened.read.value = ConversationExport::fromFile(path, &opened.read.error);
            return opened;
        }
        const QString json = info.dir().filePath(info.completeBaseName()
                                                 + QStringLiteral(".json"));
        if (json != path && QFileInfo(json).isFile())
            opened.jsonBeside = json;
        return opened;
    });
}

QFuture<QString> caseNoteText(QThreadPool *pool, QList<TurnResult> turns, Redactor redactor,
                              Language language, QDate date)
{
    return QtConcurrent::run(pool ? pool : fileWorkPool(),
                             [turns = std::move(turns), redactor = std::move(redactor), language,
                              date] { return CaseNote::text(turns, redactor, language, date); });
}

QFuture<ExportWritten> writeCaseNoteFile(QThreadPool *pool, QList<TurnResult> turns,
                                         Redactor redactor, Language language, QDate date,
                                         const QString &path)
{
    return QtConcurrent::run(
        pool ? pool : fileWorkPool(),
        [turns = std::move(turns), redactor = std::move(redactor), language, date, path] {
            ExportWritten answer;
            const auto fail = [&answer, &path](const QString &why) {
                answer.error = ExportFileWords::tr("cannot export to %1: %2").arg(path, why);
                return answer;
            };
            if (QFileInfo(path).isDir())
                return fail(ExportFileWords::tr("it is a directory"));
            const QByteArray bytes = CaseNote::text(turns, redactor, language, date).toUtf8();
            QSaveFile file(path);
            if (!file.open(QIODevice::WriteOnly))
                return fail(file.errorString());
            if (file.write(bytes) != bytes.size() || !file.commit())
                return fail(file.errorString());
            answer.written = true;
            return answer;
        });
}

} // namespace AgentConsole
