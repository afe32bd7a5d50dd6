#include "isolations.h"

#include "internal/isolationstore.h"
#include "isolationwords.h"

#include "../ledger/postgresledger.h"
#include "../resilience/circuitbreaker.h"
#include "../telemetry/logging.h"

#include <algorithm>
#include <limits>

namespace AgentConsole {

using Internal::IsolationStore;

namespace {

// The longest an end-time timer waits before it looks again (QTimer takes an int of ms).
constexpr qint64 MaxTimerMs = 24LL * 60 * 60 * 1000;

// The breaker's and the model's names stay as they are; a reason is trimmed and bounded as
// the database bounds it.
constexpr int MaxReasonLength = 500;

} // namespace

Isolations::Isolations(QObject *parent)
    : QObject(parent)
{
    qRegisterMetaType<AgentConsole::Isolations::Answer>();
    m_endTimer.setSingleShot(true);
    m_endTimer.setTimerType(Qt::PreciseTimer);
    connect(&m_endTimer, &QTimer::timeout, this, &Isolations::applyEndTimes);
}

Isolations::~Isolations()
{
    // The store's thread stops first; the breakers are left as they are (they go with the
    // runtime).
    m_store.reset();
}

bool Isolations::start(const QString &teamSpec, const QString &staffId,
                       CircuitBreakerRegistry *breakers, std::function<QStringList()> knownNames,
                       QString *error)
{
    Q_ASSERT(breakers && !m_store);
    QString problem;
    const std::optional<PostgresLocation> location = PostgresLocation::fromUrl(teamSpec, &problem);
    if (!location) {
        if (error)
            *error = problem;
        return false;
    }
    m_breakers = breakers;
    m_knownNames = std::move(knownNames);
    m_staffId = staffId;
    IsolationStore::Options options;
    options.location = *location;
    m_store = std::make_unique<IsolationStore>(options);
    connect(m_store.get(), &IsolationStore::connected, this,
            [this](bool lead, const QString &role) {
                // Connected once the isolations have been read on this connection (onRead).
                m_connectedUnread = true;
                m_lead = lead;
                m_role = role;
            });
    connect(m_store.get(), &IsolationStore::disconnected, this, [this](const QString &) {
        // The isolations last read stay in force (their end times still apply): a dependency
        // a lead took offline is not called again because the database is away.
        m_connectedUnread = false;
        const Connection next = m_lastRead.isValid() ? Connection::Lost : Connection::Connecting;
        if (next != m_connection) {
            m_connection = next;
            Q_EMIT changed();
        }
    });
    connect(m_store.get(), &IsolationStore::isolationsRead, this, &Isolations::onRead);
    connect(m_store.get(), &IsolationStore::written, this,
            [this](quint64 request, IsolationStore::WriteOutcome written, const QString &detail) {
                const Pending pending = m_pending.take(request);
                const QString &dependency = pending.dependency;
                Outcome outcome = Outcome::Unavailable;
                switch (written) {
                case IsolationStore::WriteOutcome::Done:
                    outcome = Outcome::Done;
                    break;
                case IsolationStore::WriteOutcome::NotLead:
                    outcome = Outcome::NotLead;
                    break;
                case IsolationStore::WriteOutcome::EndTimePassed:
                    outcome = Outcome::EndTimePassed;
                    break;
                case IsolationStore::WriteOutcome::NotIsolated:
                    outcome = Outcome::NotIsolated;
                    break;
                case IsolationStore::WriteOutcome::Unavailable:
                    outcome = Outcome::Unavailable;
                    break;
                }
                if (outcome != Outcome::Done)
                    qCWarning(lcAgent).noquote()
                        << "isolation of" << dependency << "refused:" << outcome << detail;
                Q_EMIT answered(request,
                                {outcome, dependency,
                                 outcome == Outcome::Done && pending.lift
                                     ? IsolationWords::lifted(dependency)
                                     : IsolationWords::outcome(outcome, dependency)});
            });
    m_connection = Connection::Connecting;
    m_store->start();
    Q_EMIT changed();
    return true;
}

void Isolations::setClock(Clock nowUtc)
{
    m_clock = std::move(nowUtc);
    applyEndTimes();
}

QDateTime Isolations::now() const
{
    return m_clock ? m_clock() : QDateTime::currentDateTimeUtc();
}

void Isolations::onRead(const QList<BreakerIsolation> &isolations)
{
    m_lastRead = now();
    const bool same = isolations == m_rows;
    m_rows = isolations;
    const bool nowConnected = m_connectedUnread;
    if (nowConnected) {
        m_connectedUnread = false;
        m_connection = Connection::Connected;
    }
    if (!same)
        qCInfo(lcAgent).noquote() << "isolations read:" << isolations.size() << "not lifted";
    // apply() says whether it told of a change; a new connection is one too.
    if (!(same ? false : apply()) && nowConnected)
        Q_EMIT changed();
}

void Isolations::applyEndTimes()
{
    apply();
}

bool Isolations::apply()
{
    const QDateTime at = now();
    QList<BreakerIsolation> inForce;
    qint64 nextEndMs = -1;
    for (const BreakerIsolation &isolation : std::as_const(m_rows)) {
        if (!isolation.holdsAt(at))
            continue;
        inForce.append(isolation);
        if (isolation.until.isValid()) {
            const qint64 left = at.msecsTo(isolation.until);
            nextEndMs = nextEndMs < 0 ? left : std::min(nextEndMs, left);
        }
    }
    // With a test's clock, the test says when time has passed; the real one has a timer.
    if (nextEndMs >= 0 && !m_clock)
        m_endTimer.start(int(std::min(MaxTimerMs, nextEndMs + 1)));
    else
        m_endTimer.stop();
    if (inForce == m_applied)
        return false;
    m_applied = inForce;
    if (m_breakers)
        m_breakers->setIsolations(m_applied);
    Q_EMIT changed();
    return true;
}

QList<BreakerIsolation> Isolations::current() const
{
    return m_applied;
}

QStringList Isolations::knownNames() const
{
    QStringList names = m_knownNames ? m_knownNames() : QStringList();
    names.removeDuplicates();
    names.sort();
    return names;
}

quint64 Isolations::answerLater(Outcome outcome, const QString &dependency)
{
    // Local answers count down from the top, so they never meet the store's.
    const quint64 request = std::numeric_limits<quint64>::max() - m_lastLocalRequest++;
    QString message = IsolationWords::outcome(
        outcome, dependency, outcome == Outcome::UnknownName ? knownNames() : QStringList());
    QMetaObject::invokeMethod(
        this,
        [this, request, outcome, dependency, message] {
            Q_EMIT answered(request, {outcome, dependency, message});
        },
        Qt::QueuedConnection);
    return request;
}

quint64 Isolations::isolate(const QString &dependency, const QString &reason,
                            const QDateTime &until)
{
    const QString name = dependency.trimmed();
    const QString why = reason.trimmed().left(MaxReasonLength);
    if (!m_store)
        return answerLater(Outcome::Off, name);
    if (why.isEmpty())
        return answerLater(Outcome::ReasonMissing, name);
    if (!knownNames().contains(name))
        return answerLater(Outcome::UnknownName, name);
    // Asked here first to say it plainly; the database refuses a non-lead whatever we say.
    if (m_connection == Connection::Connected && !m_lead)
        return answerLater(Outcome::NotLead, name);
    if (until.isValid() && until <= now())
        return answerLater(Outcome::EndTimePassed, name);
    BreakerIsolation isolation;
    isolation.dependency = name;
    isolation.reason = why;
    isolation.leadStaffId = m_staffId;
    isolation.until = until.isValid() ? until.toUTC() : QDateTime();
    const quint64 request = m_store->isolate(isolation);
    m_pending.insert(request, {name, false});
    return request;
}

quint64 Isolations::lift(const QString &dependency)
{
    const QString name = dependency.trimmed();
    if (!m_store)
        return answerLater(Outcome::Off, name);
    if (m_connection == Connection::Connected && !m_lead)
        return answerLater(Outcome::NotLead, name);
    const quint64 request = m_store->lift(name, m_staffId);
    m_pending.insert(request, {name, true});
    return request;
}

QString Isolations::connectionText() const
{
    switch (m_connection) {
    case Connection::Off:
        return IsolationWords::tr("No team database: isolations need --team.");
    case Connection::Connecting:
        return IsolationWords::tr("Connecting to the team database…");
    case Connection::Connected:
        return m_lead
            ? IsolationWords::tr("Team database: connected as %1 (shift lead).").arg(m_role)
            : IsolationWords::tr("Team database: connected as %1 (staff; only a "
                                 "shift lead can isolate or lift).")
                  .arg(m_role);
    case Connection::Lost:
        return IsolationWords::tr("The team database cannot be reached; trying again. The "
                                  "isolations read at %1 stay in force.")
            .arg(IsolationWords::time(m_lastRead));
    }
    return {};
}

} // namespace AgentConsole
