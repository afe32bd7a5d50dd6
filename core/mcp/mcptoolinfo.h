#pragma once

#include "mcperror.h"

#include <QJsonObject>
#include <QList>
#include <QObject>
#include <QPointer>
#include <QString>

#include <functional>
#include <optional>

namespace AgentConsole::Mcp {

class Session;
class PendingRequest;

// A tool's behaviour hints (MCP's ToolAnnotations). Hints from a server that may not be
// trusted: they choose between safeguards that are all sound, never switch one off.
struct ToolAnnotations
{
    std::optional<bool> readOnly; // readOnlyHint, default false
    std::optional<bool> destructive; // destructiveHint, default true (when not read-only)
    std::optional<bool> idempotent; // idempotentHint, default false
    std::optional<bool> openWorld; // openWorldHint, default true
    QString title;
};

ToolPolicy policyOf(const ToolAnnotations &annotations);

struct ToolInfo
{
    QString name;
    QString title;
    QString description;
    QJsonObject inputSchema;
    QJsonObject outputSchema;
    ToolAnnotations annotations;
};

struct ToolListLimits
{
    int maxTools = 256; // across all pages
    int maxPages = 16;
    int maxNameLength = 128;
    int maxDescriptionChars = 2048; // longer descriptions are cut (they go to the model)
    int maxCursorLength = 1024;
    qsizetype maxSchemaBytes = 64 * 1024;
};

// One entry of tools/list. A tool that cannot be offered safely (no valid name, no object
// schema, a schema too large) is refused with the reason (for the log); a long description
// is cut rather than refused.
std::optional<ToolInfo> parseToolInfo(const QJsonObject &json, const ToolListLimits &limits,
                                      QString *problem);

// Lists a server's tools through every page (nextCursor), bounded in pages and tools and
// safe against a server that repeats a cursor. One listing at a time per lister.
class ToolLister final : public QObject
{
    Q_OBJECT

public:
    explicit ToolLister(Session *session, ToolListLimits limits = {}, QObject *parent = nullptr);

    void list(int pageTimeoutMs = 0);
    bool isListing() const { return m_pending != nullptr; }

Q_SIGNALS:
    // The tools, or the error that ended the listing (then `tools` holds none). Refused
    // entries are left out and logged; `refused` says why, one line each ("tool x: ...").
    void finished(const QList<AgentConsole::Mcp::ToolInfo> &tools, const QStringList &refused,
                  const AgentConsole::Mcp::Error &error);

private:
    void requestPage(const QString &cursor);

    QPointer<Session> m_session;
    ToolListLimits m_limits;
    QPointer<PendingRequest> m_pending;
    QList<ToolInfo> m_tools;
    QStringList m_cursors;
    QStringList m_refused;
    int m_pages = 0;
    int m_timeoutMs = 0;
};

} // namespace AgentConsole::Mcp
