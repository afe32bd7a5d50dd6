#pragma once

#include "resultcode.h"

#include <QJsonObject>
#include <QJsonValue>
#include <QMetaType>
#include <QString>
#include <QStringList>

namespace AgentConsole {

enum class Language { English, Chinese };

// Chinese when the text holds any Han character, English otherwise: staff write mixed text
// ("A1001 where 到了"), and a single Chinese word means a Chinese-speaking reader. Every
// fixed sentence the console writes is chosen by this one rule.
Language languageOf(QStringView text);
// One of a fixed sentence's two wordings (UTF-8 source text), in `language`.
QString localized(Language language, const char *english, const char *chinese);

// What a tool call produced, as the model is allowed to see it. `message` and `errors` are
// fixed, human-written sentences (see SafeText); exception text, SQL, URLs and hostnames never
// go here — they go to the local log.
struct ToolResult
{
    bool success = false;
    // Compared as a value everywhere; spelled only where a result is written or read
    // (toJson(), fromJson(), codeName(), setCodeName()). A default result has no code at all:
    // Unrecognized with no name, written as "".
    ResultCode::Code code = ResultCode::Code::Unrecognized;
    QString message;
    QJsonValue data;
    QStringList errors;
    // The wire name of an Unrecognized or UnrecognizedNotFound code, kept as it was given so
    // that it is shown, stored and exported unchanged; empty for every code with a row.
    QString unrecognizedCode;

    static ToolResult ok(const QString &message, const QJsonValue &data);
    static ToolResult failure(ResultCode::Code code, const QString &message,
                              const QStringList &errors = {});
    // A failure worded by the code's row of the failure table (FailureTable::failure).
    static ToolResult failure(ResultCode::Code code, Language language,
                              const QStringList &errors = {});
    // A write that needed a staff member's confirmation when nobody could be asked (agent-cli
    // with no terminal, or one closed at the prompt): CONFIRMATION_DECLINED, since the write
    // did not run and nothing may run it blindly later, but not anyone's refusal.
    static ToolResult nobodyToConfirm(Language language);
    // A write staff did not confirm because an earlier one already does what it would (a
    // ticket the order already has): CONFIRMATION_DECLINED, with the earlier write's id and
    // fields in data ({"staffAsked": true, "keptExisting": id, "existing": {...}}).
    static ToolResult keptExisting(Language language, const QString &id,
                                   const QJsonObject &existing);
    // The earlier write's id, when made by keptExisting(); empty otherwise.
    QString keptExistingId() const;

    // The code's wire name: its row's, or the one kept as given.
    QString codeName() const;
    // The code a wire name stands for (ResultCode::read); a name no row has is kept as given.
    void setCodeName(QStringView name);

    // The code's row says nothing was found (an answer, not a failure of the call).
    bool isNotFound() const;
    // Made by nobodyToConfirm(): words that say "declined" would not be true of it.
    bool nobodyWasAsked() const;
    QJsonObject toJson() const;
    static ToolResult fromJson(const QJsonObject &json);

    friend bool operator==(const ToolResult &, const ToolResult &) = default;
};

// The fixed sentences for each failure code, in both languages the console speaks: the
// failure table's model column and retry hint.
namespace SafeText {
QString messageFor(ResultCode::Code code, Language language);
QString retryHintFor(ResultCode::Code code, Language language);
} // namespace SafeText

} // namespace AgentConsole

Q_DECLARE_METATYPE(AgentConsole::ToolResult)
