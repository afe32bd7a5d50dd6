#pragma once

#include <QObject>
#include <QPointer>

class QFocusFrame;
class QWidget;

namespace AgentConsole {

// A two-pixel ring in the palette's highlight around whatever the keyboard moved the focus to,
// in every window of the application. Fusion marks a focused button with a one-pixel tint that
// is hard to find in the dark palette and invisible on a flat tool button; a ring drawn outside
// the widget reads the same on any of them. Shown only after Tab, Shift+Tab or a shortcut
// and until the next mouse press, as styles do: a click does not draw it.
// A widget that draws a focus ring of its own (a tool-call card) sets the property
// kOwnFocusRing and is left alone.
class KeyboardFocusRing final : public QObject
{
public:
    // The application's one ring (a child of qApp), made at the first call: every window
    // that wants rings calls it, however many there are.
    static KeyboardFocusRing *forApplication();

    static constexpr const char kOwnFocusRing[] = "agentConsoleOwnFocusRing";

    // The widget the ring is drawn around now, if any (for tests).
    QWidget *ringedWidget() const;

protected:
    bool eventFilter(QObject *watched, QEvent *event) override;

private:
    KeyboardFocusRing();
    void follow(QWidget *now);

    bool m_keyboardMode = false;

    QPointer<QFocusFrame> m_ring; // lives beside the ringed widget, so can go with its parent
};

} // namespace AgentConsole
