#pragma once

#include "signinerror.h"
#include "tokenset.h"

#include <QUrlQuery>

#include <functional>

namespace AgentConsole::OAuth {

class Exchange;

// One request to a token endpoint (RFC 6749 §4.1.3 and §6): `form` is the grant's own
// parameters; the client authenticates as its identity's method says (Basic header, the
// secret in the form, or its id alone). The answer is checked (a Bearer access token,
// bounded lengths) and becomes `base` with the new tokens; a refusal (4xx, RFC 6749 §5.2) is
// Refused, an endpoint that did not answer Unreachable.
struct TokenAnswer
{
    Grant grant;
    SignInError error;
};

void requestToken(Exchange *exchange, const Grant &base, QUrlQuery form,
                  std::function<void(const TokenAnswer &)> done);

// The refresh_token grant for `grant` (which must hold a refresh token).
void refreshGrant(Exchange *exchange, const Grant &grant,
                  std::function<void(const TokenAnswer &)> done);

} // namespace AgentConsole::OAuth
