#include "scenariorunner.h"

#include "crashturnchild.h"

#include "../telemetry/logging.h"
#include "../tools/toolregistry.h"
#include "../turn/agentloop.h"
#include "../console/agentruntime.h"
#include "../console/dependencystate.h"
#include "../console/faultcontrol.h"
#include "../console/runtimemonitor.h"
#include "../console/toolpolicies.h"
#include "../console/turnrecovery.h"

#include <QCoreApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QTimer>
#include <QUuid>

#include <utility>

namespace AgentConsole {

namespace {

// Why a scenario cannot start, and what differed in a run, in the window's language
// (docs/TRANSLATIONS.md); agent-cli installs no translator and keeps the English source.
// Tool names, result codes, outcomes and counters stay as a scenario file spells them.
struct RunnerWords
{
    Q_DECLARE_TR_FUNCTIONS(AgentConsole::ScenarioRunner)
};

QString callGot(const ToolCallRecord &call)
{
    return RunnerWords::tr("%1 after %2").arg(call.result.codeName()).arg(call.attemptsMade());
}

} // namespace

QStringList ScenarioVerdict::differenceLines() const
{
    QStringList lines;
    lines.reserve(differences.size());
    for (const ScenarioDifference &difference : differences)
        lines.append(difference.line);
    return lines;
}

QJsonObject ScenarioVerdict::toJson() const
{
    return {{QStringLiteral("scenario"), scenario},
            {QStringLiteral("matched"), matched},
            {QStringLiteral("differences"), QJsonArray::fromStringList(differenceLines())},
            {QStringLiteral("notes"), QJsonArray::fromStringList(notes)},
            {QStringLiteral("turns"), int(turns.size())},
            {QStringLiteral("elapsedMs"), elapsedMs},
            {QStringLiteral("restored"), restored}};
}

QList<ScenarioDifference> scenarioTurnDifferences(int turnNumber,
                                                  const ScenarioExpectation &expect,
                                                  const TurnResult &result,
                                                  const QStringList &writeTools)
{
    QList<ScenarioDifference> differences;
    const auto differs = [&](ScenarioDifference::Kind kind) -> ScenarioDifference & {
        ScenarioDifference difference;
        difference.kind = kind;
        difference.turn = turnNumber;
        differences.append(difference);
        return differences.last();
    };
    if (expect.checksCalls) {
        const qsizetype common = std::min(expect.calls.size(), result.toolCalls.size());
        for (qsizetype i = 0; i < common; ++i) {
            const ScenarioCallExpectation &want = expect.calls.at(i);
            const ToolCallRecord &got = result.toolCalls.at(i);
            const int attempts = got.attemptsMade();
            const bool attemptsOk = (want.minAttempts < 0 || attempts >= want.minAttempts)
                && (want.maxAttempts < 0 || attempts <= want.maxAttempts);
            if (want.tool == got.name && want.code == got.result.code && attemptsOk)
                continue;
            ScenarioDifference &difference = differs(ScenarioDifference::Kind::Call);
            difference.call = int(i + 1);
            difference.expected = want;
            difference.got = got;
            difference.line = RunnerWords::tr("turn %1, call %2 %3: expected %4, got %5%6")
                                  .arg(turnNumber)
                                  .arg(i + 1)
                                  .arg(want.tool, want.describe(),
                                       want.tool == got.name ? QString()
                                                             : got.name + QLatin1Char(' '),
                                       callGot(got));
        }
        if (expect.calls.size() != result.toolCalls.size()) {
            ScenarioDifference &difference = differs(ScenarioDifference::Kind::CallCount);
            difference.expectedValue = expect.calls.size();
            difference.gotValue = result.toolCalls.size();
            QStringList extra;
            for (qsizetype i = common; i < result.toolCalls.size(); ++i) {
                difference.extra.append(result.toolCalls.at(i));
                extra.append(result.toolCalls.at(i).name + QLatin1Char(' ')
                             + result.toolCalls.at(i).result.codeName());
            }
            const QString also = extra.isEmpty()
                ? QString()
                : RunnerWords::tr(" (also %1)").arg(extra.join(QStringLiteral(", ")));
            difference.line = RunnerWords::tr("turn %1: expected %2 tool call(s), got %3%4")
                                  .arg(turnNumber)
                                  .arg(expect.calls.size())
                                  .arg(result.toolCalls.size())
                                  .arg(also);
        }
    }
    if (result.outcome() != expect.outcome) {
        ScenarioDifference &difference = differs(ScenarioDifference::Kind::Outcome);
        difference.expectedOutcome = expect.outcome;
        difference.gotOutcome = result.outcome();
        difference.line = RunnerWords::tr("turn %1: expected the outcome %2, got %3")
                              .arg(QString::number(turnNumber), turnOutcomeName(expect.outcome),
                                   turnOutcomeName(result.outcome()));
    }
    if (expect.status && *expect.status != result.status) {
        ScenarioDifference &difference = differs(ScenarioDifference::Kind::Status);
        difference.expectedStatus = *expect.status;
        difference.gotStatus = result.status;
        difference.line = RunnerWords::tr("turn %1: expected the status %2, got %3")
                              .arg(QString::number(turnNumber), turnStatusName(*expect.status),
                                   turnStatusName(result.status));
    }
    if (result.totalMs > expect.maxMs) {
        ScenarioDifference &difference = differs(ScenarioDifference::Kind::Time);
        difference.expectedValue = expect.maxMs;
        difference.gotValue = result.totalMs;
        difference.line = RunnerWords::tr("turn %1: took %2 ms, expected at most %3 ms")
                              .arg(turnNumber)
                              .arg(result.totalMs)
                              .arg(expect.maxMs);
    }
    const QJsonObject counters = result.counters();
    for (auto it = expect.counters.cbegin(); it != expect.counters.cend(); ++it) {
        const int got = counters.value(it.key()).toInt();
        if (got == it.value())
            continue;
        ScenarioDifference &difference = differs(ScenarioDifference::Kind::Counter);
        difference.counter = it.key();
        difference.expectedValue = it.value();
        difference.gotValue = got;
        difference.line = RunnerWords::tr("turn %1: expected %2 = %3, got %4")
                              .arg(QString::number(turnNumber), it.key())
                              .arg(it.value())
                              .arg(got);
    }
    if (expect.tickets) {
        // A write call holds a ticket when its result carries one (made, found by the status
        // query, or recovered after a crash).
        int tickets = 0;
        for (const ToolCallRecord &call : result.toolCalls) {
            if (writeTools.contains(call.name) && call.result.success
                && call.result.data.toObject().contains(QStringLiteral("ticketId")))
                ++tickets;
        }
        if (tickets != *expect.tickets) {
            ScenarioDifference &difference = differs(ScenarioDifference::Kind::Tickets);
            difference.expectedValue = *expect.tickets;
            difference.gotValue = tickets;
            difference.line = RunnerWords::tr("turn %1: expected %2 ticket(s), got %3")
                                  .arg(turnNumber)
                                  .arg(*expect.tickets)
                                  .arg(tickets);
        }
    }
    return differences;
}

class ScenarioRunner::Private
{
public:
    Private(ScenarioRunner *q, AgentRuntime *runtime)
        : q(q)
        , runtime(runtime)
        , faults(runtime->faults())
        , policies(runtime->policies())
        , recovery(runtime->recovery())
        , monitor(runtime->monitor())
    {
    }

    AgentLoop *loop() const { return runtime->agentLoop(); }
    const ScenarioTurn &turn() const { return scenario.turns.at(turnIndex); }
    void nextTurn();
    void askTurn();
    void onTurnFinished(const TurnResult &result);
    void startCrashTurn();
    void onChildGone();
    void resumeCrashedTurn(const QString &rescanError);
    void finishTurnWithout(const QString &why);
    void finish();
    void finishNow();
    void restore();
    QString defaultCliPath() const;

    ScenarioRunner *q;
    // Its loop, whether it is ready, its options; and the services a run sets and puts back.
    AgentRuntime *runtime;
    FaultControl *faults;
    ToolPolicies *policies;
    TurnRecovery *recovery; // the crash turn's lent data directory, the turns it left
    RuntimeMonitor *monitor; // breakers and the model chain as a run found them; duplicates
    QString cliPath;
    int childTimeoutMs = 30'000;

    Scenario scenario;
    bool running = false;
    bool cancelled = false;
    int turnIndex = 0;
    QString currentRequestId; // the turn being asked or resumed; empty between turns
    Language language = Language::English; // the questions' (setLanguage)
    Language runLanguage = Language::English; // the running scenario's, taken at start()
    QList<TurnResult> results;
    QList<ScenarioDifference> differences;
    QStringList notes;
    QElapsedTimer clock;
    bool finishing = false; // waiting for the backend's duplicate check
    QMetaObject::Connection duplicatesWait;
    int duplicatesBefore = -1; // the backend's duplicate figure when the run started
    QList<QMetaObject::Connection> connections;
    std::unique_ptr<QTimer> cancelTimer;

    // What the runtime had before the scenario, put back afterwards.
    FaultPlan savedFaults;
    std::uint64_t savedJitterSeed = 0;
    QMap<QString, RetryPolicy> savedPolicies; // only the tools with a policy of their own
    SessionContext savedSession;
    // The staff member's conversation, carried on after the run as if none had happened.
    QList<ChatMessage> savedConversation;
    // The breakers and the model chain as the run found them: what the scenario's faults
    // tripped is undone.
    DependencyState savedDependencies;

    // A crash turn's child agent-cli, while it runs.
    std::unique_ptr<CrashTurnChild> child;
    QString crashConversation;
    QString crashRequestId;
    QList<QPair<QString, QString>> leftInterrupted; // (conversation, request) not resumed
};

QString ScenarioRunner::Private::defaultCliPath() const
{
    const QDir here(QCoreApplication::applicationDirPath());
    const QString name = QStringLiteral("agent-cli");
    if (QFileInfo(QCoreApplication::applicationFilePath()).baseName() == name)
        return QCoreApplication::applicationFilePath();
    // Installed side by side, or the build tree's app/agent-console/ beside app/agent-cli/.
    for (const QString &candidate :
         {here.filePath(name), here.filePath(QStringLiteral("../agent-cli/agent-cli"))}) {
        if (QFileInfo(candidate).isExecutable())
            return QDir::cleanPath(candidate);
    }
    return here.filePath(name);
}

void ScenarioRunner::Private::nextTurn()
{
    if (!running)
        return;
    if (cancelled || turnIndex >= scenario.turns.size())
        return finish();
    const ScenarioTurn &t = turn();
    SessionContext session = savedSession;
    session.conversationId = loop()->session().conversationId;
    session.scenario = scenario.title.isEmpty() ? scenario.name : scenario.title;
    if (t.withoutStaff) {
        session.userId.clear();
        session.tenantId.clear();
    }
    loop()->setSession(session);
    Q_EMIT q->turnStarted(turnIndex, t.questionIn(runLanguage));
    if (!t.crashAt.isEmpty())
        return startCrashTurn();
    askTurn();
}

void ScenarioRunner::Private::askTurn()
{
    const ScenarioTurn &t = turn();
    currentRequestId = t.requestId;
    const QString id = loop()->ask(t.questionIn(runLanguage), t.requestId);
    if (id.isEmpty())
        return finishTurnWithout(RunnerWords::tr("the agent loop did not take the question"));
    currentRequestId = id;
    if (t.cancelAfterMs >= 0) {
        cancelTimer = std::make_unique<QTimer>();
        cancelTimer->setSingleShot(true);
        cancelTimer->setTimerType(Qt::PreciseTimer);
        QObject::connect(cancelTimer.get(), &QTimer::timeout, q, [this] {
            if (!currentRequestId.isEmpty())
                loop()->cancel();
        });
        cancelTimer->start(int(t.cancelAfterMs));
    }
}

void ScenarioRunner::Private::finishTurnWithout(const QString &why)
{
    ScenarioDifference difference;
    difference.kind = ScenarioDifference::Kind::TurnNotRun;
    difference.turn = turnIndex + 1;
    difference.reason = why;
    difference.line = RunnerWords::tr("turn %1: %2").arg(turnIndex + 1).arg(why);
    differences.append(difference);
    currentRequestId.clear();
    ++turnIndex;
    QMetaObject::invokeMethod(
        q, [this] { nextTurn(); }, Qt::QueuedConnection);
}

void ScenarioRunner::Private::onTurnFinished(const TurnResult &result)
{
    if (!running || currentRequestId.isEmpty() || result.requestId != currentRequestId)
        return; // not this run's turn (one the window resumed, say)
    cancelTimer.reset();
    currentRequestId.clear();
    results.append(result);
    differences.append(scenarioTurnDifferences(turnIndex + 1, turn().expect, result,
                                               faults->knownTools().writes));
    Q_EMIT q->turnFinished(turnIndex, result);
    ++turnIndex;
    // From a fresh event-loop pass, not from inside the loop's signal.
    QMetaObject::invokeMethod(
        q, [this] { nextTurn(); }, Qt::QueuedConnection);
}

// The turn runs in a child agent-cli on this data directory, with the same staff member,
// conversation, request id, backend and ledger, and the scenario's faults; the child stops at
// the kill point and is killed there (SIGKILL), as tst_crashinjection does. Then this runtime
// takes its data directory back, reads the interrupted turn and resumes it.
void ScenarioRunner::Private::startCrashTurn()
{
    const ScenarioTurn &t = turn();
    QString error;
    if (!recovery->lendDataDirectory(&error))
        return finishTurnWithout(RunnerWords::tr("cannot run the crash: %1").arg(error));
    crashConversation = loop()->session().conversationId;
    crashRequestId = !t.requestId.isEmpty()
        ? t.requestId
        : QStringLiteral("crash-%1")
              .arg(QUuid::createUuid().toString(QUuid::WithoutBraces).left(8));
    const RuntimeOptions &options = runtime->options();
    CrashTurnChild::Launch launch;
    launch.cliPath = cliPath;
    launch.arguments = QStringList{
        QStringLiteral("--data-dir"), options.dataDirectory, QStringLiteral("--user"),
        savedSession.userId, QStringLiteral("--tenant"), savedSession.tenantId,
        QStringLiteral("--conversation"), crashConversation,
        // The scenario says what is confirmed: a ticket an earlier run made is no reason to
        // keep it from being made (the run must give its fresh-start verdict).
        QStringLiteral("--request-id"), crashRequestId, QStringLiteral("--yes"),
        QStringLiteral("--allow-duplicate"), QStringLiteral("--json")};
    if (!options.ledgerSpec.isEmpty())
        launch.arguments << QStringLiteral("--ledger") << options.ledgerSpec;
    if (options.backend.kind == BackendOptions::Kind::Http)
        launch.arguments << QStringLiteral("--backend")
                         << OptionWords::backend(options.backend.kind)
                         << QStringLiteral("--backend-url") << options.backend.url;
    launch.faults = scenario.faultsJson;
    launch.question = t.questionIn(runLanguage);
    launch.killAt = t.crashAt;
    launch.timeoutMs = childTimeoutMs;
    child = std::make_unique<CrashTurnChild>();
    QObject::connect(child.get(), &CrashTurnChild::gone, q, [this] { onChildGone(); });
    qCInfo(lcAgent).noquote() << "scenario" << scenario.name << "crash turn at" << t.crashAt;
    if (!child->start(launch, &error)) {
        child.reset();
        recovery->rescanInterruptedTurns();
        return finishTurnWithout(error);
    }
}

void ScenarioRunner::Private::onChildGone()
{
    if (!child)
        return;
    if (child->reachedKillPoint())
        notes.append(QStringLiteral("turn %1: agent-cli (pid %2) reached the kill point %3 "
                                    "and was killed (SIGKILL); %4")
                         .arg(turnIndex + 1)
                         .arg(child->pid())
                         .arg(turn().crashAt,
                              turn().resume ? QStringLiteral("the turn was resumed here")
                                            : QStringLiteral("the turn was left interrupted")));
    const QString problem = child->problem();
    // Not from inside the child's own signal.
    child.release()->deleteLater();
    // The lock is taken back in every case; the turn is resumed only after a kill.
    QObject::connect(
        recovery, &TurnRecovery::interruptedTurnsRescanned, q,
        [this, problem](const QString &error) {
            if (!problem.isEmpty())
                return finishTurnWithout(problem);
            resumeCrashedTurn(error);
        },
        Qt::SingleShotConnection);
    recovery->rescanInterruptedTurns();
}

void ScenarioRunner::Private::resumeCrashedTurn(const QString &rescanError)
{
    if (!rescanError.isEmpty())
        return finishTurnWithout(rescanError);
    if (cancelled)
        return finishTurnWithout(RunnerWords::tr("not resumed: the run was cancelled"));
    if (!turn().resume) {
        // Left interrupted on purpose (a later turn asks under its request id afresh); given
        // up when the run ends if nothing carried it on by then.
        leftInterrupted.append({crashConversation, crashRequestId});
        currentRequestId.clear();
        ++turnIndex;
        QMetaObject::invokeMethod(
            q, [this] { nextTurn(); }, Qt::QueuedConnection);
        return;
    }
    SessionContext session = savedSession;
    session.conversationId = crashConversation;
    session.scenario = scenario.title.isEmpty() ? scenario.name : scenario.title;
    loop()->setSession(session);
    for (const TurnCheckpoint &checkpoint : recovery->interruptedTurns()) {
        if (checkpoint.conversationId != crashConversation
            || checkpoint.result.requestId != crashRequestId)
            continue;
        currentRequestId = crashRequestId;
        if (loop()->resume(checkpoint))
            return;
        currentRequestId.clear();
        return finishTurnWithout(RunnerWords::tr("the interrupted turn could not be resumed"));
    }
    finishTurnWithout(
        RunnerWords::tr("no interrupted turn to resume after the kill at %1").arg(turn().crashAt));
}

void ScenarioRunner::Private::restore()
{
    // Crash turns left interrupted are the scenario's, not the staff member's: not offered.
    for (const auto &[conversationId, requestId] : std::as_const(leftInterrupted)) {
        for (const TurnCheckpoint &checkpoint : recovery->interruptedTurns()) {
            if (checkpoint.conversationId == conversationId
                && checkpoint.result.requestId == requestId)
                recovery->dismissInterruptedTurn(conversationId, requestId);
        }
    }
    leftInterrupted.clear();
    faults->setPlan(savedFaults);
    policies->setJitterSeed(savedJitterSeed);
    policies->resetPolicies();
    for (auto it = savedPolicies.cbegin(); it != savedPolicies.cend(); ++it)
        policies->setPolicy(it.key(), it.value(), nullptr);
    monitor->restoreDependencyState(savedDependencies);
    // The scenario's turns stay in their own conversation; the staff member's goes on where it
    // was, its messages and all, so that the model keeps its context.
    loop()->setSession(savedSession);
    if (!loop()->continueConversation(savedSession.conversationId, savedConversation))
        loop()->resetConversation();
}

void ScenarioRunner::Private::finish()
{
    if (!running || finishing)
        return;
    // A turn that wrote starts the backend's duplicate check (RuntimeMonitor); its figure is the
    // backend's own word that no idempotency key owns two tickets, so it is waited for
    // (bounded by the backend's transfer timeout).
    if (monitor->isCheckingDuplicates() && !cancelled) {
        finishing = true;
        duplicatesWait = QObject::connect(
            monitor, &RuntimeMonitor::duplicateBusinessObjectsChecked, q, [this] {
                if (monitor->isCheckingDuplicates())
                    return; // another check follows: its figure is the one to read
                finishing = false;
                finishNow();
            });
        return;
    }
    finishNow();
}

void ScenarioRunner::Private::finishNow()
{
    if (!running)
        return;
    QObject::disconnect(duplicatesWait);
    finishing = false;
    const int duplicates = monitor->duplicateBusinessObjects();
    if (duplicates > std::max(0, duplicatesBefore)) {
        ScenarioDifference difference;
        difference.kind = ScenarioDifference::Kind::Duplicates;
        difference.expectedValue = std::max(0, duplicatesBefore);
        difference.gotValue = duplicates;
        difference.line = RunnerWords::tr("the backend holds %1 idempotency key(s) with more "
                                          "than one ticket (duplicate_business_object_count)")
                              .arg(duplicates);
        differences.append(difference);
    }
    for (const QMetaObject::Connection &connection : std::as_const(connections))
        QObject::disconnect(connection);
    connections.clear();
    cancelTimer.reset();
    restore();
    running = false;
    ScenarioVerdict verdict;
    verdict.scenario = scenario.name;
    if (cancelled) {
        ScenarioDifference difference;
        difference.kind = ScenarioDifference::Kind::Cancelled;
        difference.line = RunnerWords::tr("the run was cancelled");
        differences.append(difference);
    }
    verdict.differences = std::exchange(differences, {});
    verdict.turns = std::exchange(results, {});
    verdict.notes = std::exchange(notes, {});
    verdict.matched = verdict.differences.isEmpty();
    verdict.elapsedMs = clock.elapsed();
    // What restore() put back (the jitter seed too, which nobody reads as a setting).
    verdict.restored = QStringLiteral("the faults, retry policies, circuit breakers and model "
                                      "chain as they were before the scenario were restored, "
                                      "and the staff member's conversation carried on");
    qCInfo(lcAgent).noquote() << "scenario" << scenario.name
                              << (verdict.matched ? "matched" : "did not match")
                              << verdict.differenceLines().join(QStringLiteral("; "));
    Q_EMIT q->finished(verdict);
}

ScenarioRunner::ScenarioRunner(AgentRuntime *runtime, QObject *parent)
    : QObject(parent)
    , d(std::make_unique<Private>(this, runtime))
{
    d->cliPath = d->defaultCliPath();
}

ScenarioRunner::~ScenarioRunner()
{
    d->child.reset(); // killed and reaped, without its gone() (~CrashTurnChild)
    if (d->running) {
        for (const QMetaObject::Connection &connection : std::as_const(d->connections))
            QObject::disconnect(connection);
        if (d->runtime->agentLoop())
            d->restore();
    }
    // A child killed above leaves the data directory lent: the runtime takes it back.
    if (d->recovery->isDataDirectoryLent())
        d->recovery->rescanInterruptedTurns();
}

void ScenarioRunner::setCliPath(const QString &path)
{
    d->cliPath = path;
}

QString ScenarioRunner::cliPath() const
{
    return d->cliPath;
}

void ScenarioRunner::setLanguage(Language language)
{
    d->language = language;
}

Language ScenarioRunner::language() const
{
    return d->language;
}

void ScenarioRunner::setChildTimeoutMs(int ms)
{
    d->childTimeoutMs = ms;
}

QString ScenarioRunner::setAsideConversation() const
{
    return d->running ? d->savedSession.conversationId : QString();
}

bool ScenarioRunner::isRunning() const
{
    return d->running;
}

bool ScenarioRunner::start(const Scenario &scenario, QString *error)
{
    const auto fail = [error](const QString &reason) {
        if (error)
            *error = reason;
        return false;
    };
    if (d->running)
        return fail(RunnerWords::tr("a scenario is running"));
    if (!d->runtime->isReady() || !d->loop())
        return fail(RunnerWords::tr("the console is not ready yet"));
    if (d->loop()->isBusy())
        return fail(RunnerWords::tr("wait until the running question is answered"));
    if (d->recovery->isDataDirectoryLent())
        return fail(RunnerWords::tr("the data directory is lent to another process"));
    if (scenario.turns.isEmpty())
        return fail(RunnerWords::tr("the scenario has no turns"));
    if (scenario.hasCrashTurn() && !QFileInfo(d->cliPath).isExecutable())
        return fail(RunnerWords::tr("a crash turn needs agent-cli, not found at %1")
                        .arg(QDir::toNativeSeparators(d->cliPath)));

    d->savedFaults = d->faults->plan();
    d->savedPolicies.clear();
    for (const QString &tool : d->policies->toolsWithCustomPolicy())
        d->savedPolicies.insert(tool, d->policies->policy(tool));
    d->savedSession = d->loop()->session();
    d->savedConversation = d->loop()->conversationMessages();
    d->savedDependencies = d->monitor->dependencyState();
    // A run starts from new breakers and a whole model chain, as on a fresh start, so that
    // what tripped them before (a staff member's lookups, an earlier run) cannot change its
    // verdict; restore() puts them back as they were.
    d->monitor->restoreDependencyState({});
    d->savedJitterSeed = d->policies->jitterSeed();

    // The scenario's faults and policies, and nothing else: it starts from a known state,
    // the tools it sets no policy for waiting the same jittered backoffs on every console.
    d->policies->setJitterSeed(Scenario::jitterSeed);
    d->policies->resetPolicies();
    for (auto it = scenario.policies.cbegin(); it != scenario.policies.cend(); ++it) {
        QString why;
        if (!d->policies->setPolicy(it.key(), it.value(), &why)) {
            d->running = true; // so that restore() below is the one way back
            d->restore();
            d->running = false;
            return fail(RunnerWords::tr("policies.%1: %2").arg(it.key(), why));
        }
    }
    d->faults->setPlan(scenario.faults);

    d->scenario = scenario;
    d->runLanguage = d->language;
    d->running = true;
    d->cancelled = false;
    d->turnIndex = 0;
    d->results.clear();
    d->differences.clear();
    d->notes.clear();
    d->finishing = false;
    d->duplicatesBefore = d->monitor->duplicateBusinessObjects();
    d->clock.start();
    d->loop()->resetConversation();
    AgentLoop *loop = d->loop();
    d->connections.append(
        connect(loop, &AgentLoop::turnFinished, this,
                [this](const TurnResult &result) { d->onTurnFinished(result); }));
    d->connections.append(connect(loop, &AgentLoop::confirmationRequested, this,
                                  [this](const QString &requestId, const ToolCallRecord &call) {
                                      if (!d->running || requestId != d->currentRequestId)
                                          return;
                                      const bool approve = d->turn().approve;
                                      const QString operationId = call.operationId;
                                      // Answered from the event loop, as a staff member's click
                                      // would be.
                                      QMetaObject::invokeMethod(
                                          this,
                                          [this, operationId, approve] {
                                              if (d->running)
                                                  d->loop()->confirm(operationId, approve);
                                          },
                                          Qt::QueuedConnection);
                                  }));
    qCInfo(lcAgent).noquote() << "scenario" << scenario.name << "started:" << scenario.turns.size()
                              << "turn(s)";
    QMetaObject::invokeMethod(
        this, [this] { d->nextTurn(); }, Qt::QueuedConnection);
    return true;
}

void ScenarioRunner::cancel()
{
    if (!d->running || d->cancelled)
        return;
    d->cancelled = true;
    if (d->finishing) // every turn ran: only the duplicate check is awaited
        return d->finishNow();
    if (d->child) {
        d->child->kill(); // onChildGone() takes the data directory back, then finishes
        return;
    }
    if (!d->currentRequestId.isEmpty() && d->loop()->isBusy()) {
        d->loop()->cancel(); // its turnFinished comes back through onTurnFinished()
        return;
    }
    QMetaObject::invokeMethod(
        this, [this] { d->nextTurn(); }, Qt::QueuedConnection);
}

} // namespace AgentConsole
