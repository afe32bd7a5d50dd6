#include "historysidebar.h"

#include "ui/common/consolepalette.h"
#include "ui/common/statuschip.h"

#include <QAction>
#include <QCheckBox>
#include <QEvent>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QLocale>
#include <QMenu>
#include <QMessageBox>
#include <QPushButton>
#include <QTimer>
#include <QToolButton>
#include <QVBoxLayout>

namespace AgentConsole {

namespace {

constexpr int kIdRole = Qt::UserRole;
constexpr int kRowTextRole = Qt::UserRole + 1;

// The same words and tones as the transcript's turn chips.
struct OutcomeLook
{
    QString text;
    Tone tone;
};

OutcomeLook outcomeLook(ConversationSummary::Outcome outcome)
{
    using Outcome = ConversationSummary::Outcome;
    switch (outcome) {
    case Outcome::Answered:
        return {HistorySidebar::tr("Answered"), Tone::Success};
    case Outcome::Partial:
        return {HistorySidebar::tr("Partly answered"), Tone::Warning};
    case Outcome::Unanswered:
        return {HistorySidebar::tr("Not answered"), Tone::Danger};
    case Outcome::Cancelled:
        return {HistorySidebar::tr("Cancelled"), Tone::Neutral};
    case Outcome::Interrupted:
        return {HistorySidebar::tr("Interrupted"), Tone::Warning};
    case Outcome::Failed:
        break;
    }
    return {HistorySidebar::tr("Failed"), Tone::Danger};
}

// "14:05" today, "11/30/26 14:05" before: local time, the locale's date, no seconds.
QString whenText(const QDateTime &utc, QDate today)
{
    const QDateTime local = utc.toLocalTime();
    const QString time = local.toString(QStringLiteral("HH:mm"));
    if (local.date() == today)
        return time;
    return QLocale().toString(local.date(), QLocale::ShortFormat) + QLatin1Char(' ') + time;
}

// One row of the list: the conversation's first question, its outcome chip and when it was
// last touched with how many turns it has. Given another conversation's texts in place.
class HistoryRow final : public QWidget
{
public:
    HistoryRow()
    {
        auto *layout = new QVBoxLayout(this);
        layout->setContentsMargins(6, 5, 6, 5);
        layout->setSpacing(3);
        m_title = new QLabel;
        m_title->setTextFormat(Qt::PlainText);
        QFont bold = m_title->font();
        bold.setBold(true);
        m_title->setFont(bold);
        auto *meta = new QHBoxLayout;
        meta->setSpacing(6);
        m_chip = new StatusChip;
        m_chip->setObjectName(QStringLiteral("historyOutcome"));
        m_facts = new QLabel;
        m_facts->setTextFormat(Qt::PlainText);
        m_facts->setForegroundRole(QPalette::PlaceholderText);
        meta->addWidget(m_chip);
        meta->addWidget(m_facts, 1);
        layout->addWidget(m_title);
        layout->addLayout(meta);
    }

    // Whether it shows `summary` as it would be shown on `today` ("14:05" becomes a date
    // and a time the next day).
    bool shows(const ConversationSummary &summary, QDate today) const
    {
        return m_shownOn == today && m_shown.conversationId == summary.conversationId
            && m_shown.title == summary.title && m_shown.latestOutcome == summary.latestOutcome
            && m_shown.turns == summary.turns && m_shown.updatedAt == summary.updatedAt
            && m_shown.scenario == summary.scenario;
    }
    void setShown(const ConversationSummary &summary, QDate today)
    {
        m_shown = summary;
        m_shownOn = today;
    }

    // Each part changes (and is laid out and painted again) only when its text does.
    void setTexts(const QString &title, const QString &outcome, Tone tone, const QString &facts)
    {
        m_title->setText(title);
        m_chip->setStatus(outcome, tone);
        m_facts->setText(facts);
    }

private:
    QLabel *m_title = nullptr;
    StatusChip *m_chip = nullptr;
    QLabel *m_facts = nullptr;
    ConversationSummary m_shown;
    QDate m_shownOn;
};

} // namespace

HistorySidebar::HistorySidebar(QAction *newConversation, QWidget *parent)
    : QDockWidget(tr("History"), parent)
{
    setObjectName(QStringLiteral("historySidebar"));
    setFeatures(QDockWidget::DockWidgetClosable | QDockWidget::DockWidgetMovable);

    auto *content = new QWidget;
    auto *layout = new QVBoxLayout(content);
    layout->setContentsMargins(8, 8, 8, 8);
    layout->setSpacing(6);

    if (newConversation) {
        auto *button = new QToolButton;
        button->setObjectName(QStringLiteral("historyNewConversation"));
        // Follows the action by hand: as its default action, the button took the action's
        // icon again at every change (its enabled state flips with every turn), and a button
        // given an icon asks its layout again; that reached the main window, which laid out
        // and repainted every dock once a turn.
        const auto follow = [button, newConversation] {
            button->setText(newConversation->iconText());
            button->setToolTip(newConversation->toolTip());
            button->setEnabled(newConversation->isEnabled());
        };
        follow();
        connect(newConversation, &QAction::changed, button, follow);
        connect(button, &QToolButton::clicked, newConversation, &QAction::trigger);
        button->setToolButtonStyle(Qt::ToolButtonTextOnly);
        button->setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
        layout->addWidget(button);
    }

    m_search = new QLineEdit;
    m_search->setObjectName(QStringLiteral("historySearch"));
    m_search->setPlaceholderText(tr("Search text or order id"));
    m_search->setAccessibleName(tr("Search conversations"));
    m_search->setClearButtonEnabled(true);
    m_search->setMaxLength(ConversationHistory::kMaxSearchLength);
    layout->addWidget(m_search);
    m_hideScenarios = new QCheckBox(tr("Hide scenario runs"));
    m_hideScenarios->setObjectName(QStringLiteral("historyHideScenarios"));
    m_hideScenarios->setToolTip(tr("Leave out the conversations that Scenarios ran"));
    layout->addWidget(m_hideScenarios);
    connect(m_hideScenarios, &QCheckBox::toggled, this, [this](bool hide) {
        if (!m_history)
            return;
        m_history->setHidingScenarios(hide);
        refresh();
    });

    // One search per pause in typing, not one per key.
    m_searchDelay = new QTimer(this);
    m_searchDelay->setSingleShot(true);
    m_searchDelay->setInterval(250);
    connect(m_search, &QLineEdit::textChanged, m_searchDelay, qOverload<>(&QTimer::start));
    connect(m_searchDelay, &QTimer::timeout, this, &HistorySidebar::refresh);

    m_list = new QListWidget;
    m_list->setObjectName(QStringLiteral("historyList"));
    m_list->setAccessibleName(tr("Stored conversations"));
    m_list->setSelectionMode(QAbstractItemView::SingleSelection);
    m_list->setVerticalScrollMode(QAbstractItemView::ScrollPerPixel);
    m_list->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    m_list->setContextMenuPolicy(Qt::CustomContextMenu);
    layout->addWidget(m_list, 1);

    m_status = new QLabel;
    m_status->setObjectName(QStringLiteral("historyStatus"));
    m_status->setWordWrap(true);
    m_status->setTextFormat(Qt::PlainText);
    layout->addWidget(m_status);

    auto *buttons = new QHBoxLayout;
    m_more = new QPushButton(tr("Show older"));
    m_more->setObjectName(QStringLiteral("historyMore"));
    m_more->setVisible(false);
    m_delete = new QPushButton(tr("Delete…"));
    m_delete->setObjectName(QStringLiteral("historyDelete"));
    m_delete->setToolTip(tr("Delete the selected conversation from this console's journal"));
    buttons->addWidget(m_more);
    buttons->addStretch(1);
    buttons->addWidget(m_delete);
    layout->addLayout(buttons);
    setWidget(content);

    connect(m_list, &QListWidget::itemActivated, this, [this](QListWidgetItem *item) {
        if (m_interactive && item)
            Q_EMIT openRequested(item->data(kIdRole).toString());
    });
    connect(m_list, &QListWidget::itemClicked, this, [this](QListWidgetItem *item) {
        if (m_interactive && item && item->data(kIdRole).toString() != m_current)
            Q_EMIT openRequested(item->data(kIdRole).toString());
    });
    connect(m_list, &QListWidget::currentItemChanged, this, &HistorySidebar::updateButtons);
    connect(m_list, &QWidget::customContextMenuRequested, this, [this](const QPoint &pos) {
        QListWidgetItem *item = m_list->itemAt(pos);
        if (!item || !m_interactive)
            return;
        const QString id = item->data(kIdRole).toString();
        auto *menu = new QMenu(this);
        menu->setAttribute(Qt::WA_DeleteOnClose);
        menu->addAction(tr("Open"), this, [this, id] { Q_EMIT openRequested(id); });
        menu->addAction(tr("Delete…"), this, [this, id] { requestDelete(id); });
        menu->popup(m_list->viewport()->mapToGlobal(pos));
    });
    connect(m_delete, &QPushButton::clicked, this, [this] {
        if (QListWidgetItem *item = m_list->currentItem())
            requestDelete(item->data(kIdRole).toString());
    });
    connect(m_more, &QPushButton::clicked, this, [this] {
        if (m_history)
            m_history->list(m_search->text(), m_page + 1);
    });
    setEnabled(false);
    updateButtons();
    if (parent)
        parent->installEventFilter(this);
}

HistorySidebar::~HistorySidebar() = default;

// A narrow window gives the sidebar's room to the conversation (the transcript, the banners
// and the question box need it more): it hides when the window narrows past the threshold
// and comes back when it is widened again, unless the staff member closed it meanwhile.
bool HistorySidebar::eventFilter(QObject *watched, QEvent *event)
{
    if (watched == parentWidget() && event->type() == QEvent::Resize) {
        const int width = parentWidget()->width();
        const int threshold = fontMetrics().averageCharWidth() * 120;
        const bool wasWide = m_lastWindowWidth == 0 || m_lastWindowWidth >= threshold;
        if (wasWide && width < threshold && !isHidden()) {
            m_autoHidden = true;
            hide();
        } else if (!wasWide && width >= threshold && m_autoHidden) {
            m_autoHidden = false;
            show();
        }
        m_lastWindowWidth = width;
    }
    return QDockWidget::eventFilter(watched, event);
}

void HistorySidebar::changeEvent(QEvent *event)
{
    // The titles were elided for the old font, the words are in the old language: every
    // row is shown again.
    if (m_list
        && (event->type() == QEvent::FontChange || event->type() == QEvent::LanguageChange)) {
        for (int i = 0; i < m_list->count(); ++i)
            static_cast<HistoryRow *>(m_list->itemWidget(m_list->item(i)))->setShown({}, {});
        refresh();
    }
    QDockWidget::changeEvent(event);
}

void HistorySidebar::attach(ConversationHistory *history)
{
    if (m_history)
        m_history->disconnect(this);
    m_history = history;
    setEnabled(history != nullptr);
    if (!history)
        return;
    history->setHidingScenarios(m_hideScenarios->isChecked());
    connect(history, &ConversationHistory::listed, this, &HistorySidebar::showPage);
    connect(history, &ConversationHistory::removed, this, &HistorySidebar::onRemoved);
    refresh();
}

void HistorySidebar::refresh()
{
    m_searchDelay->stop();
    if (m_history)
        m_history->list(m_search->text(), 0);
}

void HistorySidebar::setCurrentConversation(const QString &conversationId)
{
    m_current = conversationId;
    for (int i = 0; i < m_list->count(); ++i) {
        QListWidgetItem *item = m_list->item(i);
        if (item->data(kIdRole).toString() == conversationId) {
            const QSignalBlocker blocker(m_list);
            m_list->setCurrentItem(item);
            updateButtons();
            return;
        }
    }
    const QSignalBlocker blocker(m_list);
    m_list->setCurrentItem(nullptr);
    updateButtons();
}

void HistorySidebar::setInteractive(bool interactive)
{
    m_interactive = interactive;
    updateButtons();
}

QStringList HistorySidebar::rowTexts() const
{
    QStringList rows;
    for (int i = 0; i < m_list->count(); ++i)
        rows.append(m_list->item(i)->data(kRowTextRole).toString());
    return rows;
}

QStringList HistorySidebar::conversationIds() const
{
    QStringList ids;
    for (int i = 0; i < m_list->count(); ++i)
        ids.append(m_list->item(i)->data(kIdRole).toString());
    return ids;
}

void HistorySidebar::showPage(const ConversationPage &page)
{
    if (page.search != ConversationHistory::boundedSearch(m_search->text()))
        return; // an answer to a search since changed; the newer one follows
    // The first page is shown over the rows there are, each given its new summary in place:
    // after a turn the page is mostly the same conversations, one of them moved to the top,
    // and making fifty rows again cost the GUI thread many times more at every turn's end
    // (docs/PERFORMANCE.md, "history_bench"). Later pages add rows under it.
    const int first = page.page == 0 ? 0 : m_list->count();
    const QDate today = QDate::currentDate();
    m_page = page.page;
    for (int i = 0; i < page.conversations.size(); ++i)
        showRow(first + i, page.conversations.at(i), today);
    if (page.page == 0) {
        while (m_list->count() > page.conversations.size())
            delete m_list->takeItem(m_list->count() - 1);
    }
    m_more->setVisible(page.hasMore);
    if (m_list->count() == 0) {
        m_status->setText(page.search.isEmpty()
                              ? tr("No stored conversations yet.")
                              : tr("No conversation matches \u201c%1\u201d.").arg(page.search));
    } else {
        m_status->clear();
    }
    m_status->setVisible(m_list->count() == 0);
    setCurrentConversation(m_current);
    Q_EMIT listShown();
}

// Row `index` shows `summary`: made if the list is shorter, otherwise given its texts
// (widgets and items left alone where nothing changed, so they are not laid out or painted
// again).
void HistorySidebar::showRow(int index, const ConversationSummary &summary, QDate today)
{
    QListWidgetItem *item = m_list->item(index);
    auto *row = item ? static_cast<HistoryRow *>(m_list->itemWidget(item)) : nullptr;
    if (row && row->shows(summary, today))
        return;
    if (!row) {
        item = new QListWidgetItem(m_list);
        row = new HistoryRow;
        m_list->setItemWidget(item, row);
    }
    row->setShown(summary, today);

    const OutcomeLook look = outcomeLook(summary.latestOutcome);
    const QString title = summary.title.isEmpty() ? tr("(no question)") : summary.title;
    const QString turns = tr("%n turn(s)", nullptr, summary.turns);
    const QString when = whenText(summary.updatedAt, today);
    // A scenario run says so first: it is a demo or a QA run, not a customer's conversation.
    const QString marker = summary.scenario.isEmpty() ? QString() : tr("Scenario run");
    QString facts = when + QStringLiteral(" \u00B7 ") + turns;
    if (!marker.isEmpty())
        facts = marker + QStringLiteral(" \u00B7 ") + facts;
    // Elided to the row's width; the whole question is in the tooltip.
    const QFontMetrics metrics = fontMetrics();
    row->setTexts(metrics.elidedText(title, Qt::ElideRight, metrics.averageCharWidth() * 28),
                  look.text, look.tone, facts);

    // QListWidgetItem ignores a value equal to the one it holds.
    QString text = QStringLiteral("%1 \u2014 %2 \u00B7 %3").arg(title, when, look.text);
    if (!marker.isEmpty())
        text = marker + QStringLiteral(": ") + text;
    item->setData(kIdRole, summary.conversationId);
    item->setData(kRowTextRole, text);
    item->setData(Qt::AccessibleTextRole, text);
    item->setToolTip(summary.title);
    item->setSizeHint(row->sizeHint());
}

void HistorySidebar::requestDelete(const QString &conversationId)
{
    if (!m_history || !m_interactive || conversationId.isEmpty())
        return;
    QString title;
    for (int i = 0; i < m_list->count(); ++i) {
        if (m_list->item(i)->data(kIdRole).toString() == conversationId)
            title = m_list->item(i)->toolTip();
    }
    auto *box = new QMessageBox(QMessageBox::Warning, tr("Delete this conversation?"),
                                tr("\u201c%1\u201d and all its turns are deleted from this "
                                   "console's journal. This cannot be undone.")
                                    .arg(title),
                                QMessageBox::Cancel, this);
    box->setObjectName(QStringLiteral("historyDeleteConfirmation"));
    QPushButton *confirm = box->addButton(tr("Delete"), QMessageBox::DestructiveRole);
    confirm->setObjectName(QStringLiteral("historyConfirmDelete"));
    box->setDefaultButton(QMessageBox::Cancel);
    box->setAttribute(Qt::WA_DeleteOnClose);
    connect(box, &QMessageBox::buttonClicked, this,
            [this, confirm, conversationId](QAbstractButton *clicked) {
                if (clicked == confirm && m_history)
                    m_history->remove(conversationId);
            });
    box->open(); // window-modal, without a nested event loop
}

void HistorySidebar::onRemoved(const QString &conversationId, bool ok, const QString &message)
{
    if (!ok) {
        m_status->setText(message);
        m_status->setVisible(true);
        return;
    }
    Q_EMIT conversationRemoved(conversationId);
    refresh();
}

void HistorySidebar::updateButtons()
{
    m_delete->setEnabled(m_interactive && m_list->currentItem() != nullptr);
    m_list->setEnabled(m_interactive || m_list->count() > 0);
}

} // namespace AgentConsole
