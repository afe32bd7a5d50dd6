#pragma once

// Screenshots the UI suites save for people to look at: into $AGENT_CONSOLE_SCREENSHOT_DIR, or
// the build tree's screenshots/ (AGENT_CONSOLE_SCREENSHOT_DEFAULT_DIR, set by CMake).
#include "transcriptwait.h"

#include <QCoreApplication>
#include <QDir>
#include <QEvent>
#include <QString>
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

// A screenshot waits until the transcripts have shown what core reported and nested layouts,
// which settle over several event-loop passes, are done. Returns the file's path, empty when
// it could not be written.
inline QString saveScreenshot(QWidget *widget, const QString &fileName)
{
    waitUntilShown(widget);
    for (int pass = 0; pass < 16; ++pass)
        QCoreApplication::sendPostedEvents(nullptr, QEvent::LayoutRequest);
    const QString path = QDir(screenshotDirectory()).absoluteFilePath(fileName);
    if (!widget->grab().save(path))
        return {};
    qInfo("screenshot: %s", qPrintable(path));
    return path;
}

} // namespace AgentConsole::Testing
