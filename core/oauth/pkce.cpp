#include "pkce.h"

#include <QCryptographicHash>
#include <QRandomGenerator>

namespace AgentConsole::OAuth {

namespace {
constexpr auto kBase64Url = QByteArray::Base64UrlEncoding | QByteArray::OmitTrailingEquals;
}

QByteArray randomUrlSafe(int bytes)
{
    QByteArray raw(bytes, Qt::Uninitialized);
    QRandomGenerator *random = QRandomGenerator::system();
    for (int i = 0; i < bytes; ++i)
        raw[i] = char(random->bounded(256));
    return raw.toBase64(kBase64Url);
}

QByteArray Pkce::challengeOf(const QByteArray &verifier)
{
    return QCryptographicHash::hash(verifier, QCryptographicHash::Sha256).toBase64(kBase64Url);
}

Pkce Pkce::generate()
{
    Pkce pkce;
    pkce.verifier = randomUrlSafe(48); // 64 characters: within RFC 7636's 43..128
    pkce.challenge = challengeOf(pkce.verifier);
    return pkce;
}

} // namespace AgentConsole::OAuth
