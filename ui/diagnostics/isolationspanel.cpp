#include "isolationspanel.h"

#include "ui/common/pressonenter.h"
#include "ui/common/wraplabel.h"

#include "core/team/isolations.h"
#include "core/team/isolationwords.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDateTimeEdit>
#include <QDialogButtonBox>
#include <QFormLayout>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QVBoxLayout>

namespace AgentConsole {

IsolateDialog::IsolateDialog(const QStringList &names, QWidget *parent)
    : QDialog(parent)
{
    setWindowTitle(tr("Isolate a dependency"));
    setObjectName(QStringLiteral("isolateDialog"));
    auto *layout = new QVBoxLayout(this);
    auto *intro = new WrapLabel(tr("Every console of the team refuses its calls at once, with "
                                   "your staff id, the time and this reason, until you lift it "
                                   "or it ends."),
                                this);
    intro->setWordWrap(true);
    layout->addWidget(intro);
    auto *form = new QFormLayout;
    m_name = new QComboBox(this);
    m_name->addItems(names);
    m_name->setObjectName(QStringLiteral("isolateName"));
    form->addRow(tr("Dependency:"), m_name);
    m_reason = new QLineEdit(this);
    m_reason->setObjectName(QStringLiteral("isolateReason"));
    m_reason->setPlaceholderText(tr("Required: staff read it on every refused call"));
    m_reason->setMaxLength(500);
    form->addRow(tr("Reason:"), m_reason);
    m_ends = new QCheckBox(tr("Ends at"), this);
    m_until = new QDateTimeEdit(QDateTime::currentDateTime().addSecs(3600), this);
    m_until->setDisplayFormat(QStringLiteral("yyyy-MM-dd HH:mm"));
    m_until->setCalendarPopup(true);
    m_until->setEnabled(false);
    form->addRow(m_ends, m_until);
    layout->addLayout(form);
    auto *buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
    m_ok = buttons->button(QDialogButtonBox::Ok);
    m_ok->setText(tr("Isolate"));
    m_ok->setEnabled(false);
    layout->addWidget(buttons);
    connect(m_ends, &QCheckBox::toggled, m_until, &QWidget::setEnabled);
    connect(m_reason, &QLineEdit::textChanged, this,
            [this](const QString &text) { m_ok->setEnabled(!text.trimmed().isEmpty()); });
    connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
}

QString IsolateDialog::dependency() const
{
    return m_name->currentText();
}

QString IsolateDialog::reason() const
{
    return m_reason->text().trimmed();
}

QDateTime IsolateDialog::until() const
{
    return m_ends->isChecked() ? m_until->dateTime().toUTC() : QDateTime();
}

IsolationsPanel::IsolationsPanel(Isolations *isolations, QWidget *parent)
    : QWidget(parent)
    , m_isolations(isolations)
{
    Q_ASSERT(isolations);
    setObjectName(QStringLiteral("isolationsPanel"));
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(4);
    m_connection = new WrapLabel(this);
    m_connection->setWordWrap(true);
    m_connection->setObjectName(QStringLiteral("teamConnection"));
    layout->addWidget(m_connection);
    m_none = new WrapLabel(tr("No dependency is isolated."), this);
    m_none->setWordWrap(true);
    layout->addWidget(m_none);
    m_rows = new QWidget(this);
    m_grid = new QGridLayout(m_rows);
    m_grid->setContentsMargins(0, 0, 0, 0);
    m_grid->setHorizontalSpacing(8);
    layout->addWidget(m_rows);
    m_isolate = new QPushButton(tr("Isolate…"), this);
    m_isolate->setObjectName(QStringLiteral("isolateButton"));
    m_isolate->setToolTip(tr("Take a dependency offline for every console of the team"));
    pressOnEnter(m_isolate);
    auto *buttons = new QHBoxLayout;
    buttons->addWidget(m_isolate);
    buttons->addStretch(1);
    layout->addLayout(buttons);
    m_answer = new WrapLabel(this);
    m_answer->setWordWrap(true);
    m_answer->setObjectName(QStringLiteral("isolationAnswer"));
    m_answer->hide();
    layout->addWidget(m_answer);
    connect(m_isolate, &QPushButton::clicked, this, &IsolationsPanel::openIsolateDialog);
    connect(m_isolations, &Isolations::changed, this, &IsolationsPanel::refresh);
    connect(m_isolations, &Isolations::answered, this,
            [this](quint64, const Isolations::Answer &answer) {
                m_answer->setText(answer.message);
                m_answer->show();
            });
    refresh();
}

void IsolationsPanel::refresh()
{
    m_connection->setText(m_isolations->connectionText());
    const bool lead = m_isolations->isLead()
        && m_isolations->connection() == Isolations::Connection::Connected;
    m_isolate->setVisible(m_isolations->isLead());
    m_isolate->setEnabled(lead);
    // The rows again from scratch: a handful at most.
    for (QLabel *label : std::as_const(m_lineLabels))
        delete label;
    for (QPushButton *button : std::as_const(m_lift))
        delete button;
    m_lineLabels.clear();
    m_lift.clear();
    const QList<BreakerIsolation> current = m_isolations->current();
    m_none->setVisible(current.isEmpty());
    int row = 0;
    for (const BreakerIsolation &isolation : current) {
        auto *label = new WrapLabel(IsolationWords::line(isolation), m_rows);
        label->setWordWrap(true);
        label->setTextInteractionFlags(Qt::TextSelectableByMouse);
        auto *lift = new QPushButton(tr("Lift"), m_rows);
        lift->setObjectName(QStringLiteral("lift:") + isolation.dependency);
        lift->setEnabled(lead);
        lift->setToolTip(
            lead ? tr("Restore %1 for every console of the team").arg(isolation.dependency)
                 : IsolationWords::whyNotLead());
        const QString name = isolation.dependency;
        connect(lift, &QPushButton::clicked, this, [this, name] { m_isolations->lift(name); });
        m_grid->addWidget(label, row, 0);
        m_grid->addWidget(lift, row, 1, Qt::AlignRight | Qt::AlignTop);
        m_lineLabels.append(label);
        m_lift.insert(name, lift);
        ++row;
    }
}

void IsolationsPanel::openIsolateDialog()
{
    if (m_dialog)
        return;
    m_dialog = new IsolateDialog(m_isolations->knownNames(), this);
    m_dialog->setAttribute(Qt::WA_DeleteOnClose);
    connect(m_dialog, &QDialog::accepted, this, [this] {
        m_isolations->isolate(m_dialog->dependency(), m_dialog->reason(), m_dialog->until());
    });
    connect(m_dialog, &QObject::destroyed, this, [this] { m_dialog = nullptr; });
    m_dialog->open();
}

QString IsolationsPanel::connectionText() const
{
    return m_connection->text();
}

QStringList IsolationsPanel::lines() const
{
    QStringList texts;
    for (const QLabel *label : m_lineLabels)
        texts.append(label->text());
    return texts;
}

QPushButton *IsolationsPanel::liftButton(const QString &dependency) const
{
    return m_lift.value(dependency);
}

QString IsolationsPanel::answerText() const
{
    return m_answer->isHidden() ? QString() : m_answer->text();
}

} // namespace AgentConsole
