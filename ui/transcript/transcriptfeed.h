#pragma once

#include <QObject>
#include <QPointer>

namespace AgentConsole {

class AgentLoop;
class TranscriptView;

// Shows one agent loop's turns in a transcript: questions, streamed answers, tool calls
// (confirmation requests included) and finished turns; and passes the staff member's answers
// to confirmation panels back to AgentLoop::confirm. It forwards only; the loop decides.
// Lives on the GUI thread, like both ends.
class TranscriptFeed final : public QObject
{
    Q_OBJECT

public:
    TranscriptFeed(AgentLoop *loop, TranscriptView *transcript, QObject *parent = nullptr);
    ~TranscriptFeed() override;

    AgentLoop *loop() const;

private:
    QPointer<AgentLoop> m_loop;
    QPointer<TranscriptView> m_transcript;
};

} // namespace AgentConsole
