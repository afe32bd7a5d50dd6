#include "mcpconfigfile.h"

#include "../async/await.h"
#include "../async/fileworkpool.h"
#include "../llm/secretstore.h"
#include "../mcp/mcpconfig.h"
#include "../mcp/mcpsecrets.h"
#include "../telemetry/logging.h"
#include "runtimeoptions.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QSaveFile>
#include <QtConcurrent/QtConcurrentRun>

namespace AgentConsole {

namespace {

struct ReadResult
{
    QByteArray bytes;
    bool exists = false;
    QString unreadable;
};

// On a worker thread: the file within the bound mcp.json has at start.
ReadResult readBounded(const QString &path)
{
    ReadResult result;
    const QFileInfo info(path);
    result.exists = info.exists() || info.isSymLink();
    if (!result.exists)
        return result;
    const qsizetype bound = Mcp::ConfigLimits{}.maxFileBytes;
    if (!info.isFile()) {
        result.unreadable = McpConfigFile::tr("it is not a regular file");
        return result;
    }
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) {
        result.unreadable = file.errorString();
        return result;
    }
    result.bytes = file.read(bound + 1);
    if (result.bytes.size() > bound) {
        result.bytes.clear();
        result.unreadable = McpConfigFile::tr("it is larger than %1 bytes").arg(bound);
    }
    return result;
}

// On a worker thread: the whole text or nothing (QSaveFile renames over the old file only
// once everything is written). Empty on success, else the reason.
QString writeAtomically(const QString &path, const QByteArray &bytes)
{
    const QFileInfo info(path);
    if (info.exists() && !info.isFile())
        return McpConfigFile::tr("%1 is not a regular file").arg(path);
    if (!QDir().mkpath(info.absolutePath()))
        return McpConfigFile::tr("cannot make the folder %1").arg(info.absolutePath());
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly))
        return file.errorString();
    if (file.write(bytes) != bytes.size() || !file.commit())
        return file.errorString();
    return {};
}

QString fieldWords(const Mcp::MovedSecret &secret)
{
    switch (secret.field) {
    case Mcp::MovedSecret::Field::Header:
        return McpConfigFile::tr("header \"%1\"").arg(secret.name.left(64));
    case Mcp::MovedSecret::Field::Env:
        return McpConfigFile::tr("env \"%1\"").arg(secret.name.left(64));
    case Mcp::MovedSecret::Field::OAuthClientSecret:
        break;
    }
    return McpConfigFile::tr("the OAuth client secret");
}

} // namespace

struct McpConfigFile::Pending
{
    Mcp::SecretExtraction extraction;
    int next = 0; // the secret to store next
};

QString McpConfigFile::pathFor(const RuntimeOptions &options)
{
    if (!options.mcpConfigFile.isEmpty())
        return options.mcpConfigFile;
    const QString dataDirectory = options.dataDirectory.isEmpty()
        ? RuntimeOptions::defaultDataDirectory()
        : options.dataDirectory;
    return QDir(dataDirectory).filePath(QStringLiteral("mcp.json"));
}

QString McpConfigFile::exampleText()
{
    return QStringLiteral(R"({
    "mcpServers": {
        "files": {
            "command": "npx",
            "args": ["-y", "@modelcontextprotocol/server-filesystem", "/srv/kb"]
        },
        "tickets": {
            "url": "https://mcp.example.com/mcp",
            "headers": {"Authorization": "Bearer paste-the-token-here"}
        }
    }
}
)");
}

McpConfigFile::McpConfigFile(QString path, std::shared_ptr<SecretStore> secrets, QObject *parent)
    : QObject(parent)
    , m_path(std::move(path))
    , m_secrets(std::move(secrets))
{
}

McpConfigFile::~McpConfigFile() = default;

void McpConfigFile::load()
{
    await(QtConcurrent::run(fileWorkPool(), [path = m_path] { return readBounded(path); }), this,
          [this](const ReadResult &result) {
              QString refusal;
              if (result.exists && result.unreadable.isEmpty())
                  Mcp::parseConfig(result.bytes, &refusal);
              Q_EMIT loaded(QString::fromUtf8(result.bytes), result.exists, result.unreadable,
                            refusal);
          });
}

bool McpConfigFile::save(const QString &text)
{
    if (m_saving)
        return false;
    m_saving = true;
    // Never an empty file over one that had servers: "no servers" is said in JSON.
    if (text.trimmed().isEmpty()) {
        refuse(tr("the text is empty; for no servers at all, write {\"mcpServers\": {}}"));
        return true;
    }
    const QByteArray bytes = text.toUtf8();
    QString problem;
    if (!m_policyLock.isEmpty()) {
        refuse(m_policyLock);
        return true;
    }
    const std::optional<Mcp::Config> parsed = Mcp::parseConfig(bytes, &problem);
    if (!parsed) {
        refuse(problem);
        return true;
    }
    // A server the team's policy does not allow is refused here, in words, not saved to be
    // refused at the next start (docs/POLICY.md).
    if (m_policyRefusal) {
        for (const Mcp::ServerConfig &server : parsed->servers) {
            if (const QString refusal = m_policyRefusal(server.name); !refusal.isEmpty()) {
                refuse(refusal);
                return true;
            }
        }
    }
    auto extraction = Mcp::extractSecrets(bytes, &problem);
    if (!extraction) {
        refuse(problem);
        return true;
    }
    auto pending = std::make_shared<Pending>();
    pending->extraction = std::move(*extraction);
    if (!pending->extraction.secrets.isEmpty() && !m_secrets) {
        const Mcp::MovedSecret &first = pending->extraction.secrets.first();
        refuse(tr("server \"%1\": no keychain is available to keep the secret of %2, and it is "
                  "not written to the file in plain text")
                   .arg(first.server, fieldWords(first)));
        return true;
    }
    // Later, like every answer: the keychain's, or the check's own when there is nothing to
    // store.
    QMetaObject::invokeMethod(
        this, [this, pending] { storeNext(pending); }, Qt::QueuedConnection);
    return true;
}

void McpConfigFile::storeNext(std::shared_ptr<Pending> pending)
{
    if (pending->next >= pending->extraction.secrets.size()) {
        writeFile(std::move(pending));
        return;
    }
    const Mcp::MovedSecret &secret = pending->extraction.secrets.at(pending->next);
    m_secrets->write(secret.key, secret.value, this, [this, pending](const SecretAnswer &answer) {
        const Mcp::MovedSecret &secret = pending->extraction.secrets.at(pending->next);
        if (answer.status != SecretAnswer::Status::Done) {
            // The keychain's words name no secret (SecretStore's contract); the value stays
            // out of the file. Entries stored before this one keep their new values.
            qCWarning(lcAgent).noquote() << "mcp.json not saved: keychain entry" << secret.key
                                         << "not written:" << answer.problem;
            refuse(tr("server \"%1\": the keychain did not take the secret of %2 (%3); it is "
                      "not written to the file in plain text")
                       .arg(secret.server, fieldWords(secret), answer.problem.left(200)));
            return;
        }
        ++pending->next;
        storeNext(pending);
    });
}

void McpConfigFile::writeFile(std::shared_ptr<Pending> pending)
{
    await(QtConcurrent::run(fileWorkPool(),
                            [path = m_path, bytes = pending->extraction.json] {
                                return writeAtomically(path, bytes);
                            }),
          this, [this, pending](const QString &problem) {
              if (!problem.isEmpty()) {
                  qCWarning(lcAgent).noquote() << "mcp.json not saved:" << m_path << problem;
                  refuse(tr("the file could not be written: %1").arg(problem));
                  return;
              }
              m_saving = false;
              const int moved = int(pending->extraction.secrets.size());
              qCInfo(lcAgent).noquote() << "mcp.json saved:" << m_path << "with" << moved
                                        << "secret(s) moved to the keychain";
              Q_EMIT saved(QString::fromUtf8(pending->extraction.json), moved);
          });
}

void McpConfigFile::refuse(const QString &reason)
{
    QMetaObject::invokeMethod(
        this,
        [this, reason] {
            m_saving = false;
            Q_EMIT refused(reason);
        },
        Qt::QueuedConnection);
}

} // namespace AgentConsole
