#include "transcriptfeed.h"

#include "transcriptview.h"

#include "core/turn/agentloop.h"
#include "core/turn/turnresult.h"

namespace AgentConsole {

TranscriptFeed::TranscriptFeed(AgentLoop *loop, TranscriptView *transcript, QObject *parent)
    : QObject(parent)
    , m_loop(loop)
    , m_transcript(transcript)
{
    Q_ASSERT(loop && transcript);
    // Each connection's context is the transcript, so a closed transcript hears nothing more.
    connect(loop, &AgentLoop::turnStarted, transcript, &TranscriptView::addQuestion);
    connect(loop, &AgentLoop::turnResumed, transcript, &TranscriptView::markResumed);
    connect(loop, &AgentLoop::toolCallStarted, transcript, &TranscriptView::updateToolCall);
    connect(loop, &AgentLoop::confirmationRequested, transcript, &TranscriptView::updateToolCall);
    connect(loop, &AgentLoop::toolCallUpdated, transcript, &TranscriptView::updateToolCall);
    connect(loop, &AgentLoop::toolCallFinished, transcript, &TranscriptView::updateToolCall);
    connect(loop, &AgentLoop::answerDelta, transcript, &TranscriptView::appendAnswer);
    connect(loop, &AgentLoop::modelProgress, transcript, &TranscriptView::noteModelProgress);
    connect(loop, &AgentLoop::turnFinished, transcript, &TranscriptView::finishTurn);
    connect(transcript, &TranscriptView::confirmationAnswered, this,
            [this](const QString &, const QString &operationId, bool approved) {
                // The loop ignores ids it does not know, e.g. of a turn that already ended.
                if (m_loop)
                    m_loop->confirm(operationId, approved);
            });
    connect(transcript, &TranscriptView::existingKept, this,
            [this](const QString &, const QString &operationId, const QString &existingId) {
                if (m_loop)
                    m_loop->keepExisting(operationId, existingId);
            });
}

TranscriptFeed::~TranscriptFeed() = default;

AgentLoop *TranscriptFeed::loop() const
{
    return m_loop;
}

} // namespace AgentConsole
