#pragma once

#include <QList>
#include <QString>

#include <array>

namespace AgentConsole {

struct TurnResult;

// How long each tool's calls took (attempts, backoffs and all: the wait the staff member saw),
// counted in fixed buckets, so that memory stays bounded however long the console runs: a
// fixed number of counters per tool, and at most maxTools tools (a model may name anything;
// only calls that reached a tool are counted). Fed by the runtime from every finished turn.
class ToolLatencyStats final
{
public:
    // Upper bounds of the buckets in ms; the last bucket holds everything above the last one.
    static constexpr std::array<qint64, 8> bucketBoundsMs{10, 50, 100, 250, 500, 1000, 2500, 5000};
    static constexpr int bucketCount = int(bucketBoundsMs.size()) + 1;
    static constexpr int maxTools = 32;

    struct Histogram
    {
        QString tool;
        std::array<int, bucketCount> counts{};
        int calls = 0;
        qint64 totalMs = 0;
        qint64 maxMs = 0;
    };

    // The bucket a duration falls in: 0 for <= 10 ms, ..., bucketCount - 1 above 5 s.
    static int bucketOf(qint64 ms);
    // "≤ 10 ms", ..., "> 5 s": the bucket's range, for a histogram's axis.
    static QString bucketLabel(int bucket);

    // Counts every call of the turn that made at least one attempt.
    void recordTurn(const TurnResult &turn);
    void record(const QString &tool, qint64 ms);
    void clear() { m_histograms.clear(); }

    // One histogram per tool, in the order the tools were first seen.
    const QList<Histogram> &histograms() const { return m_histograms; }

private:
    QList<Histogram> m_histograms;
};

} // namespace AgentConsole
