// Linked into every suite (tests/CMakeLists.txt): a suite that tries to resolve a name other
// than localhost, or to connect to an address outside 127.0.0.0/8 and ::1, is stopped on the
// spot with the name or address it tried. Tests reach only loopback (DEVELOPERS.md): a real
// host named in a fixture ("mcp.example.com") would otherwise be looked up, and answered or
// not, depending on the machine the suite runs on.
//
// How: the suite's executable defines connect() and getaddrinfo(), which the dynamic linker
// binds before the C library's for the suite and every library it loads (Qt Network among
// them); each checks its argument and calls the C library's own (dlsym RTLD_NEXT). Unix
// sockets (D-Bus, PostgreSQL's socket) and netlink pass. Children a suite starts (agent-cli,
// support-sim, npm's servers) are not covered by this; their addresses come from the suite.
// POSIX-only, as the suites' platform is (DESIGN.md, "Beyond this machine").

#include <arpa/inet.h>
#include <dlfcn.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

bool isLoopbackV4(const in_addr &address)
{
    return (ntohl(address.s_addr) >> 24) == 127;
}

bool isLoopbackV6(const in6_addr &address)
{
    if (IN6_IS_ADDR_LOOPBACK(&address))
        return true;
    // ::ffff:127.x.y.z, an IPv4 loopback address in an IPv6 socket
    return IN6_IS_ADDR_V4MAPPED(&address) && address.s6_addr[12] == 127;
}

[[noreturn]] void refuse(const char *what, const char *target)
{
    std::fprintf(stderr,
                 "NETWORK GUARD: this suite tried to %s %s; tests reach only 127.0.0.0/8 and "
                 "::1 (tests/support/networkguard.cpp)\n",
                 what, target);
    std::fflush(stderr);
    std::abort();
}

bool isLocalName(const char *node)
{
    if (std::strcmp(node, "localhost") == 0 || std::strcmp(node, "localhost.") == 0
        || std::strcmp(node, "ip6-localhost") == 0 || std::strcmp(node, "ip6-loopback") == 0) {
        return true;
    }
    in_addr v4{};
    if (inet_pton(AF_INET, node, &v4) == 1)
        return isLoopbackV4(v4);
    in6_addr v6{};
    if (inet_pton(AF_INET6, node, &v6) == 1)
        return isLoopbackV6(v6);
    return false;
}

template <typename Function>
Function real(const char *name)
{
    void *symbol = dlsym(RTLD_NEXT, name);
    if (!symbol) {
        std::fprintf(stderr, "NETWORK GUARD: no %s after the guard's own\n", name);
        std::abort();
    }
    return reinterpret_cast<Function>(symbol);
}

} // namespace

extern "C" int connect(int socket, const sockaddr *address, socklen_t length)
{
    using Connect = int (*)(int, const sockaddr *, socklen_t);
    static const Connect next = real<Connect>("connect");
    if (address && length >= socklen_t(sizeof(sa_family_t))) {
        char text[INET6_ADDRSTRLEN] = {};
        if (address->sa_family == AF_INET && length >= socklen_t(sizeof(sockaddr_in))) {
            const auto *v4 = reinterpret_cast<const sockaddr_in *>(address);
            if (!isLoopbackV4(v4->sin_addr)) {
                inet_ntop(AF_INET, &v4->sin_addr, text, sizeof text);
                refuse("connect to", text);
            }
        } else if (address->sa_family == AF_INET6 && length >= socklen_t(sizeof(sockaddr_in6))) {
            const auto *v6 = reinterpret_cast<const sockaddr_in6 *>(address);
            if (!isLoopbackV6(v6->sin6_addr)) {
                inet_ntop(AF_INET6, &v6->sin6_addr, text, sizeof text);
                refuse("connect to", text);
            }
        }
    }
    return next(socket, address, length);
}

extern "C" int getaddrinfo(const char *node, const char *service, const addrinfo *hints,
                           addrinfo **result)
{
    using GetAddrInfo = int (*)(const char *, const char *, const addrinfo *, addrinfo **);
    static const GetAddrInfo next = real<GetAddrInfo>("getaddrinfo");
    if (node && !isLocalName(node))
        refuse("look up", node);
    return next(node, service, hints, result);
}
