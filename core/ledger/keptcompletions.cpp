#include "keptcompletions.h"

#include "core/telemetry/logging.h"

#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSaveFile>

namespace AgentConsole::Internal {

KeptCompletions::KeptCompletions(QString path)
    : m_path(std::move(path))
{
}

void KeptCompletions::load()
{
    if (m_path.isEmpty() || !QFileInfo::exists(m_path))
        return;
    QFile file(m_path);
    const auto unusable = [this](const char *why) {
        m_fileUnusable = true;
        qCWarning(lcLedger).noquote()
            << "the ledger's kept completions in" << m_path << "cannot be read (" << why
            << "): left as they are, and not recorded";
    };
    if (file.size() > MaxFileBytes)
        return unusable("too large");
    if (!file.open(QIODevice::ReadOnly))
        return unusable("cannot open");
    const QJsonDocument document = QJsonDocument::fromJson(file.readAll());
    if (!document.isArray())
        return unusable("not a list");
    for (const QJsonValue &value : document.array()) {
        const QJsonObject entry = value.toObject();
        const std::optional<LedgerStatus> status = LedgerState::fromName(
            entry.value(QLatin1String("status")).toString());
        const QString key = entry.value(QLatin1String("key")).toString();
        if (key.isEmpty() || !status || *status == LedgerStatus::Processing)
            return unusable("an entry is not a completion");
        if (m_entries.size() < MaxKept)
            m_entries.append({key, *status, entry.value(QLatin1String("result")).toObject()});
    }
    qCInfo(lcLedger).noquote() << m_entries.size()
                               << "completion(s) kept by an earlier run, to be recorded";
}

void KeptCompletions::keep(Entry entry)
{
    if (m_entries.size() >= MaxKept) {
        qCWarning(lcLedger).noquote()
            << "too many kept completions: giving up" << m_entries.constFirst().key;
        m_entries.removeFirst();
    }
    m_entries.append(std::move(entry));
    save();
}

qsizetype KeptCompletions::recordWith(const Complete &complete)
{
    const qsizetype before = m_entries.size();
    while (!m_entries.isEmpty()) {
        const LedgerCompletion completion = complete(m_entries.constFirst());
        if (completion.outcome == LedgerCompletion::Outcome::StoreError)
            break;
        qCInfo(lcLedger).noquote() << "kept completion" << m_entries.constFirst().key
                                   << (completion.completed() ? "recorded" : "already settled");
        m_entries.removeFirst();
    }
    if (m_entries.size() != before)
        save();
    return m_entries.size();
}

void KeptCompletions::save()
{
    if (m_path.isEmpty() || m_fileUnusable)
        return;
    if (m_entries.isEmpty()) {
        QFile::remove(m_path);
        return;
    }
    QJsonArray entries;
    for (const Entry &entry : std::as_const(m_entries)) {
        entries.append(QJsonObject{{QStringLiteral("key"), entry.key},
                                   {QStringLiteral("status"), LedgerState::name(entry.status)},
                                   {QStringLiteral("result"), entry.result}});
    }
    // Written whole and renamed into place: a crash mid-write leaves the last good file.
    QSaveFile file(m_path);
    if (!file.open(QIODevice::WriteOnly)
        || file.write(QJsonDocument(entries).toJson(QJsonDocument::Compact)) < 0 || !file.commit())
        qCWarning(lcLedger).noquote()
            << "cannot write the kept completions to" << m_path << "(" << file.errorString()
            << "): they are kept in memory until recorded";
}

} // namespace AgentConsole::Internal
