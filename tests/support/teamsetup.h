#pragma once

// A team database made ready as its administrator makes it (docs/TEAM.md, setup B): the first
// start's migrations run by the owner (the ledger's and the turn journal's), and each agent's own
// database role named in team_members. Header-only, for the suites that start consoles under
// agents' and leads' roles; they link agentconsole_core (or the ledger's library).
#include "core/ledger/idempotencyledger.h"
#include "core/ledger/postgresledger.h"
#include "core/ledger/turnjournal.h"

#include <QList>
#include <QSqlDatabase>
#include <QSqlError>
#include <QSqlQuery>
#include <QString>

namespace AgentConsole::Testing {

struct TeamMember
{
    QString role;
    QString tenant;
    QString staff;
};

// Migrates the database at `ownerUrl` (its owner's connection) and names `members`; false with
// the reason in *error.
inline bool setUpTeamDatabase(const QString &ownerUrl, const QList<TeamMember> &members,
                              QString *error)
{
    const std::optional<PostgresLocation> owner = PostgresLocation::fromUrl(ownerUrl, error);
    if (!owner)
        return false;
    {
        PostgresLedger ledger(*owner, LedgerOptions{});
        QFuture<LedgerOpenResult> opened = ledger.open();
        opened.waitForFinished(); // the ledger's own thread; nothing else waits here
        if (!opened.result().ready()) {
            *error = opened.result().detail;
            return false;
        }
        TurnJournal journal(*owner, QStringLiteral("setup/setup"),
                            {QStringLiteral("setup"), QStringLiteral("setup")});
        QFuture<JournalOpenResult> journalOpened = journal.open();
        journalOpened.waitForFinished();
        if (!journalOpened.result().ok) {
            *error = journalOpened.result().detail;
            return false;
        }
    }
    const QString name = QStringLiteral("team-setup");
    bool ok = true;
    {
        QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QPSQL"), name);
        db.setHostName(owner->host);
        db.setPort(owner->port);
        db.setUserName(owner->userName);
        db.setDatabaseName(owner->database);
        ok = db.open();
        QSqlQuery insert(db);
        for (const TeamMember &member : members) {
            if (!ok)
                break;
            insert.prepare(QStringLiteral("INSERT INTO team_members (role_name, tenant_id, "
                                          "staff_id) VALUES (?, ?, ?) ON CONFLICT DO NOTHING"));
            insert.addBindValue(member.role);
            insert.addBindValue(member.tenant);
            insert.addBindValue(member.staff);
            ok = insert.exec();
        }
        if (!ok)
            *error = insert.lastError().text() + db.lastError().text();
        insert.finish();
        db.close();
    }
    QSqlDatabase::removeDatabase(name);
    return ok;
}

} // namespace AgentConsole::Testing
