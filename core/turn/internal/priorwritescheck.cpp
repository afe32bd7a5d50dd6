#include "priorwritescheck.h"

#include "../../async/await.h"
#include "../../async/checkworkpool.h"
#include "../../ledger/idempotencyledger.h"
#include "../../resilience/resultcode.h"
#include "../../resilience/toolexecutor.h"
#include "../../telemetry/logging.h"
#include "../../tools/toolregistry.h"

#include <QJsonArray>
#include <QPointer>
#include <QtConcurrent/QtConcurrentRun>

#include <algorithm>

namespace AgentConsole::Internal {
namespace {

// The two answers the judgement waits for, gathered on the receiver's thread.
struct Gathered
{
    PriorWritesCheck check;
    QJsonObject arguments;
    QString userId;
    QString writeKey;
    std::chrono::seconds window{0};
    std::function<void(PriorWrites)> done;

    bool lookupDone = false;
    std::optional<QJsonObject> listed;
    ResultCode::Code lookupCode = ResultCode::Unrecognized;
    bool ledgerDone = false;
    std::optional<LedgerRecent> recent;

    void finishIfComplete()
    {
        if (!lookupDone || !ledgerDone || !done)
            return;
        const std::function<void(PriorWrites)> deliver = std::move(done);
        done = nullptr;
        deliver(PriorWritesLookup::judge(check, arguments, userId, writeKey, listed, lookupCode,
                                         recent ? &*recent : nullptr,
                                         QDateTime::currentDateTimeUtc(), window));
    }
};

// The ledger's rows read at most: a team writes far fewer tickets than this in a window.
constexpr int kMaxLedgerRows = 200;

QString text(const QJsonValue &value)
{
    if (value.isString())
        return value.toString();
    if (value.isDouble())
        return QString::number(value.toDouble());
    return {};
}

} // namespace

void PriorWritesLookup::start(const Parts &parts, const Request &request, QObject *receiver,
                              std::function<void(PriorWrites)> done)
{
    auto gathered = std::make_shared<Gathered>();
    gathered->check = request.check;
    gathered->arguments = request.arguments;
    gathered->userId = request.context.userId;
    gathered->writeKey = request.writeKey;
    gathered->window = request.window;
    gathered->done = std::move(done);

    // The ledger's recent successes of the write, for this tenant (keys begin with it).
    if (parts.ledger) {
        const QFuture<LedgerRecent> recent = parts.ledger->recentSuccesses(
            request.context.tenantId + QLatin1Char(':'), request.writeTool, request.window,
            kMaxLedgerRows);
        await(recent, receiver, [gathered](LedgerRecent answer) {
            gathered->recent = std::move(answer);
            gathered->ledgerDone = true;
            gathered->finishIfComplete();
        });
    } else {
        gathered->ledgerDone = true;
    }

    const std::shared_ptr<const AgentTool> tool = parts.tools->find(request.check.lookup);
    if (!tool) {
        gathered->lookupCode = ResultCode::UnknownTool;
        gathered->lookupDone = true;
        gathered->finishIfComplete();
        return;
    }
    QJsonObject lookupArguments;
    for (const QString &name : request.check.lookupArguments)
        lookupArguments.insert(name, request.arguments.value(name));

    // Checked against the lookup's schema on the check pool, as every tool call is.
    QThreadPool *checkPool = checkWorkPool();
    const QFuture<std::optional<ToolResult>> prechecked = QtConcurrent::run(
        checkPool, [tool, lookupArguments, context = request.context] {
            return tool->precheck(lookupArguments, context);
        });
    QPointer<QObject> guard(receiver);
    await(prechecked, receiver,
          [gathered, parts, tool, lookupArguments, request,
           guard](std::optional<ToolResult> refusal) {
              if (!guard)
                  return;
              if (refusal) {
                  gathered->lookupCode = refusal->code;
                  gathered->lookupDone = true;
                  gathered->finishIfComplete();
                  return;
              }
              ToolCallRequest call;
              call.tool = tool;
              call.arguments = lookupArguments;
              call.context = request.context;
              call.traceId = request.traceId;
              call.breaker = parts.breakers ? parts.breakers(tool->name()) : nullptr;
              call.policy = parts.policies(tool->name());
              call.prechecked = true;
              const QFuture<ToolCallOutcome> outcome = parts.executor->execute(std::move(call));
              await(QFuture<void>(outcome), guard.data(), [gathered, outcome] {
                  if (outcome.isCanceled() || outcome.resultCount() == 0) {
                      gathered->lookupCode = ResultCode::Cancelled;
                  } else {
                      const ToolResult &result = outcome.result().result;
                      if (result.success)
                          gathered->listed = result.data.toObject();
                      else if (result.isNotFound())
                          gathered->listed = QJsonObject(); // nothing to repeat
                      else
                          gathered->lookupCode = result.code;
                  }
                  gathered->lookupDone = true;
                  gathered->finishIfComplete();
              });
          });
}

PriorWrites PriorWritesLookup::judge(const PriorWritesCheck &check, const QJsonObject &arguments,
                                     const QString &userId, const QString &writeKey,
                                     const std::optional<QJsonObject> &listed,
                                     ResultCode::Code lookupCode, const LedgerRecent *ledger,
                                     const QDateTime &now, std::chrono::seconds window)
{
    PriorWrites found;
    found.state = listed ? PriorWrites::State::Checked : PriorWrites::State::Unavailable;
    if (!listed)
        found.lookupCode = lookupCode;
    found.windowSeconds = window.count();
    if (!check.lookupArguments.isEmpty())
        found.subject = text(arguments.value(check.lookupArguments.constFirst()));
    if (!check.sameFields.isEmpty())
        found.namedField = check.sameFields.constLast();

    const auto entryOf = [&](const QJsonObject &fields, bool fromLedger) {
        PriorWrites::Entry entry;
        entry.id = text(fields.value(check.idKey));
        entry.fields = fields;
        entry.createdAt = QDateTime::fromString(fields.value(check.createdAtKey).toString(),
                                                Qt::ISODateWithMs)
                              .toUTC();
        entry.createdBy = fields.value(check.createdByKey).toString();
        entry.byThisStaffMember = !userId.isEmpty() && entry.createdBy == userId;
        entry.fromLedgerOnly = fromLedger;
        return entry;
    };
    // The earlier write is the same subject: every lookup argument matches (the ledger holds
    // every order's tickets; the backend was asked for this order's only).
    const auto sameSubject = [&](const QJsonObject &fields) {
        return std::all_of(check.lookupArguments.cbegin(), check.lookupArguments.cend(),
                           [&](const QString &name) {
                               return text(fields.value(name)) == text(arguments.value(name));
                           });
    };

    if (listed) {
        const QJsonArray list = listed->value(check.listKey).toArray();
        for (const QJsonValue &value : list) {
            const QJsonObject fields = value.toObject();
            if (!fields.isEmpty() && !text(fields.value(check.idKey)).isEmpty())
                found.entries.append(entryOf(fields, false));
        }
    }
    if (!ledger || ledger->outcome != LedgerRecent::Outcome::Found) {
        found.ledgerUnread = ledger != nullptr;
    } else {
        for (const LedgerRow &row : ledger->rows) {
            QJsonObject fields = row.result.value(QLatin1String("data")).toObject();
            const QString id = text(fields.value(check.idKey));
            if (id.isEmpty() || !sameSubject(fields))
                continue;
            if (!fields.contains(check.keyField))
                fields.insert(check.keyField, row.idempotencyKey);
            const bool known = std::any_of(found.entries.cbegin(), found.entries.cend(),
                                           [&](const PriorWrites::Entry &e) {
                                               return e.id == id;
                                           });
            if (known)
                continue;
            PriorWrites::Entry entry = entryOf(fields, true);
            if (!entry.createdAt.isValid())
                entry.createdAt = row.createdAt.toUTC();
            found.entries.append(entry);
        }
    }
    std::stable_sort(found.entries.begin(), found.entries.end(),
                     [](const PriorWrites::Entry &a, const PriorWrites::Entry &b) {
                         return a.createdAt > b.createdAt;
                     });

    const QDateTime oldest = now.addSecs(-window.count());
    for (PriorWrites::Entry &entry : found.entries) {
        const bool recent = entry.createdAt.isValid() && entry.createdAt >= oldest;
        const bool same = std::all_of(check.sameFields.cbegin(), check.sameFields.cend(),
                                      [&](const QString &name) {
                                          return text(entry.fields.value(name))
                                              == text(arguments.value(name));
                                      });
        // This very request, made before (a replay or a resume): the ledger answers it, and
        // nothing new is made.
        const bool itself = !writeKey.isEmpty()
            && entry.fields.value(check.keyField).toString() == writeKey;
        entry.likelyDuplicate = window.count() > 0 && recent && same && !itself; // 0: never
    }
    qCInfo(lcAgent).noquote()
        << "prior writes of" << check.lookup << ":" << found.entries.size() << "found,"
        << (found.likelyDuplicate() ? "a likely duplicate" : "no likely duplicate")
        << (listed ? QString() : QStringLiteral("; lookup ") + ResultCode::wireName(lookupCode));
    return found;
}

} // namespace AgentConsole::Internal
