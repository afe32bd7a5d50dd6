#pragma once

#include <QByteArray>
#include <QObject>
#include <QString>

#include <memory>

class QSocketNotifier;

namespace AgentConsole {

// Standard input read one line at a time without blocking the event loop, so that a Ctrl+C
// at the prompt is heard: lineRead() or ended() follows each next(), later. Only read while
// a line is wanted: between two next() calls, what is typed stays in the terminal for
// whoever reads it then (a confirmation asked on /dev/tty). A line is bounded: one longer
// than maxChars is not kept, only said (tooLong).
class StandardInputLines final : public QObject
{
    Q_OBJECT

public:
    StandardInputLines(int maxChars, QObject *parent = nullptr);
    ~StandardInputLines() override;

    // Whether standard input is a terminal (a staff member types) rather than a pipe or file.
    bool isTerminal() const { return m_terminal; }
    // Asks for the next line.
    void next();

Q_SIGNALS:
    // The line, without its end-of-line; `tooLong`: it had more than maxChars characters and
    // `line` is empty. `number` counts from 1.
    void lineRead(const QString &line, int number, bool tooLong);
    // The end of the input (Ctrl+D at a terminal).
    void ended();

private:
    void onReadable();
    // Delivers one complete line held in m_pending, or the end; false: none yet.
    bool deliver();

    int m_maxChars;
    qsizetype m_maxBytes;
    bool m_terminal = false;
    std::unique_ptr<QSocketNotifier> m_notifier;
    QByteArray m_pending;
    bool m_discarding = false; // the line so far was too long: dropped up to its end
    bool m_atEnd = false;
    int m_lines = 0;
};

} // namespace AgentConsole
