#include "scenario.h"

#include "../faults/boundedfile.h"
#include "../support/createtickettool.h"
#include "../support/supportbackend.h"
#include "../support/supportfailures.h" // a scenario's codes are also the support domain's
#include "../support/supporttools.h"
#include "../support/ticketbackend.h"
#include "../telemetry/counters.h"
#include "../telemetry/killpoint.h"
#include "../tools/toolregistry.h"
#include "../turn/agentloop.h"

#include <QCoreApplication>
#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QRegularExpression>

#include <algorithm>
#include <cmath>

namespace AgentConsole {

namespace {

// Why a scenario file is refused, and what a call was expected to do, worded in the window's
// language (docs/TRANSLATIONS.md); agent-cli installs no translator and keeps the English
// source. Key paths, names and codes stay as they are written in the file.
struct ScenarioWords
{
    Q_DECLARE_TR_FUNCTIONS(AgentConsole::Scenario)
};

} // namespace

QString ScenarioCallExpectation::describe() const
{
    const QString &wire = ResultCode::wireName(code);
    if (minAttempts < 0 && maxAttempts < 0)
        return wire;
    if (minAttempts == maxAttempts) {
        return minAttempts == 1
            ? ScenarioWords::tr("%1 after 1 attempt").arg(wire)
            : ScenarioWords::tr("%1 after %2 attempts").arg(wire).arg(minAttempts);
    }
    if (maxAttempts < 0)
        return ScenarioWords::tr("%1 after at least %2 attempts").arg(wire).arg(minAttempts);
    if (minAttempts < 0)
        return ScenarioWords::tr("%1 after at most %2 attempts").arg(wire).arg(maxAttempts);
    return ScenarioWords::tr("%1 after %2 to %3 attempts")
        .arg(wire)
        .arg(minAttempts)
        .arg(maxAttempts);
}

QString ScenarioTurn::questionIn(Language language) const
{
    return language == Language::Chinese && !questionZh.isEmpty() ? questionZh : question;
}

bool Scenario::isBilingual() const
{
    return std::all_of(turns.cbegin(), turns.cend(),
                       [](const ScenarioTurn &turn) { return !turn.questionZh.isEmpty(); });
}

bool Scenario::hasCrashTurn() const
{
    return std::any_of(turns.cbegin(), turns.cend(),
                       [](const ScenarioTurn &turn) { return !turn.crashAt.isEmpty(); });
}

namespace {

// The kill points a crash turn may name (core/telemetry/killpoint.h and the journal's
// "checkpoint-<STAGE>" points), each with an optional "#n".
const QStringList &killPointNames()
{
    static const QStringList names{
        QLatin1String(KillPoints::WriteClaimed),
        QLatin1String(KillPoints::WriteBeforeSend),
        QLatin1String(KillPoints::WriteCommitted),
        QLatin1String(KillPoints::WriteAnswered),
        QLatin1String(KillPoints::WriteRecorded),
        QStringLiteral("checkpoint-RECEIVED"),
        QStringLiteral("checkpoint-PLANNED"),
        QStringLiteral("checkpoint-TOOL_RESULT"),
        QStringLiteral("checkpoint-TOOLS_EXECUTED"),
        QStringLiteral("checkpoint-ANSWER_GENERATING"),
    };
    return names;
}

// Reads one JSON object strictly: every key must be taken, and each is checked for its type
// and range. The first problem is kept as "<path>: <what>".
class StrictObject
{
public:
    StrictObject(const QJsonObject &object, QString path, QString *problem)
        : m_object(object)
        , m_path(std::move(path))
        , m_problem(problem)
    {
    }

    bool failed() const { return !m_problem->isEmpty(); }
    QString pathOf(const QString &key) const
    {
        return m_path.isEmpty() ? key : m_path + QLatin1Char('.') + key;
    }
    bool fail(const QString &key, const QString &what)
    {
        if (m_problem->isEmpty())
            *m_problem = ScenarioWords::tr("%1: %2").arg(pathOf(key), what);
        return false;
    }
    bool has(const QString &key)
    {
        m_taken.append(key);
        return m_object.contains(key);
    }
    QJsonValue value(const QString &key) const { return m_object.value(key); }

    // A string of 1..maxLength characters (after trimming), or the key absent when optional.
    bool string(const QString &key, QString *out, int maxLength, bool required)
    {
        if (!has(key))
            return required ? fail(key, ScenarioWords::tr("missing")) : true;
        const QJsonValue v = value(key);
        if (!v.isString())
            return fail(key, ScenarioWords::tr("expected a string"));
        const QString text = v.toString().trimmed();
        if (text.isEmpty() || text.size() > maxLength)
            return fail(key, ScenarioWords::tr("expected 1 to %1 characters").arg(maxLength));
        *out = text;
        return true;
    }
    // A whole number in [low, high].
    bool integer(const QString &key, qint64 *out, qint64 low, qint64 high, bool required)
    {
        if (!has(key))
            return required ? fail(key, ScenarioWords::tr("missing")) : true;
        const QJsonValue v = value(key);
        const double d = v.toDouble();
        if (!v.isDouble() || std::floor(d) != d || d < double(low) || d > double(high))
            return fail(
                key,
                ScenarioWords::tr("expected a whole number from %1 to %2").arg(low).arg(high));
        *out = qint64(d);
        return true;
    }
    bool number(const QString &key, double *out, double low, double high)
    {
        if (!has(key))
            return true;
        const QJsonValue v = value(key);
        const double d = v.toDouble();
        if (!v.isDouble() || !(d >= low && d <= high))
            return fail(key,
                        ScenarioWords::tr("expected a number from %1 to %2").arg(low).arg(high));
        *out = d;
        return true;
    }
    bool boolean(const QString &key, bool *out)
    {
        if (!has(key))
            return true;
        if (!value(key).isBool())
            return fail(key, ScenarioWords::tr("expected true or false"));
        *out = value(key).toBool();
        return true;
    }
    bool object(const QString &key, QJsonObject *out, bool required)
    {
        if (!has(key))
            return required ? fail(key, ScenarioWords::tr("missing")) : true;
        if (!value(key).isObject())
            return fail(key, ScenarioWords::tr("expected an object"));
        *out = value(key).toObject();
        return true;
    }
    bool array(const QString &key, QJsonArray *out, int maxSize, bool required)
    {
        if (!has(key))
            return required ? fail(key, ScenarioWords::tr("missing")) : true;
        if (!value(key).isArray())
            return fail(key, ScenarioWords::tr("expected an array"));
        *out = value(key).toArray();
        if (out->size() > maxSize)
            return fail(key, ScenarioWords::tr("at most %1 entries").arg(maxSize));
        return true;
    }
    // After every key was read: one that was not is unknown.
    bool noOtherKeys()
    {
        if (failed())
            return false;
        for (auto it = m_object.constBegin(); it != m_object.constEnd(); ++it) {
            if (!m_taken.contains(it.key()))
                return fail(it.key(), ScenarioWords::tr("unknown key"));
        }
        return true;
    }

private:
    QJsonObject m_object;
    QString m_path;
    QString *m_problem;
    QStringList m_taken;
};

QString indexed(const QString &path, qsizetype index)
{
    return QStringLiteral("%1[%2]").arg(path).arg(index);
}

bool readCall(const QJsonValue &value, const QString &path, ScenarioCallExpectation *call,
              QString *problem)
{
    if (!value.isObject()) {
        *problem = ScenarioWords::tr("%1: %2").arg(path, ScenarioWords::tr("expected an object"));
        return false;
    }
    StrictObject o(value.toObject(), path, problem);
    o.string(QStringLiteral("tool"), &call->tool, 64, true);
    QString code;
    o.string(QStringLiteral("code"), &code, 64, true);
    if (o.failed())
        return false;
    const std::optional<ResultCode::Code> known = ResultCode::fromWireName(code);
    if (!known)
        return o.fail(QStringLiteral("code"), ScenarioWords::tr("no such result code"));
    call->code = *known;
    qint64 attempts = -1;
    qint64 low = -1;
    qint64 high = -1;
    o.integer(QStringLiteral("attempts"), &attempts, 0, 100, false);
    o.integer(QStringLiteral("minAttempts"), &low, 0, 100, false);
    o.integer(QStringLiteral("maxAttempts"), &high, 0, 100, false);
    if (!o.noOtherKeys())
        return false;
    if (attempts >= 0 && (low >= 0 || high >= 0))
        return o.fail(QStringLiteral("attempts"),
                      ScenarioWords::tr("give either attempts or minAttempts/maxAttempts"));
    if (low >= 0 && high >= 0 && low > high)
        return o.fail(QStringLiteral("maxAttempts"), ScenarioWords::tr("below minAttempts"));
    call->minAttempts = int(attempts >= 0 ? attempts : low);
    call->maxAttempts = int(attempts >= 0 ? attempts : high);
    return true;
}

bool readExpectation(const QJsonObject &object, const QString &path, ScenarioExpectation *expect,
                     QString *problem)
{
    StrictObject o(object, path, problem);
    QJsonArray calls;
    if (o.has(QStringLiteral("calls"))) {
        expect->checksCalls = true;
        if (!o.array(QStringLiteral("calls"), &calls, Scenario::maxCallsPerTurn, true))
            return false;
        for (qsizetype i = 0; i < calls.size(); ++i) {
            ScenarioCallExpectation call;
            if (!readCall(calls.at(i), indexed(o.pathOf(QStringLiteral("calls")), i), &call,
                          problem))
                return false;
            expect->calls.append(call);
        }
    }
    QString outcome;
    if (!o.string(QStringLiteral("outcome"), &outcome, 16, true))
        return false;
    bool known = false;
    for (const TurnOutcome candidate : {TurnOutcome::Answered, TurnOutcome::Partial,
                                        TurnOutcome::Unanswered, TurnOutcome::Failed}) {
        if (turnOutcomeName(candidate) == outcome) {
            expect->outcome = candidate;
            known = true;
        }
    }
    if (!known)
        return o.fail(QStringLiteral("outcome"),
                      ScenarioWords::tr("expected answered, partial, unanswered or failed"));
    QString status;
    if (!o.string(QStringLiteral("status"), &status, 16, false))
        return false;
    if (!status.isEmpty()) {
        expect->status = turnStatusFromName(status);
        if (!expect->status)
            return o.fail(QStringLiteral("status"),
                          ScenarioWords::tr("expected completed, failed or cancelled"));
    }
    if (!o.integer(QStringLiteral("maxMs"), &expect->maxMs, 1, Scenario::maxTurnMs, true))
        return false;
    QJsonObject counters;
    if (!o.object(QStringLiteral("counters"), &counters, false))
        return false;
    for (auto it = counters.constBegin(); it != counters.constEnd(); ++it) {
        StrictObject c(counters, o.pathOf(QStringLiteral("counters")), problem);
        if (!Metrics::counterFromName(it.key())
            || Metrics::counterFromName(it.key()) == Metrics::Counter::DuplicateBusinessObject)
            return c.fail(it.key(), ScenarioWords::tr("no such counter of a turn"));
        qint64 value = 0;
        if (!c.integer(it.key(), &value, 0, 1000, true))
            return false;
        expect->counters.insert(it.key(), int(value));
    }
    qint64 tickets = -1;
    if (!o.integer(QStringLiteral("tickets"), &tickets, 0, Scenario::maxCallsPerTurn, false))
        return false;
    if (tickets >= 0)
        expect->tickets = int(tickets);
    return o.noOtherKeys();
}

// A turn's own keys; `o` may be the scenario's top level (the single-turn shorthand), whose
// other keys are taken by the caller.
bool readTurnKeys(StrictObject &o, ScenarioTurn *turn, QString *problem)
{
    if (!o.string(QStringLiteral("question"), &turn->question, AgentLoop::maxQuestionLength, true))
        return false;
    if (!o.string(QStringLiteral("questionZh"), &turn->questionZh, AgentLoop::maxQuestionLength,
                  false))
        return false;
    // The offline model and the answers follow the question's language (languageOf): a
    // "Chinese" question without a Chinese character would be asked in English.
    if (!turn->questionZh.isEmpty() && languageOf(turn->questionZh) != Language::Chinese)
        return o.fail(QStringLiteral("questionZh"),
                      ScenarioWords::tr("expected the question in Chinese"));
    if (!o.string(QStringLiteral("requestId"), &turn->requestId, 64, false))
        return false;
    if (!turn->requestId.isEmpty() && !AgentLoop::isValidRequestId(turn->requestId))
        return o.fail(QStringLiteral("requestId"),
                      ScenarioWords::tr("use 1 to 64 letters, digits, '-', '_' or '.'"));
    QString confirm;
    if (!o.string(QStringLiteral("confirm"), &confirm, 16, false))
        return false;
    if (!confirm.isEmpty() && confirm != QLatin1String("approve")
        && confirm != QLatin1String("decline"))
        return o.fail(QStringLiteral("confirm"), ScenarioWords::tr("expected approve or decline"));
    turn->approve = confirm != QLatin1String("decline");
    if (!o.integer(QStringLiteral("cancelAfterMs"), &turn->cancelAfterMs, 0, Scenario::maxTurnMs,
                   false))
        return false;
    if (!o.string(QStringLiteral("crashAt"), &turn->crashAt, 64, false))
        return false;
    if (!turn->crashAt.isEmpty()) {
        static const QRegularExpression occurrence(QStringLiteral("#[1-9][0-9]{0,2}$"));
        const QString point = QString(turn->crashAt).remove(occurrence);
        if (!killPointNames().contains(point))
            return o.fail(QStringLiteral("crashAt"),
                          ScenarioWords::tr("no such kill point (one of %1, optionally with #n)")
                              .arg(killPointNames().join(QStringLiteral(", "))));
    }
    if (!o.boolean(QStringLiteral("withoutStaff"), &turn->withoutStaff))
        return false;
    if (!turn->crashAt.isEmpty() && (turn->cancelAfterMs >= 0 || turn->withoutStaff))
        return o.fail(QStringLiteral("crashAt"),
                      ScenarioWords::tr("a crash turn takes no cancelAfterMs or withoutStaff"));
    if (!o.boolean(QStringLiteral("resume"), &turn->resume))
        return false;
    if (!turn->resume && turn->crashAt.isEmpty())
        return o.fail(QStringLiteral("resume"), ScenarioWords::tr("only with crashAt"));
    QJsonObject expect;
    if (!turn->resume) {
        if (o.has(QStringLiteral("expect")))
            return o.fail(QStringLiteral("expect"),
                          ScenarioWords::tr("a turn that is not resumed has no result to check"));
        return true;
    }
    if (!o.object(QStringLiteral("expect"), &expect, true))
        return false;
    return readExpectation(expect, o.pathOf(QStringLiteral("expect")), &turn->expect, problem);
}

bool readPolicy(const QJsonObject &object, const QString &path, RetryPolicy *policy,
                QString *problem)
{
    using Millis = RetryPolicy::Millis;
    StrictObject o(object, path, problem);
    qint64 timeout = policy->attemptTimeout.count();
    qint64 retries = policy->maxRetries;
    qint64 initial = policy->initialDelay.count();
    qint64 maxDelay = policy->maxDelay.count();
    qint64 cap = policy->retryAfterCap.count();
    o.integer(QStringLiteral("attemptTimeoutMs"), &timeout, 0, 3'600'000, false);
    o.integer(QStringLiteral("maxRetries"), &retries, 0, 100, false);
    o.integer(QStringLiteral("initialDelayMs"), &initial, 0, 3'600'000, false);
    o.number(QStringLiteral("multiplier"), &policy->multiplier, 0.0, 100.0);
    o.integer(QStringLiteral("maxDelayMs"), &maxDelay, 0, 3'600'000, false);
    o.integer(QStringLiteral("retryAfterCapMs"), &cap, 0, 3'600'000, false);
    QString jitter;
    o.string(QStringLiteral("jitter"), &jitter, 16, false);
    if (!o.noOtherKeys())
        return false;
    if (jitter == QLatin1String("none"))
        policy->jitter = JitterMode::None;
    else if (jitter == QLatin1String("full"))
        policy->jitter = JitterMode::Full;
    else if (jitter == QLatin1String("decorrelated"))
        policy->jitter = JitterMode::Decorrelated;
    else if (!jitter.isEmpty())
        return o.fail(QStringLiteral("jitter"),
                      ScenarioWords::tr("expected none, full or decorrelated"));
    policy->attemptTimeout = Millis(timeout);
    policy->maxRetries = int(retries);
    policy->initialDelay = Millis(initial);
    policy->maxDelay = Millis(maxDelay);
    policy->retryAfterCap = Millis(cap);
    if (const std::optional<QString> why = policy->problem()) {
        *problem = ScenarioWords::tr("%1: %2").arg(path, *why);
        return false;
    }
    return true;
}

bool readScenario(const QJsonObject &top, const KnownTools &tools, const QString &fileStem,
                  Scenario *scenario, QString *problem)
{
    StrictObject o(top, QString(), problem);
    static const QRegularExpression namePattern(QStringLiteral("^[a-z0-9][a-z0-9-]{0,63}$"));
    if (!o.string(QStringLiteral("name"), &scenario->name, 64, fileStem.isEmpty()))
        return false;
    if (scenario->name.isEmpty())
        scenario->name = fileStem;
    if (!namePattern.match(scenario->name).hasMatch())
        return o.fail(QStringLiteral("name"),
                      ScenarioWords::tr("use 1 to 64 lowercase letters, digits and '-'"));
    if (!fileStem.isEmpty() && scenario->name != fileStem)
        return o.fail(QStringLiteral("name"),
                      ScenarioWords::tr("must be the file's name, %1").arg(fileStem));
    if (!o.string(QStringLiteral("title"), &scenario->title, 80, true)
        || !o.string(QStringLiteral("summary"), &scenario->summary, 400, true))
        return false;
    QJsonArray covers;
    if (!o.array(QStringLiteral("covers"), &covers, FailureTable::instance().codes().size(),
                 false))
        return false;
    for (qsizetype i = 0; i < covers.size(); ++i) {
        const std::optional<ResultCode::Code> code = ResultCode::fromWireName(
            covers.at(i).toString());
        if (!covers.at(i).isString() || !code) {
            *problem = ScenarioWords::tr("%1: %2").arg(
                indexed(QStringLiteral("covers"), i),
                ScenarioWords::tr("expected a result code such as TOOL_TIMEOUT"));
            return false;
        }
        scenario->covers.append(*code);
    }
    if (!o.object(QStringLiteral("faults"), &scenario->faultsJson, false))
        return false;
    if (o.has(QStringLiteral("faults"))) {
        QString why;
        // The fault plan's own strict parser: keys it learns are scenario keys at once.
        std::optional<FaultPlan> plan = FaultPlan::fromJsonSection(
            QJsonDocument(scenario->faultsJson).toJson(QJsonDocument::Compact), &why, tools);
        if (!plan) {
            *problem = QStringLiteral("faults.") + why;
            return false;
        }
        scenario->faults = std::move(*plan);
    }
    QJsonObject policies;
    if (!o.object(QStringLiteral("policies"), &policies, false))
        return false;
    for (auto it = policies.constBegin(); it != policies.constEnd(); ++it) {
        const QString path = QStringLiteral("policies.") + it.key();
        if (!tools.names.contains(it.key())) {
            *problem = ScenarioWords::tr("%1: %2").arg(
                path,
                ScenarioWords::tr("no such tool (the tools are %1)")
                    .arg(tools.names.join(QStringLiteral(", "))));
            return false;
        }
        if (!it.value().isObject()) {
            *problem = ScenarioWords::tr("%1: %2").arg(path,
                                                       ScenarioWords::tr("expected an object"));
            return false;
        }
        RetryPolicy policy = RetryPolicy::defaults();
        if (!readPolicy(it.value().toObject(), path, &policy, problem))
            return false;
        scenario->policies.insert(it.key(), policy);
    }

    if (o.has(QStringLiteral("turns"))) {
        QJsonArray turns;
        if (!o.array(QStringLiteral("turns"), &turns, Scenario::maxTurns, true))
            return false;
        if (turns.isEmpty())
            return o.fail(QStringLiteral("turns"), ScenarioWords::tr("at least one turn"));
        for (qsizetype i = 0; i < turns.size(); ++i) {
            const QString path = indexed(QStringLiteral("turns"), i);
            if (!turns.at(i).isObject()) {
                *problem = ScenarioWords::tr("%1: %2").arg(
                    path, ScenarioWords::tr("expected an object"));
                return false;
            }
            StrictObject turnObject(turns.at(i).toObject(), path, problem);
            ScenarioTurn turn;
            if (!readTurnKeys(turnObject, &turn, problem) || !turnObject.noOtherKeys())
                return false;
            scenario->turns.append(turn);
        }
    } else {
        ScenarioTurn turn;
        if (!o.has(QStringLiteral("question")))
            return o.fail(QStringLiteral("turns"),
                          ScenarioWords::tr("missing (or a top-level question and expect)"));
        if (!readTurnKeys(o, &turn, problem))
            return false;
        scenario->turns.append(turn);
    }
    return o.noOtherKeys();
}

} // namespace

namespace {

// The reason alone, without "scenario: " before it: fromJson and fromFile each name the
// scenario their own way.
std::optional<Scenario> parseScenario(const QByteArray &json, QString *why,
                                      const KnownTools &tools, const QString &fileStem)
{
    const auto fail = [why](const QString &reason) {
        *why = reason;
        return std::nullopt;
    };
    if (json.size() > Scenario::maxFileBytes)
        return fail(ScenarioWords::tr("larger than %1 KiB").arg(Scenario::maxFileBytes / 1024));
    QJsonParseError parseError;
    const QJsonDocument document = QJsonDocument::fromJson(json, &parseError);
    if (parseError.error != QJsonParseError::NoError)
        return fail(ScenarioWords::tr("not valid JSON at offset %1 (%2)")
                        .arg(parseError.offset)
                        .arg(jsonParseReason(parseError)));
    if (!document.isObject())
        return fail(ScenarioWords::tr("the top level must be an object"));
    Scenario scenario;
    QString problem;
    if (!readScenario(document.object(), tools, fileStem, &scenario, &problem))
        return fail(problem);
    return scenario;
}

} // namespace

std::optional<Scenario> Scenario::fromJson(const QByteArray &json, QString *error,
                                           const KnownTools &tools, const QString &fileStem)
{
    QString why;
    std::optional<Scenario> scenario = parseScenario(json, &why, tools, fileStem);
    if (!scenario && error)
        *error = ScenarioWords::tr("scenario: %1").arg(why);
    return scenario;
}

std::optional<Scenario> Scenario::fromFile(const QString &path, QString *error,
                                           const KnownTools &tools)
{
    QString why;
    std::optional<QByteArray> bytes;
    if (path.startsWith(QLatin1String(":/"))) {
        // Embedded in the executable (the catalogue): no device or FIFO can be there, but the
        // same size bound holds.
        QFile embedded(path);
        if (embedded.size() <= maxFileBytes && embedded.open(QIODevice::ReadOnly))
            bytes = embedded.readAll();
        else
            why = ScenarioWords::tr("%1: cannot be read, or larger than %2 KiB")
                      .arg(path)
                      .arg(maxFileBytes / 1024);
    } else {
        bytes = readBoundedRegularFile(path, maxFileBytes, &why);
    }
    if (!bytes) {
        if (error)
            *error = ScenarioWords::tr("scenario: %1").arg(why);
        return std::nullopt;
    }
    std::optional<Scenario> scenario = parseScenario(*bytes, &why, tools,
                                                     QFileInfo(path).completeBaseName());
    if (!scenario) {
        if (error)
            *error = ScenarioWords::tr("scenario %1: %2").arg(QDir::toNativeSeparators(path), why);
        return std::nullopt;
    }
    scenario->file = path;
    return scenario;
}

KnownTools ScenarioCatalogue::supportTools()
{
    return supportKnownTools();
}

QList<Scenario> ScenarioCatalogue::builtIn(QStringList *problems, const KnownTools &tools)
{
    QStringList files;
    QDirIterator it(QStringLiteral(":/agentconsole/scenarios"), {QStringLiteral("*.json")},
                    QDir::Files);
    while (it.hasNext())
        files.append(it.next());
    files.sort();
    QList<Scenario> scenarios;
    for (const QString &file : std::as_const(files)) {
        QString error;
        std::optional<Scenario> scenario = Scenario::fromFile(file, &error, tools);
        if (scenario)
            scenarios.append(std::move(*scenario));
        else if (problems)
            problems->append(error);
    }
    return scenarios;
}

std::optional<Scenario> ScenarioCatalogue::find(const QString &nameOrFile, QString *error,
                                                const KnownTools &tools)
{
    if (nameOrFile.contains(QLatin1Char('/')) || nameOrFile.endsWith(QLatin1String(".json")))
        return Scenario::fromFile(nameOrFile, error, tools);
    const QString file = QStringLiteral(":/agentconsole/scenarios/%1.json").arg(nameOrFile);
    if (!QFileInfo::exists(file)) {
        if (error)
            *error = ScenarioWords::tr("no scenario named '%1' (agent-cli --list-scenarios lists "
                                       "them; a file needs a '/' or the .json ending)")
                         .arg(nameOrFile);
        return std::nullopt;
    }
    return Scenario::fromFile(file, error, tools);
}

} // namespace AgentConsole
