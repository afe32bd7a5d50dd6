#include "interruptedturnsbanner.h"

#include "ui/common/noticebanner.h"

#include <QPushButton>
#include <QVBoxLayout>

namespace AgentConsole {

InterruptedTurnsBanner::InterruptedTurnsBanner(QWidget *parent)
    : QWidget(parent)
{
    m_banner = new NoticeBanner(this);
    m_resume = m_banner->addButton(tr("Resume"));
    m_resume->setObjectName(QStringLiteral("resumeInterruptedButton"));
    m_resume->setToolTip(tr("Carry the interrupted requests on, one at a time, from their "
                            "last checkpoint"));
    m_dismiss = m_banner->addButton(tr("Dismiss"));
    m_dismiss->setObjectName(QStringLiteral("dismissInterruptedButton"));
    m_dismiss->setToolTip(tr("Stop offering them; their records are kept"));
    connect(m_resume, &QPushButton::clicked, this, &InterruptedTurnsBanner::resumeRequested);
    connect(m_dismiss, &QPushButton::clicked, this, &InterruptedTurnsBanner::dismissRequested);

    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_banner);
    setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Maximum);
    setVisible(false);
}

QString InterruptedTurnsBanner::questionPreview(const QString &question, int characters)
{
    const QString line = question.simplified(); // one line: newlines and runs of spaces go
    if (line.size() <= characters)
        return line;
    return line.left(characters - 1).trimmed() + QChar(0x2026);
}

void InterruptedTurnsBanner::showOffer(int count, const QString &firstQuestion)
{
    const QString preview = questionPreview(firstQuestion);
    const QString title = tr("%n interrupted request(s) can be resumed \u2014 \u201c%1\u201d",
                             nullptr, count)
                              .arg(preview);
    const QString detail = count == 1
        ? tr("The console stopped before answering it. Resume carries it on from its "
             "last checkpoint: tools that already ran are not run again, and a "
             "ticket you had not confirmed asks you again.")
        : tr("The console stopped before answering them. Resume carries them on one "
             "at a time from their last checkpoint: tools that already ran are not "
             "run again, and a ticket you had not confirmed asks you again.");
    m_banner->showNotice(title, detail, Tone::Warning);
    m_resume->setVisible(true);
    m_dismiss->setVisible(true);
    setAccessibleName(text());
    setVisible(true);
}

void InterruptedTurnsBanner::showProgress(int current, int total, const QString &question)
{
    m_banner->showNotice(tr("Resuming interrupted request %1 of %2 \u2014 \u201c%3\u201d")
                             .arg(current)
                             .arg(total)
                             .arg(questionPreview(question)),
                         tr("Its answer appears in the conversation below, marked "
                            "\u201cResumed\u201d. Cancel stops it and offers the rest again."),
                         Tone::Info);
    m_resume->setVisible(false);
    m_dismiss->setVisible(false);
    setAccessibleName(text());
    setVisible(true);
}

void InterruptedTurnsBanner::clearOffer()
{
    m_banner->clearNotice();
    setVisible(false);
}

void InterruptedTurnsBanner::setResumeEnabled(bool enabled)
{
    m_resume->setEnabled(enabled);
}

QString InterruptedTurnsBanner::text() const
{
    return m_banner->text();
}

} // namespace AgentConsole
