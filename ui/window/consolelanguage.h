#pragma once

#include "core/scenarios/scenario.h" // Language (core/resilience/toolresult.h)

#include <QLocale>
#include <QString>

namespace AgentConsole {

// The window's language: which translations a stored choice ("system", "en", "zh_CN"; see
// ConsoleSettings::languages()) stands for, and installing them on the application. Ours are
// embedded (:/i18n); Qt's own for its standard buttons and dialogs come from Qt's translations
// folder when installed (Debian: qt6-translations-l10n), and their absence is not an error.
namespace ConsoleLanguage {

// "en" or "zh_CN": a Chinese locale gives Simplified Chinese, everything else English.
QString resolve(const QString &choice, const QLocale &system = QLocale::system());
// Replaces the translators installed by an earlier call with those of `choice`; widgets
// that are shown get a QEvent::LanguageChange. Returns the language resolved.
QString install(const QString &choice, const QLocale &system = QLocale::system());
// The language install() last put in place ("en" before any call).
QString current();
// The same as core names the languages it writes in (a scenario's questions, say).
Language currentLanguage();

} // namespace ConsoleLanguage
} // namespace AgentConsole
