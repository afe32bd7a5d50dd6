#include "supportquestion.h"

#include "../supporttoolnames.h"
#include "keywordtypos.h"

#include <QRegularExpression>

#include <algorithm>

namespace AgentConsole::Internal {

QString toolNameFor(LookupKind kind)
{
    switch (kind) {
    case LookupKind::OrderStatus:
        return SupportToolNames::OrderStatus;
    case LookupKind::Logistics:
        return SupportToolNames::Logistics;
    case LookupKind::Inventory:
        return SupportToolNames::Inventory;
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

QString createTicketToolName()
{
    return SupportToolNames::CreateTicket;
}

namespace {

// When a parcel will be there: "when will it get here", "ETA", "什么时候到", "多久能收到". Not
// when an order ships ("什么时候发货", "when will it be shipped": its status) nor when money
// arrives ("退款什么时候到账", "when will the refund come through").
const QString &arrivalWords()
{
    static const QString words = QStringLiteral(
        "(?:什么时候|啥时候|什么时间|几时|何时|哪天|哪一天|几号|多久|多长时间|几天)"
        "(?:才|能|会|可以|就|能够)?(?:到|送到|送达|收到|寄到)(?![账期款]|退款|钱)|"
        "\\bwhen\\b[^.?!;,。？！；，]{0,40}?\\b(?:get(?:s|ting)?\\s+(?:here|there|to\\s+"
        "(?:me|us|them|him|her|the customer))|arriv\\w*|come|coming|be\\s+(?:here|there|"
        "delivered)|show(?:s|ing)?\\s+up|turn(?:s|ing)?\\s+up|reach(?:es)?|expect(?:ed)?|"
        "land)\\b(?!\\s+(?:through|back))|"
        "\\beta\\b|\\bestimated\\s+(?:time\\s+of\\s+)?arrival\\b|"
        "\\bhow\\s+long\\b[^.?!;,。？！；，]{0,40}?\\b(?:take|takes|until|till|before|get|gets|"
        "arrive|come)\\b");
    return words;
}

// English words are matched between \b boundaries. Without Unicode properties PCRE treats Han
// characters as non-word characters, so "A1001where" does not match but "到where" does.
const QRegularExpression &logisticsWords()
{
    static const QRegularExpression re(
        QStringLiteral("物流|快递|快件|包裹|配送|到哪|在哪|位置|派送|签收|运单|运输|送达|送到|"
                       "寄到|揽收|在路上|到了吗|到了没|"
                       "\\bwheres?\\b|\\blogistics?\\b|\\bship(?:ping|ment|ments)\\b|"
                       "\\btrack(?:ing)?\\b|\\bdeliver(?:y|ed|ies)?\\b|\\blocat(?:ion|ed)\\b|"
                       "\\bparcels?\\b|\\bpackages?\\b|\\bcouriers?\\b|\\bin transit\\b|"
                       "\\barriv(?:e|ed|al)\\b|%1")
            .arg(arrivalWords()),
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

// A SKU has one lookup, so these words only change the plan of a follow-up (which earlier
// subject it asks about); otherwise they shape the reply that asks for a missing identifier.
// "还有" only before what asks for a quantity: it is "and also" too ("还有它的物流呢").
const QRegularExpression &stockWords()
{
    static const QRegularExpression re(
        QStringLiteral("库存|存货|有货|现货|缺货|没货|断货|售罄|卖完|补货|还有(?=吗|没有|多少|几)|"
                       "\\bstock\\b|\\binventory\\b|\\bavailab\\w*|\\bsold out\\b"),
        QRegularExpression::CaseInsensitiveOption);
    return re;
}

// Words that point back at an earlier subject. In Chinese also the elliptical follow-up: a
// question that starts with "那" ("那物流呢") or ends with "呢" ("状态呢？"). In English a
// question that starts with "and", "also" or "then" ("and the status?").
const QRegularExpression &referringWords()
{
    static const QRegularExpression re(
        QStringLiteral(
            "(?<!其)它|(?:这|那|该)(?:个|笔|单|张|件|款)?(?:订单|商品|货|包裹|快递)|这单|那单|"
            "这笔|那笔|这款|那款|同一(?:个|笔)?订单|^\\s*那|呢\\s*[？?！!。.…～~]*\\s*$|"
            "\\bit\\b|\\bits\\b|\\bthe same\\b|"
            "\\b(?:that|this|same)\\s+(?:order|one|sku|item|product|parcel|package)\\b|"
            "\\bwhat about\\b|\\bhow about\\b|^\\s*(?:and|also|then|plus)\\b|"
            "\\bsame for\\b|\\bas well\\b|\\btoo\\s*[?.!]*\\s*$|"
            "^\\s*(?:还有|另外|再(?:查|看)(?:一下|看)?)"),
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
    static const QRegularExpression re(QStringLiteral(
                                           "以及|和|及|与|跟|还有|另外|并且|同时|&|"
                                           "\\band\\b|\\bplus\\b|\\balso\\b|\\bas well as\\b"),
                                       QRegularExpression::CaseInsensitiveOption);
    return re;
}

// Between the letters and the digits of an identifier: a dash (ASCII, Unicode or full-width)
// with perhaps a space either side, or a space alone (ASCII or ideographic).
const QString &dashSeparator()
{
    static const QString dash = QStringLiteral(
        "[ \\x{3000}]?[-\\x{2010}-\\x{2013}\\x{FF0D}][ \\x{3000}]?");
    return dash;
}

const QString &spaceSeparator()
{
    static const QString space = QStringLiteral("[ \\x{3000}]");
    return space;
}

// "SKU-200", "sku200", "SKU 200": captures the digits.
const QRegularExpression &skuPattern()
{
    static const QRegularExpression re(QStringLiteral(
                                           "(?<![A-Za-z0-9_-])sku(?:%1|%2)?(\\d+)(?![A-Za-z0-9_])")
                                           .arg(dashSeparator(), spaceSeparator()),
                                       QRegularExpression::CaseInsensitiveOption);
    return re;
}

// An amount or a duration after "A " makes it the article before a number: "A 2000 yuan
// refund for A1001" names one order, not two.
const QString &quantityAhead()
{
    static const QString units = QStringLiteral(
        "(?![ \\x{3000}]*(?:元|块|件|个|分钟|小时|天|年|%|(?i:yuan|rmb|cny|usd|dollars?|pcs|"
        "pieces?|units?|items?|minutes?|hours?|days?|years?)\\b))");
    return units;
}

// Deliberately wider than the executor's ^A\d{4,10}$ when written as one word ("A12",
// "a12"): near-misses are passed on as written. Written apart only with a valid number of
// digits, and "a 1001" not at all (see SupportQuestion). Captures the digits.
const QRegularExpression &orderIdPattern()
{
    static const QRegularExpression re(
        QStringLiteral("(?<![A-Za-z0-9_-])"
                       "(?:[Aa](\\d+)|A%1(\\d{4,10})|A%2(\\d{4,10})%3|a%1(\\d{4,10}))"
                       "(?![A-Za-z0-9_])")
            .arg(dashSeparator(), spaceSeparator(), quantityAhead()));
    return re;
}

// The digits of a valid order id and of a valid SKU, as the tools' argument schemas say.
bool isValidOrderNumber(QStringView digits)
{
    return digits.size() >= 4 && digits.size() <= 10;
}

bool isValidSkuNumber(QStringView digits)
{
    return digits.size() >= 1 && digits.size() <= 10;
}

// The canonical form when the digits make a valid identifier; otherwise as written.
QString normalisedOrderId(const QRegularExpressionMatch &match)
{
    const QString digits = match.captured(1) + match.captured(2) + match.captured(3)
        + match.captured(4);
    return isValidOrderNumber(digits) ? QLatin1Char('A') + digits : match.captured();
}

QString normalisedSku(const QRegularExpressionMatch &match)
{
    const QString digits = match.captured(1);
    return isValidSkuNumber(digits) ? QStringLiteral("SKU-") + digits : match.captured().toUpper();
}

// A ticket is a write, so it takes both a ticket word and a creating word: "what is the
// status of the ticket?" or "create" alone never plan one.
const QRegularExpression &ticketNouns()
{
    static const QRegularExpression re(QStringLiteral(
                                           "工单|售后|\\btickets?\\b|\\bafter[- ]?sales?\\b"),
                                       QRegularExpression::CaseInsensitiveOption);
    return re;
}

// "开" and "建" only before what they create: "开始" or "建议" say nothing about tickets.
const QRegularExpression &ticketVerbs()
{
    static const QRegularExpression re(
        QStringLiteral("提交|创建|新建|新开|发起|登记|申请|"
                       "开(?=个|一个|张|一张|工单|售后|单)|建(?=个|一个|张|一张|工单)|"
                       "\\bopen\\b|\\bcreate\\b|\\bfile\\b|\\braise\\b|"
                       "\\bsubmit\\b|\\blog\\b|\\bnew\\b"),
        QRegularExpression::CaseInsensitiveOption);
    return re;
}

struct CategoryWords
{
    QString category;
    QRegularExpression words;
};

// The executor's categories, each with the words that name it. OTHER has none.
const QList<CategoryWords> &categoryWords()
{
    static const QRegularExpression::PatternOptions ci = QRegularExpression::CaseInsensitiveOption;
    static const QList<CategoryWords> table{
        {QStringLiteral("DAMAGED"),
         QRegularExpression(
             QStringLiteral(
                 "破损|损坏|摔碎|碎了|坏了|坏掉|破了|破裂|碎裂|裂了|裂开|开裂|裂痕|裂纹|"
                 "裂缝|变形|凹陷|压扁|瘪了|划痕|划伤|刮花|磕碰|漏液|受潮|泡水|"
                 "(?:摔|压|磕|碰|弄|砸|撞|挤)(?:坏|碎|破|裂|扁|瘪)|"
                 "\\bbroken\\b|\\bbroke\\b|\\bdamaged?\\b|\\bcracked\\b|"
                 "\\bcracks?\\b|\\bshattered\\b|\\bsmashed\\b|\\bcrushed\\b|"
                 "\\bdented\\b|\\bdents?\\b|\\bscratch(?:ed|es)\\b|\\btorn\\b|"
                 "\\bripped\\b|\\bchipped\\b|\\bsquashed\\b|\\bleak(?:ed|ing|s)\\b|"
                 "\\bbent\\b|\\bbusted\\b|\\bsnapped\\b|\\bwrecked\\b"),
             ci)},
        {QStringLiteral("REFUND"),
         QRegularExpression(QStringLiteral("退款|\\brefund(?:s|ed|ing)?\\b"), ci)},
        {QStringLiteral("RETURN"),
         QRegularExpression(QStringLiteral("退货|\\breturn(?:s|ed|ing)?\\b"), ci)},
        {QStringLiteral("EXCHANGE"),
         QRegularExpression(QStringLiteral("换货|调换|\\bexchang(?:e|es|ed|ing)\\b"), ci)},
        {QStringLiteral("MISSING_ITEM"),
         QRegularExpression(QStringLiteral("少件|漏发|少发|缺件|\\bmissing\\b"), ci)},
    };
    return table;
}

// Where the stated reason starts: "...: the mug arrived broken", "原因：尺码不合适". A colon
// between digits ("10:30") is a time, not a reason.
const QRegularExpression &reasonMarker()
{
    static const QRegularExpression re(
        QStringLiteral("(?<!\\d):|:(?!\\d)|：|\\breason(?:\\s+(?:is|being))?\\b\\s*[:：]?|"
                       "原因(?:是|为)?\\s*[:：]?"),
        QRegularExpression::CaseInsensitiveOption);
    return re;
}

// A clause that asks something: a question or a request to look up. In a ticket request only
// these plan lookups; "A1001 was delivered yesterday" or "A1001 的快递今天送到了" tell the story
// of the ticket, and nobody asked for its logistics.
const QRegularExpression &askingWords()
{
    static const QRegularExpression re(
        QStringLiteral(
            "[?？]|吗|呢|到哪|在哪|哪里|哪儿|什么|几时|多久|多少|怎么|是否|有没有|查|看看|"
            "看一下|告诉|\\b(?:where|when|what|which|how|whether|check|track|look\\s+up|"
            "find|show|tell\\s+me)\\b|^\\s*(?:is|are|was|were|has|have|had|does|do|did|"
            "can|could|will|would|any)\\b"),
        QRegularExpression::CaseInsensitiveOption);
    return re;
}

// Words that say nothing of what a ticket is about: with the ticket's own words and its order
// taken out, a request made only of these ("open a ticket for A1001", "给 A1001 创建售后工单")
// gives no reason.
const QRegularExpression &ticketFiller()
{
    static const QRegularExpression re(
        QStringLiteral(
            "\\b(?:please|pls|plz|kindly|can|could|would|will|you|u|help|me|us|i|we|"
            "to|a|an|the|for|of|on|about|against|regarding|re|with|order|orders|"
            "number|no|id|just|quickly|now|need|needs|want|wants|like|let|lets|go|"
            "ahead|and|also|it|its|this|that|one|customer|customers|hi|hello|hey|"
            "thanks|thank|ok|okay|up|sales|after|item|support|service|is|be|there|"
            "here|s)\\b|请|麻烦|帮忙|帮|我们|我|你|您|给|为|替|把|对|针对|关于|一下|一个|"
            "一张|一单|个|张|订单号|订单|的|吧|呢|吗|了|啊|呀|要|想|需要|客户|顾客|它|"
            "这个|那个|这|那|该|新|号|下|[\\s\\p{P}\\p{S}]"),
        QRegularExpression::CaseInsensitiveOption);
    return re;
}

// The staff member takes a request back, or only greets: no ticket is filed with that text.
const QRegularExpression &noReasonReplies()
{
    static const QRegularExpression re(
        QStringLiteral(
            "算了|不用了|不需要了|不要了|先不|取消|别开|\\bnever\\s*mind\\b|\\bcancel\\b|"
            "\\bforget\\s+it\\b|\\bnot\\s+now\\b|\\bno\\s+thanks\\b|\\bdon'?t\\b|"
            "^\\s*(?:no|nope|hi|hello|hey|thanks|thank you|ok|okay|你好|谢谢|好的|好)"
            "\\s*[.!！。~～]*\\s*$"),
        QRegularExpression::CaseInsensitiveOption);
    return re;
}

constexpr qsizetype maxDescriptionLength = 500; // the executor's limit

// The first category the question names: "退货退款" is a return, "refund ticket: it arrived
// broken" a refund. Nothing named -> OTHER.
QString categoryOf(const QString &text)
{
    QString category = QStringLiteral("OTHER");
    qsizetype first = text.size();
    for (const CategoryWords &entry : categoryWords()) {
        const QRegularExpressionMatch match = entry.words.match(text);
        if (match.hasMatch() && match.capturedStart() < first) {
            first = match.capturedStart();
            category = entry.category;
        }
    }
    return category;
}

bool namesCategory(const QString &text)
{
    return std::any_of(categoryWords().cbegin(), categoryWords().cend(),
                       [&text](const CategoryWords &entry) {
                           return entry.words.match(text).hasMatch();
                       });
}

QString limitedDescription(QString description)
{
    if (description.size() > maxDescriptionLength) {
        qsizetype cut = maxDescriptionLength;
        // Never split a surrogate pair: half a character is not valid text for the backend.
        if (description.at(cut - 1).isHighSurrogate())
            --cut;
        description = description.left(cut).trimmed();
    }
    return description;
}

struct Mention
{
    qsizetype position = 0;
    qsizetype length = 0; // as written: "A - 1001" is 8 characters of the question
    QString subject; // normalised
    bool isOrder = false;

    bool covers(qsizetype index) const { return index >= position && index < position + length; }
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
    Intents own; // words written in this stretch
    Intents resolved; // after borrowing from neighbours
    bool forTicket = false; // a clause that asks for a ticket, its own words blanked out

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
        found.append({match.capturedStart(), match.capturedLength(), normalisedSku(match), false});
        rest.replace(match.capturedStart(), match.capturedLength(),
                     QString(match.capturedLength(), QLatin1Char(' ')));
    }
    for (auto it = orderIdPattern().globalMatch(rest); it.hasNext();) {
        const QRegularExpressionMatch match = it.next();
        found.append(
            {match.capturedStart(), match.capturedLength(), normalisedOrderId(match), true});
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

// Whether the clause at `span` asks something: its words, or the question mark that ends it
// (clauseBreaks() leaves it outside the span).
bool isAsking(const QString &text, Span span)
{
    if (askingWords().match(text.mid(span.begin, span.end - span.begin)).hasMatch())
        return true;
    for (qsizetype i = span.end; i < text.size(); ++i) {
        const QChar c = text.at(i);
        if (c == QLatin1Char('?') || c == QChar(0xFF1F))
            return true;
        if (!c.isSpace() && !c.isPunct())
            return false;
    }
    return false;
}

Unit unitFor(const QString &text, Span span, const QList<Mention> &mentions)
{
    Unit unit{span, {}, intentsIn(text, span), {}, false};
    for (const Mention &mention : mentions) {
        if (span.contains(mention.position))
            unit.mentions.append(mention);
    }
    return unit;
}

// "Where is A1001 and what is the status of A1002": each order keeps the words of its own
// part. A part with no words of its own ("A1001 和 A1002 的物流") shares the clause's words.
QList<Unit> splitByOrders(const QString &text, const Unit &clause, const QList<Mention> &mentions)
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

// `explicitOnly`: in a ticket question an order named without lookup words is the ticket's
// subject, not a status question, so the fallback to its status is skipped.
void resolveIntents(QList<Unit> &units, bool explicitOnly)
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
        if (!unit.hasOrders() || unit.resolved.any() || unit.forTicket)
            continue;
        qsizetype source = nearestOrderUnit(units, i, -1, false);
        if (source < 0)
            source = nearestOrderUnit(units, i, +1, true);
        if (source >= 0)
            unit.resolved = units.at(source).resolved;
        else if (!explicitOnly)
            unit.resolved.status = true;
    }
}

QList<PlannedLookup> plannedLookups(const QString &text, const QList<Span> &ticketClauses,
                                    bool explicitOnly)
{
    const QList<Mention> mentions = findMentions(text);
    QList<Unit> units = unitsOf(text, mentions);
    for (Unit &unit : units) {
        unit.forTicket = std::any_of(ticketClauses.cbegin(), ticketClauses.cend(),
                                     [&unit](Span clause) {
                                         return clause.contains(unit.span.begin);
                                     });
    }
    resolveIntents(units, explicitOnly);

    QList<PlannedLookup> lookups;
    const auto add = [&lookups](LookupKind kind, const QString &subject) {
        const PlannedLookup lookup{kind, subject};
        if (!lookups.contains(lookup))
            lookups.append(lookup);
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
    return lookups;
}

// Whether `words` say anything once identifiers, ticket words and filler are taken out.
bool saysSomething(QString words)
{
    words.remove(skuPattern());
    words.remove(orderIdPattern());
    words.remove(ticketNouns());
    words.remove(ticketVerbs());
    words.remove(ticketFiller());
    return !words.isEmpty();
}

bool asksForTicket(const QString &text)
{
    return ticketNouns().match(text).hasMatch() && ticketVerbs().match(text).hasMatch();
}

// The stated reason, else the whole question, in the staff member's words (slips included).
QString ticketDescription(const QString &question)
{
    const QRegularExpressionMatch marker = reasonMarker().match(question);
    QString description;
    if (marker.hasMatch()) {
        static const QRegularExpression leading(QStringLiteral("^[\\s:：,，、-]+"));
        description = question.mid(marker.capturedEnd()).remove(leading).trimmed();
    }
    if (description.isEmpty())
        description = question.trimmed();
    return limitedDescription(description);
}

// The ticket and whatever other clauses ask for in so many words. The reason after the marker
// and the clauses about the ticket are blanked out before the lookups are planned, all but
// their order ids: "open a return ticket for A1001, and where is it?" still finds A1001 for
// "where", while "the parcel was delivered broken" is never a logistics question. `text` is
// the question with its keyword slips corrected.
void parseTicket(const QString &text, const QString &description, SupportQuestion *question)
{
    const QRegularExpressionMatch marker = reasonMarker().match(text);
    const qsizetype headEnd = marker.hasMatch() ? marker.capturedStart() : text.size();

    const QList<Mention> mentions = findMentions(text);
    QList<Span> ticketClauses;
    for (const Span clause : split(text, {0, headEnd}, clauseBreaks())) {
        const QString part = text.mid(clause.begin, clause.end - clause.begin);
        if (ticketNouns().match(part).hasMatch() || ticketVerbs().match(part).hasMatch()
            || namesCategory(part)) {
            ticketClauses.append(clause);
        }
    }

    // The ticket's order: the first one its own clauses name, else the first one anywhere
    // ("A1002 wants a refund, open a ticket" names it in a clause of its own).
    QString orderId;
    for (const Mention &mention : mentions) {
        if (!mention.isOrder)
            continue;
        const bool inTicketClause = std::any_of(ticketClauses.cbegin(), ticketClauses.cend(),
                                                [&mention](Span clause) {
                                                    return clause.contains(mention.position);
                                                });
        if (inTicketClause) {
            orderId = mention.subject;
            break;
        }
        if (orderId.isEmpty())
            orderId = mention.subject;
    }

    // The other clauses before the reason: a question asks for its lookup ("Where's A1001?
    // Also open a ticket for it"); anything else tells what the ticket is about ("A1001 was
    // delivered yesterday, open a ticket: ..."), and plans no lookup nobody asked for.
    QList<Span> aboutTicket = ticketClauses;
    QString reasonWords = marker.hasMatch() ? text.mid(marker.capturedEnd()) : QString();
    for (const Span clause : split(text, {0, headEnd}, clauseBreaks())) {
        const bool forTicket = std::any_of(ticketClauses.cbegin(), ticketClauses.cend(),
                                           [clause](Span t) { return t.begin == clause.begin; });
        if (!forTicket && isAsking(text, clause))
            continue;
        if (!forTicket)
            aboutTicket.append(clause);
        reasonWords += QLatin1Char(' ') + text.mid(clause.begin, clause.end - clause.begin);
    }

    QString rest = text;
    const auto blank = [&rest, &mentions](Span span) {
        for (qsizetype i = span.begin; i < span.end; ++i) {
            const bool keep = std::any_of(mentions.cbegin(), mentions.cend(),
                                          [i](const Mention &m) {
                                              return m.isOrder && m.covers(i);
                                          });
            if (!keep)
                rest[i] = QLatin1Char(' ');
        }
    };
    for (const Span clause : std::as_const(aboutTicket))
        blank(clause);
    rest.replace(headEnd, text.size() - headEnd, QString(text.size() - headEnd, QLatin1Char(' ')));

    question->lookups = plannedLookups(rest, aboutTicket, true);
    question->ticket = PlannedTicket{orderId, categoryOf(text), description,
                                     namesCategory(text) || saysSomething(reasonWords)};
}

} // namespace

QList<NamedSubject> subjectsNamedIn(const QString &text)
{
    QList<NamedSubject> subjects;
    for (const Mention &mention : findMentions(text)) {
        const NamedSubject subject{mention.subject, mention.isOrder};
        if (!subjects.contains(subject))
            subjects.append(subject);
    }
    return subjects;
}

SupportQuestion SupportQuestion::parse(const QString &text)
{
    const QString read = withKeywordTyposCorrected(text);
    SupportQuestion question;
    question.language = languageOf(text);
    question.asksAboutLogistics = logisticsWords().match(read).hasMatch();
    question.asksAboutStatus = statusWords().match(read).hasMatch();
    question.asksAboutStock = stockWords().match(read).hasMatch();
    question.refersBack = referringWords().match(read).hasMatch();
    if (asksForTicket(read)) {
        parseTicket(read, ticketDescription(text), &question);
        return question;
    }
    question.lookups = plannedLookups(read, {}, false);

    const QList<Mention> mentions = findMentions(read);
    const bool namesOrders = std::any_of(mentions.cbegin(), mentions.cend(),
                                         [](const Mention &m) { return m.isOrder; });
    if (namesOrders && !question.asksAboutOrders() && !question.asksAboutStock) {
        static const QRegularExpression nothingElse(
            QStringLiteral("^(?:[\\s\\p{P}\\p{S}]|\\border\\b|订单)*$"),
            QRegularExpression::CaseInsensitiveOption);
        QString rest = read;
        rest.remove(skuPattern());
        rest.remove(orderIdPattern());
        question.namesOnlyOrders = question.refersBack || nothingElse.match(rest).hasMatch();
    }
    return question;
}

void SupportQuestion::carryIntent(const QList<LookupKind> &earlierKinds)
{
    if (!namesOnlyOrders || earlierKinds.isEmpty())
        return;
    QList<PlannedLookup> carried;
    for (const PlannedLookup &lookup : std::as_const(lookups)) {
        if (lookup.kind == LookupKind::Inventory) {
            carried.append(lookup);
            continue;
        }
        for (const LookupKind kind : {LookupKind::OrderStatus, LookupKind::Logistics}) {
            const PlannedLookup next{kind, lookup.subject};
            if (earlierKinds.contains(kind) && !carried.contains(next))
                carried.append(next);
        }
    }
    lookups = carried;
}

std::optional<PlannedTicket> SupportQuestion::ticketReasonIn(const QString &text,
                                                             const QString &orderId)
{
    const QString read = withKeywordTyposCorrected(text);
    if (orderId.isEmpty() || asksForTicket(read) || noReasonReplies().match(read).hasMatch()
        || isAsking(read, {0, read.size()}) || !saysSomething(read)) {
        return std::nullopt;
    }
    for (const Mention &mention : findMentions(read)) {
        if (!mention.isOrder || mention.subject != orderId)
            return std::nullopt;
    }
    return PlannedTicket{orderId, categoryOf(read), limitedDescription(text.trimmed()), true};
}

void SupportQuestion::resolveFollowUp(const QList<NamedSubject> &earlier)
{
    if (!isFollowUp() || (!asksAboutOrders() && !asksAboutStock))
        return;
    QList<NamedSubject> orders;
    QList<NamedSubject> skus;
    for (const NamedSubject &subject : earlier)
        (subject.isOrder ? orders : skus).append(subject);

    // Both kinds must be clear: a follow-up half answered would be half guessed.
    const bool ordersUnclear = asksAboutOrders() && orders.size() > 1;
    const bool skusUnclear = asksAboutStock && skus.size() > 1;
    if (ordersUnclear || skusUnclear) {
        if (ordersUnclear)
            ambiguousSubjects += orders;
        if (skusUnclear)
            ambiguousSubjects += skus;
        return;
    }
    if ((asksAboutOrders() && orders.isEmpty()) || (asksAboutStock && skus.isEmpty()))
        return;

    if (asksAboutStatus)
        lookups.append({LookupKind::OrderStatus, orders.constFirst().subject});
    if (asksAboutLogistics)
        lookups.append({LookupKind::Logistics, orders.constFirst().subject});
    if (asksAboutStock)
        lookups.append({LookupKind::Inventory, skus.constFirst().subject});
}

} // namespace AgentConsole::Internal
