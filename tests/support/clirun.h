#pragma once

// What one run of agent-cli left: its exit status and its output. Header-only, shared by the
// suites that start agent-cli as a child process.

#include <QByteArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QList>

namespace AgentConsole::Testing {

struct CliRun
{
    int exitCode = -1; // -1: it did not exit normally
    QByteArray out;
    QByteArray err;

    // Every --json line, one turn each.
    QList<QJsonObject> turns() const
    {
        QList<QJsonObject> all;
        for (const QByteArray &line : out.split('\n')) {
            if (!line.trimmed().isEmpty())
                all.append(QJsonDocument::fromJson(line).object());
        }
        return all;
    }
    // The last turn printed.
    QJsonObject turn() const
    {
        const QList<QJsonObject> all = turns();
        return all.isEmpty() ? QJsonObject() : all.last();
    }
};

} // namespace AgentConsole::Testing
