#pragma once

#include "core/turn/turnresult.h"

#include <QDate>
#include <QList>
#include <QWidget>

class QPushButton;

namespace AgentConsole {

class ConversationExport;
class NoticeBanner;
class TranscriptView;

// An exported conversation shown read-only, in a window of its own: a banner that says so
// (with where and when it was exported, the environment and the faults then active), and the
// turns in a TranscriptView with their tool cards and attempt timelines. There is no input:
// nothing here asks, confirms or runs anything. The banner's button copies the turns as a case
// note (core/export/casenote.h) dated the day they were exported, in the window's language.
class ExportViewer final : public QWidget
{
    Q_OBJECT

public:
    ExportViewer(const ConversationExport &exported, const QString &sourcePath,
                 QWidget *parent = nullptr);

    TranscriptView *transcript() const { return m_transcript; }
    NoticeBanner *banner() const { return m_banner; }
    QString sourcePath() const { return m_sourcePath; }
    QPushButton *copyCaseNoteButton() const { return m_copyCaseNote; }

Q_SIGNALS:
    // The case note is on the clipboard (made on the file pool, then copied).
    void caseNoteCopied();

private:
    void copyCaseNote();

    QString m_sourcePath;
    QList<TurnResult> m_turns; // as exported
    QDate m_exportedOn;
    QPushButton *m_copyCaseNote = nullptr;
    NoticeBanner *m_banner = nullptr;
    TranscriptView *m_transcript = nullptr;
};

} // namespace AgentConsole
