#include "connectionsettingsdialog.h"

#include "ui/common/noticebanner.h"
#include "ui/common/policylock.h"

#include "core/console/connectionsettings.h"
#include "core/console/connectiontest.h"
#include "core/console/consolesettings.h"
#include "core/console/settingkeys.h"
#include "core/console/storedapikey.h"

#include <QButtonGroup>
#include <QCheckBox>
#include <QComboBox>
#include <QCoreApplication>
#include <QDialogButtonBox>
#include <QEvent>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLocale>
#include <QLineEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QRadioButton>
#include <QVBoxLayout>

#include <algorithm>

namespace AgentConsole {

ConnectionSettingsDialog::ConnectionSettingsDialog(const ModelOptions &model,
                                                   const BackendOptions &backend, QWidget *parent)
    : ConnectionSettingsDialog(model, backend, nullptr, parent)
{
}

ConnectionSettingsDialog::~ConnectionSettingsDialog() = default;

ConnectionSettingsDialog::ConnectionSettingsDialog(const ModelOptions &model,
                                                   const BackendOptions &backend,
                                                   std::shared_ptr<SecretStore> secrets,
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
        m_preset->addItem(tr(preset.name.toUtf8().constData()));
    m_baseUrl = new QLineEdit(model.baseUrl, modelBox);
    m_baseUrl->setPlaceholderText(QStringLiteral("https://api.deepseek.com"));
    m_model = new QLineEdit(model.model, modelBox);
    m_model->setPlaceholderText(QStringLiteral("deepseek-v4-flash"));
    m_keyVariable = new QLineEdit(model.apiKeyEnv, modelBox);
    m_keyState = new QLabel(modelBox);
    m_keyState->setWordWrap(true);
    // Masked, and never filled from the keychain: the key is not shown, not even as dots of
    // its length, and a screenshot of the dialog carries nothing of it.
    m_apiKey = new QLineEdit(modelBox);
    m_apiKey->setEchoMode(QLineEdit::Password);
    m_apiKey->setInputMethodHints(Qt::ImhHiddenText | Qt::ImhSensitiveData
                                  | Qt::ImhNoPredictiveText);
    m_apiKey->setContextMenuPolicy(Qt::NoContextMenu);
    m_testButton = new QPushButton(tr("&Test connection"), modelBox);
    m_testButton->setAutoDefault(false);
    m_testButton->setSizePolicy(QSizePolicy::Fixed, QSizePolicy::Fixed);
    m_testButton->setToolTip(tr("Sends one short request (one token) to the server with these "
                                "settings and says what came back."));
    m_testResult = new QLabel(modelBox);
    m_testResult->setWordWrap(true);
    m_testResult->setTextFormat(Qt::PlainText);
    m_testResult->setVisible(false);
    m_stream = new QCheckBox(tr("Stream answers as they are written"), modelBox);
    m_stream->setChecked(model.stream);
    m_fallback = new QCheckBox(tr("When the provider fails, answer with the offline model"),
                               modelBox);
    m_fallback->setChecked(model.fallbackToOffline);
    // The conversation sent with each request (ModelOptions::contextChars); its lowest value
    // reads as the provider's default, which follows the base URL.
    m_contextChars = new QSpinBox(modelBox);
    m_contextChars->setRange(0, ModelOptions::maxContextChars);
    m_contextChars->setSingleStep(1000);
    m_contextChars->setGroupSeparatorShown(true);
    m_contextChars->setValue(model.contextChars);
    m_contextChars->setToolTip(tr("How much of the conversation each request carries: the "
                                  "system prompt and the current question always, earlier "
                                  "turns while they fit. The footer says when turns were left "
                                  "out."));

    auto *modelForm = new QFormLayout;
    modelForm->addRow(tr("Pre&set"), m_preset);
    modelForm->addRow(tr("&Base URL"), m_baseUrl);
    modelForm->addRow(tr("&Model"), m_model);
    modelForm->addRow(tr("API key &variable"), m_keyVariable);
    modelForm->addRow(tr("API &key"), m_apiKey);
    modelForm->addRow(QString(), m_keyState);
    modelForm->addRow(QString(), m_stream);
    modelForm->addRow(QString(), m_fallback);
    modelForm->addRow(tr("Conversation &budget"), m_contextChars);
    auto *testRow = new QHBoxLayout;
    testRow->addWidget(m_testButton);
    testRow->addWidget(m_testResult, 1);
    modelForm->addRow(QString(), testRow);
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
    m_ledger = new QLineEdit(backendBox);
    m_ledger->setPlaceholderText(tr("sqlite (in the data directory)"));
    m_ledger->setToolTip(tr("The idempotency ledger: sqlite, or postgresql://user@host:port/db "
                            "to share one across a team (no password here: PGPASSWORD or "
                            "~/.pgpass). Applies at the next start."));
    m_team = new QLineEdit(backendBox);
    m_team->setPlaceholderText(tr("none: this desk alone"));
    m_team->setToolTip(tr("A team's PostgreSQL database, postgresql://user@host:port/db: it "
                          "holds the ledger, your conversations and the audit trail, which then "
                          "follow you to any desk (docs/TEAM.md). No password here: the "
                          "keychain, ~/.pgpass or a service file. Applies at the next start."));
    auto *backendForm = new QFormLayout;
    backendForm->addRow(tr("Base &URL"), m_backendUrl);
    backendForm->addRow(tr("&Ledger (next start)"), m_ledger);
    backendForm->addRow(tr("&Team database (next start)"), m_team);
    // Both forms' fields start at the same x, so that the two base URLs line up.
    if (auto *longest = qobject_cast<QLabel *>(modelForm->labelForField(m_keyVariable))) {
        if (QWidget *label = backendForm->labelForField(m_backendUrl))
            label->setMinimumWidth(longest->sizeHint().width());
    }
    auto *backendLayout = new QVBoxLayout(backendBox);
    backendLayout->addWidget(m_embedded);
    backendLayout->addWidget(m_http);
    backendLayout->addLayout(backendForm);

    auto *generalBox = new QGroupBox(tr("Interface"), this);
    m_language = new QComboBox(generalBox);
    m_language->addItem(tr("Follow the system"), QStringLiteral("system"));
    m_language->addItem(QStringLiteral("English"), QStringLiteral("en"));
    m_language->addItem(QStringLiteral("\u4e2d\u6587\uff08\u7b80\u4f53\uff09"),
                        QStringLiteral("zh_CN"));
    auto *generalForm = new QFormLayout(generalBox);
    generalForm->addRow(tr("Lan&guage"), m_language);

    m_problem = new NoticeBanner(this);
    m_problem->setObjectName(QStringLiteral("settingsProblem"));
    m_buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);

    auto *layout = new QVBoxLayout(this);
    layout->addWidget(modelBox);
    layout->addWidget(backendBox);
    layout->addWidget(generalBox);
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
    m_apiKey->setObjectName(QStringLiteral("apiKey"));
    m_testButton->setObjectName(QStringLiteral("testConnection"));
    m_testResult->setObjectName(QStringLiteral("connectionTestResult"));
    m_ledger->setObjectName(QStringLiteral("ledgerSpec"));
    m_team->setObjectName(QStringLiteral("teamSpec"));
    m_language->setObjectName(QStringLiteral("language"));
    m_stream->setObjectName(QStringLiteral("streamAnswers"));
    m_fallback->setObjectName(QStringLiteral("fallbackToOffline"));
    m_contextChars->setObjectName(QStringLiteral("contextChars"));
    m_embedded->setObjectName(QStringLiteral("embeddedBackend"));
    m_http->setObjectName(QStringLiteral("httpBackend"));
    m_backendUrl->setObjectName(QStringLiteral("backendUrl"));
    m_buttons->setObjectName(QStringLiteral("settingsButtons"));

    (model.provider == ModelOptions::Provider::Offline ? m_offline : m_openAi)->setChecked(true);
    // An address a preset knows says whether its server needs a key, as choosing it would.
    if (const std::optional<ProviderPreset> preset = presetFor(model.baseUrl)) {
        m_presetNeedsKey = preset->needsKey;
        m_presetName = tr(preset->name.toUtf8().constData());
    }
    (backend.kind == BackendOptions::Kind::Embedded ? m_embedded : m_http)->setChecked(true);

    connect(m_preset, &QComboBox::activated, this, &ConnectionSettingsDialog::applyPreset);
    for (QLineEdit *edit : {m_baseUrl, m_model, m_keyVariable, m_backendUrl})
        connect(edit, &QLineEdit::textChanged, this, &ConnectionSettingsDialog::updateState);
    for (QRadioButton *button : {m_offline, m_openAi, m_embedded, m_http})
        connect(button, &QRadioButton::toggled, this, &ConnectionSettingsDialog::updateState);
    connect(m_ledger, &QLineEdit::textChanged, this, &ConnectionSettingsDialog::updateState);
    connect(m_team, &QLineEdit::textChanged, this, &ConnectionSettingsDialog::updateState);
    connect(m_contextChars, &QSpinBox::valueChanged, this, &ConnectionSettingsDialog::updateState);
    connect(m_testButton, &QPushButton::clicked, this, &ConnectionSettingsDialog::testConnection);
    // A result describes the settings it tested: any change of them forgets it.
    for (QLineEdit *edit : {m_baseUrl, m_model, m_keyVariable, m_apiKey})
        connect(edit, &QLineEdit::textEdited, this, &ConnectionSettingsDialog::forgetTestResult);
    connect(m_openAi, &QRadioButton::toggled, this, &ConnectionSettingsDialog::forgetTestResult);
    connect(m_baseUrl, &QLineEdit::textEdited, this, [this] {
        m_presetNeedsKey = true; // an address of staff's own: a key may be needed
        updateKeyState();
    });
    connect(m_buttons, &QDialogButtonBox::accepted, this, &ConnectionSettingsDialog::accept);
    connect(m_buttons, &QDialogButtonBox::rejected, this, &ConnectionSettingsDialog::reject);

    // Whether a key is stored is asked once (asynchronously: the keychain may talk to D-Bus);
    // the key itself stays there.
    m_storedKey = new StoredApiKey(secrets, this);
    connect(m_storedKey, &StoredApiKey::checked, this, [this](StoredApiKey::State state) {
        m_keychainState = int(state);
        updateKeyState();
    });
    connect(m_storedKey, &StoredApiKey::stored, this, &ConnectionSettingsDialog::onKeyStored);
    m_storedKey->check();
    m_test = new ConnectionTest(std::move(secrets), this);
    // The window's language is the default locale (ConsoleLanguage::install).
    m_test->setSentencesInChinese(QLocale().language() == QLocale::Chinese);
    connect(m_test, &ConnectionTest::finished, this, &ConnectionSettingsDialog::showTestResult);
    updateState();
}

void ConnectionSettingsDialog::setLedgerSpec(const QString &spec)
{
    m_ledger->setText(spec);
}

QString ConnectionSettingsDialog::ledgerSpec() const
{
    return m_ledger->text().trimmed();
}

void ConnectionSettingsDialog::setTeamSpec(const QString &spec)
{
    m_team->setText(spec);
}

QString ConnectionSettingsDialog::teamSpec() const
{
    return m_team->text().trimmed();
}

void ConnectionSettingsDialog::setLanguage(const QString &language)
{
    const int index = m_language->findData(language);
    m_language->setCurrentIndex(index < 0 ? 0 : index);
}

QString ConnectionSettingsDialog::language() const
{
    return m_language->currentData().toString();
}

void ConnectionSettingsDialog::setConnectionTestTimeoutMs(int ms)
{
    m_test->setTimeoutMs(ms);
}

void ConnectionSettingsDialog::testConnection()
{
    if (m_test->isRunning() || !m_openAi->isChecked())
        return;
    if (const auto problem = checkModelOptions(modelOptions())) {
        showTestResult({false, QString(), problem->forStaff(), QString()});
        return;
    }
    m_testButton->setEnabled(false);
    m_testResult->setText(tr("Testing…"));
    m_testResult->setVisible(true);
    m_test->start(modelOptions(), m_apiKey->text());
}

void ConnectionSettingsDialog::showTestResult(const ConnectionTestResult &result)
{
    if (m_forgettingTest)
        return; // the settings it tested changed: its result is forgotten, not shown
    using Finding = ConnectionTestResult::Finding;
    QString text;
    if (result.connected)
        text = tr("Connected: %1").arg(result.sentence);
    else if (result.code.isEmpty())
        text = result.sentence; // the settings themselves are wrong: said as the banner says
    else
        text = tr("Not connected: %1").arg(result.sentence);
    // Where the key came from matters when a key was used or refused, not when nothing
    // answered at all.
    const bool aboutTheKey = result.connected || result.finding == Finding::KeyRefused
        || result.finding == Finding::NoKey;
    QString keyFrom;
    if (result.keyFrom == QLatin1String("variable"))
        keyFrom = tr("key from %1").arg(m_keyVariable->text().trimmed());
    else if (result.keyFrom == QLatin1String("typed"))
        keyFrom = tr("key typed here");
    else if (result.keyFrom == QLatin1String("keychain"))
        keyFrom = tr("key from the keychain");
    else if (result.keyFrom == QLatin1String("none") && result.connected)
        keyFrom = tr("no key");
    if (aboutTheKey && !keyFrom.isEmpty())
        text += QStringLiteral(" (") + keyFrom + QLatin1Char(')');
    m_testResult->setText(text);
    m_testResult->setProperty("connected", result.connected);
    m_testResult->setProperty("code", result.code);
    m_testResult->setProperty("finding", QVariant::fromValue(result.finding));
    m_testResult->setVisible(true);
    m_testButton->setEnabled(m_openAi->isChecked());
    fitHeight();
}

void ConnectionSettingsDialog::forgetTestResult()
{
    // What it said was about other settings: a result on show, or one still on its way.
    m_forgettingTest = true;
    m_test->cancel();
    m_forgettingTest = false;
    const bool wasShown = m_testResult->isVisibleTo(this);
    m_testResult->clear();
    m_testResult->setProperty("connected", QVariant());
    m_testResult->setProperty("code", QVariant());
    m_testResult->setProperty("finding", QVariant());
    m_testResult->setVisible(false);
    m_testButton->setEnabled(m_openAi->isChecked());
    if (wasShown)
        fitHeight();
}

void ConnectionSettingsDialog::updateKeyState()
{
    const QString variable = m_keyVariable->text().trimmed();
    const bool fromVariable = apiKeyVariableIsSet(variable);
    // The variable wins when set, as at start: then this field is not used, and says so.
    m_apiKey->setReadOnly(fromVariable);
    if (fromVariable) {
        m_apiKey->clear();
        m_apiKey->setPlaceholderText(tr("from %1").arg(variable));
        m_keyState->setText(tr("%1 is set and wins over the keychain (the key itself is never "
                               "shown or logged)")
                                .arg(variable));
        return;
    }
    if (!m_presetNeedsKey && m_keychainState != int(StoredApiKey::State::Stored)) {
        // A local server started without a key: nothing to type.
        m_apiKey->setPlaceholderText(tr("not needed"));
        m_keyState->setText(tr("%1 needs no key: leave this empty").arg(m_presetName));
        return;
    }
    switch (m_keychainState) {
    case int(StoredApiKey::State::Stored):
        m_apiKey->setPlaceholderText(tr("stored in the keychain; type to replace it"));
        m_keyState->setText(
            tr("%1 is not set: the key stored in the OS keychain is used").arg(variable));
        break;
    case int(StoredApiKey::State::NotStored):
        m_apiKey->setPlaceholderText(tr("kept in the OS keychain"));
        m_keyState->setText(tr("%1 is not set and no key is stored: only a local server "
                               "without a key will answer")
                                .arg(variable));
        break;
    case int(StoredApiKey::State::Unavailable):
        m_apiKey->setPlaceholderText(tr("the keychain is not available"));
        // Why not is the local log's (the keychain's own words, often a D-Bus message).
        m_keyState->setText(tr("%1 is not set and the OS keychain cannot be reached: only a "
                               "local server without a key will answer")
                                .arg(variable));
        break;
    default:
        m_apiKey->setPlaceholderText(QString());
        m_keyState->setText(tr("%1 is not set; asking the keychain…").arg(variable));
        break;
    }
}

void ConnectionSettingsDialog::onKeyStored(bool stored)
{
    m_storingKey = false;
    m_buttons->setEnabled(true);
    if (!stored) {
        m_problem->showNotice(tr("The key was not stored"),
                              tr("The OS keychain could not keep it (the local log says why). "
                                 "The settings were not applied."),
                              Tone::Danger);
        fitHeight();
        return;
    }
    m_apiKey->clear(); // the keychain has it now; the widget keeps nothing
    QDialog::accept();
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
    options.contextChars = m_contextChars->value();
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
    if (problem)
        return problem->forStaff();
    const QString ledger = ConsoleSettings::ledgerProblem(ledgerSpec());
    if (!ledger.isEmpty())
        return tr("Ledger: %1").arg(ledger);
    const QString team = ConsoleSettings::teamProblem(teamSpec());
    if (!team.isEmpty())
        return tr("Team database: %1").arg(team);
    if (!teamSpec().isEmpty() && !ledgerSpec().isEmpty())
        return tr("Team database: it holds the ledger too; leave the ledger empty");
    return {};
}

void ConnectionSettingsDialog::accept()
{
    if (m_storingKey)
        return;
    if (!problem().isEmpty()) {
        updateState();
        return;
    }
    // A key typed here goes to the keychain first: the runtime reads it from there when it
    // applies the settings, as it does at start.
    const QString key = m_apiKey->text().trimmed();
    if (!key.isEmpty() && !m_apiKey->isReadOnly()) {
        m_storingKey = true;
        m_buttons->setEnabled(false);
        m_storedKey->store(key);
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
    m_presetNeedsKey = preset.needsKey;
    m_presetName = tr(preset.name.toUtf8().constData());
    if (preset.baseUrl.isEmpty()) {
        // Custom: the address and the model are staff's to type.
        m_baseUrl->setFocus();
        m_baseUrl->selectAll();
    } else {
        m_baseUrl->setText(preset.baseUrl);
        m_model->setText(preset.model);
    }
    forgetTestResult();
    updateKeyState();
}

QWidget *ConnectionSettingsDialog::settingEditor(const QString &key) const
{
    const std::pair<const QString *, QWidget *> editors[] = {
        {&SettingKeys::provider, m_offline},
        {&SettingKeys::baseUrl, m_baseUrl},
        {&SettingKeys::model, m_model},
        {&SettingKeys::apiKeyVariable, m_keyVariable},
        {&SettingKeys::stream, m_stream},
        {&SettingKeys::fallback, m_fallback},
        {&SettingKeys::contextChars, m_contextChars},
        {&SettingKeys::backendKind, m_embedded},
        {&SettingKeys::backendUrl, m_backendUrl},
        {&SettingKeys::ledger, m_ledger},
        {&SettingKeys::team, m_team},
        {&SettingKeys::language, m_language},
    };
    for (const auto &[name, editor] : editors) {
        if (*name == key)
            return editor;
    }
    return nullptr;
}

void ConnectionSettingsDialog::setLockedSettings(const QStringList &keys, const QString &reason)
{
    m_locked.clear();
    for (const QString &key : keys) {
        QWidget *editor = settingEditor(key);
        if (!editor)
            continue; // not edited here (MCP, tool policies: their own panels lock them)
        m_locked.append(key);
        // A choice between two buttons locks both; its lock follows the second.
        if (key == SettingKeys::provider) {
            m_offline->setEnabled(false);
            m_offline->setToolTip(reason);
            editor = m_openAi;
        } else if (key == SettingKeys::backendKind) {
            m_embedded->setEnabled(false);
            m_embedded->setToolTip(reason);
            editor = m_http;
        }
        PolicyLock::lock(editor, reason);
    }
    updateState();
}

void ConnectionSettingsDialog::updateState()
{
    const bool remote = m_openAi->isChecked();
    for (QWidget *widget : std::initializer_list<QWidget *>{
             m_preset, m_baseUrl, m_model, m_keyVariable, m_apiKey, m_stream, m_fallback})
        widget->setEnabled(remote);
    m_testButton->setEnabled(remote && !m_test->isRunning());
    const bool keyStateWasShown = m_keyState->isVisibleTo(this);
    m_keyState->setVisible(remote);
    updateKeyState();
    m_backendUrl->setEnabled(m_http->isChecked());
    ModelOptions byDefault = modelOptions();
    byDefault.contextChars = 0;
    m_contextChars->setSpecialValueText(
        tr("Provider default (%L1 characters)").arg(byDefault.conversationBudget()));
    m_contextChars->setSuffix(tr(" characters"));
    const QString problem = this->problem();
    const bool problemWasShown = m_problem->isVisibleTo(this);
    if (problem.isEmpty())
        m_problem->clearNotice();
    else
        m_problem->showNotice(tr("These settings cannot be applied yet"), problem, Tone::Warning);
    m_buttons->button(QDialogButtonBox::Ok)->setEnabled(problem.isEmpty());
    // What the team's policy locks stays disabled, whatever the choices above enable.
    for (const QString &key : std::as_const(m_locked)) {
        if (QWidget *editor = settingEditor(key))
            editor->setEnabled(false);
    }
    if (m_locked.contains(SettingKeys::provider))
        m_openAi->setEnabled(false);
    if (m_locked.contains(SettingKeys::backendKind))
        m_http->setEnabled(false);
    if (m_locked.contains(SettingKeys::provider) || m_locked.contains(SettingKeys::baseUrl))
        m_preset->setEnabled(false);
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
