// A small MCP server on stdio for the client's fault tests: it speaks newline-delimited
// JSON-RPC and misbehaves on request. The mode (argv[1]) shapes its lifecycle; its tools
// shape single calls. Reads stdin through a QSocketNotifier so that slow answers are timers.
#include <QCoreApplication>
#include <QJsonArray>
#include <QJsonDocument>
#include <QHash>
#include <QJsonObject>
#include <QSocketNotifier>
#include <QTimer>

#include <fcntl.h>

#include <csignal>
#include <cstdio>
#include <unistd.h>

namespace {

QString g_mode;
int g_effectsFd = -1; // FAKE_MCP_EFFECTS, open for the SIGTERM handler ("stubborn")
QJsonArray g_cancelled; // request ids of the notifications/cancelled received
bool g_pingAnswered = false;
QByteArray g_input;
QSocketNotifier *g_notifier = nullptr;

void write(const QJsonObject &message)
{
    const QByteArray bytes = QJsonDocument(message).toJson(QJsonDocument::Compact) + '\n';
    fwrite(bytes.constData(), 1, size_t(bytes.size()), stdout);
    fflush(stdout);
}

void result(const QJsonValue &id, const QJsonObject &value)
{
    write({{"jsonrpc", "2.0"}, {"id", id}, {"result", value}});
}

QJsonObject text(const QString &value, bool isError = false)
{
    QJsonObject content{{"content", QJsonArray{QJsonObject{{"type", "text"}, {"text", value}}}}};
    if (isError)
        content.insert("isError", true);
    return content;
}

QJsonObject tool(const QString &name, const QJsonObject &annotations,
                 const QJsonObject &properties = {}, const QJsonArray &required = {})
{
    QJsonObject schema{{"type", "object"}, {"properties", properties}};
    if (!required.isEmpty())
        schema.insert("required", required);
    QJsonObject entry{{"name", name}, {"description", "fake tool " + name}, {"inputSchema", schema}};
    if (!annotations.isEmpty())
        entry.insert("annotations", annotations);
    return entry;
}

bool g_toolAdded = false; // "add_tool" was called: page 2 lists "added_later" too

QJsonArray page(int number)
{
    const QJsonObject readOnly{{"readOnlyHint", true}};
    if (number == 0) {
        return {tool("echo", readOnly, {{"text", QJsonObject{{"type", "string"}, {"maxLength", 100}}}},
                     {"text"}),
                tool("slow_progress", readOnly,
                     {{"steps", QJsonObject{{"type", "integer"}}},
                      {"intervalMs", QJsonObject{{"type", "integer"}}}}),
                tool("hang", readOnly), tool("crash", readOnly), tool("malformed", readOnly)};
    }
    if (g_mode == "elicit") // only there, so that the other suites' tool counts stay
        return {tool("ask", readOnly, {{"bad", QJsonObject{{"type", "boolean"}}}}),
                tool("stats", readOnly)};
    QJsonArray second{tool("is_error", readOnly), tool("oversized", readOnly),
            tool("structured", readOnly), tool("stats", readOnly),
            tool("write_thing", {}, {{"title", QJsonObject{{"type", "string"}}}}, {"title"}),
            tool("idempotent_thing", {{"idempotentHint", true}, {"destructiveHint", false}}),
            tool("flaky", readOnly), tool("add_tool", readOnly)};
    if (g_toolAdded)
        second.append(tool("added_later", readOnly));
    return second;
}

int g_flakyCalls = 0;
// elicitation/create requests sent (by "ask"): their id -> the tools/call waiting for it.
QHash<QString, QJsonValue> g_asking;
QJsonArray g_elicitationAnswers; // every answer to them, as received ("result" or "error")
int g_asked = 0;
QJsonObject g_clientCapabilities; // as initialize declared them

// "ask": asks the client a question mid-call and answers the call with what came back.
// {"bad": true} asks with a schema outside MCP's flat subset (a nested object).
void ask(const QJsonValue &callId, const QJsonObject &arguments)
{
    QJsonObject properties{
        {"reason", QJsonObject{{"type", "string"}, {"title", "Reason"},
                               {"description", "Why the refund is asked for"},
                               {"default", "damaged"}, {"maxLength", 200}}},
        {"amount", QJsonObject{{"type", "number"}, {"title", "Amount"}, {"minimum", 0},
                               {"maximum", 500}, {"default", 20.5}}},
        {"count", QJsonObject{{"type", "integer"}, {"title", "Items"}, {"default", 1}}},
        {"urgent", QJsonObject{{"type", "boolean"}, {"title", "Urgent"}, {"default", false}}},
        {"channel", QJsonObject{{"type", "string"}, {"title", "Reply by"},
                                {"enum", QJsonArray{"email", "phone"}},
                                {"enumNames", QJsonArray{"Email", "Phone"}},
                                {"default", "email"}}},
        {"note", QJsonObject{{"type", "string"}, {"title", "Note"}}}};
    if (arguments.value("bad").toBool())
        properties.insert("address", QJsonObject{{"type", "object"},
                                                 {"properties", QJsonObject{}}});
    const QString id = QStringLiteral("elicit-%1").arg(++g_asked);
    g_asking.insert(id, callId);
    write({{"jsonrpc", "2.0"}, {"id", id}, {"method", "elicitation/create"},
           {"params", QJsonObject{{"mode", "form"},
                                  {"message", "Refund <b>order</b> A1001?\nPlease confirm."},
                                  {"requestedSchema",
                                   QJsonObject{{"type", "object"}, {"properties", properties},
                                               {"required", QJsonArray{"reason"}}}}}}});
}

// What the server saw, one line each in the file FAKE_MCP_EFFECTS names, so that a suite reads
// it across the server's restarts and ends: "write <title>" ("write_thing" acts before it
// answers, hangs or exits), "call hang", "cancelled" (notifications/cancelled), "stdin
// closed", and "SIGTERM" ("stubborn" mode).
void recordEffect(const QString &title)
{
    const QByteArray path = qgetenv("FAKE_MCP_EFFECTS");
    if (path.isEmpty())
        return;
    if (FILE *file = std::fopen(path.constData(), "a")) {
        std::fputs(qPrintable(title + QLatin1Char('\n')), file);
        std::fclose(file);
    }
}

// What a careless server echoes: the values of its env's API_TOKEN and GITHUB_TOKEN.
QByteArray echoedSecrets()
{
    return "API_TOKEN=" + qgetenv("API_TOKEN") + " GITHUB_TOKEN=" + qgetenv("GITHUB_TOKEN");
}

void callTool(const QJsonValue &id, const QJsonObject &params)
{
    if (g_mode == "echo-secrets") { // every call refused, with the secrets in the error
        write({{"jsonrpc", "2.0"}, {"id", id},
               {"error", QJsonObject{{"code", -32603},
                                     {"message", "unauthorized: " + QString::fromUtf8(echoedSecrets())}}}});
        return;
    }
    const QString name = params.value("name").toString();
    const QJsonObject arguments = params.value("arguments").toObject();
    if (name == "write_thing")
        recordEffect(QStringLiteral("write ") + arguments.value("title").toString());
    else if (name == "hang")
        recordEffect(QStringLiteral("call hang"));
    const QJsonValue token = params.value("_meta").toObject().value("progressToken");
    if (name == "echo") {
        result(id, text(arguments.value("text").toString()));
    } else if (name == "slow_progress") {
        const int steps = arguments.value("steps").toInt(5);
        const int interval = arguments.value("intervalMs").toInt(100);
        auto *timer = new QTimer(qApp);
        auto step = std::make_shared<int>(0);
        QObject::connect(timer, &QTimer::timeout, [=] {
            if (++*step > steps) {
                timer->deleteLater();
                result(id, text(QStringLiteral("done after %1 steps").arg(steps)));
                return;
            }
            if (!token.isUndefined())
                write({{"jsonrpc", "2.0"}, {"method", "notifications/progress"},
                       {"params", QJsonObject{{"progressToken", token}, {"progress", *step},
                                              {"total", steps}}}});
        });
        timer->start(interval);
    } else if (name == "hang" || (name == "write_thing" && arguments.value("title") == "hang")) {
        // never answers
    } else if (name == "crash" || (name == "write_thing" && arguments.value("title") == "exit")) {
        fprintf(stderr, "fake server: crashing on purpose\n");
        fflush(stderr);
        _exit(3);
    } else if (name == "malformed") {
        fputs("{\"jsonrpc\": \"2.0\", \"id\": oops this is not json\n", stdout);
        fflush(stdout);
    } else if (name == "is_error") {
        result(id, text("the tool failed: disk quota exceeded", true));
    } else if (name == "oversized") {
        result(id, text(QString(5 * 1024 * 1024, QLatin1Char('x'))));
    } else if (name == "structured") {
        QJsonObject value = text(QString(10000, QLatin1Char('y')));
        value.insert("structuredContent", QJsonObject{{"temperature", 21.5}, {"unit", "C"}});
        QJsonArray content = value.value("content").toArray();
        content.append(QJsonObject{{"type", "resource_link"}, {"uri", "file:///tmp/report.txt"},
                                   {"name", "report"}});
        content.append(QJsonObject{{"type", "image"}, {"data", "AAAA"}, {"mimeType", "image/png"}});
        value.insert("content", content);
        result(id, value);
    } else if (name == "ask") {
        ask(id, arguments);
    } else if (name == "stats") {
        result(id, QJsonObject{{"content", QJsonArray{}},
                               {"structuredContent",
                                QJsonObject{{"cancelled", g_cancelled},
                                            {"elicitationAnswers", g_elicitationAnswers},
                                            {"clientCapabilities", g_clientCapabilities},
                                            {"pingAnswered", g_pingAnswered},
                                            {"flakyCalls", g_flakyCalls}}}});
    } else if (name == "write_thing") {
        result(id, text("created " + arguments.value("title").toString()));
    } else if (name == "idempotent_thing") {
        result(id, text("set"));
    } else if (name == "add_tool") {
        // A tool that appears while the session runs: the list changes, and says so.
        g_toolAdded = true;
        write({{"jsonrpc", "2.0"}, {"method", "notifications/tools/list_changed"}});
        result(id, text("added"));
    } else if (name == "flaky") {
        // Fails internally on odd calls: a retryable JSON-RPC error.
        if (++g_flakyCalls % 2 == 1)
            write({{"jsonrpc", "2.0"}, {"id", id},
                   {"error", QJsonObject{{"code", -32603}, {"message", "temporary failure"}}}});
        else
            result(id, text("ok on call " + QString::number(g_flakyCalls)));
    } else {
        write({{"jsonrpc", "2.0"}, {"id", id},
               {"error", QJsonObject{{"code", -32602}, {"message", "Unknown tool: " + name}}}});
    }
}

void handle(const QJsonObject &message)
{
    const QString method = message.value("method").toString();
    const QJsonValue id = message.value("id");
    const QJsonObject params = message.value("params").toObject();
    if (method.isEmpty()) { // a response: to our ping, or to a question
        if (id == QJsonValue("srv-ping") && message.contains("result"))
            g_pingAnswered = true;
        if (g_asking.contains(id.toString())) {
            const QJsonValue callId = g_asking.take(id.toString());
            const QJsonObject answer = message.contains("result")
                ? message.value("result").toObject()
                : QJsonObject{{"error", message.value("error")}};
            g_elicitationAnswers.append(answer);
            // A call the client cancelled is not answered (it would be a late answer).
            if (!g_cancelled.contains(callId)) {
                QJsonObject value = text(QString::fromUtf8(
                    QJsonDocument(answer).toJson(QJsonDocument::Compact)));
                value.insert("structuredContent", answer);
                result(callId, value);
            }
        }
        return;
    }
    if (method == "initialize") {
        g_clientCapabilities = params.value("capabilities").toObject();
        if (g_mode == "no-init")
            return;
        if (g_mode == "slow-init") { // a server that takes its time to start (1.5 s)
            QTimer::singleShot(1500, qApp, [message] {
                const QJsonObject params = message.value("params").toObject();
                result(message.value("id"),
                       {{"protocolVersion", params.value("protocolVersion")},
                        {"capabilities", QJsonObject{{"tools", QJsonObject{{"listChanged", true}}}}},
                        {"serverInfo", QJsonObject{{"name", "fake-mcp"}, {"version", "0.1"}}}});
            });
            return;
        }
        QString version = params.value("protocolVersion").toString();
        if (g_mode == "old-version")
            version = "2025-03-26";
        else if (g_mode == "bad-version")
            version = "1999-01-01";
        result(id, {{"protocolVersion", version},
                    {"capabilities", QJsonObject{{"tools", QJsonObject{{"listChanged", true}}}}},
                    {"serverInfo", QJsonObject{{"name", "fake-mcp"}, {"version", "0.1"}}}});
        return;
    }
    if (method == "notifications/initialized") {
        fprintf(stderr, "fake server: initialized (mode %s)\n", qPrintable(g_mode));
        fflush(stderr);
        write({{"jsonrpc", "2.0"}, {"id", "srv-ping"}, {"method", "ping"}});
        if (g_mode == "noisy") { // 4 MB of stderr in 2,000 long lines
            const QByteArray line(2000, 'n');
            for (int i = 0; i < 2000; ++i)
                fprintf(stderr, "%s\n", line.constData());
            fflush(stderr);
        }
        if (g_mode == "list-changed")
            write({{"jsonrpc", "2.0"}, {"method", "notifications/tools/list_changed"}});
        if (g_mode == "echo-secrets") { // its env's secrets, in its stderr and a log message
            fprintf(stderr, "fake server: started with %s\n", echoedSecrets().constData());
            fflush(stderr);
            write({{"jsonrpc", "2.0"}, {"method", "notifications/message"},
                   {"params", QJsonObject{{"level", "error"},
                                          {"data", QJsonObject{{"credentials",
                                                                QString::fromUtf8(echoedSecrets())}}}}}});
        }
        return;
    }
    if (method == "notifications/cancelled") {
        recordEffect(QStringLiteral("cancelled"));
        g_cancelled.append(params.value("requestId"));
        return;
    }
    if (method == "ping") {
        result(id, {});
    } else if (method == "tools/list") {
        const QString cursor = params.value("cursor").toString();
        if (g_mode == "endless-pages") {
            result(id, {{"tools", QJsonArray{}}, {"nextCursor", "again"}});
            return;
        }
        QJsonObject answer{{"tools", page(cursor == "page-2" ? 1 : 0)}};
        if (cursor.isEmpty())
            answer.insert("nextCursor", "page-2");
        result(id, answer);
    } else if (method == "tools/call") {
        callTool(id, params);
    } else if (!id.isUndefined()) {
        write({{"jsonrpc", "2.0"}, {"id", id},
               {"error", QJsonObject{{"code", -32601}, {"message", "Method not found"}}}});
    }
}

void readInput()
{
    char buffer[65536];
    const ssize_t n = ::read(0, buffer, sizeof buffer);
    if (n <= 0) {
        recordEffect(QStringLiteral("stdin closed"));
        // stdin closed: MCP's stdio shutdown. "stubborn" ignores it until SIGTERM.
        if (g_mode != "stubborn" && g_mode != "deaf")
            QCoreApplication::exit(0);
        else
            g_notifier->setEnabled(false); // waits for SIGTERM (or SIGKILL)
        return;
    }
    g_input.append(buffer, n);
    qsizetype newline;
    while ((newline = g_input.indexOf('\n')) >= 0) {
        const QByteArray line = g_input.left(newline);
        g_input.remove(0, newline + 1);
        const QJsonDocument document = QJsonDocument::fromJson(line);
        if (document.isObject())
            handle(document.object());
    }
}

} // namespace

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    g_mode = argc > 1 ? QString::fromLocal8Bit(argv[1]) : QStringLiteral("normal");
    QSocketNotifier notifier(0, QSocketNotifier::Read);
    g_notifier = &notifier;
    if (g_mode == "deaf")
        std::signal(SIGTERM, SIG_IGN); // only SIGKILL ends it
    if (g_mode == "stubborn" && !qgetenv("FAKE_MCP_EFFECTS").isEmpty()) {
        // SIGTERM ends it, and is written down first (only write() is safe in a handler).
        g_effectsFd = ::open(qgetenv("FAKE_MCP_EFFECTS").constData(),
                             O_WRONLY | O_APPEND | O_CREAT, 0600);
        std::signal(SIGTERM, [](int) {
            static const char line[] = "SIGTERM\n";
            if (::write(g_effectsFd, line, sizeof line - 1) < 0) {
            }
            _exit(0);
        });
    }
    QObject::connect(&notifier, &QSocketNotifier::activated, [] { readInput(); });
    return app.exec();
}
