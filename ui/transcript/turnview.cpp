#include "turnview.h"

#include "ui/common/pressonenter.h"

#include "answertext.h"
#include "toolcallcard.h"
#include "toolcalltext.h"
#include "transcriptmodel.h"
#include "transcriptview.h"
#include "turntext.h"
#include "ui/common/consolepalette.h"
#include "ui/common/statuschip.h"
#include "ui/common/wraplabel.h"

#include "core/turn/turnresult.h"

#include <QApplication>
#include <QClipboard>
#include <QDateTime>
#include <QEvent>
#include <QHBoxLayout>
#include <QPushButton>
#include <QLabel>
#include <QLayout>
#include <QMenu>
#include <QPainter>
#include <QToolButton>
#include <QVBoxLayout>

#include <algorithm>
#include <memory>
#include <utility>

namespace AgentConsole::Internal {

namespace {

constexpr int answerFrameMs = 33; // a streamed answer is shown at most this often

QFont scaledFont(QFont font, qreal factor, QFont::Weight weight)
{
    if (font.pointSizeF() > 0)
        font.setPointSizeF(font.pointSizeF() * factor);
    font.setWeight(weight);
    return font;
}

// Labels whose text can be selected take the focus when clicked (QLabel gives them
// ClickFocus): in the transcript that would take typing away from the question box. They stay
// selectable by mouse; copying goes through the Copy buttons and menus.
void keepFocusAway(QWidget *root)
{
    for (QLabel *label : root->findChildren<QLabel *>()) {
        if (label->focusPolicy() == Qt::ClickFocus)
            label->setFocusPolicy(Qt::NoFocus);
    }
}

// The staff member's question: a rounded bubble tinted with the palette's highlight.
class QuestionBubble final : public WrapLabel
{
public:
    explicit QuestionBubble(QWidget *parent)
        : WrapLabel(parent)
    {
        setTextFormat(Qt::PlainText);
        setWordWrap(true);
        setTextInteractionFlags(Qt::TextSelectableByMouse);
        setContentsMargins(14, 7, 14, 7);
        setSizePolicy(QSizePolicy::Maximum, QSizePolicy::Preferred);
    }

    // As wide as the longest line needs, up to the maximum width; then it wraps. (QLabel's
    // own hint for wrapped text picks a narrow, balanced shape instead.)
    QSize sizeHint() const override
    {
        const QMargins margins = contentsMargins();
        int natural = 0;
        for (const QString &line : text().split(QLatin1Char('\n')))
            natural = std::max(natural, fontMetrics().horizontalAdvance(line));
        const int width = std::min(maximumWidth(), natural + margins.left() + margins.right() + 2);
        return {width, heightForWidth(width)};
    }

protected:
    void paintEvent(QPaintEvent *event) override
    {
        {
            QPainter painter(this);
            painter.setRenderHint(QPainter::Antialiasing);
            painter.setPen(Qt::NoPen);
            painter.setBrush(Internal::questionBubbleColor(palette()));
            painter.drawRoundedRect(QRectF(rect()), 12, 12);
        }
        QLabel::paintEvent(event);
    }
};

// Box layouts cache their height for a width; a card that was shown, grew or opened leaves
// the caches of the layouts around it stale. A turn is a handful of layouts: forget them all.
void forgetCachedSizes(QLayoutItem *item)
{
    item->invalidate();
    if (QLayout *layout = item->layout()) {
        for (int i = 0; i < layout->count(); ++i)
            forgetCachedSizes(layout->itemAt(i));
    }
}

} // namespace

int measuredHeight(QWidget *widget, int width)
{
    QLayout *layout = widget->layout();
    forgetCachedSizes(layout);
    const int wanted = layout->hasHeightForWidth() ? layout->totalHeightForWidth(width)
                                                   : layout->totalSizeHint().height();
    return std::max(wanted, layout->totalMinimumSize().height());
}

void runLayout(QWidget *widget)
{
    widget->layout()->activate();
    QCoreApplication::removePostedEvents(widget, QEvent::LayoutRequest);
}

TurnView::TurnView(TranscriptView *transcript, TranscriptModel *model, const QString &requestId,
                   Placer place, QWidget *parent)
    : QWidget(parent)
    , m_transcript(transcript)
    , m_model(model)
    , m_requestId(requestId)
    , m_place(std::move(place))
{
    m_answerFrame.setSingleShot(true);
    m_answerFrame.setInterval(answerFrameMs);
    QObject::connect(&m_answerFrame, &QTimer::timeout, this, [this] {
        if (!m_pendingAnswer.isEmpty())
            showPendingAnswer();
    });
    // A child too, so that it can be found (a member is taken out of its parent when it goes).
    m_progressClock.setParent(this);
    m_progressClock.setObjectName(QStringLiteral("progressClock"));
    m_progressClock.setInterval(1000);
    QObject::connect(&m_progressClock, &QTimer::timeout, this, [this] { showProgress(); });

    m_bubble = new QuestionBubble(this);
    m_bubble->setVisible(false);
    auto *questionRow = new QHBoxLayout;
    questionRow->setContentsMargins(0, 0, 0, 0);
    questionRow->addStretch(1);
    questionRow->addWidget(m_bubble);

    // Above the bubble of a turn carried on from a checkpoint: where it had stopped.
    m_resumedChip = new StatusChip(this);
    m_resumedChip->setObjectName(QStringLiteral("resumedChip"));
    m_resumedChip->setVisible(false);
    auto *resumedRow = new QHBoxLayout;
    resumedRow->setContentsMargins(0, 0, 0, 0);
    resumedRow->addStretch(1);
    resumedRow->addWidget(m_resumedChip);

    m_speaker = new WrapLabel(TurnText::tr("Agent"), this);
    m_speaker->setFont(scaledFont(m_speaker->font(), 0.9, QFont::DemiBold));
    m_copy = new QToolButton(this);
    m_copy->setObjectName(QStringLiteral("copyAnswerButton"));
    m_copy->setText(tr("Copy"));
    m_copy->setToolTip(tr("Copy the answer"));
    m_copy->setAutoRaise(true);
    m_copy->setFocusPolicy(Qt::TabFocus);
    m_copy->setVisible(false);
    QObject::connect(m_copy, &QToolButton::clicked, this, [this] { copyAnswer(false); });
    auto *speakerRow = new QHBoxLayout;
    speakerRow->setContentsMargins(0, 0, 0, 0);
    speakerRow->addWidget(m_speaker);
    speakerRow->addWidget(m_copy);
    speakerRow->addStretch(1);

    m_thinking = new WrapLabel(this);
    m_thinking->setObjectName(QStringLiteral("turnProgress"));
    QFont thinkingFont = m_thinking->font();
    thinkingFont.setItalic(true);
    m_thinking->setFont(thinkingFont);

    // A thinking model's reasoning: never the answer, folded away unless asked for.
    m_reasoningToggle = new QToolButton(this);
    m_reasoningToggle->setObjectName(QStringLiteral("reasoningToggle"));
    m_reasoningToggle->setText(TurnText::tr("The model's thinking"));
    m_reasoningToggle->setCheckable(true);
    m_reasoningToggle->setAutoRaise(true);
    m_reasoningToggle->setFocusPolicy(Qt::TabFocus);
    m_reasoningToggle->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
    m_reasoningToggle->setArrowType(Qt::RightArrow);
    m_reasoningToggle->setVisible(false);
    m_reasoning = new WrapLabel(this);
    m_reasoning->setObjectName(QStringLiteral("reasoningText"));
    m_reasoning->setTextFormat(Qt::PlainText);
    m_reasoning->setWordWrap(true);
    m_reasoning->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_reasoning->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    m_reasoning->setVisible(false);
    QObject::connect(m_reasoningToggle, &QToolButton::toggled, this, [this](bool shown) {
        m_reasoningToggle->setArrowType(shown ? Qt::DownArrow : Qt::RightArrow);
        m_reasoning->setVisible(shown);
    });

    m_answer = new AnswerText(this);
    m_answer->setVisible(false);

    m_cardsLayout = new QVBoxLayout;
    m_cardsLayout->setContentsMargins(0, 2, 0, 0);
    m_cardsLayout->setSpacing(6);

    // Calls refused by the bound on calls per message share one line, not a card each:
    // a message asking for 3,000 lookups must not become 3,000 cards.
    m_notRunChip = new StatusChip(this);
    m_notRunChip->setObjectName(QStringLiteral("notRunChip"));
    m_notRunChip->setVisible(false);
    auto *notRunRow = new QHBoxLayout;
    notRunRow->setContentsMargins(0, 0, 0, 0);
    notRunRow->addWidget(m_notRunChip);
    notRunRow->addStretch(1);

    m_footer = new QWidget(this);
    m_turnChip = new StatusChip(m_footer);
    m_footerText = new WrapLabel(m_footer);
    m_footerText->setFont(scaledFont(m_footerText->font(), 0.9, QFont::Normal));
    m_footerText->setTextInteractionFlags(Qt::TextSelectableByMouse);
    auto *footerLayout = new QHBoxLayout(m_footer);
    footerLayout->setContentsMargins(0, 2, 0, 0);
    footerLayout->setSpacing(8);
    footerLayout->addWidget(m_turnChip);
    m_cutOffChip = new StatusChip(m_footer);
    m_cutOffChip->setObjectName(QStringLiteral("cutOffChip"));
    m_cutOffChip->setVisible(false);
    footerLayout->addWidget(m_cutOffChip);
    m_notReadyChip = new StatusChip(m_footer);
    m_notReadyChip->setObjectName(QStringLiteral("serversNotReadyChip"));
    m_notReadyChip->setVisible(false);
    footerLayout->addWidget(m_notReadyChip);
    footerLayout->addWidget(m_footerText, 1);
    // What could not be looked up, asked again as a new turn of its own (never a write).
    m_tryAgain = new QPushButton(TurnText::tr("Try again"), m_footer);
    m_tryAgain->setObjectName(QStringLiteral("tryAgainButton"));
    m_tryAgain->setVisible(false);
    m_tryAgain->setCursor(Qt::ArrowCursor);
    pressOnEnter(m_tryAgain);
    QObject::connect(m_tryAgain, &QPushButton::clicked, this, [this] {
        if (!m_retryQuestion.isEmpty())
            Q_EMIT m_transcript->questionOffered(m_retryQuestion);
    });
    footerLayout->addWidget(m_tryAgain);
    m_footer->setVisible(false);

    auto *answerColumn = new QVBoxLayout;
    answerColumn->setContentsMargins(2, 0, 0, 0);
    answerColumn->setSpacing(4);
    answerColumn->addLayout(speakerRow);
    answerColumn->addWidget(m_reasoningToggle, 0, Qt::AlignLeft);
    answerColumn->addWidget(m_reasoning);
    answerColumn->addWidget(m_thinking);
    answerColumn->addWidget(m_answer);
    answerColumn->addLayout(m_cardsLayout);
    answerColumn->addLayout(notRunRow);
    answerColumn->addWidget(m_footer);

    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(8);
    auto *questionColumn = new QVBoxLayout;
    questionColumn->setContentsMargins(0, 0, 0, 0);
    questionColumn->setSpacing(4);
    questionColumn->addLayout(resumedRow);
    questionColumn->addLayout(questionRow);
    layout->addLayout(questionColumn);
    layout->addLayout(answerColumn);

    // Copy answer / copy as Markdown anywhere on the turn outside its cards (the cards
    // have their own menu with their ids).
    setContextMenuPolicy(Qt::CustomContextMenu);
    QObject::connect(this, &QWidget::customContextMenuRequested, this,
                     [this](const QPoint &pos) { showMenu(mapToGlobal(pos)); });
    applyColours();
    keepFocusAway(this);
}

void TurnView::restore(const TranscriptTurn &turn)
{
    setQuestion(turn.question);
    if (!resumedFor(turn).isEmpty())
        markResumed(turn.resumedStage, turn.restarts);
    for (const ToolCallRecord &call : turn.calls)
        updateToolCall(call, turn);
    for (int index : turn.expandedCards) {
        if (ToolCallCard *card = m_cards.value(index))
            card->setExpanded(true);
    }
    if (turn.result) {
        finish(turn);
    } else {
        if (!turn.answer.isEmpty()) {
            m_pendingAnswer = turn.answer;
            showPendingAnswer();
        }
        showProgress(); // starts the clock unless the turn is interrupted
    }
}

void TurnView::setQuestion(const QString &question)
{
    m_bubble->setText(question);
    m_bubble->setVisible(!question.isEmpty());
}

void TurnView::markResumed(const QString &stage, int restarts)
{
    const QString where = stoppedWhere(stage);
    m_resumedChip->setStatus(TurnText::tr("Resumed: %1").arg(where), Tone::Info);
    m_resumedChip->setToolTip(
        TurnText::tr("The console %1. The request was carried on from there (restart %2); "
                     "lookups whose results were kept did not run again, and no ticket was "
                     "sent twice.")
            .arg(where)
            .arg(restarts));
    m_resumedChip->setVisible(true);
}

void TurnView::appendAnswer(const QString &text)
{
    m_pendingAnswer += text;
    // Shown at most once a frame: a model that streams faster (the offline model sends
    // its pieces back to back) would otherwise have the turn laid out and painted for
    // every piece. The first piece shows at once; finish() shows the rest.
    if (m_answerFrame.isActive())
        return;
    showPendingAnswer();
    m_answerFrame.start();
}

void TurnView::updateToolCall(const ToolCallRecord &call, const TranscriptTurn &turn)
{
    if (call.result.code == ResultCode::ToolCallLimit) {
        m_notRunChip->setStatus(notRunFor(turn), Tone::Warning);
        m_notRunChip->setToolTip(call.result.errors.join(QLatin1Char('\n')));
        m_notRunChip->setVisible(true);
        return;
    }
    ToolCallCard *card = m_cards.value(call.index);
    if (!card) {
        card = new ToolCallCard(this);
        card->setObjectName(QStringLiteral("toolCallCard%1").arg(call.index));
        QObject::connect(card, &ToolCallCard::confirmationAnswered, m_transcript,
                         [transcript = m_transcript,
                          requestId = m_requestId](const QString &operationId, bool approved) {
                             Q_EMIT transcript->confirmationAnswered(requestId, operationId,
                                                                     approved);
                         });
        QObject::connect(card, &ToolCallCard::retryRequested, m_transcript,
                         &TranscriptView::questionOffered);
        QObject::connect(card, &ToolCallCard::existingKept, m_transcript,
                         [transcript = m_transcript, requestId = m_requestId](
                             const QString &operationId, const QString &existingId) {
                             Q_EMIT transcript->existingKept(requestId, operationId, existingId);
                         });
        // Whether a card is open is the staff member's choice: the model keeps it, so
        // that the card is open again when its turn scrolls back into view.
        QObject::connect(card, &ToolCallCard::expandedChanged, this,
                         [this, index = call.index](bool expanded) {
                             const int row = m_model->rowOf(m_requestId);
                             if (row < 0)
                                 return;
                             m_model->change(row, [&](TranscriptTurn &turn) {
                                 if (expanded)
                                     turn.expandedCards.insert(index);
                                 else
                                     turn.expandedCards.remove(index);
                             });
                         });
        // Cards stay in the order core numbered the calls, whatever order they start in.
        const auto next = m_cards.upperBound(call.index);
        const int position = next == m_cards.end() ? int(m_cards.size())
                                                   : int(std::distance(m_cards.begin(), next));
        m_cards.insert(call.index, card);
        m_cardsLayout->insertWidget(position, card);
        holdCard(card); // before it is shown: its own layout runs once, at its width
        // A card grows on its own (attempts, its confirmation panel, opened details),
        // and its layout does not always tell the turn: the transcript listens to both.
        card->installEventFilter(m_transcript);
        card->show(); // now, not at the layout's queued show: it must count when measured
    }
    holdCard(card);
    card->setToolCall(call);
    keepFocusAway(card);
    if (!turn.result)
        showProgress(&turn);
}

QList<ToolCallCard *> TurnView::cards() const
{
    return m_cards.values();
}

bool TurnView::destroyOneCard()
{
    if (m_cards.isEmpty())
        return false;
    const std::unique_ptr<ToolCallCard> card(m_cards.take(m_cards.lastKey()));
    return true;
}

void TurnView::holdLayouts()
{
    if (m_holding)
        return;
    m_holding = true;
    layout()->setEnabled(false);
}

void TurnView::placeHeld()
{
    m_place(this);
}

bool TurnView::releaseLayouts()
{
    if (!m_holding)
        return false;
    m_holding = false;
    for (const QPointer<ToolCallCard> &card : std::as_const(m_heldCards)) {
        if (!card)
            continue;
        card->layout()->setEnabled(true);
        forgetCachedSizes(card->layout());
        card->updateGeometry(); // its size in the turn's layout is asked afresh
    }
    layout()->setEnabled(true);
    return true;
}

void TurnView::runReleasedLayouts()
{
    runLayout(this);
    bool cards = false;
    for (const QPointer<ToolCallCard> &card : std::exchange(m_heldCards, {})) {
        if (card) {
            runLayout(card);
            cards = true;
        }
    }
    // A layout run ends by asking its parent's again (QLayout::activate): the turn's,
    // answered now, with the sizes it has just given; not a measure and a layout more
    // at the next pass of the event loop.
    if (cards)
        runLayout(this);
}

void TurnView::finish(const TranscriptTurn &turn)
{
    const TurnResult &result = *turn.result;
    for (const ToolCallRecord &call : turn.calls)
        updateToolCall(call, turn);
    m_answerFrame.stop();
    m_progressClock.stop();
    m_pendingAnswer.clear();
    // The one full layout of the answer: the Markdown, once it is complete.
    m_answer->setAnswerMarkdown(turn.answer);
    m_answer->setVisible(!turn.answer.isEmpty());
    m_copy->setVisible(!turn.answer.isEmpty());
    m_thinking->setVisible(false);
    if (!result.reasoning.isEmpty()) {
        m_reasoning->setText(result.reasoning);
        m_reasoningToggle->setVisible(true);
    }
    if (result.answerCutOff) {
        m_cutOffChip->setStatus(TurnText::tr("Answer cut off"), Tone::Warning);
        m_cutOffChip->setToolTip(
            TurnText::tr("The model stopped at its output limit: what it wrote is shown as it "
                         "came, and the rest is missing."));
        m_cutOffChip->setVisible(true);
    }
    if (!result.serversNotReady.isEmpty()) {
        const QString servers = result.serversNotReady.join(TurnText::tr(", "));
        m_notReadyChip->setStatus(TurnText::tr("Not offered: %1").arg(servers), Tone::Warning);
        m_notReadyChip->setToolTip(
            TurnText::tr("These MCP servers were not ready when the question was asked, so "
                         "the model was not offered their tools: %1")
                .arg(servers));
        m_notReadyChip->setVisible(true);
    }
    m_speaker->setText(speakerFor(turn));
    const auto [status, tone] = statusFor(result);
    m_turnChip->setStatus(status, tone);
    m_footerText->setText(footerFor(result));
    m_retryQuestion = retryQuestionFor(result);
    m_tryAgain->setVisible(!m_retryQuestion.isEmpty());
    // Each failed lookup's card offers its own part of it, once the turn is over (while it
    // runs, the window asks nothing new).
    for (const ToolCallRecord &call : result.toolCalls) {
        ToolCallCard *card = m_cards.value(call.index);
        const QString ask = result.status == TurnStatus::Cancelled ? QString() : retryAskFor(call);
        if (card)
            card->offerRetry(ask.isEmpty() ? QString() : TurnText::tr("Try again: %1").arg(ask));
    }
    m_tryAgain->setToolTip(m_retryQuestion);
    m_footerText->setToolTip(
        layerAttempts(result).isEmpty()
            ? QString()
            : TurnText::tr("Attempts per layer, retries included. A fallback means the model "
                           "asked first failed and the next one in the chain answered."));
    m_footer->setVisible(true);
}

void TurnView::showProgress(const TranscriptTurn *turn)
{
    if (!turn)
        turn = modelTurn();
    if (!turn || turn->result)
        return;
    if (turn->interrupted) {
        // Nothing runs it: no clock, and what staff can do about it.
        m_progressClock.stop();
        m_thinking->setText(tr("Interrupted — Resume or Dismiss it in the banner above"));
        if (m_answer->isHidden())
            m_thinking->setVisible(true);
        return;
    }
    if (!m_progressClock.isActive())
        m_progressClock.start();
    const qint64 elapsedMs = QDateTime::currentMSecsSinceEpoch() - turn->startedMs;
    const QString elapsed = ToolCallText::duration(std::max<qint64>(0, elapsedMs));
    QString doing = tr("Looking this up…");
    bool awaiting = false;
    int attempt = 0;
    int of = 0;
    for (const ToolCallRecord &call : turn->calls) {
        awaiting = awaiting || call.state == ToolCallRecord::State::AwaitingConfirmation;
        if (call.state == ToolCallRecord::State::Running && call.runningAttempt > attempt) {
            attempt = call.runningAttempt;
            of = call.maxAttempts;
        }
    }
    const ModelProgress &retry = turn->modelRetry;
    if (awaiting)
        doing = tr("Waiting for your confirmation below…");
    else if (attempt > 1 && of > 0)
        doing = tr("Looking this up: attempt %1 of %2…").arg(attempt).arg(of);
    else if (attempt > 1)
        doing = tr("Looking this up: attempt %1…").arg(attempt);
    else if (!turn->fallbackModel.isEmpty() && retry.attempt > 1)
        doing = tr("Answering with the fallback model %1: attempt %2 of %3…")
                    .arg(turn->fallbackModel)
                    .arg(retry.attempt)
                    .arg(retry.maxAttempts);
    else if (!turn->fallbackModel.isEmpty())
        doing = tr("Answering with the fallback model %1…").arg(turn->fallbackModel);
    else if (retry.attempt > 1)
        doing = tr("The model is retrying: attempt %1 of %2…")
                    .arg(retry.attempt)
                    .arg(retry.maxAttempts);
    m_thinking->setText(tr("%1 (%2)").arg(doing, elapsed));
    if (m_answer->isHidden())
        m_thinking->setVisible(true);
}

QString TurnView::progressText() const
{
    return m_thinking->isHidden() ? QString() : m_thinking->text();
}

int TurnView::heightAt(int width)
{
    fitTo(width);
    return measuredHeight(this, width);
}

void TurnView::resizeEvent(QResizeEvent *event)
{
    fitTo(width());
    QWidget::resizeEvent(event);
}

void TurnView::changeEvent(QEvent *event)
{
    if (event->type() == QEvent::PaletteChange)
        applyColours();
    QWidget::changeEvent(event);
}

void TurnView::fitTo(int width)
{
    m_bubble->setMaximumWidth(std::max(160, width * 3 / 4));
}

void TurnView::holdCard(ToolCallCard *card)
{
    if (!m_holding || !card->layout()->isEnabled())
        return;
    card->layout()->setEnabled(false);
    m_heldCards.append(card);
}

const TranscriptTurn *TurnView::modelTurn() const
{
    const int row = m_model->rowOf(m_requestId);
    return row < 0 ? nullptr : &m_model->turn(row);
}

void TurnView::showPendingAnswer()
{
    // The answer and its copy button appear above the cards: held, so that showing them
    // does not squeeze the cards into the turn's old height (holdLayouts()).
    const bool batch = isVisible() && !m_holding;
    if (batch)
        holdLayouts();
    // Appended at the end of the answer's document: only its last block is laid out
    // again, never the whole answer.
    m_answer->appendPlain(m_pendingAnswer);
    m_pendingAnswer.clear();
    m_answer->setVisible(true);
    m_copy->setVisible(true);
    m_thinking->setVisible(false);
    if (batch)
        placeHeld();
}

void TurnView::copyAnswer(bool asMarkdown) const
{
    const TranscriptTurn *turn = modelTurn();
    if (!turn)
        return;
    QApplication::clipboard()->setText(asMarkdown ? turn->answer : m_answer->plainText());
}

void TurnView::showMenu(const QPoint &globalPos)
{
    QMenu menu(this);
    menu.addAction(tr("Copy answer"), this, [this] { copyAnswer(false); })
        ->setEnabled(!m_answer->isHidden());
    menu.addAction(tr("Copy as Markdown"), this, [this] { copyAnswer(true); })
        ->setEnabled(!m_answer->isHidden());
    menu.exec(globalPos);
}

void TurnView::applyColours()
{
    const QPalette muted = withMutedText(palette());
    for (QLabel *label : {m_speaker, m_thinking, m_footerText, m_reasoning})
        label->setPalette(muted);
}

} // namespace AgentConsole::Internal
