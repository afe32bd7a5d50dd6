// ledger_race SPEC PREFIX COUNT
//
// One racer of tst_idempotencyledger's cross-process test. Opens the ledger SPEC, prints
// "ready", waits for a line on stdin (so that every racer starts at once), then begins the
// keys PREFIX-0 .. PREFIX-(COUNT-1) all at once, completes the ones it claimed as SUCCEEDED,
// and prints one line per key: "KEY OUTCOME". Exit code 0, or 2 when the ledger cannot open.

#include "core/ledger/ledgeropening.h"
#include "core/ledger/requesthash.h"

#include <QCoreApplication>
#include <QJsonObject>
#include <QMetaEnum>

#include <cstdio>
#include <iostream>
#include <string>

using namespace AgentConsole;

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    const QStringList args = app.arguments();
    if (args.size() != 4) {
        std::fprintf(stderr, "usage: ledger_race SPEC PREFIX COUNT\n");
        return 1;
    }
    const QString prefix = args.at(2);
    const int count = args.at(3).toInt();

    LedgerOpening opening = openLedger(args.at(1), QString());
    if (!opening.ledger) {
        std::fprintf(stderr, "%s\n", qPrintable(opening.error));
        return 2;
    }
    IdempotencyLedger &ledger = *opening.ledger;
    // A test helper with no event loop to keep responsive: waiting here is fine.
    QFuture<LedgerOpenResult> opened = ledger.open();
    opened.waitForFinished();
    if (!opened.result().ready()) {
        std::fprintf(stderr, "%s\n", qPrintable(opened.result().message));
        return 2;
    }
    std::printf("ready\n");
    std::fflush(stdout);
    std::string go;
    std::getline(std::cin, go);

    const QByteArray hash = requestHash(QJsonObject{{QStringLiteral("orderId"), prefix}});
    QList<QFuture<LedgerClaim>> claims;
    for (int i = 0; i < count; ++i)
        claims.append(ledger.begin(prefix + QLatin1Char('-') + QString::number(i),
                                   QStringLiteral("createTicket"), hash));
    const QMetaEnum outcomes = QMetaEnum::fromType<LedgerClaim::Outcome>();
    for (int i = 0; i < count; ++i) {
        claims[i].waitForFinished();
        const LedgerClaim claim = claims[i].result();
        const QString key = prefix + QLatin1Char('-') + QString::number(i);
        if (claim.mayExecute()) {
            const QJsonObject result{{QStringLiteral("pid"), app.applicationPid()}};
            QFuture<LedgerCompletion> done = ledger.complete(key, LedgerStatus::Succeeded, result);
            done.waitForFinished();
            if (!done.result().completed())
                std::fprintf(stderr, "%s not completed: %s\n", qPrintable(key),
                             qPrintable(done.result().detail));
        } else if (claim.outcome == LedgerClaim::Outcome::StoreError) {
            std::fprintf(stderr, "%s: %s\n", qPrintable(key), qPrintable(claim.detail));
        }
        std::printf("%s %s\n", qPrintable(key), outcomes.valueToKey(int(claim.outcome)));
    }
    std::fflush(stdout);
    return 0;
}
