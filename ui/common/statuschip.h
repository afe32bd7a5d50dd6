#pragma once

#include "consolepalette.h"

#include <QWidget>

#include <optional>

namespace AgentConsole {

// A small pill with a status word ("OK", "Timed out", "Running…"). The word carries the
// meaning; the tone's colour only helps the eye.
class StatusChip final : public QWidget
{
    Q_OBJECT

public:
    explicit StatusChip(QWidget *parent = nullptr);

    void setStatus(const QString &text, Tone tone);
    QString text() const { return m_text; }
    Tone tone() const { return m_tone; }

    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

protected:
    void paintEvent(QPaintEvent *event) override;
    void changeEvent(QEvent *event) override;

private:
    QFont chipFont() const;

    QString m_text;
    Tone m_tone = Tone::Neutral;
    mutable std::optional<QSize> m_hint;
};

} // namespace AgentConsole
