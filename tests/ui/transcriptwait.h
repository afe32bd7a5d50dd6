#pragma once

#include "ui/transcript/transcriptview.h"

#include <QList>
#include <QTest>
#include <QWidget>

namespace AgentConsole::Testing {

// A transcript shows what core reported at the next turns of the event loop: waits until every
// transcript under `root` has shown all of it. False when one had not after `timeoutMs`.
inline bool waitUntilShown(QWidget *root, int timeoutMs = 5000)
{
    const QList<TranscriptView *> transcripts = root->findChildren<TranscriptView *>();
    return QTest::qWaitFor(
        [&] {
            for (const TranscriptView *transcript : transcripts) {
                if (transcript->hasUnshownChanges())
                    return false;
            }
            return true;
        },
        timeoutMs);
}

} // namespace AgentConsole::Testing
