// agent-cli's one terminal reader (TerminalLines) on a pseudo-terminal: lines read only while a
// prompt wants them, prompts taking turns in the order they asked, an overlong line said and
// not kept, and the terminal's end (Ctrl-D, a hang-up) ending every prompt's turn for good.
#include "pseudoterminal.h"

#include "app/agent-cli/terminallines.h"

#include <QSignalSpy>
#include <QTest>

#include <fcntl.h>
#include <termios.h>
#include <unistd.h>

using namespace AgentConsole;
using namespace AgentConsole::Testing;

namespace {

constexpr int kWaitMs = 5000; // an upper bound for waits, never a sleep

// What one prompt received: each line, "<too long>" for one that was not kept.
struct Prompt
{
    QObject owner;
    QStringList lines;
    int granted = 0;

    void want(TerminalLines &terminal)
    {
        terminal.want(&owner, [this] { ++granted; }, [this](const QString &line, bool tooLong) {
            lines.append(tooLong ? QStringLiteral("<too long>") : line);
        });
    }
};

// Bytes pass as typed, without the line discipline's own bound on a line or its echo.
bool makeRaw(const PseudoTerminal &pty)
{
    const int fd = ::open(QFile::encodeName(pty.terminalPath()).constData(), O_RDWR | O_NOCTTY);
    if (fd < 0)
        return false;
    termios settings{};
    bool done = ::tcgetattr(fd, &settings) == 0;
    if (done) {
        ::cfmakeraw(&settings);
        done = ::tcsetattr(fd, TCSANOW, &settings) == 0;
    }
    ::close(fd);
    return done;
}

// A line typed on the terminal that nobody else read, read here; empty when none came whole.
QByteArray readLeftOver(const PseudoTerminal &pty)
{
    const int fd = ::open(QFile::encodeName(pty.terminalPath()).constData(),
                          O_RDONLY | O_NOCTTY | O_NONBLOCK);
    if (fd < 0)
        return {};
    QByteArray read;
    const bool whole = QTest::qWaitFor([&] {
        char buffer[256];
        const ssize_t got = ::read(fd, buffer, sizeof buffer);
        if (got > 0)
            read.append(buffer, got);
        return read.endsWith('\n');
    }, kWaitMs);
    ::close(fd);
    return whole ? read : QByteArray();
}

} // namespace

class tst_TerminalLines : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void noTerminalNoPrompt();
    void readsOnlyWhileAPromptWantsALine();
    void promptsTakeTurns();
    void releasingDropsWhatWasTypedAhead();
    void anOverlongLineIsSaidNotKept();
    void ctrlDEndsEveryTurnForGood();
    void aHangUpEndsItToo();
};

void tst_TerminalLines::noTerminalNoPrompt()
{
    TerminalLines terminal(QStringLiteral("/nonexistent/tty"));
    QVERIFY(!terminal.open());
    Prompt prompt;
    prompt.want(terminal);
    QCOMPARE(prompt.granted, 0);
    QVERIFY(!terminal.isReading(&prompt.owner));
}

// Between prompts, what is typed stays in the terminal for whoever reads next (at agent-cli's
// own prompt, standard input's next question): it is neither read nor dropped.
void tst_TerminalLines::readsOnlyWhileAPromptWantsALine()
{
    PseudoTerminal pty;
    QVERIFY(pty.isOpen());
    TerminalLines terminal(pty.terminalPath());
    QVERIFY(terminal.open());
    QVERIFY(pty.type("typed early\n"));
    Prompt first;
    first.want(terminal);
    QCOMPARE(first.granted, 1); // nobody else reads: at once
    QTRY_COMPARE_WITH_TIMEOUT(first.lines, QStringList{"typed early"}, kWaitMs);
    terminal.release(&first.owner);
    QVERIFY(!terminal.isReading(&first.owner));

    QVERIFY(pty.type("for the next one\n"));
    Prompt second;
    second.want(terminal);
    QTRY_COMPARE_WITH_TIMEOUT(second.lines, QStringList{"for the next one"}, kWaitMs);
    QCOMPARE(first.lines, QStringList{"typed early"});

    terminal.write(QStringLiteral("Run createTicket? [y/N] "));
    QVERIFY2(pty.waitForShown("Run createTicket? [y/N] ", kWaitMs), pty.shown().constData());
}

// A confirmation and an MCP server's question at once: each line goes to the one whose turn
// it is, never to the other; the second is granted the terminal when the first gives it back.
void tst_TerminalLines::promptsTakeTurns()
{
    PseudoTerminal pty;
    QVERIFY(pty.isOpen());
    TerminalLines terminal(pty.terminalPath());
    QVERIFY(terminal.open());
    Prompt confirmation;
    Prompt question;
    confirmation.want(terminal);
    question.want(terminal);
    question.want(terminal); // again while in line: changes nothing
    QCOMPARE(confirmation.granted, 1);
    QCOMPARE(question.granted, 0);
    QVERIFY(terminal.isReading(&confirmation.owner));

    QVERIFY(pty.type("y\n"));
    QTRY_COMPARE_WITH_TIMEOUT(confirmation.lines, QStringList{"y"}, kWaitMs);
    QVERIFY(pty.type("yes\n"));
    QTRY_COMPARE_WITH_TIMEOUT(confirmation.lines, (QStringList{"y", "yes"}), kWaitMs);
    QVERIFY(question.lines.isEmpty());

    terminal.release(&confirmation.owner);
    QCOMPARE(question.granted, 1);
    QVERIFY(terminal.isReading(&question.owner));
    QVERIFY(pty.type("accept\n"));
    QTRY_COMPARE_WITH_TIMEOUT(question.lines, QStringList{"accept"}, kWaitMs);
    QCOMPARE(confirmation.lines, (QStringList{"y", "yes"}));

    // One that leaves the line before its turn is never granted it.
    Prompt gone;
    gone.want(terminal);
    terminal.release(&gone.owner);
    terminal.release(&question.owner);
    QCOMPARE(gone.granted, 0);
}

// Lines typed ahead of a prompt that gives the terminal back are its, not the next one's.
void tst_TerminalLines::releasingDropsWhatWasTypedAhead()
{
    PseudoTerminal pty;
    QVERIFY(pty.isOpen());
    QVERIFY(makeRaw(pty)); // both lines in one read
    TerminalLines terminal(pty.terminalPath());
    QVERIFY(terminal.open());
    Prompt first;
    Prompt second;
    TerminalLines *lines = &terminal;
    terminal.want(&first.owner, {}, [&](const QString &line, bool) {
        first.lines.append(line);
        lines->release(&first.owner); // answered: its turn is over
    });
    second.want(terminal);
    QVERIFY(pty.type("n\nahead\n"));
    QTRY_COMPARE_WITH_TIMEOUT(first.lines, QStringList{"n"}, kWaitMs);
    QCOMPARE(second.granted, 1);
    QVERIFY(pty.type("mine\n"));
    QTRY_COMPARE_WITH_TIMEOUT(second.lines, QStringList{"mine"}, kWaitMs);
}

void tst_TerminalLines::anOverlongLineIsSaidNotKept()
{
    PseudoTerminal pty;
    QVERIFY(pty.isOpen());
    QVERIFY(makeRaw(pty)); // a line arrives in parts, as typed
    TerminalLines terminal(pty.terminalPath(), 8);
    QVERIFY(terminal.open());
    Prompt prompt;
    prompt.want(terminal);
    QVERIFY(pty.type("123456789012\n")); // over the bound, its end seen at once
    QTRY_COMPARE_WITH_TIMEOUT(prompt.lines, QStringList{"<too long>"}, kWaitMs);
    QVERIFY(pty.type("1234567890")); // over the bound before its end: dropped as it comes
    QVERIFY(pty.type("abcdef"));
    QVERIFY(pty.type("gh\n"));
    QVERIFY(pty.type("12345678\r\n")); // at the bound, a carriage return before its end
    QTRY_COMPARE_WITH_TIMEOUT(prompt.lines, (QStringList{"<too long>", "<too long>", "12345678"}),
                              kWaitMs);
}

// Ctrl-D at a prompt: every prompt's turn ends (each hears closed()), and nothing more is
// read or asked on the terminal, even though a terminal can be read after a Ctrl-D.
void tst_TerminalLines::ctrlDEndsEveryTurnForGood()
{
    PseudoTerminal pty;
    QVERIFY(pty.isOpen());
    TerminalLines terminal(pty.terminalPath());
    QSignalSpy closed(&terminal, &TerminalLines::closed);
    QVERIFY(terminal.open());
    Prompt confirmation;
    Prompt question;
    confirmation.want(terminal);
    question.want(terminal);
    QVERIFY(pty.type("\x04"));
    QVERIFY(closed.wait(kWaitMs));
    QVERIFY(terminal.isClosed());
    QVERIFY(!terminal.isReading(&confirmation.owner));
    QVERIFY(!terminal.open());
    Prompt later;
    later.want(terminal);
    QCOMPARE(later.granted, 0);
    QCOMPARE(question.granted, 0);
    // What is typed next stays in the terminal, for whoever reads it (here, the test).
    QVERIFY(pty.type("y\n"));
    QCOMPARE(readLeftOver(pty), QByteArray("y\n"));
    QCOMPARE(closed.size(), 1);
    QVERIFY(confirmation.lines.isEmpty() && later.lines.isEmpty());
}

void tst_TerminalLines::aHangUpEndsItToo()
{
    PseudoTerminal pty;
    QVERIFY(pty.isOpen());
    TerminalLines terminal(pty.terminalPath());
    QSignalSpy closed(&terminal, &TerminalLines::closed);
    QVERIFY(terminal.open());
    Prompt prompt;
    prompt.want(terminal);
    pty.hangUp();
    QVERIFY(closed.wait(kWaitMs));
    QVERIFY(terminal.isClosed());
    QVERIFY(prompt.lines.isEmpty());
}

QTEST_GUILESS_MAIN(tst_TerminalLines)
#include "tst_terminallines.moc"
