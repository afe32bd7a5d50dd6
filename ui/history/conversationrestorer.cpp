#include "conversationrestorer.h"

#include "historysidebar.h"
#include "ui/transcript/transcriptview.h"

#include "core/console/settingswriter.h"
#include "core/turn/agentloop.h"
#include "core/history/conversationhistory.h"
#include "core/turn/finishedturns.h"

#include <QAction>
#include <QDir>
#include <QSettings>

namespace AgentConsole {

namespace {

const QString kOpenConversationKey = QStringLiteral("history/openConversation");

} // namespace

ConversationRestorer::ConversationRestorer(ConversationHistory *history, AgentLoop *loop,
                                           TranscriptView *transcript,
                                           FinishedTurns *finishedTurns, HistorySidebar *sidebar,
                                           QAction *newConversation, const QString &dataDirectory,
                                           std::function<bool()> canSwitch, QObject *parent)
    : QObject(parent)
    , m_history(history)
    , m_loop(loop)
    , m_transcript(transcript)
    , m_finishedTurns(finishedTurns)
    , m_sidebar(sidebar)
    , m_newConversation(newConversation)
    // In the data directory, not the user's settings: a test's directory isolates it, and
    // the conversation it names is this data directory's.
    , m_settingsPath(QDir(dataDirectory).filePath(QStringLiteral("window.ini")))
    , m_canSwitch(std::move(canSwitch))
    , m_writer(std::make_unique<SettingsWriter>())
{
    Q_ASSERT(history && loop && transcript && sidebar);
    connect(history, &ConversationHistory::opened, this, &ConversationRestorer::show);
    connect(loop, &AgentLoop::turnFinished, this, &ConversationRestorer::onTurnFinished);
    connect(sidebar, &HistorySidebar::openRequested, this, &ConversationRestorer::open);
    connect(sidebar, &HistorySidebar::conversationRemoved, this, [this](const QString &id) {
        if (id == m_current || id == m_loop->session().conversationId) {
            // What is on screen is gone: the window's own "New conversation".
            if (m_newConversation && m_newConversation->isEnabled())
                m_newConversation->trigger();
            else
                remember({});
        }
    });
}

ConversationRestorer::~ConversationRestorer() = default;

QString ConversationRestorer::storedConversation() const
{
    return QSettings(m_settingsPath, QSettings::IniFormat).value(kOpenConversationKey).toString();
}

void ConversationRestorer::remember(const QString &conversationId)
{
    // Written when it changes only (every turn's end remembers its conversation), and off the
    // GUI thread: QSettings writes the file anew and syncs it to disk.
    if (m_remembered == conversationId)
        return;
    m_remembered = conversationId;
    ++m_writesUnderWay;
    m_writer->write(
        m_settingsPath,
        [conversationId](QSettings &settings) {
            if (conversationId.isEmpty())
                settings.remove(kOpenConversationKey);
            else
                settings.setValue(kOpenConversationKey, conversationId);
        },
        this,
        [this](const SettingsWritten &written) {
            --m_writesUnderWay;
            if (!written.written())
                qWarning("the conversation on screen could not be kept in %s for the next start",
                         qPrintable(QDir::toNativeSeparators(m_settingsPath)));
        });
}

void ConversationRestorer::restoreLast()
{
    const QString last = storedConversation();
    if (!last.isEmpty())
        open(last);
}

void ConversationRestorer::open(const QString &conversationId)
{
    if (conversationId.isEmpty() || !m_history || (m_canSwitch && !m_canSwitch()))
        return;
    m_requested = conversationId;
    m_history->open(conversationId);
}

void ConversationRestorer::show(const StoredConversation &conversation)
{
    if (conversation.conversationId != m_requested)
        return; // an older request, overtaken
    m_requested.clear();
    if (!m_loop || !m_transcript || (m_canSwitch && !m_canSwitch()))
        return;
    if (conversation.turns.isEmpty()) {
        // Deleted meanwhile, or never stored: nothing to come back to.
        if (storedConversation() == conversation.conversationId)
            remember({});
        Q_EMIT restored(conversation.conversationId, 0);
        return;
    }
    if (!m_loop->continueConversation(conversation.conversationId, conversation.messages))
        return;
    m_transcript->clear();
    if (m_finishedTurns)
        m_finishedTurns->clear();
    for (const StoredConversation::Turn &stored : conversation.turns) {
        m_transcript->addQuestion(stored.result.requestId, stored.result.question);
        // An interrupted turn stays a question: its Resume offer carries it on in place.
        if (!stored.finished) {
            m_transcript->markInterrupted(stored.result.requestId);
            continue;
        }
        // The journal keeps no labels: today's tools word the cards, as for a resumed turn.
        TurnResult turn = stored.result;
        for (ToolCallRecord &call : turn.toolCalls) {
            if (call.labels.title.isEmpty() && call.labels.arguments.isEmpty())
                call.labels = m_loop->toolLabels(call.name);
        }
        m_transcript->finishTurn(turn);
        if (m_finishedTurns)
            m_finishedTurns->add(turn);
    }
    m_current = conversation.conversationId;
    remember(m_current);
    m_sidebar->setCurrentConversation(m_current);
    Q_EMIT restored(m_current, int(conversation.turns.size()));
}

void ConversationRestorer::conversationReset()
{
    m_current.clear();
    m_requested.clear();
    remember({});
    m_sidebar->setCurrentConversation({});
}

void ConversationRestorer::onTurnFinished(const TurnResult &result)
{
    // A resumed turn of another conversation is not where the staff member is, nor is a
    // scenario's run: their conversation comes back when it ends (ScenarioRunner).
    if (m_loop && result.scenario.isEmpty()
        && result.conversationId == m_loop->session().conversationId) {
        m_current = result.conversationId;
        remember(m_current);
        m_sidebar->setCurrentConversation(m_current);
    }
    m_sidebar->refresh();
}

} // namespace AgentConsole
