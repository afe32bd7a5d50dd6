#include "terminalquestion.h"
#include "terminallines.h"
#include "terminaltext.h"

#include "core/console/mcpservers.h"

#include <algorithm>
#include <cstdio>

namespace AgentConsole {

namespace {

QString typeHint(const McpQuestionField &field)
{
    using Type = McpQuestionField::Type;
    switch (field.type) {
    case Type::Text:
        return field.format.isEmpty() ? QStringLiteral("text") : field.format;
    case Type::Number:
        return QStringLiteral("number");
    case Type::Integer:
        return QStringLiteral("whole number");
    case Type::Boolean:
        return QStringLiteral("y/n");
    case Type::Choice: {
        QStringList choices;
        for (qsizetype i = 0; i < field.choices.size(); ++i)
            choices.append(QStringLiteral("%1 %2").arg(i + 1).arg(
                terminalSafe(field.choiceTitles.value(i, field.choices.at(i)))));
        return choices.join(QStringLiteral(", "));
    }
    }
    return {};
}

QString problemWords(const McpAnswerProblem &problem)
{
    using Kind = McpAnswerProblem::Kind;
    switch (problem.kind) {
    case Kind::Missing:
        return QStringLiteral("needs an answer");
    case Kind::NotAChoice:
        return QStringLiteral("is not one of its choices");
    case Kind::TooShort:
        return QStringLiteral("is too short");
    case Kind::TooLong:
        return QStringLiteral("is too long");
    case Kind::TooSmall:
        return QStringLiteral("is below its smallest value");
    case Kind::TooLarge:
        return QStringLiteral("is above its largest value");
    case Kind::BadFormat:
        return QStringLiteral("is not in the form it asks for");
    default:
        break;
    }
    return QStringLiteral("does not read as what it asks for");
}

} // namespace

TerminalQuestion::TerminalQuestion(McpServers *servers, TerminalLines *terminal, bool canAsk,
                                   QObject *parent)
    : QObject(parent)
    , m_servers(servers)
    , m_terminal(terminal)
    , m_canAsk(canAsk)
{
    connect(servers, &McpServers::questionAsked, this, &TerminalQuestion::onAsked);
    connect(servers, &McpServers::questionEnded, this, &TerminalQuestion::onEnded);
    connect(terminal, &TerminalLines::closed, this, &TerminalQuestion::terminalClosed);
}

TerminalQuestion::~TerminalQuestion()
{
    m_terminal->release(this);
}

void TerminalQuestion::say(const QString &text)
{
    m_terminal->write(text);
}

void TerminalQuestion::onAsked(const QString &id, const McpQuestion &question)
{
    if (!m_canAsk || !m_terminal->open()) {
        std::fprintf(stderr,
                     "agent-cli: MCP server %s asks a question and there is no terminal to ask "
                     "on (standard input is not one, or carries the questions, or was closed); "
                     "declined\n",
                     qPrintable(terminalSafe(question.server)));
        // Answered from the event loop, not from inside the servers' own signal.
        QMetaObject::invokeMethod(
            this, [this, id] { m_servers->answer(id, McpAnswer::Decline); }, Qt::QueuedConnection);
        return;
    }
    m_waiting.enqueue({id, question});
    // Asked once the terminal is this one's: at once, or after the prompt before it.
    if (!m_current)
        m_terminal->want(
            this, [this] { askNext(); },
            [this](const QString &line, bool tooLong) { onLine(line, tooLong); });
}

// End of input (Ctrl-D) or the terminal went away: what is asked or waits is dismissed
// (cancel: nobody chose); later questions find no terminal.
void TerminalQuestion::terminalClosed()
{
    QStringList dismissed;
    if (m_current)
        dismissed.append(std::exchange(m_current, std::nullopt)->id);
    while (!m_waiting.isEmpty())
        dismissed.append(m_waiting.dequeue().id);
    if (!dismissed.isEmpty())
        std::fprintf(stderr,
                     "\nagent-cli: the terminal closed; %lld question(s) of MCP servers "
                     "cancelled\n",
                     qlonglong(dismissed.size()));
    for (const QString &id : std::as_const(dismissed))
        m_servers->answer(id, McpAnswer::Cancel);
}

void TerminalQuestion::onEnded(const QString &id, McpQuestionEnd how)
{
    for (qsizetype i = 0; i < m_waiting.size(); ++i) {
        if (m_waiting.at(i).id == id) {
            m_waiting.removeAt(i);
            // Nothing left to ask: no longer in line for the terminal.
            if (!m_current && m_waiting.isEmpty())
                m_terminal->release(this);
            return;
        }
    }
    if (!m_current || m_current->id != id || how == McpQuestionEnd::Answered)
        return;
    say(how == McpQuestionEnd::Withdrawn
            ? QStringLiteral("\nThe question was withdrawn: its tool call ended before an "
                             "answer.\n")
            : QStringLiteral("\nThe server took its question back.\n"));
    m_current.reset();
    askNext();
}

void TerminalQuestion::askNext()
{
    if (m_waiting.isEmpty()) {
        m_terminal->release(this); // the terminal goes back to whoever waits for it
        return;
    }
    m_current = m_waiting.dequeue();
    m_content = {};
    m_field = -1;
    const McpQuestion &question = m_current->question;
    QString header = QStringLiteral("\nMCP server %1 asks").arg(terminalSafe(question.server));
    if (!question.toolTitle.isEmpty())
        header += QStringLiteral(" (during %1)").arg(terminalSafe(question.toolTitle));
    if (!question.answerBy.isForever()) {
        // Read when it is asked (a question may have waited behind another one).
        const qint64 left = std::max<qint64>(question.answerBy.remainingTime(), 0);
        const qint64 seconds = (left + 999) / 1000;
        header += QStringLiteral(", to be answered within %1 s").arg(seconds);
    }
    QString message = terminalSafe(question.message);
    message.replace(QLatin1Char('\n'), QStringLiteral("\n  "));
    say(header + QStringLiteral(":\n  ") + message + QStringLiteral("\n"));
    promptAction();
}

void TerminalQuestion::promptAction()
{
    say(QStringLiteral("Answer it? [a]ccept (fill in %1 fields) / [d]ecline / [c]ancel: ")
            .arg(m_current->question.fields.size()));
}

void TerminalQuestion::promptField()
{
    const McpQuestionField &field = m_current->question.fields.at(m_field);
    QString prompt = QStringLiteral("  %1").arg(terminalSafe(field.label()));
    if (field.required)
        prompt += QStringLiteral(" (required)");
    prompt += QStringLiteral(" [%1]").arg(typeHint(field));
    if (!field.defaultValue.isUndefined()) {
        const QJsonValue value = field.defaultValue;
        QString shown = value.isBool()
            ? (value.toBool() ? QStringLiteral("y") : QStringLiteral("n"))
            : value.isDouble() ? QString::number(value.toDouble())
                               : value.toString();
        if (field.type == McpQuestionField::Type::Choice)
            shown = field.choiceTitles.value(field.choices.indexOf(shown), shown);
        prompt += QStringLiteral(" (Enter keeps %1)").arg(terminalSafe(shown));
    }
    if (!field.description.isEmpty())
        prompt += QStringLiteral("\n    ") + terminalSafe(field.description);
    say(prompt + QStringLiteral(": "));
}

void TerminalQuestion::onLine(const QString &line, bool tooLong)
{
    if (!m_current)
        return; // typed while nothing was asked
    const QList<McpQuestionField> &fields = m_current->question.fields;
    if (tooLong && m_field >= 0) {
        say(QStringLiteral("  That %1; again.\n")
                .arg(problemWords({McpAnswerProblem::Kind::TooLong, QString()})));
        promptField();
        return;
    }
    if (m_field < 0) {
        const QString word = line.trimmed().toLower();
        if (word == QLatin1String("d") || word == QLatin1String("decline")) {
            finish(McpAnswer::Decline);
        } else if (word == QLatin1String("c") || word == QLatin1String("cancel")) {
            finish(McpAnswer::Cancel);
        } else if (word == QLatin1String("a") || word == QLatin1String("accept")) {
            m_field = 0;
            if (fields.isEmpty())
                finish(McpAnswer::Accept);
            else
                promptField();
        } else {
            promptAction();
        }
        return;
    }
    const McpQuestionField &field = fields.at(m_field);
    const std::optional<QJsonValue> value = fieldValueFromText(field, line);
    McpAnswerProblem problem;
    QJsonObject trial = m_content;
    if (value && !value->isUndefined())
        trial.insert(field.name, *value);
    if (value) {
        // Checked as far as it goes: this field, with what came before.
        problem = checkAnswer(m_current->question, withDefaults(m_current->question, trial));
        if (problem.field != field.name || problem.kind == McpAnswerProblem::Kind::Missing)
            problem = {};
        if (value->isUndefined() && field.required && field.defaultValue.isUndefined())
            problem = {McpAnswerProblem::Kind::Missing, field.name};
    } else {
        problem = {McpAnswerProblem::Kind::WrongType, field.name};
    }
    if (problem.isProblem()) {
        say(QStringLiteral("  That %1; again.\n").arg(problemWords(problem)));
        promptField();
        return;
    }
    m_content = trial;
    if (++m_field < fields.size()) {
        promptField();
        return;
    }
    finish(McpAnswer::Accept);
}

void TerminalQuestion::finish(McpAnswer action)
{
    const QString id = m_current->id;
    McpAnswerProblem problem;
    const QJsonObject content = action == McpAnswer::Accept ? m_content : QJsonObject();
    m_current.reset();
    if (m_servers->answer(id, action, content, &problem))
        say(action == McpAnswer::Accept        ? QStringLiteral("Sent.\n")
                : action == McpAnswer::Decline ? QStringLiteral("Declined.\n")
                                               : QStringLiteral("Cancelled.\n"));
    else if (problem.isProblem())
        say(QStringLiteral("The answer was not sent: %1 %2.\n")
                .arg(terminalSafe(problem.field), problemWords(problem)));
    else
        say(QStringLiteral("The question had ended; nothing was sent.\n"));
    askNext();
}

} // namespace AgentConsole
