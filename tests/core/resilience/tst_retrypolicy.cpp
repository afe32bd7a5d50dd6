// RetryPolicy and BackoffSchedule: the article's numbers (200 ms, x2, 1 s cap, 6.6 s worst
// case), jitter bounds and determinism, and the Retry-After override with its cap.

#include "core/resilience/retrypolicy.h"

#include <QHash>
#include <QString>
#include <QTest>

#include <algorithm>
#include <optional>
#include <set>

using namespace AgentConsole;
using Millis = RetryPolicy::Millis;

Q_DECLARE_METATYPE(AgentConsole::JitterMode)
Q_DECLARE_METATYPE(AgentConsole::RetryPolicy)

class tst_RetryPolicy final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void defaultsAreTheArticles();
    void maxAttemptsCountsRetries_data();
    void maxAttemptsCountsRetries();
    void isRetryable_data();
    void isRetryable();
    void computedDelay_data();
    void computedDelay();
    void scheduleWithoutJitter();
    void jitterStaysInBounds_data();
    void jitterStaysInBounds();
    void jitterIsDeterministicPerSeed_data();
    void jitterIsDeterministicPerSeed();
    void retryAfterOverridesAndIsCapped_data();
    void retryAfterOverridesAndIsCapped();
    void worstCaseOfDefaultsIs6600ms();
    void worstCase_data();
    void worstCase();
    void describeMentionsWorstCase();
    void aProblemNamesItsField_data();
    void aProblemNamesItsField();
    void everyBoundIsWhatProblemRefuses_data();
    void everyBoundIsWhatProblemRefuses();
};

void tst_RetryPolicy::defaultsAreTheArticles()
{
    const RetryPolicy policy = RetryPolicy::defaults();
    QCOMPARE(policy.attemptTimeout, Millis{2000});
    QCOMPARE(policy.maxRetries, 2);
    QCOMPARE(policy.maxAttempts(), 3);
    QCOMPARE(policy.initialDelay, Millis{200});
    QCOMPARE(policy.multiplier, 2.0);
    QCOMPARE(policy.maxDelay, Millis{1000});
    QCOMPARE(policy.retryAfterCap, Millis{2000});
    QCOMPARE(policy.callDeadline, Millis{0});
}

void tst_RetryPolicy::maxAttemptsCountsRetries_data()
{
    QTest::addColumn<int>("maxRetries");
    QTest::addColumn<int>("attempts");
    QTest::newRow("no retry") << 0 << 1;
    QTest::newRow("article default") << 2 << 3;
    QTest::newRow("five retries") << 5 << 6;
}

void tst_RetryPolicy::maxAttemptsCountsRetries()
{
    QFETCH(int, maxRetries);
    QFETCH(int, attempts);
    RetryPolicy policy;
    policy.maxRetries = maxRetries;
    QCOMPARE(policy.maxAttempts(), attempts);
}

void tst_RetryPolicy::isRetryable_data()
{
    QTest::addColumn<FailureKind>("kind");
    QTest::addColumn<bool>("byDefault");
    QTest::addColumn<bool>("withRetriesOff");
    QTest::newRow("transient") << FailureKind::Transient << true << false;
    QTest::newRow("attempt timeout") << FailureKind::AttemptTimeout << true << false;
    QTest::newRow("invalid argument") << FailureKind::InvalidArgument << false << false;
    QTest::newRow("not found") << FailureKind::NotFound << false << false;
    QTest::newRow("permanent") << FailureKind::Permanent << false << false;
    QTest::newRow("access denied") << FailureKind::AccessDenied << false << false;
    QTest::newRow("unexpected") << FailureKind::Unexpected << false << false;
    QTest::newRow("cancelled") << FailureKind::Cancelled << false << false;
    QTest::newRow("none") << FailureKind::None << false << false;
}

void tst_RetryPolicy::isRetryable()
{
    QFETCH(FailureKind, kind);
    QFETCH(bool, byDefault);
    QFETCH(bool, withRetriesOff);
    RetryPolicy policy;
    QCOMPARE(policy.isRetryable(kind), byDefault);
    policy.retryTransient = false;
    policy.retryAttemptTimeout = false;
    QCOMPARE(policy.isRetryable(kind), withRetriesOff);
}

void tst_RetryPolicy::computedDelay_data()
{
    QTest::addColumn<int>("retry");
    QTest::addColumn<qint64>("delayMs");
    QTest::newRow("retry 0 (none)") << 0 << qint64(0);
    QTest::newRow("retry 1") << 1 << qint64(200);
    QTest::newRow("retry 2") << 2 << qint64(400);
    QTest::newRow("retry 3") << 3 << qint64(800);
    QTest::newRow("retry 4 capped") << 4 << qint64(1000);
    QTest::newRow("retry 5 capped") << 5 << qint64(1000);
    QTest::newRow("retry 30 capped") << 30 << qint64(1000);
}

void tst_RetryPolicy::computedDelay()
{
    QFETCH(int, retry);
    QFETCH(qint64, delayMs);
    QCOMPARE(RetryPolicy::defaults().computedDelay(retry), Millis{delayMs});
}

void tst_RetryPolicy::scheduleWithoutJitter()
{
    RetryPolicy policy;
    policy.maxRetries = 6;
    BackoffSchedule schedule(policy, 42);
    QList<qint64> delays;
    for (int retry = 1; retry <= 6; ++retry)
        delays.append(schedule.next(retry).count());
    QCOMPARE(delays, (QList<qint64>{200, 400, 800, 1000, 1000, 1000}));
}

void tst_RetryPolicy::jitterStaysInBounds_data()
{
    QTest::addColumn<JitterMode>("mode");
    QTest::newRow("full") << JitterMode::Full;
    QTest::newRow("decorrelated") << JitterMode::Decorrelated;
}

// Many seeded draws: every delay within the mode's bounds, and the draws actually spread
// over the range (a constant would satisfy the bounds too).
void tst_RetryPolicy::jitterStaysInBounds()
{
    QFETCH(JitterMode, mode);
    RetryPolicy policy;
    policy.maxRetries = 6;
    policy.jitter = mode;
    qint64 lowest = std::numeric_limits<qint64>::max();
    qint64 highest = 0;
    std::set<qint64> distinct;
    for (std::uint64_t seed = 1; seed <= 2000; ++seed) {
        BackoffSchedule schedule(policy, seed);
        qint64 previous = policy.initialDelay.count();
        for (int retry = 1; retry <= policy.maxRetries; ++retry) {
            const qint64 delay = schedule.next(retry).count();
            if (mode == JitterMode::Full) {
                const qint64 computed = policy.computedDelay(retry).count();
                QVERIFY2(delay >= 0 && delay <= computed,
                         qPrintable(QStringLiteral("seed %1 retry %2: %3 ms not in [0, %4]")
                                        .arg(seed).arg(retry).arg(delay).arg(computed)));
            } else {
                const qint64 high = std::min<qint64>(policy.maxDelay.count(), previous * 3);
                QVERIFY2(delay >= policy.initialDelay.count() && delay <= high,
                         qPrintable(QStringLiteral("seed %1 retry %2: %3 ms not in [200, %4]")
                                        .arg(seed).arg(retry).arg(delay).arg(high)));
            }
            previous = delay;
            lowest = std::min(lowest, delay);
            highest = std::max(highest, delay);
            distinct.insert(delay);
        }
    }
    // The draws cover the range rather than sitting on one value.
    QVERIFY(distinct.size() > 500);
    if (mode == JitterMode::Full)
        QVERIFY2(lowest < 10, qPrintable(QString::number(lowest)));
    else
        QVERIFY2(lowest < 210, qPrintable(QString::number(lowest)));
    QVERIFY2(highest > 990, qPrintable(QString::number(highest)));
    QVERIFY(highest <= policy.maxDelay.count());
}

void tst_RetryPolicy::jitterIsDeterministicPerSeed_data()
{
    jitterStaysInBounds_data();
}

void tst_RetryPolicy::jitterIsDeterministicPerSeed()
{
    QFETCH(JitterMode, mode);
    RetryPolicy policy;
    policy.maxRetries = 8;
    policy.jitter = mode;
    const auto draw = [&](std::uint64_t seed) {
        BackoffSchedule schedule(policy, seed);
        QList<qint64> delays;
        for (int retry = 1; retry <= policy.maxRetries; ++retry)
            delays.append(schedule.next(retry).count());
        return delays;
    };
    QCOMPARE(draw(0x5eed), draw(0x5eed));
    QCOMPARE(draw(7), draw(7));
    QVERIFY(draw(0x5eed) != draw(0x5eee));
}

void tst_RetryPolicy::retryAfterOverridesAndIsCapped_data()
{
    QTest::addColumn<JitterMode>("mode");
    QTest::addColumn<qint64>("serverDelayMs");
    QTest::addColumn<qint64>("capMs");
    QTest::addColumn<qint64>("expectedMs");
    QTest::newRow("shorter than schedule") << JitterMode::None << qint64(50) << qint64(2000)
                                           << qint64(50);
    QTest::newRow("longer than schedule") << JitterMode::None << qint64(900) << qint64(2000)
                                          << qint64(900);
    // The policy's maxDelay (1 s) caps a server's delay too, below a larger Retry-After cap.
    QTest::newRow("capped by max delay") << JitterMode::None << qint64(1500) << qint64(2000)
                                         << qint64(1000);
    QTest::newRow("capped") << JitterMode::None << qint64(30000) << qint64(2000) << qint64(1000);
    QTest::newRow("small cap") << JitterMode::None << qint64(500) << qint64(100) << qint64(100);
    QTest::newRow("zero means now") << JitterMode::None << qint64(0) << qint64(2000) << qint64(0);
    QTest::newRow("jitter ignored") << JitterMode::Full << qint64(700) << qint64(2000)
                                    << qint64(700);
    QTest::newRow("negative ignored") << JitterMode::None << qint64(-5) << qint64(2000)
                                      << qint64(200);
}

void tst_RetryPolicy::retryAfterOverridesAndIsCapped()
{
    QFETCH(JitterMode, mode);
    QFETCH(qint64, serverDelayMs);
    QFETCH(qint64, capMs);
    QFETCH(qint64, expectedMs);
    RetryPolicy policy;
    policy.jitter = mode;
    policy.retryAfterCap = Millis{capMs};
    BackoffSchedule schedule(policy, 1);
    QCOMPARE(schedule.next(1, Millis{serverDelayMs}), Millis{expectedMs});
    // Without a server delay the next retry is back on the computed schedule.
    if (mode == JitterMode::None)
        QCOMPARE(schedule.next(2), Millis{400});
}

void tst_RetryPolicy::worstCaseOfDefaultsIs6600ms()
{
    const RetryPolicy policy = RetryPolicy::defaults();
    // 2 + 0.2 + 2 + 0.4 + 2 = 6.6 s
    QCOMPARE(policy.worstCaseDuration(), Millis{6600});
    // With every backoff stretched by Retry-After to the most a server may ask for, the max
    // delay: 3 x 2 s + 2 x 1 s. That is longer than the figure shown, so the call's deadline is
    // the figure shown: a server's delays eat into the attempts after them (issue #8).
    QCOMPARE(policy.serverDelayCap(), Millis{1000});
    QCOMPARE(policy.worstCaseWithServerDelays(), Millis{8000});
    QCOMPARE(policy.effectiveDeadline(), Millis{6600});

    // A console's default (issue #24 §3): the same figures with full jitter, so the same worst
    // case; its text says the waits are jittered.
    const RetryPolicy jittered = RetryPolicy::jittered(42);
    QCOMPARE(jittered.jitter, JitterMode::Full);
    QCOMPARE(jittered.jitterSeed, std::uint64_t(42));
    QCOMPARE(jittered.worstCaseDuration(), Millis{6600});
    QCOMPARE(jittered.effectiveDeadline(), Millis{6600});
    RetryPolicy same = jittered;
    same.jitter = JitterMode::None;
    same.jitterSeed = policy.jitterSeed;
    QCOMPARE(same, policy);
    QVERIFY2(jittered.describe().endsWith(QStringLiteral("full jitter; worst case 6.6 s")),
             qPrintable(jittered.describe()));
}

void tst_RetryPolicy::worstCase_data()
{
    QTest::addColumn<qint64>("timeoutMs");
    QTest::addColumn<int>("maxRetries");
    QTest::addColumn<JitterMode>("mode");
    QTest::addColumn<qint64>("deadlineMs");
    QTest::addColumn<qint64>("worstMs");
    QTest::newRow("no retries") << qint64(2000) << 0 << JitterMode::None << qint64(0)
                                << qint64(2000);
    QTest::newRow("five retries, capped delays")
        << qint64(2000) << 5 << JitterMode::None << qint64(0)
        << qint64(6 * 2000 + 200 + 400 + 800 + 1000 + 1000);
    QTest::newRow("full jitter never exceeds schedule")
        << qint64(2000) << 2 << JitterMode::Full << qint64(0) << qint64(6600);
    // Decorrelated bounds: min(1 s, 3 x 200) = 600, then min(1 s, 3 x 600) = 1000.
    QTest::newRow("decorrelated") << qint64(2000) << 2 << JitterMode::Decorrelated << qint64(0)
                                  << qint64(6000 + 600 + 1000);
    QTest::newRow("deadline caps it") << qint64(2000) << 2 << JitterMode::None << qint64(3000)
                                      << qint64(3000);
    QTest::newRow("deadline above schedule") << qint64(2000) << 2 << JitterMode::None
                                             << qint64(60000) << qint64(6600);
}

void tst_RetryPolicy::worstCase()
{
    QFETCH(qint64, timeoutMs);
    QFETCH(int, maxRetries);
    QFETCH(JitterMode, mode);
    QFETCH(qint64, deadlineMs);
    QFETCH(qint64, worstMs);
    RetryPolicy policy;
    policy.attemptTimeout = Millis{timeoutMs};
    policy.maxRetries = maxRetries;
    policy.jitter = mode;
    policy.callDeadline = Millis{deadlineMs};
    QCOMPARE(policy.worstCaseDuration(), Millis{worstMs});
    QVERIFY(policy.worstCaseWithServerDelays() >= policy.worstCaseDuration());
    // The deadline a call runs under is the worst case shown, whatever the server asks for.
    QCOMPARE(policy.effectiveDeadline(), policy.worstCaseDuration());
}

void tst_RetryPolicy::describeMentionsWorstCase()
{
    const QString text = RetryPolicy::defaults().describe();
    QVERIFY2(text.contains(QStringLiteral("3 attempts")), qPrintable(text));
    QVERIFY2(text.contains(QStringLiteral("2 s")), qPrintable(text));
    QVERIFY2(text.contains(QStringLiteral("200 ms")), qPrintable(text));
    QVERIFY2(text.contains(QStringLiteral("worst case 6.6 s")), qPrintable(text));

    RetryPolicy quick;
    quick.attemptTimeout = Millis{40};
    quick.initialDelay = Millis{10};
    const QString quickText = quick.describe();
    QVERIFY2(quickText.contains(QStringLiteral("worst case 150 ms")), qPrintable(quickText));
}

void tst_RetryPolicy::aProblemNamesItsField_data()
{
    QTest::addColumn<RetryPolicy>("policy");
    QTest::addColumn<QString>("field");
    QTest::addColumn<QString>("text");
    const auto with = [](auto change) {
        RetryPolicy policy;
        change(policy);
        return policy;
    };
    QTest::newRow("attempt timeout")
        << with([](RetryPolicy &p) { p.attemptTimeout = Millis{5}; }) << "attemptTimeout"
        << "attempt timeout: from 10 ms to 120 s";
    QTest::newRow("retries") << with([](RetryPolicy &p) { p.maxRetries = 11; }) << "maxRetries"
                             << "retries: from 0 to 10";
    QTest::newRow("first delay") << with([](RetryPolicy &p) { p.initialDelay = Millis{60'001}; })
                                 << "initialDelay"
                                 << "first delay: from 0 to 60 s";
    QTest::newRow("multiplier") << with([](RetryPolicy &p) { p.multiplier = 0.5; }) << "multiplier"
                                << "multiplier: from 1 to 10";
    QTest::newRow("maximum delay below the first")
        << with([](RetryPolicy &p) { p.maxDelay = Millis{100}; }) << "maxDelay"
        << "maximum delay: not below the first delay";
    QTest::newRow("Retry-After cap")
        << with([](RetryPolicy &p) { p.retryAfterCap = Millis{300'001}; }) << "retryAfterCap"
        << "Retry-After cap: from 0 to 300 s";
    QTest::newRow("call deadline")
        << with([](RetryPolicy &p) { p.callDeadline = Millis{3'600'001}; }) << "callDeadline"
        << "call deadline: from 0 to 1 h";
}

// Without a translator (agent-cli, the log) the words are the English source; the field is
// the member's name whatever the language, so a form can put the text beside it.
void tst_RetryPolicy::aProblemNamesItsField()
{
    QFETCH(RetryPolicy, policy);
    QFETCH(QString, field);
    QFETCH(QString, text);
    const std::optional<RetryPolicy::RangeProblem> found = policy.rangeProblem();
    QVERIFY(found);
    QCOMPARE(QLatin1String(found->field), field);
    QCOMPARE(found->text, text);
    QCOMPARE(policy.problem(), std::optional<QString>(text));
    QVERIFY(!RetryPolicy::defaults().rangeProblem());
}

namespace {

// Sets the member a bound is about; a bound this suite has no setter for fails it.
using Setter = void (*)(RetryPolicy &, double);
std::optional<Setter> setterFor(const QString &field)
{
    static const QHash<QString, Setter> setters{
        {QStringLiteral("attemptTimeout"),
         [](RetryPolicy &p, double v) { p.attemptTimeout = Millis{qint64(v)}; }},
        {QStringLiteral("maxRetries"), [](RetryPolicy &p, double v) { p.maxRetries = int(v); }},
        {QStringLiteral("initialDelay"),
         [](RetryPolicy &p, double v) { p.initialDelay = Millis{qint64(v)}; }},
        {QStringLiteral("multiplier"), [](RetryPolicy &p, double v) { p.multiplier = v; }},
        {QStringLiteral("maxDelay"),
         [](RetryPolicy &p, double v) { p.maxDelay = Millis{qint64(v)}; }},
        {QStringLiteral("retryAfterCap"),
         [](RetryPolicy &p, double v) { p.retryAfterCap = Millis{qint64(v)}; }},
        {QStringLiteral("callDeadline"),
         [](RetryPolicy &p, double v) { p.callDeadline = Millis{qint64(v)}; }},
    };
    const auto it = setters.constFind(field);
    return it == setters.cend() ? std::nullopt : std::optional<Setter>(*it);
}

} // namespace

// What RetryPolicy::bounds() publishes is what problem() refuses: each end is taken, one step
// past either end is refused naming the member, and bound() finds it by name. A range
// changed in one place only fails here.
void tst_RetryPolicy::everyBoundIsWhatProblemRefuses_data()
{
    QTest::addColumn<QString>("field");
    QVERIFY(!RetryPolicy::bounds().isEmpty());
    for (const RetryPolicy::Bound &bound : RetryPolicy::bounds())
        QTest::newRow(bound.field) << QString::fromLatin1(bound.field);
}

void tst_RetryPolicy::everyBoundIsWhatProblemRefuses()
{
    QFETCH(QString, field);
    const std::optional<RetryPolicy::Bound> bound = RetryPolicy::bound(qPrintable(field));
    QVERIFY(bound);
    QCOMPARE(QLatin1String(bound->field), field);
    const std::optional<Setter> set = setterFor(field);
    QVERIFY2(set, "a bound this suite does not know: give it a setter");
    const auto problemWith = [&](double value) {
        RetryPolicy policy;
        // Out of the way of the rule between the two delays.
        if (field == QLatin1String("maxDelay"))
            policy.initialDelay = Millis{0};
        else
            policy.maxDelay = Millis{qint64(RetryPolicy::bound("maxDelay")->max)};
        (*set)(policy, value);
        return policy.rangeProblem();
    };
    QVERIFY(RetryPolicy::defaults().rangeProblem() == std::nullopt);
    for (const double end : {bound->min, bound->max}) {
        const auto found = problemWith(end);
        QVERIFY2(!found, qPrintable(found ? found->text : QString()));
    }
    const double step = bound->unit == RetryPolicy::Bound::Unit::Factor ? 0.01 : 1;
    for (const double past : {bound->min - step, bound->max + step}) {
        const auto found = problemWith(past);
        QVERIFY(found);
        QCOMPARE(QLatin1String(found->field), field);
        QVERIFY2(found->text.contains(QStringLiteral(": from ")), qPrintable(found->text));
    }
    QVERIFY(!RetryPolicy::bound("jitter"));
}

QTEST_GUILESS_MAIN(tst_RetryPolicy)
#include "tst_retrypolicy.moc"
