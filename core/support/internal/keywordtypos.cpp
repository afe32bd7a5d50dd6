#include "keywordtypos.h"

#include <QHash>
#include <QRegularExpression>
#include <QStringList>

#include <algorithm>

namespace AgentConsole::Internal {
namespace {

constexpr qsizetype minimumLooseLength = 5;

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
        {QStringLiteral("whre"), QStringLiteral("where")}};
    return slips;
}

// Real words one slip away from a keyword that mean something else.
const QStringList &otherWords()
{
    static const QStringList words{
        QStringLiteral("sipping"), QStringLiteral("sipped"),  QStringLiteral("inventor"),
        QStringLiteral("racking"), QStringLiteral("tacking"), QStringLiteral("racked"),
        QStringLiteral("delver"),  QStringLiteral("retuned")};
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
                                               || isOneSwapAway(typed, keyword);
                                    });
    return match != keywords().cend() ? *match : QString();
}

} // namespace

QString withKeywordTyposCorrected(const QString &text)
{
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
