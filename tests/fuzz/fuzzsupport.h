#pragma once

// What every fuzz target shares: a QCoreApplication made once, Qt's log kept quiet (a fuzzer
// runs millions of inputs; qFatal still aborts), and inputs of several fields.

#include <QByteArray>
#include <QCoreApplication>
#include <QList>
#include <QLoggingCategory>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstdio>

namespace AgentConsole::Fuzz {

// Made once, on the first input, never destroyed: libFuzzer ends the process itself.
inline void ensureApplication()
{
    if (QCoreApplication::instance())
        return;
    static int argc = 1;
    static char name[] = "agentconsole-fuzz";
    static char *argv[] = {name, nullptr};
    new QCoreApplication(argc, argv); // NOLINT: lives as long as the process
    // AGENT_CONSOLE_FUZZ_LOG=1 shows the log, for a crash being looked into.
    if (qEnvironmentVariableIsSet("AGENT_CONSOLE_FUZZ_LOG"))
        return;
    qInstallMessageHandler([](QtMsgType type, const QMessageLogContext &, const QString &text) {
        if (type == QtFatalMsg)
            std::fprintf(stderr, "qFatal: %s\n", qPrintable(text));
    });
}

inline QByteArray bytesOf(const uint8_t *data, size_t size)
{
    return QByteArray(reinterpret_cast<const char *>(data), qsizetype(size));
}

// The fields of a multi-field input: separated by a line "--" ("a\n--\nb" is {a, b}); missing
// fields are empty. A seed stays a readable text file.
inline QList<QByteArray> fieldsOf(const QByteArray &input, qsizetype count)
{
    QList<QByteArray> fields;
    qsizetype from = 0;
    while (fields.size() < count - 1) {
        const qsizetype at = input.indexOf("\n--\n", from);
        if (at < 0)
            break;
        fields.append(input.mid(from, at - from));
        from = at + 4;
    }
    fields.append(input.mid(from));
    while (fields.size() < count)
        fields.append(QByteArray());
    return fields;
}

// A property of the code under test does not hold: a crash for libFuzzer, with the reason.
[[noreturn]] inline void violated(const char *what)
{
    std::fprintf(stderr, "fuzz property violated: %s\n", what);
    std::abort();
}

#define FUZZ_CHECK(condition)                                                                  \
    do {                                                                                       \
        if (!(condition))                                                                      \
            ::AgentConsole::Fuzz::violated(#condition);                                        \
    } while (false)

// Piece lengths for feeding one input in reads of varying size, from the input itself so
// that a run is repeatable: 1..16 bytes, as a slow network would deliver them.
class PieceLengths final
{
public:
    explicit PieceLengths(const QByteArray &input)
        : m_state(quint32(input.size()) * 2654435761u + 1)
    {
        for (const char c : input.left(16))
            m_state = m_state * 31 + quint8(c);
    }
    qsizetype next()
    {
        m_state = m_state * 1103515245u + 12345u;
        return qsizetype((m_state >> 16) % 16) + 1;
    }

private:
    quint32 m_state;
};

} // namespace AgentConsole::Fuzz
