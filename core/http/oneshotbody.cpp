#include "oneshotbody.h"

#include <QIODevice>

#include <algorithm>
#include <cstring>

namespace AgentConsole::Http {

namespace {

class OneShotBody final : public QIODevice
{
public:
    OneShotBody(const QByteArray &bytes, QObject *parent)
        : QIODevice(parent)
        , m_bytes(bytes)
    {
        open(QIODevice::ReadOnly);
    }

    // Random access with a size, so that Qt sends it with a Content-Length and reads it as it
    // goes, rather than buffering a sequential device whole.
    bool isSequential() const override { return false; }
    qint64 size() const override { return m_bytes.size(); }

    bool seek(qint64 position) override
    {
        // Qt rewinds the body (reset(), which seeks to the start) to send the request again.
        if (m_read && position != pos())
            return false;
        return QIODevice::seek(position);
    }

protected:
    qint64 readData(char *data, qint64 maxSize) override
    {
        const qint64 left = m_bytes.size() - pos();
        const qint64 count = std::max<qint64>(0, std::min(maxSize, left));
        if (count > 0) {
            std::memcpy(data, m_bytes.constData() + pos(), std::size_t(count));
            m_read = true;
        }
        return count;
    }

    qint64 writeData(const char *, qint64) override { return -1; }

private:
    const QByteArray m_bytes;
    bool m_read = false;
};

} // namespace

QIODevice *oneShotBody(const QByteArray &bytes, QObject *parent)
{
    return new OneShotBody(bytes, parent);
}

} // namespace AgentConsole::Http
