#pragma once

// An MCP server's question to staff (elicitation, form mode; docs/MCP.md "Questions from a
// server"), as the window and agent-cli receive it from McpServers: plain values read and
// bounded in core/mcp, named here so that front ends include the application rooms only
// (docs/ARCHITECTURE.md, "The window's rule").
#include "../mcp/elicitation.h"

namespace AgentConsole {

using McpQuestion = Mcp::ElicitationQuestion;
using McpQuestionField = Mcp::ElicitationField;
using McpAnswer = Mcp::ElicitationAction;
using McpAnswerProblem = Mcp::ElicitationProblem;
// The form's own checks, the same the answer meets in core (elicitation.h).
using Mcp::checkAnswer;
using Mcp::fieldValueFromText;
using Mcp::withDefaults;

// Why a question left the front end (McpServers::questionEnded).
enum class McpQuestionEnd {
    Answered, // staff answered (accept, decline or cancel)
    Withdrawn, // its tool call ended first (its attempt timeout, a cancel) or the server went
    CancelledByServer, // the server no longer wants the answer
};

} // namespace AgentConsole
