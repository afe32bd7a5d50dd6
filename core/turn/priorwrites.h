#pragma once

#include "../resilience/resultcode.h"

#include <QDateTime>
#include <QJsonObject>
#include <QList>
#include <QString>

namespace AgentConsole {

// What a write's PriorWritesCheck (tooldescriptor.h) found before staff confirm it: the
// earlier writes of the same subject (an order's tickets), from the backend and from the
// idempotency ledger, and which of them looks repeated. Not stored with the turn: a
// confirmation offered again after a restart checks again.
struct PriorWrites
{
    enum class State {
        NotChecked, // the write has no check, or it has not started
        Checking,
        Checked, // the backend answered (entries may be empty: nothing before)
        Unavailable, // the backend could not say (lookupCode); entries are the ledger's only
    };

    struct Entry
    {
        QString id; // e.g. "T-000001"
        QJsonObject fields; // the earlier write as its source gave it
        QDateTime createdAt; // UTC; invalid when its source did not say
        QString createdBy; // a staff user id; empty when not said
        bool byThisStaffMember = false;
        bool likelyDuplicate = false; // the same sameFields, within the duplicate window
        bool fromLedgerOnly = false; // the backend did not list it (or could not be asked)
    };

    State state = State::NotChecked;
    // Unavailable: the lookup's result code (TOOL_UNAVAILABLE, ...)
    ResultCode::Code lookupCode = ResultCode::Code::Unrecognized;
    bool ledgerUnread = false; // the ledger could not be asked (its entries are missing)
    qint64 windowSeconds = 0; // the duplicate window the judgement used
    // For the sentence of a likely duplicate: what was looked up ("A1001") and the field that
    // names the earlier write's kind (its staff label is told: "Damaged item").
    QString subject;
    QString namedField;
    QList<Entry> entries; // newest first, one per id

    // The newest likely duplicate, or null.
    const Entry *likelyDuplicate() const
    {
        for (const Entry &entry : entries) {
            if (entry.likelyDuplicate)
                return &entry;
        }
        return nullptr;
    }
    bool isFinished() const { return state == State::Checked || state == State::Unavailable; }
};

} // namespace AgentConsole
