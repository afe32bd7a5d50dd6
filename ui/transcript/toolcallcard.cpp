#include "toolcallcard.h"

#include "attempttimeline.h"
#include "confirmationpanel.h"
#include "ui/common/consolepalette.h"
#include "ui/common/statuschip.h"
#include "toolcallcardaccessible.h"
#include "toolcalltext.h"
#include "turntext.h"
#include "ui/common/keyboardfocusring.h"
#include "ui/common/roundedframe.h"
#include "ui/common/pressonenter.h"
#include "ui/common/wraplabel.h"

#include "core/turn/turnresult.h"

#include <QApplication>
#include <QClipboard>
#include <QContextMenuEvent>
#include <QEvent>
#include <QJsonObject>
#include <QMenu>
#include <QToolButton>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QKeyEvent>
#include <QLabel>
#include <QMouseEvent>
#include <QPainter>
#include <QTimer>
#include <QVBoxLayout>

namespace AgentConsole {

namespace {

constexpr int cardRadius = 8;
constexpr int frameMs = 33; // a running call's card is updated at most this often

QLabel *makeLabel(QWidget *parent, Qt::TextFormat format = Qt::PlainText)
{
    auto *label = new WrapLabel(parent);
    label->setTextFormat(format);
    return label;
}

// One line that ends in "…" where it does not fit, the whole text in its tooltip: elided
// again whenever its width changes (a label made narrower only clips).
class ElidedLine final : public QLabel
{
public:
    explicit ElidedLine(QWidget *parent)
        : QLabel(parent)
    {
        setTextFormat(Qt::PlainText);
        setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    }
    void setFullText(const QString &text)
    {
        m_full = text;
        setToolTip(text);
        elide();
    }
    QString fullText() const { return m_full; }

protected:
    void resizeEvent(QResizeEvent *event) override
    {
        QLabel::resizeEvent(event);
        elide();
    }

private:
    void elide()
    {
        const QString shown = fontMetrics().elidedText(m_full, Qt::ElideRight, width());
        if (shown != text())
            setText(shown);
    }
    QString m_full;
};

QString chevronFor(bool expanded)
{
    return expanded ? QStringLiteral("\u25BE") : QStringLiteral("\u25B8"); // ▾ ▸
}

} // namespace

ToolCallCard::ToolCallCard(QWidget *parent)
    : QWidget(parent)
{
    // Reached with Tab, never taken by a click: a click opens the card, and what the staff
    // member types next still goes to the question box.
    setFocusPolicy(Qt::TabFocus);
    setProperty(KeyboardFocusRing::kOwnFocusRing, true); // paintEvent() draws it
    setCursor(Qt::PointingHandCursor);
    setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Maximum);
    setToolTip(tr("Click to show or hide the attempt timeline"));
    Internal::installToolCallCardAccessibility(); // a button that expands

    m_chevron = makeLabel(this);
    m_chevron->setText(chevronFor(false));
    m_chevron->setFixedWidth(m_chevron->fontMetrics().horizontalAdvance(QChar(0x25BE)) + 4);

    m_name = makeLabel(this);
    // The title keeps its width; what was found gives way first.
    m_name->setSizePolicy(QSizePolicy::Minimum, QSizePolicy::Preferred);
    QFont nameFont = m_name->font();
    nameFont.setWeight(QFont::DemiBold);
    m_name->setFont(nameFont);

    m_chip = new StatusChip(this);

    // What the call found, on the title's line; elided, the whole of it in the tooltip.
    m_finding = new ElidedLine(this);
    m_finding->setObjectName(QStringLiteral("toolCallFinding"));

    m_arguments = makeLabel(this);
    m_arguments->setWordWrap(true);
    m_arguments->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);

    // The ticket a write made, who chose an MCP tool's policy, a server's question and the
    // details are made when there is one to show (setNote(), showDetails()).

    m_copy = new QToolButton(this);
    m_copy->setObjectName(QStringLiteral("copyCardButton"));
    m_copy->setText(tr("Copy"));
    m_copy->setToolTip(tr("Copy this tool call"));
    m_copy->setAutoRaise(true);
    m_copy->setFocusPolicy(Qt::TabFocus);
    m_copy->setCursor(Qt::ArrowCursor);
    pressOnEnter(m_copy);
    // Said on the button for a moment: the clipboard shows nothing of itself.
    m_copiedReset = new QTimer(this);
    m_copiedReset->setSingleShot(true);
    m_copiedReset->setInterval(1500);
    connect(m_copiedReset, &QTimer::timeout, this, [this] { m_copy->setText(tr("Copy")); });
    connect(m_copy, &QToolButton::clicked, this, [this] {
        QApplication::clipboard()->setText(copyText());
        m_copy->setText(tr("Copied"));
        m_copiedReset->start();
    });

    m_summary = makeLabel(this);
    m_summary->setAlignment(Qt::AlignRight | Qt::AlignVCenter);

    m_frame = new QTimer(this);
    m_frame->setSingleShot(true);
    m_frame->setInterval(frameMs);
    connect(m_frame, &QTimer::timeout, this, [this] {
        if (!m_pending)
            return;
        const std::unique_ptr<ToolCallRecord> pending = std::move(m_pending);
        showToolCall(*pending);
        m_frame->start();
    });

    m_attemptTimeline = new AttemptTimeline(this);
    m_attemptTimeline->setVisible(false);

    auto *layout = new QGridLayout(this);
    layout->setContentsMargins(12, 6, 12, 7);
    layout->setHorizontalSpacing(8);
    layout->setVerticalSpacing(3);
    layout->addWidget(m_chevron, 0, 0);
    // One line: the title and what was found, then the attempts, the chip and Copy.
    auto *headerLeft = new QHBoxLayout;
    headerLeft->setContentsMargins(0, 0, 0, 0);
    headerLeft->setSpacing(10);
    headerLeft->addWidget(m_name);
    headerLeft->addWidget(m_finding, 1);
    layout->addLayout(headerLeft, 0, 1);
    m_headerRight = new QHBoxLayout;
    m_headerRight->setContentsMargins(0, 0, 0, 0);
    m_headerRight->setSpacing(6);
    m_headerRight->addWidget(m_summary);
    m_headerRight->addWidget(m_chip);
    m_headerRight->addWidget(m_copy);
    layout->addLayout(m_headerRight, 0, 2, Qt::AlignRight | Qt::AlignVCenter);
    layout->addWidget(m_arguments, 1, 1, 1, 2);
    // Row 2 is the confirmation panel of a write tool, made when one is first needed.
    layout->addWidget(m_attemptTimeline, 3, 1, 1, 2);
    // Rows 4 to 7: the ticket, the question, the policy and the details, when made.
    layout->setColumnStretch(1, 1);

    applyColours();
}

ToolCallCard::~ToolCallCard() = default;

void ToolCallCard::setToolCall(const ToolCallRecord &call)
{
    // Only more of the same waits: a change of state (running, waiting for confirmation,
    // finished) is shown at once.
    const bool settled = call.state == ToolCallRecord::State::Finished
        || call.state == ToolCallRecord::State::AwaitingConfirmation;
    if (!settled && int(call.state) == m_shownState && m_frame->isActive()) {
        m_pending = std::make_unique<ToolCallRecord>(call);
        return;
    }
    m_pending.reset();
    showToolCall(call);
    if (settled)
        m_frame->stop();
    else
        m_frame->start();
}

void ToolCallCard::showToolCall(const ToolCallRecord &call)
{
    m_shownState = int(call.state);
    m_callIndex = call.index;
    const ToolCallText::Status status = ToolCallText::statusOf(call);
    m_toolName = call.name;
    m_name->setText(call.name.isEmpty() ? tr("(unnamed tool)") : ToolCallText::toolTitle(call));
    m_name->setToolTip(call.name);
    m_findingText = ToolCallText::findingText(call);
    static_cast<ElidedLine *>(m_finding)->setFullText(m_findingText);
    m_finding->setVisible(!m_findingText.isEmpty());
    m_copyText = ToolCallText::staffLine(call);
    m_chip->setStatus(status.text, status.tone);
    const bool awaiting = call.state == ToolCallRecord::State::AwaitingConfirmation;
    if (awaiting && !m_confirmation) {
        m_confirmation = new ConfirmationPanel(this);
        connect(m_confirmation, &ConfirmationPanel::answered, this,
                &ToolCallCard::confirmationAnswered);
        connect(m_confirmation, &ConfirmationPanel::existingKept, this,
                &ToolCallCard::existingKept);
        static_cast<QGridLayout *>(layout())->addWidget(m_confirmation, 2, 1, 1, 2);
        m_confirmation->show(); // counted in the card's height from now on, not a frame later
    }
    if (m_confirmation)
        m_confirmation->setToolCall(call);
    // The panel shows the arguments in full; the short line would only repeat them. While the
    // call waits there is no attempt to summarise either.
    // A call that answered at its first attempt is one line until opened; one that retried,
    // failed or runs shows its arguments and its painted attempts.
    m_trivial = call.state == ToolCallRecord::State::Finished && !m_confirmation
        && call.attemptsMade() == 1 && (call.result.success || call.result.isNotFound());
    m_arguments->setVisible(!m_confirmation && (!m_trivial || m_expanded));
    m_summary->setVisible(!awaiting);
    m_arguments->setText(ToolCallText::compactArguments(call));
    m_arguments->setToolTip(call.rawArguments);
    m_summary->setText(ToolCallText::attemptSummary(call));
    m_timelineText = ToolCallText::timeline(call).join(QLatin1Char('\n'));
    m_attemptTimeline->setToolCall(call);
    m_timelineHasContent = AttemptTimeline::hasContent(call);
    m_attemptTimeline->setVisible(m_timelineHasContent && (!m_trivial || m_expanded));

    const bool finished = call.state == ToolCallRecord::State::Finished;
    QString message;
    if (finished && !call.result.success) {
        message = call.result.message;
        for (const QString &error : call.result.errors) {
            if (!error.isEmpty() && !message.contains(error))
                message += (message.isEmpty() ? QString() : QStringLiteral(" · ")) + error;
        }
    }
    m_resultText = message;

    m_operationId = call.operationId;
    // The tool names the field of its result that says what it made (a ticket's id).
    const ToolLabels::Argument &created = call.labels.created;
    m_createdLabel = QCoreApplication::translate(ToolLabels::TranslationContext,
                                                 created.label.toUtf8().constData());
    m_ticketId = finished && call.result.success && call.result.data.isObject()
            && !created.key.isEmpty()
        ? call.result.data.toObject().value(created.key).toString()
        : QString();
    setNote(Note::Ticket,
            m_ticketId.isEmpty() ? QString() : tr("%1 %2").arg(m_createdLabel, m_ticketId));
    setNote(Note::Question, ToolCallText::questionNote(call));
    if (setNote(Note::Policy, ToolCallText::policyNote(call)))
        m_policyNote->setToolTip(ToolCallText::policyNoteToolTip(call));

    QStringList trace;
    if (!call.name.isEmpty())
        trace.append(tr("Tool %1").arg(call.name));
    if (call.worstCaseMs > 0) {
        trace.append(call.turnDeadlineLeftMs >= 0
                         ? tr("Worst case %1, turn deadline %2 left when it started")
                               .arg(ToolCallText::duration(call.worstCaseMs),
                                    ToolCallText::duration(call.turnDeadlineLeftMs))
                         : tr("Worst case %1").arg(ToolCallText::duration(call.worstCaseMs)));
    }
    if (!call.operationId.isEmpty())
        trace.append(tr("Operation %1").arg(call.operationId));
    if (!call.incidentId.isEmpty())
        trace.append(tr("Incident %1 (details in the local log)").arg(call.incidentId));
    m_traceText = trace.join(QLatin1Char('\n'));
    if (m_expanded)
        showDetails();

    setAccessibleName(
        m_findingText.isEmpty()
            ? tr("%1: %2, %3").arg(m_name->text(), status.text, m_summary->text())
            : tr("%1: %2, %3, %4")
                  .arg(m_name->text(), m_findingText, status.text, m_summary->text()));
}

// Most calls never show a ticket, a policy note or a question, and a card is made for every
// call: each label is made with the first text it has (a card had fourteen widgets, half of
// them hidden for good). True when the note is shown.
bool ToolCallCard::setNote(Note which, const QString &text)
{
    QLabel *&note = which == Note::Ticket ? m_ticket
        : which == Note::Question         ? m_questionNote
                                          : m_policyNote;
    if (!note) {
        if (text.isEmpty())
            return false;
        note = makeLabel(this);
        if (which == Note::Ticket) {
            note->setObjectName(QStringLiteral("ticketField"));
            note->setTextInteractionFlags(Qt::TextSelectableByMouse);
            note->setFocusPolicy(Qt::NoFocus); // a click opens the card, typing stays put
        } else {
            note->setObjectName(which == Note::Question ? QStringLiteral("questionNote")
                                                        : QStringLiteral("policyNote"));
            note->setWordWrap(true);
            note->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
        }
        const int row = which == Note::Ticket ? 4 : which == Note::Question ? 5 : 6;
        static_cast<QGridLayout *>(layout())->addWidget(note, row, 1, 1, 2);
    }
    note->setText(text);
    note->setVisible(!text.isEmpty());
    return !text.isEmpty();
}

// The details are made when the card is first opened, then given the call's texts whenever
// they change while it is open.
void ToolCallCard::showDetails()
{
    if (!m_details) {
        m_details = new QWidget(this);
        m_details->setObjectName(QStringLiteral("toolCallDetails"));
        m_timeline = makeLabel(m_details);
        m_timeline->setObjectName(QStringLiteral("timelineDetails"));
        m_timeline->setWordWrap(true);
        m_timeline->setTextInteractionFlags(Qt::TextSelectableByMouse);
        m_resultMessage = makeLabel(m_details);
        m_resultMessage->setWordWrap(true);
        m_trace = makeLabel(m_details);
        m_trace->setObjectName(QStringLiteral("traceDetails"));
        m_trace->setWordWrap(true);
        m_trace->setTextInteractionFlags(Qt::TextSelectableByMouse);
        QFont small = m_trace->font();
        if (small.pointSizeF() > 0)
            small.setPointSizeF(small.pointSizeF() * 0.9);
        m_trace->setFont(small);
        for (QLabel *label : {m_timeline, m_trace})
            label->setFocusPolicy(Qt::NoFocus); // a click opens the card, typing stays put

        auto *detailsLayout = new QVBoxLayout(m_details);
        detailsLayout->setContentsMargins(0, 6, 0, 0);
        detailsLayout->setSpacing(4);
        detailsLayout->addWidget(m_timeline);
        detailsLayout->addWidget(m_resultMessage);
        detailsLayout->addWidget(m_trace);
        static_cast<QGridLayout *>(layout())->addWidget(m_details, 7, 1, 1, 2);
        applyColours();
    }
    m_timeline->setText(m_timelineText);
    m_resultMessage->setText(m_resultText);
    m_resultMessage->setVisible(!m_resultText.isEmpty());
    m_trace->setText(m_traceText);
    m_trace->setVisible(!m_traceText.isEmpty());
}

QString ToolCallCard::toolName() const
{
    return m_toolName;
}

QString ToolCallCard::titleText() const
{
    return m_name->text();
}

QString ToolCallCard::findingText() const
{
    return m_findingText;
}

QString ToolCallCard::statusText() const
{
    return m_chip->text();
}

QString ToolCallCard::argumentsText() const
{
    return m_arguments->text();
}

QString ToolCallCard::attemptSummaryText() const
{
    return m_summary->text();
}

QString ToolCallCard::policyNoteText() const
{
    return m_policyNote ? m_policyNote->text() : QString();
}

QString ToolCallCard::questionNoteText() const
{
    return m_questionNote ? m_questionNote->text() : QString();
}

QString ToolCallCard::timelineText() const
{
    return m_timelineText;
}

QString ToolCallCard::copyText() const
{
    QString line = m_copyText;
    // What a write made, when the line does not already say it.
    if (!m_ticketId.isEmpty() && !line.contains(m_ticketId))
        line += QStringLiteral(" · ") + tr("%1 %2").arg(m_createdLabel, m_ticketId);
    return line;
}

QMenu *ToolCallCard::createContextMenu(QWidget *parent)
{
    auto *menu = new QMenu(parent);
    QClipboard *clipboard = QApplication::clipboard();
    menu->addAction(tr("Copy"), this, [this, clipboard] { clipboard->setText(copyText()); });
    QAction *operation = menu->addAction(tr("Copy the operation id"), this,
                                         [this, clipboard] { clipboard->setText(m_operationId); });
    operation->setObjectName(QStringLiteral("copyOperationId"));
    operation->setEnabled(!m_operationId.isEmpty());
    QAction *ticket = menu->addAction(m_ticketId.isEmpty()
                                          ? tr("Copy the id of what it made")
                                          : tr("Copy %1 %2").arg(m_createdLabel, m_ticketId),
                                      this, [this, clipboard] { clipboard->setText(m_ticketId); });
    ticket->setObjectName(QStringLiteral("copyTicketId"));
    ticket->setEnabled(!m_ticketId.isEmpty());
    return menu;
}

void ToolCallCard::contextMenuEvent(QContextMenuEvent *event)
{
    QMenu *menu = createContextMenu(this);
    menu->setAttribute(Qt::WA_DeleteOnClose);
    menu->popup(event->globalPos());
    event->accept();
}

void ToolCallCard::setExpanded(bool expanded)
{
    if (expanded == m_expanded)
        return;
    m_expanded = expanded;
    m_chevron->setText(chevronFor(expanded));
    // A one-line card shows its arguments and attempts when opened.
    if (m_trivial) {
        m_arguments->setVisible(expanded);
        m_attemptTimeline->setVisible(expanded && m_timelineHasContent);
    }
    if (expanded)
        showDetails();
    if (m_details)
        m_details->setVisible(expanded);
    updateGeometry();
    Internal::notifyToolCallCardExpanded(this);
    Q_EMIT expandedChanged(expanded);
}

void ToolCallCard::offerRetry(const QString &question)
{
    m_retryQuestion = question;
    if (!m_retry && question.isEmpty())
        return;
    if (!m_retry) {
        // Made for the few cards that fail: a transcript has many that never need it.
        m_retry = new QToolButton(this);
        m_retry->setObjectName(QStringLiteral("retryCardButton"));
        m_retry->setText(Internal::TurnText::tr("Try again"));
        m_retry->setAutoRaise(true);
        m_retry->setFocusPolicy(Qt::TabFocus);
        m_retry->setCursor(Qt::ArrowCursor);
        pressOnEnter(m_retry);
        connect(m_retry, &QToolButton::clicked, this, [this] {
            if (!m_retryQuestion.isEmpty())
                Q_EMIT retryRequested(m_retryQuestion);
        });
        m_headerRight->insertWidget(m_headerRight->indexOf(m_copy), m_retry);
        setTabOrder(m_retry, m_copy); // the reading order: Try again, then Copy
    }
    m_retry->setToolTip(question);
    m_retry->setVisible(!question.isEmpty());
}

void ToolCallCard::paintEvent(QPaintEvent *)
{
    const QPalette colours = palette();
    QColor border = Internal::panelBorderColor(colours);
    // The focus ring is the palette's highlight itself, two pixels: seen in both palettes.
    if (hasFocus())
        border = colours.color(QPalette::Highlight);
    else if (m_hovered)
        border = Internal::mixColors(border, colours.color(QPalette::Highlight), 0.5);
    QPainter painter(this);
    paintRoundedFrame(painter, rect(), 1.0, cardRadius, hasFocus() ? 2.0 : 1.0, border,
                      colours.color(QPalette::Base));
}

void ToolCallCard::mousePressEvent(QMouseEvent *event)
{
    if (event->button() == Qt::LeftButton) {
        event->accept(); // the release toggles; accepting the press keeps it ours
        return;
    }
    QWidget::mousePressEvent(event);
}

void ToolCallCard::mouseReleaseEvent(QMouseEvent *event)
{
    if (event->button() == Qt::LeftButton && rect().contains(event->position().toPoint())) {
        setExpanded(!m_expanded);
        event->accept();
        return;
    }
    QWidget::mouseReleaseEvent(event);
}

void ToolCallCard::keyPressEvent(QKeyEvent *event)
{
    switch (event->key()) {
    case Qt::Key_Space:
    case Qt::Key_Return:
    case Qt::Key_Enter:
        setExpanded(!m_expanded);
        event->accept();
        return;
    default:
        QWidget::keyPressEvent(event);
    }
}

void ToolCallCard::enterEvent(QEnterEvent *event)
{
    m_hovered = true;
    update();
    QWidget::enterEvent(event);
}

void ToolCallCard::leaveEvent(QEvent *event)
{
    m_hovered = false;
    update();
    QWidget::leaveEvent(event);
}

void ToolCallCard::changeEvent(QEvent *event)
{
    if (event->type() == QEvent::PaletteChange)
        applyColours();
    QWidget::changeEvent(event);
}

void ToolCallCard::applyColours()
{
    QPalette muted = palette();
    const QColor mutedText = Internal::mutedTextColor(muted);
    muted.setColor(QPalette::WindowText, mutedText);
    muted.setColor(QPalette::Text, mutedText);
    for (QLabel *label : {m_chevron, m_arguments, m_summary, m_trace}) {
        if (label) // the details' trace is made when the card first opens
            label->setPalette(muted);
    }
}

} // namespace AgentConsole
