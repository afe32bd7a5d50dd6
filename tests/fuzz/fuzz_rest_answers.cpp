// What a REST support backend answers (support-sim or a real one), as the console classifies
// it: HttpSupportBackend::classify for the lookups, HttpTicketBackend::classifyCreate and
// classifyStatus for the ticket writes, and the Retry-After header. Input: fields separated by
// "\n--\n": "<status> <network error> <flags>", Retry-After, body.
// Properties: a 2xx lookup is Found only with a JSON object; a write answered by no HTTP
// status is never Created; a retry-after is never negative.

#include "fuzzsupport.h"

#include "core/http/retryafter.h"
#include "core/support/httpsupportbackend.h"
#include "core/support/httpticketbackend.h"
#include "core/support/internal/restexchange.h"

#include <QJsonDocument>
#include <QMetaEnum>
#include <QNetworkReply>

using namespace AgentConsole;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    Fuzz::ensureApplication();
    const QList<QByteArray> fields = Fuzz::fieldsOf(Fuzz::bytesOf(data, size), 3);
    const QList<QByteArray> head = fields.at(0).simplified().split(' ');
    const int status = head.value(0).toInt();
    const QMetaEnum errors = QMetaEnum::fromType<QNetworkReply::NetworkError>();
    const uint number = head.value(1).toUInt();
    const int networkError = errors.valueToKey(int(number))
        ? int(number)
        : errors.value(int(number % uint(errors.keyCount())));
    const int flags = head.value(2).toInt();
    const bool requestSent = flags & 1;
    const bool cancelled = flags & 2;
    const QByteArray &retryAfter = fields.at(1);
    const QByteArray &body = fields.at(2);

    const std::optional<std::chrono::milliseconds> wait = Http::parseRetryAfter(retryAfter);
    if (wait)
        FUZZ_CHECK(wait->count() >= 0 && *wait <= Http::kMaxRetryAfter);

    const LookupAnswer lookup =
        HttpSupportBackend::classify(networkError, status, body, retryAfter, cancelled);
    if (lookup.status == LookupAnswer::Status::Found) {
        FUZZ_CHECK(status >= 200 && status < 300);
        FUZZ_CHECK(QJsonDocument::fromJson(body).isObject());
    }
    if (lookup.retryAfter)
        FUZZ_CHECK(lookup.retryAfter->count() >= 0);

    const TicketWriteAnswer write = HttpTicketBackend::classifyCreate(
        networkError, status, body, retryAfter, requestSent, cancelled);
    if (write.status == TicketWriteAnswer::Status::Created)
        FUZZ_CHECK(status == 201);

    const TicketStatusAnswer known = HttpTicketBackend::classifyStatus(
        networkError, status, body, QStringLiteral("fuzz:conv:req:0"));
    (void)known;
    return 0;
}
