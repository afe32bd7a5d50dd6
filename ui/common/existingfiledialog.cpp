#include "existingfiledialog.h"

#include <QFileDialog>

namespace AgentConsole {

QFileDialog *openExistingFileDialog(QWidget *parent, const QString &title,
                                    const QString &directory, const QString &nameFilter)
{
    auto *dialog = new QFileDialog(parent, title, directory, nameFilter);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    dialog->setAcceptMode(QFileDialog::AcceptOpen);
    dialog->setFileMode(QFileDialog::ExistingFile);
    dialog->open();
    return dialog;
}

} // namespace AgentConsole
