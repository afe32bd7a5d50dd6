#pragma once

#include <QWidget>

class QPushButton;

namespace AgentConsole {

class NoticeBanner;

// Across the top of the window when core found turns that were interrupted (the console
// stopped mid-turn, or an answer could not be written): how many, the first one's question,
// and Resume / Dismiss. While they are carried on it says which one is running. It only
// reports the clicks; the window passes them to the runtime and the agent loop.
class InterruptedTurnsBanner final : public QWidget
{
    Q_OBJECT

public:
    explicit InterruptedTurnsBanner(QWidget *parent = nullptr);

    // "2 interrupted requests can be resumed — “Where is order A1001…”", with both buttons.
    void showOffer(int count, const QString &firstQuestion);
    // "Resuming interrupted request 1 of 2 — “…”", without buttons.
    void showProgress(int current, int total, const QString &question);
    void clearOffer();
    // Off while another turn runs: the loop carries one turn at a time.
    void setResumeEnabled(bool enabled);

    QString text() const;
    QPushButton *resumeButton() const { return m_resume; }
    QPushButton *dismissButton() const { return m_dismiss; }

    // A question on one line, cut to about `characters` with an ellipsis.
    static QString questionPreview(const QString &question, int characters = 60);

Q_SIGNALS:
    void resumeRequested();
    void dismissRequested();

private:
    NoticeBanner *m_banner = nullptr;
    QPushButton *m_resume = nullptr;
    QPushButton *m_dismiss = nullptr;
};

} // namespace AgentConsole
