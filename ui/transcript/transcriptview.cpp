#include "transcriptview.h"

#include "answertext.h"
#include "ui/common/consolepalette.h"
#include "ui/common/groovecachingstyle.h"
#include "ui/common/statuschip.h"
#include "toolcallcard.h"
#include "toolcalltext.h"
#include "transcriptmodel.h"
#include "ui/common/wraplabel.h"

#include "core/turn/turncheckpoint.h"
#include "core/turn/turnresult.h"

#include <QApplication>
#include <QClipboard>
#include <QCoreApplication>
#include <QDateTime>
#include <QMenu>
#include <QEvent>
#include <QHBoxLayout>
#include <QKeyEvent>
#include <QLabel>
#include <QLayout>
#include <QMap>
#include <QPainter>
#include <QPointer>
#include <QScrollBar>
#include <QSet>
#include <QElapsedTimer>
#include <QTimer>
#include <QTimerEvent>
#include <QToolButton>
#include <QVBoxLayout>

#include <algorithm>
#include <functional>
#include <memory>
#include <utility>

namespace AgentConsole {

namespace {

constexpr int columnMaximumWidth = 920;
constexpr int answerFrameMs = 33; // a streamed answer is shown at most this often
constexpr int followSlack = 24; // pixels from the bottom that still count as "at the newest"
constexpr int turnSpacing = 28;
constexpr int sideMargin = 20;
constexpr int topMargin = 16;

// The words of a turn, in TranscriptView's context wherever they are built (lupdate reads
// TurnText::tr, and QCoreApplication::translate("AgentConsole::TranscriptView", ...) at run time).
struct TurnText
{
    Q_DECLARE_TR_FUNCTIONS(AgentConsole::TranscriptView)
};

QPalette withMutedText(const QPalette &base)
{
    QPalette muted = base;
    muted.setColor(QPalette::WindowText, Internal::mutedTextColor(base));
    return muted;
}

QFont scaledFont(QFont font, qreal factor, QFont::Weight weight)
{
    if (font.pointSizeF() > 0)
        font.setPointSizeF(font.pointSizeF() * factor);
    font.setWeight(weight);
    return font;
}

// Attempts of the layers that retried, and the fallback if there was one: a turn that went
// through on the first try needs no such detail. "model: 8 attempts · fallback ×2 · tools: 4
// attempts"
QString layerAttempts(const TurnResult &result)
{
    const auto attempts = [](int count) {
        return TurnText::tr("%n attempt(s)", nullptr, count);
    };
    QStringList parts;
    if (result.modelRetries() > 0 || result.fallbackHops > 0)
        parts.append(TurnText::tr("model: %1").arg(attempts(result.modelAttempts)));
    if (result.fallbackHops > 0)
        parts.append(TurnText::tr("fallback \u00d7%1").arg(result.fallbackHops));
    if (result.toolRetries() > 0)
        parts.append(TurnText::tr("tools: %1").arg(attempts(result.toolAttempts())));
    return parts.join(QStringLiteral(" · "));
}

// Where an interrupted turn had stopped, in the staff member's words (not the stage names
// the journal keeps).
QString stoppedWhere(const QString &stageName)
{
    switch (turnStageFromName(stageName).value_or(TurnStage::Received)) {
    case TurnStage::Received:
        return TurnText::tr("stopped before looking anything up");
    case TurnStage::Planned:
        return TurnText::tr("stopped while looking things up");
    case TurnStage::ToolsExecuted:
        return TurnText::tr("stopped after looking things up, before answering");
    case TurnStage::AnswerGenerating:
        return TurnText::tr("stopped while writing the answer");
    case TurnStage::Completed:
    case TurnStage::Failed:
        return TurnText::tr("could not write the answer");
    }
    return {};
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
        setContentsMargins(14, 9, 14, 9);
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
        const int width = std::min(maximumWidth(),
                                   natural + margins.left() + margins.right() + 2);
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


QString resumedFor(const TranscriptTurn &turn)
{
    return turn.resumedStage.isEmpty() && turn.restarts == 0
        ? QString()
        : TurnText::tr("Resumed: %1").arg(stoppedWhere(turn.resumedStage));
}

int notRunCount(const TranscriptTurn &turn)
{
    return int(std::count_if(turn.calls.cbegin(), turn.calls.cend(), [](const auto &call) {
        return call.result.code == ResultCode::ToolCallLimit;
    }));
}

QString notRunFor(const TranscriptTurn &turn)
{
    const int count = notRunCount(turn);
    if (count == 0)
        return {};
    return TurnText::tr("%n lookup(s) not run: too many asked for at once", nullptr, count);
}

QString speakerFor(const TranscriptTurn &turn)
{
    return turn.result && !turn.result->model.isEmpty()
        ? TurnText::tr("Agent · %1").arg(turn.result->model)
        : TurnText::tr("Agent");
}

// The chip follows the turn's outcome: green only when everything asked was answered.
std::pair<QString, Tone> statusFor(const TurnResult &result)
{
    switch (result.outcome()) {
    case TurnOutcome::Answered:
        return {TurnText::tr("Answered"), Tone::Success};
    case TurnOutcome::Partial:
        return {TurnText::tr("Partly answered"), Tone::Warning};
    case TurnOutcome::Unanswered:
        return {result.modelDeclined ? TurnText::tr("Declined by the model")
                                     : TurnText::tr("Not answered"),
                Tone::Danger};
    case TurnOutcome::Failed:
        break;
    }
    if (result.status == TurnStatus::Cancelled)
        return {TurnText::tr("Cancelled"), Tone::Neutral};
    return {TurnText::tr("Failed"), Tone::Danger};
}

QString footerFor(const TurnResult &result)
{
    QStringList facts;
    // The calls the bound refused have their own line above; these are the ones that ran.
    const int calls = int(result.toolCalls.size()) - result.toolCallsOverLimit();
    facts.append(ToolCallText::duration(result.totalMs));
    if (calls > 0)
        facts.append(TurnText::tr("%n tool call(s)", nullptr, calls));
    if (result.toolRounds > 1)
        facts.append(TurnText::tr("%n tool round(s)", nullptr, result.toolRounds));
    const QString attempts = layerAttempts(result);
    if (!attempts.isEmpty())
        facts.append(attempts);
    if (result.restarts > 0)
        facts.append(TurnText::tr("resumed %n time(s)", nullptr, result.restarts));
    if (result.breakerOpens > 0)
        facts.append(TurnText::tr("%n circuit(s) opened", nullptr, result.breakerOpens));
    if (result.turnsLeftOut > 0)
        // Left out by the conversation budget (ModelOptions::conversationBudget()).
        facts.append(TurnText::tr("%n earlier turn(s) not sent to the model", nullptr,
                                  result.turnsLeftOut));
    if (!result.incidentId.isEmpty())
        facts.append(TurnText::tr("incident %1 (details in the local log)").arg(result.incidentId));
    return facts.join(QStringLiteral(" · "));
}

// The answer a finished turn shows: the model's, or a sentence saying why there is none.
// Whether the model has the turn's call `index` (any of its calls for -1) waiting for the staff
// member's answer: such a card is shown at once, opening and closing alike.
bool awaitsConfirmation(const TranscriptTurn &turn, int index = -1)
{
    for (auto call = turn.calls.cbegin(); call != turn.calls.cend(); ++call) {
        if ((index < 0 || call.key() == index)
            && call->state == ToolCallRecord::State::AwaitingConfirmation)
            return true;
    }
    return false;
}

QString finalAnswer(const TurnResult &result, const QString &streamed)
{
    if (!result.answer.isEmpty())
        return result.answer;
    if (!streamed.isEmpty())
        return streamed;
    switch (result.status) {
    case TurnStatus::Cancelled:
        return TurnText::tr("The turn was cancelled before an answer was written.");
    case TurnStatus::Failed:
        return TurnText::tr("No answer could be written for this question.");
    case TurnStatus::Completed:
        break;
    }
    return {};
}

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

// The height a turn (or a card) wants at `width`, measured afresh without laying it out.
int measuredHeight(QWidget *widget, int width)
{
    QLayout *layout = widget->layout();
    forgetCachedSizes(layout);
    const int wanted = layout->hasHeightForWidth() ? layout->totalHeightForWidth(width)
                                                   : layout->totalSizeHint().height();
    return std::max(wanted, layout->totalMinimumSize().height());
}

// Lays out a widget that has its size, now, and drops the layout requests waiting for it:
// they are answered (and measuring it, which forgets its layout's caches, posts one more).
void runLayout(QWidget *widget)
{
    widget->layout()->activate();
    QCoreApplication::removePostedEvents(widget, QEvent::LayoutRequest);
}

} // namespace

namespace Internal {

// The widgets of one turn on screen, made from its TranscriptTurn (restore) and kept up to
// date while it stays on screen. Holds no state the model does not also have, except the
// pieces of a streamed answer that wait for the next frame.
class TurnView final : public QWidget
{
    Q_DECLARE_TR_FUNCTIONS(AgentConsole::TranscriptView)

public:
    // How the transcript places a turn whose layouts were held (TranscriptView::placeHeld).
    using Placer = std::function<void(TurnView *)>;

    TurnView(TranscriptView *transcript, TranscriptModel *model, const QString &requestId,
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
        m_cardsLayout->setContentsMargins(0, 4, 0, 0);
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
        m_footer->setVisible(false);

        auto *answerColumn = new QVBoxLayout;
        answerColumn->setContentsMargins(2, 0, 0, 0);
        answerColumn->setSpacing(6);
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
        layout->setSpacing(12);
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

    // Shows everything the model has of the turn, as when it first scrolls into view.
    void restore(const TranscriptTurn &turn)
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
            showProgress();
            m_progressClock.start();
        }
    }

    void setQuestion(const QString &question)
    {
        m_bubble->setText(question);
        m_bubble->setVisible(!question.isEmpty());
    }

    void markResumed(const QString &stage, int restarts)
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

    void appendAnswer(const QString &text)
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

    void updateToolCall(const ToolCallRecord &call, const TranscriptTurn &turn)
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
                             [transcript = m_transcript, requestId = m_requestId](
                                 const QString &operationId, bool approved) {
                                 Q_EMIT transcript->confirmationAnswered(requestId,
                                                                         operationId, approved);
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
            const int position = next == m_cards.end()
                ? int(m_cards.size())
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
    QList<ToolCallCard *> cards() const { return m_cards.values(); }

    // A turn that left the screen is taken apart a card at a time (TranscriptView::timerEvent):
    // destroys one of its cards, false when none is left.
    bool destroyOneCard()
    {
        if (m_cards.isEmpty())
            return false;
        const std::unique_ptr<ToolCallCard> card(m_cards.take(m_cards.lastKey()));
        return true;
    }

    // Between holdLayouts() and releaseLayouts() the turn's layout and those of the cards it
    // changes do not run. Qt lays a parent out at once when a child is shown, at the height
    // it has then: a card made or grown in a batch would squeeze every card below it into
    // the turn's old height, and the turn measured a moment later would stretch them back,
    // each card resized and painted whole twice, a dozen times a turn. Held, they are laid
    // out once, top down, when the transcript places the turn (TranscriptView::placeHeld).
    void holdLayouts()
    {
        if (m_holding)
            return;
        m_holding = true;
        layout()->setEnabled(false);
    }
    // After holdLayouts() and a change: the transcript measures the turn and places it among
    // its neighbours, then its held layouts run, top down.
    void placeHeld() { m_place(this); }
    // Whether anything was held. The held cards' cached sizes are forgotten, so that the
    // turn's next measure sees them as they are now.
    bool releaseLayouts()
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
    // Once the turn has its height: the layouts still to run, the turn's before its cards',
    // so that each card is laid out at the size the turn gives it. Layout requests posted
    // while they were held are answered by this and dropped.
    void runReleasedLayouts()
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

    void finish(const TranscriptTurn &turn)
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
            m_notReadyChip->setStatus(TurnText::tr("Not offered: %1").arg(servers),
                                      Tone::Warning);
            m_notReadyChip->setToolTip(
                TurnText::tr("These MCP servers were not ready when the question was asked, so "
                             "the model was not offered their tools: %1").arg(servers));
            m_notReadyChip->setVisible(true);
        }
        m_speaker->setText(speakerFor(turn));
        const auto [status, tone] = statusFor(result);
        m_turnChip->setStatus(status, tone);
        m_footerText->setText(footerFor(result));
        m_footerText->setToolTip(
            layerAttempts(result).isEmpty()
                ? QString()
                : TurnText::tr("Attempts per layer, retries included. A fallback means the model "
                           "asked first failed and the next one in the chain answered."));
        m_footer->setVisible(true);
    }

    // While the turn runs, in words: how long it has taken and what it is doing now.
    void showProgress(const TranscriptTurn *turn = nullptr)
    {
        if (!turn)
            turn = modelTurn();
        if (!turn || turn->result)
            return;
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

    QString progressText() const { return m_thinking->isHidden() ? QString() : m_thinking->text(); }

    // The height the turn wants at `width`, measured afresh. What depends on the width and
    // not on the layout (the question bubble's cap) is set first: the resize that would set
    // it comes later, and only to a turn on screen.
    int heightAt(int width)
    {
        fitTo(width);
        return measuredHeight(this, width);
    }

protected:
    void resizeEvent(QResizeEvent *event) override
    {
        fitTo(width());
        QWidget::resizeEvent(event);
    }
    void changeEvent(QEvent *event) override
    {
        if (event->type() == QEvent::PaletteChange)
            applyColours();
        QWidget::changeEvent(event);
    }

private:
    void fitTo(int width) { m_bubble->setMaximumWidth(std::max(160, width * 3 / 4)); }

    void holdCard(ToolCallCard *card)
    {
        if (!m_holding || !card->layout()->isEnabled())
            return;
        card->layout()->setEnabled(false);
        m_heldCards.append(card);
    }

    const TranscriptTurn *modelTurn() const
    {
        const int row = m_model->rowOf(m_requestId);
        return row < 0 ? nullptr : &m_model->turn(row);
    }

    void showPendingAnswer()
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

    void copyAnswer(bool asMarkdown) const
    {
        const TranscriptTurn *turn = modelTurn();
        if (!turn)
            return;
        QApplication::clipboard()->setText(asMarkdown ? turn->answer : m_answer->plainText());
    }

    void showMenu(const QPoint &globalPos)
    {
        QMenu menu(this);
        menu.addAction(tr("Copy answer"), this, [this] { copyAnswer(false); })
            ->setEnabled(!m_answer->isHidden());
        menu.addAction(tr("Copy as Markdown"), this, [this] { copyAnswer(true); })
            ->setEnabled(!m_answer->isHidden());
        menu.exec(globalPos);
    }

    void applyColours()
    {
        const QPalette muted = withMutedText(palette());
        for (QLabel *label : {m_speaker, m_thinking, m_footerText, m_reasoning})
            label->setPalette(muted);
    }

    TranscriptView *m_transcript = nullptr;
    TranscriptModel *m_model = nullptr;
    QString m_requestId;
    Placer m_place;
    QuestionBubble *m_bubble = nullptr;
    StatusChip *m_resumedChip = nullptr;
    QLabel *m_speaker = nullptr;
    QToolButton *m_copy = nullptr;
    QLabel *m_thinking = nullptr;
    AnswerText *m_answer = nullptr;
    QTimer m_answerFrame; // while it runs, further pieces of the answer wait for its end
    QTimer m_progressClock; // the elapsed time of a running turn, once a second
    QString m_pendingAnswer;
    QVBoxLayout *m_cardsLayout = nullptr;
    QMap<int, ToolCallCard *> m_cards;
    bool m_holding = false;
    QList<QPointer<ToolCallCard>> m_heldCards; // while holding: whose layouts wait
    QWidget *m_footer = nullptr;
    StatusChip *m_turnChip = nullptr;
    StatusChip *m_notRunChip = nullptr;
    StatusChip *m_cutOffChip = nullptr;
    StatusChip *m_notReadyChip = nullptr;
    QToolButton *m_reasoningToggle = nullptr;
    QLabel *m_reasoning = nullptr;
    QLabel *m_footerText = nullptr;
};

} // namespace Internal

namespace {

// A change made to one turn with its layouts held, then the turn placed: shown, measured and
// laid out once, top down (TurnView::holdLayouts).
template <typename Change>
void changeHeld(Internal::TurnView *turn, Change &&change)
{
    turn->holdLayouts();
    change();
    turn->placeHeld();
}

} // namespace

TranscriptView::TranscriptView(QWidget *parent)
    : QAbstractScrollArea(parent)
    , m_model(new TranscriptModel(this))
{
    setFrameShape(QFrame::NoFrame);
    setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    setVerticalScrollBarPolicy(Qt::ScrollBarAsNeeded);
    setFocusPolicy(Qt::NoFocus);
    viewport()->setObjectName(QStringLiteral("transcriptCanvas"));
    verticalScrollBar()->setSingleStep(24);
    // The bar is repainted at every growth of the conversation (its slider moves).
    cacheScrollBarGroove(verticalScrollBar());

    m_emptyHint = new QLabel(viewport());
    m_emptyHint->setTextFormat(Qt::PlainText);
    m_emptyHint->setWordWrap(true);
    m_emptyHint->setAlignment(Qt::AlignCenter);
    m_emptyHint->setText(
        tr("Ask about an order, its shipment or stock.\n\n"
           "For example: \u201cWhere is order A1001 and is SKU-200 in stock?\u201d\n"
           "Each tool the agent uses appears as a card under its answer; click a card to see "
           "every attempt."));
    m_emptyHint->setPalette(withMutedText(palette()));
}

TranscriptView::~TranscriptView() = default;

int TranscriptView::rowFor(const QString &requestId)
{
    const int row = m_model->ensureTurn(requestId);
    while (m_heights.size() <= row)
        m_heights.append(-1);
    m_dirty.insert(row); // whatever the caller changes next is measured at the next layout
    queueLayout();
    return row;
}

// The row of a turn's widget, or of a card inside it; -1 for anything else.
int TranscriptView::rowOfWidget(const QObject *widget) const
{
    for (const QObject *at = widget; at && at != viewport(); at = at->parent()) {
        for (auto it = m_live.cbegin(); it != m_live.cend(); ++it) {
            if (it.value() == at)
                return it.key();
        }
    }
    return -1;
}

Internal::TurnView *TranscriptView::liveTurn(int row) const
{
    return m_live.value(row);
}

Internal::TurnView *TranscriptView::realise(int row) const
{
    if (Internal::TurnView *turn = m_live.value(row))
        return turn;
    auto *self = const_cast<TranscriptView *>(this);
    const TranscriptTurn &record = m_model->turn(row);
    auto *turn = new Internal::TurnView(
        self, m_model, record.requestId,
        [self](Internal::TurnView *held) { self->placeHeld({held}); }, self->viewport());
    turn->setObjectName(QStringLiteral("turn-") + record.requestId);
    turn->restore(record);
    turn->installEventFilter(self);
    m_live.insert(row, turn);
    // Placed where the last layout put its row, so that it is usable at once; the queued
    // layout places it again and keeps it only if it is near the screen.
    const int width = columnWidth();
    const int top = m_tops.value(row, 0) - verticalScrollBar()->value();
    const int height = turn->heightAt(width);
    turn->setGeometry(std::max(sideMargin, (viewport()->width() - width) / 2), top, width,
                      height);
    turn->show();
    runLayout(turn); // once, now, at the height just measured
    // Made from the model as it is: measured as the next layout would measure it.
    if (width == m_measuredWidth && row < m_heights.size()) {
        self->m_heights[row] = height;
        self->m_dirty.remove(row);
    }
    self->queueLayout();
    return turn;
}

void TranscriptView::addQuestion(const QString &requestId, const QString &question)
{
    const int row = rowFor(requestId);
    m_model->change(row, [&](TranscriptTurn &turn) { turn.question = question; });
    if (Internal::TurnView *turn = liveTurn(row))
        turn->setQuestion(question);
    // Asking is the clearest sign the reader wants to see what comes next.
    m_followNewest = true;
}

void TranscriptView::markResumed(const QString &requestId, const QString &stage, int restarts)
{
    const int row = rowFor(requestId);
    m_model->change(row, [&](TranscriptTurn &turn) {
        turn.resumedStage = stage;
        turn.restarts = std::max(1, restarts);
    });
    if (Internal::TurnView *turn = liveTurn(row))
        turn->markResumed(stage, restarts);
}

void TranscriptView::appendAnswer(const QString &requestId, const QString &text)
{
    if (text.isEmpty())
        return;
    const int row = rowFor(requestId);
    m_model->change(row, [&](TranscriptTurn &turn) { turn.answer += text; });
    if (Internal::TurnView *turn = liveTurn(row))
        turn->appendAnswer(text);
}

void TranscriptView::noteModelProgress(const QString &requestId, const ModelProgress &progress)
{
    const int row = rowFor(requestId);
    m_model->change(row, [&](TranscriptTurn &turn) {
        if (progress.kind == ModelProgress::Kind::FallingBack) {
            turn.fallbackModel = progress.model;
            turn.modelRetry = {}; // the retries counted were the previous model's
        } else {
            turn.modelRetry = progress;
        }
    });
    if (Internal::TurnView *turn = liveTurn(row))
        turn->showProgress();
}

void TranscriptView::updateToolCall(const QString &requestId, const ToolCallRecord &call)
{
    const int row = rowFor(requestId);
    const bool wasConfirming = awaitsConfirmation(m_model->turn(row), call.index);
    m_model->change(row, [&](TranscriptTurn &turn) {
        turn.calls.insert(call.index, call);
        // Tools run now: what the model did before is over (the next call starts afresh).
        turn.modelRetry = {};
        turn.fallbackModel.clear();
    });
    Internal::TurnView *turn = liveTurn(row);
    if (!turn)
        return;
    // A confirmation panel is shown, measured and placed at once: its buttons are there to be
    // clicked; and it is closed at once when the question is over, so that nobody answers one
    // that no longer stands. Any other change waits for the next turn of the event loop (a
    // zero timer, so that input and timers due before it run first): the calls a message
    // starts together, or whose attempts time out together, are shown and laid out once, not
    // one per card inside the burst that reported them.
    if (call.state == ToolCallRecord::State::AwaitingConfirmation || wasConfirming) {
        m_pendingCards[requestId].remove(call.index);
        changeHeld(turn, [&] { turn->updateToolCall(call, m_model->turn(row)); });
        return;
    }
    m_pendingCards[requestId].insert(call.index);
    queueShowing();
}

void TranscriptView::queueShowing()
{
    if (!m_showTimer.isActive())
        m_showTimer.start(0, this);
}

void TranscriptView::timerEvent(QTimerEvent *event)
{
    if (event->timerId() == m_retireTimer.timerId()) {
        // A card at a time, then the turn: each fire costs a card's widgets, never a turn's.
        while (!m_retired.isEmpty() && !m_retired.constFirst())
            m_retired.removeFirst();
        // A turn whose menu is open (its own event loop runs it) waits until it closes.
        if (!m_retired.isEmpty() && m_retired.constFirst()->findChild<QMenu *>())
            return;
        if (!m_retired.isEmpty() && !m_retired.constFirst()->destroyOneCard()) {
            // Its parent, the viewport, would destroy it with the transcript; now, alone.
            const std::unique_ptr<Internal::TurnView> turn(m_retired.takeFirst().data());
        }
        if (m_retired.isEmpty())
            m_retireTimer.stop();
        return;
    }
    if (event->timerId() != m_showTimer.timerId()) {
        QAbstractScrollArea::timerEvent(event);
        return;
    }
    showPending();
}

// A slice: finished turns first (each at once: its answer and every card), then cards, until
// the slice's time is up; the rest waits for the next one. A millisecond: a slice and the
// paint it causes run back to back, and on a busy machine the scheduler gives the core away
// once the GUI thread has run a few milliseconds in a row. Against slices of 2 ms (16 new
// cards took ~2.8 ms of CPU with their layout), the busy window's longest gap and its p99
// came out about a millisecond shorter, for one point more of the GUI thread's CPU in more
// paints (docs/PERFORMANCE.md, "The window under failing tools").
void TranscriptView::showPending()
{
    constexpr qint64 sliceNs = 1'000'000;
    QElapsedTimer slice;
    slice.start();
    bool shown = false;
    QList<Internal::TurnView *> changed; // held until the slice is over, then placed once
    const auto hold = [&changed](Internal::TurnView *turn) {
        if (!changed.contains(turn)) {
            turn->holdLayouts();
            changed.append(turn);
        }
    };
    while (!m_pendingFinished.isEmpty() && (!shown || slice.nsecsElapsed() < sliceNs)) {
        const QString requestId = m_pendingFinished.takeFirst();
        const int row = m_model->rowOf(requestId);
        if (Internal::TurnView *turn = row >= 0 ? liveTurn(row) : nullptr) {
            hold(turn);
            turn->finish(m_model->turn(row));
            shown = true;
        }
    }
    while (!m_pendingCards.isEmpty() && (!shown || slice.nsecsElapsed() < sliceNs)) {
        auto it = m_pendingCards.begin();
        const int row = m_model->rowOf(it.key());
        Internal::TurnView *turn = row >= 0 ? liveTurn(row) : nullptr;
        if (!turn || it.value().isEmpty()) {
            // Off screen: it is made from the model when it comes back.
            m_pendingCards.erase(it);
            continue;
        }
        // Cards are made in core's order: the lowest index first.
        const int index = *std::min_element(it.value().cbegin(), it.value().cend());
        it.value().remove(index);
        const TranscriptTurn &shownTurn = m_model->turn(row);
        const auto call = shownTurn.calls.constFind(index);
        if (call != shownTurn.calls.cend()) {
            hold(turn);
            turn->updateToolCall(*call, shownTurn);
            shown = true;
        }
        if (it.value().isEmpty())
            m_pendingCards.erase(it);
    }
    if (m_pendingFinished.isEmpty() && m_pendingCards.isEmpty())
        m_showTimer.stop();
    else // the next slice after the timers due by then: a zero timer would always go first
        m_showTimer.start(1, Qt::PreciseTimer, this);
    // Placed now, once for the slice, before anything is painted: what the slice showed
    // appears where it belongs in the next frame.
    if (shown)
        placeHeld(changed);
}

// The turns whose layouts were held for a batch of changes, measured, given their heights,
// and only then laid out inside: top down, each card sized once (TurnView::holdLayouts).
void TranscriptView::placeHeld(const QList<Internal::TurnView *> &turns)
{
    for (Internal::TurnView *turn : turns) {
        const int row = m_live.key(turn, -1);
        if (turn->releaseLayouts() && row >= 0)
            m_dirty.insert(row);
    }
    layoutTurns();
    for (Internal::TurnView *turn : turns) {
        if (m_live.key(turn, -1) >= 0) // still on screen after the layout
            turn->runReleasedLayouts();
    }
}

void TranscriptView::finishTurn(const TurnResult &result)
{
    const int row = rowFor(result.requestId);
    // A confirmation panel still open is closed at once: nobody may approve a write for a
    // turn that is over, not even for one turn of the event loop.
    const bool confirming = awaitsConfirmation(m_model->turn(row));
    m_model->change(row, [&](TranscriptTurn &turn) {
        for (const ToolCallRecord &call : result.toolCalls)
            turn.calls.insert(call.index, call);
        turn.answer = finalAnswer(result, turn.answer);
        turn.result = result;
    });
    // finish() shows every call: the cards waiting are part of it.
    m_pendingCards.remove(result.requestId);
    Internal::TurnView *turn = liveTurn(row);
    if (!turn)
        return;
    if (confirming) {
        m_pendingFinished.removeAll(result.requestId);
        changeHeld(turn, [&] { turn->finish(m_model->turn(row)); });
    } else if (!m_pendingFinished.contains(result.requestId)) {
        m_pendingFinished.append(result.requestId);
        queueShowing();
    }
}

bool TranscriptView::hasUnshownChanges() const
{
    return !m_pendingFinished.isEmpty() || !m_pendingCards.isEmpty();
}

void TranscriptView::clear()
{
    for (Internal::TurnView *turn : std::as_const(m_live)) {
        turn->hide();
        turn->deleteLater();
    }
    m_live.clear();
    m_pendingCards.clear();
    m_pendingFinished.clear();
    m_model->clear();
    m_heights.clear();
    m_tops.clear();
    m_dirty.clear();
    m_followNewest = true;
    queueLayout();
}

QStringList TranscriptView::requestIds() const
{
    QStringList ids;
    ids.reserve(m_model->rowCount());
    for (int row = 0; row < m_model->rowCount(); ++row)
        ids.append(m_model->turn(row).requestId);
    return ids;
}

QString TranscriptView::questionText(const QString &requestId) const
{
    const int row = m_model->rowOf(requestId);
    return row < 0 ? QString() : m_model->turn(row).question;
}

QString TranscriptView::resumedText(const QString &requestId) const
{
    const int row = m_model->rowOf(requestId);
    return row < 0 ? QString() : resumedFor(m_model->turn(row));
}

QString TranscriptView::answerText(const QString &requestId) const
{
    const int row = m_model->rowOf(requestId);
    return row < 0 ? QString() : m_model->turn(row).answer;
}

QString TranscriptView::turnStatusText(const QString &requestId) const
{
    const int row = m_model->rowOf(requestId);
    if (row < 0 || !m_model->turn(row).result)
        return {};
    return statusFor(*m_model->turn(row).result).first;
}

QString TranscriptView::speakerText(const QString &requestId) const
{
    const int row = m_model->rowOf(requestId);
    return row < 0 ? QString() : speakerFor(m_model->turn(row));
}

QString TranscriptView::footerText(const QString &requestId) const
{
    const int row = m_model->rowOf(requestId);
    if (row < 0 || !m_model->turn(row).result)
        return {};
    return footerFor(*m_model->turn(row).result);
}

QString TranscriptView::notRunText(const QString &requestId) const
{
    const int row = m_model->rowOf(requestId);
    return row < 0 ? QString() : notRunFor(m_model->turn(row));
}

QString TranscriptView::progressText(const QString &requestId) const
{
    const int row = m_model->rowOf(requestId);
    if (row < 0)
        return {};
    return realise(row)->progressText();
}

QList<ToolCallCard *> TranscriptView::toolCallCards(const QString &requestId) const
{
    const int row = m_model->rowOf(requestId);
    if (row < 0)
        return {};
    return realise(row)->cards();
}

QString TranscriptView::requestIdAt(const QPoint &pos) const
{
    const int y = pos.y() + verticalScrollBar()->value();
    for (int row = 0; row < m_tops.size() && row < m_heights.size(); ++row) {
        if (y >= m_tops.at(row) && y < m_tops.at(row) + estimatedHeight(row))
            return m_model->turn(row).requestId;
    }
    return {};
}

void TranscriptView::resizeEvent(QResizeEvent *event)
{
    QAbstractScrollArea::resizeEvent(event);
    layoutTurns();
}

void TranscriptView::scrollContentsBy(int, int)
{
    if (m_inLayout)
        return;
    // The reader scrolled: follow the newest turn only from the bottom. Decided here, before
    // the layout (which keeps a followed transcript at the bottom); a slot on the scroll bar's
    // valueChanged runs after it, and the first scroll up snapped back.
    const QScrollBar *bar = verticalScrollBar();
    m_followNewest = bar->value() >= bar->maximum() - followSlack;
    layoutTurns();
}

bool TranscriptView::eventFilter(QObject *watched, QEvent *event)
{
    // A turn on screen, or a card in it, changed its size hint outside a held batch (a card
    // opened, its own frame timer showed an attempt, the answer's document laid itself out):
    // measure its turn again, and move the turns below it. At once, not queued: the turn must
    // have its new height before anything is painted or clicked in it. Qt has run the
    // widget's own layout before a filter sees the request (at the height it had then); the
    // batches where cards change most are held and placed top down instead (placeHeld).
    if (event->type() == QEvent::LayoutRequest && watched->isWidgetType() && !m_inLayout) {
        const int row = rowOfWidget(watched);
        if (row < 0)
            return QAbstractScrollArea::eventFilter(watched, event);
        m_dirty.insert(row);
        layoutTurns(); // measures the turn, gives it its height, then runs its layout
        return true;
    }
    return QAbstractScrollArea::eventFilter(watched, event);
}

bool TranscriptView::viewportEvent(QEvent *event)
{
    if (event->type() == QEvent::LayoutRequest)
        queueLayout();
    return QAbstractScrollArea::viewportEvent(event);
}

void TranscriptView::setTypingTarget(QWidget *target)
{
    m_typingTarget = target;
}

void TranscriptView::keyPressEvent(QKeyEvent *event)
{
    const QString text = event->text();
    const bool printable = !text.isEmpty() && text.at(0).isPrint()
        && !(event->modifiers() & (Qt::ControlModifier | Qt::AltModifier | Qt::MetaModifier));
    QWidget *target = m_typingTarget;
    if (printable && target && target->isEnabled() && target->isVisible()) {
        target->setFocus(Qt::OtherFocusReason);
        QCoreApplication::sendEvent(target, event);
        return;
    }
    QAbstractScrollArea::keyPressEvent(event);
}

void TranscriptView::queueLayout()
{
    if (m_layoutQueued)
        return;
    m_layoutQueued = true;
    QMetaObject::invokeMethod(this, [this] { layoutTurns(); }, Qt::QueuedConnection);
}

int TranscriptView::columnWidth() const
{
    return std::max(200, std::min(columnMaximumWidth, viewport()->width() - 2 * sideMargin));
}

int TranscriptView::estimatedHeight(int row) const
{
    if (m_heights.value(row, -1) >= 0)
        return m_heights.at(row);
    // Never measured: a guess from its text, good enough for the scroll bar; the turn is
    // measured when it first comes near the screen.
    const TranscriptTurn &turn = m_model->turn(row);
    const int lineHeight = fontMetrics().lineSpacing();
    const int charsPerLine = std::max(20, columnWidth() / std::max(1, fontMetrics().averageCharWidth()));
    const int answerLines = int(turn.answer.size()) / charsPerLine + 1
        + int(turn.answer.count(QLatin1Char('\n')));
    return 4 * lineHeight + 40 + answerLines * lineHeight + int(turn.calls.size()) * 64;
}

void TranscriptView::layoutTurns()
{
    m_layoutQueued = false;
    if (m_inLayout)
        return;
    m_inLayout = true;
    const int rows = m_model->rowCount();
    QWidget *port = viewport();
    const int width = columnWidth();
    const int left = std::max(sideMargin, (port->width() - width) / 2);
    const int viewHeight = port->height();
    m_emptyHint->setVisible(rows == 0);
    if (rows == 0) {
        m_emptyHint->setGeometry(left, viewHeight / 4, width, viewHeight / 3);
        verticalScrollBar()->setRange(0, 0);
        m_inLayout = false;
        return;
    }
    if (width != m_measuredWidth) { // measured heights hold for one width only
        m_measuredWidth = width;
        for (int &height : m_heights)
            height = -1;
    }
    QScrollBar *bar = verticalScrollBar();
    QSet<int> near;
    QSet<int> measuredRows; // laid out inside once placed: measuring left their layouts stale
    m_tops.resize(rows);
    // Measuring a turn can change the heights above the screen's top, and so where the
    // screen is: a few passes settle it (each pass measures only the turns near the screen).
    for (int pass = 0; pass < 4; ++pass) {
        int total = topMargin;
        for (int row = 0; row < rows; ++row)
            total += estimatedHeight(row) + (row + 1 < rows ? turnSpacing : 0);
        total += topMargin;
        bar->setPageStep(viewHeight);
        bar->setRange(0, std::max(0, total - viewHeight));
        if (m_followNewest)
            bar->setValue(bar->maximum());
        const int top = bar->value() - viewHeight / 2;
        const int bottom = bar->value() + viewHeight + viewHeight / 2;
        bool changed = false;
        near.clear();
        int y = topMargin;
        for (int row = 0; row < rows; ++row) {
            const int height = estimatedHeight(row);
            m_tops[row] = y;
            if (y + height >= top && y <= bottom) {
                near.insert(row);
                const int known = m_heights.at(row);
                Internal::TurnView *turn = realise(row);
                changed = changed || m_heights.at(row) != known; // measured as it was made
                // Measured again only when it changed (or never was at this width).
                if (m_heights.at(row) < 0 || m_dirty.contains(row)) {
                    m_dirty.remove(row);
                    measuredRows.insert(row);
                    const int measured = turn->heightAt(width);
                    if (measured != m_heights.at(row)) {
                        m_heights[row] = measured;
                        changed = true;
                    }
                }
            }
            y += estimatedHeight(row) + turnSpacing;
        }
        if (!changed)
            break;
    }
    const int offset = bar->value();
    const QWidget *focus = QApplication::focusWidget();
    for (auto it = m_live.begin(); it != m_live.end();) {
        Internal::TurnView *turn = it.value();
        const int row = it.key();
        // A turn holding the keyboard focus (a confirmation button, a card) stays made.
        if (near.contains(row) || (focus && turn->isAncestorOf(focus))) {
            turn->setGeometry(left, m_tops.at(row) - offset, width, m_heights.at(row) > 0
                                  ? m_heights.at(row) : estimatedHeight(row));
            turn->show();
            if (measuredRows.contains(row))
                runLayout(turn);
            ++it;
        } else {
            turn->hide();
            turn->removeEventFilter(this);
            m_retired.append(turn);
            if (!m_retireTimer.isActive())
                m_retireTimer.start(1, Qt::PreciseTimer, this);
            it = m_live.erase(it);
        }
    }
    m_inLayout = false;
}

} // namespace AgentConsole
