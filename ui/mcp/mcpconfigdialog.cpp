#include "mcpconfigdialog.h"

#include "ui/common/fixedpitchfont.h"
#include "ui/common/noticebanner.h"
#include "ui/common/policylock.h"

#include "core/console/mcpconfigfile.h"

#include <QDialogButtonBox>
#include <QDir>
#include <QHBoxLayout>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QVBoxLayout>

#include <algorithm>

namespace AgentConsole {

McpConfigDialog::McpConfigDialog(const QString &path, std::shared_ptr<SecretStore> secrets,
                                 QWidget *parent)
    : QDialog(parent)
{
    setWindowTitle(tr("MCP servers (mcp.json)"));
    m_file = new McpConfigFile(path, std::move(secrets), this);

    m_where = new QLabel(this);
    m_where->setTextFormat(Qt::PlainText);
    m_where->setWordWrap(true);
    m_where->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_where->setText(
        tr("The MCP servers the console starts, from %1.").arg(QDir::toNativeSeparators(path))
        + QLatin1Char('\n')
        + tr("Format, as the desktop clients use it: {\"mcpServers\": {\"name\": {\"command\", "
             "\"args\", \"env\"} for a local program, or {\"url\", \"headers\"} for a server "
             "over HTTP}}.")
        + QLatin1Char('\n')
        + tr("Secret values of headers and env (Authorization, …_TOKEN, …_KEY) are moved to "
             "the OS keychain when you save; the file keeps ${keychain:…} in their place. "
             "Changes apply when the console restarts."));

    m_editor = new QPlainTextEdit(this);
    m_editor->setFont(fixedPitchFont());
    m_editor->setLineWrapMode(QPlainTextEdit::NoWrap);
    m_editor->setTabStopDistance(m_editor->fontMetrics().horizontalAdvance(QLatin1Char(' ')) * 4);
    m_editor->setPlaceholderText(tr("Reading mcp.json…"));
    m_editor->setReadOnly(true);
    m_editor->setAccessibleName(tr("mcp.json"));

    m_example = new QPushButton(tr("Insert &example"), this);
    m_example->setAutoDefault(false);
    m_example->setToolTip(tr("Puts a stdio server and an HTTP server into the empty editor, to "
                             "change to your own."));
    m_problem = new NoticeBanner(this);
    m_buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
    m_buttons->button(QDialogButtonBox::Ok)->setText(tr("&Save"));

    auto *bottom = new QHBoxLayout;
    bottom->addWidget(m_example);
    bottom->addStretch(1);
    bottom->addWidget(m_buttons);
    auto *layout = new QVBoxLayout(this);
    layout->addWidget(m_where);
    layout->addWidget(m_editor, 1);
    layout->addWidget(m_problem);
    layout->addLayout(bottom);

    m_where->setObjectName(QStringLiteral("mcpConfigPath"));
    m_editor->setObjectName(QStringLiteral("mcpConfigText"));
    m_example->setObjectName(QStringLiteral("mcpConfigExample"));
    m_problem->setObjectName(QStringLiteral("mcpConfigProblem"));
    m_buttons->setObjectName(QStringLiteral("mcpConfigButtons"));

    // About 80 columns and 22 lines of the editor's font.
    const QFontMetrics metrics(m_editor->font());
    resize(std::max(metrics.horizontalAdvance(QLatin1Char('x')) * 84, 560),
           metrics.lineSpacing() * 22 + m_where->sizeHint().height() + 120);

    connect(m_example, &QPushButton::clicked, this, [this] {
        m_editor->setPlainText(McpConfigFile::exampleText());
        m_editor->setFocus();
    });
    connect(m_editor, &QPlainTextEdit::textChanged, this, &McpConfigDialog::updateState);
    connect(m_buttons, &QDialogButtonBox::accepted, this, &McpConfigDialog::accept);
    connect(m_buttons, &QDialogButtonBox::rejected, this, &McpConfigDialog::reject);
    connect(m_file, &McpConfigFile::loaded, this, &McpConfigDialog::onLoaded);
    connect(m_file, &McpConfigFile::refused, this, &McpConfigDialog::onRefused);
    connect(m_file, &McpConfigFile::saved, this, &McpConfigDialog::onSaved);
    updateState();
    m_file->load(); // off the GUI thread; the editor waits, read-only
}

McpConfigDialog::~McpConfigDialog() = default;

void McpConfigDialog::setTeamPolicy(std::function<QString(const QString &)> refusalOf,
                                    const QString &lockRefusal)
{
    m_file->setPolicy(std::move(refusalOf), lockRefusal);
    m_lockRefusal = lockRefusal;
    if (m_lockRefusal.isEmpty() || m_lockRow)
        return;
    // A lock and the policy's words above the editor, which stays read-only.
    m_lockRow = new QWidget(this);
    m_lockRow->setObjectName(QStringLiteral("mcpConfigLocked"));
    auto *row = new QHBoxLayout(m_lockRow);
    row->setContentsMargins(0, 0, 0, 0);
    auto *words = new QLabel(m_lockRefusal, m_lockRow);
    words->setWordWrap(true);
    row->addWidget(new PolicyLock(m_lockRefusal, m_lockRow));
    row->addWidget(words, 1);
    if (auto *layout = qobject_cast<QVBoxLayout *>(this->layout()))
        layout->insertWidget(1, m_lockRow);
    m_editor->setReadOnly(true);
    updateState();
}

QString McpConfigDialog::text() const
{
    return m_editor->toPlainText();
}

void McpConfigDialog::accept()
{
    if (!m_editable || m_file->isSaving())
        return;
    m_problem->clearNotice();
    if (m_file->save(text())) {
        m_editor->setReadOnly(true); // the text being saved is the one shown
        updateState();
    }
}

void McpConfigDialog::onLoaded(const QString &text, bool exists, const QString &unreadable,
                               const QString &refusal)
{
    m_loaded = true;
    m_editable = unreadable.isEmpty();
    m_editor->setPlaceholderText(tr("No mcp.json yet: write one, or insert the example."));
    if (!m_editable) {
        // Not replaced by a text nobody saw: fix or remove the file, then open this again.
        m_problem->showNotice(
            tr("mcp.json cannot be edited here"),
            tr("%1: %2").arg(QDir::toNativeSeparators(m_file->path()), unreadable), Tone::Danger);
    } else {
        m_editor->setPlainText(text);
        // Locked by the team's policy: shown, never edited here.
        m_editable = m_lockRefusal.isEmpty();
        m_editor->setReadOnly(!m_editable);
        if (exists && !refusal.isEmpty())
            m_problem->showNotice(tr("The console refuses this file at start"), refusal,
                                  Tone::Warning);
        m_editor->setFocus();
    }
    updateState();
}

void McpConfigDialog::onRefused(const QString &reason)
{
    m_editor->setReadOnly(false);
    m_problem->showNotice(tr("Not saved: the file is as it was"), reason, Tone::Danger);
    updateState();
}

void McpConfigDialog::onSaved(const QString &text, int movedSecrets)
{
    m_movedSecrets = movedSecrets;
    // The secrets are in the keychain now; the editor keeps only what the file holds.
    m_editor->setPlainText(text);
    QDialog::accept();
}

void McpConfigDialog::updateState()
{
    const bool saving = m_file->isSaving();
    m_example->setVisible(m_editable && m_editor->toPlainText().trimmed().isEmpty());
    m_example->setEnabled(!saving);
    m_buttons->button(QDialogButtonBox::Ok)->setEnabled(m_editable && !saving);
}

} // namespace AgentConsole
