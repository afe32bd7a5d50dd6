#include "keywordtypos.h"

#include <QHash>
#include <QRegularExpression>
#include <QStringList>

#include <algorithm>
#include <utility>

namespace AgentConsole::Internal {
namespace {

constexpr qsizetype minimumLooseLength = 5;
// A letter typed wrong is only forgiven in long keywords, and never in the first letter: the
// short ones have real words one letter apart ("status" and "statue"), and a slip on the
// first key is rare ("tracked" is a word of its own, not "cracked").
constexpr qsizetype minimumChangedLength = 7;

// The English words of supportquestion.cpp's word lists that a slip should not hide, in the
// forms staff write them. Ticket verbs are left out on purpose: a write takes words typed
// right ("created" is one letter from "create", and "crate" one short of it).
const QStringList &keywords()
{
    static const QStringList words{
        // logistics ("where" too: "there" is one letter changed, not left out or swapped)
        QStringLiteral("where"), QStringLiteral("logistics"), QStringLiteral("shipping"),
        QStringLiteral("shipment"), QStringLiteral("shipments"), QStringLiteral("tracking"),
        QStringLiteral("track"), QStringLiteral("delivery"), QStringLiteral("delivered"),
        QStringLiteral("deliveries"), QStringLiteral("deliver"), QStringLiteral("location"),
        QStringLiteral("located"), QStringLiteral("parcel"), QStringLiteral("parcels"),
        QStringLiteral("package"), QStringLiteral("packages"), QStringLiteral("courier"),
        QStringLiteral("couriers"), QStringLiteral("transit"), QStringLiteral("arrive"),
        QStringLiteral("arrived"), QStringLiteral("arrival"),
        // status
        QStringLiteral("status"), QStringLiteral("details"), QStringLiteral("detail"),
        QStringLiteral("payment"), QStringLiteral("shipped"),
        // stock
        QStringLiteral("stock"), QStringLiteral("inventory"), QStringLiteral("available"),
        QStringLiteral("availability"),
        // tickets and their categories
        QStringLiteral("ticket"), QStringLiteral("tickets"), QStringLiteral("refund"),
        QStringLiteral("refunds"), QStringLiteral("refunded"), QStringLiteral("return"),
        QStringLiteral("returns"), QStringLiteral("returned"), QStringLiteral("exchange"),
        QStringLiteral("damaged"), QStringLiteral("broken"), QStringLiteral("cracked"),
        QStringLiteral("missing"),
        // what a follow-up points back at ("that order")
        QStringLiteral("order"), QStringLiteral("orders")};
    return words;
}

// Known slips of words too short to match loosely.
const QHash<QString, QString> &shortSlips()
{
    static const QHash<QString, QString> slips{
        {QStringLiteral("stok"), QStringLiteral("stock")},
        {QStringLiteral("oder"), QStringLiteral("order")},
        {QStringLiteral("ordr"), QStringLiteral("order")},
        {QStringLiteral("trak"), QStringLiteral("track")},
        {QStringLiteral("whre"), QStringLiteral("where")},
        {QStringLiteral("wher"), QStringLiteral("where")},
        // Pinyin typed with the input method switched off.
        {QStringLiteral("wuliu"), QStringLiteral("logistics")},
        {QStringLiteral("kuaidi"), QStringLiteral("logistics")},
        {QStringLiteral("zhuangtai"), QStringLiteral("status")},
        {QStringLiteral("kucun"), QStringLiteral("stock")}};
    return slips;
}

// Real words one slip away from a keyword that mean something else.
const QStringList &otherWords()
{
    static const QStringList words{
        QStringLiteral("sipping"),   QStringLiteral("sipped"),   QStringLiteral("inventor"),
        QStringLiteral("racking"),   QStringLiteral("tacking"),  QStringLiteral("racked"),
        QStringLiteral("delver"),    QStringLiteral("retuned"),  QStringLiteral("shopping"),
        QStringLiteral("shopped"),   QStringLiteral("trucking"), QStringLiteral("skipped"),
        QStringLiteral("shipper"),   QStringLiteral("shippers"), QStringLiteral("detains"),
        QStringLiteral("inventors"), QStringLiteral("statues"),  QStringLiteral("stocky"),
        QStringLiteral("stocks"),    QStringLiteral("tracks"),   QStringLiteral("transmit"),
        QStringLiteral("returner"),  QStringLiteral("parceled"), QStringLiteral("packager"),
        QStringLiteral("arrivals"),  QStringLiteral("detailer"), QStringLiteral("missings"),
        QStringLiteral("locator"),   QStringLiteral("locater"),  QStringLiteral("deliverer"),
        QStringLiteral("skipping"),  QStringLiteral("slipping"), QStringLiteral("slipped"),
        QStringLiteral("snipping"),  QStringLiteral("snipped"),  QStringLiteral("tricking"),
        QStringLiteral("courser"),   QStringLiteral("coursers"), QStringLiteral("derails"),
        QStringLiteral("tickers"),   QStringLiteral("cracker"),  QStringLiteral("crackers"),
        QStringLiteral("massing"),   QStringLiteral("misting")};
    return words;
}

// `typed` is `keyword` with one letter left out.
bool isOneLetterShort(QStringView typed, QStringView keyword)
{
    if (typed.size() + 1 != keyword.size())
        return false;
    qsizetype i = 0;
    while (i < typed.size() && typed.at(i) == keyword.at(i))
        ++i;
    return typed.mid(i) == keyword.mid(i + 1);
}

// `typed` is `keyword` with two neighbouring letters swapped.
bool isOneSwapAway(QStringView typed, QStringView keyword)
{
    if (typed.size() != keyword.size())
        return false;
    qsizetype i = 0;
    while (i < typed.size() && typed.at(i) == keyword.at(i))
        ++i;
    return i + 1 < typed.size() && typed.at(i) == keyword.at(i + 1)
        && typed.at(i + 1) == keyword.at(i) && typed.mid(i + 2) == keyword.mid(i + 2);
}

// `typed` is `keyword` with one letter typed twice or one stray letter added, not in front
// ("border" is not "order").
bool isOneLetterLong(QStringView typed, QStringView keyword)
{
    return typed.front() == keyword.front() && isOneLetterShort(keyword, typed);
}

// `typed` is `keyword` with one letter, not the first, typed wrong.
bool isOneLetterChanged(QStringView typed, QStringView keyword)
{
    if (typed.size() != keyword.size() || keyword.size() < minimumChangedLength
        || typed.front() != keyword.front()) {
        return false;
    }
    qsizetype differences = 0;
    for (qsizetype i = 0; i < typed.size(); ++i)
        differences += typed.at(i) != keyword.at(i) ? 1 : 0;
    return differences == 1;
}

// The keyword `word` was meant to be, or an empty string when it is a word of its own.
QString intendedKeyword(const QString &word)
{
    const QString typed = word.toLower();
    if (keywords().contains(typed))
        return {};
    if (const auto slip = shortSlips().constFind(typed); slip != shortSlips().cend())
        return slip.value();
    if (typed.size() < minimumLooseLength || otherWords().contains(typed))
        return {};
    const auto match = std::find_if(keywords().cbegin(), keywords().cend(),
                                    [&typed](const QString &keyword) {
                                        return isOneLetterShort(typed, keyword)
                                            || isOneSwapAway(typed, keyword)
                                            || isOneLetterLong(typed, keyword)
                                            || isOneLetterChanged(typed, keyword);
                                    });
    return match != keywords().cend() ? *match : QString();
}

// "wear is A1001?": a word that sounds like "where" before "is" or "are", at the start of a
// sentence or clause only ("the wear is visible" is about wear).
const QRegularExpression &whereSoundAlike()
{
    static const QRegularExpression re(
        QStringLiteral(
            "(?:^|(?<=[.!?;,\\n。！？；，]))(\\s*)(?:wear|were|ware)(?=\\s+(?:is|are)\\b)"),
        QRegularExpression::CaseInsensitiveOption);
    return re;
}

// Chinese slips: a pinyin input method offers every character of the syllables typed, and
// the wrong one of the same sound is picked ("务流" for 物流, "定单" for 订单). Only pairs that
// are not words of their own: "物理" or "留言" stay what they are.
const QList<std::pair<QString, QString>> &chineseSoundAlikes()
{
    static const QList<std::pair<QString, QString>> slips{
        {QStringLiteral("务流"), QStringLiteral("物流")},
        {QStringLiteral("物留"), QStringLiteral("物流")},
        {QStringLiteral("雾流"), QStringLiteral("物流")},
        {QStringLiteral("悟流"), QStringLiteral("物流")},
        {QStringLiteral("勿流"), QStringLiteral("物流")},
        {QStringLiteral("物硫"), QStringLiteral("物流")},
        {QStringLiteral("快第"), QStringLiteral("快递")},
        {QStringLiteral("块递"), QStringLiteral("快递")},
        {QStringLiteral("快弟"), QStringLiteral("快递")},
        {QStringLiteral("筷递"), QStringLiteral("快递")},
        {QStringLiteral("壮态"), QStringLiteral("状态")},
        {QStringLiteral("状太"), QStringLiteral("状态")},
        {QStringLiteral("装态"), QStringLiteral("状态")},
        {QStringLiteral("酷存"), QStringLiteral("库存")},
        {QStringLiteral("库纯"), QStringLiteral("库存")},
        {QStringLiteral("裤存"), QStringLiteral("库存")},
        {QStringLiteral("定单"), QStringLiteral("订单")},
        {QStringLiteral("受后"), QStringLiteral("售后")},
        {QStringLiteral("售候"), QStringLiteral("售后")},
        {QStringLiteral("公单"), QStringLiteral("工单")},
        {QStringLiteral("到那了"), QStringLiteral("到哪了")},
        {QStringLiteral("到那里了"), QStringLiteral("到哪里了")},
        {QStringLiteral("到那儿了"), QStringLiteral("到哪儿了")},
    };
    return slips;
}

} // namespace

QString withKeywordTyposCorrected(const QString &input)
{
    QString text = input;
    for (const auto &[slip, meant] : chineseSoundAlikes())
        text.replace(slip, meant);
    text.replace(whereSoundAlike(), QStringLiteral("\\1where"));

    // Letters only: "A1001" or "SKU" next to digits is an identifier, not a word.
    static const QRegularExpression word(
        QStringLiteral("(?<![A-Za-z0-9_])[A-Za-z]+(?![A-Za-z0-9_])"));
    QString corrected;
    qsizetype copied = 0;
    for (auto it = word.globalMatch(text); it.hasNext();) {
        const QRegularExpressionMatch match = it.next();
        const QString keyword = intendedKeyword(match.captured());
        if (keyword.isEmpty())
            continue;
        corrected += QStringView(text).mid(copied, match.capturedStart() - copied);
        corrected += keyword;
        copied = match.capturedEnd();
    }
    corrected += QStringView(text).mid(copied);
    return corrected;
}

} // namespace AgentConsole::Internal
