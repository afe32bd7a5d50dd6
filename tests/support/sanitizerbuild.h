#pragma once

// Which sanitizer this test build runs under (scripts/test.sh's stages "asan" and "tsan"), for
// the few checks that must know: gcc defines __SANITIZE_*__, clang 14 only answers
// __has_feature.

namespace AgentConsole::Testing {

#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool addressSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool addressSanitized = true;
#else
inline constexpr bool addressSanitized = false;
#endif
#else
inline constexpr bool addressSanitized = false;
#endif

#if defined(__SANITIZE_THREAD__)
inline constexpr bool threadSanitized = true;
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
inline constexpr bool threadSanitized = true;
#else
inline constexpr bool threadSanitized = false;
#endif
#else
inline constexpr bool threadSanitized = false;
#endif

// Why a test that starts a child process skips under TSan: Qt 6.4's QProcess starts children
// with clone() (forkfd), and clang 14's TSan runtime fails its own CHECK in its fork handler
// there ("SlotAttachAndLock"), killing the child before exec. The normal and ASan stages run
// these tests.
inline constexpr char childProcessUnderTsan[] =
    "TSan 14 cannot follow QProcess's clone() (see tests/support/sanitizerbuild.h)";

} // namespace AgentConsole::Testing
