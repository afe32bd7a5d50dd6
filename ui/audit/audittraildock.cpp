#include "audittraildock.h"

#include "auditrowsmodel.h"

#include "core/turn/agentloop.h"

#include <QCheckBox>
#include <QDateEdit>
#include <QFontMetrics>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QShowEvent>
#include <QTableView>
#include <QTimer>
#include <QVBoxLayout>

namespace AgentConsole {

AuditTrailDock::AuditTrailDock(WriteAudit *audit, QWidget *parent)
    : QDockWidget(tr("Audit trail"), parent)
    , m_audit(audit)
{
    setObjectName(QStringLiteral("auditTrailDock"));
    setFeatures(QDockWidget::DockWidgetClosable | QDockWidget::DockWidgetMovable
                | QDockWidget::DockWidgetFloatable);

    auto *content = new QWidget;
    auto *layout = new QVBoxLayout(content);
    layout->setContentsMargins(8, 8, 8, 8);
    layout->setSpacing(6);

    auto *filters = new QHBoxLayout;
    filters->setSpacing(6);
    m_order = new QLineEdit;
    m_order->setObjectName(QStringLiteral("auditOrderFilter"));
    m_order->setPlaceholderText(tr("Order, e.g. A1001"));
    m_order->setAccessibleName(tr("Show the writes about this order"));
    m_order->setClearButtonEnabled(true);
    m_order->setMaxLength(128);
    m_agent = new QLineEdit;
    m_agent->setObjectName(QStringLiteral("auditAgentFilter"));
    m_agent->setPlaceholderText(tr("Agent (staff id)"));
    m_agent->setAccessibleName(tr("Show the writes this agent confirmed"));
    m_agent->setClearButtonEnabled(true);
    m_agent->setMaxLength(128);
    m_dayOn = new QCheckBox(tr("Day"));
    m_dayOn->setObjectName(QStringLiteral("auditDayBox"));
    m_dayOn->setToolTip(tr("Only the rows of one day, in this computer's time"));
    m_day = new QDateEdit(QDate::currentDate());
    m_day->setObjectName(QStringLiteral("auditDayFilter"));
    m_day->setAccessibleName(tr("Day"));
    m_day->setCalendarPopup(true);
    m_day->setDisplayFormat(QStringLiteral("yyyy-MM-dd"));
    m_day->setEnabled(false);
    m_refresh = new QPushButton(tr("Refresh"));
    m_refresh->setObjectName(QStringLiteral("auditRefresh"));
    filters->addWidget(m_order, 2);
    filters->addWidget(m_agent, 2);
    filters->addWidget(m_dayOn);
    filters->addWidget(m_day, 1);
    filters->addWidget(m_refresh);
    layout->addLayout(filters);

    m_model = new AuditRowsModel(this);
    m_table = new QTableView;
    m_table->setObjectName(QStringLiteral("auditTable"));
    m_table->setAccessibleName(tr("Audit trail of writes"));
    m_table->setModel(m_model);
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::ExtendedSelection);
    m_table->setWordWrap(false);
    m_table->setAlternatingRowColors(true);
    m_table->verticalHeader()->setVisible(false);
    m_table->verticalHeader()->setSectionResizeMode(QHeaderView::Fixed);
    m_table->verticalHeader()->setDefaultSectionSize(fontMetrics().height() + 8);
    QHeaderView *header = m_table->horizontalHeader();
    header->setSectionResizeMode(QHeaderView::Interactive);
    header->setStretchLastSection(true);
    // Widths from the font and the words each column holds, not from the rows (measuring
    // every cell grows with the rows).
    const QFontMetrics metrics = fontMetrics();
    const auto fit = [&metrics](const QString &sample) {
        return metrics.horizontalAdvance(sample) + metrics.averageCharWidth() * 3;
    };
    header->resizeSection(AuditRowsModel::When, fit(QStringLiteral("2026-12-07 00:00:00")));
    header->resizeSection(AuditRowsModel::Agent, fit(QStringLiteral("u-0000000")));
    header->resizeSection(AuditRowsModel::Event, fit(tr("Settled later")));
    header->resizeSection(AuditRowsModel::Tool, fit(QString(26, QLatin1Char('x'))));
    header->resizeSection(AuditRowsModel::Outcome, fit(QString(32, QLatin1Char('x'))));
    header->resizeSection(AuditRowsModel::How, fit(QString(34, QLatin1Char('x'))));
    layout->addWidget(m_table, 1);

    auto *footer = new QHBoxLayout;
    m_status = new QLabel;
    m_status->setObjectName(QStringLiteral("auditStatus"));
    m_status->setTextFormat(Qt::PlainText);
    m_status->setWordWrap(true);
    m_more = new QPushButton(tr("Show older"));
    m_more->setObjectName(QStringLiteral("auditMore"));
    m_more->setVisible(false);
    footer->addWidget(m_status, 1);
    footer->addWidget(m_more);
    layout->addLayout(footer);
    setWidget(content);

    // One read per pause in typing, not one per key.
    m_typingDelay = new QTimer(this);
    m_typingDelay->setSingleShot(true);
    m_typingDelay->setInterval(250);
    connect(m_order, &QLineEdit::textChanged, m_typingDelay, qOverload<>(&QTimer::start));
    connect(m_agent, &QLineEdit::textChanged, m_typingDelay, qOverload<>(&QTimer::start));
    connect(m_typingDelay, &QTimer::timeout, this, &AuditTrailDock::refresh);
    connect(m_order, &QLineEdit::returnPressed, this, &AuditTrailDock::refresh);
    connect(m_agent, &QLineEdit::returnPressed, this, &AuditTrailDock::refresh);
    connect(m_dayOn, &QCheckBox::toggled, this, [this](bool on) {
        m_day->setEnabled(on);
        refresh();
    });
    connect(m_day, &QDateEdit::dateChanged, this, [this] {
        if (m_dayOn->isChecked())
            refresh();
    });
    connect(m_refresh, &QPushButton::clicked, this, &AuditTrailDock::refresh);
    connect(m_more, &QPushButton::clicked, this, [this] { read(true); });
    if (m_audit) {
        connect(m_audit, &WriteAudit::appended, this, [this] {
            m_stale = true;
            if (isVisible())
                refresh();
        });
    }
    m_status->setText(tr("The audit trail is shown once the console is ready."));
}

AuditTrailDock::~AuditTrailDock() = default;

void AuditTrailDock::onRuntimeReady(AgentLoop *loop)
{
    m_loop = loop;
    m_model->setToolLabels(
        [this](const QString &tool) { return m_loop ? m_loop->toolLabels(tool) : ToolLabels(); });
    m_stale = true;
    if (isVisible())
        refresh();
}

void AuditTrailDock::showEvent(QShowEvent *event)
{
    QDockWidget::showEvent(event);
    if (m_stale)
        refresh();
}

WriteAudit::Filter AuditTrailDock::filter() const
{
    return {m_order->text(), m_agent->text(), m_dayOn->isChecked() ? m_day->date() : QDate()};
}

void AuditTrailDock::refresh()
{
    m_typingDelay->stop();
    read(false);
}

void AuditTrailDock::read(bool older)
{
    if (!m_audit || !m_audit->isAvailable())
        return;
    m_stale = false;
    const quint64 generation = older ? m_generation : ++m_generation;
    const qint64 before = older && !m_model->rows().isEmpty() ? m_model->rows().constLast().id : 0;
    if (!older)
        m_status->setText(tr("Reading the audit trail…"));
    m_more->setEnabled(false);
    // The SQL runs on the ledger's database thread; the page comes back here.
    await(m_audit->read(filter(), before), this, [this, generation, older](const AuditPage &page) {
        if (generation != m_generation)
            return; // the filters changed meanwhile: a newer read is under way
        showPage(page, older);
    });
}

void AuditTrailDock::showPage(const AuditPage &page, bool older)
{
    if (!page.ok()) {
        if (!older)
            m_model->setRows({});
        m_more->setVisible(false);
        m_status->setText(page.outcome == AuditPage::Outcome::Unavailable
                              ? tr("This console's ledger keeps no audit trail.")
                              : tr("The audit trail could not be read; the local log says "
                                   "why."));
        Q_EMIT pageShown();
        return;
    }
    if (older)
        m_model->appendRows(page.rows);
    else
        m_model->setRows(page.rows);
    const int shown = m_model->rowCount();
    const bool more = page.more && !m_model->isFull();
    m_more->setVisible(more);
    m_more->setEnabled(more);
    if (shown == 0) {
        const WriteAudit::Filter given = filter();
        const bool filtered = !given.argumentValue.trimmed().isEmpty()
            || !given.staffId.trimmed().isEmpty() || given.day.isValid();
        m_status->setText(filtered ? tr("No write matches these filters.")
                                   : tr("No write has been confirmed yet."));
    } else if (page.more && m_model->isFull()) {
        m_status->setText(
            tr("Rows shown: the newest %1. Narrow the filters to see older ones.").arg(shown));
    } else {
        m_status->setText(tr("Rows shown: %1, newest first").arg(shown));
    }
    Q_EMIT pageShown();
}

QStringList AuditTrailDock::rowTexts() const
{
    QStringList texts;
    for (const AuditEntry &entry : m_model->rows()) {
        QStringList cells;
        for (int column = 0; column < AuditRowsModel::ColumnCount; ++column)
            cells.append(m_model->text(entry, AuditRowsModel::Column(column)));
        texts.append(cells.join(QStringLiteral(" | ")));
    }
    return texts;
}

} // namespace AgentConsole
