#include "terminationsignals.h"

#include <QCoreApplication>
#include <QSocketNotifier>

#include <csignal>
#include <fcntl.h>
#include <unistd.h>

namespace AgentConsole {

namespace {

int g_signalPipe[2] = {-1, -1};

void onSignal(int number)
{
    const char byte = char(number);
    [[maybe_unused]] const auto written = ::write(g_signalPipe[1], &byte, 1);
}

int numberOf(TerminationSignal which)
{
    return which == TerminationSignal::Interrupt ? SIGINT : SIGTERM;
}

} // namespace

std::unique_ptr<QSocketNotifier> onTerminationSignals(
    const QList<TerminationSignal> &which, std::function<void(TerminationSignal)> handler)
{
    if (g_signalPipe[0] < 0) {
        if (::pipe(g_signalPipe) != 0)
            return nullptr;
        // Read until empty without blocking; a full pipe drops a signal rather than the
        // handler blocking in it.
        for (int end : g_signalPipe)
            ::fcntl(end, F_SETFL, ::fcntl(end, F_GETFL) | O_NONBLOCK);
    }
    auto notifier = std::make_unique<QSocketNotifier>(g_signalPipe[0], QSocketNotifier::Read);
    QObject::connect(notifier.get(), &QSocketNotifier::activated, notifier.get(),
                     [handler = std::move(handler)] {
                         char bytes[16];
                         ssize_t got;
                         while ((got = ::read(g_signalPipe[0], bytes, sizeof bytes)) > 0) {
                             for (ssize_t i = 0; i < got; ++i)
                                 handler(bytes[i] == char(SIGINT) ? TerminationSignal::Interrupt
                                                                  : TerminationSignal::Terminate);
                         }
                     });
    struct sigaction action = {};
    action.sa_handler = onSignal;
    sigemptyset(&action.sa_mask);
    for (TerminationSignal signal : which)
        sigaction(numberOf(signal), &action, nullptr);
    return notifier;
}

std::unique_ptr<QSocketNotifier> quitOnTerminationSignals()
{
    return onTerminationSignals({TerminationSignal::Interrupt, TerminationSignal::Terminate},
                                [](TerminationSignal) { QCoreApplication::quit(); });
}

} // namespace AgentConsole
