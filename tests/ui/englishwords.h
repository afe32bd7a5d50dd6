#pragma once

// "No English left": the words of a text that are English although the window speaks Chinese,
// names and ids aside (docs/TRANSLATIONS.md, "The proof"). Shared by tst_translations and
// tst_problemwords_zh.
#include "ui/common/statuschip.h"

#include <QAbstractButton>
#include <QAbstractItemView>
#include <QAction>
#include <QComboBox>
#include <QDockWidget>
#include <QGroupBox>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QMenuBar>
#include <QPlainTextEdit>
#include <QRegularExpression>
#include <QSet>
#include <QSpinBox>
#include <QTabBar>
#include <QTextDocumentFragment>
#include <QTextEdit>

#include <algorithm>

namespace AgentConsole::Testing {

// Words that stay as they are in Chinese: product and protocol names, units of the trade,
// the tools' wire names where a card shows them as its id, key names.
inline const QSet<QString> &allowedWords()
{
    static const QSet<QString> words{
        QStringLiteral("JSON"), QStringLiteral("SQLite"), QStringLiteral("sqlite"),
        QStringLiteral("PostgreSQL"), QStringLiteral("postgresql"), QStringLiteral("DeepSeek"),
        QStringLiteral("OpenAI"), QStringLiteral("Ollama"), QStringLiteral("URL"),
        QStringLiteral("API"), QStringLiteral("HTTP"), QStringLiteral("REST"),
        QStringLiteral("http"), QStringLiteral("https"), QStringLiteral("MCP"),
        QStringLiteral("Qt"), QStringLiteral("Markdown"), QStringLiteral("SKU"),
        QStringLiteral("UTC"), QStringLiteral("Retry-After"), QStringLiteral("PUT"),
        QStringLiteral("PGPASSWORD"), QStringLiteral("Pro"), // "DeepSeek Pro", a model
        // The local model servers of the presets: "LM Studio", "vLLM", "llama.cpp".
        QStringLiteral("LM"), QStringLiteral("Studio"), QStringLiteral("vLLM"),
        QStringLiteral("llama"), QStringLiteral("cpp"),
        QStringLiteral("English"), // the language list names each language in itself
        // The system an export was made on, as it names itself.
        QStringLiteral("Debian"), QStringLiteral("GNU"), QStringLiteral("bookworm"),
        QStringLiteral("PGPASSWORD"), QStringLiteral("support-sim"), QStringLiteral("agent-cli"),
        // Keys, as QKeySequence and the hints spell them.
        QStringLiteral("Enter"), QStringLiteral("Shift"), QStringLiteral("Esc"),
        QStringLiteral("Ctrl"), QStringLiteral("Alt"), QStringLiteral("Shift+Enter"),
        QStringLiteral("Ctrl+"), QStringLiteral("Ctrl+,"),
        // The tools' wire names, shown as ids on their cards.
        QStringLiteral("queryOrderStatus"), QStringLiteral("queryLogistics"),
        QStringLiteral("queryInventory"), QStringLiteral("createTicket"),
        QStringLiteral("listOrderTickets"),
        // Currency codes, as the store gives amounts.
        QStringLiteral("CNY"),
        // The demo tenant's id, its staff member's name, the offline model's name.
        QStringLiteral("t-acme"), QStringLiteral("Lin"), QStringLiteral("Wei"),
        QStringLiteral("offline-demo"),
    };
    return words;
}

// The English words left in `text`: ids (anything with a digit), URLs, paths, JSON examples,
// environment variables and the allowed names aside.
inline QStringList englishWords(QString text)
{
    static const QRegularExpression json(QStringLiteral(R"(\{[^{}]*"[^{}]*\})"));
    static const QRegularExpression url(
        QStringLiteral(R"(\S+://\S+|~?/[\w./*-]+|\b\w+/[\w./-]+|\*\.\w+|[\w-]+\.(json|md)\b)"));
    // Environment variables and counters by their names (DESIGN.md's), shown as ids.
    static const QRegularExpression variable(
        QStringLiteral(R"(\b([A-Z][A-Z0-9]*(_[A-Z0-9]+)+|[a-z][a-z0-9]*(_[a-z0-9]+)+)\b)"));
    static const QRegularExpression word(QStringLiteral(R"([A-Za-z][A-Za-z0-9_+\-]*)"));
    for (int i = 0; i < 4 && text.contains(json); ++i)
        text.remove(json);
    text.remove(url);
    text.remove(variable);
    QStringList left;
    for (auto it = word.globalMatch(text); it.hasNext();) {
        const QString token = it.next().captured();
        const bool id = std::any_of(token.cbegin(), token.cend(),
                                    [](QChar c) { return c.isDigit(); });
        // A key sequence, "Ctrl+Shift+F": key names and single keys.
        const QStringList keys = token.split(QLatin1Char('+'), Qt::SkipEmptyParts);
        const bool sequence = keys.size() > 1 && std::all_of(keys.cbegin(), keys.cend(),
            [](const QString &key) { return key.size() == 1 || allowedWords().contains(key); });
        if (!id && !sequence && !allowedWords().contains(token) && token.size() > 1)
            left.append(token);
    }
    return left;
}

inline QString plain(const QString &text)
{
    return Qt::mightBeRichText(text) ? QTextDocumentFragment::fromHtml(text).toPlainText()
                                     : text;
}

// Every text of `root` and its visible children that staff read or a screen reader says.
class TextWalk
{
public:
    // The model's answers are its own, in the question's language, and name products as
    // the store spells them: not the window's words.
    void exempt(const QString &text) { m_exempt.insert(text); }

    void add(const QString &where, const QString &text)
    {
        if (m_exempt.contains(text))
            return;
        const QString shown = plain(text);
        const QStringList left = englishWords(shown);
        if (!left.isEmpty())
            m_problems.append(QStringLiteral("%1: \"%2\" (%3)")
                                  .arg(where, shown.left(160), left.join(QLatin1Char(' '))));
        ++m_texts;
    }

    void addActions(const QString &where, const QList<QAction *> &actions)
    {
        for (QAction *action : actions) {
            if (action->isSeparator() || !action->isVisible())
                continue;
            add(where + QStringLiteral(" action"), action->text());
            add(where + QStringLiteral(" action tip"), action->toolTip());
            add(where + QStringLiteral(" action status"), action->statusTip());
            if (action->menu()) {
                add(where + QStringLiteral(" menu"), action->menu()->title());
                addActions(where + QStringLiteral(" › ") + action->menu()->title(),
                           action->menu()->actions());
            }
        }
    }

    void addModel(const QString &where, const QAbstractItemModel *model, const QModelIndex &parent)
    {
        for (int row = 0; row < model->rowCount(parent); ++row) {
            for (int column = 0; column < model->columnCount(parent); ++column) {
                const QModelIndex index = model->index(row, column, parent);
                add(where, index.data(Qt::DisplayRole).toString());
                add(where + QStringLiteral(" tip"), index.data(Qt::ToolTipRole).toString());
                add(where + QStringLiteral(" accessible"),
                    index.data(Qt::AccessibleTextRole).toString());
                if (column == 0)
                    addModel(where, model, index);
            }
        }
        if (!parent.isValid()) {
            for (int column = 0; column < model->columnCount(); ++column)
                add(where + QStringLiteral(" header"),
                    model->headerData(column, Qt::Horizontal).toString());
        }
    }

    void addWidget(QWidget *widget)
    {
        const QString where = QString::fromLatin1(widget->metaObject()->className())
            + QLatin1Char('#') + widget->objectName();
        if (widget->isWindow() || qobject_cast<QDockWidget *>(widget))
            add(where + QStringLiteral(" title"), widget->windowTitle());
        add(where + QStringLiteral(" tip"), widget->toolTip());
        add(where + QStringLiteral(" accessible"), widget->accessibleName());
        add(where + QStringLiteral(" description"), widget->accessibleDescription());
        add(where + QStringLiteral(" status"), widget->statusTip());
        if (auto *label = qobject_cast<QLabel *>(widget))
            add(where, label->text());
        if (auto *button = qobject_cast<QAbstractButton *>(widget))
            add(where, button->text());
        if (auto *edit = qobject_cast<QLineEdit *>(widget))
            add(where + QStringLiteral(" placeholder"), edit->placeholderText());
        if (auto *edit = qobject_cast<QPlainTextEdit *>(widget)) {
            add(where + QStringLiteral(" placeholder"), edit->placeholderText());
            add(where, edit->toPlainText());
        }
        if (auto *edit = qobject_cast<QTextEdit *>(widget)) {
            add(where + QStringLiteral(" placeholder"), edit->placeholderText());
            add(where, edit->toPlainText());
        }
        if (auto *group = qobject_cast<QGroupBox *>(widget))
            add(where, group->title());
        if (auto *combo = qobject_cast<QComboBox *>(widget)) {
            for (int i = 0; i < combo->count(); ++i)
                add(where + QStringLiteral(" item"), combo->itemText(i));
        }
        if (auto *tabs = qobject_cast<QTabBar *>(widget)) {
            for (int i = 0; i < tabs->count(); ++i)
                add(where + QStringLiteral(" tab"), tabs->tabText(i));
        }
        if (auto *spin = qobject_cast<QSpinBox *>(widget)) {
            add(where + QStringLiteral(" suffix"), spin->suffix());
            add(where + QStringLiteral(" special"), spin->specialValueText());
        }
        if (auto *spin = qobject_cast<QDoubleSpinBox *>(widget)) {
            add(where + QStringLiteral(" suffix"), spin->suffix());
            add(where + QStringLiteral(" special"), spin->specialValueText());
        }
        if (auto *chip = qobject_cast<StatusChip *>(widget))
            add(where, chip->text());
        if (auto *view = qobject_cast<QAbstractItemView *>(widget); view && view->model())
            addModel(where, view->model(), view->rootIndex());
        if (auto *bar = qobject_cast<QMenuBar *>(widget))
            addActions(where, bar->actions());
        else
            addActions(where, widget->actions());
    }

    void walk(QWidget *root)
    {
        addWidget(root);
        for (QWidget *child : root->findChildren<QWidget *>()) {
            if (child->isVisible() && !child->isWindow())
                addWidget(child);
        }
    }

    int texts() const { return m_texts; }
    // Each on its own line in the log too: QVERIFY2's message is cut short.
    QStringList problems() const
    {
        for (const QString &problem : m_problems)
            qWarning("English left: %s", qPrintable(problem));
        return m_problems;
    }

private:
    int m_texts = 0;
    QStringList m_problems;
    QSet<QString> m_exempt;
};

} // namespace AgentConsole::Testing
