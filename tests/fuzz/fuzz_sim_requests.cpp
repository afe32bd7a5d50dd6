// The bytes of one client connection to support-sim, framed by RequestMeter before QHttpServer
// reads them (heads, Content-Length and chunked bodies, pipelined requests). Property: the
// verdict and the counts do not depend on how the bytes were split into reads.

#include "fuzzsupport.h"

#include "app/support-sim/requestmeter.h"

using namespace AgentConsole;

namespace {

// A small body bound, so that short inputs reach 413 too.
constexpr qint64 kMaxBodyBytes = 256;

struct Metered
{
    RequestMeter::Verdict verdict = RequestMeter::Verdict::Continue;
    int completed = 0;
    qint64 bodyBytes = 0;
    bool midRequest = false;
};

Metered meter(const QByteArray &input, Fuzz::PieceLengths *lengths)
{
    RequestMeter meter(kMaxBodyBytes);
    Metered result;
    for (qsizetype at = 0; at < input.size();) {
        const qsizetype length = lengths ? lengths->next() : input.size();
        const RequestMeter::Verdict verdict = meter.feed(QByteArrayView(input).sliced(
            at, std::min(length, input.size() - at)));
        // Once it stopped it says so again, whatever comes.
        if (result.verdict != RequestMeter::Verdict::Continue)
            FUZZ_CHECK(verdict == result.verdict);
        result.verdict = verdict;
        at += length;
    }
    result.completed = meter.completedRequests();
    result.bodyBytes = meter.bodyBytes();
    result.midRequest = meter.midRequest();
    FUZZ_CHECK(result.bodyBytes >= 0);
    return result;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    Fuzz::ensureApplication();
    const QByteArray input = Fuzz::bytesOf(data, size);
    const Metered whole = meter(input, nullptr);
    Fuzz::PieceLengths lengths(input);
    const Metered pieces = meter(input, &lengths);
    FUZZ_CHECK(whole.verdict == pieces.verdict);
    FUZZ_CHECK(whole.completed == pieces.completed);
    if (whole.verdict == RequestMeter::Verdict::Continue) {
        FUZZ_CHECK(whole.bodyBytes == pieces.bodyBytes);
        FUZZ_CHECK(whole.midRequest == pieces.midRequest);
    }
    return 0;
}
