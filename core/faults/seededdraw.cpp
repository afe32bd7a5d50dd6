#include "seededdraw.h"

namespace AgentConsole {

double seededUnitDraw(quint64 seed, std::initializer_list<QByteArray> parts)
{
    quint64 h = 0xcbf29ce484222325ULL ^ seed; // FNV-1a over every part
    for (const QByteArray &part : parts) {
        for (char c : part) {
            h ^= quint8(c);
            h *= 0x100000001b3ULL;
        }
    }
    // splitmix64's finaliser spreads the FNV bits before 53 of them become the fraction
    h += 0x9e3779b97f4a7c15ULL;
    h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ULL;
    h = (h ^ (h >> 27)) * 0x94d049bb133111ebULL;
    h ^= h >> 31;
    return double(h >> 11) / double(1ULL << 53);
}

} // namespace AgentConsole
