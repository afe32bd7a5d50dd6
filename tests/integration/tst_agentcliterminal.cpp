// agent-cli with a staff member at a terminal (issue #41 §12): the real binary on a
// pseudo-terminal that is its standard input and its controlling terminal, so that Ctrl-C
// and Ctrl-D are the terminal's own (the line discipline sends SIGINT, ends the input).
#include "clirun.h"
#include "pseudoterminal.h"
#include "sanitizerbuild.h"

#include "core/ledger/turnjournal.h"

#include <QJsonArray>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <memory>

#include <unistd.h>

using namespace AgentConsole;
using namespace AgentConsole::Testing;

namespace {

const QString kTicketQuestion =
    QStringLiteral("Create an after-sales ticket for order A1001: the mug arrived broken");

// agent-cli with the terminal as its standard input; what it prints to stdout and stderr is
// kept apart (the prompt is stderr's, the --json lines stdout's).
class TerminalSession
{
public:
    TerminalSession(const QString &dataDirectory, const QStringList &arguments)
    {
        if (!m_terminal.isOpen())
            return;
        m_terminal.attach(m_process, true);
        m_process.start(QStringLiteral(AGENT_CLI_PATH),
                        QStringList{QStringLiteral("--data-dir"), dataDirectory} + arguments);
    }
    ~TerminalSession()
    {
        if (m_process.state() != QProcess::NotRunning) {
            m_process.kill();
            m_process.waitForFinished(10'000);
        }
    }

    bool started() { return m_terminal.isOpen() && m_process.waitForStarted(10'000); }
    PseudoTerminal &terminal() { return m_terminal; }
    QProcess &process() { return m_process; }
    // Waits until stderr holds `text` `times` times in all.
    bool waitForErr(const QByteArray &text, int times = 1, int timeoutMs = 30'000)
    {
        return QTest::qWaitFor([&] {
            m_err += m_process.readAllStandardError();
            return m_err.count(text) >= times;
        }, timeoutMs);
    }
    // Waits until stdout holds `lines` --json turns.
    bool waitForTurns(int lines, int timeoutMs = 30'000)
    {
        return QTest::qWaitFor([&] {
            m_out += m_process.readAllStandardOutput();
            return m_out.count('\n') >= lines;
        }, timeoutMs);
    }
    CliRun finish()
    {
        if (!m_process.waitForFinished(30'000))
            return {};
        m_out += m_process.readAllStandardOutput();
        m_err += m_process.readAllStandardError();
        return {m_process.exitStatus() == QProcess::NormalExit ? m_process.exitCode() : -1,
                m_out, m_err};
    }
    const QByteArray &err() const { return m_err; }

private:
    PseudoTerminal m_terminal;
    QProcess m_process;
    QByteArray m_out;
    QByteArray m_err;
};

QJsonObject firstCall(const QJsonObject &turn)
{
    return turn.value(QLatin1String("toolCalls")).toArray().at(0).toObject();
}

} // namespace

class tst_AgentCliTerminal : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void init();

    void promptsAtATerminalOnly();
    void ctrlCCancelsTheTurnAndASecondQuits();
    void ctrlCAtThePromptQuits();
    void ctrlDAtAConfirmationEndsTheSession();
    void anOverlongQuestionIsAUsageError_data();
    void anOverlongQuestionIsAUsageError();

private:
    CliRun runPiped(const QStringList &arguments, const QByteArray &input);
    std::optional<JournalEntry> journalEntry(const QJsonObject &turn);

    std::unique_ptr<QTemporaryDir> m_dir;
};

void tst_AgentCliTerminal::init()
{
    if (threadSanitized)
        QSKIP(childProcessUnderTsan);
    m_dir = std::make_unique<QTemporaryDir>();
    QVERIFY(m_dir->isValid());
}

CliRun tst_AgentCliTerminal::runPiped(const QStringList &arguments, const QByteArray &input)
{
    QProcess process;
    // As in CI: a session of its own, no controlling terminal; stdin a pipe.
    process.setChildProcessModifier([] { ::setsid(); });
    process.start(QStringLiteral(AGENT_CLI_PATH),
                  QStringList{QStringLiteral("--data-dir"), m_dir->path()} + arguments);
    if (!process.waitForStarted(10'000))
        qFatal("agent-cli did not start");
    process.write(input);
    process.closeWriteChannel();
    if (!process.waitForFinished(30'000)) {
        process.kill();
        qFatal("agent-cli did not finish");
    }
    return {process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -1,
            process.readAllStandardOutput(), process.readAllStandardError()};
}

std::optional<JournalEntry> tst_AgentCliTerminal::journalEntry(const QJsonObject &turn)
{
    TurnJournal journal(m_dir->filePath(QStringLiteral("turns.sqlite")));
    QFuture<JournalOpenResult> opened = journal.open();
    opened.waitForFinished();
    if (!opened.result().ok)
        return std::nullopt;
    QFuture<std::optional<JournalEntry>> entry
        = journal.entry(turn.value(QLatin1String("conversationId")).toString(),
                        turn.value(QLatin1String("requestId")).toString());
    entry.waitForFinished();
    return entry.result();
}

// A prompt when a staff member types (stdin a terminal), none when the questions are piped;
// each question asked at the prompt is answered, and the prompt comes back for the next.
void tst_AgentCliTerminal::promptsAtATerminalOnly()
{
    TerminalSession session(m_dir->path(), {QStringLiteral("--json")});
    QVERIFY(session.started());
    QVERIFY2(session.waitForErr("question> "), session.err().constData());
    QVERIFY(session.terminal().type("Where is order A1001?\n"));
    QVERIFY(session.waitForTurns(1));
    QVERIFY2(session.waitForErr("question> ", 2), session.err().constData());
    QVERIFY(session.terminal().type("\x04")); // Ctrl-D at the prompt: the end
    const CliRun typed = session.finish();
    QCOMPARE(typed.exitCode, 0);
    QCOMPARE(typed.turns().size(), 1);
    QCOMPARE(typed.turn().value(QLatin1String("question")).toString(),
             QStringLiteral("Where is order A1001?"));
    QCOMPARE(typed.turn().value(QLatin1String("status")).toString(),
             QStringLiteral("completed"));

    const CliRun piped = runPiped({QStringLiteral("--json")}, "Where is order A1001?\n");
    QCOMPARE(piped.exitCode, 0);
    QCOMPARE(piped.turns().size(), 1);
    QVERIFY2(!piped.err.contains("question>"), piped.err.constData());
    QVERIFY2(!piped.err.contains("Ctrl-C"), piped.err.constData());
}

// Ctrl-C while a turn runs (here: waiting at its write's [y/N]) cancels that turn: it is
// printed and checkpointed as cancelled, its write is not run, the prompt comes back, and
// the next start has nothing to resume. The second Ctrl-C quits (130).
void tst_AgentCliTerminal::ctrlCCancelsTheTurnAndASecondQuits()
{
    QJsonObject cancelled;
    {
        TerminalSession session(m_dir->path(), {QStringLiteral("--json")});
        QVERIFY(session.started());
        QVERIFY2(session.waitForErr("question> "), session.err().constData());
        QVERIFY(session.terminal().type(kTicketQuestion.toUtf8() + '\n'));
        QVERIFY2(session.terminal().waitForShown("? [y/N] ", 30'000),
                 session.terminal().shown().constData());
        QVERIFY(session.process().state() == QProcess::Running);
        QVERIFY(session.terminal().type("\x03")); // Ctrl-C: SIGINT from the terminal
        QVERIFY(session.waitForTurns(1));
        QVERIFY2(session.waitForErr("question> ", 2), session.err().constData());
        QVERIFY2(session.err().contains("cancelling the turn"), session.err().constData());
        QCOMPARE(session.process().state(), QProcess::Running); // the first one cancels only
        QVERIFY(session.terminal().type("\x03"));
        const CliRun run = session.finish();
        QCOMPARE(run.exitCode, 130);
        QCOMPARE(run.turns().size(), 1);
        cancelled = run.turn();
    }
    QCOMPARE(cancelled.value(QLatin1String("status")).toString(), QStringLiteral("cancelled"));
    const QJsonObject call = firstCall(cancelled);
    QCOMPARE(call.value(QLatin1String("name")).toString(), QStringLiteral("createTicket"));
    QVERIFY(!call.value(QLatin1String("success")).toBool());

    // Checkpointed as a final, cancelled turn: nothing to resume.
    const std::optional<JournalEntry> entry = journalEntry(cancelled);
    QVERIFY(entry);
    QCOMPARE(entry->stage, QStringLiteral("FAILED"));
    QCOMPARE(entry->outcome, QStringLiteral("cancelled"));
    QVERIFY(!entry->resumable);
    const CliRun resumed = runPiped({QStringLiteral("--json"), QStringLiteral("--resume")}, {});
    QCOMPARE(resumed.exitCode, 0);
    QVERIFY2(resumed.turns().isEmpty(), resumed.out.constData());
    QVERIFY2(!resumed.err.contains(cancelled.value(QLatin1String("requestId"))
                                       .toString().toUtf8()),
             resumed.err.constData());
    // No ticket was made: the next one made is the first.
    const CliRun next = runPiped({QStringLiteral("--json"), QStringLiteral("--yes"),
                                  kTicketQuestion}, {});
    QCOMPARE(next.exitCode, 0);
    QCOMPARE(firstCall(next.turn()).value(QLatin1String("data")).toObject()
                 .value(QLatin1String("ticketId")).toString(),
             QStringLiteral("T-000001"));
}

// With no turn running, Ctrl-C at the prompt quits, as the second one does.
void tst_AgentCliTerminal::ctrlCAtThePromptQuits()
{
    TerminalSession session(m_dir->path(), {});
    QVERIFY(session.started());
    QVERIFY2(session.waitForErr("question> "), session.err().constData());
    QVERIFY(session.terminal().type("\x03"));
    const CliRun run = session.finish();
    QCOMPARE(run.exitCode, 130);
    QVERIFY(run.out.isEmpty());
}

// Ctrl-D at a confirmation: the write is not run and the session ends; the 'y' typed after
// it is not taken for a question (before, it was asked as the next turn).
void tst_AgentCliTerminal::ctrlDAtAConfirmationEndsTheSession()
{
    TerminalSession session(m_dir->path(), {QStringLiteral("--json")});
    QVERIFY(session.started());
    QVERIFY2(session.waitForErr("question> "), session.err().constData());
    QVERIFY(session.terminal().type(kTicketQuestion.toUtf8() + '\n'));
    QVERIFY2(session.terminal().waitForShown("? [y/N] ", 30'000),
             session.terminal().shown().constData());
    QVERIFY(session.terminal().type("\x04"));
    QVERIFY(session.terminal().type("y\n"));
    const CliRun run = session.finish();
    QCOMPARE(run.exitCode, 0);
    QCOMPARE(run.turns().size(), 1);
    QCOMPARE(run.turn().value(QLatin1String("question")).toString(), kTicketQuestion);
    QCOMPARE(firstCall(run.turn()).value(QLatin1String("code")).toString(),
             QStringLiteral("CONFIRMATION_DECLINED"));
    QVERIFY2(run.err.contains("the terminal closed before 1 action(s) were confirmed"),
             run.err.constData());
    // One prompt only: nothing more was asked after the terminal closed.
    QCOMPARE(run.err.count("question> "), 1);
}

void tst_AgentCliTerminal::anOverlongQuestionIsAUsageError_data()
{
    QTest::addColumn<QByteArray>("input");
    QTest::addColumn<int>("line");
    const QByteArray over(4001, 'x');
    const QByteArray huge(200'000, 'x'); // read in parts, never kept whole
    QTest::newRow("between two") << "Where is order A1001?\n" + over + "\nA1002 status\n" << 2;
    QTest::newRow("huge, between two")
        << "Where is order A1001?\n" + huge + "\nA1002 status\n" << 2;
    QTest::newRow("last, no end of line")
        << "Where is order A1001?\nA1002 status\n" + huge << 3;
}

// A question over the bound, read from stdin, is the staff member's mistake: said, with its
// line, not asked, the others are; the exit status is a usage error's (2), not a failed
// turn's (3). One at exactly the bound is asked.
void tst_AgentCliTerminal::anOverlongQuestionIsAUsageError()
{
    QFETCH(QByteArray, input);
    QFETCH(int, line);
    const CliRun run = runPiped({QStringLiteral("--json")}, input);
    QCOMPARE(run.exitCode, 2);
    QCOMPARE(run.turns().size(), 2);
    for (const QJsonObject &turn : run.turns())
        QCOMPARE(turn.value(QLatin1String("status")).toString(), QStringLiteral("completed"));
    const QByteArray said = "the question on line " + QByteArray::number(line)
        + " is longer than 4000 characters and was not asked";
    QVERIFY2(run.err.contains(said), run.err.constData());

    const QByteArray longest
        = QByteArray("Where is order A1001? ").leftJustified(4000, '.');
    const CliRun fits = runPiped({QStringLiteral("--json")}, longest + '\n');
    QCOMPARE(fits.exitCode, 0);
    QCOMPARE(fits.turns().size(), 1);
}

QTEST_GUILESS_MAIN(tst_AgentCliTerminal)
#include "tst_agentcliterminal.moc"
