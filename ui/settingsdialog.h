#pragma once

#include "core/agent/agentruntime.h"

#include <QDialog>

class QCheckBox;
class QComboBox;
class QDialogButtonBox;
class QLabel;
class QLineEdit;
class QRadioButton;

namespace AgentConsole {

class NoticeBanner;

// Edits which model answers and where the tools look things up. It only edits: the values are
// checked by core (the same checks as the command line) and applied by the runtime.
class ConnectionSettingsDialog final : public QDialog
{
    Q_OBJECT

public:
    ConnectionSettingsDialog(const ModelOptions &model, const BackendOptions &backend,
                             QWidget *parent = nullptr);

    ModelOptions modelOptions() const;
    BackendOptions backendOptions() const;
    QString problem() const; // what stops the settings from being accepted, if anything

    void accept() override;

private:
    void applyPreset(int index);
    void updateState();
    void fitHeight();

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
    QCheckBox *m_stream = nullptr;
    QCheckBox *m_fallback = nullptr;
    QRadioButton *m_embedded = nullptr;
    QRadioButton *m_http = nullptr;
    QLineEdit *m_backendUrl = nullptr;
    NoticeBanner *m_problem = nullptr; // what stops OK, in words; hidden when nothing does
    QDialogButtonBox *m_buttons = nullptr;
};

} // namespace AgentConsole
