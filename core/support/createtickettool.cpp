#include "createtickettool.h"

#include "../faults/livefaults.h"
#include "../telemetry/logging.h"
#include "../tools/argumentschema.h"
#include "../tools/toolregistry.h"
#include "supportfailures.h"
#include "supporttoolnames.h"
#include "ticketbackend.h"

#include <QJsonArray>
#include <QJsonDocument>

namespace AgentConsole {
namespace {

// The categories in staff words (ui/ translates them in ToolLabels' context); the schema and
// the ledger keep the wire values.
QList<ToolLabels::Value> ticketCategoryLabels()
{
    const auto value = [](const char *wire, const char *label) {
        return ToolLabels::Value{QString::fromLatin1(wire), QString::fromUtf8(label)};
    };
    const QList<ToolLabels::Value> labels{
        value("RETURN", QT_TRANSLATE_NOOP("ToolLabels", "Return")),
        value("EXCHANGE", QT_TRANSLATE_NOOP("ToolLabels", "Exchange")),
        value("REFUND", QT_TRANSLATE_NOOP("ToolLabels", "Refund")),
        value("DAMAGED", QT_TRANSLATE_NOOP("ToolLabels", "Damaged item")),
        value("MISSING_ITEM", QT_TRANSLATE_NOOP("ToolLabels", "Missing item")),
        value("OTHER", QT_TRANSLATE_NOOP("ToolLabels", "Other")),
    };
    Q_ASSERT(labels.size() == TicketRequest::categories().size());
    return labels;
}

QJsonObject ticketSchema()
{
    QJsonArray categories;
    for (const QString &category : TicketRequest::categories())
        categories.append(category);
    const QJsonObject properties{
        {QStringLiteral("orderId"),
         QJsonObject{{QStringLiteral("type"), QStringLiteral("string")},
                     {QStringLiteral("pattern"), QStringLiteral("^A\\d{4,10}$")},
                     {QStringLiteral("description"),
                      QStringLiteral("Order number: A followed by 4 to 10 digits, e.g. A1001")}}},
        {QStringLiteral("category"),
         QJsonObject{{QStringLiteral("type"), QStringLiteral("string")},
                     {QStringLiteral("enum"), categories},
                     {QStringLiteral("description"), QStringLiteral("What the customer needs")}}},
        {QStringLiteral("description"),
         QJsonObject{{QStringLiteral("type"), QStringLiteral("string")},
                     {QStringLiteral("minLength"), 1},
                     {QStringLiteral("maxLength"), TicketRequest::kMaxDescriptionLength},
                     {QStringLiteral("description"),
                      QStringLiteral("The customer's problem in their words")}}},
    };
    return QJsonObject{{QStringLiteral("type"), QStringLiteral("object")},
                       {QStringLiteral("properties"), properties},
                       {QStringLiteral("required"),
                        QJsonArray{QStringLiteral("orderId"), QStringLiteral("category"),
                                   QStringLiteral("description")}},
                       {QStringLiteral("additionalProperties"), false}};
}

QJsonObject withReplayFlag(QJsonObject ticket, bool replayed)
{
    ticket.insert(QStringLiteral("replayed"), replayed);
    return ticket;
}

class CreateTicketTool final : public AgentTool
{
public:
    CreateTicketTool(std::shared_ptr<const TicketBackend> backend,
                     std::shared_ptr<const LiveFaults> faults)
        : m_descriptor(ticketToolDescriptor())
        , m_schema(m_descriptor.parameters)
        , m_backend(std::move(backend))
        , m_faults(std::move(faults))
    {
    }

    ToolDescriptor descriptor() const override { return m_descriptor; }

    std::optional<ToolResult> precheck(const QJsonObject &arguments,
                                       const TrustedContext &context) const override
    {
        if (!context.isComplete()) {
            return ToolResult::failure(ResultCode::ContextMissing, context.language);
        }
        const QStringList invalid = m_schema.invalidFields(arguments);
        const QString problem = TicketRequest::fromJson(arguments).problem();
        if (invalid.isEmpty() && problem.isEmpty())
            return std::nullopt;
        QStringList errors;
        for (const QString &field : invalid) {
            if (field == QLatin1String("orderId"))
                errors << localized(context.language,
                                    "Order numbers are the letter A followed by 4 to 10 digits",
                                    "订单编号应为大写字母 A 加 4～10 位数字");
            else if (field == QLatin1String("category"))
                errors << localized(
                    context.language,
                    "The category must be RETURN, EXCHANGE, REFUND, DAMAGED, "
                    "MISSING_ITEM or OTHER",
                    "工单类别须为 RETURN、EXCHANGE、REFUND、DAMAGED、MISSING_ITEM 或 OTHER");
            else if (field == QLatin1String("description"))
                errors << localized(context.language, "The description needs 1 to 500 characters",
                                    "问题描述须为 1～500 个字符");
            else
                errors << localized(context.language, "Missing or unexpected arguments",
                                    "缺少参数或包含未知参数");
        }
        if (errors.isEmpty())
            errors << localized(context.language, "The ticket details are incomplete",
                                "工单信息不完整");
        return ToolResult::failure(ResultCode::InvalidArgument, context.language, errors);
    }

    AttemptResult attempt(const QJsonObject &arguments, const TrustedContext &context,
                          const AttemptContext &attempt) const override
    {
        const Language language = context.language;
        if (attempt.idempotencyKey.isEmpty()) // the loop always sets it: a write without one
            return AttemptResult::rejected(QStringLiteral("createTicket without a key"));
        // Injected faults act where a real backend would misbehave: before anything is asked
        // or sent (a hang holds the status query too), so a failed attempt committed nothing.
        // One plan for the whole attempt, read as it starts: a change in the fault panel
        // applies from the next attempt.
        static const auto none = std::make_shared<const FaultPlan>();
        const std::shared_ptr<const FaultPlan> faults = m_faults ? m_faults->current() : none;
        if (const auto injected = injectedFailure(*faults, arguments, attempt, language))
            return *injected;
        // An attempt that may repeat an earlier one asks first: the earlier one may have
        // been committed even though its answer never arrived.
        if (attempt.mayHaveRun) {
            const TicketStatusAnswer status = m_backend->status(attempt.idempotencyKey, context,
                                                                attempt.cancellation);
            switch (status.status) {
            case TicketStatusAnswer::Status::Exists:
                return AttemptResult::completed(
                    ToolResult::ok(created(language), withReplayFlag(status.ticket, false)));
            case TicketStatusAnswer::Status::Unknown:
                qCWarning(lcTools).noquote() << "createTicket status unknown:" << status.detail;
                return AttemptResult::completed(unknown(language));
            case TicketStatusAnswer::Status::DoesNotExist:
                break; // nothing was committed: sending again is safe
            }
        }
        TicketWriteAnswer answer = m_backend->create(TicketRequest::fromJson(arguments),
                                                     attempt.idempotencyKey, context,
                                                     attempt.cancellation);
        if (answer.hasTicket() && losesAnswer(*faults)) {
            // The backend committed; its answer never arrives (like support-sim's
            // commitThenDrop). Only the status query below can tell.
            answer = TicketWriteAnswer::failed(
                TicketWriteAnswer::Status::OutcomeUnknown,
                QStringLiteral("fault plan: the answer was lost after the commit"));
        }
        switch (answer.status) {
        case TicketWriteAnswer::Status::Created:
            return AttemptResult::completed(
                ToolResult::ok(created(language), withReplayFlag(answer.ticket, false)));
        case TicketWriteAnswer::Status::AlreadyExisted:
            return AttemptResult::completed(
                ToolResult::ok(created(language), withReplayFlag(answer.ticket, true)));
        case TicketWriteAnswer::Status::NotFound:
            return AttemptResult::completed(
                ToolResult::failure(SupportCode::OrderNotFound, language));
        case TicketWriteAnswer::Status::Conflict:
            return AttemptResult::completed(
                ToolResult::failure(ResultCode::IdempotencyConflict, language));
        case TicketWriteAnswer::Status::Rejected:
            return AttemptResult::rejected(QStringLiteral("createTicket: ") + answer.detail);
        case TicketWriteAnswer::Status::AccessDenied:
            return AttemptResult::accessDenied(QStringLiteral("createTicket: ") + answer.detail);
        case TicketWriteAnswer::Status::Transient:
            // Nothing was committed: the executor may retry, and the retry asks first anyway.
            return AttemptResult::transient(QStringLiteral("createTicket: ") + answer.detail,
                                            answer.retryAfter);
        case TicketWriteAnswer::Status::OutcomeUnknown:
            break;
        }
        // The request may have been committed: learn the key's status before anything else.
        qCWarning(lcTools).noquote()
            << "createTicket outcome unknown, asking for the status:" << answer.detail;
        const TicketStatusAnswer status = m_backend->status(attempt.idempotencyKey, context,
                                                            attempt.cancellation);
        if (status.status == TicketStatusAnswer::Status::Exists)
            return AttemptResult::completed(
                ToolResult::ok(created(language), withReplayFlag(status.ticket, false)));
        if (status.status == TicketStatusAnswer::Status::DoesNotExist)
            return AttemptResult::transient(QStringLiteral("createTicket: not committed"));
        qCWarning(lcTools).noquote() << "createTicket status unknown:" << status.detail;
        return AttemptResult::completed(unknown(language));
    }

private:
    std::optional<AttemptResult> injectedFailure(const FaultPlan &faults,
                                                 const QJsonObject &arguments,
                                                 const AttemptContext &attempt,
                                                 Language language) const
    {
        if (faults.isEmpty())
            return std::nullopt;
        const QString callKey = QString::fromUtf8(
            QJsonDocument(arguments).toJson(QJsonDocument::Compact));
        switch (faults.apply(name(), callKey, attempt.attempt, attempt.cancellation)) {
        case FaultEffect::None:
            return std::nullopt;
        case FaultEffect::Transient:
            return AttemptResult::transient(QStringLiteral("fault plan: transient failure"));
        case FaultEffect::Cancelled:
            return AttemptResult::transient(QStringLiteral("fault plan: cancelled while waiting"));
        case FaultEffect::Permanent:
            return AttemptResult::rejected(faults.rejectionDetail(name()));
        case FaultEffect::AccessDenied:
            return AttemptResult::accessDenied(QStringLiteral("fault plan: access denied"));
        case FaultEffect::NotFound:
            return AttemptResult::completed(
                ToolResult::failure(SupportCode::OrderNotFound, language));
        case FaultEffect::InternalError:
            throwInjectedToolBug(name());
        }
        return std::nullopt;
    }
    bool losesAnswer(const FaultPlan &faults) const
    {
        // The tool's own entry, else the backend's: a backend that loses answers loses this.
        const auto fault = faults.effectiveFaultFor(name());
        return fault && fault->commitThenLoseAnswer;
    }

    static QString created(Language language)
    {
        return localized(language, "Ticket created", "工单已创建");
    }
    static ToolResult unknown(Language language)
    {
        return ToolResult::failure(ResultCode::ExecutionStatusUnknown, language);
    }

    ToolDescriptor m_descriptor;
    ArgumentSchema m_schema;
    std::shared_ptr<const TicketBackend> m_backend;
    std::shared_ptr<const LiveFaults> m_faults;
};

} // namespace

ToolDescriptor ticketToolDescriptor()
{
    ToolDescriptor descriptor;
    descriptor.name = SupportToolNames::CreateTicket;
    descriptor.description = QStringLiteral(
        "Create an after-sales ticket for an order (return, exchange, refund, damaged or "
        "missing item). Has side effects: the staff member confirms it first. "
        "创建售后工单（需客服确认）。");
    descriptor.parameters = ticketSchema();
    descriptor.hasSideEffects = true;
    descriptor.service = QStringLiteral("tickets");
    descriptor.labels.title = QStringLiteral(
        QT_TRANSLATE_NOOP("ToolLabels", "Create an after-sales ticket"));
    descriptor.labels.confirmTitle = QStringLiteral(
        QT_TRANSLATE_NOOP("ToolLabels", "Confirm: create an after-sales ticket"));
    descriptor.labels.confirmAction = QStringLiteral(
        QT_TRANSLATE_NOOP("ToolLabels", "Create ticket"));
    descriptor.labels.arguments = {
        {QStringLiteral("orderId"), QStringLiteral(QT_TRANSLATE_NOOP("ToolLabels", "Order"))},
        {QStringLiteral("category"), QStringLiteral(QT_TRANSLATE_NOOP("ToolLabels", "Category")),
         ticketCategoryLabels()},
        {QStringLiteral("description"),
         QStringLiteral(QT_TRANSLATE_NOOP("ToolLabels", "Description"))}};
    descriptor.labels.created = {QStringLiteral("ticketId"),
                                 QStringLiteral(QT_TRANSLATE_NOOP("ToolLabels", "Ticket"))};
    descriptor.labels.finding = QStringLiteral(
        QT_TRANSLATE_NOOP("ToolLabels", "{ticketId} · {category}"));
    descriptor.labels.resultValues = {{QStringLiteral("category"), {}, ticketCategoryLabels()}};
    descriptor.labels.priorWrites = QStringLiteral(
        QT_TRANSLATE_NOOP("ToolLabels", "This order's tickets"));
    descriptor.labels.likelyDuplicate = QStringLiteral(
        QT_TRANSLATE_NOOP("ToolLabels", "%1 already has a “%2” ticket %3"));
    // An agent who asks twice for the same ticket is told before the second one is made.
    descriptor.priorWrites.lookup = SupportToolNames::OrderTickets;
    descriptor.priorWrites.lookupArguments = {QStringLiteral("orderId")};
    descriptor.priorWrites.listKey = QStringLiteral("tickets");
    descriptor.priorWrites.idKey = QStringLiteral("ticketId");
    descriptor.priorWrites.sameFields = {QStringLiteral("orderId"), QStringLiteral("category")};
    return descriptor;
}

void registerTicketTool(ToolRegistry &registry, std::shared_ptr<const TicketBackend> backend,
                        std::shared_ptr<const LiveFaults> faults)
{
    registry.add(std::make_shared<CreateTicketTool>(std::move(backend), std::move(faults)));
}

} // namespace AgentConsole
