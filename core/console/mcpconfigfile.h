#pragma once

#include <QObject>
#include <QString>

#include <functional>
#include <memory>

namespace AgentConsole {

class SecretStore;
struct RuntimeOptions;

// The mcp.json the console reads at start (docs/MCP.md), as Settings › MCP servers edits it.
// Read and written off the GUI thread; a text is saved only when core's parser takes it (the
// same parser and bounds as at start), its secret header and env values first moved into the
// keychain (mcpsecrets.h: the file keeps "${keychain:mcp.<server>.<field>}"), then the file
// replaced atomically. A refused text, a keychain that does not take a secret or a write that
// fails leave the file byte for byte as it was, and no secret is ever written to it instead.
// The servers change from the next start.
class McpConfigFile final : public QObject
{
    Q_OBJECT

public:
    // The file AgentRuntime::start() reads: --mcp-config FILE, else mcp.json in the data
    // directory.
    static QString pathFor(const RuntimeOptions &options);
    // What the editor offers to insert when the file is empty: one stdio and one HTTP server.
    static QString exampleText();

    // `secrets`: where moved secrets go (ActiveConnection::secretStore()); null: nowhere, and a
    // text with a secret in it is refused.
    McpConfigFile(QString path, std::shared_ptr<SecretStore> secrets, QObject *parent = nullptr);
    ~McpConfigFile() override;

    const QString &path() const { return m_path; }
    // The team's policy (docs/POLICY.md): `refusalOf` says why a server may not be used
    // (McpServers::refusalOf; empty when it may), and a text naming one is refused with those
    // words; a non-empty `lockRefusal` refuses every save (the policy locks mcp.json).
    void setPolicy(std::function<QString(const QString &server)> refusalOf, QString lockRefusal)
    {
        m_policyRefusal = std::move(refusalOf);
        m_policyLock = std::move(lockRefusal);
    }
    // loaded() follows, later, once per call.
    void load();
    // saved() or refused() follows, later, exactly once; a call while one is running is
    // ignored (false).
    bool save(const QString &text);
    bool isSaving() const { return m_saving; }

Q_SIGNALS:
    // `exists`: there is a file (else `text` is empty). `unreadable`: why it cannot be edited
    // here (not a regular file, too large, unreadable); then `text` is empty. `refusal`: what
    // the console would say of the text at start (one line), empty when it loads.
    void loaded(const QString &text, bool exists, const QString &unreadable,
                const QString &refusal);
    // The text now in the file (each moved secret replaced by its reference) and how many
    // secrets went to the keychain.
    void saved(const QString &text, int movedSecrets);
    // Why nothing was written, one line in staff's words naming the server and the field; the
    // file is as it was.
    void refused(const QString &reason);

private:
    struct Pending;
    void storeNext(std::shared_ptr<Pending> pending);
    void writeFile(std::shared_ptr<Pending> pending);
    void refuse(const QString &reason);

    const QString m_path;
    const std::shared_ptr<SecretStore> m_secrets;
    bool m_saving = false;
    std::function<QString(const QString &)> m_policyRefusal;
    QString m_policyLock;
};

} // namespace AgentConsole
