#pragma once

#include "../resilience/retrypolicy.h"
#include "chatmodel.h"

#include <QByteArray>
#include <QList>
#include <QPair>
#include <QUrl>

#include <cstdint>
#include <optional>

QT_BEGIN_NAMESPACE
class QNetworkAccessManager;
QT_END_NAMESPACE

namespace AgentConsole {

struct OpenAiConfig
{
    QUrl baseUrl; // up to and including /v1; requests go to {baseUrl}/chat/completions
    QString model;
    QString apiKey; // empty: no Authorization header (Ollama, a local vLLM)
    QList<QPair<QByteArray, QByteArray>> extraHeaders;
    bool stream = true;
    // No response headers within this time fails the attempt (a timeout, retryable). Without
    // streaming the headers only come once the whole answer is written, so the wait for them
    // is at least idleTimeoutMs then.
    int connectTimeoutMs = 10000;
    // No progress (real data, not keep-alive comments) within this time fails the attempt.
    int idleTimeoutMs = 30000;
    int maxAttempts = 3; // in all, the first attempt included
    int retryAfterCapMs = 20000;
    int initialBackoffMs = 500; // doubled after every retry unless the server says otherwise
    // Set: each backoff is drawn up to the computed one (full jitter), every reply from its
    // own seed derived from this one (the console's, so that consoles do not retry a provider
    // in lockstep). Empty: the computed waits, the same in every run.
    std::optional<std::uint64_t> jitterSeed;
    QString displayName;

    // "deepseek", "openai" or "ollama"; an unknown name gives a config without a base URL.
    static OpenAiConfig preset(const QString &name);
    // The model layer's retry as a RetryPolicy: maxAttempts in all, the delay doubling from
    // initialBackoffMs, the schedule and a server's Retry-After alike capped at
    // retryAfterCapMs, full jitter when jitterSeed is set. FaultyChatModel retries injected
    // 429s by it too.
    RetryPolicy retryPolicy() const;
};

// A model behind any server that speaks OpenAI's /chat/completions: DeepSeek, OpenAI, Ollama,
// vLLM, llama.cpp's server. Tool calls (parallel ones too), SSE streaming, model-layer retry
// with Retry-After, connect and idle timeouts. Lives on the GUI thread, with its own network
// access manager; every reply it returns must be used on that thread.
class OpenAiCompatibleModel final : public ChatModel
{
    Q_OBJECT

public:
    explicit OpenAiCompatibleModel(OpenAiConfig config, QObject *parent = nullptr);
    ~OpenAiCompatibleModel() override;

    QString modelName() const override;
    ChatReply *complete(const ChatRequest &request) override;

    const OpenAiConfig &config() const { return m_config; }

private:
    OpenAiConfig m_config;
    QNetworkAccessManager *m_network; // a child of this model
    quint64 m_replies = 0; // replies made so far: each draws its backoff from its own seed
};

} // namespace AgentConsole
