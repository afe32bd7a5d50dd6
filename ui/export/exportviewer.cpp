#include "exportviewer.h"

#include "ui/common/consolepalette.h"
#include "ui/common/noticebanner.h"
#include "ui/common/staffwords.h"
#include "ui/transcript/transcriptview.h"

#include "core/export/conversationexport.h"
#include "core/export/exportfile.h"

#include <QClipboard>
#include <QDir>
#include <QGuiApplication>
#include <QLocale>
#include <QPushButton>
#include <QFileInfo>
#include <QJsonObject>
#include <QSet>
#include <QVBoxLayout>

namespace AgentConsole {

ExportViewer::ExportViewer(const ConversationExport &exported, const QString &sourcePath,
                           QWidget *parent)
    : QWidget(parent, Qt::Window)
    , m_sourcePath(sourcePath)
    , m_turns(exported.turns())
    , m_exportedOn(exported.exportedAt().toLocalTime().date())
{
    setAttribute(Qt::WA_DeleteOnClose);
    setWindowTitle(
        tr("%1 — exported conversation (read-only)").arg(QFileInfo(sourcePath).fileName()));
    resize(900, 700);

    const QJsonObject environment = exported.environment();
    const QJsonObject faults = exported.faults();
    const auto field = [](const QJsonObject &object, const char *key) {
        const QString value = object.value(QLatin1String(key)).toString();
        return value.isEmpty() ? QStringLiteral("—") : value;
    };
    const QStringList details{
        tr("From %1, exported %2 (UTC); %n turn(s).", nullptr, int(exported.turns().size()))
            .arg(QDir::toNativeSeparators(sourcePath),
                 exported.exportedAt().toUTC().toString(QStringLiteral("yyyy-MM-dd HH:mm:ss"))),
        tr("Agent Console %1 · Qt %2 · %3 · model %4 (%5) · backend %6")
            .arg(field(environment, "appVersion"), field(environment, "qtVersion"),
                 field(environment, "os"), field(environment, "model"),
                 StaffWords::dependency(field(environment, "provider")),
                 StaffWords::dependency(field(environment, "backend"))),
        faults.value(QLatin1String("active")).toBool()
            ? tr("Faults active then: %1").arg(exported.faultSummary(true))
            : tr("No faults were active."),
    };
    // Parented at once: a banner shown without a parent is a window of its own for a moment,
    // and a button added to it after that stays hidden.
    m_banner = new NoticeBanner(this);
    m_banner->setObjectName(QStringLiteral("readOnlyBanner"));
    m_copyCaseNote = m_banner->addButton(tr("Copy as case note"));
    m_copyCaseNote->setObjectName(QStringLiteral("copyCaseNoteButton"));
    m_copyCaseNote->setToolTip(tr("Copy a short summary of these turns for a ticket: per "
                                  "question, what was found, what could not be looked up and "
                                  "the tickets made."));
    connect(m_copyCaseNote, &QPushButton::clicked, this, &ExportViewer::copyCaseNote);
    m_banner->showNotice(tr("Read-only: an exported conversation"),
                         details.join(QLatin1Char('\n')), Tone::Info);

    m_transcript = new TranscriptView;
    m_transcript->setObjectName(QStringLiteral("exportTranscript"));
    // The same request may appear twice (asked again under its id): each keeps its own row.
    QSet<QString> shown;
    for (TurnResult turn : exported.turns()) {
        QString key = turn.requestId;
        for (int n = 2; shown.contains(key); ++n)
            key = turn.requestId + QStringLiteral(" #%1").arg(n);
        shown.insert(key);
        turn.requestId = key;
        m_transcript->addQuestion(key, turn.question);
        for (const ToolCallRecord &call : std::as_const(turn.toolCalls))
            m_transcript->updateToolCall(key, call);
        m_transcript->appendAnswer(key, turn.answer);
        m_transcript->finishTurn(turn);
    }

    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 12, 0, 0);
    layout->setSpacing(8);
    auto *bannerRow = new QHBoxLayout;
    bannerRow->setContentsMargins(20, 0, 20, 0);
    bannerRow->addWidget(m_banner);
    layout->addLayout(bannerRow);
    layout->addWidget(m_transcript, 1);
}

void ExportViewer::copyCaseNote()
{
    // The export was redacted when written; the note is redacted by the rules once more.
    const Language language = QLocale().language() == QLocale::Chinese ? Language::Chinese
                                                                       : Language::English;
    m_copyCaseNote->setEnabled(false);
    await(caseNoteText(nullptr, m_turns, Redactor(), language,
                       m_exportedOn.isValid() ? m_exportedOn : QDate::currentDate()),
          this, [this](const QString &note) {
              QGuiApplication::clipboard()->setText(note);
              m_copyCaseNote->setText(tr("Copied"));
              m_copyCaseNote->setEnabled(true);
              Q_EMIT caseNoteCopied();
          });
}

} // namespace AgentConsole
