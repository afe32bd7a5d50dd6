#pragma once

#include "runtimeoptions.h"

#include "../policy/managedpolicy.h"

#include <QByteArray>
#include <QList>
#include <QMap>
#include <QObject>
#include <QPointer>
#include <QString>
#include <QStringList>

#include <atomic>
#include <functional>
#include <memory>

namespace AgentConsole {

class SettingsWriter;

// What the console keeps between starts: the connection (provider, model, base URL, key
// variable, streaming, fallback, backend), the ledger, the language chosen and the window's
// geometry and dock state. Never a key or a password: keys live in the keychain.
struct StoredSettings
{
    ModelOptions model; // the fields the settings dialog edits; the rest are defaults
    BackendOptions backend;
    QString ledgerSpec; // "" (SQLite in the data directory) or a spec without a password
    // The team's database (docs/TEAM.md), postgresql://… without a password; "" for none.
    // It holds the ledger too: with it, ledgerSpec is not used.
    QString teamSpec;
    QString language = QStringLiteral("system"); // one of ConsoleSettings::languages()
    QByteArray windowGeometry; // QWidget::saveGeometry(); empty when never saved
    QByteArray windowState; // QMainWindow::saveState()
    // Staff's MCP tool policies, [mcpPolicies] <server>/<tool>=read|idempotent-write|confirm
    // (core/mcp/mcptoolpolicy.h); an entry that is not one of those is a problem, not used.
    QMap<QString, QString> mcpToolPolicies;
};

// The stored settings in one INI file (QSettings), read once at start and written when staff
// change something. Every value is checked as it is read: a broken or out-of-range one is
// reported (problems()) and its default used. A file that exists but cannot be read (not a
// regular file, unreadable, over 1 MiB, or not INI) is left exactly as it is: the defaults are
// used and nothing is written to it during this session, so it is never recreated empty.
class ConsoleSettings final
{
public:
    // The file agent-console uses: agent-console.ini in the user's configuration directory
    // ($XDG_CONFIG_HOME/AgentConsole/ on Linux).
    static QString defaultFilePath();
    // "system" (follow the locale), "en", "zh_CN".
    static QStringList languages();
    static constexpr qint64 maxFileBytes = 1024 * 1024;

    explicit ConsoleSettings(QString filePath = defaultFilePath());
    // Waits for the writes already asked for (writeInBackground()).
    ~ConsoleSettings();
    ConsoleSettings(const ConsoleSettings &) = delete;
    ConsoleSettings &operator=(const ConsoleSettings &) = delete;

    QString filePath() const { return m_filePath; }
    // Reads the file; the values are then in settings(), what was wrong in problems().
    void load();
    const StoredSettings &settings() const { return m_settings; }
    // One line each, for staff and the log: the key, what was wrong, that the default is used.
    // Worded when asked for, in the language installed then: load() runs before the window's
    // translator is installed (the stored language is among what it reads).
    QStringList problems() const;
    // False when the file could not be read at load(), or went bad since: nothing is written
    // to it then.
    bool isWritable() const { return m_writable->load(); }

    // From now on a save writes the file off the calling thread (SettingsWriter, in the order
    // the saves were made) and answers true once its values are checked and in force; a file
    // that then cannot be written is reported to `failed`, with the reason, on `context`'s
    // thread (once `context` is gone, only logged). For the window: the GUI thread never
    // waits for the disk.
    void writeInBackground(QObject *context, std::function<void(const QString &reason)> failed);

    // Each writes at once (see writeInBackground()); false with the reason when the file is
    // kept as it was.
    bool saveConnection(const ModelOptions &model, const BackendOptions &backend,
                        QString *error = nullptr);
    bool saveLedger(const QString &spec, QString *error = nullptr);
    bool saveTeam(const QString &spec, QString *error = nullptr);
    bool saveLanguage(const QString &language, QString *error = nullptr);
    bool saveWindow(const QByteArray &geometry, const QByteArray &state, QString *error = nullptr);
    // Replaces every stored MCP tool policy; refused when one is not a policy.
    bool saveMcpToolPolicies(const QMap<QString, QString> &policies, QString *error = nullptr);

    // The team's policy in force (docs/POLICY.md; the window's, once the runtime is ready):
    // each setting it locks takes its value in force (`inForce`, the runtime's options) and
    // is never written (the staff member's own value stays in the file); a save that would
    // change one is refused with the policy's words, one that keeps it is not written.
    void lockTo(const ManagedPolicy &policy, const RuntimeOptions &inForce);
    bool isLocked(const QString &key) const { return m_policy && m_policy->isLocked(key); }

    // The options the runtime starts with before the command line is read: the defaults,
    // with the stored connection and ledger over them. The command line and the environment
    // then win where they are set (RuntimeCommandLine::read).
    RuntimeOptions startOptions() const;

    // Why a ledger spec may not be stored (a password in it, an unknown scheme); empty if it may.
    static QString ledgerProblem(const QString &spec);
    // Why a team database may not be stored (RuntimeOptions::teamSpecProblem); empty if it may
    // (an empty spec: no team).
    static QString teamProblem(const QString &spec);

private:
    template <typename Write> bool save(Write write, QString *error);

    QString m_filePath;
    StoredSettings m_settings;
    std::optional<ManagedPolicy> m_policy; // lockTo()
    // Each problem as a function that words it, so that it reads in the current language.
    QList<std::function<QString()>> m_problems;
    // Shared with the writes under way, which find out when the file went bad.
    std::shared_ptr<std::atomic<bool>> m_writable = std::make_shared<std::atomic<bool>>(true);
    bool m_unreadableAtStart = false; // else a file that is not writable went bad since
    std::unique_ptr<QObject> m_loggingContext; // where a failure nobody is told of is logged
    std::unique_ptr<SettingsWriter> m_writer; // null: saves write at once
    QPointer<QObject> m_failureContext;
    std::function<void(const QString &reason)> m_failed;
};

} // namespace AgentConsole
