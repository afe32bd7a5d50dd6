#pragma once

#include <QDialog>

#include <functional>

#include <memory>

class QDialogButtonBox;
class QLabel;
class QPlainTextEdit;
class QPushButton;

namespace AgentConsole {

class McpConfigFile;
class NoticeBanner;
class SecretStore;

// Settings › MCP servers (mcp.json): the file as plain JSON text, in a monospace editor, with
// where it is and its format said above it and an example to insert when it is empty. It only
// edits: OK hands the text to core's McpConfigFile, which checks it with the parser the start
// uses, moves its secrets into the keychain and writes the file; a refused text keeps the
// dialog open with the text and the reason, the file left as it was. The servers change from
// the next start (said in the dialog and after saving).
class McpConfigDialog final : public QDialog
{
    Q_OBJECT

public:
    // `path`: McpConfigFile::pathFor(the runtime's options); `secrets`: where secret values
    // go (ActiveConnection::secretStore()).
    McpConfigDialog(const QString &path, std::shared_ptr<SecretStore> secrets,
                    QWidget *parent = nullptr);
    ~McpConfigDialog() override;

    QString text() const;
    // How many secrets the last save moved into the keychain.
    int movedSecrets() const { return m_movedSecrets; }

    // The team's policy (docs/POLICY.md): `refusalOf` names a server it does not allow
    // (McpServers::refusalOf), and a text naming one is refused in those words; a non-empty
    // `lockRefusal` (mcp.json locked) keeps the editor read-only with a lock and the words.
    void setTeamPolicy(std::function<QString(const QString &server)> refusalOf,
                       const QString &lockRefusal);
    bool isLockedByPolicy() const { return !m_lockRefusal.isEmpty(); }

    void accept() override;

private:
    void onLoaded(const QString &text, bool exists, const QString &unreadable,
                  const QString &refusal);
    void onRefused(const QString &reason);
    void onSaved(const QString &text, int movedSecrets);
    void updateState();

    McpConfigFile *m_file = nullptr;
    QLabel *m_where = nullptr;
    QPlainTextEdit *m_editor = nullptr;
    QPushButton *m_example = nullptr;
    NoticeBanner *m_problem = nullptr;
    QDialogButtonBox *m_buttons = nullptr;
    bool m_loaded = false;
    bool m_editable = false; // false while reading, and for a file that cannot be read
    int m_movedSecrets = 0;
    QString m_lockRefusal; // setTeamPolicy()
    QWidget *m_lockRow = nullptr;
};

} // namespace AgentConsole
