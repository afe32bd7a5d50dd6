#include "transcriptview.h"

#include "consolepalette.h"
#include "statuschip.h"
#include "toolcallcard.h"
#include "toolcalltext.h"

#include "core/agent/turncheckpoint.h"
#include "core/agent/turnresult.h"

#include <QCoreApplication>
#include <QEvent>
#include <QHBoxLayout>
#include <QLabel>
#include <QMap>
#include <QPainter>
#include <QScrollBar>
#include <QSet>
#include <QTimer>
#include <QToolButton>
#include <QVBoxLayout>

#include <algorithm>
#include <iterator>

namespace AgentConsole {

namespace {

constexpr int columnMaximumWidth = 920;
constexpr int answerFrameMs = 33; // a streamed answer is shown at most this often
constexpr int followSlack = 24; // pixels from the bottom that still count as "at the newest"

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

// The staff member's question: a rounded bubble tinted with the palette's highlight.
class QuestionBubble final : public QLabel
{
public:
    explicit QuestionBubble(QWidget *parent)
        : QLabel(parent)
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

} // namespace

namespace Internal {

// One turn of the conversation as the transcript shows it.
class TurnView final : public QWidget
{
public:
    TurnView(TranscriptView *transcript, const QString &requestId, QWidget *parent)
        : QWidget(parent)
        , m_transcript(transcript)
        , m_requestId(requestId)
    {
        m_answerFrame.setSingleShot(true);
        m_answerFrame.setInterval(answerFrameMs);
        QObject::connect(&m_answerFrame, &QTimer::timeout, this, [this] {
            if (m_answerPending)
                showAnswer();
        });
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

        m_speaker = new QLabel(TurnText::tr("Agent"), this);
        m_speaker->setFont(scaledFont(m_speaker->font(), 0.9, QFont::DemiBold));

        m_thinking = new QLabel(TurnText::tr("Looking this up…"), this);
        QFont thinkingFont = m_thinking->font();
        thinkingFont.setItalic(true);
        m_thinking->setFont(thinkingFont);

        // A thinking model's reasoning: never the answer, folded away unless asked for.
        m_reasoningToggle = new QToolButton(this);
        m_reasoningToggle->setObjectName(QStringLiteral("reasoningToggle"));
        m_reasoningToggle->setText(TurnText::tr("The model's thinking"));
        m_reasoningToggle->setCheckable(true);
        m_reasoningToggle->setAutoRaise(true);
        m_reasoningToggle->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
        m_reasoningToggle->setArrowType(Qt::RightArrow);
        m_reasoningToggle->setVisible(false);
        m_reasoning = new QLabel(this);
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

        m_answer = new QLabel(this);
        m_answer->setTextFormat(Qt::PlainText);
        m_answer->setWordWrap(true);
        m_answer->setTextInteractionFlags(Qt::TextSelectableByMouse);
        m_answer->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
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
        m_footerText = new QLabel(m_footer);
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
        footerLayout->addWidget(m_footerText, 1);
        m_footer->setVisible(false);

        auto *answerColumn = new QVBoxLayout;
        answerColumn->setContentsMargins(2, 0, 0, 0);
        answerColumn->setSpacing(6);
        answerColumn->addWidget(m_speaker);
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

        applyColours();
    }

    void setQuestion(const QString &question)
    {
        m_bubble->setText(question);
        m_bubble->setVisible(!question.isEmpty());
    }
    QString question() const { return m_bubble->text(); }

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
    QString resumed() const
    {
        return m_resumedChip->isHidden() ? QString() : m_resumedChip->text();
    }

    void appendAnswer(const QString &text)
    {
        m_answerText += text;
        // Shown at most once a frame: a model that streams faster (the offline model sends
        // its pieces back to back) would otherwise have the whole transcript laid out and
        // painted for every piece. The first piece shows at once; finish() shows the rest.
        if (m_answerFrame.isActive()) {
            m_answerPending = true;
            return;
        }
        showAnswer();
        m_answerFrame.start();
    }
    QString answer() const { return m_answerText; }

    void updateToolCall(const ToolCallRecord &call)
    {
        if (call.result.code == ResultCode::ToolCallLimit) {
            m_notRun.insert(call.index);
            const int count = int(m_notRun.size());
            m_notRunChip->setStatus(
                TurnText::tr("%n lookup(s) not run: too many asked for at once", nullptr, count),
                Tone::Warning);
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
            // Cards stay in the order core numbered the calls, whatever order they start in.
            const auto next = m_cards.upperBound(call.index);
            const int position = next == m_cards.end()
                ? int(m_cards.size())
                : int(std::distance(m_cards.begin(), next));
            m_cards.insert(call.index, card);
            m_cardsLayout->insertWidget(position, card);
        }
        card->setToolCall(call);
        if (call.state == ToolCallRecord::State::AwaitingConfirmation)
            m_awaiting.insert(call.index);
        else
            m_awaiting.remove(call.index);
        m_thinking->setText(m_awaiting.isEmpty()
                                ? TurnText::tr("Looking this up…")
                                : TurnText::tr("Waiting for your confirmation below…"));
    }
    QList<ToolCallCard *> cards() const { return m_cards.values(); }

    void finish(const TurnResult &result)
    {
        for (const ToolCallRecord &call : result.toolCalls)
            updateToolCall(call);
        if (!result.answer.isEmpty())
            m_answerText = result.answer;
        if (m_answerText.isEmpty()) {
            switch (result.status) {
            case TurnStatus::Cancelled:
                m_answerText =
                    TurnText::tr("The turn was cancelled before an answer was written.");
                break;
            case TurnStatus::Failed:
                m_answerText = TurnText::tr("No answer could be written for this question.");
                break;
            case TurnStatus::Completed:
                break;
            }
        }
        showAnswer();
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
        if (!result.model.isEmpty())
            m_speaker->setText(TurnText::tr("Agent · %1").arg(result.model));

        QStringList facts;
        // The calls the bound refused have their own line above; these are the ones that ran.
        const int calls = int(result.toolCalls.size()) - result.toolCallsOverLimit();
        // The chip follows the turn's outcome: green only when everything asked was answered.
        switch (result.outcome()) {
        case TurnOutcome::Answered:
            m_turnChip->setStatus(TurnText::tr("Answered"), Tone::Success);
            break;
        case TurnOutcome::Partial:
            m_turnChip->setStatus(TurnText::tr("Partly answered"), Tone::Warning);
            break;
        case TurnOutcome::Unanswered:
            m_turnChip->setStatus(result.modelDeclined ? TurnText::tr("Declined by the model")
                                                       : TurnText::tr("Not answered"),
                                  Tone::Danger);
            break;
        case TurnOutcome::Failed:
            if (result.status == TurnStatus::Cancelled)
                m_turnChip->setStatus(TurnText::tr("Cancelled"), Tone::Neutral);
            else
                m_turnChip->setStatus(TurnText::tr("Failed"), Tone::Danger);
            break;
        }
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
        if (!result.incidentId.isEmpty())
            facts.append(
                TurnText::tr("incident %1 (details in the local log)").arg(result.incidentId));
        m_footerText->setText(facts.join(QStringLiteral(" · ")));
        m_footerText->setToolTip(
            attempts.isEmpty()
                ? QString()
                : TurnText::tr("Attempts per layer, retries included. A fallback means the model "
                           "asked first failed and the next one in the chain answered."));
        m_footer->setVisible(true);
        m_finished = true;
    }
    QString statusText() const { return m_finished ? m_turnChip->text() : QString(); }
    QString speaker() const { return m_speaker->text(); }
    QString footer() const { return m_finished ? m_footerText->text() : QString(); }
    QString notRun() const { return m_notRunChip->isHidden() ? QString() : m_notRunChip->text(); }

protected:
    void resizeEvent(QResizeEvent *event) override
    {
        m_bubble->setMaximumWidth(std::max(160, width() * 3 / 4));
        QWidget::resizeEvent(event);
    }
    void changeEvent(QEvent *event) override
    {
        if (event->type() == QEvent::PaletteChange)
            applyColours();
        QWidget::changeEvent(event);
    }

private:
    void showAnswer()
    {
        m_answerPending = false;
        m_answer->setText(m_answerText);
        m_answer->setVisible(!m_answerText.isEmpty());
        if (!m_answerText.isEmpty())
            m_thinking->setVisible(false);
    }
    void applyColours()
    {
        const QPalette muted = withMutedText(palette());
        for (QLabel *label : {m_speaker, m_thinking, m_footerText, m_reasoning})
            label->setPalette(muted);
    }

    TranscriptView *m_transcript = nullptr;
    QString m_requestId;
    QuestionBubble *m_bubble = nullptr;
    StatusChip *m_resumedChip = nullptr;
    QLabel *m_speaker = nullptr;
    QLabel *m_thinking = nullptr;
    QLabel *m_answer = nullptr;
    QTimer m_answerFrame; // while it runs, further pieces of the answer wait for its end
    bool m_answerPending = false;
    QVBoxLayout *m_cardsLayout = nullptr;
    QMap<int, ToolCallCard *> m_cards;
    QSet<int> m_awaiting; // calls whose confirmation panel waits for the staff member
    QWidget *m_footer = nullptr;
    StatusChip *m_turnChip = nullptr;
    StatusChip *m_notRunChip = nullptr;
    StatusChip *m_cutOffChip = nullptr;
    QToolButton *m_reasoningToggle = nullptr;
    QLabel *m_reasoning = nullptr;
    QSet<int> m_notRun;
    QLabel *m_footerText = nullptr;
    QString m_answerText;
    bool m_finished = false;
};

} // namespace Internal

TranscriptView::TranscriptView(QWidget *parent)
    : QScrollArea(parent)
{
    setFrameShape(QFrame::NoFrame);
    setWidgetResizable(true);
    setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    setFocusPolicy(Qt::NoFocus);

    auto *canvas = new QWidget;
    canvas->setObjectName(QStringLiteral("transcriptCanvas"));
    m_column = new QWidget(canvas);
    m_column->setMaximumWidth(columnMaximumWidth);
    auto *canvasLayout = new QHBoxLayout(canvas);
    canvasLayout->setContentsMargins(20, 16, 20, 16);
    canvasLayout->addStretch(0);
    canvasLayout->addWidget(m_column, 1);
    canvasLayout->addStretch(0);

    m_emptyHint = new QLabel(m_column);
    m_emptyHint->setTextFormat(Qt::PlainText);
    m_emptyHint->setWordWrap(true);
    m_emptyHint->setAlignment(Qt::AlignCenter);
    m_emptyHint->setText(
        tr("Ask about an order, its shipment or stock.\n\n"
           "For example: \u201cWhere is order A1001 and is SKU-200 in stock?\u201d\n"
           "Each tool the agent uses appears as a card under its answer; click a card to see "
           "every attempt."));
    m_emptyHint->setPalette(withMutedText(palette()));

    m_turnsLayout = new QVBoxLayout(m_column);
    m_turnsLayout->setContentsMargins(0, 0, 0, 0);
    m_turnsLayout->setSpacing(28);
    // While there is no turn yet the hint sits a third of the way down the transcript.
    m_emptyHint->setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Expanding);
    m_turnsLayout->addWidget(m_emptyHint, 2);
    m_turnsLayout->addStretch(1);

    setWidget(canvas);

    QScrollBar *bar = verticalScrollBar();
    connect(bar, &QScrollBar::rangeChanged, this, [this] {
        if (m_followNewest)
            scrollToNewest();
    });
    connect(bar, &QScrollBar::valueChanged, this, [this, bar](int value) {
        m_followNewest = value >= bar->maximum() - followSlack;
    });
}

TranscriptView::~TranscriptView() = default;

Internal::TurnView *TranscriptView::turnFor(const QString &requestId)
{
    if (Internal::TurnView *turn = m_turns.value(requestId))
        return turn;
    auto *turn = new Internal::TurnView(this, requestId, m_column);
    turn->setObjectName(QStringLiteral("turn-") + requestId);
    m_emptyHint->setVisible(false);
    m_turnsLayout->insertWidget(m_turnsLayout->count() - 1, turn); // before the stretch
    m_turns.insert(requestId, turn);
    m_order.append(requestId);
    return turn;
}

void TranscriptView::addQuestion(const QString &requestId, const QString &question)
{
    turnFor(requestId)->setQuestion(question);
    // Asking is the clearest sign the reader wants to see what comes next.
    m_followNewest = true;
    scrollToNewest();
}

void TranscriptView::markResumed(const QString &requestId, const QString &stage, int restarts)
{
    turnFor(requestId)->markResumed(stage, restarts);
}

void TranscriptView::appendAnswer(const QString &requestId, const QString &text)
{
    turnFor(requestId)->appendAnswer(text);
}

void TranscriptView::updateToolCall(const QString &requestId, const ToolCallRecord &call)
{
    turnFor(requestId)->updateToolCall(call);
}

void TranscriptView::finishTurn(const TurnResult &result)
{
    turnFor(result.requestId)->finish(result);
}

void TranscriptView::clear()
{
    for (Internal::TurnView *turn : std::as_const(m_turns)) {
        turn->hide();
        m_turnsLayout->removeWidget(turn);
        turn->deleteLater();
    }
    m_turns.clear();
    m_order.clear();
    m_emptyHint->setVisible(true);
    m_followNewest = true;
}

QStringList TranscriptView::requestIds() const
{
    return m_order;
}

QString TranscriptView::questionText(const QString &requestId) const
{
    const Internal::TurnView *turn = m_turns.value(requestId);
    return turn ? turn->question() : QString();
}

QString TranscriptView::resumedText(const QString &requestId) const
{
    const Internal::TurnView *turn = m_turns.value(requestId);
    return turn ? turn->resumed() : QString();
}

QString TranscriptView::answerText(const QString &requestId) const
{
    const Internal::TurnView *turn = m_turns.value(requestId);
    return turn ? turn->answer() : QString();
}

QString TranscriptView::turnStatusText(const QString &requestId) const
{
    const Internal::TurnView *turn = m_turns.value(requestId);
    return turn ? turn->statusText() : QString();
}

QString TranscriptView::speakerText(const QString &requestId) const
{
    const Internal::TurnView *turn = m_turns.value(requestId);
    return turn ? turn->speaker() : QString();
}

QString TranscriptView::footerText(const QString &requestId) const
{
    const Internal::TurnView *turn = m_turns.value(requestId);
    return turn ? turn->footer() : QString();
}

QString TranscriptView::notRunText(const QString &requestId) const
{
    const Internal::TurnView *turn = m_turns.value(requestId);
    return turn ? turn->notRun() : QString();
}

QList<ToolCallCard *> TranscriptView::toolCallCards(const QString &requestId) const
{
    const Internal::TurnView *turn = m_turns.value(requestId);
    return turn ? turn->cards() : QList<ToolCallCard *>();
}

QString TranscriptView::requestIdAt(const QPoint &pos) const
{
    const QPoint inColumn = m_column->mapFrom(viewport(), pos);
    for (auto it = m_turns.constBegin(); it != m_turns.constEnd(); ++it) {
        if (it.value()->isVisible() && it.value()->geometry().contains(inColumn))
            return it.key();
    }
    return {};
}

void TranscriptView::resizeEvent(QResizeEvent *event)
{
    QScrollArea::resizeEvent(event);
    if (m_followNewest)
        scrollToNewest();
}

void TranscriptView::scrollToNewest()
{
    QScrollBar *bar = verticalScrollBar();
    bar->setValue(bar->maximum());
}

} // namespace AgentConsole
