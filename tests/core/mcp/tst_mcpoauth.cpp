// MCP sign-in (issue #21 §2, docs/MCP.md "Servers that need sign-in") end to end on
// 127.0.0.1: an MCP server behind OAuth with its authorization server (tests/support's
// FakeOAuthServer), a browser stand-in that follows the authorization URL, and the real
// server, authorizer, transport, tool adapter and executor. What the staff member and the
// team rely on: a sign-in brings a token that only the keychain keeps, a cancelled or refused
// one leaves the server waiting for staff (never a loop, never the breaker's fault), and no
// redirect during discovery takes anything to another origin.
#include "fakeoauthserver.h"

#include "core/console/agentruntime.h"
#include "core/console/faultcontrol.h"
#include "core/console/mcpservers.h"
#include "core/console/runtimemonitor.h"
#include "core/export/conversationexport.h"
#include "core/llm/secretstore.h"
#include "core/mcp/mcpserver.h"
#include "core/oauth/authorizer.h"
#include "core/oauth/grantstore.h"
#include "core/resilience/circuitbreaker.h"
#include "core/resilience/resultcode.h"
#include "core/resilience/toolexecutor.h"

#include <QFile>
#include <QFutureWatcher>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLoggingCategory>
#include <QMutex>
#include <QProcess>
#include <QRegularExpression>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QUrlQuery>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

using namespace AgentConsole;
using namespace AgentConsole::Mcp;
using AgentConsole::Testing::FakeBrowser;
using AgentConsole::Testing::FakeOAuthServer;
using AgentConsole::Testing::ForbiddenOrigin;

namespace {

constexpr int kWaitMs = 20000;
const QString kServer = QStringLiteral("crm");
const QString kGrantKey = QStringLiteral("mcp.crm.oauth");

// Every line Qt's logging produced during a test (the local log is fed from the same
// handler), so that a test can say no token reached it.
QMutex logMutex;
QStringList capturedLog;
QtMessageHandler previousHandler = nullptr;

void captureMessage(QtMsgType type, const QMessageLogContext &context, const QString &message)
{
    {
        QMutexLocker lock(&logMutex);
        capturedLog.append(QString::fromLatin1(context.category ? context.category : "")
                           + QLatin1Char(' ') + message);
    }
    if (previousHandler)
        previousHandler(type, context, message);
}

QLoggingCategory::CategoryFilter previousFilter = nullptr;

void enableEverything(QLoggingCategory *category)
{
    if (previousFilter)
        previousFilter(category);
    if (QByteArray(category->categoryName()).startsWith("agentconsole.")) {
        for (QtMsgType type : {QtDebugMsg, QtInfoMsg, QtWarningMsg, QtCriticalMsg})
            category->setEnabled(type, true);
    }
}

QString logText()
{
    QMutexLocker lock(&logMutex);
    return capturedLog.join(QLatin1Char('\n'));
}

// Grants in memory, answering later as a keychain does; what was written stays visible.
class MemoryGrants final : public OAuth::GrantStore
{
public:
    void read(const QString &key, QObject *context, Done done) override
    {
        const Answer answer{true, m_values.contains(key), m_values.value(key), {}};
        later(context, std::move(done), answer);
    }
    void write(const QString &key, const QString &value, QObject *context, Done done) override
    {
        m_values.insert(key, value);
        ++m_writes;
        later(context, std::move(done), {true, false, {}, {}});
    }
    void remove(const QString &key, QObject *context, Done done) override
    {
        m_values.remove(key);
        later(context, std::move(done), {true, false, {}, {}});
    }

    QString value(const QString &key) const { return m_values.value(key); }
    void put(const QString &key, const QString &value) { m_values.insert(key, value); }
    int writes() const { return m_writes; }

private:
    static void later(QObject *context, Done done, Answer answer)
    {
        QMetaObject::invokeMethod(context, [done = std::move(done), answer] { done(answer); },
                                  Qt::QueuedConnection);
    }

    QHash<QString, QString> m_values;
    int m_writes = 0;
};

QString missingSecrets(const QString &text, const QStringList &secrets)
{
    QStringList found;
    for (const QString &secret : secrets) {
        if (text.contains(secret))
            found.append(secret.left(16));
    }
    return found.join(QLatin1String(", "));
}

} // namespace

class tst_McpOAuth : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void cleanupTestCase();
    void init();
    void cleanup();
    void signInBringsATokenOnlyTheKeychainHolds();
    void cancelledSignInLeavesTheServerWaitingForStaff();
    void refusedTokenAsksForSignInAgainWithoutALoop();
    void cancelledSignInFailsHeldCallsWithoutTheBreaker();
    void cancelledSignInToAServerThatAskedForNoneLeavesItAsItWas();
    void metadataRedirectToAnotherOriginIsNotFollowed();
    void redirectWithAnotherStateIsIgnored();
    void signInNotFinishedInTimeEnds();
    void refusalsEndAfterTheRetryLimit_data();
    void refusalsEndAfterTheRetryLimit();
    void runtimeKeepsTheTokenInTheKeychainOnly();
    void agentCliSignsInOnTheTerminalAndPrintsNoToken();

private:
    Server *makeServer(bool signInWhenAsked, int signInTimeoutMs = kWaitMs);
    bool waitReady(Server *server);
    ToolCallOutcome call(Server *server);
    void signInWithStoredGrant();

    std::unique_ptr<FakeOAuthServer> m_fake;
    std::unique_ptr<FakeBrowser> m_browser;
    std::shared_ptr<MemoryGrants> m_grants;
    std::unique_ptr<ToolExecutor> m_executor;
    RetryPolicy m_fast; // the base of every call's policy (McpTool::retryPolicy)
    std::unique_ptr<CircuitBreaker> m_breaker;
    std::unique_ptr<Server> m_server;
};

void tst_McpOAuth::initTestCase()
{
    // Everything our categories say, also what ctest's QT_LOGGING_RULES keep quiet (the
    // environment's rules win over setFilterRules), goes through the capture: a token in a
    // line only shown at info level would still be in the log file.
    previousFilter = QLoggingCategory::installFilter(enableEverything);
    previousHandler = qInstallMessageHandler(captureMessage);
}

void tst_McpOAuth::cleanupTestCase()
{
    qInstallMessageHandler(previousHandler);
    QLoggingCategory::installFilter(previousFilter);
}

void tst_McpOAuth::init()
{
    {
        QMutexLocker lock(&logMutex);
        capturedLog.clear();
    }
    m_fake = std::make_unique<FakeOAuthServer>();
    QVERIFY(m_fake->listen());
    m_browser = std::make_unique<FakeBrowser>();
    m_grants = std::make_shared<MemoryGrants>();
    ToolExecutor::Options options;
    options.workerThreads = 2;
    m_fast = RetryPolicy::defaults();
    m_fast.initialDelay = std::chrono::milliseconds(20);
    m_executor = std::make_unique<ToolExecutor>(options);
    m_breaker = std::make_unique<CircuitBreaker>(QStringLiteral("mcp:crm"),
                                                 CircuitBreaker::Options{});
}

void tst_McpOAuth::cleanup()
{
    m_server.reset();
    m_executor.reset();
    m_breaker.reset();
    m_browser.reset();
    m_fake.reset();
}

Server *tst_McpOAuth::makeServer(bool signInWhenAsked, int signInTimeoutMs)
{
    ServerConfig config;
    config.name = kServer;
    config.kind = ServerConfig::Kind::Http;
    config.url = m_fake->mcpUrl();
    Server::Options options;
    options.restartInitialMs = 50;
    options.signIn.whenAsked = signInWhenAsked;
    FakeBrowser *browser = m_browser.get();
    options.signIn.openBrowser = [browser](const QUrl &url) { return browser->open(url); };
    options.signIn.grants = m_grants;
    options.signIn.timeoutMs = signInTimeoutMs;
    m_server = std::make_unique<Server>(config, options);
    return m_server.get();
}

bool tst_McpOAuth::waitReady(Server *server)
{
    return QTest::qWaitFor([server] { return server->state() == Server::State::Ready; },
                           kWaitMs);
}

ToolCallOutcome tst_McpOAuth::call(Server *server)
{
    if (server->tools().isEmpty())
        return {};
    ToolCallRequest request;
    request.tool = server->tools().first();
    request.arguments = {{QStringLiteral("q"), QStringLiteral("A1001")}};
    request.context = {QStringLiteral("staff-1"), QStringLiteral("tenant-1"),
                       QStringLiteral("conv"), QStringLiteral("req"), Language::English};
    request.policy = server->tools().first()->retryPolicy(m_fast);
    request.breaker = m_breaker.get();
    QFutureWatcher<ToolCallOutcome> watcher;
    QSignalSpy finished(&watcher, &QFutureWatcher<ToolCallOutcome>::finished);
    watcher.setFuture(m_executor->execute(std::move(request)));
    if (!finished.wait(kWaitMs))
        return {};
    return watcher.result();
}

// A grant in the keychain from an earlier run: the window's server starts signed in.
void tst_McpOAuth::signInWithStoredGrant()
{
    QString refresh;
    const QString access = m_fake->issueToken(&refresh);
    OAuth::Grant grant;
    grant.accessToken = access;
    grant.refreshToken = refresh;
    grant.tokenEndpoint = QUrl(m_fake->origin().toString() + QStringLiteral("/token"));
    grant.issuer = m_fake->origin();
    grant.resource = m_fake->mcpUrl().toString();
    grant.scopes = {QStringLiteral("mcp:read")};
    // The fake knows no client of this name: refreshes are refused as invalid_client would be,
    // unless a test lets them through (none does).
    grant.client.clientId = QStringLiteral("stored-client");
    m_grants->put(kGrantKey, QString::fromUtf8(QJsonDocument(grant.toJson()).toJson()));
}

// The whole sign-in as agent-cli runs it (it may open the browser by itself): the first 401
// leads through discovery, registration, the browser and the token endpoint to a session that
// carries the token, and the token is in the grant store and in no output.
void tst_McpOAuth::signInBringsATokenOnlyTheKeychainHolds()
{
    Server *server = makeServer(true);
    server->start();
    QVERIFY2(waitReady(server), qPrintable(server->lastError()));

    QCOMPARE(m_browser->opened().size(), 1);
    const QUrl page = m_browser->opened().first();
    QCOMPARE(page.path(), QStringLiteral("/authorize"));
    // Authorization code with PKCE S256, a state, and the resource the token is for.
    const QUrlQuery asked(page);
    QCOMPARE(asked.queryItemValue(QStringLiteral("response_type")), QStringLiteral("code"));
    QCOMPARE(asked.queryItemValue(QStringLiteral("code_challenge_method")),
             QStringLiteral("S256"));
    QCOMPARE(asked.queryItemValue(QStringLiteral("code_challenge")).size(), 43);
    QVERIFY(asked.queryItemValue(QStringLiteral("state")).size() >= 16);
    QCOMPARE(asked.queryItemValue(QStringLiteral("resource"), QUrl::FullyDecoded),
             m_fake->mcpUrl().toString());
    QCOMPARE(QUrl(asked.queryItemValue(QStringLiteral("redirect_uri"), QUrl::FullyDecoded))
                 .host(), QStringLiteral("127.0.0.1"));
    QCOMPARE(m_browser->redirects().size(), 1);
    QCOMPARE(m_browser->redirects().first().host(), QStringLiteral("127.0.0.1"));

    // The order a client of the specification follows, each step once.
    QStringList steps;
    for (const FakeOAuthServer::Seen &seen : m_fake->seen()) {
        if (steps.isEmpty() || steps.last() != seen.path)
            steps.append(seen.path);
    }
    const QStringList expected{"/mcp",
                               "/.well-known/oauth-protected-resource/mcp",
                               "/.well-known/oauth-authorization-server",
                               "/register",
                               "/authorize",
                               "/token",
                               "/mcp"};
    QCOMPARE(steps, expected);
    QVERIFY(m_fake->seen().first().authorization.isEmpty());
    const QByteArray bearer = "Bearer " + m_fake->lastAccessToken().toLatin1();
    for (const FakeOAuthServer::Seen &seen : m_fake->seen()) {
        if (seen.path == QLatin1String("/mcp") && seen.rpcMethod == QLatin1String("tools/list"))
            QCOMPARE(seen.authorization, bearer);
    }
    QCOMPARE(server->authorizer()->state(), OAuth::Authorizer::State::SignedIn);

    // A tool call carries it too and succeeds.
    const ToolCallOutcome outcome = call(server);
    QVERIFY2(outcome.result.success, qPrintable(outcome.result.codeName()));
    QCOMPARE(m_fake->seen().last().rpcMethod, QStringLiteral("tools/call"));
    QCOMPARE(m_fake->seen().last().authorization, bearer);

    // The keychain holds the grant: the access and refresh tokens and the registered client.
    const QJsonObject stored
        = QJsonDocument::fromJson(m_grants->value(kGrantKey).toUtf8()).object();
    const OAuth::Grant grant = OAuth::Grant::fromJson(stored);
    QCOMPARE(grant.accessToken, m_fake->lastAccessToken());
    QVERIFY(m_fake->issuedSecrets().contains(grant.refreshToken));
    QVERIFY(grant.client.dynamic);
    QVERIFY(m_fake->issuedSecrets().contains(grant.client.clientSecret));

    // And nothing else does: not the log (every category, every level), not what the server
    // and the authorizer say about themselves, not the call's result or its attempts.
    const QStringList secrets = m_fake->issuedSecrets();
    QVERIFY(!secrets.isEmpty());
    // The capture saw the sign-in's own lines (info level included), so a token logged there
    // would have been caught.
    QVERIFY(logText().contains(QLatin1String("sign-in: token received")));
    QString outputs = logText();
    outputs += server->lastError() + server->config().describe()
        + server->authorizer()->lastError().describe();
    outputs += QString::fromUtf8(QJsonDocument(outcome.result.toJson()).toJson());
    QVERIFY2(missingSecrets(outputs, secrets).isEmpty(),
             qPrintable(missingSecrets(outputs, secrets)));
    // The redactors of exports know every one of them.
    const QStringList known = server->knownSecrets();
    QVERIFY(known.contains(grant.accessToken));
    QVERIFY(known.contains(grant.refreshToken));
    QVERIFY(known.contains(grant.client.clientSecret));
}

// The window's server (staff sign in): refused at its first request it waits, down and not
// restarted; a sign-in staff cancel while the browser page is open leaves it so, with the
// reason, and asks the server nothing more; the next sign-in starts it.
void tst_McpOAuth::cancelledSignInLeavesTheServerWaitingForStaff()
{
    Server *server = makeServer(false);
    server->start();
    QTRY_COMPARE_WITH_TIMEOUT(server->state(), Server::State::Down, kWaitMs);
    QCOMPARE(server->lastFailure(), Failure::AuthRequired);
    OAuth::Authorizer *authorizer = server->authorizer();
    QVERIFY(authorizer);
    QCOMPARE(authorizer->state(), OAuth::Authorizer::State::SignedOut);
    QCOMPARE(server->restartInMs(), -1); // a restart without a token would be refused again
    QVERIFY(m_browser->opened().isEmpty()); // the window never signs in by itself

    m_browser->setFollow(false); // the page stays open
    authorizer->signIn();
    QTRY_COMPARE_WITH_TIMEOUT(m_browser->opened().size(), 1, kWaitMs);
    QCOMPARE(authorizer->state(), OAuth::Authorizer::State::SigningIn);
    const int requestsBefore = m_fake->count(QStringLiteral("/mcp"));

    QSignalSpy refused(authorizer, &OAuth::Authorizer::refused);
    authorizer->cancelSignIn();
    QCOMPARE(refused.size(), 1);
    QCOMPARE(authorizer->state(), OAuth::Authorizer::State::SignedOut);
    QCOMPARE(authorizer->lastError().failure, OAuth::SignInFailure::Cancelled);
    QVERIFY(!authorizer->lastError().isFault());
    QCOMPARE(server->state(), Server::State::Down);
    QCOMPARE(server->restartInMs(), -1);
    // Nothing more is asked of the server; the token endpoint was never reached.
    QCOMPARE(m_fake->count(QStringLiteral("/mcp")), requestsBefore);
    QCOMPARE(m_fake->count(QStringLiteral("/token")), 0);
    // The redirect listener is closed: a late browser cannot finish the cancelled sign-in.
    QUrl late(QUrlQuery(m_browser->opened().first()).queryItemValue(
        QStringLiteral("redirect_uri"), QUrl::FullyDecoded));
    QVERIFY(late.isValid());
    late.setQuery(QStringLiteral("code=late&state=late"));
    QNetworkAccessManager network;
    QNetworkRequest lateRequest(late);
    lateRequest.setTransferTimeout(kWaitMs);
    QNetworkReply *reply = network.get(lateRequest);
    QSignalSpy lateDone(reply, &QNetworkReply::finished);
    QVERIFY(lateDone.wait(kWaitMs));
    QCOMPARE(reply->error(), QNetworkReply::ConnectionRefusedError);
    reply->deleteLater();

    // Staff sign in again, and this time finish in the browser: the server starts.
    m_browser->setFollow(true);
    authorizer->signIn();
    QVERIFY2(waitReady(server), qPrintable(server->lastError()));
    QCOMPARE(authorizer->state(), OAuth::Authorizer::State::SignedIn);
    QCOMPARE(authorizer->lastError().failure, OAuth::SignInFailure::None);
}

// A token the server accepted is refused later (revoked, expired) and the refresh is refused
// too: the call is SIGN_IN_REQUIRED at once (one attempt, the breaker not told), the state
// goes back to signed out, and the next call asks nothing of the token endpoint again.
void tst_McpOAuth::refusedTokenAsksForSignInAgainWithoutALoop()
{
    signInWithStoredGrant();
    Server *server = makeServer(false);
    server->start();
    QVERIFY2(waitReady(server), qPrintable(server->lastError()));
    QCOMPARE(server->authorizer()->state(), OAuth::Authorizer::State::SignedIn);
    QVERIFY(call(server).result.success);

    m_fake->revokeTokens();
    m_fake->setRefreshRefused(true);
    const ToolCallOutcome refused = call(server);
    QCOMPARE(refused.result.code, ResultCode::SignInRequired);
    QCOMPARE(refused.attempts.size(), 1);
    QCOMPARE(refused.retries, 0);
    QCOMPARE(m_breaker->windowFailures(), 0);
    QCOMPARE(m_breaker->state(), CircuitBreaker::State::Closed);
    QCOMPARE(server->authorizer()->state(), OAuth::Authorizer::State::SignedOut);
    QCOMPARE(m_fake->count(QStringLiteral("/token")), 1); // one refresh, refused
    QVERIFY(m_browser->opened().isEmpty());
    // The dead tokens are not kept: the next start does not show the server signed in.
    QTRY_VERIFY_WITH_TIMEOUT(OAuth::Grant::fromJson(QJsonDocument::fromJson(
                                 m_grants->value(kGrantKey).toUtf8()).object()).isEmpty(),
                             kWaitMs);
    for (const QString &secret : m_fake->issuedSecrets())
        QVERIFY(!m_grants->value(kGrantKey).contains(secret));
    // The staff words of the failure table, not the transport's.
    QVERIFY2(refused.result.message.contains(QLatin1String("sign in")),
             qPrintable(refused.result.message));

    const int callsBefore = m_fake->rpcCount(QStringLiteral("tools/call"));
    const ToolCallOutcome again = call(server);
    QCOMPARE(again.result.code, ResultCode::SignInRequired);
    QCOMPARE(again.attempts.size(), 1);
    QCOMPARE(m_fake->rpcCount(QStringLiteral("tools/call")), callsBefore + 1);
    QCOMPARE(m_fake->count(QStringLiteral("/token")), 1); // no second refresh
    QVERIFY(m_browser->opened().isEmpty());
    QCOMPARE(m_breaker->windowFailures(), 0);
}

// A call made while staff's sign-in waits in the browser is held, and when staff cancel it
// ends SIGN_IN_REQUIRED: one attempt, not retried, the breaker not told.
void tst_McpOAuth::cancelledSignInFailsHeldCallsWithoutTheBreaker()
{
    signInWithStoredGrant();
    Server *server = makeServer(false);
    server->start();
    QVERIFY2(waitReady(server), qPrintable(server->lastError()));
    m_fake->revokeTokens();
    m_fake->setRefreshRefused(true);
    QCOMPARE(call(server).result.code, ResultCode::SignInRequired);

    m_browser->setFollow(false);
    server->authorizer()->signIn();
    QTRY_COMPARE_WITH_TIMEOUT(m_browser->opened().size(), 1, kWaitMs);

    ToolCallRequest request;
    request.tool = server->tools().first();
    request.arguments = {{QStringLiteral("q"), QStringLiteral("A1002")}};
    request.context = {QStringLiteral("staff-1"), QStringLiteral("tenant-1"),
                       QStringLiteral("conv"), QStringLiteral("req-2"), Language::Chinese};
    request.policy = server->tools().first()->retryPolicy(m_fast);
    request.breaker = m_breaker.get();
    QFutureWatcher<ToolCallOutcome> watcher;
    QSignalSpy finished(&watcher, &QFutureWatcher<ToolCallOutcome>::finished);
    const int callsBefore = m_fake->rpcCount(QStringLiteral("tools/call"));
    const auto heldSoFar = [] {
        return int(logText().count(QStringLiteral("refused a request for its token")));
    };
    const int heldBefore = heldSoFar();
    watcher.setFuture(m_executor->execute(std::move(request)));
    // Held: refused by the server and waiting for the sign-in, not answered yet. Waited for on
    // the client's side (its 401 read and the request held), not only the server's: a cancel
    // between the two would meet a late 401 instead of a held request.
    QTRY_COMPARE_WITH_TIMEOUT(m_fake->rpcCount(QStringLiteral("tools/call")), callsBefore + 1,
                              kWaitMs);
    QTRY_COMPARE_WITH_TIMEOUT(heldSoFar(), heldBefore + 1, kWaitMs);
    QVERIFY(!watcher.isFinished());

    server->authorizer()->cancelSignIn();
    QVERIFY(finished.wait(kWaitMs));
    const ToolCallOutcome outcome = watcher.result();
    QCOMPARE(outcome.result.code, ResultCode::SignInRequired);
    QCOMPARE(outcome.attempts.size(), 1);
    QCOMPARE(outcome.retries, 0);
    QCOMPARE(m_fake->rpcCount(QStringLiteral("tools/call")), callsBefore + 1);
    QCOMPARE(m_breaker->windowFailures(), 0);
    QCOMPARE(m_breaker->state(), CircuitBreaker::State::Closed);
    QCOMPARE(server->authorizer()->state(), OAuth::Authorizer::State::SignedOut);
    QCOMPARE(server->authorizer()->lastError().failure, OAuth::SignInFailure::Cancelled);
    // In the staff member's language (the call asked in Chinese).
    QVERIFY2(outcome.result.message.contains(QStringLiteral("登录")),
             qPrintable(outcome.result.message));
}

// Staff may sign in to a server that has asked for no sign-in (the dock offers Sign in… on
// "not asked for so far"); cancelling that leaves it as it was, not "sign-in needed".
void tst_McpOAuth::cancelledSignInToAServerThatAskedForNoneLeavesItAsItWas()
{
    m_fake->setOpen(true);
    Server *server = makeServer(false);
    server->start();
    QVERIFY2(waitReady(server), qPrintable(server->lastError()));
    OAuth::Authorizer *authorizer = server->authorizer();
    QCOMPARE(authorizer->state(), OAuth::Authorizer::State::NotNeeded);

    m_browser->setFollow(false);
    authorizer->signIn();
    QTRY_COMPARE_WITH_TIMEOUT(m_browser->opened().size(), 1, kWaitMs);
    QCOMPARE(authorizer->state(), OAuth::Authorizer::State::SigningIn);
    authorizer->cancelSignIn();
    QCOMPARE(authorizer->state(), OAuth::Authorizer::State::NotNeeded);
    QCOMPARE(authorizer->lastError().failure, OAuth::SignInFailure::Cancelled);
    QVERIFY(call(server).result.success);
}

// The metadata addresses answer 302 to another origin: nothing follows them there, so no
// request, token or client secret reaches it, whatever the sign-in comes to.
void tst_McpOAuth::metadataRedirectToAnotherOriginIsNotFollowed()
{
    ForbiddenOrigin elsewhere;
    QVERIFY(elsewhere.listen());
    m_fake->redirectMetadataTo(elsewhere.origin());
    Server *server = makeServer(true);
    server->start();
    // Either way it settles: signed in over the 2025-03-26 defaults of its own origin, or
    // refused; what matters is where requests went.
    QVERIFY(QTest::qWaitFor([server] {
        const auto state = server->authorizer() ? server->authorizer()->state()
                                                : OAuth::Authorizer::State::Loading;
        return server->state() == Server::State::Ready
            || (server->state() == Server::State::Down
                && state != OAuth::Authorizer::State::SigningIn
                && state != OAuth::Authorizer::State::Loading);
    }, kWaitMs));
    QVERIFY(m_fake->count(QStringLiteral("/.well-known/oauth-protected-resource/mcp")) >= 1);
    QCOMPARE(elsewhere.connections(), 0);
    QVERIFY(elsewhere.received().isEmpty());
    // Whatever was issued went only to the server's own origin.
    for (const FakeOAuthServer::Seen &seen : m_fake->seen())
        QVERIFY2(!seen.path.contains(QLatin1String("//")), qPrintable(seen.path));
}

// A redirect to the loopback address that does not carry the sign-in's state (another tab, a
// page forging one) is ignored: no code is exchanged for it, and the real one still works.
void tst_McpOAuth::redirectWithAnotherStateIsIgnored()
{
    Server *server = makeServer(false);
    server->start();
    QTRY_COMPARE_WITH_TIMEOUT(server->state(), Server::State::Down, kWaitMs);
    m_browser->setFollow(false);
    server->authorizer()->signIn();
    QTRY_COMPARE_WITH_TIMEOUT(m_browser->opened().size(), 1, kWaitMs);
    const QUrl page = m_browser->opened().first();
    QUrl forged(QUrlQuery(page).queryItemValue(QStringLiteral("redirect_uri"),
                                               QUrl::FullyDecoded));
    forged.setQuery(QStringLiteral("code=forged-code&state=forged-state"));
    QNetworkAccessManager network;
    QNetworkRequest request(forged);
    request.setTransferTimeout(kWaitMs);
    QNetworkReply *reply = network.get(request);
    QSignalSpy done(reply, &QNetworkReply::finished);
    QVERIFY(done.wait(kWaitMs));
    reply->deleteLater();
    QCOMPARE(server->authorizer()->state(), OAuth::Authorizer::State::SigningIn);
    QCOMPARE(m_fake->count(QStringLiteral("/token")), 0);

    m_browser->setFollow(true);
    QVERIFY(m_browser->open(page)); // the staff member finishes on the real page
    QVERIFY2(waitReady(server), qPrintable(server->lastError()));
    QCOMPARE(m_fake->count(QStringLiteral("/token")), 1);
}

// A sign-in the staff member never finishes ends at its bound: signed out with the reason,
// not a fault of the server, the listener closed.
void tst_McpOAuth::signInNotFinishedInTimeEnds()
{
    Server *server = makeServer(false, 300);
    server->start();
    QTRY_COMPARE_WITH_TIMEOUT(server->state(), Server::State::Down, kWaitMs);
    m_browser->setFollow(false);
    OAuth::Authorizer *authorizer = server->authorizer();
    QSignalSpy refused(authorizer, &OAuth::Authorizer::refused);
    authorizer->signIn();
    QVERIFY(refused.wait(kWaitMs));
    QCOMPARE(authorizer->state(), OAuth::Authorizer::State::SignedOut);
    QCOMPARE(authorizer->lastError().failure, OAuth::SignInFailure::TimedOut);
    QVERIFY(!authorizer->lastError().isFault());
    QCOMPARE(server->state(), Server::State::Down);
    QCOMPARE(server->restartInMs(), -1);
    QCOMPARE(m_fake->count(QStringLiteral("/token")), 0);
}

void tst_McpOAuth::refusalsEndAfterTheRetryLimit_data()
{
    QTest::addColumn<int>("policy");
    QTest::newRow("401 to every new token")
        << int(FakeOAuthServer::TokenPolicy::Unauthorized);
    QTest::newRow("403 insufficient_scope to every new token")
        << int(FakeOAuthServer::TokenPolicy::InsufficientScope);
}

// A server that refuses every token it is given (a step-up that never satisfies it, or a
// 401 to each new token) is signed in to a bounded number of times, then the call ends
// SIGN_IN_REQUIRED; nothing loops.
void tst_McpOAuth::refusalsEndAfterTheRetryLimit()
{
    QFETCH(int, policy);
    Server *server = makeServer(true);
    server->start();
    QVERIFY2(waitReady(server), qPrintable(server->lastError()));
    QCOMPARE(m_browser->opened().size(), 1);

    m_fake->setTokenPolicy(FakeOAuthServer::TokenPolicy(policy));
    const int callsBefore = m_fake->rpcCount(QStringLiteral("tools/call"));
    const ToolCallOutcome outcome = call(server);
    QCOMPARE(outcome.result.code, ResultCode::SignInRequired);
    QCOMPARE(outcome.attempts.size(), 1);
    QCOMPARE(m_breaker->windowFailures(), 0);
    const int signIns = m_browser->opened().size() - 1;
    const int calls = m_fake->rpcCount(QStringLiteral("tools/call")) - callsBefore;
    QVERIFY2(signIns >= 1 && signIns <= 3, qPrintable(QString::number(signIns)));
    // The transport sends one request again at most 3 times (maxAuthRetries), whatever mix of
    // refreshes and sign-ins brought the new tokens.
    QVERIFY2(calls <= 4, qPrintable(QStringLiteral("%1 calls, %2 sign-ins")
                                         .arg(calls).arg(signIns)));
    // Settled, and said: the server kept refusing, staff must sign in (the dock shows why),
    // nothing left running that would ask again by itself.
    OAuth::Authorizer *authorizer = server->authorizer();
    QCOMPARE(authorizer->state(), OAuth::Authorizer::State::SignedOut);
    QCOMPARE(authorizer->lastError().failure, OAuth::SignInFailure::TooManyAttempts);

    // The next call is refused at once: no browser, no refresh, one request.
    const int browserBefore = m_browser->opened().size();
    const int tokensBefore = m_fake->count(QStringLiteral("/token"));
    const int callsAfter = m_fake->rpcCount(QStringLiteral("tools/call"));
    const ToolCallOutcome again = call(server);
    QCOMPARE(again.result.code, ResultCode::SignInRequired);
    QCOMPARE(m_browser->opened().size(), browserBefore);
    QCOMPARE(m_fake->count(QStringLiteral("/token")), tokensBefore);
    QCOMPARE(m_fake->rpcCount(QStringLiteral("tools/call")), callsAfter + 1);
    QCOMPARE(m_breaker->windowFailures(), 0);
    QCOMPARE(authorizer->state(), OAuth::Authorizer::State::SignedOut);
    QCOMPARE(authorizer->lastError().failure, OAuth::SignInFailure::TooManyAttempts);

    // Staff sign in again (a fresh start); the server takes tokens again: calls succeed.
    m_fake->setTokenPolicy(FakeOAuthServer::TokenPolicy::Accept);
    authorizer->signIn();
    QTRY_COMPARE_WITH_TIMEOUT(authorizer->state(), OAuth::Authorizer::State::SignedIn, kWaitMs);
    QVERIFY(call(server).result.success);
    QCOMPARE(authorizer->lastError().failure, OAuth::SignInFailure::None);
}

// Through the runtime the window and agent-cli use: the grant goes to the runtime's secret
// store (the keychain) under mcp.<server>.oauth, and neither the status the window shows nor
// an export carries a token.
void tst_McpOAuth::runtimeKeepsTheTokenInTheKeychainOnly()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString config = dir.filePath(QStringLiteral("mcp.json"));
    QFile file(config);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write(QJsonDocument(QJsonObject{{"mcpServers", QJsonObject{{kServer, QJsonObject{
        {"url", m_fake->mcpUrl().toString()}}}}}}).toJson());
    file.close();
    auto secrets = std::make_shared<MemorySecretStore>();
    RuntimeOptions options;
    options.dataDirectory = dir.filePath(QStringLiteral("data"));
    options.mcpConfigFile = config;
    options.secrets = secrets;
    options.mcpSignInWhenAsked = true; // as agent-cli
    AgentRuntime runtime(options);
    FakeBrowser *browser = m_browser.get();
    runtime.mcp()->setBrowserOpener([browser](const QUrl &url) { return browser->open(url); });
    QSignalSpy ready(&runtime, &AgentRuntime::ready);
    runtime.start();
    QVERIFY(ready.wait(kWaitMs));
    QTRY_VERIFY_WITH_TIMEOUT(!runtime.monitor()->status().mcpServers.isEmpty()
                                 && runtime.monitor()->status().mcpServers.first().state
                                     == McpServerStatus::State::Ready,
                             kWaitMs);
    const McpServerStatus status = runtime.monitor()->status().mcpServers.first();
    QCOMPARE(status.signIn, McpServerStatus::SignIn::SignedIn);
    QCOMPARE(status.signInProblem, McpServerStatus::SignInProblem::None);

    QVERIFY(secrets->contains(kGrantKey));
    QString stored;
    secrets->read(kGrantKey, &runtime, [&stored](const SecretAnswer &answer) {
        stored = answer.secret;
    });
    QTRY_VERIFY_WITH_TIMEOUT(!stored.isEmpty(), kWaitMs);
    QVERIFY(stored.contains(m_fake->lastAccessToken()));

    const QStringList issued = m_fake->issuedSecrets();
    QString outputs = logText() + status.name + status.transport + status.lastError;
    const ConversationExport exported = ConversationExport::fromRuntime(runtime, {});
    outputs += QString::fromUtf8(exported.serialize(ConversationExport::Format::Json));
    outputs += QString::fromUtf8(exported.serialize(ConversationExport::Format::Markdown));
    QVERIFY2(missingSecrets(outputs, issued).isEmpty(),
             qPrintable(missingSecrets(outputs, issued)));
}

// agent-cli signs in on the terminal: the authorization address on stderr, the run waiting
// for the browser's redirect; then --list-tools --json lists the server ready with its tool.
// Neither its standard output nor its stderr holds a token or the client's secret.
void tst_McpOAuth::agentCliSignsInOnTheTerminalAndPrintsNoToken()
{
    QTemporaryDir home;
    QVERIFY(home.isValid());
    const QString config = home.filePath(QStringLiteral("mcp.json"));
    QFile file(config);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write(QJsonDocument(QJsonObject{{"mcpServers", QJsonObject{{kServer, QJsonObject{
        {"url", m_fake->mcpUrl().toString()}}}}}}).toJson());
    file.close();
    QProcess cli;
    QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
    environment.insert(QStringLiteral("HOME"), home.path());
    environment.insert(QStringLiteral("XDG_CONFIG_HOME"), home.filePath(QStringLiteral("config")));
    environment.insert(QStringLiteral("XDG_DATA_HOME"), home.filePath(QStringLiteral("share")));
    // No session bus: the keychain fails at once (the sign-in still serves this run) instead
    // of reaching the desktop's real one.
    environment.insert(QStringLiteral("DBUS_SESSION_BUS_ADDRESS"),
                       QStringLiteral("unix:path=") + home.filePath(QStringLiteral("no-bus")));
    cli.setProcessEnvironment(environment);
    QByteArray err;
    connect(&cli, &QProcess::readyReadStandardError, this,
            [&cli, &err] { err += cli.readAllStandardError(); });
    QSignalSpy finished(&cli, &QProcess::finished);
    cli.start(QStringLiteral(AGENT_CLI_PATH),
              {QStringLiteral("--data-dir"), home.filePath(QStringLiteral("data")),
               QStringLiteral("--mcp-config"), config, QStringLiteral("--list-tools"),
               QStringLiteral("--json")});
    const QRegularExpression address(
        QStringLiteral("^  (http://127\\.0\\.0\\.1:\\d+/authorize\\S+)$"),
        QRegularExpression::MultilineOption);
    QTRY_VERIFY_WITH_TIMEOUT(address.match(QString::fromUtf8(err)).hasMatch()
                                 || !finished.isEmpty(),
                             kWaitMs);
    QVERIFY2(finished.isEmpty(), err.constData());
    QVERIFY(m_browser->open(QUrl(address.match(QString::fromUtf8(err)).captured(1))));
    QVERIFY(finished.wait(kWaitMs));
    err += cli.readAllStandardError();
    const QByteArray out = cli.readAllStandardOutput();
    QCOMPARE(cli.exitStatus(), QProcess::NormalExit);
    QCOMPARE(cli.exitCode(), 0);
    const QJsonObject listing = QJsonDocument::fromJson(out.trimmed().split('\n').last()).object();
    const QJsonArray servers = listing.value(QStringLiteral("mcpServers")).toArray();
    QCOMPARE(servers.size(), 1);
    QCOMPARE(servers[0][QStringLiteral("state")].toString(), QStringLiteral("ready"));
    QCOMPARE(m_browser->redirects().size(), 1);
    QVERIFY(m_fake->count(QStringLiteral("/token")) >= 1);

    const QStringList issued = m_fake->issuedSecrets();
    QVERIFY(!issued.isEmpty());
    const QString outputs = QString::fromUtf8(out + err);
    QVERIFY2(missingSecrets(outputs, issued).isEmpty(),
             qPrintable(missingSecrets(outputs, issued)));
    // Its own log file too.
    QFile log(home.filePath(QStringLiteral("data/logs/agent-console.log")));
    QVERIFY(log.open(QIODevice::ReadOnly));
    const QString logged = QString::fromUtf8(log.readAll());
    // (It keeps warnings: here the keychain's, which had no bus to reach.)
    QVERIFY2(logged.contains(QLatin1String("sign-in:")), qPrintable(logged));
    QVERIFY2(missingSecrets(logged, issued).isEmpty(), qPrintable(missingSecrets(logged, issued)));
}

QTEST_GUILESS_MAIN(tst_McpOAuth)
#include "tst_mcpoauth.moc"
