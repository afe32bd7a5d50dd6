// Shows that the network guard (networkguard.cpp) stops a suite: run as
//   networkguardcheck loopback   resolves localhost and connects to 127.0.0.1: exits 0
//   networkguardcheck lookup     resolves 192.0.2.1 (TEST-NET-1): the guard aborts
//   networkguardcheck connect    connects a UDP socket to 192.0.2.1: the guard aborts
// Neither refused call could send a packet if the guard failed to stop it: the lookup is of a
// numeric address (AI_NUMERICHOST: the C library answers it without asking anyone) and a UDP
// connect() only records the peer.

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstring>

namespace {

int lookUp(const char *node)
{
    addrinfo hints{};
    hints.ai_flags = AI_NUMERICHOST;
    hints.ai_family = AF_UNSPEC;
    addrinfo *result = nullptr;
    const int status = getaddrinfo(node, "9", &hints, &result);
    if (result)
        freeaddrinfo(result);
    return status;
}

int connectUdp(const char *address)
{
    const int socket = ::socket(AF_INET, SOCK_DGRAM, 0);
    sockaddr_in peer{};
    peer.sin_family = AF_INET;
    peer.sin_port = htons(9);
    inet_pton(AF_INET, address, &peer.sin_addr);
    const int status = ::connect(socket, reinterpret_cast<const sockaddr *>(&peer), sizeof peer);
    ::close(socket);
    return status;
}

} // namespace

// The guard aborts; ctest's WILL_FAIL wants a plain failing exit, not a signal.
extern "C" void onAbort(int)
{
    _exit(1);
}

int main(int argc, char *argv[])
{
    std::signal(SIGABRT, onAbort);
    const char *mode = argc > 1 ? argv[1] : "";
    if (std::strcmp(mode, "loopback") == 0) {
        addrinfo hints{};
        addrinfo *result = nullptr;
        hints.ai_family = AF_INET;
        const int found = getaddrinfo("localhost", "9", &hints, &result);
        if (result)
            freeaddrinfo(result);
        return found == 0 && lookUp("127.0.0.1") == 0 && connectUdp("127.0.0.1") == 0 ? 0 : 1;
    }
    if (std::strcmp(mode, "lookup") == 0)
        lookUp("192.0.2.1");
    else if (std::strcmp(mode, "connect") == 0)
        connectUdp("192.0.2.1");
    std::fprintf(stderr, "networkguardcheck: the guard let '%s' through\n", mode);
    return 0; // WILL_FAIL: returning at all is the failure
}
