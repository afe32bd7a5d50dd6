// soak_turns: many agent turns in one process, through the core agent-cli uses, under seeded
// faults everywhere, asserting that nothing grows and nothing is done twice (issue #9, "Soak").
//
// What runs: the real AgentRuntime (executor, breakers, SQLite ledger and turn journal in a
// temporary data directory) with the REST backends against a real support-sim child process,
// and an OpenAI-compatible provider whose server is the fake one on 127.0.0.1, scripted per
// turn by a seeded generator (soakplan.h): tool calls over every tool (lookups, malformed
// arguments, an unknown tool, floods past the per-message bound, createTicket writes, some
// asked again under the same request id, some with changed arguments), then the answer.
// Faults, all seeded:
//   - model: 429 and 503 with and without Retry-After / retry-after-ms, 500, malformed JSON,
//     malformed SSE, headers after the connect timeout, cut and stalled streams, and now and
//     then a stream so slow that the turn's deadline stops it;
//   - tools: the console's fault plan (docs/FAULTS.md) fails every tool at random;
//   - backend: support-sim's faults (docs/SUPPORT-SIM.md) change every 25 turns: random
//     statuses with and without Retry-After, latency past the attempt timeout, dropped
//     connections, hangs, tickets committed with their answer lost;
//   - the staff member declines some writes.
// Timeouts and backoff are short (a soak, not a latency test) but real timers.
//
// What is asserted (exit status 1 and a line naming each violation):
//   - resident memory grows less than 10 % from the end of the warm-up to the end (not under
//     AddressSanitizer, whose quarantine grows by design: said in the output instead). Both
//     readings are taken after malloc_trim(0), so that they count what the process holds,
//     not the free pages glibc keeps in the arenas of threads that came and went; the
//     reading before the trim and the allocator's bytes in use are printed beside it;
//   - threads and open file descriptors at the end, once the executor is idle (and, when
//     there are more, once the tool pool's idle threads had their 30 s to expire), are no
//     more than the most seen in the warm-up's second half;
//   - no duplicate tickets: no idempotency key owns two tickets, no planned write (its
//     description is unique) made two tickets, support-sim and the runtime's own duplicate
//     check say 0; every write reported OK has its ticket, and no write reported as not made
//     left one behind. (A replay of a turn the offline model took part in may be planned
//     with other step numbers, so other operationIds: counted apart, not asserted;)
//   - every turn ends (finished signal, Completed or Failed, an answer, every call finished
//     with a code) within the turn deadline plus the stated slack.
// One summary line on stdout (progress lines on stderr). `ctest -R soak_short` runs 400
// turns with a 200-turn warm-up (about 40 s); the full run, by hand (about 20 minutes):
//   soak_turns --turns 10000 --seed 1
// --verbose prints every turn's outcome and the console's log; --deadline-ms, --slack-ms and
// --warmup change the bounds.
#include "fakeopenaiserver.h"
#include "processmemory.h"
#include "scriptedmodel.h"
#include "soakplan.h"
#include "supportsimprocess.h"

#include "core/turn/agentloop.h"
#include "core/console/agentruntime.h"
#include "core/console/faultcontrol.h"
#include "core/console/runtimemonitor.h"
#include "core/console/runtimetestseam.h"
#include "core/resilience/toolexecutor.h"
#include "core/support/supportfailures.h"

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QJsonDocument>
#include <QMap>
#include <QRegularExpression>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QSet>
#include <QSqlDatabase>
#include <QSqlQuery>
#include <QTemporaryDir>
#include <QTimer>

#include <algorithm>
#include <malloc.h>
#include <cstdio>
#include <map>
#include <memory>

#if defined(__SANITIZE_ADDRESS__)
#define SOAK_UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SOAK_UNDER_ASAN 1
#endif
#endif
#ifndef SOAK_UNDER_ASAN
#define SOAK_UNDER_ASAN 0
#endif

using namespace AgentConsole;
using namespace AgentConsole::Soak;

namespace {

constexpr int kViolation = 1;
constexpr int kSetupError = 2;
constexpr double kMaxRssGrowth = 0.10;
constexpr int kSettleMs = 3000;
constexpr int kPoolExpiryMs = 30'000; // QThreadPool's default expiryTimeout

struct Settings
{
    int turns = 10'000;
    int firstTurn = 0; // --from: replays a stretch of a longer run
    quint64 seed = 1;
    int warmup = 0; // 0: a tenth of the turns, at least 50
    int deadlineMs = 3000;
    int slackMs = 500;
    int conversationTurns = 20;
    bool verbose = false;
};

qint64 entriesIn(const char *directory)
{
    return QDir(QString::fromLatin1(directory))
        .entryList(QDir::AllEntries | QDir::System | QDir::NoDotAndDotDot)
        .size();
}

// Codes that say a write was not made: a ticket behind a key that only ever got these is a
// false report.
const QList<ResultCode::Code> &notMade()
{
    static const QList<ResultCode::Code> codes{ResultCode::ToolUnavailable,
        ResultCode::ToolRejected, ResultCode::ToolAccessDenied, ResultCode::InvalidArgument,
        ResultCode::ConfirmationDeclined, SupportCode::OrderNotFound, ResultCode::ToolCallLimit,
        ResultCode::IdempotencyConflict};
    return codes;
}

// Who the threads are (their names, counted): says which part a leaked one belongs to.
QString threadCensus()
{
    QMap<QString, int> names;
    const QDir tasks(QStringLiteral("/proc/self/task"));
    for (const QString &task : tasks.entryList(QDir::Dirs | QDir::NoDotAndDotDot)) {
        QFile comm(tasks.filePath(task + QStringLiteral("/comm")));
        if (comm.open(QIODevice::ReadOnly))
            ++names[QString::fromUtf8(comm.readAll()).trimmed()];
    }
    QStringList census;
    for (auto it = names.cbegin(); it != names.cend(); ++it)
        census.append(QStringLiteral("%1 x%2").arg(it.key()).arg(it.value()));
    return census.join(QStringLiteral(", "));
}

// What the descriptors are (sockets, eventfds, pipes, files), counted.
QString fdCensus()
{
    static const QRegularExpression inode(QStringLiteral("\\[\\d+\\]$"));
    QMap<QString, int> kinds;
    const QDir fds(QStringLiteral("/proc/self/fd"));
    for (const QString &fd : fds.entryList(QDir::AllEntries | QDir::System | QDir::NoDotAndDotDot))
        ++kinds[QFile::symLinkTarget(fds.filePath(fd))
                    .remove(inode)
                    .remove(fds.absolutePath() + QLatin1Char('/'))];
    QStringList census;
    for (auto it = kinds.cbegin(); it != kinds.cend(); ++it)
        census.append(QStringLiteral("%1 x%2").arg(it.key()).arg(it.value()));
    return census.join(QStringLiteral(", "));
}

// What the allocator holds for the program (not freed), apart from what it keeps from the
// system: growth here is retention, growth of RSS alone is fragmentation. -1 unknown.
qint64 heapInUseKiB()
{
#if defined(__GLIBC__) && !SOAK_UNDER_ASAN
    const struct mallinfo2 info = mallinfo2();
    return qint64((info.uordblks + info.hblkhd) / 1024);
#else
    return -1;
#endif
}

// Resident memory at one point, in KiB: as found, then after the allocator gave back the free
// pages it was keeping (malloc_trim). The second is what the process holds; the first also
// counts glibc's free lists, which grow with fragmentation across the pool threads' arenas.
struct Resident
{
    qint64 found = -1;
    qint64 held = -1;
    qint64 heapInUse = -1;
};

Resident residentAfterTrim()
{
    Resident resident;
    resident.found = Testing::residentKiB();
#if defined(__GLIBC__) && !SOAK_UNDER_ASAN
    malloc_trim(0);
#endif
    resident.held = Testing::residentKiB();
    resident.heapInUse = heapInUseKiB();
    return resident;
}

bool g_verbose = false;
qint64 g_warnings = 0;

// The runtime logs every fault it meets; a soak meets thousands. Counted, shown with
// --verbose; criticals (a duplicate alert) always.
void soakMessages(QtMsgType type, const QMessageLogContext &, const QString &message)
{
    if (type == QtWarningMsg)
        ++g_warnings;
    if (g_verbose || type == QtCriticalMsg || type == QtFatalMsg)
        std::fprintf(stderr, "%s\n", qPrintable(message));
}

// What the console reported of the writes under one idempotency key (a repeated request
// reports on the same key again): flags, kept under a 64-bit hash of the key so that the
// soak's own bookkeeping costs a few bytes per write, not the key's text.
enum ReportedWrite : quint8 {
    EverOk = 1,
    EverMaybeMade = 2, // a code that does not say the write was not made
};

quint64 keyHash(const QString &key)
{
    return quint64(qHash(key, size_t(0x5eed5eed5eed5eedULL)));
}

class SoakRun final : public QObject
{
public:
    explicit SoakRun(const Settings &settings)
        : m_settings(settings)
        , m_plan(SoakPlan::Settings{settings.seed, settings.conversationTurns, 0.10, 25})
    {
        m_turn = settings.firstTurn;
        m_watchdog.setSingleShot(true);
        connect(&m_watchdog, &QTimer::timeout, this, &SoakRun::onTurnHung);
    }

    bool start(QString *error);

private:
    void onReady();
    void nextTurn();
    void ask();
    void onTurnFinished(const TurnResult &result);
    void onTurnHung();
    void checkDefinite(const TurnResult &result);
    void sampleProcess();
    void finish();
    void settle();
    void awaitIdleThreads();
    void afterDuplicateCheck();
    void readSimStats();
    void report(const QJsonObject &simStats);
    void violate(const QString &what);
    void abortRun(const QString &why);

    Settings m_settings;
    SoakPlan m_plan;
    QTemporaryDir m_directory;
    Testing::SupportSimProcess m_sim;
    Testing::FakeOpenAiServer m_server;
    std::unique_ptr<ScriptedModel> m_model;
    std::unique_ptr<AgentRuntime> m_runtime;
    QNetworkAccessManager m_network;
    QElapsedTimer m_runClock;

    int m_turn = 0; // the next turn's number (from --from)
    int m_ran = 0; // turns that ran
    TurnPlan m_current;
    bool m_haveCurrent = false;
    QElapsedTimer m_turnClock;
    QTimer m_watchdog;
    bool m_finishing = false;

    // Figures.
    std::map<QString, int> m_outcomes;
    qint64 m_longestTurnMs = 0;
    int m_longestTurn = -1;
    int m_overruns = 0;
    int m_atDeadline = 0; // turns the deadline stopped
    int m_indefinite = 0;
    int m_hung = 0;
    qint64 m_toolCalls = 0;
    qint64 m_toolRetries = 0;
    qint64 m_modelRetries = 0;
    qint64 m_fallbacks = 0;
    qint64 m_breakerOpens = 0;
    qint64 m_breakerRefusals = 0;
    qint64 m_idempotencyHits = 0;
    qint64 m_conflicts = 0;
    qint64 m_unknownWrites = 0;
    QHash<quint64, quint8> m_writes; // ReportedWrite flags by keyHash(operationId)
    // Planned writes (by keyHash(description)) of turns a fallback model took part in: the
    // offline model plans its own calls, so a replay of such a turn numbers the scripted
    // calls otherwise (the operationId has the step) and may make the same intent again
    // under another key. Not the console's doing: counted apart, not asserted.
    QSet<quint64> m_replannable;
    qint64 m_writeCalls = 0;
    int m_repeats = 0;

    Resident m_rssWarm;
    Resident m_rssEnd;
    QElapsedTimer m_settleClock;
    QElapsedTimer m_idleClock;
    qint64 m_threadsIdle = 0; // once the executor was idle, before idle threads expired
    qint64 m_fdsIdle = 0;
    qint64 m_idleWaitMs = 0;
    qint64 m_threadsWarm = 0;
    qint64 m_threadsEnd = 0;
    qint64 m_threadsPeak = 0; // after the warm-up
    qint64 m_fdsWarm = 0;
    qint64 m_fdsEnd = 0;
    qint64 m_fdsPeak = 0;
    QString m_threadsWarmCensus;
    QString m_threadsEndCensus;
    QString m_fdsWarmCensus;
    QString m_fdsEndCensus;

    QStringList m_violations;
};

bool SoakRun::start(QString *error)
{
    if (!m_directory.isValid()) {
        *error = QStringLiteral("no temporary directory");
        return false;
    }
    const QDir root(m_directory.path());
    root.mkpath(QStringLiteral("sim"));
    root.mkpath(QStringLiteral("console"));
    if (!m_sim.start({QStringLiteral("--data-dir"), root.filePath(QStringLiteral("sim"))}, error))
        return false;
    if (!m_server.listen()) {
        *error = QStringLiteral("the fake model server cannot listen on 127.0.0.1");
        return false;
    }
    QFile faults(root.filePath(QStringLiteral("tool-faults.json")));
    if (!faults.open(QIODevice::WriteOnly)
        || faults.write(QJsonDocument(m_plan.toolFaultPlan()).toJson()) < 0) {
        *error = QStringLiteral("cannot write the tool fault plan");
        return false;
    }
    faults.close();

    ModelOptions::Timing timing;
    timing.connectTimeoutMs = 700;
    timing.idleTimeoutMs = 700;
    timing.initialBackoffMs = 20;
    timing.retryAfterCapMs = 200;
    m_model = std::make_unique<ScriptedModel>(
        &m_server, &m_plan, ScriptedModel::Timing{timing.connectTimeoutMs});

    RuntimeOptions options;
    options.dataDirectory = root.filePath(QStringLiteral("console"));
    options.faultPlanFile = faults.fileName();
    RetryPolicy policy;
    policy.attemptTimeout = std::chrono::milliseconds(250);
    policy.maxRetries = 2;
    policy.initialDelay = std::chrono::milliseconds(10);
    policy.maxDelay = std::chrono::milliseconds(50);
    policy.retryAfterCap = std::chrono::milliseconds(50);
    options.toolPolicy = policy;
    options.model.provider = ModelOptions::Provider::OpenAiCompatible;
    options.model.baseUrl = m_server.baseUrl().toString();
    options.model.model = QStringLiteral("soak-model");
    options.model.apiKeyEnv = QStringLiteral("AGENT_CONSOLE_SOAK_KEY");
    options.model.timing = timing;
    qputenv("AGENT_CONSOLE_SOAK_KEY", "soak-key-not-secret");
    options.backend.kind = BackendOptions::Kind::Http;
    options.backend.url = m_sim.baseUrl().toString();

    m_runtime = std::make_unique<AgentRuntime>(options);
    connect(m_runtime.get(), &AgentRuntime::failed, this, [this](const QString &reason) {
        abortRun(QStringLiteral("the runtime did not start: ") + reason);
    });
    connect(m_runtime.get(), &AgentRuntime::ready, this, &SoakRun::onReady);
    m_runtime->start();
    return true;
}

void SoakRun::onReady()
{
    AgentLoop *loop = m_runtime->agentLoop();
    AgentLoop::TurnLimits limits = loop->turnLimits();
    limits.deadline = std::chrono::milliseconds(m_settings.deadlineMs);
    loop->setTurnLimits(limits);
    connect(loop, &AgentLoop::turnFinished, this, &SoakRun::onTurnFinished);
    connect(loop, &AgentLoop::confirmationRequested, this,
        [this, loop](const QString &, const ToolCallRecord &call) {
            const bool approve = !m_current.declineWrites;
            const QString operationId = call.operationId;
            // Answered from the event loop, as a staff member would, not from inside
            // the loop's own signal.
            QMetaObject::invokeMethod(
                this, [loop, operationId, approve] { loop->confirm(operationId, approve); },
                Qt::QueuedConnection);
        });
    m_runClock.start();
    nextTurn();
}

void SoakRun::nextTurn()
{
    if (m_ran == m_settings.turns) {
        finish();
        return;
    }
    if (m_turn % m_plan.settings().epochTurns != 0 && m_ran > 0) {
        ask();
        return;
    }
    // A new epoch: support-sim's faults change before its first turn.
    const int epoch = m_turn / m_plan.settings().epochTurns;
    QUrl url = m_sim.baseUrl();
    url.setPath(QStringLiteral("/sim/faults"));
    QNetworkRequest request(url);
    request.setHeader(QNetworkRequest::ContentTypeHeader, QByteArrayLiteral("application/json"));
    request.setTransferTimeout(5000);
    QNetworkReply *reply = m_network.put(
        request, QJsonDocument(m_plan.simFaults(epoch)).toJson(QJsonDocument::Compact));
    connect(reply, &QNetworkReply::finished, this, [this, reply, epoch] {
        reply->deleteLater();
        const int status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
        if (status != 200) {
            abortRun(QStringLiteral("support-sim refused the faults of epoch %1 (%2): %3")
                         .arg(epoch)
                         .arg(status)
                         .arg(QString::fromUtf8(reply->readAll())));
            return;
        }
        ask();
    });
}

void SoakRun::ask()
{
    const TurnPlan plan = m_plan.turn(m_turn, m_haveCurrent ? &m_current : nullptr);
    m_current = plan;
    m_haveCurrent = true;
    if (plan.repeat)
        ++m_repeats;
    AgentLoop *loop = m_runtime->agentLoop();
    if (m_plan.startsConversation(m_turn))
        loop->resetConversation();
    m_model->setTurn(plan);
    m_turnClock.start();
    // A turn that never ends is caught here, well after its deadline and slack.
    m_watchdog.start(m_settings.deadlineMs + m_settings.slackMs + 10'000);
    if (loop->ask(plan.question, plan.requestId).isEmpty()) {
        m_watchdog.stop();
        violate(QStringLiteral("turn %1 was not asked (the loop refused it)").arg(m_turn));
        ++m_turn;
        ++m_ran;
        QTimer::singleShot(0, this, &SoakRun::nextTurn);
    }
}

void SoakRun::onTurnFinished(const TurnResult &result)
{
    m_watchdog.stop();
    const qint64 ms = m_turnClock.elapsed();
    if (ms > m_longestTurnMs) {
        m_longestTurnMs = ms;
        m_longestTurn = m_turn;
    }
    m_atDeadline += ms >= m_settings.deadlineMs;
    if (ms > m_settings.deadlineMs + m_settings.slackMs) {
        if (m_overruns++ == 0)
            violate(QStringLiteral("turn %1 took %2 ms, past its deadline %3 ms + %4 ms slack")
                        .arg(m_turn)
                        .arg(ms)
                        .arg(m_settings.deadlineMs)
                        .arg(m_settings.slackMs));
    }
    checkDefinite(result);
    ++m_outcomes[turnOutcomeName(result.outcome())];
    m_toolCalls += result.toolCalls.size();
    m_toolRetries += result.toolRetries();
    m_modelRetries += result.modelRetries();
    m_fallbacks += result.fallbackHops;
    m_breakerOpens += result.breakerOpens;
    m_idempotencyHits += result.idempotencyHits;
    m_conflicts += result.idempotencyConflicts;
    m_unknownWrites += result.unknownExecutionStatus;
    for (const ToolCallRecord &call : result.toolCalls) {
        m_breakerRefusals += call.circuitCooldownLeftMs >= 0;
        if (call.name != QLatin1String("createTicket") || call.operationId.isEmpty())
            continue;
        ++m_writeCalls;
        if (result.fallbackHops > 0)
            m_replannable.insert(
                keyHash(call.arguments.value(QLatin1String("description")).toString()));
        quint8 &write = m_writes[keyHash(call.operationId)];
        if (call.result.success)
            write |= EverOk;
        if (call.result.success || !notMade().contains(call.result.code))
            write |= EverMaybeMade;
    }
    ++m_turn;
    ++m_ran;
    sampleProcess();
    if (m_settings.verbose) {
        QStringList codes;
        for (const ToolCallRecord &call : result.toolCalls)
            codes.append(call.name + QLatin1Char(':')
                + call.result.codeName());
        std::fprintf(stderr, "soak: turn %d %s %s in %lld ms [%s]\n", m_turn - 1,
            qPrintable(result.requestId), qPrintable(turnOutcomeName(result.outcome())), ms,
            qPrintable(codes.join(QLatin1Char(' '))));
    }
    if (m_ran % std::max(1, m_settings.turns / 20) == 0)
        std::fprintf(stderr,
            "soak: %d/%d turns, %lld s, rss %lld KiB (anonymous %lld, files %lld), heap in "
            "use %lld KiB, threads %lld, fds %lld\n",
            m_ran, m_settings.turns, m_runClock.elapsed() / 1000, Testing::residentKiB(),
            Testing::processStatusKiB("RssAnon:"), Testing::processStatusKiB("RssFile:"),
            heapInUseKiB(), entriesIn("/proc/self/task"), entriesIn("/proc/self/fd"));
    // The next turn from a fresh event-loop pass, not from inside the loop's signal.
    QTimer::singleShot(0, this, &SoakRun::nextTurn);
}

void SoakRun::checkDefinite(const TurnResult &result)
{
    QString problem;
    if (result.status != TurnStatus::Completed && result.status != TurnStatus::Failed)
        problem = QStringLiteral("status %1").arg(turnStatusName(result.status));
    else if (result.answer.trimmed().isEmpty())
        problem = QStringLiteral("no answer");
    else if (result.requestId != m_current.requestId)
        problem = QStringLiteral("finished request %1, asked %2")
                      .arg(result.requestId, m_current.requestId);
    for (const ToolCallRecord &call : result.toolCalls) {
        if (!problem.isEmpty())
            break;
        if (call.state != ToolCallRecord::State::Finished)
            problem = QStringLiteral("call %1 (%2) not finished").arg(call.index).arg(call.name);
        else if (!call.result.success && call.result.codeName().isEmpty())
            problem = QStringLiteral("call %1 (%2) failed without a code")
                          .arg(call.index)
                          .arg(call.name);
    }
    if (!problem.isEmpty() && m_indefinite++ == 0)
        violate(QStringLiteral("turn %1 ended without a definite outcome: %2")
                    .arg(m_turn)
                    .arg(problem));
}

void SoakRun::onTurnHung()
{
    ++m_hung;
    violate(QStringLiteral("turn %1 did not end %2 ms after it was asked; cancelling it")
                .arg(m_turn)
                .arg(m_turnClock.elapsed()));
    m_runtime->agentLoop()->cancel();
    // A cancel that does not end it either leaves nothing to soak.
    m_watchdog.disconnect(this);
    connect(&m_watchdog, &QTimer::timeout, this,
        [this] { abortRun(QStringLiteral("turn %1 did not end when cancelled").arg(m_turn)); });
    m_watchdog.start(10'000);
}

// Threads and descriptors: the most seen in the warm-up's second half against the most seen
// after it; resident memory at the end of the warm-up.
void SoakRun::sampleProcess()
{
    const int warmup = m_settings.warmup;
    const qint64 threads = entriesIn("/proc/self/task");
    const qint64 fds = entriesIn("/proc/self/fd");
    if (m_ran <= warmup) {
        if (m_ran > warmup / 2 && threads > m_threadsWarm) {
            m_threadsWarm = threads;
            m_threadsWarmCensus = threadCensus();
        }
        if (m_ran > warmup / 2 && fds > m_fdsWarm) {
            m_fdsWarm = fds;
            m_fdsWarmCensus = fdCensus();
        }
        if (m_ran == warmup)
            m_rssWarm = residentAfterTrim();
        return;
    }
    // A new high after the warm-up is said at once, with who the threads and descriptors are.
    if (threads > std::max(m_threadsPeak, m_threadsWarm) || fds > std::max(m_fdsPeak, m_fdsWarm))
        std::fprintf(stderr,
            "soak: after turn %d: %lld threads (%s; tool pool limit %d, abandoned "
            "bodies %d), %lld fds (%s)\n",
            m_turn - 1, threads, qPrintable(threadCensus()),
            RuntimeTestSeam::executor(*m_runtime)->threadLimit(),
            RuntimeTestSeam::executor(*m_runtime)->abandonedBodies(), fds, qPrintable(fdCensus()));
    m_threadsPeak = std::max(m_threadsPeak, threads);
    m_fdsPeak = std::max(m_fdsPeak, fds);
}

void SoakRun::finish()
{
    if (m_finishing)
        return;
    m_finishing = true;
    settle();
}

// The end is measured once nothing runs: no call in the executor and no abandoned tool body
// still holding a pool thread (bounded: a body that never returns is a finding too).
void SoakRun::settle()
{
    const ToolExecutor *executor = RuntimeTestSeam::executor(*m_runtime);
    const bool busy = executor->activeCalls() > 0 || executor->abandonedBodies() > 0;
    if (busy && m_settleClock.isValid() && m_settleClock.elapsed() > kSettleMs) {
        violate(QStringLiteral("the executor still had %1 call(s) and %2 abandoned body(ies) "
                               "%3 ms after the last turn")
                    .arg(executor->activeCalls())
                    .arg(executor->abandonedBodies())
                    .arg(kSettleMs));
    } else if (busy) {
        if (!m_settleClock.isValid())
            m_settleClock.start();
        QTimer::singleShot(20, this, &SoakRun::settle);
        return;
    }
    m_rssEnd = residentAfterTrim();
    m_threadsIdle = entriesIn("/proc/self/task");
    m_fdsIdle = entriesIn("/proc/self/fd");
    m_idleClock.start();
    awaitIdleThreads();
}

// The tool pool keeps the threads it grew to while abandoned bodies held threads (the
// executor raises its limit for each), each with its own network access manager thread and
// connection: Qt hands work to its waiting threads in turn, so none of them idles long enough
// to expire while turns keep coming. More threads or descriptors than in the warm-up are a
// leak only if they stay once nothing runs: they are given the pool's expiry (30 s) to go.
void SoakRun::awaitIdleThreads()
{
    m_threadsEnd = entriesIn("/proc/self/task");
    m_fdsEnd = entriesIn("/proc/self/fd");
    const bool above = m_threadsEnd > m_threadsWarm || m_fdsEnd > m_fdsWarm;
    if (above && m_idleClock.elapsed() < kPoolExpiryMs + 5000) {
        QTimer::singleShot(250, this, &SoakRun::awaitIdleThreads);
        return;
    }
    m_idleWaitMs = m_idleClock.elapsed();
    m_threadsEndCensus = threadCensus();
    m_fdsEndCensus = fdCensus();
    afterDuplicateCheck();
}

// The runtime checks the backend for duplicates after every turn that wrote; the last check
// is let finish so that its figure counts.
void SoakRun::afterDuplicateCheck()
{
    if (m_runtime->monitor()->isCheckingDuplicates()) {
        connect(
            m_runtime->monitor(), &RuntimeMonitor::duplicateBusinessObjectsChecked, this,
            [this] { afterDuplicateCheck(); }, Qt::SingleShotConnection);
        return;
    }
    readSimStats();
}

void SoakRun::readSimStats()
{
    QUrl url = m_sim.baseUrl();
    url.setPath(QStringLiteral("/sim/stats"));
    QNetworkRequest request(url);
    request.setTransferTimeout(5000);
    QNetworkReply *reply = m_network.get(request);
    connect(reply, &QNetworkReply::finished, this, [this, reply] {
        reply->deleteLater();
        const QJsonObject stats = QJsonDocument::fromJson(reply->readAll()).object();
        if (stats.isEmpty())
            violate(QStringLiteral("support-sim did not answer GET /sim/stats"));
        report(stats);
    });
}

void SoakRun::report(const QJsonObject &simStats)
{
    const int runtimeDuplicates = m_runtime->monitor()->duplicateBusinessObjects();
    m_runtime.reset(); // its threads and files go before the sim does
    if (!m_sim.stop())
        violate(QStringLiteral("support-sim did not exit normally"));

    // Tickets per idempotency key and per planned write, from the sim's own data.
    int tickets = 0;
    int duplicateKeys = 0;
    int duplicateIntents = 0;
    int replanned = 0; // one intent, two keys, because the model planned the replay otherwise
    QString firstDuplicate;
    QSet<quint64> keysWithTicket;
    int phantoms = 0;
    QString firstPhantom;
    int strangers = 0;
    {
        QSqlDatabase db
            = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), QStringLiteral("soak-sim"));
        db.setDatabaseName(
            QDir(m_directory.path()).filePath(QStringLiteral("sim/support-sim.sqlite")));
        if (!db.open()) {
            violate(QStringLiteral("cannot read support-sim's data"));
        } else {
            QSqlQuery query(db);
            query.exec(QStringLiteral("SELECT idempotency_key, COUNT(*) FROM tickets "
                                      "GROUP BY idempotency_key"));
            while (query.next()) {
                const QString key = query.value(0).toString();
                const quint64 hash = keyHash(key);
                keysWithTicket.insert(hash);
                tickets += query.value(1).toInt();
                duplicateKeys += query.value(1).toInt() > 1;
                const auto reported = m_writes.constFind(hash);
                if (reported == m_writes.cend())
                    ++strangers;
                // Every report under this key said "not made", yet the backend has its ticket.
                else if (!(*reported & EverMaybeMade) && phantoms++ == 0)
                    firstPhantom = key;
            }
            query.exec(QStringLiteral("SELECT description, group_concat(idempotency_key, ' ') "
                                      "FROM tickets GROUP BY description HAVING COUNT(*) > 1"));
            while (query.next()) {
                if (m_replannable.contains(keyHash(query.value(0).toString())))
                    ++replanned;
                else if (duplicateIntents++ == 0)
                    firstDuplicate
                        = QStringLiteral("'%1' under %2")
                              .arg(query.value(0).toString(), query.value(1).toString());
            }
        }
        db.close();
    }
    QSqlDatabase::removeDatabase(QStringLiteral("soak-sim"));

    int missing = 0;
    for (auto it = m_writes.cbegin(); it != m_writes.cend(); ++it)
        missing += (*it & EverOk) && !keysWithTicket.contains(it.key());
    const int simDuplicates = simStats.value(QLatin1String("duplicateTickets")).toInt(-1);
    if (duplicateKeys > 0)
        violate(
            QStringLiteral("%1 idempotency key(s) own more than one ticket").arg(duplicateKeys));
    if (duplicateIntents > 0)
        violate(QStringLiteral("%1 planned write(s) made more than one ticket (first: %2)")
                    .arg(duplicateIntents)
                    .arg(firstDuplicate));
    if (simDuplicates != 0)
        violate(QStringLiteral("support-sim counts %1 duplicate ticket(s)").arg(simDuplicates));
    if (runtimeDuplicates > 0)
        violate(QStringLiteral("the runtime's duplicate check found %1").arg(runtimeDuplicates));
    if (missing > 0)
        violate(QStringLiteral("%1 write(s) reported OK have no ticket").arg(missing));
    if (phantoms > 0)
        violate(QStringLiteral("%1 write(s) reported as not made left a ticket (first: %2)")
                    .arg(phantoms)
                    .arg(firstPhantom));
    if (strangers > 0)
        violate(QStringLiteral("%1 ticket(s) under keys the soak never wrote").arg(strangers));

    // Memory, threads, descriptors.
    const auto growthOf = [](qint64 from, qint64 to) {
        return from > 0 ? double(to - from) / double(from) : 0.0;
    };
    const double growth = growthOf(m_rssWarm.held, m_rssEnd.held);
    QString rssNote;
    if (SOAK_UNDER_ASAN) {
        rssNote = QStringLiteral(", AddressSanitizer: not asserted");
    } else if (m_rssWarm.held <= 0 || m_rssEnd.held <= 0) {
        violate(QStringLiteral("resident memory could not be read"));
    } else if (growth >= kMaxRssGrowth) {
        violate(QStringLiteral("resident memory grew %1 % after the warm-up (limit %2 %)")
                    .arg(growth * 100, 0, 'f', 1)
                    .arg(kMaxRssGrowth * 100, 0, 'f', 0));
    }
    if (m_threadsEnd > m_threadsWarm)
        violate(QStringLiteral("threads grew from %1 to %2 (at most %3 after the warm-up); "
                               "warm: %4; end: %5")
                    .arg(m_threadsWarm)
                    .arg(m_threadsEnd)
                    .arg(m_threadsPeak)
                    .arg(m_threadsWarmCensus, m_threadsEndCensus));
    if (m_fdsEnd > m_fdsWarm)
        violate(QStringLiteral("open file descriptors grew from %1 to %2 (at most %3 after "
                               "the warm-up); warm: %4; end: %5")
                    .arg(m_fdsWarm)
                    .arg(m_fdsEnd)
                    .arg(m_fdsPeak)
                    .arg(m_fdsWarmCensus, m_fdsEndCensus));
    if (m_ran != m_settings.turns)
        violate(QStringLiteral("%1 of %2 turns ran").arg(m_ran).arg(m_settings.turns));

    QStringList outcomes;
    for (const auto &[name, count] : m_outcomes)
        outcomes.append(QStringLiteral("%1 %2").arg(name).arg(count));
    qint64 modelFaults = 0;
    for (auto it = m_model->faults().cbegin(); it != m_model->faults().cend(); ++it) {
        if (it.key() != int(ModelFault::None))
            modelFaults += it.value();
    }
    const auto mib = [](qint64 kib) {
        return QString::number(kib / 1024.0, 'f', 1);
    };
    const auto percent = [](double fraction) {
        return QStringLiteral("%1%2 %")
            .arg(fraction >= 0 ? "+" : "")
            .arg(fraction * 100, 0, 'f', 1);
    };
    const QStringList parts{QStringLiteral("soak: %1 turns (seed %2, %3 s; %4)")
                                .arg(m_ran)
                                .arg(m_settings.seed)
                                .arg(m_runClock.elapsed() / 1000)
                                .arg(outcomes.join(QStringLiteral(", "))),
        QStringLiteral("model requests %1 (faults %2, retries %3, fallbacks %4)")
            .arg(m_model->requests())
            .arg(modelFaults)
            .arg(m_modelRetries)
            .arg(m_fallbacks),
        QStringLiteral("tool calls %1 (retries %2, breaker opens %3, refused by open "
                       "breakers %4)")
            .arg(m_toolCalls)
            .arg(m_toolRetries)
            .arg(m_breakerOpens)
            .arg(m_breakerRefusals),
        QStringLiteral("writes %1 (ledger hits %2, conflicts %3, unknown %4, repeated "
                       "requests %5)")
            .arg(m_writeCalls)
            .arg(m_idempotencyHits)
            .arg(m_conflicts)
            .arg(m_unknownWrites)
            .arg(m_repeats),
        QStringLiteral("rss warm %1 MiB end %2 MiB (%3; before malloc_trim %4 -> %5 MiB %6, "
                       "heap in use %7 -> %8 MiB%9)")
            .arg(mib(m_rssWarm.held), mib(m_rssEnd.held), percent(growth), mib(m_rssWarm.found),
                mib(m_rssEnd.found), percent(growthOf(m_rssWarm.found, m_rssEnd.found)),
                mib(m_rssWarm.heapInUse), mib(m_rssEnd.heapInUse), rssNote),
        QStringLiteral("threads %1→%2, fds %3→%4%5")
            .arg(m_threadsWarm)
            .arg(m_threadsEnd)
            .arg(m_fdsWarm)
            .arg(m_fdsEnd)
            .arg(m_threadsIdle == m_threadsEnd && m_fdsIdle == m_fdsEnd
                    ? QString()
                    : QStringLiteral(" (%1 threads, %2 fds before idle pool threads expired "
                                     "after %3 s)")
                          .arg(m_threadsIdle)
                          .arg(m_fdsIdle)
                          .arg(m_idleWaitMs / 1000)),
        QStringLiteral("tickets %1, duplicates %2 (replays planned otherwise %3)")
            .arg(tickets)
            .arg(duplicateKeys + duplicateIntents)
            .arg(replanned),
        QStringLiteral("longest turn %1 ms / deadline %2 ms (+%3 ms slack; %4 turns stopped "
                       "at it)")
            .arg(m_longestTurnMs)
            .arg(m_settings.deadlineMs)
            .arg(m_settings.slackMs)
            .arg(m_atDeadline)};
    const QString summary = parts.join(QStringLiteral(", "));
    std::fprintf(stdout, "%s\n", qPrintable(summary));
    std::fflush(stdout);
    for (const QString &violation : std::as_const(m_violations))
        std::fprintf(stderr, "soak: VIOLATION: %s\n", qPrintable(violation));
    QCoreApplication::exit(m_violations.isEmpty() ? 0 : kViolation);
}

void SoakRun::violate(const QString &what)
{
    m_violations.append(what);
    if (m_settings.verbose)
        std::fprintf(stderr, "soak: violation: %s\n", qPrintable(what));
}

void SoakRun::abortRun(const QString &why)
{
    std::fprintf(stderr, "soak: %s\n", qPrintable(why));
    QCoreApplication::exit(kSetupError);
}

} // namespace

int main(int argc, char *argv[])
{
    QCoreApplication app(argc, argv);
    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral(
        "Runs agent turns under seeded faults and asserts that memory, threads and file "
        "descriptors stay flat, no ticket is made twice and every turn ends within its "
        "deadline. Exit status: 0 clean, 1 a violation (each is named), 2 could not run."));
    parser.addHelpOption();
    const QCommandLineOption turns(QStringLiteral("turns"), QStringLiteral("Turns to run."),
        QStringLiteral("N"), QStringLiteral("10000"));
    const QCommandLineOption seed(QStringLiteral("seed"), QStringLiteral("The run's seed."),
        QStringLiteral("S"), QStringLiteral("1"));
    const QCommandLineOption warmup(QStringLiteral("warmup"),
        QStringLiteral("Turns before the baseline is taken "
                       "(default: a tenth, at least 50)."),
        QStringLiteral("N"));
    const QCommandLineOption deadline(QStringLiteral("deadline-ms"),
        QStringLiteral("Each turn's deadline."), QStringLiteral("MS"), QStringLiteral("3000"));
    const QCommandLineOption slack(QStringLiteral("slack-ms"),
        QStringLiteral("What a turn may take past its deadline to "
                       "stop and record itself."),
        QStringLiteral("MS"), QStringLiteral("500"));
    const QCommandLineOption from(QStringLiteral("from"),
        QStringLiteral("Start at turn N of the seed's sequence (each turn's plan and faults "
                       "depend on the seed and its number only), to replay a stretch."),
        QStringLiteral("N"), QStringLiteral("0"));
    const QCommandLineOption verbose(QStringLiteral("verbose"),
        QStringLiteral("Every turn's progress and the console's "
                       "log on stderr."));
    parser.addOptions({turns, seed, warmup, deadline, slack, from, verbose});
    parser.process(app);

    Settings settings;
    bool ok = true;
    const auto number = [&](const QCommandLineOption &option, qint64 low, qint64 high) {
        bool read = false;
        const qint64 value = parser.value(option).toLongLong(&read);
        if (!read || value < low || value > high) {
            std::fprintf(stderr, "soak_turns: --%s: expected a whole number from %lld to %lld\n",
                qPrintable(option.names().constFirst()), low, high);
            ok = false;
        }
        return value;
    };
    settings.turns = int(number(turns, 1, 10'000'000));
    settings.seed = quint64(number(seed, 0, 0xffffffffLL));
    settings.deadlineMs = int(number(deadline, 100, 600'000));
    settings.slackMs = int(number(slack, 0, 60'000));
    settings.firstTurn = int(number(from, 0, 100'000'000));
    settings.warmup = parser.isSet(warmup)
        ? int(number(warmup, 1, settings.turns))
        : std::min(settings.turns, std::max(50, settings.turns / 10));
    settings.verbose = parser.isSet(verbose);
    if (!ok)
        return kSetupError;
    g_verbose = settings.verbose;
    qInstallMessageHandler(soakMessages);

    SoakRun run(settings);
    QString error;
    if (!run.start(&error)) {
        std::fprintf(stderr, "soak: %s\n", qPrintable(error));
        return kSetupError;
    }
    return app.exec();
}
