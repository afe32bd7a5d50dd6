#pragma once

#include "core/history/conversationhistory.h"

#include <QDockWidget>
#include <QPointer>

class QAction;
class QCheckBox;
class QEvent;
class QLabel;
class QLineEdit;
class QListWidget;
class QListWidgetItem;
class QPushButton;
class QTimer;

namespace AgentConsole {

// The stored conversations in a sidebar (docs/HISTORY.md): each row is its first question,
// when it was last touched and how its latest turn ended, in words and in the severity
// colours of the transcript's chips. A search box filters by text or order id; Delete asks
// first. It shows what ConversationHistory lists and forwards: opening a row is
// openRequested(), the window carries it out; a search, a page or a delete goes to the
// history. Disabled until attach().
class HistorySidebar final : public QDockWidget
{
    Q_OBJECT

public:
    // `newConversation`: the window's own action, offered as a button at the top.
    explicit HistorySidebar(QAction *newConversation, QWidget *parent = nullptr);
    ~HistorySidebar() override;

    void attach(ConversationHistory *history);
    // Lists the first page again with the current search (after a turn, a delete, ...).
    void refresh();
    // Marks the conversation on screen (none: empty).
    void setCurrentConversation(const QString &conversationId);
    // Whether rows may be opened or deleted now (not while a turn or a resume runs).
    void setInteractive(bool interactive);

    QLineEdit *searchBox() const { return m_search; }
    QListWidget *list() const { return m_list; }
    QPushButton *deleteButton() const { return m_delete; }
    QPushButton *moreButton() const { return m_more; }
    QCheckBox *hideScenariosBox() const { return m_hideScenarios; }
    // The rows as shown, for tests and accessibility: "title — time · outcome".
    QStringList rowTexts() const;
    QStringList conversationIds() const;
    // Asks to delete the conversation of that row (a confirmation dialog first).
    void requestDelete(const QString &conversationId);

protected:
    bool eventFilter(QObject *watched, QEvent *event) override;
    void changeEvent(QEvent *event) override;

Q_SIGNALS:
    void openRequested(const QString &conversationId);
    // Emitted after the journal deleted it.
    void conversationRemoved(const QString &conversationId);
    // A page was shown (tests wait for it).
    void listShown();

private:
    void showPage(const ConversationPage &page);
    void showRow(int index, const ConversationSummary &summary, QDate today);
    void onRemoved(const QString &conversationId, bool ok, const QString &message);
    void updateButtons();

    QPointer<ConversationHistory> m_history;
    QLineEdit *m_search = nullptr;
    QCheckBox *m_hideScenarios = nullptr;
    QTimer *m_searchDelay = nullptr;
    QListWidget *m_list = nullptr;
    QPushButton *m_delete = nullptr;
    QPushButton *m_more = nullptr;
    QLabel *m_status = nullptr;
    QString m_current;
    int m_page = 0;
    bool m_interactive = true;
    // Hidden because the window became narrow (not by the staff member): shown again when
    // it is wide again.
    bool m_autoHidden = false;
    int m_lastWindowWidth = 0;
};

} // namespace AgentConsole
