#pragma once

#include <QDialog>
#include <QHash>
#include <QWidget>

class QCheckBox;
class QComboBox;
class QDateTimeEdit;
class QGridLayout;
class QLabel;
class QLineEdit;
class QPushButton;

namespace AgentConsole {

class Isolations;

// A lead's Isolate… form: the dependency (the names the console knows), a reason (required:
// staff read it on every refused call) and an optional end time. Opened, never exec()'d.
class IsolateDialog final : public QDialog
{
    Q_OBJECT

public:
    IsolateDialog(const QStringList &names, QWidget *parent = nullptr);

    QString dependency() const;
    QString reason() const;
    QDateTime until() const; // UTC; invalid: until lifted

    QComboBox *nameBox() const { return m_name; }
    QLineEdit *reasonEdit() const { return m_reason; }
    QCheckBox *endsBox() const { return m_ends; }
    QDateTimeEdit *untilEdit() const { return m_until; }
    QPushButton *okButton() const { return m_ok; }

private:
    QComboBox *m_name = nullptr;
    QLineEdit *m_reason = nullptr;
    QCheckBox *m_ends = nullptr;
    QDateTimeEdit *m_until = nullptr;
    QPushButton *m_ok = nullptr;
};

// The diagnostics dock's isolations (docs/TEAM.md): the team database's connection, every
// isolation in force in core's words, and for a lead the Isolate… and Lift buttons; staff
// see the isolations and a disabled Lift whose tooltip says why. Shows and asks; the
// service (Isolations) decides, and the database enforces who may.
class IsolationsPanel final : public QWidget
{
    Q_OBJECT

public:
    explicit IsolationsPanel(Isolations *isolations, QWidget *parent = nullptr);

    QString connectionText() const;
    QStringList lines() const; // one per isolation, as shown
    QPushButton *isolateButton() const { return m_isolate; }
    QPushButton *liftButton(const QString &dependency) const;
    QString answerText() const;
    IsolateDialog *openDialog() const { return m_dialog; }

public Q_SLOTS:
    void refresh();
    void openIsolateDialog();

private:
    Isolations *m_isolations = nullptr;
    QLabel *m_connection = nullptr;
    QLabel *m_none = nullptr;
    QLabel *m_answer = nullptr;
    QWidget *m_rows = nullptr;
    QGridLayout *m_grid = nullptr;
    QPushButton *m_isolate = nullptr;
    QHash<QString, QPushButton *> m_lift;
    QList<QLabel *> m_lineLabels;
    IsolateDialog *m_dialog = nullptr;
};

} // namespace AgentConsole
