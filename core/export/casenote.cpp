#include "casenote.h"

#include "callwords.h"

#include "../turn/failures.h"

#include <QCoreApplication>
#include <QHash>
#include <QStringList>

namespace AgentConsole {
namespace {

struct CaseNoteWords
{
    Q_DECLARE_TR_FUNCTIONS(AgentConsole::CaseNote)
};

QString period(Language language)
{
    return language == Language::Chinese ? QStringLiteral("。") : QStringLiteral(".");
}

QString flat(const QString &text)
{
    return text.simplified();
}

// A sentence of the failure table's for a call that did not answer. `%1` of a staff sentence
// is the call named with its subject; a row without one (the write path's codes) says its
// fixed message after the call's name. Never the code, never the backend's own message.
// The call named inside a sentence of the table's: the tool's title is a command ("Track a
// shipment"), so it is quoted as a name: "The backend rejected “Track a shipment” (A1001)."
QString quotedName(const ToolCallRecord &call)
{
    const QString subject = CallWords::subject(call);
    return subject.isEmpty() ? CaseNoteWords::tr("“%1”").arg(CallWords::title(call))
                             : CaseNoteWords::tr("“%1” (%2)").arg(CallWords::title(call), subject);
}

QString failureSentence(const ToolCallRecord &call, Language language)
{
    const QString name = quotedName(call);
    if (call.state != ToolCallRecord::State::Finished)
        return CaseNoteWords::tr("%1: not run, the request ended first.").arg(name);
    if (call.result.nobodyWasAsked())
        return CaseNoteWords::tr("%1: not run, nobody could be asked to confirm it.").arg(name);
    const QString kept = call.result.keptExistingId();
    if (!kept.isEmpty())
        return CaseNoteWords::tr("%1: not made, the earlier %2 was kept.").arg(name, kept);
    const FailureTable::Row *row = failureTable().find(call.result.code);
    if (!row)
        return CaseNoteWords::tr("%1 failed.").arg(name);
    const QString subject = CallWords::subject(call);
    if (!row->staffAboutSubject.isNull() && !subject.isEmpty())
        return row->staffAboutSubject.in(language).arg(subject);
    if (!row->staff.isNull()) {
        const QString staff = row->staff.in(language);
        return staff.contains(QLatin1String("%1")) ? staff.arg(name) : staff;
    }
    if (!row->model.isNull())
        return CaseNoteWords::tr("%1: %2").arg(name, row->model.in(language)) + period(language);
    return CaseNoteWords::tr("%1 failed.").arg(name);
}

// A call's line under "Found": its finding, or what the table says of an answer that found
// nothing ("Order A1001 was not found."), or that it answered.
QString foundLine(const ToolCallRecord &call, Language language)
{
    if (call.result.success) {
        const QString finding = CallWords::finding(call, language == Language::Chinese);
        return CaseNoteWords::tr("%1: %2").arg(CallWords::titleWithSubject(call),
                                               finding.isEmpty() ? CaseNoteWords::tr("answered")
                                                                 : finding);
    }
    return failureSentence(call, language); // a "not found" row's staff sentence
}

void appendList(QStringList &lines, const QString &heading, const QStringList &items)
{
    if (items.isEmpty())
        return;
    lines.append(heading);
    for (const QString &item : items)
        lines.append(QStringLiteral("- ") + item);
}

void appendTurn(QStringList &lines, const TurnResult &turn, int number, Language language)
{
    lines.append(CaseNoteWords::tr("Request %1").arg(number));
    lines.append(CaseNoteWords::tr("Question: %1").arg(flat(turn.question)));
    QStringList found;
    QStringList notLookedUp;
    QStringList notDone;
    // What writes made, by the tools' own word for it ("Ticket": ToolLabels::created), in
    // the order made; an earlier one kept instead is said as such.
    QStringList madeKinds;
    QHash<QString, QStringList> madeIds;
    const auto addMade = [&](const ToolCallRecord &call, const QString &id) {
        const QString kind = call.labels.created.label.isEmpty()
            ? CaseNoteWords::tr("Made")
            : QCoreApplication::translate(ToolLabels::TranslationContext,
                                          call.labels.created.label.toUtf8().constData());
        if (!madeKinds.contains(kind))
            madeKinds.append(kind);
        madeIds[kind].append(id);
    };
    for (const ToolCallRecord &call : turn.toolCalls) {
        const bool write = !call.labels.created.key.isEmpty();
        const QString made = CallWords::createdId(call);
        if (!made.isEmpty())
            addMade(call, made);
        const QString kept = call.result.keptExistingId();
        if (!kept.isEmpty())
            addMade(call, CaseNoteWords::tr("%1 (made earlier)").arg(kept));
        if (call.state == ToolCallRecord::State::Finished
            && (call.result.success || call.result.isNotFound()))
            found.append(foundLine(call, language));
        else if (write)
            notDone.append(failureSentence(call, language));
        else
            notLookedUp.append(failureSentence(call, language));
    }
    if (turn.toolCalls.isEmpty())
        lines.append(CaseNoteWords::tr("Nothing was looked up."));
    appendList(lines, CaseNoteWords::tr("Found:"), found);
    appendList(lines, CaseNoteWords::tr("Could not be looked up:"), notLookedUp);
    appendList(lines, CaseNoteWords::tr("Not done:"), notDone);
    for (const QString &kind : std::as_const(madeKinds))
        lines.append(
            CaseNoteWords::tr("%1: %2").arg(kind, madeIds.value(kind).join(QStringLiteral(", "))));
    switch (turn.status) {
    case TurnStatus::Completed:
        break;
    case TurnStatus::Failed:
        lines.append(CaseNoteWords::tr("The request did not finish: no answer was given."));
        break;
    case TurnStatus::Cancelled:
        lines.append(CaseNoteWords::tr("The request was cancelled before it was answered."));
        break;
    }
}

} // namespace

QList<TurnResult> CaseNote::staffTurns(const QList<TurnResult> &turns)
{
    QList<TurnResult> own;
    for (const TurnResult &turn : turns) {
        if (turn.scenario.isEmpty())
            own.append(turn);
    }
    return own;
}

QString CaseNote::text(const QList<TurnResult> &turns, const Redactor &redactor, Language language,
                       const QDate &date)
{
    const QList<TurnResult> own = staffTurns(turns);
    QStringList lines;
    lines.append(CaseNoteWords::tr("Case note, %1").arg(date.toString(Qt::ISODate)));
    for (qsizetype i = 0; i < own.size(); ++i) {
        lines.append(QString());
        appendTurn(lines, own.at(i), int(i) + 1, language);
    }
    if (own.isEmpty()) {
        lines.append(QString());
        lines.append(CaseNoteWords::tr("No request of the staff member's own to note."));
    }
    const int leftOut = int(turns.size() - own.size());
    if (leftOut > 0) {
        lines.append(QString());
        lines.append(CaseNoteWords::tr("%n scenario run turn(s) left out: not the customer's "
                                       "conversation.",
                                       nullptr, leftOut));
    }
    return redactor.redact(lines.join(QLatin1Char('\n')) + QLatin1Char('\n'));
}

QString conversationFileTitle(const QList<TurnResult> &turns, const Redactor &redactor)
{
    const QList<TurnResult> own = CaseNote::staffTurns(turns);
    QString title = own.isEmpty() ? (turns.isEmpty() ? QString() : turns.first().question)
                                  : own.first().question;
    title = redactor.redact(title);
    static const QString unsafe = QStringLiteral("/\\:*?\"<>|.");
    for (QChar &c : title) {
        if (unsafe.contains(c) || c.category() == QChar::Other_Control
            || c.category() == QChar::Other_Format)
            c = QLatin1Char(' ');
    }
    title = title.simplified();
    if (title.size() > kMaxTitleLength) {
        const qsizetype space = title.lastIndexOf(QLatin1Char(' '), kMaxTitleLength);
        title = title.left(space > kMaxTitleLength / 2 ? space : kMaxTitleLength);
    }
    // Nothing left dangling at either end: "A1001 mug, broken -" reads as cut.
    static const QString trailing = QStringLiteral(" ,;-—–([{'“‘");
    while (!title.isEmpty() && trailing.contains(title.back()))
        title.chop(1);
    while (!title.isEmpty() && (title.front() == QLatin1Char('-') || title.front().isSpace()))
        title.remove(0, 1);
    if (title.isEmpty())
        title = CaseNoteWords::tr("Conversation");
    return title;
}

QString suggestedExportFileName(const QList<TurnResult> &turns, const Redactor &redactor,
                                const QDate &date, const QString &suffix)
{
    return QStringLiteral("%1 — %2.%3")
        .arg(conversationFileTitle(turns, redactor), date.toString(Qt::ISODate), suffix);
}

} // namespace AgentConsole
