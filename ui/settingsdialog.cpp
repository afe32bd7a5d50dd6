#include "settingsdialog.h"

#include "noticebanner.h"

#include "core/agent/connectionsettings.h"

#include <QButtonGroup>
#include <QCheckBox>
#include <QComboBox>
#include <QCoreApplication>
#include <QDialogButtonBox>
#include <QEvent>
#include <QFormLayout>
#include <QGroupBox>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QRadioButton>
#include <QVBoxLayout>

#include <algorithm>

namespace AgentConsole {

ConnectionSettingsDialog::ConnectionSettingsDialog(const ModelOptions &model,
                                                   const BackendOptions &backend,
                                                   QWidget *parent)
    : QDialog(parent)
    , m_initialModel(model)
    , m_initialBackend(backend)
{
    setWindowTitle(tr("Model and backend"));

    auto *modelBox = new QGroupBox(tr("Model"), this);
    m_offline = new QRadioButton(tr("Offline demo model (no key, no network)"), modelBox);
    m_openAi = new QRadioButton(tr("OpenAI-compatible server"), modelBox);
    auto *providers = new QButtonGroup(this);
    providers->addButton(m_offline);
    providers->addButton(m_openAi);

    m_preset = new QComboBox(modelBox);
    m_preset->addItem(tr("Choose a preset…"));
    for (const ProviderPreset &preset : providerPresets())
        m_preset->addItem(preset.name);
    m_baseUrl = new QLineEdit(model.baseUrl, modelBox);
    m_baseUrl->setPlaceholderText(QStringLiteral("https://api.deepseek.com"));
    m_model = new QLineEdit(model.model, modelBox);
    m_model->setPlaceholderText(QStringLiteral("deepseek-v4-flash"));
    m_keyVariable = new QLineEdit(model.apiKeyEnv, modelBox);
    m_keyState = new QLabel(modelBox);
    m_stream = new QCheckBox(tr("Stream answers as they are written"), modelBox);
    m_stream->setChecked(model.stream);
    m_fallback = new QCheckBox(tr("When the provider fails, answer with the offline model"),
                               modelBox);
    m_fallback->setChecked(model.fallbackToOffline);

    auto *modelForm = new QFormLayout;
    modelForm->addRow(tr("Pre&set"), m_preset);
    modelForm->addRow(tr("&Base URL"), m_baseUrl);
    modelForm->addRow(tr("&Model"), m_model);
    modelForm->addRow(tr("API &key variable"), m_keyVariable);
    modelForm->addRow(QString(), m_keyState);
    modelForm->addRow(QString(), m_stream);
    modelForm->addRow(QString(), m_fallback);
    auto *modelLayout = new QVBoxLayout(modelBox);
    modelLayout->addWidget(m_offline);
    modelLayout->addWidget(m_openAi);
    modelLayout->addLayout(modelForm);

    auto *backendBox = new QGroupBox(tr("Tool backend"), this);
    m_embedded = new QRadioButton(tr("Embedded demo store"), backendBox);
    m_http = new QRadioButton(tr("REST backend"), backendBox);
    auto *backends = new QButtonGroup(this);
    backends->addButton(m_embedded);
    backends->addButton(m_http);
    m_backendUrl = new QLineEdit(backend.url, backendBox);
    m_backendUrl->setPlaceholderText(QStringLiteral("http://127.0.0.1:8080"));
    auto *backendForm = new QFormLayout;
    backendForm->addRow(tr("Base &URL"), m_backendUrl);
    // Both forms' fields start at the same x, so that the two base URLs line up.
    if (auto *longest = qobject_cast<QLabel *>(modelForm->labelForField(m_keyVariable))) {
        if (QWidget *label = backendForm->labelForField(m_backendUrl))
            label->setMinimumWidth(longest->sizeHint().width());
    }
    auto *backendLayout = new QVBoxLayout(backendBox);
    backendLayout->addWidget(m_embedded);
    backendLayout->addWidget(m_http);
    backendLayout->addLayout(backendForm);

    m_problem = new NoticeBanner(this);
    m_problem->setObjectName(QStringLiteral("settingsProblem"));
    m_buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);

    auto *layout = new QVBoxLayout(this);
    layout->addWidget(modelBox);
    layout->addWidget(backendBox);
    layout->addWidget(m_problem);
    layout->addWidget(m_buttons);

    // Names for tests and accessibility tools; the labels are what staff read.
    m_offline->setObjectName(QStringLiteral("offlineProvider"));
    m_openAi->setObjectName(QStringLiteral("openAiProvider"));
    m_preset->setObjectName(QStringLiteral("providerPreset"));
    m_baseUrl->setObjectName(QStringLiteral("modelBaseUrl"));
    m_model->setObjectName(QStringLiteral("modelName"));
    m_keyVariable->setObjectName(QStringLiteral("apiKeyVariable"));
    m_keyState->setObjectName(QStringLiteral("apiKeyState"));
    m_stream->setObjectName(QStringLiteral("streamAnswers"));
    m_fallback->setObjectName(QStringLiteral("fallbackToOffline"));
    m_embedded->setObjectName(QStringLiteral("embeddedBackend"));
    m_http->setObjectName(QStringLiteral("httpBackend"));
    m_backendUrl->setObjectName(QStringLiteral("backendUrl"));
    m_buttons->setObjectName(QStringLiteral("settingsButtons"));

    (model.provider == ModelOptions::Provider::Offline ? m_offline : m_openAi)->setChecked(true);
    (backend.kind == BackendOptions::Kind::Embedded ? m_embedded : m_http)->setChecked(true);

    connect(m_preset, &QComboBox::activated, this, &ConnectionSettingsDialog::applyPreset);
    for (QLineEdit *edit : {m_baseUrl, m_model, m_keyVariable, m_backendUrl})
        connect(edit, &QLineEdit::textChanged, this, &ConnectionSettingsDialog::updateState);
    for (QRadioButton *button : {m_offline, m_openAi, m_embedded, m_http})
        connect(button, &QRadioButton::toggled, this, &ConnectionSettingsDialog::updateState);
    connect(m_buttons, &QDialogButtonBox::accepted, this, &ConnectionSettingsDialog::accept);
    connect(m_buttons, &QDialogButtonBox::rejected, this, &ConnectionSettingsDialog::reject);
    updateState();
}

ModelOptions ConnectionSettingsDialog::modelOptions() const
{
    ModelOptions options = m_initialModel;
    options.provider = m_openAi->isChecked() ? ModelOptions::Provider::OpenAiCompatible
                                             : ModelOptions::Provider::Offline;
    options.baseUrl = m_baseUrl->text().trimmed();
    options.model = m_model->text().trimmed();
    options.apiKeyEnv = m_keyVariable->text().trimmed();
    options.stream = m_stream->isChecked();
    options.fallbackToOffline = m_fallback->isChecked();
    return options;
}

BackendOptions ConnectionSettingsDialog::backendOptions() const
{
    BackendOptions options = m_initialBackend;
    options.kind = m_http->isChecked() ? BackendOptions::Kind::Http
                                       : BackendOptions::Kind::Embedded;
    options.url = m_backendUrl->text().trimmed();
    return options;
}

QString ConnectionSettingsDialog::problem() const
{
    const auto problem = checkConnectionSettings(modelOptions(), backendOptions());
    return problem ? problem->forStaff() : QString();
}

void ConnectionSettingsDialog::accept()
{
    if (!problem().isEmpty()) {
        updateState();
        return;
    }
    QDialog::accept();
}

void ConnectionSettingsDialog::applyPreset(int index)
{
    const QList<ProviderPreset> presets = providerPresets();
    if (index < 1 || index > presets.size())
        return;
    const ProviderPreset &preset = presets[index - 1];
    m_openAi->setChecked(true);
    m_baseUrl->setText(preset.baseUrl);
    m_model->setText(preset.model);
}

void ConnectionSettingsDialog::updateState()
{
    const bool remote = m_openAi->isChecked();
    for (QWidget *widget : std::initializer_list<QWidget *>{m_preset, m_baseUrl, m_model,
                                                            m_keyVariable, m_stream, m_fallback})
        widget->setEnabled(remote);
    const bool keyStateWasShown = m_keyState->isVisibleTo(this);
    m_keyState->setVisible(remote);
    const QString variable = m_keyVariable->text().trimmed();
    m_keyState->setText(
        apiKeyVariableIsSet(variable)
            ? tr("%1 is set (the key itself is never shown or logged)").arg(variable)
            : tr("%1 is not set: only a local server without a key will answer").arg(variable));
    m_backendUrl->setEnabled(m_http->isChecked());
    const QString problem = this->problem();
    const bool problemWasShown = m_problem->isVisibleTo(this);
    if (problem.isEmpty())
        m_problem->clearNotice();
    else
        m_problem->showNotice(tr("These settings cannot be applied yet"), problem, Tone::Warning);
    m_buttons->button(QDialogButtonBox::Ok)->setEnabled(problem.isEmpty());
    if (problemWasShown == problem.isEmpty() || keyStateWasShown != remote)
        fitHeight();
}

void ConnectionSettingsDialog::fitHeight()
{
    // A dialog grows when a row appears but does not shrink when it goes, which would leave an
    // empty band inside a group box; keep the width the user chose. The group boxes settle
    // their own layouts first (posted layout requests), so that their size hints are current.
    if (!isVisible())
        return;
    for (QGroupBox *box : findChildren<QGroupBox *>())
        QCoreApplication::sendPostedEvents(box, QEvent::LayoutRequest);
    layout()->activate();
    const int height = layout()->hasHeightForWidth() ? layout()->totalHeightForWidth(width())
                                                      : layout()->totalSizeHint().height();
    resize(width(), std::max(height, minimumSizeHint().height()));
}

} // namespace AgentConsole
