#pragma once

#include "core/console/runtimeoptions.h"

#include <QDialog>

#include <memory>

class QCheckBox;
class QSpinBox;
class QComboBox;
class QDialogButtonBox;
class QLabel;
class QLineEdit;
class QPushButton;
class QRadioButton;

namespace AgentConsole {

class ConnectionTest;
struct ConnectionTestResult;
class NoticeBanner;
class SecretStore;
class StoredApiKey;

// Edits which model answers and where the tools look things up, the API key (kept in the OS
// keychain; its variable wins when set), the ledger and the language. It only edits: the
// values are checked by core (the same checks as the command line) and applied by the
// runtime; "Test connection" asks core's ConnectionTest and shows what it found. A key typed
// here is stored in the keychain when OK is pressed, before the dialog closes.
class ConnectionSettingsDialog final : public QDialog
{
    Q_OBJECT

public:
    ConnectionSettingsDialog(const ModelOptions &model, const BackendOptions &backend,
                             QWidget *parent = nullptr);
    // `secrets`: where the key is kept (ActiveConnection::secretStore()); null: the OS keychain.
    ConnectionSettingsDialog(const ModelOptions &model, const BackendOptions &backend,
                             std::shared_ptr<SecretStore> secrets, QWidget *parent = nullptr);
    ~ConnectionSettingsDialog() override;

    ModelOptions modelOptions() const;
    BackendOptions backendOptions() const;
    // Stored settings the runtime reads only at start (the ledger) or that another part
    // applies (the language): shown and handed back.
    void setLedgerSpec(const QString &spec);
    QString ledgerSpec() const;
    void setTeamSpec(const QString &spec);
    QString teamSpec() const;
    void setLanguage(const QString &language); // one of ConsoleSettings::languages()
    QString language() const;
    // The settings a team's policy locks (SettingKeys, docs/POLICY.md): their editors are
    // disabled, each with a lock whose tooltip is `reason` ("Set by your team's policy
    // (version 2026-12-01)"). The values shown are the ones in force; core refuses a change.
    void setLockedSettings(const QStringList &keys, const QString &reason);
    QStringList lockedSettings() const { return m_locked; }
    // The editor of a setting, by its key; null for a key the dialog does not edit.
    QWidget *settingEditor(const QString &key) const;

    // Bounds the connection test (tests keep it short).
    void setConnectionTestTimeoutMs(int ms);
    QString problem() const; // what stops the settings from being accepted, if anything

    void accept() override;

private:
    void applyPreset(int index);
    void updateState();
    void updateKeyState();
    void fitHeight();
    void testConnection();
    void showTestResult(const ConnectionTestResult &result);
    // Hides the result and cancels a test still running: the settings it was about changed.
    void forgetTestResult();
    void onKeyStored(bool stored);

    // What the dialog was opened with: the fields it does not edit (extra headers, a secondary
    // provider) are handed back unchanged.
    const ModelOptions m_initialModel;
    const BackendOptions m_initialBackend;

    QRadioButton *m_offline = nullptr;
    QRadioButton *m_openAi = nullptr;
    QComboBox *m_preset = nullptr;
    QLineEdit *m_baseUrl = nullptr;
    QLineEdit *m_model = nullptr;
    QLineEdit *m_keyVariable = nullptr;
    QLabel *m_keyState = nullptr;
    QLineEdit *m_apiKey = nullptr; // masked; never filled from the keychain
    QPushButton *m_testButton = nullptr;
    QLabel *m_testResult = nullptr;
    QLineEdit *m_ledger = nullptr;
    QLineEdit *m_team = nullptr;
    QComboBox *m_language = nullptr;
    StoredApiKey *m_storedKey = nullptr;
    ConnectionTest *m_test = nullptr;
    // What the keychain said of the stored key: -1 not known yet, else StoredApiKey::State.
    int m_keychainState = -1;
    bool m_forgettingTest = false;
    // The preset chosen last says whether its server needs a key (a typed address: maybe).
    bool m_presetNeedsKey = true;
    QString m_presetName;
    bool m_storingKey = false;
    QCheckBox *m_stream = nullptr;
    QCheckBox *m_fallback = nullptr;
    QSpinBox *m_contextChars = nullptr; // 0: the provider's default, said in its special text
    QRadioButton *m_embedded = nullptr;
    QRadioButton *m_http = nullptr;
    QLineEdit *m_backendUrl = nullptr;
    NoticeBanner *m_problem = nullptr; // what stops OK, in words; hidden when nothing does
    QDialogButtonBox *m_buttons = nullptr;
    QStringList m_locked; // setLockedSettings()
};

} // namespace AgentConsole
