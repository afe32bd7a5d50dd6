#include "mcptool.h"

#include "../oauth/signinerror.h"
#include "../resilience/failuretable.h"
#include "../telemetry/killpoint.h"
#include "../telemetry/logging.h"
#include "mcpresultsummary.h"
#include "mcpsession.h"
#include "mcptoolpolicy.h"

#include "../async/checkworkpool.h"

#include <QCryptographicHash>
#include <QMutex>
#include <QPointer>
#include <QThreadPool>

#include <utility>

namespace AgentConsole::Mcp {

namespace {

constexpr int kMaxExposedName = 64; // OpenAI-style function names

// The key of a write's operation, sent where MCP leaves room for a client's own data, so a
// server that deduplicates can (MCP names no idempotency key of its own).
const QString kIdempotencyMeta = QStringLiteral("io.agentconsole/idempotencyKey");

QString sanitized(const QString &text)
{
    QString out;
    for (const QChar c : text)
        out.append((c.isLetterOrNumber() && c.unicode() < 128) || c == QLatin1Char('_')
                           || c == QLatin1Char('-')
                       ? c
                       : QLatin1Char('_'));
    return out;
}

} // namespace

struct SessionHandle::State
{
    QMutex mutex;
    Session *session = nullptr;
};

SessionHandle::SessionHandle(Session *session)
    : d(std::make_shared<State>())
{
    d->session = session;
    // Direct: cleared on the session's thread, in its destructor, under the mutex, so a pool
    // thread never posts to a session being destroyed (QObject drops events posted to it).
    std::weak_ptr<State> weak = d;
    QObject::connect(
        session, &QObject::destroyed, session,
        [weak] {
            if (auto state = weak.lock()) {
                QMutexLocker lock(&state->mutex);
                state->session = nullptr;
            }
        },
        Qt::DirectConnection);
}

SessionHandle::~SessionHandle() = default;

bool SessionHandle::post(std::function<void(Session *)> function) const
{
    QMutexLocker lock(&d->mutex);
    Session *session = d->session;
    if (!session)
        return false;
    QMetaObject::invokeMethod(
        session, [session, function = std::move(function)] { function(session); },
        Qt::QueuedConnection);
    return true;
}

McpTool::McpTool(std::shared_ptr<SessionHandle> session, QString serverName, ToolInfo info,
                 Settings settings)
    : m_session(std::move(session))
    , m_serverName(std::move(serverName))
    , m_info(std::move(info))
    , m_settings(settings)
    , m_annotatedPolicy(policyOf(m_info.annotations))
    , m_policy(m_annotatedPolicy)
    , m_schema(std::make_unique<ArgumentSchema>(m_info.inputSchema))
    , m_outputSchema(m_info.outputSchema.isEmpty()
                         ? nullptr
                         : std::make_shared<const ArgumentSchema>(m_info.outputSchema))
{
    m_descriptor.name = exposedName(m_serverName, m_info.name);
    // The model learns where the tool comes from; the server's own words follow, bounded.
    m_descriptor.description = QStringLiteral("[MCP server %1, tool %2] %3")
                                   .arg(m_serverName, m_info.name, m_info.description);
    m_descriptor.parameters = m_info.inputSchema;
    m_descriptor.service = serviceName(m_serverName);
    m_descriptor.labels.title = m_info.title.isEmpty() ? m_info.name : m_info.title;
    describePolicy();
}

void McpTool::describePolicy()
{
    m_descriptor.hasSideEffects = m_policy != ToolPolicy::Read;
    m_descriptor.requiresConfirmation = m_policy == ToolPolicy::Write;
    m_descriptor.outcomeCanBeLearned = m_policy != ToolPolicy::Write;
    m_descriptor.labels.confirmTitle.clear();
    m_descriptor.labels.confirmAction.clear();
    if (m_policy == ToolPolicy::Write) {
        m_descriptor.labels.confirmTitle = QStringLiteral("Confirm: %1 (MCP server %2)")
                                               .arg(m_descriptor.labels.title, m_serverName);
        m_descriptor.labels.confirmAction = QStringLiteral("Run tool");
    }
    ToolLabels::PolicyOrigin &origin = m_descriptor.labels.policyOrigin;
    origin.source = m_overridden ? ToolLabels::PolicyOrigin::Source::Staff
                                 : ToolLabels::PolicyOrigin::Source::Hints;
    origin.policy = ToolPolicyWords::status(m_policy);
    origin.hinted = ToolPolicyWords::status(m_annotatedPolicy);
}

std::shared_ptr<McpTool> McpTool::withOverride(ToolPolicy policy) const
{
    auto tool = std::make_shared<McpTool>(m_session, m_serverName, m_info, m_settings);
    tool->m_policy = policy;
    tool->m_overridden = true;
    tool->describePolicy();
    return tool;
}

McpTool::~McpTool() = default;

std::shared_ptr<McpTool> McpTool::create(std::shared_ptr<SessionHandle> session,
                                         const QString &serverName, const ToolInfo &info,
                                         Settings settings, QString *problem)
{
    const QStringList unsupported = unsupportedSchemaKeywords(info.inputSchema);
    if (!unsupported.isEmpty()) {
        *problem = QStringLiteral("tool %1's inputSchema uses what the validator does not "
                                  "enforce: %2")
                       .arg(info.name, unsupported.join(u", "));
        return nullptr;
    }
    // Its results are checked against its outputSchema: a schema that cannot check what it
    // says would let anything through under its name.
    const QStringList unsupportedOutput = unsupportedSchemaKeywords(info.outputSchema);
    if (!unsupportedOutput.isEmpty()) {
        *problem = QStringLiteral("tool %1's outputSchema uses what the validator does not "
                                  "enforce: %2")
                       .arg(info.name, unsupportedOutput.join(u", "));
        return nullptr;
    }
    auto tool = std::make_shared<McpTool>(std::move(session), serverName, info, settings);
    if (!tool->m_schema->problem().isEmpty()) {
        *problem = QStringLiteral("tool %1's inputSchema is refused: %2")
                       .arg(info.name, tool->m_schema->problem());
        return nullptr;
    }
    if (tool->m_outputSchema && !tool->m_outputSchema->problem().isEmpty()) {
        *problem = QStringLiteral("tool %1's outputSchema is refused: %2")
                       .arg(info.name, tool->m_outputSchema->problem());
        return nullptr;
    }
    return tool;
}

QString McpTool::exposedName(const QString &serverName, const QString &toolName)
{
    const QString name = sanitized(serverName) + QStringLiteral("__") + sanitized(toolName);
    if (name.size() <= kMaxExposedName)
        return name;
    const QByteArray hash = QCryptographicHash::hash((serverName + u'\n' + toolName).toUtf8(),
                                                     QCryptographicHash::Sha1)
                                .toHex()
                                .left(8);
    return name.left(kMaxExposedName - 9) + QLatin1Char('_') + QString::fromLatin1(hash);
}

QString McpTool::serviceName(const QString &serverName)
{
    return QStringLiteral("mcp:") + serverName;
}

RetryPolicy McpTool::retryPolicy(const RetryPolicy &base) const
{
    RetryPolicy policy = base;
    // The executor's timeout is the hard maximum plus a margin: the session's own idle
    // timeout, kept alive by progress, ends a silent attempt first and says so precisely.
    policy.attemptTimeout = RetryPolicy::Millis(m_settings.hardMaximumMs + 1000);
    policy.callDeadline = RetryPolicy::Millis(0);
    if (m_policy == ToolPolicy::Write)
        policy.maxRetries = 0; // never retried blindly: a timeout is EXECUTION_STATUS_UNKNOWN
    return policy;
}

std::optional<ToolResult> McpTool::precheck(const QJsonObject &arguments,
                                            const TrustedContext &context) const
{
    const QStringList invalid = m_schema->invalidFields(arguments);
    if (invalid.isEmpty())
        return std::nullopt;
    QStringList errors;
    for (const QString &field : invalid)
        errors.append(field == QLatin1String("(arguments)")
                          ? localized(context.language, "Missing or unexpected arguments",
                                      "缺少参数或包含未知参数")
                          : localized(context.language,
                                      "Argument \"%1\" does not match the "
                                      "tool's schema",
                                      "参数“%1”不符合工具的参数定义")
                                .arg(field.left(64)));
    return ToolResult::failure(ResultCode::InvalidArgument, context.language, errors);
}

namespace {

// Why `result` does not have the shape its tool declared (for the log); empty when it has.
QString outputProblem(const QJsonObject &result, const ArgumentSchema &schema)
{
    const QJsonValue structured = result.value(QStringLiteral("structuredContent"));
    if (!structured.isObject())
        return QStringLiteral("no structuredContent object, though the tool declares an "
                              "outputSchema");
    const QStringList invalid = schema.invalidFields(structured.toObject());
    if (invalid.isEmpty())
        return {};
    QStringList fields;
    for (const QString &field : invalid.mid(0, 8))
        fields.append(field.left(64));
    return QStringLiteral("structuredContent does not match the outputSchema (%1)")
        .arg(fields.join(u", "));
}

} // namespace

namespace {

// A write's request reached the server and its answer was lost (or came broken): it may have
// run. MCP has no way to ask a server what became of a call, so this is said, never guessed,
// and the call is never sent again (McpTool::attempt).
bool mayHaveActed(const Error &error)
{
    switch (error.failure) {
    case Failure::TransportClosed: // the server exited or the connection closed unanswered
    case Failure::Malformed: // it answered, with something that is not JSON-RPC
    case Failure::Oversized: // it answered, past the bound
        return true;
    case Failure::TransportFailed:
        // An HTTP answer that says it failed, not whether it acted first; 429 and 503 say
        // the request was not taken.
        return error.code >= 500 && error.code != 503;
    default:
        return false;
    }
}

AttemptResult outcomeUnknown(Language language, QString detail)
{
    AttemptResult unknown = AttemptResult::completed(FailureTable::instance().failure(
        ResultCode::Code::ExecutionStatusUnknown, language,
        {localized(language,
                   "The server received the request, but its answer was lost: check at the "
                   "server whether it ran before asking again",
                   "服务器已收到请求，但未能取得其结果：请先在该服务器上确认是否已执行，再决定是否"
                   "重新发起")}));
    unknown.logDetail = std::move(detail);
    return unknown;
}

} // namespace

AttemptResult attemptResultFor(const Reply &reply, ToolPolicy policy, Language language,
                               const ArgumentSchema *outputSchema)
{
    if (!reply.ok() && policy == ToolPolicy::Write && mayHaveActed(reply.error))
        return outcomeUnknown(language, reply.error.describe());
    if (reply.ok()) {
        const QJsonObject result = reply.result.toObject();
        if (result.value(QStringLiteral("isError")).toBool()) {
            // The tool ran and said it failed: an answer from a healthy server, not retried
            // (the same arguments would fail the same way); the model reads its bounded words.
            ToolResult failed = FailureTable::instance().failure(
                ResultCode::Code::ToolRejected, language,
                {localized(language, "The tool reported an error (see data)",
                           "工具返回了错误（见 data）")});
            failed.data = summariseToolResult(result);
            return AttemptResult::completed(failed);
        }
        if (outputSchema) {
            if (const QString problem = outputProblem(result, *outputSchema); !problem.isEmpty()) {
                // The server broke its own contract: nothing of the answer reaches the model,
                // and asking again would get the same answer. What was wrong goes to the log.
                AttemptResult broken = AttemptResult::completed(FailureTable::instance().failure(
                    ResultCode::Code::ToolRejected, language,
                    {localized(language, "The tool's answer did not have the shape it declares",
                               "工具返回的结果不符合其声明的结构")}));
                broken.logDetail = problem;
                return broken;
            }
        }
        const QJsonObject summary = summariseToolResult(result);
        return AttemptResult::completed(ToolResult::ok(
            localized(language, "The tool answered.", "工具已返回结果。"), summary));
    }
    const Error &error = reply.error;
    const QString detail = error.describe();
    switch (error.failure) {
    case Failure::Timeout: {
        AttemptResult timedOut;
        timedOut.failure = FailureKind::AttemptTimeout;
        timedOut.logDetail = detail;
        return timedOut;
    }
    case Failure::Cancelled: {
        AttemptResult cancelled;
        cancelled.failure = FailureKind::Cancelled;
        cancelled.logDetail = detail;
        return cancelled;
    }
    case Failure::AccessDenied:
        return AttemptResult::accessDenied(detail);
    case Failure::AuthRequired: {
        // Nothing ran: the server wants a sign-in (or a new one). Staff read how to sign in.
        // An authorization server that did not answer or answered nonsense is a fault of the
        // server's side: it counts against its breaker and may heal (the attempt is tried
        // again); a missing, cancelled or refused sign-in is nobody's fault and does not.
        const OAuth::SignInError signIn{OAuth::SignInFailure(error.code), {}};
        if (signIn.isFault()) {
            AttemptResult fault = AttemptResult::transient(detail);
            fault.code = ResultCode::Code::SignInRequired;
            return fault;
        }
        return AttemptResult::accessDenied(detail, ResultCode::Code::SignInRequired);
    }
    case Failure::RemoteError:
        if (error.code == JsonRpcCode::InternalError)
            return AttemptResult::transient(detail);
        return AttemptResult::rejected(detail);
    default:
        break;
    }
    return isTransient(error) ? AttemptResult::transient(detail) : AttemptResult::rejected(detail);
}

AttemptResult McpTool::attempt(const QJsonObject &, const TrustedContext &,
                               const AttemptContext &) const
{
    // The executor starts an asynchronous tool's attempts with startAttempt().
    return AttemptResult::rejected(QStringLiteral("MCP server %1 tool %2: attempts are "
                                                  "asynchronous")
                                       .arg(m_serverName, m_info.name));
}

namespace {

// One attempt's end, said exactly once: by the request's answer, or, when everything that
// could still answer is gone (the session destroyed before the request was made, or with it),
// by its own end, as a transient failure. Held only by what can answer, never by the cancel.
class AttemptEnding final
{
public:
    explicit AttemptEnding(ToolOperation::AttemptDone done, QString gone)
        : m_done(std::move(done))
        , m_gone(std::move(gone))
    {
    }
    ~AttemptEnding()
    {
        if (m_done)
            m_done(AttemptResult::transient(m_gone));
    }
    AttemptEnding(const AttemptEnding &) = delete;
    AttemptEnding &operator=(const AttemptEnding &) = delete;

    void end(AttemptResult result)
    {
        if (const ToolOperation::AttemptDone done = std::exchange(m_done, {}))
            done(std::move(result));
    }

private:
    ToolOperation::AttemptDone m_done;
    QString m_gone;
};

// What the cancel and the request share: the request once it is made, and whether the
// attempt was cancelled before that.
struct AttemptLink
{
    QMutex mutex;
    QPointer<PendingRequest> request;
    bool cancelled = false;
};

} // namespace

std::function<void()> McpTool::startAttempt(const QJsonObject &arguments,
                                            const TrustedContext &context,
                                            const AttemptContext &attempt, AttemptDone done) const
{
    // An earlier run of this write may have reached the server (a timeout, a lost answer, a
    // process that stopped mid-call): the built-in writes ask their backend by key first, but
    // MCP has no such question. So it is not sent again, by a retry, a replay or a resume;
    // staff are told to check at the server, and writing again takes a new request.
    if (m_policy == ToolPolicy::Write && attempt.mayHaveRun) {
        done(outcomeUnknown(context.language,
                            QStringLiteral("MCP server %1 tool %2: not sent again, an earlier "
                                           "run may have reached the server")
                                .arg(m_serverName, m_info.name)));
        return {};
    }
    if (m_policy == ToolPolicy::Write)
        killPoint(KillPoints::WriteBeforeSend);
    QJsonObject params{{QStringLiteral("name"), m_info.name},
                       {QStringLiteral("arguments"), arguments}};
    if (!attempt.idempotencyKey.isEmpty())
        params.insert(QStringLiteral("_meta"),
                      QJsonObject{{kIdempotencyMeta, attempt.idempotencyKey}});
    const RequestOptions options{m_settings.idleTimeoutMs, m_settings.hardMaximumMs, true,
                                 attempt.traceId, attempt.deadline};
    const QString where = QStringLiteral("MCP server %1 tool %2").arg(m_serverName, m_info.name);
    auto ending = std::make_shared<AttemptEnding>(std::move(done),
                                                  where + QStringLiteral(": no session"));
    auto link = std::make_shared<AttemptLink>();
    // What the answer becomes: read on the check pool when it is a result (its summary and its
    // check against the outputSchema grow with it, and the session's thread may be the GUI
    // thread); said at once when it is an error.
    const auto answered = [ending, where, policy = m_policy, language = context.language,
                           outputSchema = m_outputSchema](const Reply &reply) {
        const auto read = [ending, where, policy, language, outputSchema, reply] {
            AttemptResult result = attemptResultFor(reply, policy, language, outputSchema.get());
            if (!result.logDetail.isEmpty())
                result.logDetail = where + QStringLiteral(": ") + result.logDetail;
            // The executor logs the detail of failed attempts; an answer refused here (its
            // shape) is a completed one, so its reason is logged here.
            if (result.failure == FailureKind::None && !result.logDetail.isEmpty())
                qCWarning(lcMcp).noquote() << result.logDetail;
            ending->end(std::move(result));
        };
        if (!reply.ok()) {
            read();
            return;
        }
        checkWorkPool()->start(read);
    };
    const bool posted = m_session->post([ending, link, params, options,
                                         answered](Session *session) {
        {
            QMutexLocker lock(&link->mutex);
            if (link->cancelled) {
                AttemptResult cancelled;
                cancelled.failure = FailureKind::Cancelled;
                ending->end(cancelled);
                return;
            }
        }
        PendingRequest *request = session->request(QStringLiteral("tools/call"), params, options);
        // Held by the connection: when the request goes without an answer (its session
        // destroyed), so does the ending, which then says so.
        QObject::connect(request, &PendingRequest::finished, request, answered);
        QMutexLocker lock(&link->mutex);
        link->request = request;
    });
    if (!posted)
        return {}; // `ending` goes with this call: "no session"
    std::shared_ptr<SessionHandle> handle = m_session;
    return [link, handle] {
        // The executor gave up (its timeout, the staff member, the turn's deadline): the
        // server is told (notifications/cancelled), and the request ends as cancelled.
        {
            QMutexLocker lock(&link->mutex);
            link->cancelled = true;
        }
        handle->post([link](Session *) {
            QPointer<PendingRequest> request;
            {
                QMutexLocker lock(&link->mutex);
                request = link->request;
            }
            if (request)
                request->cancel(QStringLiteral("the attempt was cancelled"));
        });
    };
}

} // namespace AgentConsole::Mcp
