#include "confirmationpanel.h"

#include "ui/common/consolepalette.h"
#include "toolcalltext.h"
#include "ui/common/pressonenter.h"
#include "ui/common/wraplabel.h"

#include "core/turn/turnresult.h"

#include <QDateTime>
#include <QEvent>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QMouseEvent>
#include <QPainter>
#include <QPushButton>
#include <QVBoxLayout>

namespace AgentConsole {

namespace {

constexpr int panelRadius = 6;
constexpr int accentWidth = 4;

QLabel *plainLabel(QWidget *parent)
{
    auto *label = new WrapLabel(parent);
    label->setTextFormat(Qt::PlainText);
    return label;
}

} // namespace

ConfirmationPanel::ConfirmationPanel(QWidget *parent)
    : QFrame(parent)
{
    setObjectName(QStringLiteral("confirmationPanel"));
    setCursor(Qt::ArrowCursor); // the card around it is clickable; this part is not
    setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Maximum);

    m_title = plainLabel(this);
    m_title->setObjectName(QStringLiteral("confirmationTitle"));
    m_title->setWordWrap(true);
    QFont titleFont = m_title->font();
    titleFont.setWeight(QFont::DemiBold);
    m_title->setFont(titleFont);

    m_rows = new QGridLayout;
    m_rows->setContentsMargins(0, 0, 0, 0);
    m_rows->setHorizontalSpacing(14);
    m_rows->setVerticalSpacing(4);
    m_rows->setColumnStretch(1, 1);

    m_hint = plainLabel(this);
    m_hint->setWordWrap(true);
    m_hint->setText(tr("Nothing is done until you confirm. Check these details with the "
                       "customer first."));

    m_prior = plainLabel(this);
    m_prior->setObjectName(QStringLiteral("priorWrites"));
    m_prior->setWordWrap(true);
    m_prior->setVisible(false);
    m_duplicate = plainLabel(this);
    m_duplicate->setObjectName(QStringLiteral("likelyDuplicate"));
    m_duplicate->setWordWrap(true);
    m_duplicate->setVisible(false);
    QFont duplicateFont = m_duplicate->font();
    duplicateFont.setWeight(QFont::DemiBold);
    m_duplicate->setFont(duplicateFont);

    m_note = plainLabel(this);
    m_note->setObjectName(QStringLiteral("confirmationNote"));
    m_note->setWordWrap(true);
    m_note->setVisible(false);

    const int buttonWidth = fontMetrics().averageCharWidth() * 14;
    m_decline = new QPushButton(tr("Decline"), this);
    m_decline->setMinimumWidth(buttonWidth);
    m_decline->setObjectName(QStringLiteral("declineButton"));
    m_decline->setAutoDefault(false);
    m_decline->setToolTip(tr("Do not run it; the agent is told it was declined"));
    m_confirm = new QPushButton(tr("Confirm"), this);
    m_confirm->setObjectName(QStringLiteral("confirmButton"));
    m_confirm->setAutoDefault(false);
    m_confirm->setMinimumWidth(buttonWidth);
    m_keep = new QPushButton(this);
    m_keep->setObjectName(QStringLiteral("keepExistingButton"));
    m_keep->setAutoDefault(false);
    m_keep->setVisible(false);
    m_keep->setToolTip(tr("Make nothing new; the agent is told which one you kept"));
    // Neither button takes Enter from elsewhere: a stray key press must never confirm.
    connect(m_confirm, &QPushButton::clicked, this, [this] { answer(true); });
    connect(m_decline, &QPushButton::clicked, this, [this] { answer(false); });
    for (QPushButton *button : {m_confirm, m_decline, m_keep})
        pressOnEnter(button);
    connect(m_keep, &QPushButton::clicked, this, [this] {
        if (!isAwaitingAnswer() || m_duplicateId.isEmpty())
            return;
        m_answer = Answer::KeptExisting;
        m_confirm->setEnabled(false);
        m_decline->setEnabled(false);
        m_keep->setEnabled(false);
        m_hint->setVisible(false);
        m_note->setText(tr("Keeping %1…").arg(m_duplicateId));
        m_note->setVisible(true);
        Q_EMIT existingKept(m_operationId, m_duplicateId);
    });

    m_buttons = new QWidget(this);
    auto *buttonRow = new QHBoxLayout(m_buttons);
    buttonRow->setContentsMargins(0, 2, 0, 0);
    buttonRow->setSpacing(8);
    buttonRow->addStretch(1);
    buttonRow->addWidget(m_decline);
    buttonRow->addWidget(m_keep);
    buttonRow->addWidget(m_confirm);

    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(12 + accentWidth, 10, 12, 10);
    layout->setSpacing(8);
    layout->addWidget(m_title);
    layout->addLayout(m_rows);
    layout->addWidget(m_prior);
    layout->addWidget(m_duplicate);
    layout->addWidget(m_hint);
    layout->addWidget(m_note);
    layout->addWidget(m_buttons);

    applyColours();
}

ConfirmationPanel::~ConfirmationPanel() = default;

void ConfirmationPanel::setToolCall(const ToolCallRecord &call)
{
    if (call.operationId != m_operationId) {
        m_operationId = call.operationId;
        m_answer = Answer::None;
    }
    const bool waiting = call.state == ToolCallRecord::State::AwaitingConfirmation;
    const QString action = ToolCallText::confirmActionText(call);
    m_confirm->setText(action);
    m_confirm->setToolTip(tr("Run it with exactly these details"));
    m_confirm->setAccessibleName(tr("%1: %2").arg(action, ToolCallText::confirmationTitle(call)));
    if (waiting)
        showArguments(call); // while waiting these are the values the tool will run with

    QString note;
    if (waiting) {
        if (m_answer == Answer::Approved)
            note = tr("Confirmed; waiting for it to start…");
        else if (m_answer == Answer::Declined)
            note = tr("Declining…");
        else if (m_answer == Answer::KeptExisting)
            note = tr("Keeping %1…").arg(m_duplicateId);
    } else if (call.state != ToolCallRecord::State::Finished) {
        note = tr("Confirmed; running…");
    } else if (call.result.nobodyWasAsked()) {
        note = tr("Not run: nobody could be asked to confirm it.");
    } else if (const QString kept = call.result.keptExistingId(); !kept.isEmpty()) {
        note = tr("Not run: you kept %1 instead.").arg(kept);
    } else if (call.result.code == ResultCode::ConfirmationDeclined) {
        note = tr("Declined: it was not run.");
    } else if (m_answer == Answer::Approved || !call.attempts.isEmpty()) {
        note = tr("Confirmed with these details.");
    } else if (call.result.code == ResultCode::Cancelled) {
        note = tr("Not run: the turn was cancelled before an answer.");
    } else {
        note = tr("Not run: the turn ended before an answer.");
    }
    m_note->setText(note);
    // Once it is settled, the tool's title heads the panel, the details stay as its record
    // and the outcome follows them (it says what was done with the details above).
    m_title->setText(waiting ? ToolCallText::confirmationTitle(call)
                             : ToolCallText::toolTitle(call));
    m_note->setVisible(!note.isEmpty());
    showPriorWrites(call, waiting);

    const bool open = waiting && m_answer == Answer::None;
    // While the check runs the write cannot be confirmed: staff would not yet know whether it
    // repeats one (the check is bounded by its lookup's policy).
    const bool checking = call.priorWrites.state == PriorWrites::State::Checking;
    m_confirm->setEnabled(open && !checking);
    m_decline->setEnabled(open);
    m_keep->setEnabled(open);
    m_buttons->setVisible(waiting);
    m_hint->setVisible(waiting && m_answer == Answer::None);
    if (waiting != m_waiting) {
        m_waiting = waiting;
        applyColours();
    }
    setAccessibleName(waiting ? m_title->text() : note);
}

void ConfirmationPanel::showPriorWrites(const ToolCallRecord &call, bool waiting)
{
    const ToolCallText::PriorWritesText found = ToolCallText::priorWritesText(
        call, QDateTime::currentDateTimeUtc());
    const QString listing = found.lines.isEmpty()
        ? found.heading
        : found.heading + QLatin1Char('\n') + found.lines.join(QLatin1Char('\n'));
    // Once the write is settled its check has said what it had to.
    m_prior->setText(listing);
    m_prior->setVisible(waiting && !listing.isEmpty());
    m_duplicate->setText(found.duplicate);
    m_duplicate->setVisible(waiting && !found.duplicate.isEmpty());
    const PriorWrites::Entry *duplicate = call.priorWrites.likelyDuplicate();
    m_duplicateId = waiting && duplicate ? duplicate->id : QString();
    m_keep->setVisible(!m_duplicateId.isEmpty());
    if (!m_duplicateId.isEmpty()) {
        m_keep->setText(tr("Open %1").arg(m_duplicateId));
        m_keep->setAccessibleName(tr("Keep %1 and make nothing new").arg(m_duplicateId));
        m_confirm->setText(tr("Create another anyway"));
        m_confirm->setAccessibleName(
            tr("Create another anyway: %1").arg(ToolCallText::confirmationTitle(call)));
    }
}

QString ConfirmationPanel::duplicateText() const
{
    return m_duplicate->text();
}

QString ConfirmationPanel::priorWritesText() const
{
    return m_prior->text();
}

bool ConfirmationPanel::isAwaitingAnswer() const
{
    return m_waiting && m_answer == Answer::None;
}

QString ConfirmationPanel::titleText() const
{
    return m_title->text();
}

QString ConfirmationPanel::argumentsText() const
{
    QStringList lines;
    for (qsizetype i = 0; i < m_rowLabels.size(); ++i)
        lines.append(m_rowLabels[i]->text() + QStringLiteral(": ") + m_rowValues[i]->text());
    return lines.join(QLatin1Char('\n'));
}

QString ConfirmationPanel::noteText() const
{
    return m_note->text();
}

void ConfirmationPanel::answer(bool approved)
{
    if (!isAwaitingAnswer())
        return; // one answer per call, however fast the clicks come
    m_answer = approved ? Answer::Approved : Answer::Declined;
    m_confirm->setEnabled(false);
    m_decline->setEnabled(false);
    m_keep->setEnabled(false);
    m_hint->setVisible(false);
    m_note->setText(approved ? tr("Confirmed; waiting for it to start…") : tr("Declining…"));
    m_note->setVisible(true);
    Q_EMIT answered(m_operationId, approved);
}

void ConfirmationPanel::showArguments(const ToolCallRecord &call)
{
    const QList<ToolCallText::ArgumentRow> rows = ToolCallText::argumentRows(call);
    while (m_rowLabels.size() > rows.size()) {
        delete m_rowLabels.takeLast();
        delete m_rowValues.takeLast();
    }
    while (m_rowLabels.size() < rows.size()) {
        const int row = int(m_rowLabels.size());
        QLabel *label = plainLabel(this);
        QLabel *value = plainLabel(this);
        value->setWordWrap(true);
        value->setTextInteractionFlags(Qt::TextSelectableByMouse);
        value->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
        m_rows->addWidget(label, row, 0, Qt::AlignLeft | Qt::AlignTop);
        m_rows->addWidget(value, row, 1);
        // Shown now, not at the layout's queued show: the transcript measures the card at once,
        // and a panel whose details appear a pass later is measured (and painted) without them.
        label->show();
        value->show();
        m_rowLabels.append(label);
        m_rowValues.append(value);
    }
    for (qsizetype i = 0; i < rows.size(); ++i) {
        m_rowLabels[i]->setText(rows[i].label);
        m_rowValues[i]->setText(rows[i].value);
        m_rowValues[i]->setAccessibleName(rows[i].label);
    }
    applyColours();
}

void ConfirmationPanel::paintEvent(QPaintEvent *)
{
    const QPalette colours = palette();
    const Internal::ToneColors tone = Internal::toneColors(
        m_waiting ? Tone::Warning : Tone::Neutral, colours);
    const QColor base = colours.color(QPalette::Base);
    QPainter painter(this);
    painter.setRenderHint(QPainter::Antialiasing);
    const QRectF area = QRectF(rect()).adjusted(0.5, 0.5, -0.5, -0.5);
    painter.setPen(QPen(tone.border, 1.0));
    painter.setBrush(Internal::mixColors(base, tone.background, m_waiting ? 0.7 : 0.5));
    painter.drawRoundedRect(area, panelRadius, panelRadius);
    // A bar down the left edge marks the panel as something to act on.
    painter.setClipRect(QRectF(area.left(), area.top(), accentWidth, area.height()));
    painter.setPen(Qt::NoPen);
    painter.setBrush(m_waiting ? tone.foreground : tone.border);
    painter.drawRoundedRect(area, panelRadius, panelRadius);
}

void ConfirmationPanel::mousePressEvent(QMouseEvent *event)
{
    event->accept(); // a click here is not a click on the card (which would fold it)
}

void ConfirmationPanel::mouseReleaseEvent(QMouseEvent *event)
{
    event->accept();
}

void ConfirmationPanel::changeEvent(QEvent *event)
{
    if (event->type() == QEvent::PaletteChange)
        applyColours();
    QFrame::changeEvent(event);
}

void ConfirmationPanel::applyColours()
{
    const Internal::ToneColors tone = Internal::toneColors(
        m_waiting ? Tone::Warning : Tone::Neutral, palette());
    QPalette title = palette();
    title.setColor(QPalette::WindowText,
                   m_waiting ? tone.foreground : title.color(QPalette::Text));
    m_title->setPalette(title);
    QPalette muted = palette();
    const QColor mutedText = Internal::mutedTextColor(muted);
    muted.setColor(QPalette::WindowText, mutedText);
    muted.setColor(QPalette::Text, mutedText);
    for (QLabel *label : std::as_const(m_rowLabels))
        label->setPalette(muted);
    m_hint->setPalette(muted);
    m_prior->setPalette(muted);
    QPalette warning = palette();
    warning.setColor(QPalette::WindowText,
                     Internal::toneColors(Tone::Warning, palette()).foreground);
    m_duplicate->setPalette(warning);
    QPalette text = palette();
    text.setColor(QPalette::WindowText, text.color(QPalette::Text));
    for (QLabel *value : std::as_const(m_rowValues))
        value->setPalette(text);
    m_note->setPalette(text);
}

} // namespace AgentConsole
