#include "mcptoolinfo.h"

#include "../telemetry/logging.h"
#include "mcpsession.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QRegularExpression>

namespace AgentConsole::Mcp {

namespace {

std::optional<bool> hint(const QJsonObject &annotations, const char *key)
{
    const QJsonValue value = annotations.value(QLatin1String(key));
    return value.isBool() ? std::optional<bool>(value.toBool()) : std::nullopt;
}

} // namespace

ToolPolicy policyOf(const ToolAnnotations &annotations)
{
    if (annotations.readOnly.value_or(false))
        return ToolPolicy::Read;
    // idempotentHint alone makes retries safe; destructiveHint says nothing about retries,
    // only that confirmation matters, which an idempotent write still gets from its ledger.
    if (annotations.idempotent.value_or(false))
        return ToolPolicy::IdempotentWrite;
    return ToolPolicy::Write;
}

std::optional<ToolInfo> parseToolInfo(const QJsonObject &json, const ToolListLimits &limits,
                                      QString *problem)
{
    // MCP 2025-11-25: 1-128 characters of ASCII letters, digits, '_', '-' and '.'.
    static const QRegularExpression validName(QStringLiteral("^[A-Za-z0-9_.-]+$"));
    ToolInfo tool;
    tool.name = json.value(QStringLiteral("name")).toString();
    if (tool.name.isEmpty() || tool.name.size() > limits.maxNameLength
        || !validName.match(tool.name).hasMatch()) {
        *problem = QStringLiteral("a tool without a valid name (\"%1\")").arg(tool.name.left(64));
        return std::nullopt;
    }
    const QJsonValue schema = json.value(QStringLiteral("inputSchema"));
    if (!schema.isObject()
        || schema.toObject().value(QStringLiteral("type")).toString() != QLatin1String("object")) {
        *problem = QStringLiteral("tool %1 has no object inputSchema").arg(tool.name);
        return std::nullopt;
    }
    // A tool that runs only as a task (MCP 2025-11-25's execution.taskSupport) cannot be
    // called with a plain tools/call, and this client runs no tasks.
    if (json.value(QStringLiteral("execution")).toObject().value(QStringLiteral("taskSupport"))
        == QLatin1String("required")) {
        *problem = QStringLiteral("tool %1 runs only as a task, which this client does not do")
                       .arg(tool.name);
        return std::nullopt;
    }
    tool.inputSchema = schema.toObject();
    if (QJsonDocument(tool.inputSchema).toJson(QJsonDocument::Compact).size()
        > limits.maxSchemaBytes) {
        *problem = QStringLiteral("tool %1 has an inputSchema over %2 bytes")
                       .arg(tool.name)
                       .arg(limits.maxSchemaBytes);
        return std::nullopt;
    }
    tool.outputSchema = json.value(QStringLiteral("outputSchema")).toObject();
    tool.description = json.value(QStringLiteral("description")).toString();
    if (tool.description.size() > limits.maxDescriptionChars)
        tool.description = tool.description.left(limits.maxDescriptionChars) + QStringLiteral("…");
    const QJsonObject annotations = json.value(QStringLiteral("annotations")).toObject();
    tool.annotations.readOnly = hint(annotations, "readOnlyHint");
    tool.annotations.destructive = hint(annotations, "destructiveHint");
    tool.annotations.idempotent = hint(annotations, "idempotentHint");
    tool.annotations.openWorld = hint(annotations, "openWorldHint");
    tool.annotations.title = annotations.value(QStringLiteral("title")).toString().left(256);
    tool.title = json.value(QStringLiteral("title")).toString().left(256);
    if (tool.title.isEmpty())
        tool.title = tool.annotations.title;
    return tool;
}

ToolLister::ToolLister(Session *session, ToolListLimits limits, QObject *parent)
    : QObject(parent)
    , m_session(session)
    , m_limits(limits)
{
}

void ToolLister::list(int pageTimeoutMs)
{
    if (m_pending)
        return;
    m_tools.clear();
    m_cursors.clear();
    m_refused.clear();
    m_pages = 0;
    m_timeoutMs = pageTimeoutMs;
    requestPage({});
}

void ToolLister::requestPage(const QString &cursor)
{
    if (!m_session) {
        Q_EMIT finished({}, {}, Error::of(Failure::NotConnected, QStringLiteral("no session")));
        return;
    }
    QJsonObject params;
    if (!cursor.isEmpty())
        params.insert(QStringLiteral("cursor"), cursor);
    ++m_pages;
    m_pending = m_session->request(QStringLiteral("tools/list"), params,
                                   {m_timeoutMs, 0, false, {}});
    connect(m_pending, &PendingRequest::finished, this, [this](const Reply &reply) {
        m_pending = nullptr;
        if (!reply.ok()) {
            Q_EMIT finished({}, {}, reply.error);
            return;
        }
        const QJsonObject result = reply.result.toObject();
        const QJsonValue tools = result.value(QStringLiteral("tools"));
        if (!tools.isArray()) {
            Q_EMIT finished({}, {},
                            Error::of(Failure::Malformed,
                                      QStringLiteral("tools/list without a tools array")));
            return;
        }
        for (const QJsonValue &entry : tools.toArray()) {
            if (m_tools.size() >= m_limits.maxTools) {
                Q_EMIT finished(
                    {}, {},
                    Error::of(Failure::Oversized,
                              QStringLiteral("more than %1 tools").arg(m_limits.maxTools)));
                return;
            }
            QString problem;
            if (auto tool = parseToolInfo(entry.toObject(), m_limits, &problem)) {
                const bool duplicate = std::any_of(m_tools.cbegin(), m_tools.cend(),
                                                   [&](const ToolInfo &t) {
                                                       return t.name == tool->name;
                                                   });
                if (!duplicate) {
                    m_tools.append(*tool);
                    continue;
                }
                problem = QStringLiteral("tool %1 listed twice").arg(tool->name);
            }
            m_refused.append(problem);
            qCWarning(lcMcp).noquote() << "tools/list: refused" << problem;
        }
        const QString next = result.value(QStringLiteral("nextCursor")).toString();
        if (next.isEmpty()) {
            Q_EMIT finished(m_tools, m_refused, {});
            return;
        }
        if (next.size() > m_limits.maxCursorLength || m_cursors.contains(next)
            || m_pages >= m_limits.maxPages) {
            Q_EMIT finished(
                {}, {},
                Error::of(Failure::Oversized,
                          QStringLiteral("tools/list pages do not end (page %1)").arg(m_pages)));
            return;
        }
        m_cursors.append(next);
        requestPage(next);
    });
}

} // namespace AgentConsole::Mcp
