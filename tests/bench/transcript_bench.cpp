// transcript_bench: does a turn cost the same at turn 200 as at turn 10, and does a long
// conversation open fast and small? The console (offscreen, 1280x800, offline demo model,
// embedded store) answers real questions one after another; the main thread's CPU time of
// each turn (from Send until the window has taken the turn and painted) is recorded. Then a
// fresh window is shown with a 1,000-turn conversation put into its transcript (the way a
// restored or exported conversation is: question, cards, answer, footer per turn), and the
// time until its transcript first paints and the process's resident memory are taken. The
// baseline of the first paint, in the same run: a fresh window with an empty transcript, timed
// the same way. Three rounds of both, alternating; the figure is the median of the rounds.
//
// Run: ./build/tests/bench/transcript_bench [turns]   (see docs/PERFORMANCE.md; ~30 s)
// The last line is machine-readable:
//   cpu_ratio_200_vs_10=R first_paint_ms_1000=T rss_mb_1000=M first_paint_ms_empty=E
//   first_paint_cpu_ms_1000=C   (C: the GUI thread's CPU time within T)
// Exit status 0 when all three targets are met (R <= 1.3, T < 150, M < 120), 3 when one is
// not, 1 when the runtime did not start or a turn did not finish.

#include "core/turn/agentloop.h"
#include "core/console/agentruntime.h"
#include "core/turn/turnresult.h"
#include "ui/window/consolewindow.h"
#include "ui/transcript/questioninput.h"
#include "ui/transcript/transcriptview.h"

#include "benchhost.h"

#include <QApplication>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QFile>
#include <QLoggingCategory>
#include <QPushButton>
#include <QTemporaryDir>
#include <QTimer>

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <functional>
#include <memory>
#include <numeric>
#include <vector>

using namespace AgentConsole;

namespace {

constexpr int kDefaultTurns = 210;
constexpr int kRestoredTurns = 1000;
constexpr int kTurnLimitMs = 30'000;
constexpr int kPaintRounds = 3;

double threadCpuMs()
{
    timespec now{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
    return double(now.tv_sec) * 1e3 + double(now.tv_nsec) / 1e6;
}

double residentMb()
{
    QFile status(QStringLiteral("/proc/self/status"));
    if (!status.open(QIODevice::ReadOnly))
        return -1;
    for (const QByteArray &line : status.readAll().split('\n')) {
        if (line.startsWith("VmRSS:"))
            return line.mid(6).trimmed().split(' ').value(0).toDouble() / 1024.0;
    }
    return -1;
}

// Questions staff ask: two intents each, so that every turn has cards and a real answer.
QString questionFor(int turn)
{
    return QStringLiteral("Where is order A%1 and is SKU-%2 in stock?")
        .arg(1001 + turn % 40)
        .arg(100 + (turn % 3) * 100);
}

struct Runtime
{
    QTemporaryDir dataDir;
    std::unique_ptr<AgentRuntime> runtime;

    bool start()
    {
        if (!dataDir.isValid())
            return false;
        RuntimeOptions options;
        options.dataDirectory = dataDir.path();
        runtime = std::make_unique<AgentRuntime>(options);
        QEventLoop wait;
        QObject::connect(runtime.get(), &AgentRuntime::ready, &wait, &QEventLoop::quit);
        QObject::connect(runtime.get(), &AgentRuntime::failed, &wait, &QEventLoop::quit);
        runtime->start();
        if (!runtime->isReady())
            wait.exec();
        return runtime->isReady();
    }
};

// Lets the window take what is posted (layouts, the frame-coalesced updates) and paint.
void settle(int ms)
{
    QEventLoop loop;
    QTimer::singleShot(ms, &loop, &QEventLoop::quit);
    loop.exec();
}

double average(const std::vector<double> &values, int from, int to)
{
    from = std::max(0, from);
    to = std::min(int(values.size()), to);
    if (to <= from)
        return 0;
    return std::accumulate(values.begin() + from, values.begin() + to, 0.0) / (to - from);
}

struct FirstPaint
{
    qint64 ms = -1; // wall time; -1 when the window never painted
    double cpuMs = 0; // of it, the GUI thread's CPU time: what an idle machine's wall time
                      // would be at least, when other work shares the cores
};

// From a fresh window's construction, with `turns` turns put into its transcript (cycling
// through `results`), to its transcript's first paint. With `rss`, the process's resident
// memory once the window has settled.
FirstPaint firstPaint(AgentRuntime *runtime, const std::vector<TurnResult> &results, int turns,
                      double *rss = nullptr)
{
    settle(50);
    FirstPaint figures;
    const double cpuBefore = threadCpuMs();
    QElapsedTimer sinceStart;
    sinceStart.start();
    auto window = std::make_unique<ConsoleWindow>(runtime);
    window->resize(1280, 800);
    TranscriptView *transcript = window->transcript();
    for (int i = 0; i < turns; ++i) {
        TurnResult turn = results.at(std::size_t(i) % results.size());
        turn.requestId = QStringLiteral("restored-%1").arg(i);
        transcript->addQuestion(turn.requestId, turn.question);
        for (const ToolCallRecord &call : std::as_const(turn.toolCalls))
            transcript->updateToolCall(turn.requestId, call);
        transcript->finishTurn(turn);
    }
    bool painted = false;
    struct PaintWatch final : QObject
    {
        std::function<void()> onPaint;
        bool eventFilter(QObject *, QEvent *event) override
        {
            if (event->type() == QEvent::Paint && onPaint)
                onPaint();
            return false;
        }
    } watch;
    QEventLoop wait;
    watch.onPaint = [&] {
        if (painted)
            return;
        painted = true;
        figures.ms = sinceStart.elapsed();
        figures.cpuMs = threadCpuMs() - cpuBefore;
        QTimer::singleShot(0, &wait, &QEventLoop::quit);
    };
    transcript->viewport()->installEventFilter(&watch);
    window->show();
    QTimer::singleShot(5000, &wait, [&] { wait.exit(1); });
    if (wait.exec() != 0)
        return {};
    settle(200);
    if (rss)
        *rss = residentMb();
    transcript->viewport()->removeEventFilter(&watch);
    return figures;
}

template<typename T>
T median(std::vector<T> values)
{
    std::sort(values.begin(), values.end());
    return values.empty() ? T(-1) : values.at(values.size() / 2);
}

} // namespace

int main(int argc, char *argv[])
{
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
        qputenv("QT_QPA_PLATFORM", "offscreen");
    QLoggingCategory::setFilterRules(
        QStringLiteral("agentconsole.*.info=false\nagentconsole.*.warning=false"));
    QApplication app(argc, argv);
    const int turns = argc > 1 ? std::max(20, QByteArray(argv[1]).toInt()) : kDefaultTurns;
    std::printf("transcript_bench: %s, platform %s\n", Bench::hostLine().constData(),
        qPrintable(QGuiApplication::platformName()));
    std::printf("%d turns asked, then %d restored\n", turns, kRestoredTurns);

    Runtime runtime;
    if (!runtime.start())
        return 1;
    AgentLoop *loop = runtime.runtime->agentLoop();

    // Phase 1: turns asked one after another in one window.
    std::vector<double> cpuMs;
    std::vector<TurnResult> results;
    {
        auto window = std::make_unique<ConsoleWindow>(runtime.runtime.get());
        window->resize(1280, 800);
        window->show();
        settle(50);
        for (int turn = 0; turn < turns; ++turn) {
            QEventLoop wait;
            TurnResult finished;
            const auto connection = QObject::connect(
                loop, &AgentLoop::turnFinished, &wait, [&](const TurnResult &result) {
                    finished = result;
                    // After the window's own slots for the same signal, and a frame for it.
                    QTimer::singleShot(40, &wait, &QEventLoop::quit);
                });
            QTimer::singleShot(kTurnLimitMs, &wait, [&] { wait.exit(1); });
            const double before = threadCpuMs();
            window->questionInput()->setPlainText(questionFor(turn));
            window->sendButton()->click();
            const int status = wait.exec();
            cpuMs.push_back(threadCpuMs() - before);
            QObject::disconnect(connection);
            if (status != 0) {
                std::fprintf(stderr, "turn %d did not finish\n", turn + 1);
                return 1;
            }
            results.push_back(finished);
            if ((turn + 1) % 50 == 0 || turn + 1 == 10) {
                std::printf("turn %4d: main-thread CPU %.1f ms (mean of the last 10 %.1f ms), "
                            "live turns %d\n",
                    turn + 1, cpuMs.back(), average(cpuMs, turn - 9, turn + 1),
                    window->transcript()->liveTurnCount());
                std::fflush(stdout);
            }
        }
        window.reset();
    }
    // Turn 10 and turn 200 as the mean of the ten turns around each (one turn alone is
    // noisy on a shared machine).
    const double at10 = average(cpuMs, 5, 15);
    const double at200 = average(cpuMs, std::min(turns, 200) - 5, std::min(turns, 200) + 5);
    const double ratio = at10 > 0 ? at200 / at10 : 0;
    std::printf("cpu per turn: turn 10 %.1f ms, turn 200 %.1f ms, ratio %.2f\n", at10, at200,
        ratio);

    // Phase 2: a fresh window with 1,000 turns in its transcript, from Send-less start to
    // the transcript's first paint; the same with no turns is the baseline. Alternating.
    std::vector<qint64> emptyMs;
    std::vector<qint64> restoredMs;
    std::vector<double> restoredCpuMs;
    double rss = -1;
    for (int round = 0; round < kPaintRounds; ++round) {
        const FirstPaint empty = firstPaint(runtime.runtime.get(), results, 0);
        const FirstPaint restored = firstPaint(runtime.runtime.get(), results, kRestoredTurns,
                                               round == 0 ? &rss : nullptr);
        if (empty.ms < 0 || restored.ms < 0) {
            std::fprintf(stderr, "a window never painted\n");
            return 1;
        }
        emptyMs.push_back(empty.ms);
        restoredMs.push_back(restored.ms);
        restoredCpuMs.push_back(restored.cpuMs);
        std::printf("round %d: first paint, empty transcript %lld ms (cpu %.0f), %d turns %lld "
                    "ms (cpu %.0f)\n",
            round + 1, static_cast<long long>(empty.ms), empty.cpuMs, kRestoredTurns,
            static_cast<long long>(restored.ms), restored.cpuMs);
    }
    const qint64 firstPaintMs = median(restoredMs);
    const qint64 emptyPaint = median(emptyMs);
    std::printf("restored %d turns: first paint %lld ms (median of %d; %lld-%lld), empty "
                "transcript %lld ms (%lld-%lld), ratio %.2f; resident %.1f MB\n",
        kRestoredTurns, static_cast<long long>(firstPaintMs), kPaintRounds,
        static_cast<long long>(*std::min_element(restoredMs.begin(), restoredMs.end())),
        static_cast<long long>(*std::max_element(restoredMs.begin(), restoredMs.end())),
        static_cast<long long>(emptyPaint),
        static_cast<long long>(*std::min_element(emptyMs.begin(), emptyMs.end())),
        static_cast<long long>(*std::max_element(emptyMs.begin(), emptyMs.end())),
        emptyPaint > 0 ? double(firstPaintMs) / double(emptyPaint) : 0.0, rss);
    std::printf("of the %d turns' first paint, the GUI thread's CPU time: %.0f ms (median)\n",
        kRestoredTurns, median(restoredCpuMs));
    std::printf("load average after the run: %s\n", qPrintable(Bench::loadAverage()));

    const bool met = ratio <= 1.3 && firstPaintMs < 150 && rss < 120;
    std::printf("targets (ratio <= 1.3, first paint < 150 ms, resident < 120 MB): %s\n",
        met ? "met" : "MISSED");
    std::printf("cpu_ratio_200_vs_10=%.2f first_paint_ms_1000=%lld rss_mb_1000=%.1f "
                "first_paint_ms_empty=%lld first_paint_cpu_ms_1000=%.0f\n",
        ratio, static_cast<long long>(firstPaintMs), rss, static_cast<long long>(emptyPaint),
        median(restoredCpuMs));
    // The short run in ctest (AGENT_CONSOLE_BENCH_SHORT) checks that the bench works, not
    // its figures: a busy CI machine is no place to judge them.
    return met || qEnvironmentVariableIsSet("AGENT_CONSOLE_BENCH_SHORT") ? 0 : 3;
}
