#include "historysidebar.h"

#include "ui/common/consolepalette.h"
#include "ui/common/statuschip.h"

#include <QAction>
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
QString whenText(const QDateTime &utc)
{
    const QDateTime local = utc.toLocalTime();
    const QString time = local.toString(QStringLiteral("HH:mm"));
    if (local.date() == QDate::currentDate())
        return time;
    return QLocale().toString(local.date(), QLocale::ShortFormat) + QLatin1Char(' ') + time;
}

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

void HistorySidebar::attach(ConversationHistory *history)
{
    if (m_history)
        m_history->disconnect(this);
    m_history = history;
    setEnabled(history != nullptr);
    if (!history)
        return;
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
    if (page.page == 0)
        m_list->clear();
    m_page = page.page;
    for (const ConversationSummary &summary : page.conversations)
        addRow(summary);
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

void HistorySidebar::addRow(const ConversationSummary &summary)
{
    const OutcomeLook look = outcomeLook(summary.latestOutcome);
    const QString title = summary.title.isEmpty() ? tr("(no question)") : summary.title;
    const QString turns = tr("%n turn(s)", nullptr, summary.turns);
    const QString when = whenText(summary.updatedAt);

    auto *row = new QWidget;
    auto *rowLayout = new QVBoxLayout(row);
    rowLayout->setContentsMargins(6, 5, 6, 5);
    rowLayout->setSpacing(3);
    auto *titleLabel = new QLabel;
    titleLabel->setTextFormat(Qt::PlainText);
    // Elided to the row's width; the whole question is in the tooltip.
    titleLabel->setText(fontMetrics().elidedText(title, Qt::ElideRight,
                                                 fontMetrics().averageCharWidth() * 28));
    QFont bold = titleLabel->font();
    bold.setBold(true);
    titleLabel->setFont(bold);
    auto *meta = new QHBoxLayout;
    meta->setSpacing(6);
    auto *chip = new StatusChip;
    chip->setObjectName(QStringLiteral("historyOutcome"));
    chip->setStatus(look.text, look.tone);
    auto *facts = new QLabel(when + QStringLiteral(" · ") + turns);
    facts->setTextFormat(Qt::PlainText);
    facts->setForegroundRole(QPalette::PlaceholderText);
    meta->addWidget(chip);
    meta->addWidget(facts, 1);
    rowLayout->addWidget(titleLabel);
    rowLayout->addLayout(meta);

    auto *item = new QListWidgetItem(m_list);
    const QString text = QStringLiteral("%1 — %2 · %3").arg(title, when, look.text);
    item->setData(kIdRole, summary.conversationId);
    item->setData(kRowTextRole, text);
    item->setData(Qt::AccessibleTextRole, text);
    item->setToolTip(summary.title);
    item->setSizeHint(row->sizeHint());
    m_list->setItemWidget(item, row);
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
