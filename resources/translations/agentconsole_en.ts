<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="en">
<context>
    <name>AgentConsole::AgentRuntime</name>
    <message>
        <source>the support-sim faults apply only when the backend is REST (support-sim); they were not sent</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>MCP configuration: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>the console is not ready yet</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>wait until the running question is answered</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>another Agent Console process (pid %1) still holds the data directory</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>no such tool: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>not a tool policy: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The team&apos;s policy (version %1) does not allow the MCP server &quot;%2&quot;</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>AgentConsole::AttemptTimeline</name>
    <message>
        <source>Attempt timeline of %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Attempt %1: %2
Started %3 after the call began; it ran %4 of its %5 timeout</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 not made: %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Attempt %1: %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>timeout of %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Attempt %1&apos;s timeout: %2 after it started</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Retry-After %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>backoff %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Waited %1 before attempt %2, as the server asked (Retry-After), in place of the policy&apos;s backoff</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Backoff of %1 before attempt %2 (the retry policy&apos;s delay)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 running…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Attempt %1: running for %2 so far (it times out at %3)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Attempt %1 times out %2 after it started</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>worst case %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The policy&apos;s worst case: %1 (every attempt times out, every backoff at its longest); the call ends by then</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>turn deadline %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>turn deadline %1 →</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The turn&apos;s deadline: %1 after this call started; the whole question must be answered by then</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Attempt %1 %2.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Attempt %1 is running.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Waiting before the next attempt.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Each attempt times out after %1.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Worst case %1.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Turn deadline %1 after the call started.</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>AgentConsole::AuditTrailDock</name>
    <message>
        <source>Confirmed</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Started (needs no confirmation)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Outcome</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Settled later</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The write ran</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Answered by the ledger, not run again</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The request was stopped</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The interrupted request was dismissed</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Learned when the request was resumed</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Learned when the request was asked again</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1: %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Succeeded</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Succeeded: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Succeeded: %1 %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Not done: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Unknown: check before writing again</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Operation %1
Conversation %2, request %3
Tenant %4</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>When</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Agent</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Event</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Tool</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Arguments</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>How it was learned</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Audit trail</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Order, e.g. A1001</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Show the writes about this order</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Agent (staff id)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Show the writes this agent confirmed</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Day</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Only the rows of one day, in this computer&apos;s time</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Refresh</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Audit trail of writes</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Show older</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The audit trail is shown once the console is ready.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Reading the audit trail…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>This console&apos;s ledger keeps no audit trail.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The audit trail could not be read; the local log says why.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No write matches these filters.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No write has been confirmed yet.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Rows shown: the newest %1. Narrow the filters to see older ones.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Rows shown: %1, newest first</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>AgentConsole::BoundedFile</name>
    <message>
        <source>%1 MiB</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 bytes</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1: %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>cannot open it (%1)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>cannot read it (%1)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>not a regular file</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>larger than %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>unterminated object</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>missing name separator</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>unterminated array</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>missing value separator</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>illegal value</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>invalid termination by number</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>illegal number</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>invalid escape sequence</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>invalid UTF8 string</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>unterminated string</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>object is missing after a comma</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>too deeply nested document</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>too large document</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>garbage at the end of the document</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No such file or directory</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Permission denied</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Is a directory</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>AgentConsole::CaseNote</name>
    <message>
        <source>“%1”</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>“%1” (%2)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1: not run, the request ended first.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1: not run, nobody could be asked to confirm it.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1: not made, the earlier %2 was kept.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 failed.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1: %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>answered</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Request %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Question: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 (made earlier)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Nothing was looked up.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Found:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Could not be looked up:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Not done:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The request did not finish: no answer was given.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The request was cancelled before it was answered.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Case note, %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No request of the staff member&apos;s own to note.</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>%n scenario run turn(s) left out: not the customer&apos;s conversation.</source>
        <translation>
            <numerusform>%n scenario run turn left out: not the customer&apos;s conversation.</numerusform>
            <numerusform>%n scenario run turns left out: not the customer&apos;s conversation.</numerusform>
        </translation>
    </message>
    <message>
        <source>Conversation</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Made</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>AgentConsole::ConfirmationPanel</name>
    <message>
        <source>Nothing is done until you confirm. Check these details with the customer first.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Decline</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Do not run it; the agent is told it was declined</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Confirm</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Run it with exactly these details</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1: %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Confirmed; waiting for it to start…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Declining…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Confirmed; running…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Declined: it was not run.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Confirmed with these details.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Not run: the turn was cancelled before an answer.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Not run: the turn ended before an answer.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Not run: nobody could be asked to confirm it.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Make nothing new; the agent is told which one you kept</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Keeping %1…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Not run: you kept %1 instead.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Open %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Keep %1 and make nothing new</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Create another anyway</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Create another anyway: %1</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>AgentConsole::ConnectionSettingsDialog</name>
    <message>
        <source>Model and backend</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Model</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Offline demo model (no key, no network)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>OpenAI-compatible server</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Choose a preset…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Test connection</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Sends one short request (one token) to the server with these settings and says what came back.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Stream answers as they are written</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>When the provider fails, answer with the offline model</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Pre&amp;set</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Base URL</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Model</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>API key &amp;variable</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>API &amp;key</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Tool backend</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Embedded demo store</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>REST backend</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>sqlite (in the data directory)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The idempotency ledger: sqlite, or postgresql://user@host:port/db to share one across a team (no password here: PGPASSWORD or ~/.pgpass). Applies at the next start.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Base &amp;URL</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Ledger (next start)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Interface</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Follow the system</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Lan&amp;guage</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Testing…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>key from %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>key typed here</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>key from the keychain</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>no key</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Connected: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>from %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 is set and wins over the keychain (the key itself is never shown or logged)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>stored in the keychain; type to replace it</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 is not set: the key stored in the OS keychain is used</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>kept in the OS keychain</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 is not set and no key is stored: only a local server without a key will answer</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>the keychain is not available</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 is not set; asking the keychain…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The key was not stored</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Ledger: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>These settings cannot be applied yet</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Ollama (local)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>How much of the conversation each request carries: the system prompt and the current question always, earlier turns while they fit. The footer says when turns were left out.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Conversation &amp;budget</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Provider default (%L1 characters)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source> characters</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>LM Studio (local)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>vLLM</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>llama.cpp server</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Custom</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Not connected: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>not needed</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 needs no key: leave this empty</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 is not set and the OS keychain cannot be reached: only a local server without a key will answer</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The OS keychain could not keep it (the local log says why). The settings were not applied.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>none: this desk alone</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>A team&apos;s PostgreSQL database, postgresql://user@host:port/db: it holds the ledger, your conversations and the audit trail, which then follow you to any desk (docs/TEAM.md). No password here: the keychain, ~/.pgpass or a service file. Applies at the next start.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Team database (next start)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Team database: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Team database: it holds the ledger too; leave the ledger empty</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>AgentConsole::ConsoleSettings</name>
    <message>
        <source>%1 %2</source>
        <comment>a setting&apos;s name, then what is wrong with it</comment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>expected %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source> or </source>
        <comment>between the accepted values</comment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>expected one line of text</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>longer than %1 characters</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>larger than %1 KiB</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1: %2; the default is used</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>is not a postgresql://user@host:port/db address</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>carries a password, which is never stored; use PGPASSWORD or ~/.pgpass instead</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>expected sqlite, sqlite:FILE or postgresql://user@host:port/db</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>the settings file %1 %2: it is kept as it is, the defaults are used and nothing is saved this session</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>is not a regular file</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>cannot be read</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>is larger than 1 MiB</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>is not an INI file</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>the settings file %1 could not be read at start and is kept as it is</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>the settings file %1 is no longer a settings file</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>the settings file %1 can no longer be read</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>the settings file %1 could not be written</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Ledger: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Language: expected %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>more than %1 entries</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>expected &lt;server&gt;/&lt;tool&gt;</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>MCP tool policies: not a policy: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>expected a number of characters from %1 to %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>the settings file %1 went bad during this session and is kept as it is</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Team database: %1</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>AgentConsole::ConsoleShell</name>
    <message>
        <source>The new language is used from the next start (a request is under way).</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>AgentConsole::ConsoleWindow</name>
    <message>
        <source>%1 s</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 ms</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Conversation</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Question</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Send</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Send the question (Enter)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Stop the running turn and its tools (Esc)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Conversation</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;New conversation</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>Exported %n turn(s) to %1</source>
        <translation>
            <numerusform>Exported %n turn to %1</numerusform>
            <numerusform>Exported %n turns to %1</numerusform>
        </translation>
    </message>
    <message>
        <source>&amp;Quit</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Settings</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Model and &amp;backend…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Preparing the store…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The demo store is being opened and checked; you can type your question meanwhile.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Model: —</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Diagnostics</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;View</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;History</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The agent loop is missing.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The console could not start</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No reason was given; see the local log.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The question is too long</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>A question can have at most %1 characters; this one has %2. Nothing was sent, and your text is still in the box.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cancelling…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The agent loop would not carry it on: its checkpoint is no longer resumable. The record stays in the journal. First: “%1”</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Model: %1 (offline fallback)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Model: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Answers come from %1; when it fails, the offline demo model answers instead.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Circuit open: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Half-open: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source> (+%1 more)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Circuit open for %1: calls to it fail fast; it is retried after the %2 cool-down.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Half-open for %1: a few trial calls are let through; it closes again once they succeed.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The settings were not applied</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>F&amp;aults</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Fault panel</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Ctrl+Shift+F</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Retry policies</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Ctrl+Shift+P</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Clear all faults</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Reset all retry &amp;policies</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Sce&amp;narios</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Scenarios &amp;panel</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Ctrl+Shift+S</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Open scenario file…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>SCENARIO: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>FAULTS ACTIVE</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>CUSTOM RETRY POLICY</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 — %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Faults in force: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 (%2): %3</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Faults menu: the fault panel, the retry policies, Clear all faults.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The settings apply now but were not saved</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The new ledger is used from the next start.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Some stored settings were not used</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>%n interrupted request(s) cannot be resumed</source>
        <translation>
            <numerusform>%n interrupted request cannot be resumed</numerusform>
            <numerusform>%n interrupted requests cannot be resumed</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n interrupted request(s) not this session&apos;s</source>
        <translation>
            <numerusform>%n interrupted request is not this session&apos;s</numerusform>
            <numerusform>%n interrupted requests are not this session&apos;s</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n interrupted request(s) could not be resumed</source>
        <translation>
            <numerusform>%n interrupted request could not be resumed</numerusform>
            <numerusform>%n interrupted requests could not be resumed</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n fault(s)</source>
        <translation>
            <numerusform>%n fault</numerusform>
            <numerusform>%n faults</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n custom policy(s)</source>
        <translation>
            <numerusform>%n custom policy</numerusform>
            <numerusform>%n custom policies</numerusform>
        </translation>
    </message>
    <message>
        <source>The new language is used from the next start.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;MCP servers</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>MCP &amp;tool policies…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The MCP tool policies apply now but were not saved</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>MCP tool policies applied; they hold from each tool&apos;s next call.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;MCP servers (mcp.json)…</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>mcp.json saved (%n secret(s) moved to the keychain). The MCP servers change when the console restarts.</source>
        <translation>
            <numerusform>mcp.json saved (%n secret moved to the keychain). The MCP servers change when the console restarts.</numerusform>
            <numerusform>mcp.json saved (%n secrets moved to the keychain). The MCP servers change when the console restarts.</numerusform>
        </translation>
    </message>
    <message>
        <source>%1 asks you a question</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>A question was withdrawn: its tool call ended before an answer</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>A question was taken back by its server</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Writing the export to %1…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Reading %1…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Scenario run: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>It runs in a conversation of its own; yours comes back when it ends.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Scenario run finished: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Its turns are in History, marked “Scenario run”; the Scenarios panel has its verdict.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Confirm the waiting action</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Ctrl+Shift+Y</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Decline the waiting action</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Ctrl+Shift+N</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Ctrl+E</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Ctrl+,</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Ctrl+Shift+D</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Ctrl+Shift+H</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Search conversations</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>S&amp;taff layout</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Ctrl+Shift+1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;QA layout</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Ctrl+Shift+2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Ctrl+Shift+M</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 (%2) · %3</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Audit trail</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Ctrl+Shift+A</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Work alone on this desk</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Quit</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The team&apos;s database cannot be reached</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1
You can work alone on this desk: conversations, writes and the audit trail are then kept on this machine only, and every export says so. Start again to rejoin the team.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Working alone</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The team&apos;s database %1 could not be reached at the start: this desk keeps its own conversations, writes and audit trail until the console starts again.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Working alone on this desk</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The team&apos;s database could not be reached at the start. Conversations, writes and the audit trail are kept on this machine only; colleagues do not see them, and exports are marked as made alone. Start again to rejoin the team.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Team</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Conversations, writes and the audit trail are kept on the team&apos;s database %1: they follow you to any desk.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The team database is used from the next start.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Locked: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>, </source>
        <comment>between names</comment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Team policy %1</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>AgentConsole::ConversationExport</name>
    <message>
        <source>&quot;%1&quot; is missing</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&quot;%1&quot; has the wrong type</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>cannot export to %1: %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>name it .json or .md</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>it is a directory</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>not a conversation export: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>larger than %1 bytes</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 at offset %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>it is not a JSON object</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&quot;format&quot; is not &quot;%1&quot;</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>version %1 is not %2 (written by another console?)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>unknown field &quot;%1&quot;</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&quot;turns&quot; is missing or not an array</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&quot;exportedAt&quot; is not an ISO 8601 time</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>more than %1 turns</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>turns[%1] is not an object</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>turns[%1].%2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1: %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>it would be %1 MiB, more than the %2 MiB an export is opened from: export fewer turns, or as Markdown</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&quot;audit&quot; is not {&quot;rows&quot;: [...], &quot;complete&quot;: true|false}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>more than %1 audit rows</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>audit.rows[%1]: %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&quot;teamPolicy&quot; is neither &quot;none&quot; nor {&quot;version&quot;, &quot;origin&quot;}</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>AgentConsole::ConversationExporter</name>
    <message>
        <source>&amp;Export conversation…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Save this conversation&apos;s finished turns as JSON or as a Markdown bug report; keys are redacted.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Export this &amp;turn…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Save the latest finished turn (or right-click a turn in the transcript).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Open export…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>There is no finished turn to export yet.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>That turn has not finished, or is not in this conversation.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Export conversation</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Export this turn</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The export was not written</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Open export</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The export could not be opened</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Export this turn…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Export e&amp;very conversation…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Save every turn finished since the console started or the conversation was switched, whichever conversation it was in (resumed turns, scenario runs).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>JSON export, opens again here (*.json)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Markdown bug report (*.md)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Case note (*.md)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Case note, plain text (*.txt)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>JSON exports, the only kind Open export… opens (*.json)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Copy as &amp;case note</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Copy a short summary of this conversation for a ticket: per question, what was found, what could not be looked up and the tickets made.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Save the same summary as a file.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>View a conversation exported as JSON, read-only. The Markdown bug report and the case note are for reading elsewhere.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The case note was not written</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>There is no finished question of your own in this conversation yet.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Nothing was copied</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>Copied the case note of %n question(s)</source>
        <translation>
            <numerusform>Copied the case note of %n question</numerusform>
            <numerusform>Copied the case note of %n questions</numerusform>
        </translation>
    </message>
    <message>
        <source>Open export… opens JSON exports</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 is a Markdown file (a bug report or a case note), written to be read in any editor. It keeps too little of the conversation to be shown here again.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>To see a conversation here, export it as JSON (Conversation › Export conversation…, JSON) and open that file.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Its JSON export is beside it: %1.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Open the JSON export</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Export case note</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Open export (JSON)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Export c&amp;ase note…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Include the a&amp;udit trail in exports</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Exports also carry who confirmed each write of their turns, when, and how it ended, as the audit trail keeps it.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The audit trail could not be read, so the export that was to carry it was not written; the local log says why.</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>AgentConsole::ConversationHistory</name>
    <message>
        <source>The conversation could not be deleted; it is still stored. See the local log.</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>AgentConsole::DiagnosticsDock</name>
    <message>
        <source>Diagnostics</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Circuit breakers</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>None yet: each dependency gets its breaker at its first call.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Counters</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Last turn and in total, over every turn in this data directory.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Last turn</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Total</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Tool latency</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No tool has been called yet.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Setup</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Store: preparing…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Store: not available</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Model calls retried</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Tool calls retried</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Interrupted turns resumed</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Writes answered from the ledger, not repeated</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Same key with other details, refused</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Writes whose outcome is unknown</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Circuit breakers opened</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Answers from a fallback model</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Operations owning more than one ticket</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>not checked yet</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Backend: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Store: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Tool retry: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source> (own policy: %1)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The retry policy of every tool call: attempts × per-attempt timeout, backoff, and the longest one call can take.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Faults: none</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Reset</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Close this breaker now and forget its recorded calls</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Reset the breaker of %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Closed</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Half-open</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Open</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>just now</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 s ago</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 min ago</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 h ago</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 of %2 failed</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>trial calls</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>—</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The last %1 calls are judged; once at least %2 are in, a failure rate of %3 % or more opens the breaker.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>probing</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>over: the next call probes</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 left of %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>none yet</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 → %2, %3</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Isolations</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>AgentConsole::DuplicateTicketAlert</name>
    <message>
        <source>A write was stored as several tickets. Tell whoever runs the ticket backend; this alert stays until the duplicates are gone.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Every write the agent plans gets one operationId, its idempotency key, which is sent to the backend so that a replayed write returns the ticket it already made. The last check found %1 key(s) with more than one ticket: the backend did not deduplicate them. The console checks at start and after every turn that wrote.</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>%n operation(s) own more than one ticket — check the backend</source>
        <translation>
            <numerusform>%n operation owns more than one ticket — check the backend</numerusform>
            <numerusform>%n operations own more than one ticket — check the backend</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>AgentConsole::ExportViewer</name>
    <message>
        <source>%1 — exported conversation (read-only)</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>From %1, exported %2 (UTC); %n turn(s).</source>
        <translation>
            <numerusform>From %1, exported %2 (UTC); %n turn.</numerusform>
            <numerusform>From %1, exported %2 (UTC); %n turns.</numerusform>
        </translation>
    </message>
    <message>
        <source>Agent Console %1 · Qt %2 · %3 · model %4 (%5) · backend %6</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Faults active then: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No faults were active.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Read-only: an exported conversation</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Copy as case note</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Copy a short summary of these turns for a ticket: per question, what was found, what could not be looked up and the tickets made.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Copied</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>AgentConsole::FaultPanel</name>
    <message>
        <source>Added delay</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Every attempt waits this long before it runs.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Hangs (never answers)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Every attempt waits until it times out or is cancelled.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Fails the first attempts</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The first N attempts of every call fail with a temporary error; the ones after answer.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Rejects every request</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The backend refuses every attempt; retrying does not help.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Rejected with HTTP status</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The HTTP status the rejection stands for.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Access denied</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Every attempt is refused for lack of permission (401/403).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Finds nothing</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Every call answers “not found”.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Fails at random</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Each attempt fails with this probability, drawn from the seed below: the same plan fails the same attempts in every run.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Commits, then loses the answer</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The write is done, then its answer is lost: only the status query by idempotency key can tell what happened.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Internal error (crash)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The tool itself fails with an internal error and an incident id.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Every model call waits this long first.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Unavailable</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Every model call fails as if the provider were down.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Rate-limited attempts</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The first N attempts of every model call answer 429 Too Many Requests.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Retry-After asked for</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The wait the 429 answers ask for.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Quota exhausted</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The provider refuses every call: the account&apos;s quota is used up.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Malformed response</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Every response is not what the API promises.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Stream stalls</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>A streamed answer stops halfway and sends nothing more.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Tool arguments not JSON</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Every response that calls tools gives them arguments that cannot be read.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Calls an unknown tool</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Every response that calls tools names one the console does not have.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Repeats a tool call</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>A response that calls tools repeats its first call to N calls; over the per-message limit the extra calls are not run.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Faults</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Load fault file…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Put a fault plan from a file in force (resources/faults)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Clear all faults</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Every tool and the model behave normally again, from the next attempt</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Reset policies</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Every tool gets the default retry policy again</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>What to break</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;What to break:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Random failures are drawn from this seed: the same seed fails the same attempts in every run.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Seed for random failures:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>support-sim faults (REST backend)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>support-sim faults, as JSON</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The body of support-sim&apos;s PUT /sim/faults, e.g. {&quot;routes&quot;: {&quot;logistics&quot;: {&quot;status&quot;: 503, &quot;times&quot;: 2}}}. Empty resets the sim&apos;s faults.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{&quot;routes&quot;: {&quot;logistics&quot;: {&quot;status&quot;: 503}}}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Send to support-&amp;sim</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Part of the plan is not in force</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>on</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source> ms</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source> attempts</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>off</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>400 Bad request</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>404 Not found</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>409 Conflict</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>422 Unprocessable</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 (%2)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Backend (every tool without faults of its own)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Model: primary provider</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Model: primary provider (%1)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Model: secondary provider (none configured)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Model: secondary provider</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Model: secondary provider (%1)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Not applied: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Not applied</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Not applied: not a JSON object (%1)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>top level</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No faults</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Custom retry policy: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Custom retry policies: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Load a fault file</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Fault plans (*.json)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The fault file was not loaded</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>%1 — %n fault(s)</source>
        <translation>
            <numerusform>%1 — %n fault</numerusform>
            <numerusform>%1 — %n faults</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n fault(s) active</source>
        <translation>
            <numerusform>%n fault active</numerusform>
            <numerusform>%n faults active</numerusform>
        </translation>
    </message>
    <message>
        <source>A scenario is running; its faults hold until it ends.</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>AgentConsole::FaultPlan</name>
    <message>
        <source>+%1 ms</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>hang</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>internal error</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>first %1 attempts fail</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>rejected</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>rejected (%1)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>access denied</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>not found</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>fails %1%</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>answer lost after the commit</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>none</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>unavailable</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>first %1 attempts rate-limited (retry after %2 ms)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>quota exhausted</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>unreadable answer</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>stream stalls</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>broken tool arguments</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>calls an unknown tool</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>repeats a tool call %1 times</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1: %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>other tools: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>primary model</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>model</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>secondary model: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>expected true or false</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>only for tools that write (%1)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>unknown key</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>expected an object</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>no such route (the routes are %1)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>fault plan: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>not valid JSON at offset %1 (%2)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>the top level must be an object</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>expected a string</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>no such tool (the tools are %1)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>the primary is given as models.primary too</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>unknown key (primary or secondary)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>expected a whole number from %1 to %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>expected a number from %1 to %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>expected %1 or %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>, </source>
        <comment>between the values of a list</comment>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>AgentConsole::HistorySidebar</name>
    <message>
        <source>Answered</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Partly answered</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Not answered</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cancelled</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Interrupted</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Failed</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>History</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Search text or order id</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Search conversations</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Stored conversations</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Show older</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Delete…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Delete the selected conversation from this console&apos;s journal</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Open</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No stored conversations yet.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No conversation matches “%1”.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>(no question)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Delete this conversation?</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>“%1” and all its turns are deleted from this console&apos;s journal. This cannot be undone.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Delete</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>%n turn(s)</source>
        <translation>
            <numerusform>%n turn</numerusform>
            <numerusform>%n turns</numerusform>
        </translation>
    </message>
    <message>
        <source>Hide scenario runs</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Leave out the conversations that Scenarios ran</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Scenario run</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>AgentConsole::InterruptedTurnsBanner</name>
    <message>
        <source>Resume</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Carry the interrupted requests on, one at a time, from their last checkpoint</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Dismiss</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Stop offering them; their records are kept</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The console stopped before answering it. Resume carries it on from its last checkpoint: tools that already ran are not run again, and a ticket you had not confirmed asks you again.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The console stopped before answering them. Resume carries them on one at a time from their last checkpoint: tools that already ran are not run again, and a ticket you had not confirmed asks you again.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Resuming interrupted request %1 of %2 — “%3”</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Its answer appears in the conversation below, marked “Resumed”. Cancel stops it and offers the rest again.</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>%n interrupted request(s) can be resumed — “%1”</source>
        <translation>
            <numerusform>%n interrupted request can be resumed — “%1”</numerusform>
            <numerusform>%n interrupted requests can be resumed — “%1”</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>AgentConsole::IsolateDialog</name>
    <message>
        <source>Isolate a dependency</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Every console of the team refuses its calls at once, with your staff id, the time and this reason, until you lift it or it ends.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Dependency:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Required: staff read it on every refused call</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Reason:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Ends at</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Isolate</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>AgentConsole::Isolations</name>
    <message>
        <source>No team database: isolations need --team.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Connecting to the team database…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Team database: connected as %1 (shift lead).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Team database: connected as %1 (staff; only a shift lead can isolate or lift).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The team database cannot be reached; trying again. The isolations read at %1 stay in force.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>never</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Isolated by the shift lead (staff %1) at %2: %3 (until %4)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Isolated by the shift lead (staff %1) at %2: %3</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Isolated</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>not attempted · isolated by the shift lead</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1: %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Only a shift lead can lift an isolation: your database role is not a member of agentconsole_lead.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Done: %1 is restored for every console of the team.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Done: every console of the team now refuses %1.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Isolations need a team database (--team).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Only a shift lead can isolate or lift a dependency: your database role is not a member of agentconsole_lead. Nothing was changed.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 is not a dependency this console knows.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 is not a dependency this console knows. Known: %2.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Give a reason: staff read it on every call the isolation refuses.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The end time has already passed. Nothing was changed.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 is not isolated.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The team database cannot be reached; nothing was changed. Try again.</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>AgentConsole::IsolationsPanel</name>
    <message>
        <source>No dependency is isolated.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Isolate…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Take a dependency offline for every console of the team</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Lift</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Restore %1 for every console of the team</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>AgentConsole::LatencyHistogram</name>
    <message>
        <source>Tool latency</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1: 1 call, %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>%1: %n call(s) took %2</source>
        <translation>
            <numerusform>%1: %n call took %2</numerusform>
            <numerusform>%1: %n calls took %2</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%1: %n call(s), longest %2</source>
        <translation>
            <numerusform>%1: %n call, longest %2</numerusform>
            <numerusform>%1: %n calls, longest %2</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>AgentConsole::Ledger</name>
    <message>
        <source>The ledger spec &apos;sqlite:&apos; names no file.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Unknown ledger; use &apos;sqlite&apos;, &apos;sqlite:/path/file&apos; or postgresql://user:password@host:port/database.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The ledger URL is not valid; expected postgresql://user:password@host:port/database.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The ledger URL has an invalid port.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The ledger URL names no single database.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>PostgreSQL ledger %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>SQLite ledger %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The %1 cannot be used: the Qt Sql driver %2 is missing.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cannot reach the %1.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cannot open the %1.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cannot set up the %1.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The %1 has schema version %2, newer than this Agent Console knows; update the console.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cannot update the schema of the %1.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cannot use the %1.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The %1 refused the sign-in of its user: put the password in the keychain, ~/.pgpass or a PostgreSQL service file (docs/TEAM.md).</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>AgentConsole::ManagedPolicy</name>
    <message>
        <source>%1: %2</source>
        <comment>a field of the policy, then what is wrong</comment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>is missing</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>expected text</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>longer than %1 characters</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>expected one line of text</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>expected an object</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>expected a list of names</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>more than %1 entries</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&quot;%1&quot; is named twice</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>is not a field of a policy</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>expected a whole number</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>expected a number</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>expected none, full or decorrelated</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>larger than 1 MiB</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>not JSON (%1 at character %2)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>expected a JSON object</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>nested deeper than %1 levels</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>version: is empty</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1: more than %2 tools</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1: not a tool&apos;s name</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1: expected an object</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>mcpServers.allowed: is missing</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>locked: &quot;%1&quot; is not a setting a policy can lock (%2)</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>AgentConsole::McpConfig</name>
    <message>
        <source>larger than %1 bytes</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>not JSON: %1 at offset %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>expected an object with an &quot;mcpServers&quot; object</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>more than %1 servers</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>server &quot;%1&quot;: %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>name it with 1 to 32 letters, digits, &apos;_&apos; or &apos;-&apos;</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>expected an object</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>give either &quot;command&quot; (stdio) or &quot;url&quot; (HTTP)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>the old HTTP+SSE transport is not supported; use the server&apos;s Streamable HTTP endpoint</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>unknown &quot;type&quot; (stdio, http or streamable-http)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&quot;command&quot; must be a non-empty string</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&quot;args&quot; must be an array of strings</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>more than %1 args</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&quot;env&quot; must be an object of strings</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>more than %1 env entries</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&quot;env&quot; must map names to strings</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&quot;url&quot; must be an http:// or https:// URL</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&quot;headers&quot; must be an object of strings</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>more than %1 headers</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>header &quot;%1&quot;: a token name and a one-line string value</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1: no such file</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1: not a regular file</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1: larger than %2 bytes</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1: %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&quot;oauth&quot; must be false or an object</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&quot;oauth&quot;: &quot;scopes&quot; must be an array of strings</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&quot;oauth&quot;: &quot;%1&quot; must be a string</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&quot;oauth&quot;: unknown field &quot;%1&quot;</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&quot;oauth&quot;: a &quot;clientSecret&quot; needs its &quot;clientId&quot;</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&quot;hardMaximumMs&quot; must not be shorter than &quot;idleTimeoutMs&quot;</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&quot;%1&quot; must be whole milliseconds from %2 to %3</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>AgentConsole::McpConfigDialog</name>
    <message>
        <source>MCP servers (mcp.json)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The MCP servers the console starts, from %1.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Format, as the desktop clients use it: {&quot;mcpServers&quot;: {&quot;name&quot;: {&quot;command&quot;, &quot;args&quot;, &quot;env&quot;} for a local program, or {&quot;url&quot;, &quot;headers&quot;} for a server over HTTP}}.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Secret values of headers and env (Authorization, …_TOKEN, …_KEY) are moved to the OS keychain when you save; the file keeps ${keychain:…} in their place. Changes apply when the console restarts.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Reading mcp.json…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>mcp.json</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Insert &amp;example</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Puts a stdio server and an HTTP server into the empty editor, to change to your own.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Save</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No mcp.json yet: write one, or insert the example.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>mcp.json cannot be edited here</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1: %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The console refuses this file at start</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Not saved: the file is as it was</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>AgentConsole::McpConfigFile</name>
    <message>
        <source>it is not a regular file</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>it is larger than %1 bytes</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 is not a regular file</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>cannot make the folder %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>header &quot;%1&quot;</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>env &quot;%1&quot;</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>the text is empty; for no servers at all, write {&quot;mcpServers&quot;: {}}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>server &quot;%1&quot;: no keychain is available to keep the secret of %2, and it is not written to the file in plain text</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>server &quot;%1&quot;: the keychain did not take the secret of %2 (%3); it is not written to the file in plain text</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>the file could not be written: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>the OAuth client secret</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>AgentConsole::McpPolicyDialog</name>
    <message>
        <source>MCP tool policies</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Each MCP tool runs as its server&apos;s annotations say, unless you choose otherwise here. Annotations are hints from a server that may not be trusted. Whatever the policy, arguments are validated and every attempt keeps its deadline; the change applies from each tool&apos;s next call.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No tools listed now; a server shows them once it is ready.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>annotations: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>As annotated (%1)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Policy of %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No MCP tool is listed now. A server that is starting or down shows its tools once it is ready.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Not applied: %1</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>AgentConsole::McpQuestionDialog</name>
    <message>
        <source>Question from %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The MCP server &quot;%1&quot; asks:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>name@example.com</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>https://…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>YYYY-MM-DD</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>YYYY-MM-DDThh:mm:ssZ</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>a whole number</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>a number</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 from %2 to %3</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 of at least %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 of at most %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Yes</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Choose…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>(no choice)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 (required)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Accept</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Decline</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Send the answer in the form to %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Tell %1 you will not answer</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Close the question without choosing</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&quot;%1&quot; needs an answer.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&quot;%1&quot; does not read as what it asks for.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&quot;%1&quot; is not one of its choices.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&quot;%1&quot; is too short.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&quot;%1&quot; is too long.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&quot;%1&quot; is below its smallest value.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&quot;%1&quot; is above its largest value.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&quot;%1&quot; is not in the form it asks for.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The answer has a field the server did not ask for.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>It asks during the call of %1, which waits for your answer until its time is up; then the question is withdrawn.</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>%n minute(s) left to answer.</source>
        <translation>
            <numerusform>%n minute left to answer.</numerusform>
            <numerusform>%n minutes left to answer.</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n second(s) left to answer.</source>
        <translation>
            <numerusform>%n second left to answer.</numerusform>
            <numerusform>%n seconds left to answer.</numerusform>
        </translation>
    </message>
    <message>
        <source>The time to answer is up.</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>AgentConsole::McpSecrets</name>
    <message>
        <source>header &quot;%1&quot;</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>env &quot;%1&quot;</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>not JSON: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>server &quot;%1&quot;: %2 cannot name a keychain entry (no spaces, braces or &apos;$&apos;)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>no keychain is available for the secret of %1; the server was not started</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>the secret of %1 is not in the keychain; type it again in Settings › MCP servers</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>the keychain could not be read for the secret of %1; the server was not started</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>the secret of %1 in the keychain is not one line; type it again in Settings › MCP servers</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>the OAuth client secret</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>AgentConsole::McpServersDock</name>
    <message>
        <source>the program exited or the connection closed</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>the program could not be started or the address could not be reached</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>it did not answer in time</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>it refused the console&apos;s requests</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>it refused access: check its credentials</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>it sent messages that are not MCP, or too large</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>it speaks an MCP version this console does not</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>it ended the session</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 s</source>
        <comment>a countdown in whole seconds</comment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Circuit open</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Starting…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Ready</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Down</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Connecting and listing its tools.</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>%n tool(s) offered</source>
        <translation>
            <numerusform>%n tool offered</numerusform>
            <numerusform>%n tools offered</numerusform>
        </translation>
    </message>
    <message>
        <source>Down: %1.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Restarts in %1.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Not restarted again; its tools fail fast until the console starts again.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Its calls failed too often: they fail fast for %1.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>set by staff</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>from annotations (hints)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>from annotations</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Hints, not verified: retried without confirmation</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The arguments are still validated and every attempt keeps its deadline. Staff can change the policy in Settings › MCP tool policies.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Staff chose this policy in Settings › MCP tool policies; the server&apos;s annotations said: %1.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The server&apos;s annotations (its own hints) chose this policy.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>“Hints”: the server&apos;s own annotations, not verified, let these tools be retried without confirmation. Arguments are still validated and every attempt keeps its deadline.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>MCP servers</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The console is starting; its MCP servers follow.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Details are in the local log.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 (%2)</source>
        <comment>a tool&apos;s title, then its name</comment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The model calls it %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No MCP server is configured. To add one, open Settings › MCP servers (mcp.json)…, which writes the mcp.json of the data directory (%1), then start the console again.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>it asks staff to sign in</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Signing in…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Sign-in needed</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Its tools are refused until staff sign in.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The last sign-in was cancelled.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The last sign-in was not finished in time.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The sign-in page declined the console&apos;s request.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The authorization server refused the console: sign in again, or check the server&apos;s client ID in mcp.json.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The authorization server did not answer.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The server&apos;s sign-in cannot be used by the console: its metadata is missing, wrong or not secure.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The server kept refusing new sign-ins; the console stopped asking.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The browser could not be opened.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The keychain did not keep the sign-in.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Sign-in: not asked for so far.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Signed out: the server asks for a sign-in.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Signing in: finish in the browser page that opened.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Signed in; the sign-in is kept in the keychain.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Sign in…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cancel sign-in</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Sign out</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 %2</source>
        <comment>two sentences, one after the other</comment>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>; %n not offered:</source>
        <translation>
            <numerusform>; %n not offered:</numerusform>
            <numerusform>; %n not offered:</numerusform>
        </translation>
    </message>
    <message>
        <source>Its timeouts are limited to %1 s so that the turn can answer.</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>and %n more (see the local log)</source>
        <translation>
            <numerusform>and %n more (see the local log)</numerusform>
            <numerusform>and %n more (see the local log)</numerusform>
        </translation>
    </message>
    <message>
        <source>your team&apos;s policy does not allow it</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Not allowed</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>AgentConsole::NoticeBanner</name>
    <message>
        <source>Close this notice</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>AgentConsole::PolicyEditor</name>
    <message>
        <source>Attempt timeout</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Retries</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>First delay</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Multiplier</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Maximum delay</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Jitter</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Randomises the waits so that many callers do not retry at the same moment.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Retry-After cap</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Retry policies</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Tool</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Tool:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Apply</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The tool uses this policy from its next call</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Reset to &amp;default</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The tool uses the default policy again; edits not applied are dropped</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source> ms</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>None: the waits as computed</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Full: random, up to the computed wait</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Decorrelated: random, grows from the last wait</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Worst case of one call: —</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Shown once every value is in range.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Not applied: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 keeps the policy it has; your value stays in the field until you change it.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Worst case of one call: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>A server&apos;s Retry-After never makes it longer: the call is cut at %1.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The default: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Edited, not applied</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Custom policy</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Default policy</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 — edited, not applied</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 — custom policy</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 keeps the policy it has.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 ms</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 s</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>How long one attempt may take before it is abandoned (%1 to %2).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>How many times a failed attempt is tried again (%1 to %2).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The wait before the first retry (%1 to %2).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Each wait is the one before times this (%1 to %2).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No wait is longer than this (%1 to %2, not below the first delay).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The longest wait a server may ask for with Retry-After (%1 to %2); never more than the maximum delay.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Team policy</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>AgentConsole::PolicySource</name>
    <message>
        <source>the team policy %1 %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>is not a regular file</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>is larger than 1 MiB</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>cannot be read</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>AgentConsole::QuestionInput</name>
    <message>
        <source>Ask about an order, its shipment or stock — Enter sends, Shift+Enter starts a new line</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>AgentConsole::RetryPolicy</name>
    <message>
        <source>maximum delay: not below the first delay</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>attempt timeout: from %1 to %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>retries: from %1 to %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>first delay: from %1 to %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>multiplier: from %1 to %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>maximum delay: from %1 to %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Retry-After cap: from %1 to %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>call deadline: from %1 to %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 h</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 s</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 ms</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>AgentConsole::RuntimeStartup</name>
    <message>
        <source>its pages do not read back</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>restore it from a backup, or move it aside to start afresh (its records are then lost)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 is not a file; remove it or choose another --data-dir</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 is empty although this data directory was in use; %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 cannot be read (%2); give this user access to it</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 is damaged (not an SQLite database); %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 is damaged (%2); %3</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>unknown staff member &apos;%1&apos;</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>staff member &apos;%1&apos; does not belong to tenant &apos;%2&apos;</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>the store has no staff members</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>unknown tenant &apos;%1&apos;</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 is not a file; remove it so that the console can lock its data directory</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>cannot create the lock %1 (%2); make the data directory writable or choose another --data-dir</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>permission denied</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>unknown error</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>another Agent Console process (pid %1) is using the data directory %2; close it or choose another --data-dir</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>the disk holding %1 is full: free space and try again; nothing was lost</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 could not be checked (see the local log); nothing was changed: check the disk and try again</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cannot reach the team&apos;s database %1.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 Start again when it is back, or with --alone-if-unreachable to work alone on this desk&apos;s own store.</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>AgentConsole::Scenario</name>
    <message>
        <source>%1: %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>missing</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>expected a string</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>expected 1 to %1 characters</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>expected a whole number from %1 to %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>expected a number from %1 to %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>expected true or false</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>expected an object</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>expected an array</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>at most %1 entries</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>unknown key</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>no such result code</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>give either attempts or minAttempts/maxAttempts</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>below minAttempts</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>expected answered, partial, unanswered or failed</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>expected completed, failed or cancelled</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>no such counter of a turn</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>use 1 to 64 letters, digits, &apos;-&apos;, &apos;_&apos; or &apos;.&apos;</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>expected approve or decline</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>no such kill point (one of %1, optionally with #n)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>a crash turn takes no cancelAfterMs or withoutStaff</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>only with crashAt</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>a turn that is not resumed has no result to check</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>expected none, full or decorrelated</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>use 1 to 64 lowercase letters, digits and &apos;-&apos;</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>must be the file&apos;s name, %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>expected a result code such as TOOL_TIMEOUT</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>no such tool (the tools are %1)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>at least one turn</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>missing (or a top-level question and expect)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>larger than %1 KiB</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>not valid JSON at offset %1 (%2)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>the top level must be an object</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>scenario: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1: cannot be read, or larger than %2 KiB</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>scenario %1: %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>no scenario named &apos;%1&apos; (agent-cli --list-scenarios lists them; a file needs a &apos;/&apos; or the .json ending)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 after 1 attempt</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 after %2 attempts</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 after at least %2 attempts</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 after at most %2 attempts</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 after %2 to %3 attempts</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>expected the question in Chinese</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>AgentConsole::ScenarioPanel</name>
    <message>
        <source>%1 ms</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 s</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Scenarios</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Scenario (Enter runs it):</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Run</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Sets the scenario&apos;s faults and policies, asks its questions and compares what happens with what it expects</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Open scenario file…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>S&amp;top</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cancels the running turn; the scenario ends as not matched</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Some shipped scenarios cannot be used</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 (file)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Shows: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The scenario did not start</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Running…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No such scenario</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The scenario file was not loaded</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Open a scenario file</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Scenarios (*.json)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Turn %1 of %2: “%3”</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Asking: “%1”</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>✓ As expected</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Every turn ended as the scenario expects, in %1.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>✗ Not as expected</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>What differed (after %1):</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>“%1”</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 before any attempt</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>%1 after %n attempt(s)</source>
        <translation>
            <numerusform>%1 after %n attempt</numerusform>
            <numerusform>%1 after %n attempts</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%1 after at least %n attempt(s)</source>
        <translation>
            <numerusform>%1 after at least %n attempt</numerusform>
            <numerusform>%1 after at least %n attempts</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%1 after at most %n attempt(s)</source>
        <translation>
            <numerusform>%1 after at most %n attempt</numerusform>
            <numerusform>%1 after at most %n attempts</numerusform>
        </translation>
    </message>
    <message>
        <source>%1 after %2 to %3 attempts</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1: %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>finished</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>failed</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>cancelled</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>, </source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Turn %1, call %2 (%3): expected %4, got %5</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Turn %1, call %2: expected %3 to end %4; %5 was called instead and ended %6</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>Turn %1: expected %n tool call(s), got %2</source>
        <translation>
            <numerusform>Turn %1: expected %n tool call, got %2</numerusform>
            <numerusform>Turn %1: expected %n tool calls, got %2</numerusform>
        </translation>
    </message>
    <message>
        <source> (also %1)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>; </source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Turn %1: expected it to end “%2”; it ended “%3”</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Turn %1: expected it to be %2; it was %3</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Turn %1 took %2; the scenario allows at most %3</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Turn %1, “%2”: expected %3, got %4</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>Turn %1: expected %n ticket(s), got %2</source>
        <translation>
            <numerusform>Turn %1: expected %n ticket, got %2</numerusform>
            <numerusform>Turn %1: expected %n tickets, got %2</numerusform>
        </translation>
    </message>
    <message>
        <source>Turn %1 could not run to its end: %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>The backend now holds %n request(s) with more than one ticket</source>
        <translation>
            <numerusform>The backend now holds %n request with more than one ticket</numerusform>
            <numerusform>The backend now holds %n requests with more than one ticket</numerusform>
        </translation>
    </message>
    <message>
        <source>The run was stopped before its end</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>For testers, as the scenario file spells them:
%1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The faults, retry policies, circuit breakers and model fallback chain in force before the scenario were put back, and your conversation carries on where it was.</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>AgentConsole::ScenarioRunner</name>
    <message>
        <source>a scenario is running</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>the console is not ready yet</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>wait until the running question is answered</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>the data directory is lent to another process</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>the scenario has no turns</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>policies.%1: %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 after %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>turn %1, call %2 %3: expected %4, got %5%6</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>turn %1: expected %2 tool call(s), got %3%4</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source> (also %1)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>turn %1: expected the outcome %2, got %3</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>turn %1: expected the status %2, got %3</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>turn %1: took %2 ms, expected at most %3 ms</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>turn %1: expected %2 = %3, got %4</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>turn %1: expected %2 ticket(s), got %3</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>the agent loop did not take the question</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>turn %1: %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>cannot run the crash: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>not resumed: the run was cancelled</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>the interrupted turn could not be resumed</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>no interrupted turn to resume after the kill at %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>the backend holds %1 idempotency key(s) with more than one ticket (duplicate_business_object_count)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>the run was cancelled</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>a crash turn needs agent-cli, not found at %1</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>AgentConsole::SetAsideTurn</name>
    <message>
        <source>(with an unreadable id)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>interrupted request %1 was saved by another staff member or tenant: it is not resumed here and stays in the journal</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>the checkpoint of interrupted request %1 is damaged and cannot be resumed; it stays in turns.sqlite (details in the local log)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>interrupted request %1 is being carried on at desk %2: only one desk resumes a request</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>AgentConsole::SettingsProblem</name>
    <message>
        <source>API key variable</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>is not the name of an environment variable (letters, digits, _)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Base URL (model)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>is needed for an OpenAI-compatible provider</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>is not an http:// or https:// address</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Model</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Extra header</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>is not written as &quot;Name: value&quot;</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>may not carry the API key: it comes from the API key variable</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Secondary base URL</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Secondary model</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>is needed when a secondary provider is set</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Secondary API key variable</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>is needed when a secondary model is set</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Base URL (backend)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>is needed for a REST backend</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1: %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Conversation budget</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>is not 0 (the provider&apos;s default) or from 2,000 to 4,000,000 characters</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>AgentConsole::ShortcutsDialog</name>
    <message>
        <source>Window</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Keyboard shortcuts</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Command</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Shortcut</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Help</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Keyboard shortcuts</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>AgentConsole::SimFaultControl</name>
    <message>
        <source>support-sim sent an answer too large to read; its faults may not be the ones set</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>support-sim did not answer; its faults were not changed</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>support-sim refused the faults; its old faults stay</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>support-sim refused the faults (%1); its old faults stay</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>the REST backend has no fault control: it is not a support-sim</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>support-sim answered HTTP %1 to the faults; they may not be set</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>AgentConsole::StaffWords</name>
    <message>
        <source>Model</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Orders</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Logistics</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Inventory</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Tickets</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>embedded store</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>offline demo</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>primary provider</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>secondary provider</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>%n attempt(s) × %1, backoff %2 ×%3 ≤ %4; worst case %5</source>
        <translation>
            <numerusform>%n attempt × %1, backoff %2 ×%3 ≤ %4; worst case %5</numerusform>
            <numerusform>%n attempts × %1, backoff %2 ×%3 ≤ %4; worst case %5</numerusform>
        </translation>
    </message>
    <message>
        <source>%1 · %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&gt; %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>≤ %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 s</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>%n attempt(s) × %1, backoff %2 ×%3 ≤ %4, jittered; worst case %5</source>
        <translation>
            <numerusform>%n attempt × %1, backoff %2 ×%3 ≤ %4, jittered; worst case %5</numerusform>
            <numerusform>%n attempts × %1, backoff %2 ×%3 ≤ %4, jittered; worst case %5</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n attempt(s) × %1, backoff %2 ×%3 ≤ %4, decorrelated jitter; worst case %5</source>
        <translation>
            <numerusform>%n attempt × %1, backoff %2 ×%3 ≤ %4, decorrelated jitter; worst case %5</numerusform>
            <numerusform>%n attempts × %1, backoff %2 ×%3 ≤ %4, decorrelated jitter; worst case %5</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>AgentConsole::SupportStore</name>
    <message>
        <source>cannot create the data directory %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>cannot open the store %1: %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>the store %1 is not a readable SQLite database</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>the store %1 is damaged (its pages do not read back); restore it from a backup, or move it aside to start with the demo data (its tickets are then lost)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>the store %1 has schema version %2; this build knows %3</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>cannot write the store %1: %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>cannot bring the store %1 from schema version %2 to %3: %4</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>AgentConsole::TeamDatabase</name>
    <message>
        <source>a team&apos;s database is named postgresql://user@host:port/database</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>leave the password out of the address: the console reads it from the keychain, ~/.pgpass or a PostgreSQL service file</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>AgentConsole::TeamPolicy</name>
    <message>
        <source>providerChain.primary.provider: expected %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>providerChain.secondary: goes with a primary provider</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>providerChain.fallback: expected %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>providerChain: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The team policy %1 cannot be used: %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 is locked by your team&apos;s policy (version %2)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The team policy %1 cannot be used with these settings: %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Set by your team&apos;s policy (version %1)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 are locked by your team&apos;s policy (version %2)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No team policy</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Team policy %1 (%2)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The provider</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The provider&apos;s base URL</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The model</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The API key&apos;s variable</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Streaming</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The offline fallback</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The conversation sent to the model</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The secondary provider</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The backend</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The backend&apos;s URL</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The ledger</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The language</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The MCP tool policies</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The tool retry policies</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The MCP servers</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The team database</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>AgentConsole::ToolCallCard</name>
    <message>
        <source>Click to show or hide the attempt timeline</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>(unnamed tool)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Operation %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Incident %1 (details in the local log)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1: %2, %3</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Copy</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Copy this tool call</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Copy the operation id</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Copy the id of what it made</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Copy %1 %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Copied</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Tool %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Worst case %1, turn deadline %2 left when it started</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Worst case %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1: %2, %3, %4</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>AgentConsole::ToolCallText</name>
    <message>
        <source>OK</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Invalid</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Context missing</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Unknown tool</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Timed out</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Unavailable</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Rejected</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Access denied</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cancelled</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Internal error</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Declined</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Conflict</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Outcome unknown</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>In progress</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Not found</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Failed</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Awaiting confirmation</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Running…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Circuit open</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1: %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>no arguments</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 ms</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 s</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>not run yet</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>in progress</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>%n attempt(s) so far</source>
        <translation>
            <numerusform>%n attempt so far</numerusform>
            <numerusform>%n attempts so far</numerusform>
        </translation>
    </message>
    <message>
        <source>not attempted · circuit open</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>not run</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>%n attempt(s)</source>
        <translation>
            <numerusform>%n attempt</numerusform>
            <numerusform>%n attempts</numerusform>
        </translation>
    </message>
    <message>
        <source>answered in %1, nothing matched</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>ended after %1 with its outcome unknown (it may have been done)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>answered in %1: already in progress, not run again</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>refused after %1: same key used with other arguments</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>declined by the staff member</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>arguments refused after %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>refused after %1: session context missing</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>answered in %1 without a result (%2)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>not made: the deadline passed during the backoff, at %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>not made: cancelled during the backoff, at %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>stopped at the deadline after %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>cancelled after %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>succeeded in %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>failed (transient) after %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>timed out after %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>rejected by the backend after %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>access denied after %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>internal error after %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>not attempted: circuit open (the service is known to be down), cool-down %1 left</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>not attempted: circuit half-open (a trial call is testing the service)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>not attempted: the service is known to be down (circuit open)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>, waited %1 ms as the server asked (Retry-After)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>, backoff %1 ms</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>circuit open</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>failed</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Waiting for the staff member to confirm; nothing has run</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>#%1 after backoff…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>#%1 running…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Not attempted: circuit open (the service is known to be down); cool-down %1 left</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Not attempted: circuit half-open (a trial call is testing the service)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Not attempted: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Confirm: run %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Confirm</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Arguments</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>ok</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>timeout</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>rejected</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>denied</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>error</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>cancelled</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>deadline</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>read</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>idempotent write</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>confirm first</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Policy set by staff: %1 (annotations said: %2)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Policy from the server&apos;s annotations (hints, not verified): %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Whatever the policy, the arguments are validated and every attempt keeps its deadline. Staff can change it in Settings › MCP tool policies.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Annotations are hints from the server, which may not be trusted: they let this tool be retried without staff confirming it.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Sign-in needed</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>sign-in</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Waiting for your answer to the question from %1 (the call&apos;s time keeps running)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 asked a question: answered</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 asked a question: declined</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 asked a question: dismissed</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 asked a question: withdrawn, the call ended before an answer</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>refused after %1: its server needs a sign-in</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Not confirmed</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>just now</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>%n min ago</source>
        <translation>
            <numerusform>%n min ago</numerusform>
            <numerusform>%n min ago</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n h ago</source>
        <translation>
            <numerusform>%n h ago</numerusform>
            <numerusform>%n h ago</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n day(s) ago</source>
        <translation>
            <numerusform>%n day ago</numerusform>
            <numerusform>%n days ago</numerusform>
        </translation>
    </message>
    <message>
        <source>Earlier ones</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>by you</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1, by you</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>by %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1, by %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1: checking…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1: none</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 could not be checked (%2). The console&apos;s own record is below.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 could not be checked (%2).</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>and %n more</source>
        <translation>
            <numerusform>and %n more</numerusform>
            <numerusform>and %n more</numerusform>
        </translation>
    </message>
    <message>
        <source>from the console&apos;s record</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 already has %3 (“%2”)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>, created %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 (%2)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Not run (too many at once)</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>AgentConsole::TranscriptView</name>
    <message numerus="yes">
        <source>%n attempt(s)</source>
        <translation>
            <numerusform>%n attempt</numerusform>
            <numerusform>%n attempts</numerusform>
        </translation>
    </message>
    <message>
        <source>model: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>fallback ×%1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>tools: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>stopped before looking anything up</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>stopped while looking things up</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>stopped after looking things up, before answering</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>stopped while writing the answer</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>could not write the answer</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Agent</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Looking this up…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The model&apos;s thinking</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Resumed: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The console %1. The request was carried on from there (restart %2); lookups whose results were kept did not run again, and no ticket was sent twice.</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>%n lookup(s) not run: too many asked for at once</source>
        <translation>
            <numerusform>%n lookup not run: too many asked for at once</numerusform>
            <numerusform>%n lookups not run: too many asked for at once</numerusform>
        </translation>
    </message>
    <message>
        <source>Waiting for your confirmation below…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The turn was cancelled before an answer was written.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No answer could be written for this question.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Answer cut off</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The model stopped at its output limit: what it wrote is shown as it came, and the rest is missing.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Agent · %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Answered</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Partly answered</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Declined by the model</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Not answered</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cancelled</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Failed</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>%n tool call(s)</source>
        <translation>
            <numerusform>%n tool call</numerusform>
            <numerusform>%n tool calls</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n tool round(s)</source>
        <translation>
            <numerusform>%n tool round</numerusform>
            <numerusform>%n tool rounds</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>resumed %n time(s)</source>
        <translation>
            <numerusform>resumed once</numerusform>
            <numerusform>resumed %n times</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n circuit(s) opened</source>
        <translation>
            <numerusform>%n circuit opened</numerusform>
            <numerusform>%n circuits opened</numerusform>
        </translation>
    </message>
    <message>
        <source>incident %1 (details in the local log)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Attempts per layer, retries included. A fallback means the model asked first failed and the next one in the chain answered.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Copy</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Copy the answer</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Looking this up: attempt %1 of %2…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Looking this up: attempt %1…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Answering with the fallback model %1: attempt %2 of %3…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Answering with the fallback model %1…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The model is retrying: attempt %1 of %2…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 (%2)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Copy answer</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Copy as Markdown</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>, </source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Not offered: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>These MCP servers were not ready when the question was asked, so the model was not offered their tools: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>%n earlier turn(s) not sent to the model</source>
        <translation>
            <numerusform>%n earlier turn not sent to the model</numerusform>
            <numerusform>%n earlier turns not sent to the model</numerusform>
        </translation>
    </message>
    <message>
        <source>Scenario run: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Interrupted — Resume or Dismiss it in the banner above</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Ask about an order, its shipment or stock, or try one of these. Each tool the agent uses appears as a card under its answer; click a card to see every attempt.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Where is order A1001 and is SKU-200 in stock?</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Where is order A1004 right now?</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Create an after-sales ticket for order A1001: the mug arrived broken</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Try again: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>; </source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Try again</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>AgentConsole::TurnJournal</name>
    <message>
        <source>cannot open the turn journal %1; if it is damaged, restore it from a backup or move it aside (its interrupted turns are then lost)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>the turn journal %1 has schema version %2, newer than this Agent Console knows (%3): update the console; the file was left as it is</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>cannot reach the team database %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>the turn journal in the team database %1 has schema version %2, newer than this Agent Console knows (%3): update the console; the database was left as it is</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>cannot update the turn journal in the team database %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>cannot read the team&apos;s members in %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>the database role %1 is not in the team&apos;s members: a database administrator adds it to team_members (docs/TEAM.md)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>the database role %1 belongs to %2, not to %3: sign in with your own role</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>FaultPlans</name>
    <message>
        <source>The logistics service hangs: every attempt times out; other tools still answer.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The logistics service fails twice per call, then answers: retries win.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Every tool is slow and fails a third of its attempts, reproducibly.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The primary model&apos;s quota is spent: it is never retried, it is taken out of the chain, and the next model (the offline demo model, with --fallback offline) answers. Works with no network: the faulted offline model stands in for the provider.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The primary model answers 429 to the first two attempts of every call, with Retry-After: 1 s; the model layer waits and retries, and the third attempt answers (model_retry_count 2 per call).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>With --backend http and support-sim: the sim&apos;s logistics route answers 503 with Retry-After: 1 to its next two requests, then heals; the console&apos;s retries win.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The embedded store commits every ticket, then its answer is lost: the status query by idempotency key finds the one ticket, and no second one is made.</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>Scenarios</name>
    <message>
        <source>Access denied</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Everything answers</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The whole backend down</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Bad key (provider refuses)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The model provider refuses every call, as with a wrong API key: the offline default has no key to get wrong, so the plan&apos;s model fault &apos;unavailable&apos; stands for the refusal; nothing is retried and the next model in the chain (the un-faulted offline model) answers instead.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cancelled by staff</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The logistics lookup hangs and the staff member cancels the turn after 500 ms: the running attempt is cancelled and the turn ends cancelled, not as a timeout.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No staff member in the session</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>A crash between two lookups, then resume</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>A child agent-cli is killed right after the first of two lookup results was checkpointed; the console resumes the turn from its checkpoint and it is answered, the stored result kept rather than looked up again.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>A crash during a write, then resume</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>A child agent-cli on the same data directory is killed right after the store committed the ticket, before its answer came back; the console then resumes the turn, recovers the write through the ledger and the backend, and exactly one ticket exists.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Declined confirmation</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Down, and the breaker opens</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Flaky, then OK on attempt 3</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>A bug in a tool</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Malformed order number</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Malformed tool arguments</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Rate-limited model with Retry-After</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The model answers 429 with Retry-After 300 ms to the first two attempts of every call: the model layer waits as told and retries, each retry counted, and the turn is answered.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Not found</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>An order that does not exist, an order not shipped yet and an unknown SKU: each is answered &quot;not found&quot; at once, never retried, and the turn still counts as answered.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>A write still in progress</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Quota exhausted, falls back</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The model&apos;s quota is exhausted: the error is final, never retried, and the provider is taken out of the chain; the next model in the chain (the un-faulted offline model, with no key and no network) plans and answers both model calls, so the turn is still answered.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Rejected by the backend</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Same key, other details</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Slow past the timeout</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Ticket answer lost, status query settles it</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Ticket write flaky, then OK</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Too many calls in one message</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Unknown tool</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Write outcome unknown</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The order-status backend refuses like a 401/403: the lookup is denied on its first attempt and never retried, while the logistics lookup answers.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Two lookups in one question, no faults: both answer on the first attempt and the turn is answered.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The plan&apos;s backend entry makes every tool without an entry of its own fail like a 503: both lookups are still unavailable after three attempts and the answer says plainly that nothing could be looked up, without guessing.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The question is asked with no user and no tenant in the trusted session: the lookup is refused before any attempt for want of the staff member&apos;s context, since identity never comes from the model.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The staff member declines the after-sales ticket shown for confirmation: nothing is sent, the call ends declined and no ticket exists.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The logistics backend is down (every attempt fails like a 503): three calls are still unavailable after three attempts each, the logistics breaker opens on the tenth failure and the next call fails fast without an attempt, while the stock lookup, behind its own breaker, keeps answering.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The logistics lookup fails like a 503 twice, then answers: the executor retries with backoff and the call succeeds on its third attempt.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The stock lookup&apos;s body throws: the executor catches it once and reports an internal error without retrying; a bug fails the whole turn with a generic message and an incident id (details only in the local log), though the logistics lookup had answered.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The question names order A12, which is not a valid order number: the call is refused as invalid before any attempt and never retried.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The model calls the logistics lookup with arguments that are not JSON: the call is refused as invalid before any attempt, and the raw text is kept for the bug report.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>A child agent-cli claims the ticket&apos;s idempotency key and is killed before it sends anything; asking the same request afresh (not resuming it) finds the write still in progress and says so instead of writing a second time.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The inventory backend rejects the request like a 400: the lookup is rejected on its first attempt and never retried, while the logistics lookup answers.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>A request makes a ticket; replayed under the same request id it is answered from the ledger; asked again under that id with other details it is refused as a conflict and nothing new is written.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The logistics lookup takes 5 s against a 300 ms attempt timeout: three attempts time out and the call gives up as timed out, while the stock lookup still answers.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The ticket is committed but its answer is lost: the same attempt asks the backend for the idempotency key&apos;s status, finds the ticket and succeeds with exactly one ticket.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The first two ticket attempts fail like a 503 before anything is sent; the third asks the backend for the key&apos;s status (none), then writes: exactly one ticket, never a blind retry.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>One question asks for seventeen stock lookups, one more than a model message may run: sixteen run and answer, the seventeenth is not run and the answer says so.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The model names a tool that does not exist: nothing runs, the call is answered as an unknown tool, and the answer says the lookup could not be made.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Every ticket attempt hangs past its 300 ms timeout and the status query cannot be answered either: the call ends with its outcome unknown, with no blind retry and no ticket.</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>ToolLabels</name>
    <message>
        <source>Return</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Exchange</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Refund</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Damaged item</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Missing item</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Other</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Create an after-sales ticket</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Confirm: create an after-sales ticket</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Create ticket</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Order</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Category</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Description</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>SKU</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Look up an order</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Track a shipment</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Check stock</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Ticket</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>This order&apos;s tickets</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 already has a “%2” ticket %3</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>List an order&apos;s tickets</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{ticketId} · {category}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Awaiting payment</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Paid</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Shipped</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Delivered</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cancelled</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>In transit</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Out for delivery</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>In stock</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Low stock</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Out of stock</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{status} · {totalAmount} {currency}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{status} · {currentLocation}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{status} · {available} available</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Tickets: {tickets#}</source>
        <translation type="unfinished"></translation>
    </message>
</context>
</TS>
