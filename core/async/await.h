#pragma once

#include <QFuture>
#include <QFutureWatcher>
#include <QObject>

#include <type_traits>
#include <utility>

namespace AgentConsole {

// Runs `handler` on `context`'s thread once `future` has finished: handler(result), or
// handler() for a QFuture<void>. If `context` is destroyed first, the handler never runs, so
// it may use `context` freely. Nothing blocks. The futures here carry their failures as values,
// so a finished future always has its result.
//
// Built on a QFutureWatcher parented to `context`, not on QFuture::then(context, ...), which
// deadlocks on Qt 6.4 (CONVENTIONS.md, "Known pitfalls").
template <typename T, typename Handler>
void await(const QFuture<T> &future, QObject *context, Handler &&handler)
{
    Q_ASSERT(context);
    auto *watcher = new QFutureWatcher<T>(context);
    QObject::connect(watcher, &QFutureWatcherBase::finished, context,
                     [watcher, handler = std::forward<Handler>(handler)]() mutable {
                         watcher->deleteLater();
                         if constexpr (std::is_void_v<T>) {
                             handler();
                         } else {
                             Q_ASSERT(watcher->future().resultCount() > 0);
                             handler(watcher->result());
                         }
                     });
    watcher->setFuture(future);
}

} // namespace AgentConsole
