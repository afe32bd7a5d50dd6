#include "conversationhistory.h"

#include "../async/await.h"
#include "../ledger/turnjournal.h"
#include "../telemetry/logging.h"
#include "../turn/turncheckpoint.h"

#include <QJsonArray>

#include <algorithm>
#include <memory>

namespace AgentConsole {
namespace {

// The labels TurnCheckpoint::toEntry stores; an unknown one (a newer console) reads as the
// most cautious, never as answered.
ConversationSummary::Outcome outcomeFromLabel(const QString &label)
{
    using Outcome = ConversationSummary::Outcome;
    if (label == QLatin1String("answered"))
        return Outcome::Answered;
    if (label == QLatin1String("partial"))
        return Outcome::Partial;
    if (label == QLatin1String("unanswered"))
        return Outcome::Unanswered;
    if (label == QLatin1String("cancelled"))
        return Outcome::Cancelled;
    if (label == QLatin1String("unfinished"))
        return Outcome::Interrupted;
    return Outcome::Failed;
}

bool isFinal(TurnStage stage)
{
    return stage == TurnStage::Completed || stage == TurnStage::Failed;
}

} // namespace

ConversationHistory::ConversationHistory(TurnJournal *journal, const QString &userId,
                                         const QString &tenantId, QObject *parent)
    : QObject(parent)
    , m_journal(journal)
    , m_owner(conversationOwner(tenantId, userId))
{
    Q_ASSERT(journal);
    qRegisterMetaType<AgentConsole::ConversationPage>();
    qRegisterMetaType<AgentConsole::StoredConversation>();
}

ConversationHistory::~ConversationHistory() = default;

QString ConversationHistory::boundedSearch(const QString &text)
{
    return text.simplified().left(kMaxSearchLength);
}

void ConversationHistory::list(const QString &search, int page)
{
    JournalConversationQuery query;
    query.owner = m_owner;
    query.contains = boundedSearch(search);
    query.withoutScenarios = m_hidingScenarios;
    query.limit = kPageSize;
    query.offset = std::max(0, page) * kPageSize;
    const quint64 generation = ++m_listGeneration;
    await(m_journal->conversations(query), this,
          [this, generation, query, page](const QList<JournalConversation> &rows) {
              if (generation != m_listGeneration)
                  return; // a newer search is on its way
              ConversationPage result;
              result.search = query.contains;
              result.withoutScenarios = query.withoutScenarios;
              result.page = std::max(0, page);
              result.hasMore = rows.size() > kPageSize;
              for (const JournalConversation &row : rows.mid(0, kPageSize)) {
                  ConversationSummary summary;
                  summary.conversationId = row.conversationId;
                  summary.title = row.title;
                  summary.latestOutcome = outcomeFromLabel(row.latestOutcome);
                  summary.turns = row.turns;
                  summary.resumable = row.resumable;
                  summary.scenario = row.scenario;
                  summary.startedAt = row.startedAt;
                  summary.updatedAt = row.updatedAt;
                  result.conversations.append(summary);
              }
              Q_EMIT listed(result);
          });
}

void ConversationHistory::open(const QString &conversationId)
{
    // The turns without their copy of the conversation (each turn's state holds all of it
    // so far: reading it for every turn would cost the square of the conversation), then the
    // latest turn whole, for what the model sees next.
    const QStringList omitted{QStringLiteral("conversation")};
    await(m_journal->turns(conversationId, m_owner, kMaxShownTurns, omitted), this,
          [this, conversationId](const QList<JournalEntry> &entries) {
              auto stored = std::make_shared<StoredConversation>();
              stored->conversationId = conversationId;
              for (JournalEntry entry : entries) {
                  // fromEntry wants a conversation; the turn's own question stands for it.
                  entry.state.insert(QStringLiteral("conversation"), QJsonArray());
                  entry.state.insert(QStringLiteral("turnStart"), 0);
                  QString error;
                  const std::optional<TurnCheckpoint> checkpoint = TurnCheckpoint::fromEntry(
                      entry, &error);
                  if (!checkpoint) {
                      qCWarning(lcAgent).noquote() << "history:" << error;
                      ++stored->unreadableTurns;
                      continue;
                  }
                  stored->turns.append({checkpoint->result, isFinal(checkpoint->stage)});
              }
              if (entries.isEmpty()) {
                  Q_EMIT opened(*stored);
                  return;
              }
              await(m_journal->turns(conversationId, m_owner, 1), this,
                    [this, stored](const QList<JournalEntry> &latest) {
                        QString error;
                        const std::optional<TurnCheckpoint> checkpoint = latest.isEmpty()
                            ? std::nullopt
                            : TurnCheckpoint::fromEntry(latest.first(), &error);
                        if (checkpoint) {
                            const bool whole = checkpoint->stage == TurnStage::Completed
                                && checkpoint->result.status == TurnStatus::Completed;
                            stored->messages = whole
                                ? checkpoint->conversation
                                : checkpoint->conversation.mid(0, checkpoint->turnStart);
                        } else if (!error.isEmpty()) {
                            qCWarning(lcAgent).noquote() << "history:" << error;
                        }
                        Q_EMIT opened(*stored);
                    });
          });
}

void ConversationHistory::remove(const QString &conversationId)
{
    await(m_journal->removeConversation(conversationId, m_owner), this,
          [this, conversationId](const JournalWrite &write) {
              if (!write.ok)
                  qCWarning(lcAgent).noquote() << "history: delete failed:" << write.detail;
              Q_EMIT removed(conversationId, write.ok,
                             write.ok ? QString()
                                      : tr("The conversation could not be deleted; it is "
                                           "still stored. See the local log."));
          });
}

} // namespace AgentConsole
