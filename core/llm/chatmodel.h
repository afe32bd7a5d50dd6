#pragma once

#include "../resilience/retrybudget.h"
#include "../resilience/toolresult.h"
#include "../tools/tooldescriptor.h"
#include "modelerror.h"

#include <QList>
#include <QObject>
#include <QString>

namespace AgentConsole {

// A tool call as the model asked for it. `arguments` is the raw JSON text the model produced:
// it may be malformed, and the agent loop, not the model layer, decides what that means.
struct ModelToolCall
{
    QString id;
    QString name;
    QString arguments;
    // > 0 when the model sent more than the turn keeps (maxArgumentBytes): then `arguments` is
    // only an excerpt, and this is how many UTF-8 bytes the model sent.
    qint64 cutFromBytes = 0;

    // A tool call's arguments, in UTF-8 bytes (DESIGN.md, "Bounds"): longer ones are
    // INVALID_ARGUMENT before they are parsed, and only an excerpt of them is kept, from the
    // stream's reader on (in the conversation, the checkpoint, the journal and --json).
    static constexpr qsizetype maxArgumentBytes = 256 * 1024;
    // What is kept of arguments over that bound, in characters.
    static constexpr qsizetype argumentExcerpt = 512;

    friend bool operator==(const ModelToolCall &, const ModelToolCall &) = default;
};

// One message of an OpenAI-style chat completion conversation.
struct ChatMessage
{
    enum class Role { System, User, Assistant, Tool };

    Role role = Role::User;
    QString content;
    QList<ModelToolCall> toolCalls; // assistant messages that call tools
    QString toolCallId; // tool messages: which call this answers
    QString toolName; // tool messages: the tool's name
    // Assistant messages of a thinking model (DeepSeek): the reasoning it streamed before this
    // message, never part of the answer. A provider that returned it with tool calls wants it
    // back in every later request of the conversation (or answers 400); any other provider
    // must not get it, so it travels only to the provider named by reasoningOrigin.
    QString reasoningContent;
    QString reasoningOrigin; // ChatResponse::reasoningOrigin of the provider that wrote it

    friend bool operator==(const ChatMessage &, const ChatMessage &) = default;

    static ChatMessage system(const QString &text)
    {
        return {Role::System, text, {}, {}, {}, {}, {}};
    }
    static ChatMessage user(const QString &text) { return {Role::User, text, {}, {}, {}, {}, {}}; }
    static ChatMessage assistant(const QString &text, const QList<ModelToolCall> &calls = {})
    {
        return {Role::Assistant, text, calls, {}, {}, {}, {}};
    }
    static ChatMessage toolResult(const QString &callId, const QString &name, const QString &json)
    {
        return {Role::Tool, json, {}, callId, name, {}, {}};
    }
};

struct ChatRequest
{
    QList<ChatMessage> messages;
    QList<ToolDescriptor> tools;
    // The turn's shared retry budget and deadline; a provider asks the budget before every
    // retry (RetryBudget::Layer::Model) and gives up when the deadline passes. May be null.
    RetryBudgetPtr budget;
    // A cap on the answer's length (OpenAI's max_tokens); 0 leaves it to the provider. The
    // settings dialog's connection test asks for one token.
    int maxTokens = 0;
};

// The language of the staff member's latest question: fixed sentences are written in it.
inline Language questionLanguage(const ChatRequest &request)
{
    for (auto it = request.messages.crbegin(); it != request.messages.crend(); ++it) {
        if (it->role == ChatMessage::Role::User)
            return languageOf(it->content);
    }
    return Language::English;
}

enum class FinishReason { Stop, ToolCalls, Length, ContentFilter, Error };

struct ChatResponse
{
    QString model; // which model answered
    QString content;
    QList<ModelToolCall> toolCalls;
    // Length: the answer was cut off at the provider's output limit (content is what came).
    FinishReason finishReason = FinishReason::Stop;
    // A thinking model's reasoning (DeepSeek's reasoning_content): never the answer. Shown,
    // if at all, apart from it; kept with tool calls so that it can be sent back.
    QString reasoningContent;
    // Names the provider that wrote reasoningContent (an opaque digest, never a URL), so that
    // it is sent back only there. Empty when there is no reasoning.
    QString reasoningOrigin;
    // Set when the call failed (finishReason Error): a stable code and a safe sentence.
    QString errorCode;
    QString errorMessage;
    int attempts = 1; // model-layer attempts this call took, over every model asked
    int retries = 0; // of those, real retries of one model (model_retry_count): a
                     // fallback to the next model is not a retry
    int fallbackHops = 0; // how many models of a fallback chain were skipped before this one

    bool isError() const { return finishReason == FinishReason::Error; }
};

// One model call in flight. start() is implicit; the reply emits contentDelta as text arrives
// (zero or more times) and finished exactly once, after which response() is valid. The caller
// owns the reply (give it a parent or delete it with deleteLater()).
class ChatReply : public QObject
{
    Q_OBJECT

public:
    using QObject::QObject;

    bool isFinished() const { return m_finished; }
    const ChatResponse &response() const { return m_response; }
    // Stops the call; finished is emitted with an Error response unless it already was.
    virtual void abort() = 0;

Q_SIGNALS:
    void contentDelta(const QString &text);
    // The model layer tries `model` again: attempt `attempt` of at most `maxAttempts` starts
    // after `delayMs`. Progress only (the window words it); response() still counts every
    // attempt once the call is over.
    void retrying(const QString &model, int attempt, int maxAttempts, int delayMs);
    // A model of a fallback chain failed or was skipped, and `model`, further down, is asked.
    void fallingBack(const QString &model);
    void finished();

protected:
    void finishWith(ChatResponse response)
    {
        Q_ASSERT(!m_finished);
        if (m_finished)
            return;
        m_finished = true;
        m_response = std::move(response);
        Q_EMIT finished();
    }

private:
    ChatResponse m_response;
    bool m_finished = false;
};

// Shaped like OpenAI chat completions: messages and tool descriptors in, text and/or tool
// calls out. Implementations: the offline demo model; the OpenAI-compatible provider (later).
class ChatModel : public QObject
{
    Q_OBJECT

public:
    using QObject::QObject;

    virtual QString modelName() const = 0;
    virtual ChatReply *complete(const ChatRequest &request) = 0;
};

} // namespace AgentConsole
