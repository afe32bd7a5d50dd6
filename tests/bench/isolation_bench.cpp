// How long a lead's isolation takes to reach every console (docs/TEAM.md, "Isolating a
// dependency"; docs/PERFORMANCE.md): from the lead's isolate() to each console's breaker
// refusing, for N consoles in this process (each with its own Isolations service, store
// thread and PostgreSQL connection, as N seats would have), over R rounds of isolate and lift.
// Same-run baselines: a local breaker opening on its own failures (what a console decides
// alone), and one bare LISTEN/NOTIFY round trip on QPSQL (the floor the database sets).
//
//   isolation_bench [CONSOLES [ROUNDS]]     (default 8 consoles, 20 rounds)
// Needs AGENT_CONSOLE_TEST_PG (a throwaway cluster: scripts/pg-cluster.sh); target p99 <= 1 s.

#include "benchhost.h"

#include "core/ledger/postgresledger.h"
#include "core/resilience/circuitbreaker.h"
#include "core/team/isolations.h"

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QSqlDatabase>
#include <QSqlDriver>
#include <QSqlError>
#include <QSqlQuery>
#include <QTimer>
#include <QUrl>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <vector>

using namespace AgentConsole;

namespace {

const QStringList Names{QStringLiteral("logistics"), QStringLiteral("logistics:embedded")};

struct Seat
{
    CircuitBreakerRegistry breakers;
    Isolations isolations;
    CircuitBreaker *breaker = nullptr;
    qint64 reachedNs = -1;
};

double percentile(std::vector<double> values, double p)
{
    if (values.empty())
        return 0;
    std::sort(values.begin(), values.end());
    const std::size_t index = std::min(values.size() - 1,
                                       std::size_t(p / 100.0 * double(values.size() - 1) + 0.5));
    return values[index];
}

// Runs the event loop until `done` or `ms` have passed; false on time out.
template <typename Done> bool waitFor(Done done, int ms)
{
    QElapsedTimer clock;
    clock.start();
    while (!done()) {
        if (clock.elapsed() > ms)
            return false;
        QCoreApplication::processEvents(QEventLoop::WaitForMoreEvents, 5);
    }
    return true;
}

QSqlDatabase connect(const QString &url, const QString &name)
{
    QString error;
    const auto where = PostgresLocation::fromUrl(url, &error);
    QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QPSQL"), name);
    if (!where)
        return db;
    db.setHostName(where->host);
    db.setPort(where->port);
    db.setUserName(where->userName);
    db.setDatabaseName(where->database);
    db.open();
    return db;
}

// One NOTIFY from one connection heard by another on this thread, `rounds` times (µs).
std::vector<double> bareNotify(const QString &url, int rounds)
{
    std::vector<double> micros;
    {
        QSqlDatabase listener = connect(url, QStringLiteral("bench-listen"));
        QSqlDatabase sender = connect(url, QStringLiteral("bench-notify"));
        if (!listener.isOpen() || !sender.isOpen()
            || !listener.driver()->subscribeToNotification(QStringLiteral("bench_channel")))
            return micros;
        int heard = 0;
        QObject::connect(listener.driver(), &QSqlDriver::notification, qApp,
                         [&heard] { ++heard; });
        QSqlQuery notify(sender);
        QElapsedTimer clock;
        for (int i = 0; i < rounds; ++i) {
            const int before = heard;
            clock.start();
            notify.exec(QStringLiteral("NOTIFY bench_channel"));
            if (!waitFor([&] { return heard > before; }, 2000))
                break;
            micros.push_back(double(clock.nsecsElapsed()) / 1000.0);
        }
        listener.close();
        sender.close();
    }
    QSqlDatabase::removeDatabase(QStringLiteral("bench-listen"));
    QSqlDatabase::removeDatabase(QStringLiteral("bench-notify"));
    return micros;
}

// A local breaker opened by its own failures: from the failure that opens it to its refusal.
std::vector<double> localOpen(int rounds)
{
    std::vector<double> micros;
    CircuitBreaker::Options options;
    options.windowSize = 4;
    options.minimumCalls = 4;
    for (int i = 0; i < rounds; ++i) {
        CircuitBreaker breaker(QStringLiteral("logistics:embedded"), options);
        for (int call = 0; call < 3; ++call) {
            breaker.tryAcquire();
            breaker.recordFailure(std::chrono::milliseconds(5));
        }
        breaker.tryAcquire();
        QElapsedTimer clock;
        clock.start();
        breaker.recordFailure(std::chrono::milliseconds(5));
        const bool refused = !breaker.tryAcquire();
        if (refused)
            micros.push_back(double(clock.nsecsElapsed()) / 1000.0);
    }
    return micros;
}

QString freshDatabase(const QString &adminUrl)
{
    QString name = QStringLiteral("isolation_bench_%1").arg(QCoreApplication::applicationPid());
    {
        QSqlDatabase admin = connect(adminUrl, QStringLiteral("bench-admin"));
        QSqlQuery query(admin);
        if (!query.exec(QStringLiteral("CREATE DATABASE %1").arg(name))) {
            std::printf("cannot create a database: %s\n", qPrintable(query.lastError().text()));
            name.clear();
        }
    }
    QSqlDatabase::removeDatabase(QStringLiteral("bench-admin"));
    if (name.isEmpty())
        return {};
    QUrl url(adminUrl);
    url.setPath(QLatin1Char('/') + name);
    return url.toString();
}

void dropDatabase(const QString &adminUrl, const QString &url)
{
    {
        QSqlDatabase admin = connect(adminUrl, QStringLiteral("bench-admin"));
        QSqlQuery(admin).exec(QStringLiteral("DROP DATABASE IF EXISTS %1 WITH (FORCE)")
                                  .arg(QUrl(url).path().mid(1)));
    }
    QSqlDatabase::removeDatabase(QStringLiteral("bench-admin"));
}

} // namespace

int main(int argc, char *argv[])
{
    QCoreApplication app(argc, argv);
    const QStringList args = app.arguments();
    const bool shortMode = qEnvironmentVariableIsSet("AGENT_CONSOLE_BENCH_SHORT");
    const int consoles = args.size() > 1 ? std::max(2, args.at(1).toInt()) : 8;
    const int rounds = args.size() > 2 ? std::max(1, args.at(2).toInt()) : (shortMode ? 3 : 20);
    std::printf("isolation_bench: %s\n", Bench::hostLine().constData());
    const QString adminUrl = qEnvironmentVariable("AGENT_CONSOLE_TEST_PG");
    if (adminUrl.isEmpty()) {
        std::printf("skipped: no PostgreSQL (set AGENT_CONSOLE_TEST_PG; scripts/pg-cluster.sh)\n");
        return shortMode ? 0 : 1;
    }
    const QString url = freshDatabase(adminUrl);
    if (url.isEmpty())
        return 1;
    std::printf("%d consoles in this process (each its own service, store thread and "
                "connection; the cluster's superuser, on a Unix socket), %d rounds\n",
                consoles, rounds);

    // The lead is seat 0; every seat (the lead's too) is timed to its breaker's refusal.
    std::vector<std::unique_ptr<Seat>> seats;
    for (int i = 0; i < consoles; ++i) {
        auto seat = std::make_unique<Seat>();
        seat->isolations.start(url, QStringLiteral("L-%1").arg(i), &seat->breakers,
                               [] { return Names; });
        seat->breaker = seat->breakers.breaker(QStringLiteral("logistics:embedded"));
        seats.push_back(std::move(seat));
    }
    const bool up = waitFor(
        [&] {
            return std::all_of(seats.begin(), seats.end(), [](const auto &seat) {
                return seat->isolations.connection() == Isolations::Connection::Connected;
            });
        },
        30000);
    if (!up) {
        std::printf("UNEXPECTED: not every console connected within 30 s\n");
        seats.clear();
        dropDatabase(adminUrl, url);
        return 1;
    }

    QElapsedTimer clock;
    for (auto &seat : seats) {
        Seat *raw = seat.get();
        QObject::connect(&raw->breakers, &CircuitBreakerRegistry::isolationChanged, &app,
                         [raw, &clock] {
                             if (raw->breaker->isIsolated() && !raw->breaker->tryAcquire())
                                 raw->reachedNs = clock.nsecsElapsed();
                             else if (!raw->breaker->isIsolated())
                                 raw->reachedNs = clock.nsecsElapsed();
                         });
    }
    std::vector<double> isolateMs;
    std::vector<double> liftMs;
    int missed = 0;
    for (int round = 0; round < rounds; ++round) {
        for (bool isolate : {true, false}) {
            for (auto &seat : seats)
                seat->reachedNs = -1;
            clock.start();
            if (isolate)
                seats.front()->isolations.isolate(QStringLiteral("logistics"),
                                                  QStringLiteral("bench: vendor outage"));
            else
                seats.front()->isolations.lift(QStringLiteral("logistics"));
            const bool all = waitFor(
                [&] {
                    return std::all_of(seats.begin(), seats.end(),
                                       [](const auto &seat) { return seat->reachedNs >= 0; });
                },
                5000);
            if (!all)
                ++missed;
            for (const auto &seat : seats) {
                if (seat->reachedNs >= 0)
                    (isolate ? isolateMs : liftMs).push_back(double(seat->reachedNs) / 1e6);
            }
        }
    }
    const std::vector<double> local = localOpen(1000);
    const std::vector<double> notify = bareNotify(url, shortMode ? 20 : 200);
    seats.clear();
    dropDatabase(adminUrl, url);

    std::printf("lead's isolate -> each console's breaker refusing (%zu samples): "
                "p50 %.1f ms, p99 %.1f ms, max %.1f ms\n",
                isolateMs.size(), percentile(isolateMs, 50), percentile(isolateMs, 99),
                isolateMs.empty() ? 0.0 : *std::max_element(isolateMs.begin(), isolateMs.end()));
    std::printf("lead's lift -> each console's breaker letting calls through (%zu samples): "
                "p50 %.1f ms, p99 %.1f ms\n",
                liftMs.size(), percentile(liftMs, 50), percentile(liftMs, 99));
    std::printf("baseline, a local breaker opened by its own failure, to its refusal: "
                "p50 %.2f us, p99 %.2f us\n",
                percentile(local, 50), percentile(local, 99));
    std::printf("baseline, one bare NOTIFY heard on another QPSQL connection: p50 %.2f ms, "
                "p99 %.2f ms\n",
                percentile(notify, 50) / 1000.0, percentile(notify, 99) / 1000.0);
    if (!notify.empty())
        std::printf("ratio isolate p50 / bare NOTIFY p50: %.1f\n",
                    percentile(isolateMs, 50) / (percentile(notify, 50) / 1000.0));
    const bool met = missed == 0 && percentile(isolateMs, 99) <= 1000.0;
    std::printf("target: p99 <= 1000 ms to every console: %s%s\n", met ? "met" : "MISSED",
                missed ? qPrintable(QStringLiteral(" (%1 rounds did not reach every console "
                                                   "within 5 s)")
                                        .arg(missed))
                       : "");
    std::printf("load average after the run: %s\n", qPrintable(Bench::loadAverage()));
    std::printf("isolate_p50_ms=%.1f isolate_p99_ms=%.1f lift_p99_ms=%.1f notify_p50_ms=%.2f "
                "consoles=%d rounds=%d\n",
                percentile(isolateMs, 50), percentile(isolateMs, 99), percentile(liftMs, 99),
                percentile(notify, 50) / 1000.0, consoles, rounds);
    return (met || shortMode) ? 0 : 1;
}
