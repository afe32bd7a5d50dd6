#include "interruptedturnsbanner.h"

#include <QEvent>
#include <QHBoxLayout>
#include <QLabel>
#include <QPainter>
#include <QPushButton>
#include <QVBoxLayout>

namespace AgentConsole {

InterruptedTurnsBanner::InterruptedTurnsBanner(QWidget *parent)
    : QWidget(parent)
{
    m_title = new QLabel(this);
    m_title->setObjectName(QStringLiteral("interruptedTurnsTitle"));
    m_title->setTextFormat(Qt::PlainText);
    m_title->setWordWrap(true);
    QFont titleFont = m_title->font();
    titleFont.setWeight(QFont::DemiBold);
    m_title->setFont(titleFont);

    m_detail = new QLabel(this);
    m_detail->setTextFormat(Qt::PlainText);
    m_detail->setWordWrap(true);
    m_detail->setTextInteractionFlags(Qt::TextSelectableByMouse);

    m_resume = new QPushButton(tr("Resume"), this);
    m_resume->setObjectName(QStringLiteral("resumeInterruptedButton"));
    m_resume->setAutoDefault(false);
    m_resume->setToolTip(tr("Carry the interrupted requests on, one at a time, from their "
                            "last checkpoint"));
    m_dismiss = new QPushButton(tr("Dismiss"), this);
    m_dismiss->setObjectName(QStringLiteral("dismissInterruptedButton"));
    m_dismiss->setAutoDefault(false);
    m_dismiss->setToolTip(tr("Stop offering them; their records are kept"));
    connect(m_resume, &QPushButton::clicked, this, &InterruptedTurnsBanner::resumeRequested);
    connect(m_dismiss, &QPushButton::clicked, this, &InterruptedTurnsBanner::dismissRequested);

    auto *text = new QVBoxLayout;
    text->setContentsMargins(0, 0, 0, 0);
    text->setSpacing(2);
    text->addWidget(m_title);
    text->addWidget(m_detail);

    auto *layout = new QHBoxLayout(this);
    layout->setContentsMargins(14, 10, 14, 10);
    layout->setSpacing(8);
    layout->addLayout(text, 1);
    layout->addWidget(m_resume, 0, Qt::AlignVCenter);
    layout->addWidget(m_dismiss, 0, Qt::AlignVCenter);

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
    m_tone = Tone::Warning;
    m_title->setText(count == 1
                         ? tr("1 interrupted request can be resumed \u2014 \u201c%1\u201d")
                               .arg(preview)
                         : tr("%1 interrupted requests can be resumed \u2014 \u201c%2\u201d")
                               .arg(count)
                               .arg(preview));
    m_detail->setText(
        count == 1 ? tr("The console stopped before answering it. Resume carries it on from its "
                        "last checkpoint: tools that already ran are not run again, and a "
                        "ticket you had not confirmed asks you again.")
                   : tr("The console stopped before answering them. Resume carries them on one "
                        "at a time from their last checkpoint: tools that already ran are not "
                        "run again, and a ticket you had not confirmed asks you again."));
    m_resume->setVisible(true);
    m_dismiss->setVisible(true);
    setAccessibleName(text());
    applyColours();
    setVisible(true);
    update();
}

void InterruptedTurnsBanner::showProgress(int current, int total, const QString &question)
{
    m_tone = Tone::Info;
    m_title->setText(tr("Resuming interrupted request %1 of %2 \u2014 \u201c%3\u201d")
                         .arg(current)
                         .arg(total)
                         .arg(questionPreview(question)));
    m_detail->setText(tr("Its answer appears in the conversation below, marked "
                         "\u201cResumed\u201d. Cancel stops it and offers the rest again."));
    m_resume->setVisible(false);
    m_dismiss->setVisible(false);
    setAccessibleName(text());
    applyColours();
    setVisible(true);
    update();
}

void InterruptedTurnsBanner::clearOffer()
{
    m_title->clear();
    m_detail->clear();
    setVisible(false);
}

void InterruptedTurnsBanner::setResumeEnabled(bool enabled)
{
    m_resume->setEnabled(enabled);
}

QString InterruptedTurnsBanner::text() const
{
    if (m_detail->text().isEmpty())
        return m_title->text();
    return m_title->text() + QLatin1Char('\n') + m_detail->text();
}

void InterruptedTurnsBanner::paintEvent(QPaintEvent *)
{
    const Internal::ToneColors colors = Internal::toneColors(m_tone, palette());
    QPainter painter(this);
    painter.setRenderHint(QPainter::Antialiasing);
    painter.setPen(QPen(colors.border, 1.0));
    painter.setBrush(colors.background);
    painter.drawRoundedRect(QRectF(rect()).adjusted(0.5, 0.5, -0.5, -0.5), 6, 6);
}

void InterruptedTurnsBanner::changeEvent(QEvent *event)
{
    if (event->type() == QEvent::PaletteChange)
        applyColours();
    QWidget::changeEvent(event);
}

void InterruptedTurnsBanner::applyColours()
{
    const Internal::ToneColors colors = Internal::toneColors(m_tone, palette());
    for (QLabel *label : {m_title, m_detail}) {
        QPalette text = label->palette();
        text.setColor(QPalette::WindowText, colors.foreground);
        label->setPalette(text);
    }
}

} // namespace AgentConsole
