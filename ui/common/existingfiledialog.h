#pragma once

class QFileDialog;
class QString;
class QWidget;

namespace AgentConsole {

// Asks for an existing file without an event loop of its own: the dialog is opened (modal to
// `parent`'s window), never exec()'d, and deletes itself when closed. The caller connects
// QFileDialog::fileSelected to what reads the file. `nameFilter` as QFileDialog takes it.
QFileDialog *openExistingFileDialog(QWidget *parent, const QString &title,
                                    const QString &directory, const QString &nameFilter);

} // namespace AgentConsole
