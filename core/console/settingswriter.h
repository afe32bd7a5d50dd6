#pragma once

#include <QFuture>
#include <QMetaType>
#include <QString>

#include <functional>
#include <memory>

class QObject;
class QSettings;
class QThreadPool;

namespace AgentConsole {

// How a write of an INI file went.
struct SettingsWritten
{
    enum class Outcome {
        Written,
        Refused, // the check found a reason not to touch the file (`problem`)
        Unreadable, // QSettings could not read the file as it is now: left as it is
        Unwritten, // the new file could not be written
    };
    Outcome outcome = Outcome::Written;
    QString problem;

    bool written() const { return outcome == Outcome::Written; }
};

// Writes INI files (QSettings) off the calling thread, one write after the other in the
// order they were asked for: QSettings writes a whole new file and syncs it to disk
// (QSaveFile), which the GUI thread must never wait for. The thread ends when it has had
// nothing to write for a while (QThreadPool's expiry). Destroying the writer waits for the
// writes already asked for, so that what staff chose last (the window's geometry at close)
// is on disk when the console exits.
class SettingsWriter final
{
public:
    // Changes a QSettings of the file. Runs on the writer's thread: it must hold its values,
    // not refer to the caller's.
    using Change = std::function<void(QSettings &)>;
    // Looks at the file before it is changed: a reason not to touch it, or an empty string.
    // Runs on the writer's thread, before `change`.
    using Check = std::function<QString()>;

    SettingsWriter();
    ~SettingsWriter();
    SettingsWriter(const SettingsWriter &) = delete;
    SettingsWriter &operator=(const SettingsWriter &) = delete;

    QFuture<SettingsWritten> write(const QString &path, Change change, Check check = {});
    // The same, with how it went handed to `done` on `context`'s thread (not at all once
    // `context` is gone).
    void write(const QString &path, Change change, QObject *context,
               std::function<void(const SettingsWritten &)> done, Check check = {});

private:
    std::unique_ptr<QThreadPool> m_pool;
};

// The same write on the calling thread: for a console without a window (agent-cli, tests)
// and for what SettingsWriter runs.
SettingsWritten writeSettingsNow(const QString &path, const SettingsWriter::Change &change,
                                 const SettingsWriter::Check &check = {});

} // namespace AgentConsole

Q_DECLARE_METATYPE(AgentConsole::SettingsWritten)
