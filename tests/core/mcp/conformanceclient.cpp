// The client side of the official MCP conformance suite (@modelcontextprotocol/conformance):
// the suite starts a scenario server, then runs this program with the server's URL as the
// last argument and the scenario's name in MCP_CONFORMANCE_SCENARIO. It does what each
// scenario expects of a client, on core/mcp only, and exits 0 when the exchange went through.
#include "core/mcp/httptransport.h"
#include "core/mcp/mcpsession.h"
#include "core/mcp/mcptoolinfo.h"
#include "core/oauth/authorizer.h"

#include <QCoreApplication>
#include <QJsonArray>
#include <QJsonDocument>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QTimer>

#include <cstdio>
#include <functional>
#include <utility>

using namespace AgentConsole::Mcp;

namespace {

void say(const QString &line)
{
    fprintf(stderr, "mcp-conformance-client: %s\n", qPrintable(line));
}

// The arguments a scenario's tool is called with.
QJsonObject argumentsFor(const QString &tool)
{
    if (tool == QLatin1String("add_numbers"))
        return {{QStringLiteral("a"), 5}, {QStringLiteral("b"), 3}};
    return {};
}

// The staff member's browser, for the suite's authorization servers, which redirect at once:
// the authorization URL is fetched without following its redirect, and the redirect's
// Location (our loopback listener, core/oauth's) is then fetched as a browser would.
// Its requests still under way: the client ends only once they have (a QNetworkAccessManager
// destroyed with a request in flight leaves Qt's own parts of it behind, which LeakSanitizer
// reports in the asan stage).
int g_browserRequests = 0;
std::function<void()> g_whenBrowserIdle;

void browserRequestEnded()
{
    if (--g_browserRequests == 0 && g_whenBrowserIdle)
        std::exchange(g_whenBrowserIdle, nullptr)();
}

bool headlessBrowser(QNetworkAccessManager *network, const QUrl &url)
{
    QNetworkRequest request(url);
    request.setAttribute(QNetworkRequest::RedirectPolicyAttribute,
                         QNetworkRequest::ManualRedirectPolicy);
    request.setTransferTimeout(10000);
    ++g_browserRequests;
    QNetworkReply *reply = network->get(request);
    QObject::connect(reply, &QNetworkReply::finished, network, [network, reply] {
        reply->deleteLater();
        const QUrl location = reply->url().resolved(
            QUrl::fromEncoded(reply->rawHeader("Location")));
        if (!location.isValid() || location.isEmpty()) {
            say(QStringLiteral("the authorization endpoint did not redirect"));
            browserRequestEnded();
            return;
        }
        QNetworkRequest back(location);
        back.setTransferTimeout(10000);
        ++g_browserRequests;
        QNetworkReply *callback = network->get(back);
        QObject::connect(callback, &QNetworkReply::finished, callback, [callback] {
            callback->deleteLater();
            browserRequestEnded();
        });
        browserRequestEnded();
    });
    return true;
}

// The auth scenarios' client settings: pre-registered credentials from the suite's context
// (auth/pre-registration), and the Client ID Metadata Document URL the suite accepts
// (auth/basic-cimd), used only where the authorization server advertises the documents.
AgentConsole::OAuth::Authorizer::Options signInOptions(const QUrl &serverUrl,
                                                       QNetworkAccessManager *browser)
{
    AgentConsole::OAuth::Authorizer::Options options;
    options.serverUrl = serverUrl;
    options.client.clientName = QStringLiteral("agent-console-conformance");
    options.client.clientMetadataUrl = QStringLiteral("https://conformance-test.local/client-metadata.json");
    const QJsonObject context =
        QJsonDocument::fromJson(qgetenv("MCP_CONFORMANCE_CONTEXT")).object();
    options.client.clientId = context.value(QStringLiteral("client_id")).toString();
    options.client.clientSecret = context.value(QStringLiteral("client_secret")).toString();
    options.signInWhenAsked = true;
    options.signInTimeoutMs = 15000;
    options.openBrowser = [browser](const QUrl &url) { return headlessBrowser(browser, url); };
    return options;
}

} // namespace

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    const QString scenario = qEnvironmentVariable("MCP_CONFORMANCE_SCENARIO");
    const QStringList arguments = app.arguments();
    if (arguments.size() < 2) {
        say(QStringLiteral("usage: mcp-conformance-client <server-url>"));
        return 2;
    }
    HttpTransport::Options transportOptions;
    transportOptions.url = QUrl(arguments.last());
    // Every scenario may meet a server that wants a sign-in: the client signs in when asked.
    auto *browser = new QNetworkAccessManager(&app);
    auto *authorizer = new AgentConsole::OAuth::Authorizer(
        signInOptions(transportOptions.url, browser), &app);
    QObject::connect(authorizer, &AgentConsole::OAuth::Authorizer::refused, &app,
                     [](const AgentConsole::OAuth::SignInError &error) {
        say(QStringLiteral("sign-in refused: ") + error.describe());
    });
    transportOptions.authorizer = authorizer;
    authorizer->load();
    Session::Options options;
    options.clientName = QStringLiteral("agent-console-conformance");
    options.requestTimeoutMs = 10000;
    options.elicitation = true;
    auto *session = new Session(std::make_unique<HttpTransport>(transportOptions), options, &app);
    // elicitation-sep1034-client-defaults: the server asks during its tool's call; the client
    // accepts with nothing typed, as a staff member who keeps the form's defaults (SEP-1034:
    // the defaults shown are the ones sent).
    QObject::connect(session, &Session::elicitationRequested, &app,
                     [](PendingElicitation *question) {
        say(QStringLiteral("asked: %1 (%2 fields, for request %3)")
                .arg(question->question().message)
                .arg(question->question().fields.size())
                .arg(question->relatedRequestId()));
        ElicitationProblem problem;
        if (!question->answer(ElicitationAction::Accept, {}, &problem))
            say(QStringLiteral("the defaults do not answer it: field ") + problem.field);
    });
    auto *lister = new ToolLister(session, {}, &app);
    int exitCode = 1;
    QList<ToolInfo> remaining;
    std::function<void()> callNext;
    const auto end = [&](int code) {
        exitCode = code;
        QObject::connect(session, &Session::closed, &app, [] {
            // Bounded: each browser request has its transfer timeout.
            if (g_browserRequests == 0)
                QCoreApplication::exit();
            else
                g_whenBrowserIdle = [] { QCoreApplication::exit(); };
        });
        session->close();
    };
    // Bounded as everything is: the suite's own timeout is 30 s.
    QTimer::singleShot(25000, &app, [&] {
        say(QStringLiteral("gave up after 25 s"));
        end(1);
    });
    QObject::connect(session, &Session::failed, &app, [&](const Error &error) {
        say(QStringLiteral("session failed: ") + error.describe());
        end(1);
    });
    QObject::connect(session, &Session::ready, &app, [&] {
        say(QStringLiteral("initialized, protocol ") + session->protocolVersion());
        lister->list();
    });
    QObject::connect(lister, &ToolLister::finished, &app,
                     [&](const QList<ToolInfo> &tools, const QStringList &, const Error &error) {
        if (error.isError()) {
            say(QStringLiteral("tools/list failed: ") + error.describe());
            end(1);
            return;
        }
        say(QStringLiteral("%1 tools").arg(tools.size()));
        if (scenario == QLatin1String("initialize") || tools.isEmpty()) {
            end(0);
            return;
        }
        // Every listed tool once, one after another (tools_call: add_numbers; sse-retry:
        // test_reconnection, whose answer comes on a resumed stream).
        remaining = tools;
        callNext = [&] {
            if (remaining.isEmpty()) {
                end(0);
                return;
            }
            const ToolInfo tool = remaining.takeFirst();
            PendingRequest *call = session->request(
                QStringLiteral("tools/call"),
                {{QStringLiteral("name"), tool.name},
                 {QStringLiteral("arguments"), argumentsFor(tool.name)}});
            QObject::connect(call, &PendingRequest::finished, &app, [&, tool](const Reply &reply) {
                if (!reply.ok()) {
                    say(QStringLiteral("%1 failed: %2").arg(tool.name, reply.error.describe()));
                    end(1);
                    return;
                }
                say(QStringLiteral("%1 answered: %2").arg(
                    tool.name, QString::fromUtf8(QJsonDocument(reply.result.toObject())
                                                     .toJson(QJsonDocument::Compact)).left(200)));
                callNext();
            });
        };
        callNext();
    });
    session->start();
    app.exec();
    return exitCode;
}
