#pragma once

#include <QWidget>

namespace AgentConsole {

class ConversationExport;
class NoticeBanner;
class TranscriptView;

// An exported conversation shown read-only, in a window of its own: a banner that says so
// (with where and when it was exported, the environment and the faults then active), and the
// turns in a TranscriptView with their tool cards and attempt timelines. There is no input:
// nothing here asks, confirms or runs anything.
class ExportViewer final : public QWidget
{
    Q_OBJECT

public:
    ExportViewer(
        const ConversationExport &exported, const QString &sourcePath, QWidget *parent = nullptr);

    TranscriptView *transcript() const { return m_transcript; }
    NoticeBanner *banner() const { return m_banner; }
    QString sourcePath() const { return m_sourcePath; }

private:
    QString m_sourcePath;
    NoticeBanner *m_banner = nullptr;
    TranscriptView *m_transcript = nullptr;
};

} // namespace AgentConsole
