#include "consolesettings.h"

#include "../telemetry/logging.h"
#include "connectionsettings.h"
#include "settingkeys.h"
#include "teampolicy.h"
#include "settingswriter.h"
#include "../mcp/mcptoolpolicy.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QSettings>
#include <QStandardPaths>
#include <QUrl>

namespace AgentConsole {
namespace {

// The problems in the window's language (docs/TRANSLATIONS.md); agent-cli and the lines
// agent-console writes to stderr before its translator is installed keep the English source.
// Keys, values and paths stay as they are in the file.
struct SettingsWords
{
    Q_DECLARE_TR_FUNCTIONS(AgentConsole::ConsoleSettings)
};

using Wording = std::function<QString()>;

// A field and sentence of checkModelOptions() (English source texts) in the current language.
QString settingsProblemText(const SettingsProblem &problem)
{
    const auto translated = [](const QString &text) {
        return QCoreApplication::translate("AgentConsole::SettingsProblem",
                                           text.toUtf8().constData());
    };
    if (problem.sentence.isEmpty())
        return translated(problem.field);
    return SettingsWords::tr("%1 %2", "a setting's name, then what is wrong with it")
        .arg(translated(problem.field), translated(problem.sentence));
}

// Bounds on what is read back (DESIGN.md, "Bounds"): a stored text longer than any URL or
// model name, or window state larger than Qt ever writes, is not a setting.
constexpr qsizetype maxTextLength = 2048;
constexpr qsizetype maxWindowBytes = 64 * 1024;

const QString &providerKey = SettingKeys::provider;
const QString &baseUrlKey = SettingKeys::baseUrl;
const QString &modelKey = SettingKeys::model;
const QString &keyVariableKey = SettingKeys::apiKeyVariable;
const QString &streamKey = SettingKeys::stream;
const QString &fallbackKey = SettingKeys::fallback;
const QString &contextCharsKey = SettingKeys::contextChars;
const QString &backendKey = SettingKeys::backendKind;
const QString &backendUrlKey = SettingKeys::backendUrl;
const QString &ledgerKey = SettingKeys::ledger;
const QString &languageKey = SettingKeys::language;
const QString &teamKey = SettingKeys::team;
const QString geometryKey = QStringLiteral("window/geometry");
const QString stateKey = QStringLiteral("window/state");
const QString &mcpPoliciesGroup = SettingKeys::mcpToolPolicies;
// More entries than any team's tools: the rest is not read.
constexpr int maxMcpPolicies = 1024;

// Reads one stored value through `accept`, which returns false for a value it does not take;
// the default stays and a problem is said.
class Reader
{
public:
    Reader(const QSettings &settings, QList<Wording> &problems)
        : m_settings(settings)
        , m_problems(problems)
    {
    }

    // A choice among `words`; the index of the one stored, -1 when absent or broken.
    int choice(const QString &key, const QStringList &words)
    {
        if (!m_settings.contains(key))
            return -1;
        const QString value = m_settings.value(key).toString();
        const int index = int(words.indexOf(value));
        if (index < 0)
            problem(key, [words] {
                return SettingsWords::tr("expected %1")
                    .arg(words.join(SettingsWords::tr(" or ", "between the accepted values")));
            });
        return index;
    }

    bool text(const QString &key, QString *value)
    {
        if (!m_settings.contains(key))
            return false;
        const QVariant stored = m_settings.value(key);
        if (!stored.canConvert<QString>() || stored.userType() == QMetaType::QStringList) {
            problem(key, [] { return SettingsWords::tr("expected one line of text"); });
            return false;
        }
        const QString read = stored.toString().trimmed();
        if (read.size() > maxTextLength || read.contains(QLatin1Char('\n'))) {
            problem(key, [] {
                return SettingsWords::tr("longer than %1 characters").arg(maxTextLength);
            });
            return false;
        }
        *value = read;
        return true;
    }

    bool bytes(const QString &key, QByteArray *value)
    {
        if (!m_settings.contains(key))
            return false;
        const QByteArray read = m_settings.value(key).toByteArray();
        if (read.size() > maxWindowBytes) {
            problem(key, [] {
                return SettingsWords::tr("larger than %1 KiB").arg(maxWindowBytes / 1024);
            });
            return false;
        }
        *value = read;
        return true;
    }

    void problem(const QString &key, const Wording &what)
    {
        m_problems.append([key, what] {
            return SettingsWords::tr("%1: %2; the default is used").arg(key, what());
        });
    }

private:
    const QSettings &m_settings;
    QList<Wording> &m_problems;
};

} // namespace

QString ConsoleSettings::defaultFilePath()
{
    // Where QSettings' own user-scope INI file would be, named here so that tests and the
    // README can say it.
    return QDir(QStandardPaths::writableLocation(QStandardPaths::GenericConfigLocation))
        .filePath(QStringLiteral("AgentConsole/agent-console.ini"));
}

QStringList ConsoleSettings::languages()
{
    return {QStringLiteral("system"), QStringLiteral("en"), QStringLiteral("zh_CN")};
}

ConsoleSettings::ConsoleSettings(QString filePath)
    : m_filePath(std::move(filePath))
{
}

QString ConsoleSettings::teamProblem(const QString &spec)
{
    return spec.trimmed().isEmpty() ? QString() : RuntimeOptions::teamSpecProblem(spec);
}

QString ConsoleSettings::ledgerProblem(const QString &spec)
{
    if (spec.isEmpty() || spec == QLatin1String("sqlite")
        || spec.startsWith(QLatin1String("sqlite:")))
        return {};
    if (spec.startsWith(QLatin1String("postgresql://"))
        || spec.startsWith(QLatin1String("postgres://"))) {
        const QUrl url(spec);
        if (!url.isValid() || (url.host().isEmpty() && !spec.contains(QLatin1String("host="))))
            return SettingsWords::tr("is not a postgresql://user@host:port/db address");
        // A password is a secret: it never goes into the settings file.
        if (!url.password().isEmpty()
            || spec.contains(QLatin1String("password="), Qt::CaseInsensitive))
            return SettingsWords::tr("carries a password, which is never stored; use "
                                     "PGPASSWORD or ~/.pgpass instead");
        return {};
    }
    return SettingsWords::tr("expected sqlite, sqlite:FILE or postgresql://user@host:port/db");
}

void ConsoleSettings::load()
{
    m_settings = StoredSettings();
    m_problems.clear();
    m_writable->store(true);
    m_unreadableAtStart = false;
    const QFileInfo file(m_filePath);
    if (!file.exists())
        return; // nothing stored yet: the defaults
    const auto unreadable = [this](const Wording &why) {
        m_writable->store(false);
        m_unreadableAtStart = true;
        const QString path = QDir::toNativeSeparators(m_filePath);
        m_problems.append([path, why] {
            return SettingsWords::tr("the settings file %1 %2: it is kept as it is, the "
                                     "defaults are used and nothing is saved this session")
                .arg(path, why());
        });
        qCWarning(lcAgent).noquote() << m_problems.last()();
    };
    if (!file.isFile())
        return unreadable([] { return SettingsWords::tr("is not a regular file"); });
    if (!file.isReadable())
        return unreadable([] { return SettingsWords::tr("cannot be read"); });
    if (file.size() > maxFileBytes)
        return unreadable([] { return SettingsWords::tr("is larger than 1 MiB"); });

    const QSettings stored(m_filePath, QSettings::IniFormat);
    if (stored.status() != QSettings::NoError)
        return unreadable([] { return SettingsWords::tr("is not an INI file"); });

    Reader read(stored, m_problems);
    ModelOptions model;
    BackendOptions backend;
    if (const int provider = read.choice(providerKey, OptionWords::providers()); provider >= 0)
        model.provider = ModelOptions::Provider(provider);
    read.text(baseUrlKey, &model.baseUrl);
    read.text(modelKey, &model.model);
    QString variable;
    if (read.text(keyVariableKey, &variable))
        model.apiKeyEnv = variable;
    const int stream = read.choice(streamKey, {QStringLiteral("false"), QStringLiteral("true")});
    if (stream >= 0)
        model.stream = stream == 1;
    const int fallback = read.choice(fallbackKey, OptionWords::fallbacks());
    if (fallback >= 0)
        model.fallbackToOffline = fallback == 1; // the table's order: none, offline
    QString contextChars;
    if (read.text(contextCharsKey, &contextChars)) {
        bool isNumber = false;
        const int chars = contextChars.toInt(&isNumber);
        if (isNumber && chars >= ModelOptions::minContextChars
            && chars <= ModelOptions::maxContextChars)
            model.contextChars = chars;
        else
            read.problem(contextCharsKey, [] {
                return SettingsWords::tr("expected a number of characters from %1 to %2")
                    .arg(ModelOptions::minContextChars)
                    .arg(ModelOptions::maxContextChars);
            });
    }
    if (const int kind = read.choice(backendKey, OptionWords::backends()); kind >= 0)
        backend.kind = BackendOptions::Kind(kind);
    read.text(backendUrlKey, &backend.url);

    // The connection as a whole is checked as the command line checks it: a stored provider
    // without a base URL, say, gives the default connection rather than a console that cannot
    // start.
    if (const auto problem = checkModelOptions(model)) {
        read.problem(QStringLiteral("model"),
                     [found = *problem] { return settingsProblemText(found); });
        model = ModelOptions();
    }
    if (const auto problem = checkBackendOptions(backend)) {
        read.problem(QStringLiteral("backend"),
                     [found = *problem] { return settingsProblemText(found); });
        backend = BackendOptions();
    }
    m_settings.model = model;
    m_settings.backend = backend;

    QString ledger;
    if (read.text(ledgerKey, &ledger)) {
        if (ledgerProblem(ledger).isEmpty())
            m_settings.ledgerSpec = ledger;
        else // worded again when shown; the spec itself is never part of the text
            read.problem(ledgerKey, [ledger] { return ledgerProblem(ledger); });
    }
    QString team;
    if (read.text(teamKey, &team)) {
        if (teamProblem(team).isEmpty())
            m_settings.teamSpec = team.trimmed();
        else // the address itself is never part of the text: it may hold a password
            read.problem(teamKey, [team] { return teamProblem(team); });
    }
    const int language = read.choice(languageKey, languages());
    if (language >= 0)
        m_settings.language = languages().at(language);
    read.bytes(geometryKey, &m_settings.windowGeometry);
    read.bytes(stateKey, &m_settings.windowState);
    const QString prefix = mcpPoliciesGroup + QLatin1Char('/');
    const QStringList words = Mcp::ToolPolicyWords::storedWords();
    for (const QString &key : stored.allKeys()) {
        if (!key.startsWith(prefix))
            continue;
        if (m_settings.mcpToolPolicies.size() >= maxMcpPolicies) {
            read.problem(mcpPoliciesGroup, [] {
                return SettingsWords::tr("more than %1 entries").arg(maxMcpPolicies);
            });
            break;
        }
        const QString tool = key.mid(prefix.size());
        if (Mcp::ToolPolicyOverrides::fromStored({{tool, words.first()}}).isEmpty()) {
            read.problem(key, [] { return SettingsWords::tr("expected <server>/<tool>"); });
            continue;
        }
        const int policy = read.choice(key, words);
        if (policy >= 0)
            m_settings.mcpToolPolicies.insert(tool, words.at(policy));
    }
    for (const QString &problem : problems())
        qCWarning(lcAgent).noquote() << "settings:" << problem;
}

QStringList ConsoleSettings::problems() const
{
    QStringList lines;
    for (const Wording &words : m_problems)
        lines.append(words());
    return lines;
}

ConsoleSettings::~ConsoleSettings() = default;

void ConsoleSettings::writeInBackground(QObject *context,
                                        std::function<void(const QString &reason)> failed)
{
    if (!m_writer) {
        m_loggingContext = std::make_unique<QObject>();
        m_writer = std::make_unique<SettingsWriter>();
    }
    m_failureContext = context;
    m_failed = std::move(failed);
}

namespace {

QString notSavedReason(const SettingsWritten &written, const QString &path,
                       std::atomic<bool> &writable)
{
    const QString shown = QDir::toNativeSeparators(path);
    switch (written.outcome) {
    case SettingsWritten::Outcome::Written:
        return {};
    case SettingsWritten::Outcome::Refused:
        return written.problem;
    case SettingsWritten::Outcome::Unreadable:
        writable.store(false);
        return SettingsWords::tr("the settings file %1 can no longer be read").arg(shown);
    case SettingsWritten::Outcome::Unwritten:
        break;
    }
    return SettingsWords::tr("the settings file %1 could not be written").arg(shown);
}

void logNotSaved(const QString &reason)
{
    qCWarning(lcAgent).noquote() << "settings not saved:" << reason;
}

} // namespace

template <typename Write> bool ConsoleSettings::save(Write write, QString *error)
{
    const auto fail = [error](const QString &reason) {
        logNotSaved(reason);
        if (error)
            *error = reason;
        return false;
    };
    if (!m_writable->load()) {
        const QString shown = QDir::toNativeSeparators(m_filePath);
        return fail(m_unreadableAtStart
                        ? SettingsWords::tr("the settings file %1 could not be read at start and "
                                            "is kept as it is")
                              .arg(shown)
                        : SettingsWords::tr("the settings file %1 went bad during this session "
                                            "and is kept as it is")
                              .arg(shown));
    }
    const QString path = m_filePath;
    const std::shared_ptr<std::atomic<bool>> writable = m_writable;
    // The file may have gone bad since load(): looked at again, and written only over what
    // QSettings could read.
    SettingsWriter::Check check = [path, writable]() -> QString {
        const QFileInfo file(path);
        if (file.exists() && (!file.isFile() || file.size() > maxFileBytes)) {
            writable->store(false);
            return SettingsWords::tr("the settings file %1 is no longer a settings file")
                .arg(QDir::toNativeSeparators(path));
        }
        return {};
    };
    if (!m_writer) {
        const QString reason = notSavedReason(writeSettingsNow(path, write, check), path,
                                              *writable);
        return reason.isEmpty() || fail(reason);
    }
    // Once the window that is told is gone, a failure is only logged (still in order behind
    // the writes before it).
    const bool told = !m_failureContext.isNull();
    m_writer->write(
        path, std::move(write), told ? m_failureContext.data() : m_loggingContext.get(),
        [path, writable, failed = told ? m_failed : nullptr](const SettingsWritten &written) {
            const QString reason = notSavedReason(written, path, *writable);
            if (reason.isEmpty())
                return;
            logNotSaved(reason);
            if (failed)
                failed(reason);
        },
        std::move(check));
    return true;
}

void ConsoleSettings::lockTo(const ManagedPolicy &policy, const RuntimeOptions &inForce)
{
    m_policy = policy;
    StoredSettings locked = m_settings;
    locked.model = inForce.model;
    locked.backend = inForce.backend;
    locked.ledgerSpec = inForce.ledgerSpec;
    locked.mcpToolPolicies = inForce.mcpToolPolicies;
    if (policy.isLocked(languageKey))
        locked.language = StoredSettings().language;
    // Only what is locked: the rest stays as staff saved it.
    ModelOptions &model = m_settings.model;
    const ModelOptions &policyModel = locked.model;
    if (policy.isLocked(providerKey))
        model.provider = policyModel.provider;
    if (policy.isLocked(baseUrlKey))
        model.baseUrl = policyModel.baseUrl;
    if (policy.isLocked(modelKey))
        model.model = policyModel.model;
    if (policy.isLocked(keyVariableKey))
        model.apiKeyEnv = policyModel.apiKeyEnv;
    if (policy.isLocked(streamKey))
        model.stream = policyModel.stream;
    if (policy.isLocked(fallbackKey))
        model.fallbackToOffline = policyModel.fallbackToOffline;
    if (policy.isLocked(contextCharsKey))
        model.contextChars = policyModel.contextChars;
    if (policy.isLocked(backendKey))
        m_settings.backend.kind = locked.backend.kind;
    if (policy.isLocked(backendUrlKey))
        m_settings.backend.url = locked.backend.url;
    if (policy.isLocked(ledgerKey))
        m_settings.ledgerSpec = locked.ledgerSpec;
    if (policy.isLocked(teamKey))
        m_settings.teamSpec = inForce.teamSpec;
    if (policy.isLocked(languageKey))
        m_settings.language = locked.language;
    if (policy.isLocked(mcpPoliciesGroup))
        m_settings.mcpToolPolicies = locked.mcpToolPolicies;
}

bool ConsoleSettings::saveConnection(const ModelOptions &requested, const BackendOptions &backend,
                                     QString *error)
{
    // A locked setting keeps its value in force; a save that changes one is refused.
    ModelOptions model = requested;
    if (m_policy) {
        const QString refused = TeamPolicy::refusalOfChange(*m_policy, m_settings.model,
                                                            m_settings.backend, model, backend);
        if (!refused.isEmpty()) {
            if (error)
                *error = refused;
            return false;
        }
    }
    if (const auto problem = checkConnectionSettings(model, backend)) {
        if (error)
            *error = problem->forStaff();
        return false;
    }
    // What the team's policy locks is not written: the staff member's own value stays in the
    // file for the day the policy no longer locks it.
    const QStringList locked = m_policy ? m_policy->locked : QStringList();
    const bool saved = save(
        [model, backend, locked](QSettings &settings) {
            const auto set = [&](const QString &key, const QVariant &value) {
                if (!locked.contains(key))
                    settings.setValue(key, value);
            };
            set(providerKey, OptionWords::provider(model.provider));
            set(baseUrlKey, model.baseUrl);
            set(modelKey, model.model);
            set(keyVariableKey, model.apiKeyEnv);
            set(streamKey, model.stream ? QStringLiteral("true") : QStringLiteral("false"));
            set(fallbackKey, OptionWords::fallback(model.fallbackToOffline));
            if (model.contextChars > 0)
                set(contextCharsKey, QString::number(model.contextChars));
            else if (!locked.contains(contextCharsKey))
                settings.remove(contextCharsKey);
            set(backendKey, OptionWords::backend(backend.kind));
            set(backendUrlKey, backend.url);
        },
        error);
    if (saved) {
        m_settings.model = model;
        m_settings.backend = backend;
    }
    return saved;
}

bool ConsoleSettings::saveLedger(const QString &spec, QString *error)
{
    if (isLocked(ledgerKey)) {
        if (spec.trimmed() == m_settings.ledgerSpec)
            return true; // the value in force, not written
        if (error)
            *error = TeamPolicy::refusalFor(ledgerKey, m_policy->version);
        return false;
    }
    const QString problem = ledgerProblem(spec.trimmed());
    if (!problem.isEmpty()) {
        if (error)
            *error = SettingsWords::tr("Ledger: %1").arg(problem);
        return false;
    }
    const bool saved = save([spec = spec.trimmed()](
                                QSettings &settings) { settings.setValue(ledgerKey, spec); },
                            error);
    if (saved)
        m_settings.ledgerSpec = spec.trimmed();
    return saved;
}

bool ConsoleSettings::saveTeam(const QString &spec, QString *error)
{
    if (isLocked(teamKey)) {
        if (spec.trimmed() == m_settings.teamSpec)
            return true; // the value in force, not written
        if (error)
            *error = TeamPolicy::refusalFor(teamKey, m_policy->version);
        return false;
    }
    const QString problem = teamProblem(spec);
    if (!problem.isEmpty()) {
        if (error)
            *error = SettingsWords::tr("Team database: %1").arg(problem);
        return false;
    }
    const bool saved = save(
        [spec = spec.trimmed()](QSettings &settings) { settings.setValue(teamKey, spec); }, error);
    if (saved)
        m_settings.teamSpec = spec.trimmed();
    return saved;
}

bool ConsoleSettings::saveLanguage(const QString &language, QString *error)
{
    if (isLocked(languageKey)) {
        if (language == m_settings.language)
            return true; // the value in force, not written
        if (error)
            *error = TeamPolicy::refusalFor(languageKey, m_policy->version);
        return false;
    }
    if (!languages().contains(language)) {
        if (error)
            *error = SettingsWords::tr("Language: expected %1")
                         .arg(languages().join(QStringLiteral(", ")));
        return false;
    }
    const bool saved = save(
        [language](QSettings &settings) { settings.setValue(languageKey, language); }, error);
    if (saved)
        m_settings.language = language;
    return saved;
}

bool ConsoleSettings::saveWindow(const QByteArray &geometry, const QByteArray &state,
                                 QString *error)
{
    const bool saved = save(
        [geometry, state](QSettings &settings) {
            settings.setValue(geometryKey, geometry);
            settings.setValue(stateKey, state);
        },
        error);
    if (saved) {
        m_settings.windowGeometry = geometry;
        m_settings.windowState = state;
    }
    return saved;
}

bool ConsoleSettings::saveMcpToolPolicies(const QMap<QString, QString> &policies, QString *error)
{
    if (isLocked(mcpPoliciesGroup)) {
        if (policies == m_settings.mcpToolPolicies)
            return true; // the value in force, not written
        if (error)
            *error = TeamPolicy::refusalFor(mcpPoliciesGroup, m_policy->version);
        return false;
    }
    QStringList refused;
    Mcp::ToolPolicyOverrides::fromStored(policies, &refused);
    if (!refused.isEmpty()) {
        if (error)
            *error = SettingsWords::tr("MCP tool policies: not a policy: %1")
                         .arg(refused.join(QStringLiteral(", ")));
        return false;
    }
    const bool saved = save(
        [policies](QSettings &settings) {
            settings.remove(mcpPoliciesGroup);
            settings.beginGroup(mcpPoliciesGroup);
            for (auto it = policies.cbegin(); it != policies.cend(); ++it)
                settings.setValue(it.key(), it.value());
            settings.endGroup();
        },
        error);
    if (saved)
        m_settings.mcpToolPolicies = policies;
    return saved;
}

RuntimeOptions ConsoleSettings::startOptions() const
{
    RuntimeOptions options;
    options.dataDirectory = RuntimeOptions::defaultDataDirectory();
    options.model = m_settings.model;
    options.backend = m_settings.backend;
    // The team's database holds the ledger too.
    options.teamSpec = m_settings.teamSpec;
    options.ledgerSpec = m_settings.teamSpec.isEmpty() ? m_settings.ledgerSpec : QString();
    options.mcpToolPolicies = m_settings.mcpToolPolicies;
    return options;
}

} // namespace AgentConsole
