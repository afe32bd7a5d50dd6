#pragma once

// Screenshots the UI suites save for people to look at: into $AGENT_CONSOLE_SCREENSHOT_DIR, or
// the build tree's screenshots/ (AGENT_CONSOLE_SCREENSHOT_DEFAULT_DIR, set by CMake).
#include "ui/transcriptview.h"

#include <QCoreApplication>
#include <QDir>
#include <QEvent>
#include <QString>
#include <QTest>
#include <QWidget>

namespace AgentConsole::Testing {

inline QString screenshotDirectory()
{
    QString dir = qEnvironmentVariable("AGENT_CONSOLE_SCREENSHOT_DIR");
#ifdef AGENT_CONSOLE_SCREENSHOT_DEFAULT_DIR
    if (dir.isEmpty())
        dir = QStringLiteral(AGENT_CONSOLE_SCREENSHOT_DEFAULT_DIR);
#endif
    if (dir.isEmpty())
        dir = QDir::current().absoluteFilePath(QStringLiteral("screenshots"));
    QDir().mkpath(dir);
    return dir;
}

// A transcript shows what core reported at the next turns of the event loop, and nested
// layouts settle over several passes: a screenshot waits until neither is pending. Returns the
// file's path, empty when it could not be written.
inline QString saveScreenshot(QWidget *widget, const QString &fileName)
{
    const QList<TranscriptView *> transcripts = widget->findChildren<TranscriptView *>();
    QTest::qWaitFor(
        [&] {
            for (const TranscriptView *transcript : transcripts) {
                if (transcript->hasUnshownChanges())
                    return false;
            }
            return true;
        },
        5000);
    for (int pass = 0; pass < 16; ++pass)
        QCoreApplication::sendPostedEvents(nullptr, QEvent::LayoutRequest);
    const QString path = QDir(screenshotDirectory()).absoluteFilePath(fileName);
    if (!widget->grab().save(path))
        return {};
    qInfo("screenshot: %s", qPrintable(path));
    return path;
}

} // namespace AgentConsole::Testing
