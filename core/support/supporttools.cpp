#include "supporttools.h"

#include "../faults/faultplan.h"
#include "../faults/livefaults.h"
#include "../tools/argumentschema.h"
#include "../tools/toolregistry.h"
#include "createtickettool.h"
#include "supportbackend.h"
#include "supportfailures.h"
#include "supporttoolnames.h"
#include "ticketbackend.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QtGlobal>

namespace AgentConsole {
namespace {

QJsonObject stringProperty(const QString &pattern, const QString &description)
{
    return QJsonObject{{QStringLiteral("type"), QStringLiteral("string")},
                       {QStringLiteral("pattern"), pattern},
                       {QStringLiteral("description"), description}};
}

QJsonObject objectSchema(const QString &property, const QJsonObject &schema)
{
    return QJsonObject{{QStringLiteral("type"), QStringLiteral("object")},
                       {QStringLiteral("properties"), QJsonObject{{property, schema}}},
                       {QStringLiteral("required"), QJsonArray{property}},
                       {QStringLiteral("additionalProperties"), false}};
}

const QString kOrderIdPattern = QStringLiteral("^A\\d{4,10}$");
const QString kSkuPattern = QStringLiteral("^SKU-\\d{1,10}$");

ToolResult orderNotFound(const QString &orderId, Language language)
{
    return ToolResult::failure(SupportCode::OrderNotFound, language,
                               {language == Language::Chinese
                                    ? QStringLiteral("未找到订单 %1").arg(orderId)
                                    : QStringLiteral("There is no order %1").arg(orderId)});
}

// Staff words for the enumerated fields the lookups answer with (a card's finding).
QList<ToolLabels::Value> orderStatusLabels()
{
    return {{QStringLiteral("PENDING_PAYMENT"),
             QStringLiteral(QT_TRANSLATE_NOOP("ToolLabels", "Awaiting payment"))},
            {QStringLiteral("PAID"), QStringLiteral(QT_TRANSLATE_NOOP("ToolLabels", "Paid"))},
            {QStringLiteral("SHIPPED"),
             QStringLiteral(QT_TRANSLATE_NOOP("ToolLabels", "Shipped"))},
            {QStringLiteral("DELIVERED"),
             QStringLiteral(QT_TRANSLATE_NOOP("ToolLabels", "Delivered"))},
            {QStringLiteral("CANCELLED"),
             QStringLiteral(QT_TRANSLATE_NOOP("ToolLabels", "Cancelled"))}};
}

QList<ToolLabels::Value> shipmentStatusLabels()
{
    return {{QStringLiteral("IN_TRANSIT"),
             QStringLiteral(QT_TRANSLATE_NOOP("ToolLabels", "In transit"))},
            {QStringLiteral("OUT_FOR_DELIVERY"),
             QStringLiteral(QT_TRANSLATE_NOOP("ToolLabels", "Out for delivery"))},
            {QStringLiteral("DELIVERED"),
             QStringLiteral(QT_TRANSLATE_NOOP("ToolLabels", "Delivered"))}};
}

QList<ToolLabels::Value> stockStatusLabels()
{
    return {{QStringLiteral("IN_STOCK"),
             QStringLiteral(QT_TRANSLATE_NOOP("ToolLabels", "In stock"))},
            {QStringLiteral("LOW_STOCK"),
             QStringLiteral(QT_TRANSLATE_NOOP("ToolLabels", "Low stock"))},
            {QStringLiteral("OUT_OF_STOCK"),
             QStringLiteral(QT_TRANSLATE_NOOP("ToolLabels", "Out of stock"))}};
}

// A read-only lookup as the model and the window know it.
ToolDescriptor lookupDescriptor(QLatin1String name, const QString &description,
                                const QJsonObject &parameters, const QString &service,
                                const char *title, const char *finding,
                                QList<ToolLabels::Value> statusLabels = {})
{
    ToolDescriptor descriptor;
    descriptor.name = name;
    descriptor.description = description;
    descriptor.parameters = parameters;
    descriptor.service = service;
    descriptor.labels.title = QString::fromUtf8(title);
    descriptor.labels.arguments = {
        {QStringLiteral("orderId"), QStringLiteral(QT_TRANSLATE_NOOP("ToolLabels", "Order"))},
        {QStringLiteral("sku"), QStringLiteral(QT_TRANSLATE_NOOP("ToolLabels", "SKU"))}};
    descriptor.labels.finding = QString::fromUtf8(finding);
    if (!statusLabels.isEmpty())
        descriptor.labels.resultValues = {{QStringLiteral("status"), {}, statusLabels}};
    return descriptor;
}

// The shared shape of the three read-only tools: validate once, then per attempt apply the
// fault plan (where a real downstream would misbehave) and ask the backend, whichever it is.
class BackendTool : public AgentTool
{
public:
    BackendTool(ToolDescriptor descriptor, QString argumentName, SupportLookup lookup,
                std::shared_ptr<const SupportBackend> backend,
                std::shared_ptr<const LiveFaults> faults)
        : m_descriptor(std::move(descriptor))
        , m_argumentName(std::move(argumentName))
        , m_lookup(lookup)
        , m_schema(m_descriptor.parameters)
        , m_backend(std::move(backend))
        , m_faults(std::move(faults))
    {
    }

    ToolDescriptor descriptor() const final { return m_descriptor; }

    std::optional<ToolResult> precheck(const QJsonObject &arguments,
                                       const TrustedContext &context) const final
    {
        if (!context.isComplete()) {
            return ToolResult::failure(
                ResultCode::ContextMissing, context.language,
                {localized(context.language,
                           "The console must supply the staff member's user and tenant",
                           "应用必须提供当前客服的 userId 与 tenantId")});
        }
        const QStringList invalid = m_schema.invalidFields(arguments);
        if (invalid.isEmpty())
            return std::nullopt;
        QStringList errors;
        for (const QString &field : invalid)
            errors.append(field == m_argumentName
                              ? formatHint(context.language)
                              : localized(context.language, "Missing or unexpected arguments",
                                          "缺少参数或包含未知参数"));
        return ToolResult::failure(ResultCode::InvalidArgument, context.language, errors);
    }

    AttemptResult attempt(const QJsonObject &arguments, const TrustedContext &context,
                          const AttemptContext &attempt) const final
    {
        const QString key = arguments.value(m_argumentName).toString();
        if (m_faults) {
            const QString callKey = QString::fromUtf8(
                QJsonDocument(arguments).toJson(QJsonDocument::Compact));
            // Read when the attempt starts: a change in the fault panel applies from here.
            const std::shared_ptr<const FaultPlan> plan = m_faults->current();
            switch (plan->apply(name(), callKey, attempt.attempt, attempt.cancellation)) {
            case FaultEffect::None:
                break;
            case FaultEffect::Transient:
                return AttemptResult::transient(QStringLiteral("fault plan: transient failure"));
            case FaultEffect::Cancelled:
                return AttemptResult::transient(
                    QStringLiteral("fault plan: cancelled while waiting"));
            case FaultEffect::Permanent:
                return AttemptResult::rejected(plan->rejectionDetail(name()));
            case FaultEffect::AccessDenied:
                return AttemptResult::accessDenied(QStringLiteral("fault plan: access denied"));
            case FaultEffect::NotFound:
                return AttemptResult::completed(notFound(key, context.language));
            case FaultEffect::InternalError:
                throwInjectedToolBug(name());
            }
        }
        LookupAnswer answer = m_backend->lookup(m_lookup, key, context, attempt.cancellation);
        switch (answer.status) {
        case LookupAnswer::Status::Found:
            return AttemptResult::completed(
                ToolResult::ok(foundMessage(context.language), answer.data));
        case LookupAnswer::Status::NotFound:
            // The backend may say that the order itself does not exist (asked for its
            // shipment): that is told as it is, never as "no logistics record yet".
            if (answer.notFoundCode == SupportCode::OrderNotFound
                && m_lookup != SupportLookup::Order)
                return AttemptResult::completed(orderNotFound(key, context.language));
            return AttemptResult::completed(notFound(key, context.language));
        case LookupAnswer::Status::Transient:
            return AttemptResult::transient(std::move(answer.detail), answer.retryAfter);
        case LookupAnswer::Status::Rejected:
            return AttemptResult::rejected(std::move(answer.detail));
        case LookupAnswer::Status::AccessDenied:
            return AttemptResult::accessDenied(std::move(answer.detail));
        }
        return AttemptResult::transient(QStringLiteral("backend: unknown answer"));
    }

protected:
    virtual ToolResult notFound(const QString &key, Language language) const = 0;
    virtual QString foundMessage(Language language) const = 0;
    virtual QString formatHint(Language language) const = 0;

private:
    ToolDescriptor m_descriptor;
    QString m_argumentName;
    SupportLookup m_lookup;
    ArgumentSchema m_schema;
    std::shared_ptr<const SupportBackend> m_backend;
    std::shared_ptr<const LiveFaults> m_faults;
};

QString orderFormatHint(Language language)
{
    return localized(language,
                     "Order numbers are the letter A followed by 4 to 10 digits, e.g. A1001",
                     "订单编号格式错误，应为大写字母 A 加 4～10 位数字，例如 A1001");
}

class OrderStatusTool final : public BackendTool
{
public:
    using BackendTool::BackendTool;

protected:
    ToolResult notFound(const QString &key, Language language) const override
    {
        return orderNotFound(key, language);
    }
    QString foundMessage(Language language) const override
    {
        return localized(language, "Order found", "订单查询成功");
    }
    QString formatHint(Language language) const override { return orderFormatHint(language); }
};

class LogisticsTool final : public BackendTool
{
public:
    using BackendTool::BackendTool;

protected:
    ToolResult notFound(const QString &key, Language language) const override
    {
        return ToolResult::failure(
            SupportCode::LogisticsNotFound, language,
            {language == Language::Chinese
                 ? QStringLiteral("订单 %1 暂无可用物流信息").arg(key)
                 : QStringLiteral("Order %1 has no logistics record yet").arg(key)});
    }
    QString foundMessage(Language language) const override
    {
        return localized(language, "Logistics found", "物流查询成功");
    }
    QString formatHint(Language language) const override { return orderFormatHint(language); }
};

class InventoryTool final : public BackendTool
{
public:
    using BackendTool::BackendTool;

protected:
    ToolResult notFound(const QString &key, Language language) const override
    {
        return ToolResult::failure(SupportCode::SkuNotFound, language,
                                   {language == Language::Chinese
                                        ? QStringLiteral("未找到商品 %1").arg(key)
                                        : QStringLiteral("There is no SKU %1").arg(key)});
    }
    QString foundMessage(Language language) const override
    {
        return localized(language, "Stock found", "库存查询成功");
    }
    QString formatHint(Language language) const override
    {
        return localized(language, "SKUs look like SKU-100", "商品编号格式错误，例如 SKU-100");
    }
};

class OrderTicketsTool final : public BackendTool
{
public:
    using BackendTool::BackendTool;

protected:
    ToolResult notFound(const QString &key, Language language) const override
    {
        return orderNotFound(key, language);
    }
    QString foundMessage(Language language) const override
    {
        return localized(language, "Tickets listed", "工单查询成功");
    }
    QString formatHint(Language language) const override { return orderFormatHint(language); }
};

} // namespace

void registerSupportTools(ToolRegistry &registry, std::shared_ptr<const SupportStore> store,
                          std::shared_ptr<const LiveFaults> faults)
{
    registerSupportTools(registry, std::make_shared<StoreSupportBackend>(std::move(store)),
                         std::move(faults));
}

void registerSupportTools(ToolRegistry &registry, std::shared_ptr<const SupportBackend> backend,
                          std::shared_ptr<const LiveFaults> faults)
{
    Q_ASSERT(backend);
    const QString orderIdText = QStringLiteral(
        "Order number: the capital letter A followed by 4 to 10 digits, e.g. A1001 "
        "(订单编号，格式为大写字母 A 加 4～10 位数字)");
    registry.add(std::make_shared<OrderStatusTool>(
        lookupDescriptor(
            SupportToolNames::OrderStatus,
            QStringLiteral("Look up an order's status, date, amount and items. "
                           "Use when the customer asks about an order's state. "
                           "Read-only. 查询订单状态，只读。"),
            objectSchema(QStringLiteral("orderId"), stringProperty(kOrderIdPattern, orderIdText)),
            QStringLiteral("orders"), QT_TRANSLATE_NOOP("ToolLabels", "Look up an order"),
            QT_TRANSLATE_NOOP("ToolLabels", "{status} · {totalAmount} {currency}"),
            orderStatusLabels()),
        QStringLiteral("orderId"), SupportLookup::Order, backend, faults));
    registry.add(std::make_shared<LogisticsTool>(
        lookupDescriptor(
            SupportToolNames::Logistics,
            QStringLiteral("Look up an order's shipment: carrier, tracking number, "
                           "current location, delivery status. Use when the "
                           "customer asks where a parcel is or whether it was "
                           "delivered. Read-only. 查询物流信息，只读。"),
            objectSchema(QStringLiteral("orderId"), stringProperty(kOrderIdPattern, orderIdText)),
            QStringLiteral("logistics"), QT_TRANSLATE_NOOP("ToolLabels", "Track a shipment"),
            QT_TRANSLATE_NOOP("ToolLabels", "{status} · {currentLocation}"),
            shipmentStatusLabels()),
        QStringLiteral("orderId"), SupportLookup::Logistics, backend, faults));
    registry.add(std::make_shared<InventoryTool>(
        lookupDescriptor(
            SupportToolNames::Inventory,
            QStringLiteral("Look up a SKU's stock: units available and whether it "
                           "is in stock, low or out of stock. Read-only. "
                           "查询商品库存，只读。"),
            objectSchema(QStringLiteral("sku"),
                         stringProperty(kSkuPattern, QStringLiteral("SKU code, e.g. SKU-100"))),
            QStringLiteral("inventory"), QT_TRANSLATE_NOOP("ToolLabels", "Check stock"),
            QT_TRANSLATE_NOOP("ToolLabels", "{status} · {available} available"),
            stockStatusLabels()),
        QStringLiteral("sku"), SupportLookup::Inventory, backend, faults));
    // The ticket service's read: the console also asks it before a ticket is confirmed, to
    // show staff what the order already has (createTicket's PriorWritesCheck).
    registry.add(std::make_shared<OrderTicketsTool>(
        lookupDescriptor(
            SupportToolNames::OrderTickets,
            QStringLiteral("List an order's after-sales tickets, newest first: "
                           "ticket id, category, status, when and by whom. Use "
                           "when the customer asks about existing tickets. "
                           "Read-only. 查询订单的售后工单，只读。"),
            objectSchema(QStringLiteral("orderId"), stringProperty(kOrderIdPattern, orderIdText)),
            QStringLiteral("tickets"), QT_TRANSLATE_NOOP("ToolLabels", "List an order's tickets"),
            QT_TRANSLATE_NOOP("ToolLabels", "Tickets: {tickets#}")),
        QStringLiteral("orderId"), SupportLookup::OrderTickets, backend, faults));
}

KnownTools knownToolsOf(const ToolRegistry &registry)
{
    KnownTools known;
    for (const ToolDescriptor &tool : registry.descriptors()) {
        known.names.append(tool.name);
        if (tool.hasSideEffects)
            known.writes.append(tool.name);
    }
    return known;
}

KnownTools supportKnownTools()
{
    ToolRegistry registry;
    registerSupportTools(registry, std::shared_ptr<const SupportBackend>(), nullptr);
    registerTicketTool(registry, std::shared_ptr<const TicketBackend>());
    return knownToolsOf(registry);
}

} // namespace AgentConsole
