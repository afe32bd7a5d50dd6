#pragma once

#include <QByteArray>
#include <QString>
#include <QStringList>

#include <memory>

namespace AgentConsole {

// What a policy source gave: no policy at all, a policy's text and where it came from, or a
// policy that is there but cannot be read (the console then refuses to start: an admin's
// policy is never silently ignored).
struct PolicyText
{
    enum class Status { None, Found, Unreadable };
    Status status = Status::None;
    QByteArray text; // Found: the JSON text
    QString origin; // Found or Unreadable: where ("/etc/xdg/AgentConsole/policy.json")
    QString problem; // Unreadable: one line, naming the origin
};

// Where a team's managed policy comes from (docs/POLICY.md). read() may block (a file, later
// a database): the console calls it on a worker thread (RuntimeStartup), never on the GUI
// thread, and a source must be callable from any thread.
//
// The team database is the next source: a PostgreSQL table holding the policy's JSON text and
// its version, read by a source that returns that text with an origin such as
// "postgresql://team-db/agent_console". Nothing else changes: the text is read by
// ManagedPolicy::read either way.
class PolicySource
{
public:
    virtual ~PolicySource() = default;
    virtual PolicyText read() const = 0;
};

// The system-wide file: AgentConsole/policy.json in the first of the XDG configuration
// directories ($XDG_CONFIG_DIRS, by default /etc/xdg) that has one. Never the user's own
// configuration directory: a policy is the team's, not the staff member's. (Windows and
// macOS: the same name under QStandardPaths' system-wide configuration locations, not built
// or tested here.)
class FilePolicySource final : public PolicySource
{
public:
    // A source for one file, whether or not it exists; empty: the system-wide file.
    explicit FilePolicySource(QString path);
    // The system-wide file as described above, looked for at each read().
    static std::shared_ptr<const PolicySource> systemWide();
    static QString systemWidePath();
    // The directories systemWide() looks in, in order.
    static QStringList systemDirectories();
    static QString relativePath(); // "AgentConsole/policy.json"

    PolicyText read() const override;
    const QString &path() const { return m_path; }

private:
    QString m_path;
};

// A policy already read (a test, or a front end that read it itself).
class FixedPolicySource final : public PolicySource
{
public:
    explicit FixedPolicySource(PolicyText text)
        : m_text(std::move(text))
    {
    }
    PolicyText read() const override { return m_text; }

private:
    PolicyText m_text;
};

} // namespace AgentConsole
