#include "supportquestion.h"

#include <QRegularExpression>

#include <algorithm>

namespace AgentConsole::Internal {

QString toolNameFor(LookupKind kind)
{
    switch (kind) {
    case LookupKind::OrderStatus:
        return QStringLiteral("queryOrderStatus");
    case LookupKind::Logistics:
        return QStringLiteral("queryLogistics");
    case LookupKind::Inventory:
        return QStringLiteral("queryInventory");
    }
    Q_UNREACHABLE();
    return {};
}

QString argumentNameFor(LookupKind kind)
{
    return kind == LookupKind::Inventory ? QStringLiteral("sku") : QStringLiteral("orderId");
}

std::optional<LookupKind> lookupKindForTool(const QString &toolName)
{
    for (const LookupKind kind :
         {LookupKind::OrderStatus, LookupKind::Logistics, LookupKind::Inventory}) {
        if (toolNameFor(kind) == toolName)
            return kind;
    }
    return std::nullopt;
}

namespace {

// English words are matched between \b boundaries. Without Unicode properties PCRE treats Han
// characters as non-word characters, so "A1001where" does not match but "到where" does.
const QRegularExpression &logisticsWords()
{
    static const QRegularExpression re(
        QStringLiteral("物流|快递|包裹|配送|到哪|在哪|位置|派送|签收|运单|运输|"
                       "\\bwhere\\b|\\bship(?:ping|ment|ments)\\b|\\btrack(?:ing)?\\b|"
                       "\\bdeliver(?:y|ed|ies)?\\b|\\blocat(?:ion|ed)\\b|\\bparcels?\\b|"
                       "\\bpackages?\\b|\\bcouriers?\\b|\\bin transit\\b"),
        QRegularExpression::CaseInsensitiveOption);
    return re;
}

// "订单" and "order" are not here on purpose: "查询订单 A1001 的物流位置" and "where is order
// A1001" ask for logistics only. An order id with no intent word falls back to its status.
const QRegularExpression &statusWords()
{
    static const QRegularExpression re(
        QStringLiteral("状态|详情|付款|支付|发货|"
                       "\\bstatus\\b|\\bdetails?\\b|\\bpaid\\b|\\bpayment\\b|\\bshipped\\b"),
        QRegularExpression::CaseInsensitiveOption);
    return re;
}

// A SKU has one lookup, so these words never change the plan; they only shape the reply
// that asks for a missing identifier.
const QRegularExpression &stockWords()
{
    static const QRegularExpression re(
        QStringLiteral("库存|有货|现货|缺货|还有|补货|"
                       "\\bstock\\b|\\binventory\\b|\\bavailab\\w*"),
        QRegularExpression::CaseInsensitiveOption);
    return re;
}

const QRegularExpression &clauseBreaks()
{
    static const QRegularExpression re(QStringLiteral("[。！？；，,;!?\\n\\r]+|\\.(?=\\s|$)"));
    return re;
}

// Only used inside a clause that names several orders, to tell whose words are whose.
// "和" inside "订单状态和物流" is a conjunction too, which is why single-order clauses are
// never split.
const QRegularExpression &conjunctions()
{
    static const QRegularExpression re(
        QStringLiteral("以及|和|及|与|跟|还有|另外|并且|同时|&|"
                       "\\band\\b|\\bplus\\b|\\balso\\b|\\bas well as\\b"),
        QRegularExpression::CaseInsensitiveOption);
    return re;
}

const QRegularExpression &skuPattern()
{
    static const QRegularExpression re(
        QStringLiteral("(?<![A-Za-z0-9_-])sku-?\\d+(?![A-Za-z0-9_])"),
        QRegularExpression::CaseInsensitiveOption);
    return re;
}

// Deliberately wider than the executor's ^A\d{4,10}$: near-misses are passed on as written.
const QRegularExpression &orderIdPattern()
{
    static const QRegularExpression re(
        QStringLiteral("(?<![A-Za-z0-9_-])[Aa]\\d+(?![A-Za-z0-9_])"));
    return re;
}

struct Mention
{
    qsizetype position = 0;
    QString subject;
    bool isOrder = false;
};

struct Span
{
    qsizetype begin = 0;
    qsizetype end = 0;

    bool contains(qsizetype position) const { return position >= begin && position < end; }
};

struct Intents
{
    bool logistics = false;
    bool status = false;

    bool any() const { return logistics || status; }
    Intents &operator|=(const Intents &other)
    {
        logistics = logistics || other.logistics;
        status = status || other.status;
        return *this;
    }
};

// A stretch of the question whose intent words belong to the identifiers inside it.
struct Unit
{
    Span span;
    QList<Mention> mentions;
    Intents own;      // words written in this stretch
    Intents resolved; // after borrowing from neighbours

    bool hasOrders() const
    {
        return std::any_of(mentions.cbegin(), mentions.cend(),
                           [](const Mention &m) { return m.isOrder; });
    }
};

QList<Mention> findMentions(const QString &text)
{
    QList<Mention> found;
    // SKUs first, blanked out, so that "SKU-A1001"-like text never yields an order id too.
    QString rest = text;
    for (auto it = skuPattern().globalMatch(text); it.hasNext();) {
        const QRegularExpressionMatch match = it.next();
        found.append({match.capturedStart(), match.captured().toUpper(), false});
        rest.replace(match.capturedStart(), match.capturedLength(),
                     QString(match.capturedLength(), QLatin1Char(' ')));
    }
    for (auto it = orderIdPattern().globalMatch(rest); it.hasNext();) {
        const QRegularExpressionMatch match = it.next();
        found.append({match.capturedStart(), match.captured(), true});
    }
    std::sort(found.begin(), found.end(),
              [](const Mention &a, const Mention &b) { return a.position < b.position; });
    return found;
}

Intents intentsIn(const QString &text, Span span)
{
    const QString part = text.mid(span.begin, span.end - span.begin);
    return {logisticsWords().match(part).hasMatch(), statusWords().match(part).hasMatch()};
}

QList<Span> split(const QString &text, Span span, const QRegularExpression &separator)
{
    QList<Span> parts;
    const QString part = text.mid(span.begin, span.end - span.begin);
    qsizetype begin = 0;
    for (auto it = separator.globalMatch(part); it.hasNext();) {
        const QRegularExpressionMatch match = it.next();
        if (match.capturedStart() > begin)
            parts.append({span.begin + begin, span.begin + match.capturedStart()});
        begin = match.capturedEnd();
    }
    if (begin < part.size())
        parts.append({span.begin + begin, span.end});
    return parts;
}

Unit unitFor(const QString &text, Span span, const QList<Mention> &mentions)
{
    Unit unit{span, {}, intentsIn(text, span), {}};
    for (const Mention &mention : mentions) {
        if (span.contains(mention.position))
            unit.mentions.append(mention);
    }
    return unit;
}

// "Where is A1001 and what is the status of A1002": each order keeps the words of its own
// part. A part with no words of its own ("A1001 和 A1002 的物流") shares the clause's words.
QList<Unit> splitByOrders(const QString &text, const Unit &clause,
                          const QList<Mention> &mentions)
{
    QList<Span> groups;
    for (const Span part : split(text, clause.span, conjunctions())) {
        const bool hasOrder = std::any_of(mentions.cbegin(), mentions.cend(),
                                          [part](const Mention &m) {
                                              return m.isOrder && part.contains(m.position);
                                          });
        if (hasOrder)
            groups.append({groups.isEmpty() ? clause.span.begin : part.begin, part.end});
        else if (!groups.isEmpty())
            groups.last().end = part.end;
    }
    if (!groups.isEmpty())
        groups.last().end = clause.span.end;

    QList<Unit> units;
    for (const Span group : groups) {
        Unit unit = unitFor(text, group, mentions);
        if (!unit.own.any())
            unit.own = clause.own;
        units.append(unit);
    }
    return units;
}

QList<Unit> unitsOf(const QString &text, const QList<Mention> &mentions)
{
    QList<Unit> units;
    for (const Span span : split(text, {0, text.size()}, clauseBreaks())) {
        const Unit clause = unitFor(text, span, mentions);
        const auto orders = std::count_if(clause.mentions.cbegin(), clause.mentions.cend(),
                                          [](const Mention &m) { return m.isOrder; });
        if (orders >= 2)
            units.append(splitByOrders(text, clause, mentions));
        else
            units.append(clause);
    }
    return units;
}

qsizetype nearestOrderUnit(const QList<Unit> &units, qsizetype from, qsizetype step,
                           bool needsIntent)
{
    for (qsizetype i = from + step; i >= 0 && i < units.size(); i += step) {
        if (units.at(i).hasOrders() && (!needsIntent || units.at(i).resolved.any()))
            return i;
    }
    return -1;
}

void resolveIntents(QList<Unit> &units)
{
    for (Unit &unit : units)
        unit.resolved = unit.own;

    // "A1001 到哪了？还有订单状态": a clause without identifiers speaks about the order before
    // it, or, when it comes first ("查一下物流，订单 A1001"), about the one after it.
    for (qsizetype i = 0; i < units.size(); ++i) {
        if (units.at(i).hasOrders() || !units.at(i).own.any())
            continue;
        qsizetype target = nearestOrderUnit(units, i, -1, false);
        if (target < 0)
            target = nearestOrderUnit(units, i, +1, false);
        if (target >= 0)
            units[target].resolved |= units.at(i).own;
    }

    // "A1001 到哪了？A1002 呢？": an order named without words asks what the previous one asked;
    // a leading bare list ("A1001, A1002 and A1003 tracking") takes the words that follow.
    for (qsizetype i = 0; i < units.size(); ++i) {
        Unit &unit = units[i];
        if (!unit.hasOrders() || unit.resolved.any())
            continue;
        qsizetype source = nearestOrderUnit(units, i, -1, false);
        if (source < 0)
            source = nearestOrderUnit(units, i, +1, true);
        if (source >= 0)
            unit.resolved = units.at(source).resolved;
        else
            unit.resolved.status = true;
    }
}

} // namespace

SupportQuestion SupportQuestion::parse(const QString &text)
{
    SupportQuestion question;
    question.language = languageOf(text);
    question.asksAboutStock = stockWords().match(text).hasMatch();
    question.asksAboutOrders = logisticsWords().match(text).hasMatch()
                               || statusWords().match(text).hasMatch();

    const QList<Mention> mentions = findMentions(text);
    QList<Unit> units = unitsOf(text, mentions);
    resolveIntents(units);

    const auto add = [&question](LookupKind kind, const QString &subject) {
        const PlannedLookup lookup{kind, subject};
        if (!question.lookups.contains(lookup))
            question.lookups.append(lookup);
    };
    for (const Unit &unit : std::as_const(units)) {
        for (const Mention &mention : unit.mentions) {
            if (!mention.isOrder) {
                add(LookupKind::Inventory, mention.subject);
                continue;
            }
            if (unit.resolved.status)
                add(LookupKind::OrderStatus, mention.subject);
            if (unit.resolved.logistics)
                add(LookupKind::Logistics, mention.subject);
        }
    }
    return question;
}

} // namespace AgentConsole::Internal
