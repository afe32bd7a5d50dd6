#include "consolelanguage.h"

#include <QGuiApplication>

#include <QCoreApplication>
#include <QLibraryInfo>
#include <QPointer>
#include <QTranslator>

namespace AgentConsole::ConsoleLanguage {

namespace {

const QString english = QStringLiteral("en");
const QString simplifiedChinese = QStringLiteral("zh_CN");

// Owned by the application (their parent), so that none outlives it; the pointers only find
// them again for the next switch.
QPointer<QTranslator> ours;
QPointer<QTranslator> qts;
QString installed = english;

QTranslator *loaded(const QString &file, const QString &directory)
{
    auto translator = new QTranslator(QCoreApplication::instance());
    if (translator->load(file, directory) && QCoreApplication::installTranslator(translator))
        return translator;
    delete translator;
    return nullptr;
}

} // namespace

QString resolve(const QString &choice, const QLocale &system)
{
    if (choice == english || choice == simplifiedChinese)
        return choice;
    // "system", and anything unknown (ConsoleSettings has already reported it).
    return system.language() == QLocale::Chinese ? simplifiedChinese : english;
}

namespace {

QString installTranslators(const QString &language)
{
    delete ours; // removes itself from the application
    delete qts;
    // English is the source language: its file holds the plural forms only.
    ours = loaded(QStringLiteral("agentconsole_") + language, QStringLiteral(":/i18n"));
    if (language != english)
        qts = loaded(QStringLiteral("qtbase_") + language,
                     QLibraryInfo::path(QLibraryInfo::TranslationsPath));
    if (!ours)
        qWarning("the %s translations are not built in; the window stays in English",
                 qPrintable(language));
    installed = language;
    return language;
}

} // namespace

QString install(const QString &choice, const QLocale &system)
{
    const QString language = installTranslators(resolve(choice, system));
    // The product's name in the window's language: the window system adds it to every
    // window's title once (the windows' own titles never repeat it).
    if (qobject_cast<QGuiApplication *>(QCoreApplication::instance()))
        QGuiApplication::setApplicationDisplayName(QCoreApplication::translate(
            "AgentConsole::ConsoleWindow",
            QT_TRANSLATE_NOOP("AgentConsole::ConsoleWindow", "Agent Console")));
    // Dates and numbers in the window's language too (the start leaves the process's own).
    QLocale::setDefault(QLocale(language));
    return language;
}

QString current()
{
    return installed;
}

Language currentLanguage()
{
    return installed == simplifiedChinese ? Language::Chinese : Language::English;
}

namespace {

// English from the start, before any choice is read: its file holds the plural forms that
// "%n attempt(s)" needs ("1 attempt", "3 attempts"), for the window and for the suites that
// build widgets without main().
void installEnglishAtStart()
{
    if (!ours)
        installTranslators(english);
}

Q_COREAPP_STARTUP_FUNCTION(installEnglishAtStart)

} // namespace

} // namespace AgentConsole::ConsoleLanguage
