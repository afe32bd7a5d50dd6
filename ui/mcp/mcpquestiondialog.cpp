#include "mcpquestiondialog.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QDoubleValidator>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QTimerEvent>
#include <QVBoxLayout>

#include <algorithm>
#include <limits>

namespace AgentConsole {

namespace {

using Field = McpQuestionField;

// Server text is shown as it is, never read as markup or links.
QLabel *plainLabel(const QString &text, QWidget *parent)
{
    auto *label = new QLabel(text, parent);
    label->setTextFormat(Qt::PlainText);
    label->setWordWrap(true);
    label->setTextInteractionFlags(Qt::TextSelectableByMouse);
    return label;
}

QString numberText(double value)
{
    return QString::number(value, 'g', 15);
}

} // namespace

McpQuestionDialog::McpQuestionDialog(const QString &id, const McpQuestion &question,
                                     QWidget *parent)
    : QDialog(parent)
    , m_id(id)
    , m_question(question)
{
    setObjectName(QStringLiteral("mcpQuestionDialog"));
    setWindowTitle(tr("Question from %1").arg(question.server));
    setModal(false);
    setMinimumWidth(480);

    auto *layout = new QVBoxLayout(this);
    auto *asker = plainLabel(tr("The MCP server \"%1\" asks:").arg(question.server), this);
    asker->setObjectName(QStringLiteral("questionAsker"));
    QFont bold = asker->font();
    bold.setWeight(QFont::DemiBold);
    asker->setFont(bold);
    layout->addWidget(asker);
    auto *message = plainLabel(question.message, this);
    message->setObjectName(QStringLiteral("questionMessage"));
    layout->addWidget(message);
    if (!question.toolTitle.isEmpty()) {
        auto *during = plainLabel(tr("It asks during the call of %1, which waits for your "
                                     "answer until its time is up; then the question is "
                                     "withdrawn.")
                                      .arg(question.toolTitle),
                                  this);
        during->setObjectName(QStringLiteral("questionCall"));
        during->setForegroundRole(QPalette::PlaceholderText);
        layout->addWidget(during);
    }
    if (!question.answerBy.isForever()) {
        m_timeLeft = plainLabel(QString(), this);
        m_timeLeft->setObjectName(QStringLiteral("questionTimeLeft"));
        QFont strong = m_timeLeft->font();
        strong.setWeight(QFont::DemiBold);
        m_timeLeft->setFont(strong);
        layout->addWidget(m_timeLeft);
        showTimeLeft();
        m_clock.start(1000, this);
    }

    auto *form = new QFormLayout;
    form->setRowWrapPolicy(QFormLayout::WrapLongRows);
    form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
    for (const Field &field : std::as_const(m_question.fields)) {
        QWidget *editor = nullptr;
        const QJsonValue preset = field.defaultValue;
        switch (field.type) {
        case Field::Type::Text:
        case Field::Type::Number:
        case Field::Type::Integer: {
            auto *line = new QLineEdit(this);
            if (field.type == Field::Type::Text) {
                line->setMaxLength(field.maxLength);
                if (preset.isString())
                    line->setText(preset.toString());
                if (field.format == QLatin1String("email"))
                    line->setPlaceholderText(tr("name@example.com"));
                else if (field.format == QLatin1String("uri"))
                    line->setPlaceholderText(tr("https://…"));
                else if (field.format == QLatin1String("date"))
                    line->setPlaceholderText(tr("YYYY-MM-DD"));
                else if (field.format == QLatin1String("date-time"))
                    line->setPlaceholderText(tr("YYYY-MM-DDThh:mm:ssZ"));
            } else {
                const double low = field.minimum.value_or(-std::numeric_limits<double>::max());
                const double high = field.maximum.value_or(std::numeric_limits<double>::max());
                auto *validator = new QDoubleValidator(low, high,
                                                       field.type == Field::Type::Integer ? 0 : 6,
                                                       line);
                validator->setNotation(QDoubleValidator::StandardNotation);
                validator->setLocale(QLocale::c()); // the value is sent as typed: 1.5, not 1,5
                line->setValidator(validator);
                if (preset.isDouble())
                    line->setText(numberText(preset.toDouble()));
                const QString kind = field.type == Field::Type::Integer ? tr("a whole number")
                                                                        : tr("a number");
                if (field.minimum && field.maximum)
                    line->setPlaceholderText(
                        tr("%1 from %2 to %3")
                            .arg(kind, numberText(*field.minimum), numberText(*field.maximum)));
                else if (field.minimum)
                    line->setPlaceholderText(
                        tr("%1 of at least %2").arg(kind, numberText(*field.minimum)));
                else if (field.maximum)
                    line->setPlaceholderText(
                        tr("%1 of at most %2").arg(kind, numberText(*field.maximum)));
                else
                    line->setPlaceholderText(kind);
            }
            editor = line;
            break;
        }
        case Field::Type::Boolean: {
            // What the box shows is what is sent: checked or not, never left out.
            auto *box = new QCheckBox(tr("Yes"), this);
            box->setChecked(preset.toBool(false));
            editor = box;
            break;
        }
        case Field::Type::Choice: {
            auto *combo = new QComboBox(this);
            if (preset.isUndefined())
                combo->addItem(field.required ? tr("Choose…") : tr("(no choice)"), QVariant());
            for (qsizetype i = 0; i < field.choices.size(); ++i)
                combo->addItem(field.choiceTitles.value(i, field.choices.at(i)),
                               field.choices.at(i));
            if (preset.isString())
                combo->setCurrentIndex(combo->findData(preset.toString()));
            editor = combo;
            break;
        }
        }
        editor->setObjectName(QStringLiteral("field_") + field.name);
        // No tooltip from the server's words: Qt reads a tooltip that looks like HTML as rich
        // text. The description is shown under the field, as plain text.
        editor->setAccessibleName(field.label());
        editor->setAccessibleDescription(field.description);
        m_editors.append(editor);
        auto *label = new QLabel(
            field.required ? tr("%1 (required)").arg(field.label()) : field.label(), this);
        label->setTextFormat(Qt::PlainText);
        label->setWordWrap(true);
        label->setBuddy(editor);
        if (field.description.isEmpty()) {
            form->addRow(label, editor);
            continue;
        }
        auto *cell = new QWidget(this);
        auto *cellLayout = new QVBoxLayout(cell);
        cellLayout->setContentsMargins(0, 0, 0, 0);
        cellLayout->setSpacing(2);
        cellLayout->addWidget(editor);
        auto *description = plainLabel(field.description, cell);
        description->setForegroundRole(QPalette::PlaceholderText);
        cellLayout->addWidget(description);
        form->addRow(label, cell);
    }
    layout->addLayout(form);

    m_problem = plainLabel(QString(), this);
    m_problem->setObjectName(QStringLiteral("questionProblem"));
    QPalette warning = m_problem->palette();
    warning.setColor(QPalette::WindowText, QColor(0xb4, 0x23, 0x18));
    m_problem->setPalette(warning);
    m_problem->hide();
    layout->addWidget(m_problem);

    auto *buttons = new QDialogButtonBox(this);
    QPushButton *accept = buttons->addButton(tr("Accept"), QDialogButtonBox::AcceptRole);
    accept->setObjectName(QStringLiteral("acceptQuestion"));
    accept->setDefault(true);
    QPushButton *decline = buttons->addButton(tr("Decline"), QDialogButtonBox::DestructiveRole);
    decline->setObjectName(QStringLiteral("declineQuestion"));
    QPushButton *cancel = buttons->addButton(tr("Cancel"), QDialogButtonBox::RejectRole);
    cancel->setObjectName(QStringLiteral("cancelQuestion"));
    accept->setToolTip(tr("Send the answer in the form to %1").arg(question.server));
    decline->setToolTip(tr("Tell %1 you will not answer").arg(question.server));
    cancel->setToolTip(tr("Close the question without choosing"));
    connect(accept, &QPushButton::clicked, this, [this] { answer(McpAnswer::Accept); });
    connect(decline, &QPushButton::clicked, this, [this] { answer(McpAnswer::Decline); });
    connect(cancel, &QPushButton::clicked, this, [this] { answer(McpAnswer::Cancel); });
    layout->addWidget(buttons);
}

// Whole seconds, rounded up: "1 second left" until the very end, never "0" while it stands;
// from two minutes on whole minutes, rounded down: never more time than there is.
void McpQuestionDialog::showTimeLeft()
{
    const qint64 ms = m_question.answerBy.remainingTime();
    const int seconds = int((std::max<qint64>(ms, 0) + 999) / 1000);
    if (seconds >= 120)
        m_timeLeft->setText(tr("%n minute(s) left to answer.", "", seconds / 60));
    else if (seconds > 0)
        m_timeLeft->setText(tr("%n second(s) left to answer.", "", seconds));
    else
        m_timeLeft->setText(tr("The time to answer is up."));
}

void McpQuestionDialog::timerEvent(QTimerEvent *event)
{
    if (event->timerId() != m_clock.timerId()) {
        QDialog::timerEvent(event);
        return;
    }
    showTimeLeft();
    if (m_question.answerBy.hasExpired())
        m_clock.stop();
}

QString McpQuestionDialog::fieldLabel(const QString &name) const
{
    for (const Field &field : m_question.fields) {
        if (field.name == name)
            return field.label();
    }
    return name;
}

bool McpQuestionDialog::content(QJsonObject *content)
{
    QJsonObject values;
    for (qsizetype i = 0; i < m_question.fields.size(); ++i) {
        const Field &field = m_question.fields.at(i);
        QWidget *editor = m_editors.at(i);
        QJsonValue value(QJsonValue::Undefined);
        if (auto *line = qobject_cast<QLineEdit *>(editor)) {
            const std::optional<QJsonValue> typed = fieldValueFromText(field, line->text());
            if (!typed) {
                showProblem({McpAnswerProblem::Kind::WrongType, field.name});
                line->setFocus();
                return false;
            }
            value = *typed;
        } else if (auto *box = qobject_cast<QCheckBox *>(editor)) {
            value = box->isChecked();
        } else if (auto *combo = qobject_cast<QComboBox *>(editor)) {
            if (combo->currentData().isValid())
                value = combo->currentData().toString();
        }
        if (!value.isUndefined())
            values.insert(field.name, value);
    }
    const McpAnswerProblem problem = checkAnswer(m_question, withDefaults(m_question, values));
    if (problem.isProblem()) {
        showProblem(problem);
        return false;
    }
    *content = values;
    return true;
}

void McpQuestionDialog::showProblem(const McpAnswerProblem &problem)
{
    using Kind = McpAnswerProblem::Kind;
    const QString field = fieldLabel(problem.field);
    QString text;
    switch (problem.kind) {
    case Kind::None:
        break;
    case Kind::Missing:
        text = tr("\"%1\" needs an answer.").arg(field);
        break;
    case Kind::WrongType:
        text = tr("\"%1\" does not read as what it asks for.").arg(field);
        break;
    case Kind::NotAChoice:
        text = tr("\"%1\" is not one of its choices.").arg(field);
        break;
    case Kind::TooShort:
        text = tr("\"%1\" is too short.").arg(field);
        break;
    case Kind::TooLong:
        text = tr("\"%1\" is too long.").arg(field);
        break;
    case Kind::TooSmall:
        text = tr("\"%1\" is below its smallest value.").arg(field);
        break;
    case Kind::TooLarge:
        text = tr("\"%1\" is above its largest value.").arg(field);
        break;
    case Kind::BadFormat:
        text = tr("\"%1\" is not in the form it asks for.").arg(field);
        break;
    case Kind::Unknown:
        text = tr("The answer has a field the server did not ask for.");
        break;
    }
    m_problem->setText(text);
    m_problem->setVisible(!text.isEmpty());
}

void McpQuestionDialog::answer(McpAnswer action)
{
    if (m_done)
        return;
    QJsonObject values;
    if (action == McpAnswer::Accept && !content(&values))
        return;
    // Only Accept carries what was typed; Decline and Cancel send nothing of it.
    Q_EMIT answered(m_id, action, values);
}

void McpQuestionDialog::withdraw()
{
    m_done = true;
    QDialog::reject();
}

void McpQuestionDialog::reject()
{
    if (m_done) {
        QDialog::reject();
        return;
    }
    answer(McpAnswer::Cancel);
}

} // namespace AgentConsole
