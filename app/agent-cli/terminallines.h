#pragma once

#include <QByteArray>
#include <QFile>
#include <QList>
#include <QObject>
#include <QString>

#include <functional>
#include <memory>

class QSocketNotifier;

namespace AgentConsole {

// The terminal agent-cli's prompts ask on (a write's confirmation, an MCP server's question):
// opened once, and read one line at a time without blocking the event loop, so that a Ctrl-C
// is heard and a call's timeout keeps running while staff type. Its prompts take turns: lines
// go to one reader at a time, in the order they asked, so that an answer typed for one is never
// taken by the other. It is read only while a reader wants lines: between prompts, what is
// typed stays in the terminal for standard input's next question. A line longer than
// `maxLineBytes` is not kept, only said (tooLong). Its end (Ctrl-D, or the terminal gone) is
// final: closed() tells every prompt, and nothing more is read or asked on it.
class TerminalLines final : public QObject
{
    Q_OBJECT

public:
    using LineHandler = std::function<void(const QString &line, bool tooLong)>;

    static constexpr qsizetype defaultMaxLineBytes = 16 * 1024; // longer than any answer

    // `path`: the controlling terminal, or in tests a pseudo-terminal's other end.
    explicit TerminalLines(QString path = QStringLiteral("/dev/tty"),
                           qsizetype maxLineBytes = defaultMaxLineBytes,
                           QObject *parent = nullptr);
    ~TerminalLines() override;

    // Opens the terminal at the first call; false when there is none, or once it closed.
    bool open();
    bool isClosed() const { return m_closed; }
    // Shows `text` on the terminal (a prompt); nothing once it closed.
    void write(const QString &text);

    // `reader` wants lines: when its turn comes (at once when no one else reads) `granted`
    // runs, and every line typed after goes to `onLine` until it calls release(). Asking
    // again while in line, or once the terminal closed, changes nothing.
    void want(const QObject *reader, std::function<void()> granted, LineHandler onLine);
    // `reader` needs no more lines (or no longer waits for its turn). What was typed ahead of
    // its prompts is dropped with its turn; the next reader in line gets the terminal.
    void release(const QObject *reader);
    bool isReading(const QObject *reader) const;

Q_SIGNALS:
    // The terminal's input ended or it went away: every reader's turn is over.
    void closed();

private:
    struct Reader
    {
        const QObject *reader;
        std::function<void()> granted;
        LineHandler onLine;
    };
    void onReadable();
    void deliverLines();
    void dropTyped();

    const QString m_path;
    const qsizetype m_maxLineBytes;
    QFile m_terminal;
    std::unique_ptr<QSocketNotifier> m_notifier;
    QList<Reader> m_readers; // the first one reads; the others wait for their turn
    QByteArray m_typed;
    bool m_discarding = false; // the line so far was too long: dropped up to its end
    bool m_closed = false;
};

} // namespace AgentConsole
