#pragma once

// A loopback port where nothing listens, and where nothing else can start listening while the
// test uses it: a socket bound to it that never listens. A port taken from a QTcpServer and
// given back could be taken by a suite running beside this one, and the test would then talk
// to that suite's server instead of meeting a refused connection. Header-only (POSIX).

#include <QtGlobal>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

namespace AgentConsole::Testing {

class ClosedPort
{
public:
    // `port` 0: the kernel's choice; another: that port, when nothing holds it (a server's
    // usual port, such as Ollama's 11434), else port() is 0.
    explicit ClosedPort(quint16 port = 0)
    {
        m_socket = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (m_socket < 0)
            return;
        sockaddr_in address{};
        address.sin_family = AF_INET;
        address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        address.sin_port = htons(port);
        socklen_t length = sizeof address;
        if (::bind(m_socket, reinterpret_cast<sockaddr *>(&address), sizeof address) == 0
            && ::getsockname(m_socket, reinterpret_cast<sockaddr *>(&address), &length) == 0)
            m_port = ntohs(address.sin_port);
    }
    ~ClosedPort()
    {
        if (m_socket >= 0)
            ::close(m_socket);
    }
    ClosedPort(const ClosedPort &) = delete;
    ClosedPort &operator=(const ClosedPort &) = delete;

    // 0 when no port could be bound.
    quint16 port() const { return m_port; }

private:
    int m_socket = -1;
    quint16 m_port = 0;
};

} // namespace AgentConsole::Testing
