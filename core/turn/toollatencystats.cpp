#include "toollatencystats.h"

#include "turnresult.h"

#include <algorithm>

namespace AgentConsole {

int ToolLatencyStats::bucketOf(qint64 ms)
{
    const auto it = std::lower_bound(bucketBoundsMs.cbegin(), bucketBoundsMs.cend(), ms);
    return int(it - bucketBoundsMs.cbegin());
}

QString ToolLatencyStats::bucketLabel(int bucket)
{
    const auto duration = [](qint64 ms) {
        return ms >= 1000 && ms % 1000 == 0 ? QStringLiteral("%1 s").arg(ms / 1000)
            : ms >= 1000                    ? QStringLiteral("%1 s").arg(double(ms) / 1000.0)
                                            : QStringLiteral("%1 ms").arg(ms);
    };
    if (bucket < 0)
        return {};
    if (bucket >= int(bucketBoundsMs.size()))
        return QStringLiteral("> %1").arg(duration(bucketBoundsMs.back()));
    return QStringLiteral("\u2264 %1").arg(duration(bucketBoundsMs[std::size_t(bucket)]));
}

void ToolLatencyStats::recordTurn(const TurnResult &turn)
{
    for (const ToolCallRecord &call : turn.toolCalls) {
        if (call.state == ToolCallRecord::State::Finished && call.attemptsMade() > 0)
            record(call.name, call.totalMs);
    }
}

void ToolLatencyStats::record(const QString &tool, qint64 ms)
{
    auto it = std::find_if(m_histograms.begin(), m_histograms.end(),
                           [&tool](const Histogram &h) { return h.tool == tool; });
    if (it == m_histograms.end()) {
        if (m_histograms.size() >= maxTools)
            return; // bounded: a 33rd tool name is not counted
        Histogram created;
        created.tool = tool;
        m_histograms.append(created);
        it = m_histograms.end() - 1;
    }
    ms = std::max<qint64>(0, ms);
    ++it->counts[std::size_t(bucketOf(ms))];
    ++it->calls;
    it->totalMs += ms;
    it->maxMs = std::max(it->maxMs, ms);
}

} // namespace AgentConsole
