<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="zh_CN">
<context>
    <name>AgentConsole::AgentRuntime</name>
    <message>
        <source>the support-sim faults apply only when the backend is REST (support-sim); they were not sent</source>
        <translation>support-sim 故障仅在后端为 REST（support-sim）时生效；这些故障未发送</translation>
    </message>
    <message>
        <source>MCP configuration: %1</source>
        <translation>MCP 配置：%1</translation>
    </message>
    <message>
        <source>the console is not ready yet</source>
        <translation>控制台尚未就绪</translation>
    </message>
    <message>
        <source>wait until the running question is answered</source>
        <translation>请等待当前问题答复完毕</translation>
    </message>
    <message>
        <source>another Agent Console process (pid %1) still holds the data directory</source>
        <translation>另一个智能客服控制台进程（进程号 %1）仍占用着数据目录</translation>
    </message>
    <message>
        <source>no such tool: %1</source>
        <translation>没有这个工具：%1</translation>
    </message>
    <message>
        <source>not a tool policy: %1</source>
        <translation>不是工具策略：%1</translation>
    </message>
    <message>
        <source>The team&apos;s policy (version %1) does not allow the MCP server &quot;%2&quot;</source>
        <translation>团队策略（版本 %1）不允许使用 MCP 服务器“%2”</translation>
    </message>
</context>
<context>
    <name>AgentConsole::AttemptTimeline</name>
    <message>
        <source>Attempt timeline of %1</source>
        <translation>%1 的尝试时间线</translation>
    </message>
    <message>
        <source>Attempt %1: %2
Started %3 after the call began; it ran %4 of its %5 timeout</source>
        <translation>第 %1 次尝试：%2
调用开始 %3 后启动；已运行 %4（超时上限 %5）</translation>
    </message>
    <message>
        <source>%1 not made: %2</source>
        <translation>%1 未进行：%2</translation>
    </message>
    <message>
        <source>Attempt %1: %2</source>
        <translation>第 %1 次尝试：%2</translation>
    </message>
    <message>
        <source>timeout of %1</source>
        <translation>超时上限 %1</translation>
    </message>
    <message>
        <source>Attempt %1&apos;s timeout: %2 after it started</source>
        <translation>第 %1 次尝试的超时：启动后 %2</translation>
    </message>
    <message>
        <source>Retry-After %1</source>
        <translation>Retry-After %1</translation>
    </message>
    <message>
        <source>backoff %1</source>
        <translation>退避 %1</translation>
    </message>
    <message>
        <source>Waited %1 before attempt %2, as the server asked (Retry-After), in place of the policy&apos;s backoff</source>
        <translation>按服务器要求（Retry-After）在第 %2 次尝试前等待了 %1，代替策略中的退避时间</translation>
    </message>
    <message>
        <source>Backoff of %1 before attempt %2 (the retry policy&apos;s delay)</source>
        <translation>第 %2 次尝试前退避 %1（重试策略的延迟）</translation>
    </message>
    <message>
        <source>%1 running…</source>
        <translation>%1 进行中…</translation>
    </message>
    <message>
        <source>Attempt %1: running for %2 so far (it times out at %3)</source>
        <translation>第 %1 次尝试：已运行 %2（%3 时超时）</translation>
    </message>
    <message>
        <source>Attempt %1 times out %2 after it started</source>
        <translation>第 %1 次尝试在启动 %2 后超时</translation>
    </message>
    <message>
        <source>worst case %1</source>
        <translation>最坏情况 %1</translation>
    </message>
    <message>
        <source>The policy&apos;s worst case: %1 (every attempt times out, every backoff at its longest); the call ends by then</source>
        <translation>该策略的最坏情况：%1（每次尝试都超时、每次退避都取最长）；调用最迟在此时结束</translation>
    </message>
    <message>
        <source>turn deadline %1</source>
        <translation>本轮截止 %1</translation>
    </message>
    <message>
        <source>turn deadline %1 →</source>
        <translation>本轮截止 %1 →</translation>
    </message>
    <message>
        <source>The turn&apos;s deadline: %1 after this call started; the whole question must be answered by then</source>
        <translation>本轮截止时间：本次调用开始后 %1；整个问题须在此前答复</translation>
    </message>
    <message>
        <source>Attempt %1 %2.</source>
        <translation>第 %1 次尝试：%2。</translation>
    </message>
    <message>
        <source>Attempt %1 is running.</source>
        <translation>第 %1 次尝试进行中。</translation>
    </message>
    <message>
        <source>Waiting before the next attempt.</source>
        <translation>正在等待下一次尝试。</translation>
    </message>
    <message>
        <source>Each attempt times out after %1.</source>
        <translation>每次尝试 %1 后超时。</translation>
    </message>
    <message>
        <source>Worst case %1.</source>
        <translation>最坏情况 %1。</translation>
    </message>
    <message>
        <source>Turn deadline %1 after the call started.</source>
        <translation>本轮截止时间为调用开始后 %1。</translation>
    </message>
</context>
<context>
    <name>AgentConsole::AuditTrailDock</name>
    <message>
        <source>Confirmed</source>
        <translation>已确认</translation>
    </message>
    <message>
        <source>Started (needs no confirmation)</source>
        <translation>已开始（无需确认）</translation>
    </message>
    <message>
        <source>Outcome</source>
        <translation>结果</translation>
    </message>
    <message>
        <source>Settled later</source>
        <translation>事后查明</translation>
    </message>
    <message>
        <source>The write ran</source>
        <translation>写操作已执行</translation>
    </message>
    <message>
        <source>Answered by the ledger, not run again</source>
        <translation>由台账作答，未再次执行</translation>
    </message>
    <message>
        <source>The request was stopped</source>
        <translation>请求已被停止</translation>
    </message>
    <message>
        <source>The interrupted request was dismissed</source>
        <translation>中断的请求已被放弃</translation>
    </message>
    <message>
        <source>Learned when the request was resumed</source>
        <translation>在恢复请求时查明</translation>
    </message>
    <message>
        <source>Learned when the request was asked again</source>
        <translation>在再次提出该请求时查明</translation>
    </message>
    <message>
        <source>%1: %2</source>
        <translation>%1：%2</translation>
    </message>
    <message>
        <source>Succeeded</source>
        <translation>成功</translation>
    </message>
    <message>
        <source>Succeeded: %1</source>
        <translation>成功：%1</translation>
    </message>
    <message>
        <source>Succeeded: %1 %2</source>
        <translation>成功：%1 %2</translation>
    </message>
    <message>
        <source>Not done: %1</source>
        <translation>未完成：%1</translation>
    </message>
    <message>
        <source>Unknown: check before writing again</source>
        <translation>结果未知：再次写入前请先核实</translation>
    </message>
    <message>
        <source>Operation %1
Conversation %2, request %3
Tenant %4</source>
        <translation>操作 %1
对话 %2，请求 %3
租户 %4</translation>
    </message>
    <message>
        <source>When</source>
        <translation>时间</translation>
    </message>
    <message>
        <source>Agent</source>
        <translation>客服</translation>
    </message>
    <message>
        <source>Event</source>
        <translation>事件</translation>
    </message>
    <message>
        <source>Tool</source>
        <translation>工具</translation>
    </message>
    <message>
        <source>Arguments</source>
        <translation>参数</translation>
    </message>
    <message>
        <source>How it was learned</source>
        <translation>结果来源</translation>
    </message>
    <message>
        <source>Audit trail</source>
        <translation>审计记录</translation>
    </message>
    <message>
        <source>Order, e.g. A1001</source>
        <translation>订单，例如 A1001</translation>
    </message>
    <message>
        <source>Show the writes about this order</source>
        <translation>显示与该订单相关的写操作</translation>
    </message>
    <message>
        <source>Agent (staff id)</source>
        <translation>客服（员工工号）</translation>
    </message>
    <message>
        <source>Show the writes this agent confirmed</source>
        <translation>显示该客服确认的写操作</translation>
    </message>
    <message>
        <source>Day</source>
        <translation>日期</translation>
    </message>
    <message>
        <source>Only the rows of one day, in this computer&apos;s time</source>
        <translation>只显示某一天的记录（按本机时间）</translation>
    </message>
    <message>
        <source>Refresh</source>
        <translation>刷新</translation>
    </message>
    <message>
        <source>Audit trail of writes</source>
        <translation>写操作审计记录</translation>
    </message>
    <message>
        <source>Show older</source>
        <translation>显示更早的记录</translation>
    </message>
    <message>
        <source>The audit trail is shown once the console is ready.</source>
        <translation>控制台就绪后将显示审计记录。</translation>
    </message>
    <message>
        <source>Reading the audit trail…</source>
        <translation>正在读取审计记录…</translation>
    </message>
    <message>
        <source>This console&apos;s ledger keeps no audit trail.</source>
        <translation>此控制台的幂等台账不保存审计记录。</translation>
    </message>
    <message>
        <source>The audit trail could not be read; the local log says why.</source>
        <translation>无法读取审计记录；原因见本地日志。</translation>
    </message>
    <message>
        <source>No write matches these filters.</source>
        <translation>没有符合这些筛选条件的写操作。</translation>
    </message>
    <message>
        <source>No write has been confirmed yet.</source>
        <translation>尚未确认任何写操作。</translation>
    </message>
    <message>
        <source>Rows shown: the newest %1. Narrow the filters to see older ones.</source>
        <translation>显示的记录：最新的 %1 条。缩小筛选范围可查看更早的记录。</translation>
    </message>
    <message>
        <source>Rows shown: %1, newest first</source>
        <translation>显示的记录：%1 条，最新的在前</translation>
    </message>
</context>
<context>
    <name>AgentConsole::BoundedFile</name>
    <message>
        <source>%1 MiB</source>
        <translation>%1 MiB</translation>
    </message>
    <message>
        <source>%1 bytes</source>
        <translation>%1 字节</translation>
    </message>
    <message>
        <source>%1: %2</source>
        <translation>%1：%2</translation>
    </message>
    <message>
        <source>cannot open it (%1)</source>
        <translation>无法打开（%1）</translation>
    </message>
    <message>
        <source>cannot read it (%1)</source>
        <translation>无法读取（%1）</translation>
    </message>
    <message>
        <source>not a regular file</source>
        <translation>不是普通文件</translation>
    </message>
    <message>
        <source>larger than %1</source>
        <translation>大于 %1</translation>
    </message>
    <message>
        <source>unterminated object</source>
        <translation>对象缺少结尾的 }</translation>
    </message>
    <message>
        <source>missing name separator</source>
        <translation>键名后缺少冒号</translation>
    </message>
    <message>
        <source>unterminated array</source>
        <translation>数组缺少结尾的 ]</translation>
    </message>
    <message>
        <source>missing value separator</source>
        <translation>值之间缺少逗号</translation>
    </message>
    <message>
        <source>illegal value</source>
        <translation>值无效</translation>
    </message>
    <message>
        <source>invalid termination by number</source>
        <translation>文本在数字处意外结束</translation>
    </message>
    <message>
        <source>illegal number</source>
        <translation>数字无效</translation>
    </message>
    <message>
        <source>invalid escape sequence</source>
        <translation>转义序列无效</translation>
    </message>
    <message>
        <source>invalid UTF8 string</source>
        <translation>字符串不是有效的 UTF-8</translation>
    </message>
    <message>
        <source>unterminated string</source>
        <translation>字符串缺少结尾的引号</translation>
    </message>
    <message>
        <source>object is missing after a comma</source>
        <translation>逗号后缺少对象</translation>
    </message>
    <message>
        <source>too deeply nested document</source>
        <translation>嵌套层级过深</translation>
    </message>
    <message>
        <source>too large document</source>
        <translation>文档过大</translation>
    </message>
    <message>
        <source>garbage at the end of the document</source>
        <translation>文档末尾有多余内容</translation>
    </message>
    <message>
        <source>No such file or directory</source>
        <translation>文件或目录不存在</translation>
    </message>
    <message>
        <source>Permission denied</source>
        <translation>没有访问权限</translation>
    </message>
    <message>
        <source>Is a directory</source>
        <translation>这是一个目录</translation>
    </message>
</context>
<context>
    <name>AgentConsole::CaseNote</name>
    <message>
        <source>“%1”</source>
        <translation>“%1”</translation>
    </message>
    <message>
        <source>“%1” (%2)</source>
        <translation>“%1”（%2）</translation>
    </message>
    <message>
        <source>%1: not run, the request ended first.</source>
        <translation>%1：未执行，请求已先结束。</translation>
    </message>
    <message>
        <source>%1: not run, nobody could be asked to confirm it.</source>
        <translation>%1：未执行，无法请人确认。</translation>
    </message>
    <message>
        <source>%1: not made, the earlier %2 was kept.</source>
        <translation>%1：未新建，保留了此前的 %2。</translation>
    </message>
    <message>
        <source>%1 failed.</source>
        <translation>%1失败。</translation>
    </message>
    <message>
        <source>%1: %2</source>
        <translation>%1：%2</translation>
    </message>
    <message>
        <source>answered</source>
        <translation>已答复</translation>
    </message>
    <message>
        <source>Request %1</source>
        <translation>请求 %1</translation>
    </message>
    <message>
        <source>Question: %1</source>
        <translation>问题：%1</translation>
    </message>
    <message>
        <source>%1 (made earlier)</source>
        <translation>%1（此前已建）</translation>
    </message>
    <message>
        <source>Nothing was looked up.</source>
        <translation>未进行任何查询。</translation>
    </message>
    <message>
        <source>Found:</source>
        <translation>查到：</translation>
    </message>
    <message>
        <source>Could not be looked up:</source>
        <translation>未能查询：</translation>
    </message>
    <message>
        <source>Not done:</source>
        <translation>未办理：</translation>
    </message>
    <message>
        <source>The request did not finish: no answer was given.</source>
        <translation>请求未完成：没有给出答复。</translation>
    </message>
    <message>
        <source>The request was cancelled before it was answered.</source>
        <translation>请求在答复前已取消。</translation>
    </message>
    <message>
        <source>Case note, %1</source>
        <translation>案例记录，%1</translation>
    </message>
    <message>
        <source>No request of the staff member&apos;s own to note.</source>
        <translation>没有客服本人的请求可记录。</translation>
    </message>
    <message numerus="yes">
        <source>%n scenario run turn(s) left out: not the customer&apos;s conversation.</source>
        <translation>
            <numerusform>略去了 %n 轮场景运行：不属于客户的对话。</numerusform>
        </translation>
    </message>
    <message>
        <source>Conversation</source>
        <translation>对话</translation>
    </message>
    <message>
        <source>Made</source>
        <translation>已建</translation>
    </message>
</context>
<context>
    <name>AgentConsole::ConfirmationPanel</name>
    <message>
        <source>Nothing is done until you confirm. Check these details with the customer first.</source>
        <translation>确认之前不会执行任何操作。请先与客户核对上述信息。</translation>
    </message>
    <message>
        <source>Decline</source>
        <translation>拒绝</translation>
    </message>
    <message>
        <source>Do not run it; the agent is told it was declined</source>
        <translation>不执行；智能体会收到“已拒绝”的结果</translation>
    </message>
    <message>
        <source>Confirm</source>
        <translation>确认</translation>
    </message>
    <message>
        <source>Run it with exactly these details</source>
        <translation>按以上信息原样执行</translation>
    </message>
    <message>
        <source>%1: %2</source>
        <translation>%1：%2</translation>
    </message>
    <message>
        <source>Confirmed; waiting for it to start…</source>
        <translation>已确认，等待开始执行…</translation>
    </message>
    <message>
        <source>Declining…</source>
        <translation>正在拒绝…</translation>
    </message>
    <message>
        <source>Confirmed; running…</source>
        <translation>已确认，正在执行…</translation>
    </message>
    <message>
        <source>Declined: it was not run.</source>
        <translation>已拒绝：未执行。</translation>
    </message>
    <message>
        <source>Confirmed with these details.</source>
        <translation>已按以上信息确认。</translation>
    </message>
    <message>
        <source>Not run: the turn was cancelled before an answer.</source>
        <translation>未执行：本轮在作答前已取消。</translation>
    </message>
    <message>
        <source>Not run: the turn ended before an answer.</source>
        <translation>未执行：本轮在作答前已结束。</translation>
    </message>
    <message>
        <source>Not run: nobody could be asked to confirm it.</source>
        <translation>未执行：无法请客服确认。</translation>
    </message>
    <message>
        <source>Make nothing new; the agent is told which one you kept</source>
        <translation>不再新建；智能体会收到您沿用的是哪一张</translation>
    </message>
    <message>
        <source>Keeping %1…</source>
        <translation>正在沿用 %1…</translation>
    </message>
    <message>
        <source>Not run: you kept %1 instead.</source>
        <translation>未执行：已沿用 %1。</translation>
    </message>
    <message>
        <source>Open %1</source>
        <translation>打开 %1</translation>
    </message>
    <message>
        <source>Keep %1 and make nothing new</source>
        <translation>沿用 %1，不再新建</translation>
    </message>
    <message>
        <source>Create another anyway</source>
        <translation>仍然新建一张</translation>
    </message>
    <message>
        <source>Create another anyway: %1</source>
        <translation>仍然新建一张：%1</translation>
    </message>
</context>
<context>
    <name>AgentConsole::ConnectionSettingsDialog</name>
    <message>
        <source>Model and backend</source>
        <translation>模型与后端</translation>
    </message>
    <message>
        <source>Model</source>
        <translation>模型</translation>
    </message>
    <message>
        <source>Offline demo model (no key, no network)</source>
        <translation>离线演示模型（无需密钥与网络）</translation>
    </message>
    <message>
        <source>OpenAI-compatible server</source>
        <translation>OpenAI 兼容服务</translation>
    </message>
    <message>
        <source>Choose a preset…</source>
        <translation>选择预设…</translation>
    </message>
    <message>
        <source>&amp;Test connection</source>
        <translation>测试连接(&amp;T)</translation>
    </message>
    <message>
        <source>Sends one short request (one token) to the server with these settings and says what came back.</source>
        <translation>用当前设置向服务器发送一个极短的请求，并显示返回的结果。</translation>
    </message>
    <message>
        <source>Stream answers as they are written</source>
        <translation>边生成边显示回答（流式）</translation>
    </message>
    <message>
        <source>When the provider fails, answer with the offline model</source>
        <translation>服务商不可用时，由离线模型作答</translation>
    </message>
    <message>
        <source>Pre&amp;set</source>
        <translation>预设(&amp;S)</translation>
    </message>
    <message>
        <source>&amp;Base URL</source>
        <translation>基础 URL(&amp;B)</translation>
    </message>
    <message>
        <source>&amp;Model</source>
        <translation>模型(&amp;M)</translation>
    </message>
    <message>
        <source>API key &amp;variable</source>
        <translation>API 密钥环境变量(&amp;V)</translation>
    </message>
    <message>
        <source>API &amp;key</source>
        <translation>API 密钥(&amp;K)</translation>
    </message>
    <message>
        <source>Tool backend</source>
        <translation>工具后端</translation>
    </message>
    <message>
        <source>Embedded demo store</source>
        <translation>内置演示数据库</translation>
    </message>
    <message>
        <source>REST backend</source>
        <translation>REST 后端</translation>
    </message>
    <message>
        <source>sqlite (in the data directory)</source>
        <translation>sqlite（位于数据目录）</translation>
    </message>
    <message>
        <source>The idempotency ledger: sqlite, or postgresql://user@host:port/db to share one across a team (no password here: PGPASSWORD or ~/.pgpass). Applies at the next start.</source>
        <translation>幂等台账：sqlite，或 postgresql://user@host:port/db 以供团队共用（此处不填密码，请用 PGPASSWORD 或 ~/.pgpass）。下次启动时生效。</translation>
    </message>
    <message>
        <source>Base &amp;URL</source>
        <translation>基础 URL(&amp;U)</translation>
    </message>
    <message>
        <source>&amp;Ledger (next start)</source>
        <translation>幂等台账（下次启动生效）(&amp;L)</translation>
    </message>
    <message>
        <source>Interface</source>
        <translation>界面</translation>
    </message>
    <message>
        <source>Follow the system</source>
        <translation>跟随系统</translation>
    </message>
    <message>
        <source>Lan&amp;guage</source>
        <translation>语言(&amp;G)</translation>
    </message>
    <message>
        <source>Testing…</source>
        <translation>正在测试…</translation>
    </message>
    <message>
        <source>key from %1</source>
        <translation>密钥来自 %1</translation>
    </message>
    <message>
        <source>key typed here</source>
        <translation>此处输入的密钥</translation>
    </message>
    <message>
        <source>key from the keychain</source>
        <translation>密钥来自系统钥匙串</translation>
    </message>
    <message>
        <source>no key</source>
        <translation>无密钥</translation>
    </message>
    <message>
        <source>Connected: %1</source>
        <translation>连接成功：%1</translation>
    </message>
    <message>
        <source>from %1</source>
        <translation>来自 %1</translation>
    </message>
    <message>
        <source>%1 is set and wins over the keychain (the key itself is never shown or logged)</source>
        <translation>已设置 %1，优先于系统钥匙串（密钥本身不会显示或写入日志）</translation>
    </message>
    <message>
        <source>stored in the keychain; type to replace it</source>
        <translation>已保存在系统钥匙串中；输入新密钥可替换</translation>
    </message>
    <message>
        <source>%1 is not set: the key stored in the OS keychain is used</source>
        <translation>未设置 %1：使用系统钥匙串中保存的密钥</translation>
    </message>
    <message>
        <source>kept in the OS keychain</source>
        <translation>保存在系统钥匙串中</translation>
    </message>
    <message>
        <source>%1 is not set and no key is stored: only a local server without a key will answer</source>
        <translation>未设置 %1，也没有保存密钥：只有无需密钥的本地服务会响应</translation>
    </message>
    <message>
        <source>the keychain is not available</source>
        <translation>系统钥匙串不可用</translation>
    </message>
    <message>
        <source>%1 is not set; asking the keychain…</source>
        <translation>未设置 %1；正在读取系统钥匙串…</translation>
    </message>
    <message>
        <source>The key was not stored</source>
        <translation>密钥未保存</translation>
    </message>
    <message>
        <source>Ledger: %1</source>
        <translation>幂等台账：%1</translation>
    </message>
    <message>
        <source>These settings cannot be applied yet</source>
        <translation>这些设置暂时无法生效</translation>
    </message>
    <message>
        <source>Ollama (local)</source>
        <translation>Ollama（本机）</translation>
    </message>
    <message>
        <source>How much of the conversation each request carries: the system prompt and the current question always, earlier turns while they fit. The footer says when turns were left out.</source>
        <translation>每次请求携带多少对话内容：系统提示和当前问题始终发送，较早的轮次在预算内发送。有轮次被略去时，页脚会说明。</translation>
    </message>
    <message>
        <source>Conversation &amp;budget</source>
        <translation>对话预算(&amp;B)</translation>
    </message>
    <message>
        <source>Provider default (%L1 characters)</source>
        <translation>服务商默认（%L1 个字符）</translation>
    </message>
    <message>
        <source> characters</source>
        <translation> 个字符</translation>
    </message>
    <message>
        <source>LM Studio (local)</source>
        <translation>LM Studio（本机）</translation>
    </message>
    <message>
        <source>vLLM</source>
        <translation>vLLM</translation>
    </message>
    <message>
        <source>llama.cpp server</source>
        <translation>llama.cpp 服务器</translation>
    </message>
    <message>
        <source>Custom</source>
        <translation>自定义</translation>
    </message>
    <message>
        <source>Not connected: %1</source>
        <translation>未连接：%1</translation>
    </message>
    <message>
        <source>not needed</source>
        <translation>无需密钥</translation>
    </message>
    <message>
        <source>%1 needs no key: leave this empty</source>
        <translation>%1 无需密钥：此处留空即可</translation>
    </message>
    <message>
        <source>%1 is not set and the OS keychain cannot be reached: only a local server without a key will answer</source>
        <translation>未设置 %1，且无法访问系统钥匙串：只有无需密钥的本地服务会响应</translation>
    </message>
    <message>
        <source>The OS keychain could not keep it (the local log says why). The settings were not applied.</source>
        <translation>系统钥匙串未能保存密钥（原因见本地日志）。设置未生效。</translation>
    </message>
    <message>
        <source>none: this desk alone</source>
        <translation>无：仅本工位</translation>
    </message>
    <message>
        <source>A team&apos;s PostgreSQL database, postgresql://user@host:port/db: it holds the ledger, your conversations and the audit trail, which then follow you to any desk (docs/TEAM.md). No password here: the keychain, ~/.pgpass or a service file. Applies at the next start.</source>
        <translation>团队的 PostgreSQL 数据库，格式为 postgresql://user@host:port/db：其中保存幂等台账、您的对话和审计记录，换到任何工位都能看到（见 docs/TEAM.md）。此处不要填写密码：请使用系统钥匙串、~/.pgpass 或服务文件。下次启动时生效。</translation>
    </message>
    <message>
        <source>&amp;Team database (next start)</source>
        <translation>团队数据库（下次启动）(&amp;T)</translation>
    </message>
    <message>
        <source>Team database: %1</source>
        <translation>团队数据库：%1</translation>
    </message>
    <message>
        <source>Team database: it holds the ledger too; leave the ledger empty</source>
        <translation>团队数据库：它同时保存幂等台账；请将台账留空</translation>
    </message>
</context>
<context>
    <name>AgentConsole::ConsoleSettings</name>
    <message>
        <source>%1 %2</source>
        <comment>a setting&apos;s name, then what is wrong with it</comment>
        <translation>%1：%2</translation>
    </message>
    <message>
        <source>expected %1</source>
        <translation>应为 %1</translation>
    </message>
    <message>
        <source> or </source>
        <comment>between the accepted values</comment>
        <translation> 或 </translation>
    </message>
    <message>
        <source>expected one line of text</source>
        <translation>应为单行文本</translation>
    </message>
    <message>
        <source>longer than %1 characters</source>
        <translation>超过 %1 个字符</translation>
    </message>
    <message>
        <source>larger than %1 KiB</source>
        <translation>大于 %1 KiB</translation>
    </message>
    <message>
        <source>%1: %2; the default is used</source>
        <translation>%1：%2；将使用默认值</translation>
    </message>
    <message>
        <source>is not a postgresql://user@host:port/db address</source>
        <translation>不是 postgresql://user@host:port/db 形式的地址</translation>
    </message>
    <message>
        <source>carries a password, which is never stored; use PGPASSWORD or ~/.pgpass instead</source>
        <translation>包含密码，而密码从不保存；请改用 PGPASSWORD 或 ~/.pgpass</translation>
    </message>
    <message>
        <source>expected sqlite, sqlite:FILE or postgresql://user@host:port/db</source>
        <translation>应为 sqlite、sqlite:&lt;文件路径&gt; 或 postgresql://user@host:port/db</translation>
    </message>
    <message>
        <source>the settings file %1 %2: it is kept as it is, the defaults are used and nothing is saved this session</source>
        <translation>设置文件 %1 %2：该文件保持原样，本次使用默认设置，且不会保存任何更改</translation>
    </message>
    <message>
        <source>is not a regular file</source>
        <translation>不是普通文件</translation>
    </message>
    <message>
        <source>cannot be read</source>
        <translation>无法读取</translation>
    </message>
    <message>
        <source>is larger than 1 MiB</source>
        <translation>大于 1 MiB</translation>
    </message>
    <message>
        <source>is not an INI file</source>
        <translation>不是 INI 格式的文件</translation>
    </message>
    <message>
        <source>the settings file %1 could not be read at start and is kept as it is</source>
        <translation>设置文件 %1 在启动时无法读取，已保持原样</translation>
    </message>
    <message>
        <source>the settings file %1 is no longer a settings file</source>
        <translation>设置文件 %1 已不再是设置文件</translation>
    </message>
    <message>
        <source>the settings file %1 can no longer be read</source>
        <translation>设置文件 %1 已无法读取</translation>
    </message>
    <message>
        <source>the settings file %1 could not be written</source>
        <translation>设置文件 %1 无法写入</translation>
    </message>
    <message>
        <source>Ledger: %1</source>
        <translation>幂等台账：%1</translation>
    </message>
    <message>
        <source>Language: expected %1</source>
        <translation>语言：应为 %1</translation>
    </message>
    <message>
        <source>more than %1 entries</source>
        <translation>超过 %1 项</translation>
    </message>
    <message>
        <source>expected &lt;server&gt;/&lt;tool&gt;</source>
        <translation>应为 &lt;服务器&gt;/&lt;工具&gt;</translation>
    </message>
    <message>
        <source>MCP tool policies: not a policy: %1</source>
        <translation>MCP 工具策略：不是策略：%1</translation>
    </message>
    <message>
        <source>expected a number of characters from %1 to %2</source>
        <translation>应为 %1 到 %2 之间的字符数</translation>
    </message>
    <message>
        <source>the settings file %1 went bad during this session and is kept as it is</source>
        <translation>设置文件 %1 在本次运行中已损坏，已保持原样</translation>
    </message>
    <message>
        <source>Team database: %1</source>
        <translation>团队数据库：%1</translation>
    </message>
</context>
<context>
    <name>AgentConsole::ConsoleShell</name>
    <message>
        <source>The new language is used from the next start (a request is under way).</source>
        <translation>新的界面语言将在下次启动时使用（当前有请求正在处理）。</translation>
    </message>
</context>
<context>
    <name>AgentConsole::ConsoleWindow</name>
    <message>
        <source>%1 s</source>
        <translation>%1 秒</translation>
    </message>
    <message>
        <source>%1 ms</source>
        <translation>%1 毫秒</translation>
    </message>
    <message>
        <source>Conversation</source>
        <translation>对话</translation>
    </message>
    <message>
        <source>Question</source>
        <translation>问题</translation>
    </message>
    <message>
        <source>Send</source>
        <translation>发送</translation>
    </message>
    <message>
        <source>Send the question (Enter)</source>
        <translation>发送问题（Enter）</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <source>Stop the running turn and its tools (Esc)</source>
        <translation>停止正在进行的一轮及其工具调用（Esc）</translation>
    </message>
    <message>
        <source>&amp;Conversation</source>
        <translation>对话(&amp;C)</translation>
    </message>
    <message>
        <source>&amp;New conversation</source>
        <translation>新建对话(&amp;N)</translation>
    </message>
    <message numerus="yes">
        <source>Exported %n turn(s) to %1</source>
        <translation>
            <numerusform>已将 %n 轮对话导出到 %1</numerusform>
        </translation>
    </message>
    <message>
        <source>&amp;Quit</source>
        <translation>退出(&amp;Q)</translation>
    </message>
    <message>
        <source>&amp;Settings</source>
        <translation>设置(&amp;S)</translation>
    </message>
    <message>
        <source>Model and &amp;backend…</source>
        <translation>模型与后端(&amp;B)…</translation>
    </message>
    <message>
        <source>Preparing the store…</source>
        <translation>正在准备数据库…</translation>
    </message>
    <message>
        <source>The demo store is being opened and checked; you can type your question meanwhile.</source>
        <translation>正在打开并检查演示数据库；您可以先输入问题。</translation>
    </message>
    <message>
        <source>Model: —</source>
        <translation>模型：—</translation>
    </message>
    <message>
        <source>&amp;Diagnostics</source>
        <translation>诊断(&amp;D)</translation>
    </message>
    <message>
        <source>&amp;View</source>
        <translation>视图(&amp;V)</translation>
    </message>
    <message>
        <source>&amp;History</source>
        <translation>历史记录(&amp;H)</translation>
    </message>
    <message>
        <source>The agent loop is missing.</source>
        <translation>智能体循环缺失。</translation>
    </message>
    <message>
        <source>The console could not start</source>
        <translation>控制台无法启动</translation>
    </message>
    <message>
        <source>No reason was given; see the local log.</source>
        <translation>未给出原因；请查看本地日志。</translation>
    </message>
    <message>
        <source>The question is too long</source>
        <translation>问题过长</translation>
    </message>
    <message>
        <source>A question can have at most %1 characters; this one has %2. Nothing was sent, and your text is still in the box.</source>
        <translation>问题最多 %1 个字符，当前为 %2 个。未发送任何内容，您的文字仍保留在输入框中。</translation>
    </message>
    <message>
        <source>Cancelling…</source>
        <translation>正在取消…</translation>
    </message>
    <message>
        <source>The agent loop would not carry it on: its checkpoint is no longer resumable. The record stays in the journal. First: “%1”</source>
        <translation>智能体循环无法继续该请求：其检查点已不可恢复。记录仍保留在日志库中。第一条：“%1”</translation>
    </message>
    <message>
        <source>Model: %1 (offline fallback)</source>
        <translation>模型：%1（离线备用）</translation>
    </message>
    <message>
        <source>Model: %1</source>
        <translation>模型：%1</translation>
    </message>
    <message>
        <source>Answers come from %1; when it fails, the offline demo model answers instead.</source>
        <translation>回答来自 %1；它不可用时改由离线演示模型作答。</translation>
    </message>
    <message>
        <source>Circuit open: %1</source>
        <translation>已熔断：%1</translation>
    </message>
    <message>
        <source>Half-open: %1</source>
        <translation>半开：%1</translation>
    </message>
    <message>
        <source> (+%1 more)</source>
        <translation>（另有 %1 个）</translation>
    </message>
    <message>
        <source>Circuit open for %1: calls to it fail fast; it is retried after the %2 cool-down.</source>
        <translation>%1 已熔断：对它的调用会立即失败；冷却 %2 后再试。</translation>
    </message>
    <message>
        <source>Half-open for %1: a few trial calls are let through; it closes again once they succeed.</source>
        <translation>%1 处于半开状态：放行少量试探调用；成功后恢复正常。</translation>
    </message>
    <message>
        <source>The settings were not applied</source>
        <translation>设置未生效</translation>
    </message>
    <message>
        <source>F&amp;aults</source>
        <translation>故障(&amp;A)</translation>
    </message>
    <message>
        <source>&amp;Fault panel</source>
        <translation>故障面板(&amp;F)</translation>
    </message>
    <message>
        <source>Ctrl+Shift+F</source>
        <translation>Ctrl+Shift+F</translation>
    </message>
    <message>
        <source>&amp;Retry policies</source>
        <translation>重试策略(&amp;R)</translation>
    </message>
    <message>
        <source>Ctrl+Shift+P</source>
        <translation>Ctrl+Shift+P</translation>
    </message>
    <message>
        <source>&amp;Clear all faults</source>
        <translation>清除所有故障(&amp;C)</translation>
    </message>
    <message>
        <source>Reset all retry &amp;policies</source>
        <translation>重置所有重试策略(&amp;P)</translation>
    </message>
    <message>
        <source>Sce&amp;narios</source>
        <translation>场景(&amp;N)</translation>
    </message>
    <message>
        <source>Scenarios &amp;panel</source>
        <translation>场景面板(&amp;P)</translation>
    </message>
    <message>
        <source>Ctrl+Shift+S</source>
        <translation>Ctrl+Shift+S</translation>
    </message>
    <message>
        <source>&amp;Open scenario file…</source>
        <translation>打开场景文件(&amp;O)…</translation>
    </message>
    <message>
        <source>SCENARIO: %1</source>
        <translation>场景：%1</translation>
    </message>
    <message>
        <source>FAULTS ACTIVE</source>
        <translation>故障注入中</translation>
    </message>
    <message>
        <source>CUSTOM RETRY POLICY</source>
        <translation>自定义重试策略</translation>
    </message>
    <message>
        <source>%1 — %2</source>
        <translation>%1 — %2</translation>
    </message>
    <message>
        <source>Faults in force: %1</source>
        <translation>生效中的故障：%1</translation>
    </message>
    <message>
        <source>%1 (%2): %3</source>
        <translation>%1（%2）：%3</translation>
    </message>
    <message>
        <source>Faults menu: the fault panel, the retry policies, Clear all faults.</source>
        <translation>“故障”菜单：故障面板、重试策略、清除所有故障。</translation>
    </message>
    <message>
        <source>The settings apply now but were not saved</source>
        <translation>设置已生效，但未能保存</translation>
    </message>
    <message>
        <source>The new ledger is used from the next start.</source>
        <translation>新的幂等台账将在下次启动时使用。</translation>
    </message>
    <message>
        <source>Some stored settings were not used</source>
        <translation>部分已保存的设置未被采用</translation>
    </message>
    <message numerus="yes">
        <source>%n interrupted request(s) cannot be resumed</source>
        <translation>
            <numerusform>%n 个中断的请求无法恢复</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n interrupted request(s) not this session&apos;s</source>
        <translation>
            <numerusform>%n 个中断的请求不属于本会话</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n interrupted request(s) could not be resumed</source>
        <translation>
            <numerusform>%n 个中断的请求未能恢复</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n fault(s)</source>
        <translation>
            <numerusform>%n 个故障</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n custom policy(s)</source>
        <translation>
            <numerusform>%n 个自定义策略</numerusform>
        </translation>
    </message>
    <message>
        <source>The new language is used from the next start.</source>
        <translation>新的界面语言将在下次启动时使用。</translation>
    </message>
    <message>
        <source>&amp;MCP servers</source>
        <translation>MCP 服务器(&amp;M)</translation>
    </message>
    <message>
        <source>MCP &amp;tool policies…</source>
        <translation>MCP 工具策略(&amp;T)…</translation>
    </message>
    <message>
        <source>The MCP tool policies apply now but were not saved</source>
        <translation>MCP 工具策略已生效，但未能保存</translation>
    </message>
    <message>
        <source>MCP tool policies applied; they hold from each tool&apos;s next call.</source>
        <translation>MCP 工具策略已应用；从各工具的下一次调用起生效。</translation>
    </message>
    <message>
        <source>&amp;MCP servers (mcp.json)…</source>
        <translation>MCP 服务器 (mcp.json)(&amp;M)…</translation>
    </message>
    <message numerus="yes">
        <source>mcp.json saved (%n secret(s) moved to the keychain). The MCP servers change when the console restarts.</source>
        <translation>
            <numerusform>mcp.json 已保存（%n 个机密已移入系统钥匙串）。MCP 服务器在控制台重新启动后更改。</numerusform>
        </translation>
    </message>
    <message>
        <source>%1 asks you a question</source>
        <translation>%1 向您提了一个问题</translation>
    </message>
    <message>
        <source>A question was withdrawn: its tool call ended before an answer</source>
        <translation>一个问题已撤回：其工具调用在您回答前已结束</translation>
    </message>
    <message>
        <source>A question was taken back by its server</source>
        <translation>一个问题已被其服务器收回</translation>
    </message>
    <message>
        <source>Writing the export to %1…</source>
        <translation>正在把导出写入 %1…</translation>
    </message>
    <message>
        <source>Reading %1…</source>
        <translation>正在读取 %1…</translation>
    </message>
    <message>
        <source>Scenario run: %1</source>
        <translation>场景运行：%1</translation>
    </message>
    <message>
        <source>It runs in a conversation of its own; yours comes back when it ends.</source>
        <translation>它在单独的对话中运行；结束后会回到您的对话。</translation>
    </message>
    <message>
        <source>Scenario run finished: %1</source>
        <translation>场景运行结束：%1</translation>
    </message>
    <message>
        <source>Its turns are in History, marked “Scenario run”; the Scenarios panel has its verdict.</source>
        <translation>它的各轮对话在历史记录中，标有“场景运行”；结论见场景面板。</translation>
    </message>
    <message>
        <source>&amp;Confirm the waiting action</source>
        <translation>确认待确认的操作(&amp;C)</translation>
    </message>
    <message>
        <source>Ctrl+Shift+Y</source>
        <translation>Ctrl+Shift+Y</translation>
    </message>
    <message>
        <source>&amp;Decline the waiting action</source>
        <translation>拒绝待确认的操作(&amp;D)</translation>
    </message>
    <message>
        <source>Ctrl+Shift+N</source>
        <translation>Ctrl+Shift+N</translation>
    </message>
    <message>
        <source>Ctrl+E</source>
        <translation>Ctrl+E</translation>
    </message>
    <message>
        <source>Ctrl+,</source>
        <translation>Ctrl+,</translation>
    </message>
    <message>
        <source>Ctrl+Shift+D</source>
        <translation>Ctrl+Shift+D</translation>
    </message>
    <message>
        <source>Ctrl+Shift+H</source>
        <translation>Ctrl+Shift+H</translation>
    </message>
    <message>
        <source>&amp;Search conversations</source>
        <translation>搜索对话(&amp;S)</translation>
    </message>
    <message>
        <source>S&amp;taff layout</source>
        <translation>客服布局(&amp;T)</translation>
    </message>
    <message>
        <source>Ctrl+Shift+1</source>
        <translation>Ctrl+Shift+1</translation>
    </message>
    <message>
        <source>&amp;QA layout</source>
        <translation>测试布局(&amp;Q)</translation>
    </message>
    <message>
        <source>Ctrl+Shift+2</source>
        <translation>Ctrl+Shift+2</translation>
    </message>
    <message>
        <source>Ctrl+Shift+M</source>
        <translation>Ctrl+Shift+M</translation>
    </message>
    <message>
        <source>%1 (%2) · %3</source>
        <translation>%1（%2）· %3</translation>
    </message>
    <message>
        <source>&amp;Audit trail</source>
        <translation>审计记录(&amp;A)</translation>
    </message>
    <message>
        <source>Ctrl+Shift+A</source>
        <translation>Ctrl+Shift+A</translation>
    </message>
    <message>
        <source>Work alone on this desk</source>
        <translation>在本工位单机工作</translation>
    </message>
    <message>
        <source>Quit</source>
        <translation>退出</translation>
    </message>
    <message>
        <source>The team&apos;s database cannot be reached</source>
        <translation>无法连接团队数据库</translation>
    </message>
    <message>
        <source>%1
You can work alone on this desk: conversations, writes and the audit trail are then kept on this machine only, and every export says so. Start again to rejoin the team.</source>
        <translation>%1
您可以在本工位单机工作：对话、写操作和审计记录将只保存在本机，每份导出都会注明这一点。重新启动即可重新加入团队。</translation>
    </message>
    <message>
        <source>Working alone</source>
        <translation>单机工作中</translation>
    </message>
    <message>
        <source>The team&apos;s database %1 could not be reached at the start: this desk keeps its own conversations, writes and audit trail until the console starts again.</source>
        <translation>启动时无法连接团队数据库 %1：在控制台重新启动前，本工位自行保存对话、写操作和审计记录。</translation>
    </message>
    <message>
        <source>Working alone on this desk</source>
        <translation>正在本工位单机工作</translation>
    </message>
    <message>
        <source>The team&apos;s database could not be reached at the start. Conversations, writes and the audit trail are kept on this machine only; colleagues do not see them, and exports are marked as made alone. Start again to rejoin the team.</source>
        <translation>启动时无法连接团队数据库。对话、写操作和审计记录只保存在本机，同事看不到；导出会注明为单机工作时所作。重新启动即可重新加入团队。</translation>
    </message>
    <message>
        <source>Team</source>
        <translation>团队</translation>
    </message>
    <message>
        <source>Conversations, writes and the audit trail are kept on the team&apos;s database %1: they follow you to any desk.</source>
        <translation>对话、写操作和审计记录保存在团队数据库 %1 中：换到任何工位都能看到。</translation>
    </message>
    <message>
        <source>The team database is used from the next start.</source>
        <translation>团队数据库将在下次启动时使用。</translation>
    </message>
    <message>
        <source>Locked: %1</source>
        <translation>已锁定：%1</translation>
    </message>
    <message>
        <source>, </source>
        <comment>between names</comment>
        <translation>、</translation>
    </message>
    <message>
        <source>Team policy %1</source>
        <translation>团队策略 %1</translation>
    </message>
</context>
<context>
    <name>AgentConsole::ConversationExport</name>
    <message>
        <source>&quot;%1&quot; is missing</source>
        <translation>缺少“%1”</translation>
    </message>
    <message>
        <source>&quot;%1&quot; has the wrong type</source>
        <translation>“%1”的类型不对</translation>
    </message>
    <message>
        <source>cannot export to %1: %2</source>
        <translation>无法导出到 %1：%2</translation>
    </message>
    <message>
        <source>name it .json or .md</source>
        <translation>文件名须以 .json 或 .md 结尾</translation>
    </message>
    <message>
        <source>it is a directory</source>
        <translation>这是一个文件夹</translation>
    </message>
    <message>
        <source>not a conversation export: %1</source>
        <translation>不是对话导出文件：%1</translation>
    </message>
    <message>
        <source>larger than %1 bytes</source>
        <translation>大于 %1 字节</translation>
    </message>
    <message>
        <source>%1 at offset %2</source>
        <translation>第 %2 个字符处：%1</translation>
    </message>
    <message>
        <source>it is not a JSON object</source>
        <translation>不是 JSON 对象</translation>
    </message>
    <message>
        <source>&quot;format&quot; is not &quot;%1&quot;</source>
        <translation>“format”不是“%1”</translation>
    </message>
    <message>
        <source>version %1 is not %2 (written by another console?)</source>
        <translation>版本 %1 不是 %2（可能由其他版本的控制台写入）</translation>
    </message>
    <message>
        <source>unknown field &quot;%1&quot;</source>
        <translation>未知字段“%1”</translation>
    </message>
    <message>
        <source>&quot;turns&quot; is missing or not an array</source>
        <translation>缺少“turns”，或它不是数组</translation>
    </message>
    <message>
        <source>&quot;exportedAt&quot; is not an ISO 8601 time</source>
        <translation>“exportedAt”不是 ISO 8601 格式的时间</translation>
    </message>
    <message>
        <source>more than %1 turns</source>
        <translation>超过 %1 轮</translation>
    </message>
    <message>
        <source>turns[%1] is not an object</source>
        <translation>turns[%1] 不是对象</translation>
    </message>
    <message>
        <source>turns[%1].%2</source>
        <translation>turns[%1].%2</translation>
    </message>
    <message>
        <source>%1: %2</source>
        <translation>%1：%2</translation>
    </message>
    <message>
        <source>it would be %1 MiB, more than the %2 MiB an export is opened from: export fewer turns, or as Markdown</source>
        <translation>文件将有 %1 MiB，超过可打开的导出上限 %2 MiB：请导出更少的轮次，或导出为 Markdown</translation>
    </message>
    <message>
        <source>&quot;audit&quot; is not {&quot;rows&quot;: [...], &quot;complete&quot;: true|false}</source>
        <translation>“audit”不是 {&quot;rows&quot;: [...], &quot;complete&quot;: true|false}</translation>
    </message>
    <message>
        <source>more than %1 audit rows</source>
        <translation>审计记录超过 %1 条</translation>
    </message>
    <message>
        <source>audit.rows[%1]: %2</source>
        <translation>audit.rows[%1]：%2</translation>
    </message>
    <message>
        <source>&quot;teamPolicy&quot; is neither &quot;none&quot; nor {&quot;version&quot;, &quot;origin&quot;}</source>
        <translation>“teamPolicy”既不是“none”，也不是 {&quot;version&quot;, &quot;origin&quot;}</translation>
    </message>
</context>
<context>
    <name>AgentConsole::ConversationExporter</name>
    <message>
        <source>&amp;Export conversation…</source>
        <translation>导出对话(&amp;E)…</translation>
    </message>
    <message>
        <source>Save this conversation&apos;s finished turns as JSON or as a Markdown bug report; keys are redacted.</source>
        <translation>将本对话已完成的各轮保存为 JSON 或 Markdown 问题报告；密钥会被隐去。</translation>
    </message>
    <message>
        <source>Export this &amp;turn…</source>
        <translation>导出本轮(&amp;T)…</translation>
    </message>
    <message>
        <source>Save the latest finished turn (or right-click a turn in the transcript).</source>
        <translation>保存最近一轮已完成的对话（或在对话记录中右键点击某一轮）。</translation>
    </message>
    <message>
        <source>&amp;Open export…</source>
        <translation>打开导出文件(&amp;O)…</translation>
    </message>
    <message>
        <source>There is no finished turn to export yet.</source>
        <translation>还没有可导出的已完成轮次。</translation>
    </message>
    <message>
        <source>That turn has not finished, or is not in this conversation.</source>
        <translation>该轮尚未完成，或不属于本对话。</translation>
    </message>
    <message>
        <source>Export conversation</source>
        <translation>导出对话</translation>
    </message>
    <message>
        <source>Export this turn</source>
        <translation>导出本轮</translation>
    </message>
    <message>
        <source>The export was not written</source>
        <translation>导出文件未写入</translation>
    </message>
    <message>
        <source>Open export</source>
        <translation>打开导出文件</translation>
    </message>
    <message>
        <source>The export could not be opened</source>
        <translation>无法打开导出文件</translation>
    </message>
    <message>
        <source>Export this turn…</source>
        <translation>导出本轮…</translation>
    </message>
    <message>
        <source>Export e&amp;very conversation…</source>
        <translation>导出所有对话(&amp;V)…</translation>
    </message>
    <message>
        <source>Save every turn finished since the console started or the conversation was switched, whichever conversation it was in (resumed turns, scenario runs).</source>
        <translation>保存自控制台启动或切换对话以来完成的每一轮，无论属于哪个对话（恢复的轮次、场景运行）。</translation>
    </message>
    <message>
        <source>JSON export, opens again here (*.json)</source>
        <translation>JSON 导出，可在此再次打开 (*.json)</translation>
    </message>
    <message>
        <source>Markdown bug report (*.md)</source>
        <translation>Markdown 问题报告 (*.md)</translation>
    </message>
    <message>
        <source>Case note (*.md)</source>
        <translation>案例记录 (*.md)</translation>
    </message>
    <message>
        <source>Case note, plain text (*.txt)</source>
        <translation>案例记录，纯文本 (*.txt)</translation>
    </message>
    <message>
        <source>JSON exports, the only kind Open export… opens (*.json)</source>
        <translation>JSON 导出（“打开导出文件…”只能打开这种）(*.json)</translation>
    </message>
    <message>
        <source>Copy as &amp;case note</source>
        <translation>复制为案例记录(&amp;C)</translation>
    </message>
    <message>
        <source>Copy a short summary of this conversation for a ticket: per question, what was found, what could not be looked up and the tickets made.</source>
        <translation>复制本对话的简短摘要，供填写工单：每个问题查到了什么、哪些未能查询、建了哪些工单。</translation>
    </message>
    <message>
        <source>Save the same summary as a file.</source>
        <translation>将同样的摘要保存为文件。</translation>
    </message>
    <message>
        <source>View a conversation exported as JSON, read-only. The Markdown bug report and the case note are for reading elsewhere.</source>
        <translation>以只读方式查看导出为 JSON 的对话。Markdown 问题报告和案例记录请在其他程序中阅读。</translation>
    </message>
    <message>
        <source>The case note was not written</source>
        <translation>案例记录未写入</translation>
    </message>
    <message>
        <source>There is no finished question of your own in this conversation yet.</source>
        <translation>本对话中还没有您本人已完成的问题。</translation>
    </message>
    <message>
        <source>Nothing was copied</source>
        <translation>未复制任何内容</translation>
    </message>
    <message numerus="yes">
        <source>Copied the case note of %n question(s)</source>
        <translation>
            <numerusform>已复制 %n 个问题的案例记录</numerusform>
        </translation>
    </message>
    <message>
        <source>Open export… opens JSON exports</source>
        <translation>“打开导出文件…”只能打开 JSON 导出</translation>
    </message>
    <message>
        <source>%1 is a Markdown file (a bug report or a case note), written to be read in any editor. It keeps too little of the conversation to be shown here again.</source>
        <translation>%1 是 Markdown 文件（问题报告或案例记录），供在任意编辑器中阅读。它保存的对话内容太少，无法在这里重新显示。</translation>
    </message>
    <message>
        <source>To see a conversation here, export it as JSON (Conversation › Export conversation…, JSON) and open that file.</source>
        <translation>要在这里查看对话，请将其导出为 JSON（对话 › 导出对话…，JSON），再打开该文件。</translation>
    </message>
    <message>
        <source>Its JSON export is beside it: %1.</source>
        <translation>同一位置有它的 JSON 导出：%1。</translation>
    </message>
    <message>
        <source>Open the JSON export</source>
        <translation>打开 JSON 导出</translation>
    </message>
    <message>
        <source>Export case note</source>
        <translation>导出案例记录</translation>
    </message>
    <message>
        <source>Open export (JSON)</source>
        <translation>打开导出文件（JSON）</translation>
    </message>
    <message>
        <source>Export c&amp;ase note…</source>
        <translation>导出案例记录(&amp;A)…</translation>
    </message>
    <message>
        <source>Include the a&amp;udit trail in exports</source>
        <translation>导出时包含审计记录(&amp;U)</translation>
    </message>
    <message>
        <source>Exports also carry who confirmed each write of their turns, when, and how it ended, as the audit trail keeps it.</source>
        <translation>导出时一并写入其中各轮次每个写操作由谁确认、何时确认以及结果如何，与审计记录一致。</translation>
    </message>
    <message>
        <source>The audit trail could not be read, so the export that was to carry it was not written; the local log says why.</source>
        <translation>无法读取审计记录，因此未写入应包含审计记录的导出；原因见本地日志。</translation>
    </message>
</context>
<context>
    <name>AgentConsole::ConversationHistory</name>
    <message>
        <source>The conversation could not be deleted; it is still stored. See the local log.</source>
        <translation>无法删除该对话，它仍保留在存储中。请查看本地日志。</translation>
    </message>
</context>
<context>
    <name>AgentConsole::DiagnosticsDock</name>
    <message>
        <source>Diagnostics</source>
        <translation>诊断</translation>
    </message>
    <message>
        <source>Circuit breakers</source>
        <translation>熔断器</translation>
    </message>
    <message>
        <source>None yet: each dependency gets its breaker at its first call.</source>
        <translation>暂无：每个依赖在首次调用时获得自己的熔断器。</translation>
    </message>
    <message>
        <source>Counters</source>
        <translation>计数器</translation>
    </message>
    <message>
        <source>Last turn and in total, over every turn in this data directory.</source>
        <translation>上一轮及累计（本数据目录中的所有轮次）。</translation>
    </message>
    <message>
        <source>Last turn</source>
        <translation>上一轮</translation>
    </message>
    <message>
        <source>Total</source>
        <translation>累计</translation>
    </message>
    <message>
        <source>Tool latency</source>
        <translation>工具耗时</translation>
    </message>
    <message>
        <source>No tool has been called yet.</source>
        <translation>尚未调用任何工具。</translation>
    </message>
    <message>
        <source>Setup</source>
        <translation>配置</translation>
    </message>
    <message>
        <source>Store: preparing…</source>
        <translation>数据库：准备中…</translation>
    </message>
    <message>
        <source>Store: not available</source>
        <translation>数据库：不可用</translation>
    </message>
    <message>
        <source>Model calls retried</source>
        <translation>模型调用重试次数</translation>
    </message>
    <message>
        <source>Tool calls retried</source>
        <translation>工具调用重试次数</translation>
    </message>
    <message>
        <source>Interrupted turns resumed</source>
        <translation>已恢复的中断轮次</translation>
    </message>
    <message>
        <source>Writes answered from the ledger, not repeated</source>
        <translation>由幂等台账直接答复、未重复执行的写操作</translation>
    </message>
    <message>
        <source>Same key with other details, refused</source>
        <translation>同一幂等键但参数不同、已拒绝</translation>
    </message>
    <message>
        <source>Writes whose outcome is unknown</source>
        <translation>结果未知的写操作</translation>
    </message>
    <message>
        <source>Circuit breakers opened</source>
        <translation>熔断器打开次数</translation>
    </message>
    <message>
        <source>Answers from a fallback model</source>
        <translation>由备用模型作答的次数</translation>
    </message>
    <message>
        <source>Operations owning more than one ticket</source>
        <translation>对应多张工单的操作</translation>
    </message>
    <message>
        <source>not checked yet</source>
        <translation>尚未检查</translation>
    </message>
    <message>
        <source>Backend: %1</source>
        <translation>后端：%1</translation>
    </message>
    <message>
        <source>Store: %1</source>
        <translation>数据库：%1</translation>
    </message>
    <message>
        <source>Tool retry: %1</source>
        <translation>工具重试：%1</translation>
    </message>
    <message>
        <source> (own policy: %1)</source>
        <translation>（独立策略：%1）</translation>
    </message>
    <message>
        <source>The retry policy of every tool call: attempts × per-attempt timeout, backoff, and the longest one call can take.</source>
        <translation>每次工具调用的重试策略：尝试次数 × 单次超时、退避，以及单次调用的最长耗时。</translation>
    </message>
    <message>
        <source>Faults: none</source>
        <translation>故障：无</translation>
    </message>
    <message>
        <source>Reset</source>
        <translation>重置</translation>
    </message>
    <message>
        <source>Close this breaker now and forget its recorded calls</source>
        <translation>立即关闭此熔断器并清除其调用记录</translation>
    </message>
    <message>
        <source>Reset the breaker of %1</source>
        <translation>重置 %1 的熔断器</translation>
    </message>
    <message>
        <source>Closed</source>
        <translation>正常</translation>
    </message>
    <message>
        <source>Half-open</source>
        <translation>半开</translation>
    </message>
    <message>
        <source>Open</source>
        <translation>已熔断</translation>
    </message>
    <message>
        <source>just now</source>
        <translation>刚刚</translation>
    </message>
    <message>
        <source>%1 s ago</source>
        <translation>%1 秒前</translation>
    </message>
    <message>
        <source>%1 min ago</source>
        <translation>%1 分钟前</translation>
    </message>
    <message>
        <source>%1 h ago</source>
        <translation>%1 小时前</translation>
    </message>
    <message>
        <source>%1 of %2 failed</source>
        <translation>%2 次中失败 %1 次</translation>
    </message>
    <message>
        <source>trial calls</source>
        <translation>试探调用</translation>
    </message>
    <message>
        <source>—</source>
        <translation>—</translation>
    </message>
    <message>
        <source>The last %1 calls are judged; once at least %2 are in, a failure rate of %3 % or more opens the breaker.</source>
        <translation>统计最近 %1 次调用；至少有 %2 次后，失败率达到 %3% 或以上即触发熔断。</translation>
    </message>
    <message>
        <source>probing</source>
        <translation>试探中</translation>
    </message>
    <message>
        <source>over: the next call probes</source>
        <translation>已结束：下一次调用将进行试探</translation>
    </message>
    <message>
        <source>%1 left of %2</source>
        <translation>剩余 %1（共 %2）</translation>
    </message>
    <message>
        <source>none yet</source>
        <translation>暂无</translation>
    </message>
    <message>
        <source>%1 → %2, %3</source>
        <translation>%1 → %2，%3</translation>
    </message>
    <message>
        <source>Isolations</source>
        <translation>隔离</translation>
    </message>
</context>
<context>
    <name>AgentConsole::DuplicateTicketAlert</name>
    <message>
        <source>A write was stored as several tickets. Tell whoever runs the ticket backend; this alert stays until the duplicates are gone.</source>
        <translation>一次写操作被保存成了多张工单。请通知工单后端的负责人；重复工单清除前此警告会一直显示。</translation>
    </message>
    <message>
        <source>Every write the agent plans gets one operationId, its idempotency key, which is sent to the backend so that a replayed write returns the ticket it already made. The last check found %1 key(s) with more than one ticket: the backend did not deduplicate them. The console checks at start and after every turn that wrote.</source>
        <translation>智能体计划的每次写操作都有一个操作编号（即幂等键），会发送给后端，使重放的写操作返回已创建的工单。上次检查发现 %1 个幂等键对应多张工单：后端没有去重。控制台会在启动时以及每次有写操作的轮次之后检查。</translation>
    </message>
    <message numerus="yes">
        <source>%n operation(s) own more than one ticket — check the backend</source>
        <translation>
            <numerusform>%n 个操作对应多张工单 — 请检查后端</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>AgentConsole::ExportViewer</name>
    <message>
        <source>%1 — exported conversation (read-only)</source>
        <translation>%1 — 导出的对话（只读）</translation>
    </message>
    <message numerus="yes">
        <source>From %1, exported %2 (UTC); %n turn(s).</source>
        <translation>
            <numerusform>来自 %1，导出于 %2（UTC）；共 %n 轮。</numerusform>
        </translation>
    </message>
    <message>
        <source>Agent Console %1 · Qt %2 · %3 · model %4 (%5) · backend %6</source>
        <translation>智能客服控制台 %1 · Qt %2 · %3 · 模型 %4（%5）· 后端 %6</translation>
    </message>
    <message>
        <source>Faults active then: %1</source>
        <translation>当时生效的故障：%1</translation>
    </message>
    <message>
        <source>No faults were active.</source>
        <translation>当时没有生效的故障。</translation>
    </message>
    <message>
        <source>Read-only: an exported conversation</source>
        <translation>只读：导出的对话</translation>
    </message>
    <message>
        <source>Copy as case note</source>
        <translation>复制为案例记录</translation>
    </message>
    <message>
        <source>Copy a short summary of these turns for a ticket: per question, what was found, what could not be looked up and the tickets made.</source>
        <translation>复制这些轮次的简短摘要，供填写工单：每个问题查到了什么、哪些未能查询、建了哪些工单。</translation>
    </message>
    <message>
        <source>Copied</source>
        <translation>已复制</translation>
    </message>
</context>
<context>
    <name>AgentConsole::FaultPanel</name>
    <message>
        <source>Added delay</source>
        <translation>附加延迟</translation>
    </message>
    <message>
        <source>Every attempt waits this long before it runs.</source>
        <translation>每次尝试在执行前先等待这么久。</translation>
    </message>
    <message>
        <source>Hangs (never answers)</source>
        <translation>挂起（永不响应）</translation>
    </message>
    <message>
        <source>Every attempt waits until it times out or is cancelled.</source>
        <translation>每次尝试一直等待，直到超时或被取消。</translation>
    </message>
    <message>
        <source>Fails the first attempts</source>
        <translation>前几次尝试失败</translation>
    </message>
    <message>
        <source>The first N attempts of every call fail with a temporary error; the ones after answer.</source>
        <translation>每次调用的前 N 次尝试以临时错误失败，之后的尝试正常响应。</translation>
    </message>
    <message>
        <source>Rejects every request</source>
        <translation>拒绝所有请求</translation>
    </message>
    <message>
        <source>The backend refuses every attempt; retrying does not help.</source>
        <translation>后端拒绝每一次尝试；重试无济于事。</translation>
    </message>
    <message>
        <source>Rejected with HTTP status</source>
        <translation>拒绝时的 HTTP 状态码</translation>
    </message>
    <message>
        <source>The HTTP status the rejection stands for.</source>
        <translation>拒绝所对应的 HTTP 状态码。</translation>
    </message>
    <message>
        <source>Access denied</source>
        <translation>无权访问</translation>
    </message>
    <message>
        <source>Every attempt is refused for lack of permission (401/403).</source>
        <translation>每次尝试都因权限不足被拒绝（401/403）。</translation>
    </message>
    <message>
        <source>Finds nothing</source>
        <translation>查无结果</translation>
    </message>
    <message>
        <source>Every call answers “not found”.</source>
        <translation>每次调用都返回“未找到”。</translation>
    </message>
    <message>
        <source>Fails at random</source>
        <translation>随机失败</translation>
    </message>
    <message>
        <source>Each attempt fails with this probability, drawn from the seed below: the same plan fails the same attempts in every run.</source>
        <translation>每次尝试按此概率失败，随机数取自下方的种子：同一方案每次运行都会在相同的尝试上失败。</translation>
    </message>
    <message>
        <source>Commits, then loses the answer</source>
        <translation>已提交但丢失响应</translation>
    </message>
    <message>
        <source>The write is done, then its answer is lost: only the status query by idempotency key can tell what happened.</source>
        <translation>写操作已完成，但响应丢失：只能通过幂等键查询状态来确认结果。</translation>
    </message>
    <message>
        <source>Internal error (crash)</source>
        <translation>内部错误（崩溃）</translation>
    </message>
    <message>
        <source>The tool itself fails with an internal error and an incident id.</source>
        <translation>工具本身因内部错误失败，并生成事件编号。</translation>
    </message>
    <message>
        <source>Every model call waits this long first.</source>
        <translation>每次模型调用先等待这么久。</translation>
    </message>
    <message>
        <source>Unavailable</source>
        <translation>不可用</translation>
    </message>
    <message>
        <source>Every model call fails as if the provider were down.</source>
        <translation>每次模型调用都失败，如同服务商宕机。</translation>
    </message>
    <message>
        <source>Rate-limited attempts</source>
        <translation>限流的尝试次数</translation>
    </message>
    <message>
        <source>The first N attempts of every model call answer 429 Too Many Requests.</source>
        <translation>每次模型调用的前 N 次尝试返回 429（请求过多）。</translation>
    </message>
    <message>
        <source>Retry-After asked for</source>
        <translation>要求的 Retry-After</translation>
    </message>
    <message>
        <source>The wait the 429 answers ask for.</source>
        <translation>429 响应要求的等待时间。</translation>
    </message>
    <message>
        <source>Quota exhausted</source>
        <translation>配额用尽</translation>
    </message>
    <message>
        <source>The provider refuses every call: the account&apos;s quota is used up.</source>
        <translation>服务商拒绝所有调用：账户配额已用完。</translation>
    </message>
    <message>
        <source>Malformed response</source>
        <translation>响应格式错误</translation>
    </message>
    <message>
        <source>Every response is not what the API promises.</source>
        <translation>每个响应都不符合接口约定。</translation>
    </message>
    <message>
        <source>Stream stalls</source>
        <translation>流式输出中断</translation>
    </message>
    <message>
        <source>A streamed answer stops halfway and sends nothing more.</source>
        <translation>流式回答中途停止，不再发送任何内容。</translation>
    </message>
    <message>
        <source>Tool arguments not JSON</source>
        <translation>工具参数不是 JSON</translation>
    </message>
    <message>
        <source>Every response that calls tools gives them arguments that cannot be read.</source>
        <translation>每个调用工具的响应都给出无法解析的参数。</translation>
    </message>
    <message>
        <source>Calls an unknown tool</source>
        <translation>调用不存在的工具</translation>
    </message>
    <message>
        <source>Every response that calls tools names one the console does not have.</source>
        <translation>每个调用工具的响应都指定一个控制台没有的工具。</translation>
    </message>
    <message>
        <source>Repeats a tool call</source>
        <translation>重复工具调用</translation>
    </message>
    <message>
        <source>A response that calls tools repeats its first call to N calls; over the per-message limit the extra calls are not run.</source>
        <translation>调用工具的响应把第一个调用重复成 N 个；超出单条消息上限的调用不会执行。</translation>
    </message>
    <message>
        <source>Faults</source>
        <translation>故障</translation>
    </message>
    <message>
        <source>&amp;Load fault file…</source>
        <translation>加载故障文件(&amp;L)…</translation>
    </message>
    <message>
        <source>Put a fault plan from a file in force (resources/faults)</source>
        <translation>使文件中的故障方案生效（resources/faults）</translation>
    </message>
    <message>
        <source>&amp;Clear all faults</source>
        <translation>清除所有故障(&amp;C)</translation>
    </message>
    <message>
        <source>Every tool and the model behave normally again, from the next attempt</source>
        <translation>从下一次尝试起，所有工具和模型恢复正常</translation>
    </message>
    <message>
        <source>&amp;Reset policies</source>
        <translation>重置策略(&amp;R)</translation>
    </message>
    <message>
        <source>Every tool gets the default retry policy again</source>
        <translation>所有工具恢复默认重试策略</translation>
    </message>
    <message>
        <source>What to break</source>
        <translation>故障目标</translation>
    </message>
    <message>
        <source>&amp;What to break:</source>
        <translation>故障目标(&amp;W)：</translation>
    </message>
    <message>
        <source>Random failures are drawn from this seed: the same seed fails the same attempts in every run.</source>
        <translation>随机失败取自此种子：相同的种子每次运行都会在相同的尝试上失败。</translation>
    </message>
    <message>
        <source>&amp;Seed for random failures:</source>
        <translation>随机失败种子(&amp;S)：</translation>
    </message>
    <message>
        <source>support-sim faults (REST backend)</source>
        <translation>support-sim 故障（REST 后端）</translation>
    </message>
    <message>
        <source>support-sim faults, as JSON</source>
        <translation>support-sim 故障（JSON）</translation>
    </message>
    <message>
        <source>The body of support-sim&apos;s PUT /sim/faults, e.g. {&quot;routes&quot;: {&quot;logistics&quot;: {&quot;status&quot;: 503, &quot;times&quot;: 2}}}. Empty resets the sim&apos;s faults.</source>
        <translation>support-sim 的 PUT /sim/faults 请求体，例如 {&quot;routes&quot;: {&quot;logistics&quot;: {&quot;status&quot;: 503, &quot;times&quot;: 2}}}。留空则重置模拟器的故障。</translation>
    </message>
    <message>
        <source>{&quot;routes&quot;: {&quot;logistics&quot;: {&quot;status&quot;: 503}}}</source>
        <translation>{&quot;routes&quot;: {&quot;logistics&quot;: {&quot;status&quot;: 503}}}</translation>
    </message>
    <message>
        <source>Send to support-&amp;sim</source>
        <translation>发送到 support-sim(&amp;S)</translation>
    </message>
    <message>
        <source>Part of the plan is not in force</source>
        <translation>部分故障方案未生效</translation>
    </message>
    <message>
        <source>on</source>
        <translation>开</translation>
    </message>
    <message>
        <source> ms</source>
        <translation> 毫秒</translation>
    </message>
    <message>
        <source> attempts</source>
        <translation> 次尝试</translation>
    </message>
    <message>
        <source>off</source>
        <translation>关</translation>
    </message>
    <message>
        <source>400 Bad request</source>
        <translation>400 请求错误</translation>
    </message>
    <message>
        <source>404 Not found</source>
        <translation>404 未找到</translation>
    </message>
    <message>
        <source>409 Conflict</source>
        <translation>409 冲突</translation>
    </message>
    <message>
        <source>422 Unprocessable</source>
        <translation>422 无法处理</translation>
    </message>
    <message>
        <source>%1 (%2)</source>
        <translation>%1（%2）</translation>
    </message>
    <message>
        <source>Backend (every tool without faults of its own)</source>
        <translation>后端（所有未单独设置故障的工具）</translation>
    </message>
    <message>
        <source>Model: primary provider</source>
        <translation>模型：主服务商</translation>
    </message>
    <message>
        <source>Model: primary provider (%1)</source>
        <translation>模型：主服务商（%1）</translation>
    </message>
    <message>
        <source>Model: secondary provider (none configured)</source>
        <translation>模型：备用服务商（未配置）</translation>
    </message>
    <message>
        <source>Model: secondary provider</source>
        <translation>模型：备用服务商</translation>
    </message>
    <message>
        <source>Model: secondary provider (%1)</source>
        <translation>模型：备用服务商（%1）</translation>
    </message>
    <message>
        <source>Not applied: %1</source>
        <translation>未生效：%1</translation>
    </message>
    <message>
        <source>Not applied</source>
        <translation>未生效</translation>
    </message>
    <message>
        <source>Not applied: not a JSON object (%1)</source>
        <translation>未生效：不是 JSON 对象（%1）</translation>
    </message>
    <message>
        <source>top level</source>
        <translation>顶层</translation>
    </message>
    <message>
        <source>No faults</source>
        <translation>无故障</translation>
    </message>
    <message>
        <source>Custom retry policy: %1</source>
        <translation>自定义重试策略：%1</translation>
    </message>
    <message>
        <source>Custom retry policies: %1</source>
        <translation>自定义重试策略：%1</translation>
    </message>
    <message>
        <source>Load a fault file</source>
        <translation>加载故障文件</translation>
    </message>
    <message>
        <source>Fault plans (*.json)</source>
        <translation>故障方案 (*.json)</translation>
    </message>
    <message>
        <source>The fault file was not loaded</source>
        <translation>故障文件未加载</translation>
    </message>
    <message numerus="yes">
        <source>%1 — %n fault(s)</source>
        <translation>
            <numerusform>%1 — %n 个故障</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n fault(s) active</source>
        <translation>
            <numerusform>%n 个故障生效中</numerusform>
        </translation>
    </message>
    <message>
        <source>A scenario is running; its faults hold until it ends.</source>
        <translation>有场景正在运行；在它结束前，它的故障设置一直有效。</translation>
    </message>
</context>
<context>
    <name>AgentConsole::FaultPlan</name>
    <message>
        <source>+%1 ms</source>
        <translation>+%1 毫秒</translation>
    </message>
    <message>
        <source>hang</source>
        <translation>挂起</translation>
    </message>
    <message>
        <source>internal error</source>
        <translation>内部错误</translation>
    </message>
    <message>
        <source>first %1 attempts fail</source>
        <translation>前 %1 次尝试失败</translation>
    </message>
    <message>
        <source>rejected</source>
        <translation>拒绝请求</translation>
    </message>
    <message>
        <source>rejected (%1)</source>
        <translation>拒绝请求（%1）</translation>
    </message>
    <message>
        <source>access denied</source>
        <translation>无权访问</translation>
    </message>
    <message>
        <source>not found</source>
        <translation>查无结果</translation>
    </message>
    <message>
        <source>fails %1%</source>
        <translation>失败率 %1%</translation>
    </message>
    <message>
        <source>answer lost after the commit</source>
        <translation>提交后丢失响应</translation>
    </message>
    <message>
        <source>none</source>
        <translation>无</translation>
    </message>
    <message>
        <source>unavailable</source>
        <translation>不可用</translation>
    </message>
    <message>
        <source>first %1 attempts rate-limited (retry after %2 ms)</source>
        <translation>前 %1 次尝试被限流（%2 毫秒后重试）</translation>
    </message>
    <message>
        <source>quota exhausted</source>
        <translation>配额用尽</translation>
    </message>
    <message>
        <source>unreadable answer</source>
        <translation>响应无法解析</translation>
    </message>
    <message>
        <source>stream stalls</source>
        <translation>流式输出中断</translation>
    </message>
    <message>
        <source>broken tool arguments</source>
        <translation>工具参数损坏</translation>
    </message>
    <message>
        <source>calls an unknown tool</source>
        <translation>调用不存在的工具</translation>
    </message>
    <message>
        <source>repeats a tool call %1 times</source>
        <translation>将一个工具调用重复 %1 次</translation>
    </message>
    <message>
        <source>%1: %2</source>
        <translation>%1：%2</translation>
    </message>
    <message>
        <source>other tools: %1</source>
        <translation>其他工具：%1</translation>
    </message>
    <message>
        <source>primary model</source>
        <translation>主模型</translation>
    </message>
    <message>
        <source>model</source>
        <translation>模型</translation>
    </message>
    <message>
        <source>secondary model: %1</source>
        <translation>备用模型：%1</translation>
    </message>
    <message>
        <source>expected true or false</source>
        <translation>应为 true 或 false</translation>
    </message>
    <message>
        <source>only for tools that write (%1)</source>
        <translation>仅适用于有写操作的工具（%1）</translation>
    </message>
    <message>
        <source>unknown key</source>
        <translation>未知的键</translation>
    </message>
    <message>
        <source>expected an object</source>
        <translation>应为对象</translation>
    </message>
    <message>
        <source>no such route (the routes are %1)</source>
        <translation>没有这个路由（可用路由：%1）</translation>
    </message>
    <message>
        <source>fault plan: %1</source>
        <translation>故障方案：%1</translation>
    </message>
    <message>
        <source>not valid JSON at offset %1 (%2)</source>
        <translation>第 %1 个字符处不是有效的 JSON（%2）</translation>
    </message>
    <message>
        <source>the top level must be an object</source>
        <translation>最外层必须是对象</translation>
    </message>
    <message>
        <source>expected a string</source>
        <translation>应为字符串</translation>
    </message>
    <message>
        <source>no such tool (the tools are %1)</source>
        <translation>没有这个工具（可用工具：%1）</translation>
    </message>
    <message>
        <source>the primary is given as models.primary too</source>
        <translation>主模型已在 models.primary 中给出，不能重复</translation>
    </message>
    <message>
        <source>unknown key (primary or secondary)</source>
        <translation>未知的键（应为 primary 或 secondary）</translation>
    </message>
    <message>
        <source>expected a whole number from %1 to %2</source>
        <translation>应为 %1 到 %2 之间的整数</translation>
    </message>
    <message>
        <source>expected a number from %1 to %2</source>
        <translation>应为 %1 到 %2 之间的数</translation>
    </message>
    <message>
        <source>expected %1 or %2</source>
        <translation>应为 %1 或 %2</translation>
    </message>
    <message>
        <source>, </source>
        <comment>between the values of a list</comment>
        <translation>、</translation>
    </message>
</context>
<context>
    <name>AgentConsole::HistorySidebar</name>
    <message>
        <source>Answered</source>
        <translation>已回答</translation>
    </message>
    <message>
        <source>Partly answered</source>
        <translation>部分回答</translation>
    </message>
    <message>
        <source>Not answered</source>
        <translation>未回答</translation>
    </message>
    <message>
        <source>Cancelled</source>
        <translation>已取消</translation>
    </message>
    <message>
        <source>Interrupted</source>
        <translation>已中断</translation>
    </message>
    <message>
        <source>Failed</source>
        <translation>失败</translation>
    </message>
    <message>
        <source>History</source>
        <translation>历史记录</translation>
    </message>
    <message>
        <source>Search text or order id</source>
        <translation>搜索文字或订单号</translation>
    </message>
    <message>
        <source>Search conversations</source>
        <translation>搜索对话</translation>
    </message>
    <message>
        <source>Stored conversations</source>
        <translation>已保存的对话</translation>
    </message>
    <message>
        <source>Show older</source>
        <translation>显示更早的</translation>
    </message>
    <message>
        <source>Delete…</source>
        <translation>删除…</translation>
    </message>
    <message>
        <source>Delete the selected conversation from this console&apos;s journal</source>
        <translation>从本控制台的日志库中删除所选对话</translation>
    </message>
    <message>
        <source>Open</source>
        <translation>打开</translation>
    </message>
    <message>
        <source>No stored conversations yet.</source>
        <translation>还没有保存的对话。</translation>
    </message>
    <message>
        <source>No conversation matches “%1”.</source>
        <translation>没有与“%1”匹配的对话。</translation>
    </message>
    <message>
        <source>(no question)</source>
        <translation>（无问题）</translation>
    </message>
    <message>
        <source>Delete this conversation?</source>
        <translation>删除此对话？</translation>
    </message>
    <message>
        <source>“%1” and all its turns are deleted from this console&apos;s journal. This cannot be undone.</source>
        <translation>“%1”及其所有轮次将从本控制台的日志库中删除。此操作无法撤销。</translation>
    </message>
    <message>
        <source>Delete</source>
        <translation>删除</translation>
    </message>
    <message numerus="yes">
        <source>%n turn(s)</source>
        <translation>
            <numerusform>%n 轮</numerusform>
        </translation>
    </message>
    <message>
        <source>Hide scenario runs</source>
        <translation>隐藏场景运行</translation>
    </message>
    <message>
        <source>Leave out the conversations that Scenarios ran</source>
        <translation>不显示由场景运行产生的对话</translation>
    </message>
    <message>
        <source>Scenario run</source>
        <translation>场景运行</translation>
    </message>
</context>
<context>
    <name>AgentConsole::InterruptedTurnsBanner</name>
    <message>
        <source>Resume</source>
        <translation>恢复</translation>
    </message>
    <message>
        <source>Carry the interrupted requests on, one at a time, from their last checkpoint</source>
        <translation>从上一个检查点起逐个继续处理中断的请求</translation>
    </message>
    <message>
        <source>Dismiss</source>
        <translation>忽略</translation>
    </message>
    <message>
        <source>Stop offering them; their records are kept</source>
        <translation>不再提示；记录会保留</translation>
    </message>
    <message>
        <source>The console stopped before answering it. Resume carries it on from its last checkpoint: tools that already ran are not run again, and a ticket you had not confirmed asks you again.</source>
        <translation>控制台在答复前停止了。“恢复”会从上一个检查点继续：已执行的工具不会再次执行，尚未确认的工单会再次请您确认。</translation>
    </message>
    <message>
        <source>The console stopped before answering them. Resume carries them on one at a time from their last checkpoint: tools that already ran are not run again, and a ticket you had not confirmed asks you again.</source>
        <translation>控制台在答复前停止了。“恢复”会从各自的上一个检查点逐个继续：已执行的工具不会再次执行，尚未确认的工单会再次请您确认。</translation>
    </message>
    <message>
        <source>Resuming interrupted request %1 of %2 — “%3”</source>
        <translation>正在恢复第 %1 个中断的请求（共 %2 个）— “%3”</translation>
    </message>
    <message>
        <source>Its answer appears in the conversation below, marked “Resumed”. Cancel stops it and offers the rest again.</source>
        <translation>其回答会显示在下方对话中，并标记为“已恢复”。“取消”会停止它，并再次提示其余请求。</translation>
    </message>
    <message numerus="yes">
        <source>%n interrupted request(s) can be resumed — “%1”</source>
        <translation>
            <numerusform>%n 个中断的请求可以恢复 — “%1”</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>AgentConsole::IsolateDialog</name>
    <message>
        <source>Isolate a dependency</source>
        <translation>隔离一个依赖</translation>
    </message>
    <message>
        <source>Every console of the team refuses its calls at once, with your staff id, the time and this reason, until you lift it or it ends.</source>
        <translation>团队的每个控制台都会立即拒绝对它的调用，并显示你的工号、时间和此原因，直到你解除隔离或隔离到期。</translation>
    </message>
    <message>
        <source>Dependency:</source>
        <translation>依赖：</translation>
    </message>
    <message>
        <source>Required: staff read it on every refused call</source>
        <translation>必填：每次被拒绝的调用都会向员工显示</translation>
    </message>
    <message>
        <source>Reason:</source>
        <translation>原因：</translation>
    </message>
    <message>
        <source>Ends at</source>
        <translation>结束于</translation>
    </message>
    <message>
        <source>Isolate</source>
        <translation>隔离</translation>
    </message>
</context>
<context>
    <name>AgentConsole::Isolations</name>
    <message>
        <source>No team database: isolations need --team.</source>
        <translation>没有团队数据库：隔离需要 --team。</translation>
    </message>
    <message>
        <source>Connecting to the team database…</source>
        <translation>正在连接团队数据库…</translation>
    </message>
    <message>
        <source>Team database: connected as %1 (shift lead).</source>
        <translation>团队数据库：已以 %1 身份连接（值班主管）。</translation>
    </message>
    <message>
        <source>Team database: connected as %1 (staff; only a shift lead can isolate or lift).</source>
        <translation>团队数据库：已以 %1 身份连接（员工；只有值班主管能隔离或解除）。</translation>
    </message>
    <message>
        <source>The team database cannot be reached; trying again. The isolations read at %1 stay in force.</source>
        <translation>无法连接团队数据库，正在重试。%1 读取的隔离继续有效。</translation>
    </message>
    <message>
        <source>never</source>
        <translation>从未</translation>
    </message>
    <message>
        <source>Isolated by the shift lead (staff %1) at %2: %3 (until %4)</source>
        <translation>已被值班主管（工号 %1）于 %2 隔离：%3（至 %4）</translation>
    </message>
    <message>
        <source>Isolated by the shift lead (staff %1) at %2: %3</source>
        <translation>已被值班主管（工号 %1）于 %2 隔离：%3</translation>
    </message>
    <message>
        <source>Isolated</source>
        <translation>已隔离</translation>
    </message>
    <message>
        <source>not attempted · isolated by the shift lead</source>
        <translation>未尝试 · 已被值班主管隔离</translation>
    </message>
    <message>
        <source>%1: %2</source>
        <translation>%1：%2</translation>
    </message>
    <message>
        <source>Only a shift lead can lift an isolation: your database role is not a member of agentconsole_lead.</source>
        <translation>只有值班主管才能解除隔离：你的数据库角色不是 agentconsole_lead 的成员。</translation>
    </message>
    <message>
        <source>Done: %1 is restored for every console of the team.</source>
        <translation>完成：团队的每个控制台都已恢复 %1。</translation>
    </message>
    <message>
        <source>Done: every console of the team now refuses %1.</source>
        <translation>完成：团队的每个控制台现在都拒绝调用 %1。</translation>
    </message>
    <message>
        <source>Isolations need a team database (--team).</source>
        <translation>隔离需要团队数据库（--team）。</translation>
    </message>
    <message>
        <source>Only a shift lead can isolate or lift a dependency: your database role is not a member of agentconsole_lead. Nothing was changed.</source>
        <translation>只有值班主管才能隔离或解除依赖：你的数据库角色不是 agentconsole_lead 的成员。未做任何更改。</translation>
    </message>
    <message>
        <source>%1 is not a dependency this console knows.</source>
        <translation>%1 不是本控制台已知的依赖。</translation>
    </message>
    <message>
        <source>%1 is not a dependency this console knows. Known: %2.</source>
        <translation>%1 不是本控制台已知的依赖。已知：%2。</translation>
    </message>
    <message>
        <source>Give a reason: staff read it on every call the isolation refuses.</source>
        <translation>请填写原因：隔离拒绝的每次调用都会向员工显示它。</translation>
    </message>
    <message>
        <source>The end time has already passed. Nothing was changed.</source>
        <translation>结束时间已过。未做任何更改。</translation>
    </message>
    <message>
        <source>%1 is not isolated.</source>
        <translation>%1 未被隔离。</translation>
    </message>
    <message>
        <source>The team database cannot be reached; nothing was changed. Try again.</source>
        <translation>无法连接团队数据库；未做任何更改。请重试。</translation>
    </message>
</context>
<context>
    <name>AgentConsole::IsolationsPanel</name>
    <message>
        <source>No dependency is isolated.</source>
        <translation>没有被隔离的依赖。</translation>
    </message>
    <message>
        <source>Isolate…</source>
        <translation>隔离…</translation>
    </message>
    <message>
        <source>Take a dependency offline for every console of the team</source>
        <translation>为团队的每个控制台下线一个依赖</translation>
    </message>
    <message>
        <source>Lift</source>
        <translation>解除</translation>
    </message>
    <message>
        <source>Restore %1 for every console of the team</source>
        <translation>为团队的每个控制台恢复 %1</translation>
    </message>
</context>
<context>
    <name>AgentConsole::LatencyHistogram</name>
    <message>
        <source>Tool latency</source>
        <translation>工具耗时</translation>
    </message>
    <message>
        <source>%1 %2</source>
        <translation>%1 %2</translation>
    </message>
    <message>
        <source>%1: 1 call, %2</source>
        <translation>%1：1 次调用，%2</translation>
    </message>
    <message numerus="yes">
        <source>%1: %n call(s) took %2</source>
        <translation>
            <numerusform>%1：%n 次调用耗时 %2</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%1: %n call(s), longest %2</source>
        <translation>
            <numerusform>%1：%n 次调用，最长 %2</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>AgentConsole::Ledger</name>
    <message>
        <source>The ledger spec &apos;sqlite:&apos; names no file.</source>
        <translation>幂等台账配置“sqlite:”没有指定文件。</translation>
    </message>
    <message>
        <source>Unknown ledger; use &apos;sqlite&apos;, &apos;sqlite:/path/file&apos; or postgresql://user:password@host:port/database.</source>
        <translation>无法识别的幂等台账；请使用“sqlite”、“sqlite:/路径/文件”或 postgresql://user:password@host:port/database。</translation>
    </message>
    <message>
        <source>The ledger URL is not valid; expected postgresql://user:password@host:port/database.</source>
        <translation>幂等台账地址无效；应为 postgresql://user:password@host:port/database。</translation>
    </message>
    <message>
        <source>The ledger URL has an invalid port.</source>
        <translation>幂等台账地址中的端口无效。</translation>
    </message>
    <message>
        <source>The ledger URL names no single database.</source>
        <translation>幂等台账地址没有指定唯一的数据库。</translation>
    </message>
    <message>
        <source>PostgreSQL ledger %1</source>
        <translation>PostgreSQL 幂等台账 %1</translation>
    </message>
    <message>
        <source>SQLite ledger %1</source>
        <translation>SQLite 幂等台账 %1</translation>
    </message>
    <message>
        <source>The %1 cannot be used: the Qt Sql driver %2 is missing.</source>
        <translation>无法使用 %1：缺少 Qt 数据库驱动 %2。</translation>
    </message>
    <message>
        <source>Cannot reach the %1.</source>
        <translation>无法连接 %1。</translation>
    </message>
    <message>
        <source>Cannot open the %1.</source>
        <translation>无法打开 %1。</translation>
    </message>
    <message>
        <source>Cannot set up the %1.</source>
        <translation>无法初始化 %1。</translation>
    </message>
    <message>
        <source>The %1 has schema version %2, newer than this Agent Console knows; update the console.</source>
        <translation>%1 的结构版本为 %2，比当前智能客服控制台所支持的更新；请更新控制台。</translation>
    </message>
    <message>
        <source>Cannot update the schema of the %1.</source>
        <translation>无法更新 %1 的结构。</translation>
    </message>
    <message>
        <source>Cannot use the %1.</source>
        <translation>无法使用 %1。</translation>
    </message>
    <message>
        <source>The %1 refused the sign-in of its user: put the password in the keychain, ~/.pgpass or a PostgreSQL service file (docs/TEAM.md).</source>
        <translation>%1 拒绝了其用户的登录：请把密码存入系统钥匙串、~/.pgpass 或 PostgreSQL 服务文件（见 docs/TEAM.md）。</translation>
    </message>
</context>
<context>
    <name>AgentConsole::ManagedPolicy</name>
    <message>
        <source>%1: %2</source>
        <comment>a field of the policy, then what is wrong</comment>
        <translation>%1：%2</translation>
    </message>
    <message>
        <source>is missing</source>
        <translation>缺失</translation>
    </message>
    <message>
        <source>expected text</source>
        <translation>应为文本</translation>
    </message>
    <message>
        <source>longer than %1 characters</source>
        <translation>超过 %1 个字符</translation>
    </message>
    <message>
        <source>expected one line of text</source>
        <translation>应为单行文本</translation>
    </message>
    <message>
        <source>expected an object</source>
        <translation>应为对象</translation>
    </message>
    <message>
        <source>expected a list of names</source>
        <translation>应为名称列表</translation>
    </message>
    <message>
        <source>more than %1 entries</source>
        <translation>超过 %1 项</translation>
    </message>
    <message>
        <source>&quot;%1&quot; is named twice</source>
        <translation>“%1”出现了两次</translation>
    </message>
    <message>
        <source>is not a field of a policy</source>
        <translation>不是策略中的字段</translation>
    </message>
    <message>
        <source>expected a whole number</source>
        <translation>应为整数</translation>
    </message>
    <message>
        <source>expected a number</source>
        <translation>应为数字</translation>
    </message>
    <message>
        <source>expected none, full or decorrelated</source>
        <translation>应为 none、full 或 decorrelated</translation>
    </message>
    <message>
        <source>larger than 1 MiB</source>
        <translation>大于 1 MiB</translation>
    </message>
    <message>
        <source>not JSON (%1 at character %2)</source>
        <translation>不是 JSON（第 %2 个字符处：%1）</translation>
    </message>
    <message>
        <source>expected a JSON object</source>
        <translation>应为 JSON 对象</translation>
    </message>
    <message>
        <source>nested deeper than %1 levels</source>
        <translation>嵌套超过 %1 层</translation>
    </message>
    <message>
        <source>version: is empty</source>
        <translation>version：为空</translation>
    </message>
    <message>
        <source>%1: more than %2 tools</source>
        <translation>%1：超过 %2 个工具</translation>
    </message>
    <message>
        <source>%1: not a tool&apos;s name</source>
        <translation>%1：不是工具名称</translation>
    </message>
    <message>
        <source>%1: expected an object</source>
        <translation>%1：应为对象</translation>
    </message>
    <message>
        <source>mcpServers.allowed: is missing</source>
        <translation>mcpServers.allowed：缺失</translation>
    </message>
    <message>
        <source>locked: &quot;%1&quot; is not a setting a policy can lock (%2)</source>
        <translation>locked：“%1”不是策略可以锁定的设置（%2）</translation>
    </message>
</context>
<context>
    <name>AgentConsole::McpConfig</name>
    <message>
        <source>larger than %1 bytes</source>
        <translation>大于 %1 字节</translation>
    </message>
    <message>
        <source>not JSON: %1 at offset %2</source>
        <translation>不是有效的 JSON（第 %2 个字符处：%1）</translation>
    </message>
    <message>
        <source>expected an object with an &quot;mcpServers&quot; object</source>
        <translation>应为包含“mcpServers”对象的对象</translation>
    </message>
    <message>
        <source>more than %1 servers</source>
        <translation>服务器超过 %1 个</translation>
    </message>
    <message>
        <source>server &quot;%1&quot;: %2</source>
        <translation>服务器“%1”：%2</translation>
    </message>
    <message>
        <source>name it with 1 to 32 letters, digits, &apos;_&apos; or &apos;-&apos;</source>
        <translation>名称须为 1 到 32 个字母、数字、“_”或“-”</translation>
    </message>
    <message>
        <source>expected an object</source>
        <translation>应为对象</translation>
    </message>
    <message>
        <source>give either &quot;command&quot; (stdio) or &quot;url&quot; (HTTP)</source>
        <translation>请给出“command”（stdio）或“url”（HTTP）二者之一</translation>
    </message>
    <message>
        <source>the old HTTP+SSE transport is not supported; use the server&apos;s Streamable HTTP endpoint</source>
        <translation>不支持旧的 HTTP+SSE 传输方式；请使用服务器的 Streamable HTTP 端点</translation>
    </message>
    <message>
        <source>unknown &quot;type&quot; (stdio, http or streamable-http)</source>
        <translation>未知的“type”（应为 stdio、http 或 streamable-http）</translation>
    </message>
    <message>
        <source>&quot;command&quot; must be a non-empty string</source>
        <translation>“command”必须是非空字符串</translation>
    </message>
    <message>
        <source>&quot;args&quot; must be an array of strings</source>
        <translation>“args”必须是字符串数组</translation>
    </message>
    <message>
        <source>more than %1 args</source>
        <translation>args 超过 %1 个</translation>
    </message>
    <message>
        <source>&quot;env&quot; must be an object of strings</source>
        <translation>“env”必须是值为字符串的对象</translation>
    </message>
    <message>
        <source>more than %1 env entries</source>
        <translation>env 条目超过 %1 个</translation>
    </message>
    <message>
        <source>&quot;env&quot; must map names to strings</source>
        <translation>“env”必须把名称映射为字符串</translation>
    </message>
    <message>
        <source>&quot;url&quot; must be an http:// or https:// URL</source>
        <translation>“url”必须是 http:// 或 https:// 地址</translation>
    </message>
    <message>
        <source>&quot;headers&quot; must be an object of strings</source>
        <translation>“headers”必须是值为字符串的对象</translation>
    </message>
    <message>
        <source>more than %1 headers</source>
        <translation>请求头超过 %1 个</translation>
    </message>
    <message>
        <source>header &quot;%1&quot;: a token name and a one-line string value</source>
        <translation>请求头“%1”：名称须为合法的标记，值须为单行字符串</translation>
    </message>
    <message>
        <source>%1: no such file</source>
        <translation>%1：文件不存在</translation>
    </message>
    <message>
        <source>%1: not a regular file</source>
        <translation>%1：不是普通文件</translation>
    </message>
    <message>
        <source>%1: larger than %2 bytes</source>
        <translation>%1：大于 %2 字节</translation>
    </message>
    <message>
        <source>%1: %2</source>
        <translation>%1：%2</translation>
    </message>
    <message>
        <source>&quot;oauth&quot; must be false or an object</source>
        <translation>“oauth”必须是 false 或对象</translation>
    </message>
    <message>
        <source>&quot;oauth&quot;: &quot;scopes&quot; must be an array of strings</source>
        <translation>“oauth”：“scopes”必须是字符串数组</translation>
    </message>
    <message>
        <source>&quot;oauth&quot;: &quot;%1&quot; must be a string</source>
        <translation>“oauth”：“%1”必须是字符串</translation>
    </message>
    <message>
        <source>&quot;oauth&quot;: unknown field &quot;%1&quot;</source>
        <translation>“oauth”：未知字段“%1”</translation>
    </message>
    <message>
        <source>&quot;oauth&quot;: a &quot;clientSecret&quot; needs its &quot;clientId&quot;</source>
        <translation>“oauth”：“clientSecret”需要同时给出对应的“clientId”</translation>
    </message>
    <message>
        <source>&quot;hardMaximumMs&quot; must not be shorter than &quot;idleTimeoutMs&quot;</source>
        <translation>“hardMaximumMs”不能短于“idleTimeoutMs”</translation>
    </message>
    <message>
        <source>&quot;%1&quot; must be whole milliseconds from %2 to %3</source>
        <translation>“%1”必须是 %2 到 %3 之间的整数毫秒</translation>
    </message>
</context>
<context>
    <name>AgentConsole::McpConfigDialog</name>
    <message>
        <source>MCP servers (mcp.json)</source>
        <translation>MCP 服务器 (mcp.json)</translation>
    </message>
    <message>
        <source>The MCP servers the console starts, from %1.</source>
        <translation>控制台启动的 MCP 服务器，来自 %1。</translation>
    </message>
    <message>
        <source>Format, as the desktop clients use it: {&quot;mcpServers&quot;: {&quot;name&quot;: {&quot;command&quot;, &quot;args&quot;, &quot;env&quot;} for a local program, or {&quot;url&quot;, &quot;headers&quot;} for a server over HTTP}}.</source>
        <translation>格式与桌面客户端相同：{&quot;mcpServers&quot;: {&quot;名称&quot;: 本地程序写 {&quot;command&quot;, &quot;args&quot;, &quot;env&quot;}，HTTP 服务器写 {&quot;url&quot;, &quot;headers&quot;}}}。</translation>
    </message>
    <message>
        <source>Secret values of headers and env (Authorization, …_TOKEN, …_KEY) are moved to the OS keychain when you save; the file keeps ${keychain:…} in their place. Changes apply when the console restarts.</source>
        <translation>保存时，headers 和 env 中的机密值（Authorization、…_TOKEN、…_KEY）会移入系统钥匙串；文件中以 ${keychain:…} 代替。更改在控制台重新启动后生效。</translation>
    </message>
    <message>
        <source>Reading mcp.json…</source>
        <translation>正在读取 mcp.json…</translation>
    </message>
    <message>
        <source>mcp.json</source>
        <translation>mcp.json</translation>
    </message>
    <message>
        <source>Insert &amp;example</source>
        <translation>插入示例(&amp;E)</translation>
    </message>
    <message>
        <source>Puts a stdio server and an HTTP server into the empty editor, to change to your own.</source>
        <translation>在空白编辑器中放入一个 stdio 服务器和一个 HTTP 服务器示例，可改成你自己的。</translation>
    </message>
    <message>
        <source>&amp;Save</source>
        <translation>保存(&amp;S)</translation>
    </message>
    <message>
        <source>No mcp.json yet: write one, or insert the example.</source>
        <translation>尚无 mcp.json：请编写一个，或插入示例。</translation>
    </message>
    <message>
        <source>mcp.json cannot be edited here</source>
        <translation>无法在此编辑 mcp.json</translation>
    </message>
    <message>
        <source>%1: %2</source>
        <translation>%1：%2</translation>
    </message>
    <message>
        <source>The console refuses this file at start</source>
        <translation>控制台启动时会拒绝此文件</translation>
    </message>
    <message>
        <source>Not saved: the file is as it was</source>
        <translation>未保存：文件保持原样</translation>
    </message>
</context>
<context>
    <name>AgentConsole::McpConfigFile</name>
    <message>
        <source>it is not a regular file</source>
        <translation>它不是普通文件</translation>
    </message>
    <message>
        <source>it is larger than %1 bytes</source>
        <translation>它大于 %1 字节</translation>
    </message>
    <message>
        <source>%1 is not a regular file</source>
        <translation>%1 不是普通文件</translation>
    </message>
    <message>
        <source>cannot make the folder %1</source>
        <translation>无法创建文件夹 %1</translation>
    </message>
    <message>
        <source>header &quot;%1&quot;</source>
        <translation>请求头“%1”</translation>
    </message>
    <message>
        <source>env &quot;%1&quot;</source>
        <translation>环境变量“%1”</translation>
    </message>
    <message>
        <source>the text is empty; for no servers at all, write {&quot;mcpServers&quot;: {}}</source>
        <translation>文本为空；如不需要任何服务器，请写 {&quot;mcpServers&quot;: {}}</translation>
    </message>
    <message>
        <source>server &quot;%1&quot;: no keychain is available to keep the secret of %2, and it is not written to the file in plain text</source>
        <translation>服务器“%1”：没有可用的系统钥匙串来保存%2的机密，且不会以明文写入文件</translation>
    </message>
    <message>
        <source>server &quot;%1&quot;: the keychain did not take the secret of %2 (%3); it is not written to the file in plain text</source>
        <translation>服务器“%1”：系统钥匙串未能保存%2的机密（%3）；不会以明文写入文件</translation>
    </message>
    <message>
        <source>the file could not be written: %1</source>
        <translation>无法写入文件：%1</translation>
    </message>
    <message>
        <source>the OAuth client secret</source>
        <translation>OAuth 客户端密钥</translation>
    </message>
</context>
<context>
    <name>AgentConsole::McpPolicyDialog</name>
    <message>
        <source>MCP tool policies</source>
        <translation>MCP 工具策略</translation>
    </message>
    <message>
        <source>Each MCP tool runs as its server&apos;s annotations say, unless you choose otherwise here. Annotations are hints from a server that may not be trusted. Whatever the policy, arguments are validated and every attempt keeps its deadline; the change applies from each tool&apos;s next call.</source>
        <translation>每个 MCP 工具按其服务器的注解运行，除非您在此另行选择。注解是服务器给出的提示，未必可信。无论何种策略，参数都会校验，每次尝试都有时限；更改从各工具的下一次调用起生效。</translation>
    </message>
    <message>
        <source>No tools listed now; a server shows them once it is ready.</source>
        <translation>当前未列出工具；服务器就绪后会显示。</translation>
    </message>
    <message>
        <source>annotations: %1</source>
        <translation>注解：%1</translation>
    </message>
    <message>
        <source>As annotated (%1)</source>
        <translation>按注解（%1）</translation>
    </message>
    <message>
        <source>Policy of %1</source>
        <translation>%1 的策略</translation>
    </message>
    <message>
        <source>No MCP tool is listed now. A server that is starting or down shows its tools once it is ready.</source>
        <translation>当前没有列出 MCP 工具。正在启动或不可用的服务器就绪后会显示其工具。</translation>
    </message>
    <message>
        <source>Not applied: %1</source>
        <translation>未应用：%1</translation>
    </message>
</context>
<context>
    <name>AgentConsole::McpQuestionDialog</name>
    <message>
        <source>Question from %1</source>
        <translation>来自 %1 的问题</translation>
    </message>
    <message>
        <source>The MCP server &quot;%1&quot; asks:</source>
        <translation>MCP 服务器“%1”问：</translation>
    </message>
    <message>
        <source>name@example.com</source>
        <translation>name@example.com</translation>
    </message>
    <message>
        <source>https://…</source>
        <translation>https://…</translation>
    </message>
    <message>
        <source>YYYY-MM-DD</source>
        <translation>YYYY-MM-DD</translation>
    </message>
    <message>
        <source>YYYY-MM-DDThh:mm:ssZ</source>
        <translation>YYYY-MM-DDThh:mm:ssZ</translation>
    </message>
    <message>
        <source>a whole number</source>
        <translation>整数</translation>
    </message>
    <message>
        <source>a number</source>
        <translation>数字</translation>
    </message>
    <message>
        <source>%1 from %2 to %3</source>
        <translation>%2 到 %3 之间的%1</translation>
    </message>
    <message>
        <source>%1 of at least %2</source>
        <translation>不小于 %2 的%1</translation>
    </message>
    <message>
        <source>%1 of at most %2</source>
        <translation>不大于 %2 的%1</translation>
    </message>
    <message>
        <source>Yes</source>
        <translation>是</translation>
    </message>
    <message>
        <source>Choose…</source>
        <translation>请选择…</translation>
    </message>
    <message>
        <source>(no choice)</source>
        <translation>（不选择）</translation>
    </message>
    <message>
        <source>%1 (required)</source>
        <translation>%1（必填）</translation>
    </message>
    <message>
        <source>Accept</source>
        <translation>接受</translation>
    </message>
    <message>
        <source>Decline</source>
        <translation>拒绝</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <source>Send the answer in the form to %1</source>
        <translation>将表单中的回答发送给 %1</translation>
    </message>
    <message>
        <source>Tell %1 you will not answer</source>
        <translation>告诉 %1 您不回答</translation>
    </message>
    <message>
        <source>Close the question without choosing</source>
        <translation>关闭问题，不作选择</translation>
    </message>
    <message>
        <source>&quot;%1&quot; needs an answer.</source>
        <translation>“%1”需要填写。</translation>
    </message>
    <message>
        <source>&quot;%1&quot; does not read as what it asks for.</source>
        <translation>“%1”的内容不符合所要求的类型。</translation>
    </message>
    <message>
        <source>&quot;%1&quot; is not one of its choices.</source>
        <translation>“%1”不是可选项之一。</translation>
    </message>
    <message>
        <source>&quot;%1&quot; is too short.</source>
        <translation>“%1”太短。</translation>
    </message>
    <message>
        <source>&quot;%1&quot; is too long.</source>
        <translation>“%1”太长。</translation>
    </message>
    <message>
        <source>&quot;%1&quot; is below its smallest value.</source>
        <translation>“%1”小于最小值。</translation>
    </message>
    <message>
        <source>&quot;%1&quot; is above its largest value.</source>
        <translation>“%1”大于最大值。</translation>
    </message>
    <message>
        <source>&quot;%1&quot; is not in the form it asks for.</source>
        <translation>“%1”的格式不符合要求。</translation>
    </message>
    <message>
        <source>The answer has a field the server did not ask for.</source>
        <translation>回答中含有服务器未询问的字段。</translation>
    </message>
    <message>
        <source>It asks during the call of %1, which waits for your answer until its time is up; then the question is withdrawn.</source>
        <translation>它在调用 %1 的过程中提问；该调用会等待你的回答，直到时间用完，随后问题将被撤回。</translation>
    </message>
    <message numerus="yes">
        <source>%n minute(s) left to answer.</source>
        <translation>
            <numerusform>还剩 %n 分钟可以回答。</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n second(s) left to answer.</source>
        <translation>
            <numerusform>还剩 %n 秒可以回答。</numerusform>
        </translation>
    </message>
    <message>
        <source>The time to answer is up.</source>
        <translation>回答时间已到。</translation>
    </message>
</context>
<context>
    <name>AgentConsole::McpSecrets</name>
    <message>
        <source>header &quot;%1&quot;</source>
        <translation>请求头“%1”</translation>
    </message>
    <message>
        <source>env &quot;%1&quot;</source>
        <translation>环境变量“%1”</translation>
    </message>
    <message>
        <source>not JSON: %1</source>
        <translation>不是有效的 JSON：%1</translation>
    </message>
    <message>
        <source>server &quot;%1&quot;: %2 cannot name a keychain entry (no spaces, braces or &apos;$&apos;)</source>
        <translation>服务器“%1”：%2 不能用作钥匙串条目名（不能含空格、花括号或“$”）</translation>
    </message>
    <message>
        <source>no keychain is available for the secret of %1; the server was not started</source>
        <translation>没有可用的系统钥匙串来读取%1的机密；服务器未启动</translation>
    </message>
    <message>
        <source>the secret of %1 is not in the keychain; type it again in Settings › MCP servers</source>
        <translation>%1的机密不在系统钥匙串中；请在“设置 › MCP 服务器”中重新输入</translation>
    </message>
    <message>
        <source>the keychain could not be read for the secret of %1; the server was not started</source>
        <translation>无法从系统钥匙串读取%1的机密；服务器未启动</translation>
    </message>
    <message>
        <source>the secret of %1 in the keychain is not one line; type it again in Settings › MCP servers</source>
        <translation>系统钥匙串中%1的机密不是单行文本；请在“设置 › MCP 服务器”中重新输入</translation>
    </message>
    <message>
        <source>the OAuth client secret</source>
        <translation>OAuth 客户端密钥</translation>
    </message>
</context>
<context>
    <name>AgentConsole::McpServersDock</name>
    <message>
        <source>the program exited or the connection closed</source>
        <translation>程序已退出或连接已关闭</translation>
    </message>
    <message>
        <source>the program could not be started or the address could not be reached</source>
        <translation>程序无法启动或地址无法访问</translation>
    </message>
    <message>
        <source>it did not answer in time</source>
        <translation>未能及时应答</translation>
    </message>
    <message>
        <source>it refused the console&apos;s requests</source>
        <translation>拒绝了控制台的请求</translation>
    </message>
    <message>
        <source>it refused access: check its credentials</source>
        <translation>拒绝访问：请检查其凭据</translation>
    </message>
    <message>
        <source>it sent messages that are not MCP, or too large</source>
        <translation>发送的消息不符合 MCP 或过大</translation>
    </message>
    <message>
        <source>it speaks an MCP version this console does not</source>
        <translation>使用的 MCP 版本本控制台不支持</translation>
    </message>
    <message>
        <source>it ended the session</source>
        <translation>结束了会话</translation>
    </message>
    <message>
        <source>%1 s</source>
        <comment>a countdown in whole seconds</comment>
        <translation>%1 秒</translation>
    </message>
    <message>
        <source>Circuit open</source>
        <translation>已熔断</translation>
    </message>
    <message>
        <source>Starting…</source>
        <translation>正在启动…</translation>
    </message>
    <message>
        <source>Ready</source>
        <translation>就绪</translation>
    </message>
    <message>
        <source>Down</source>
        <translation>不可用</translation>
    </message>
    <message>
        <source>Connecting and listing its tools.</source>
        <translation>正在连接并列出其工具。</translation>
    </message>
    <message numerus="yes">
        <source>%n tool(s) offered</source>
        <translation>
            <numerusform>提供 %n 个工具</numerusform>
        </translation>
    </message>
    <message>
        <source>Down: %1.</source>
        <translation>不可用：%1。</translation>
    </message>
    <message>
        <source>Restarts in %1.</source>
        <translation>%1后重启。</translation>
    </message>
    <message>
        <source>Not restarted again; its tools fail fast until the console starts again.</source>
        <translation>不再重启；在控制台重新启动之前，其工具会立即失败。</translation>
    </message>
    <message>
        <source>Its calls failed too often: they fail fast for %1.</source>
        <translation>其调用失败过多：接下来 %1 内立即失败。</translation>
    </message>
    <message>
        <source>set by staff</source>
        <translation>由客服设定</translation>
    </message>
    <message>
        <source>from annotations (hints)</source>
        <translation>来自注解（提示）</translation>
    </message>
    <message>
        <source>from annotations</source>
        <translation>来自注解</translation>
    </message>
    <message>
        <source>Hints, not verified: retried without confirmation</source>
        <translation>提示未经验证：无需确认即会重试</translation>
    </message>
    <message>
        <source>The arguments are still validated and every attempt keeps its deadline. Staff can change the policy in Settings › MCP tool policies.</source>
        <translation>参数仍会校验，每次尝试仍有时限。客服可在“设置 › MCP 工具策略”中更改策略。</translation>
    </message>
    <message>
        <source>Staff chose this policy in Settings › MCP tool policies; the server&apos;s annotations said: %1.</source>
        <translation>客服在“设置 › MCP 工具策略”中选择了此策略；服务器的注解为：%1。</translation>
    </message>
    <message>
        <source>The server&apos;s annotations (its own hints) chose this policy.</source>
        <translation>此策略由服务器的注解（其自身的提示）决定。</translation>
    </message>
    <message>
        <source>“Hints”: the server&apos;s own annotations, not verified, let these tools be retried without confirmation. Arguments are still validated and every attempt keeps its deadline.</source>
        <translation>“提示”：服务器自己的注解，未经验证，让这些工具无需确认即可重试。参数仍会校验，每次尝试仍有时限。</translation>
    </message>
    <message>
        <source>MCP servers</source>
        <translation>MCP 服务器</translation>
    </message>
    <message>
        <source>The console is starting; its MCP servers follow.</source>
        <translation>控制台正在启动；随后显示其 MCP 服务器。</translation>
    </message>
    <message>
        <source>No MCP server is configured. To add one, open Settings › MCP servers (mcp.json)…, which writes the mcp.json of the data directory (%1), then start the console again.</source>
        <translation>尚未配置 MCP 服务器。如需添加，请打开“设置 › MCP 服务器 (mcp.json)…”，它会写入数据目录（%1）中的 mcp.json，然后重新启动控制台。</translation>
    </message>
    <message>
        <source>Details are in the local log.</source>
        <translation>详情见本地日志。</translation>
    </message>
    <message>
        <source>%1 (%2)</source>
        <comment>a tool&apos;s title, then its name</comment>
        <translation>%1（%2）</translation>
    </message>
    <message>
        <source>The model calls it %1</source>
        <translation>模型以 %1 调用它</translation>
    </message>
    <message>
        <source>it asks staff to sign in</source>
        <translation>需要客服登录</translation>
    </message>
    <message>
        <source>Signing in…</source>
        <translation>正在登录…</translation>
    </message>
    <message>
        <source>Sign-in needed</source>
        <translation>需要登录</translation>
    </message>
    <message>
        <source>Its tools are refused until staff sign in.</source>
        <translation>在客服登录之前，其工具调用会被拒绝。</translation>
    </message>
    <message>
        <source>The last sign-in was cancelled.</source>
        <translation>上次登录已取消。</translation>
    </message>
    <message>
        <source>The last sign-in was not finished in time.</source>
        <translation>上次登录未在时限内完成。</translation>
    </message>
    <message>
        <source>The sign-in page declined the console&apos;s request.</source>
        <translation>登录页面拒绝了控制台的请求。</translation>
    </message>
    <message>
        <source>The authorization server refused the console: sign in again, or check the server&apos;s client ID in mcp.json.</source>
        <translation>授权服务器拒绝了控制台：请重新登录，或检查 mcp.json 中该服务器的客户端 ID。</translation>
    </message>
    <message>
        <source>The authorization server did not answer.</source>
        <translation>授权服务器没有应答。</translation>
    </message>
    <message>
        <source>The server&apos;s sign-in cannot be used by the console: its metadata is missing, wrong or not secure.</source>
        <translation>控制台无法使用该服务器的登录方式：其元数据缺失、有误或不安全。</translation>
    </message>
    <message>
        <source>The server kept refusing new sign-ins; the console stopped asking.</source>
        <translation>服务器一再拒绝新的登录；控制台已停止请求。</translation>
    </message>
    <message>
        <source>The browser could not be opened.</source>
        <translation>无法打开浏览器。</translation>
    </message>
    <message>
        <source>The keychain did not keep the sign-in.</source>
        <translation>系统钥匙串未能保存登录信息。</translation>
    </message>
    <message>
        <source>Sign-in: not asked for so far.</source>
        <translation>登录：目前尚未要求。</translation>
    </message>
    <message>
        <source>Signed out: the server asks for a sign-in.</source>
        <translation>未登录：服务器要求登录。</translation>
    </message>
    <message>
        <source>Signing in: finish in the browser page that opened.</source>
        <translation>正在登录：请在已打开的浏览器页面中完成。</translation>
    </message>
    <message>
        <source>Signed in; the sign-in is kept in the keychain.</source>
        <translation>已登录；登录信息保存在系统钥匙串中。</translation>
    </message>
    <message>
        <source>Sign in…</source>
        <translation>登录…</translation>
    </message>
    <message>
        <source>Cancel sign-in</source>
        <translation>取消登录</translation>
    </message>
    <message>
        <source>Sign out</source>
        <translation>退出登录</translation>
    </message>
    <message>
        <source>%1 %2</source>
        <comment>two sentences, one after the other</comment>
        <translation>%1%2</translation>
    </message>
    <message numerus="yes">
        <source>; %n not offered:</source>
        <translation>
            <numerusform>；%n 个未提供：</numerusform>
        </translation>
    </message>
    <message>
        <source>Its timeouts are limited to %1 s so that the turn can answer.</source>
        <translation>其超时已限制为 %1 秒，以便本轮对话能够作答。</translation>
    </message>
    <message numerus="yes">
        <source>and %n more (see the local log)</source>
        <translation>
            <numerusform>另有 %n 个（见本地日志）</numerusform>
        </translation>
    </message>
    <message>
        <source>your team&apos;s policy does not allow it</source>
        <translation>团队策略不允许使用它</translation>
    </message>
    <message>
        <source>Not allowed</source>
        <translation>不允许</translation>
    </message>
</context>
<context>
    <name>AgentConsole::NoticeBanner</name>
    <message>
        <source>Close this notice</source>
        <translation>关闭此提示</translation>
    </message>
</context>
<context>
    <name>AgentConsole::PolicyEditor</name>
    <message>
        <source>Attempt timeout</source>
        <translation>单次尝试超时</translation>
    </message>
    <message>
        <source>Retries</source>
        <translation>重试次数</translation>
    </message>
    <message>
        <source>First delay</source>
        <translation>首次延迟</translation>
    </message>
    <message>
        <source>Multiplier</source>
        <translation>倍数</translation>
    </message>
    <message>
        <source>Maximum delay</source>
        <translation>最大延迟</translation>
    </message>
    <message>
        <source>Jitter</source>
        <translation>抖动</translation>
    </message>
    <message>
        <source>Randomises the waits so that many callers do not retry at the same moment.</source>
        <translation>让等待时间随机化，避免大量调用方在同一时刻重试。</translation>
    </message>
    <message>
        <source>Retry-After cap</source>
        <translation>Retry-After 上限</translation>
    </message>
    <message>
        <source>Retry policies</source>
        <translation>重试策略</translation>
    </message>
    <message>
        <source>Tool</source>
        <translation>工具</translation>
    </message>
    <message>
        <source>&amp;Tool:</source>
        <translation>工具(&amp;T)：</translation>
    </message>
    <message>
        <source>&amp;Apply</source>
        <translation>应用(&amp;A)</translation>
    </message>
    <message>
        <source>The tool uses this policy from its next call</source>
        <translation>该工具从下一次调用起使用此策略</translation>
    </message>
    <message>
        <source>Reset to &amp;default</source>
        <translation>恢复默认(&amp;D)</translation>
    </message>
    <message>
        <source>The tool uses the default policy again; edits not applied are dropped</source>
        <translation>该工具恢复使用默认策略；未应用的修改将被丢弃</translation>
    </message>
    <message>
        <source> ms</source>
        <translation> 毫秒</translation>
    </message>
    <message>
        <source>None: the waits as computed</source>
        <translation>无：按计算值等待</translation>
    </message>
    <message>
        <source>Full: random, up to the computed wait</source>
        <translation>完全：随机，不超过计算值</translation>
    </message>
    <message>
        <source>Decorrelated: random, grows from the last wait</source>
        <translation>去相关：随机，在上次等待的基础上增长</translation>
    </message>
    <message>
        <source>Worst case of one call: —</source>
        <translation>单次调用的最坏情况：—</translation>
    </message>
    <message>
        <source>Shown once every value is in range.</source>
        <translation>所有数值都在范围内后显示。</translation>
    </message>
    <message>
        <source>Not applied: %1</source>
        <translation>未生效：%1</translation>
    </message>
    <message>
        <source>%1 keeps the policy it has; your value stays in the field until you change it.</source>
        <translation>%1 保持现有策略；您输入的值会保留在字段中，直到您修改。</translation>
    </message>
    <message>
        <source>Worst case of one call: %1</source>
        <translation>单次调用的最坏情况：%1</translation>
    </message>
    <message>
        <source>A server&apos;s Retry-After never makes it longer: the call is cut at %1.</source>
        <translation>服务器的 Retry-After 不会让它更长：调用在 %1 时截止。</translation>
    </message>
    <message>
        <source>The default: %1</source>
        <translation>默认：%1</translation>
    </message>
    <message>
        <source>Edited, not applied</source>
        <translation>已修改，未应用</translation>
    </message>
    <message>
        <source>Custom policy</source>
        <translation>自定义策略</translation>
    </message>
    <message>
        <source>Default policy</source>
        <translation>默认策略</translation>
    </message>
    <message>
        <source>%1 — edited, not applied</source>
        <translation>%1 — 已修改，未应用</translation>
    </message>
    <message>
        <source>%1 — custom policy</source>
        <translation>%1 — 自定义策略</translation>
    </message>
    <message>
        <source>%1 keeps the policy it has.</source>
        <translation>%1 保持现有策略。</translation>
    </message>
    <message>
        <source>%1 ms</source>
        <translation>%1 毫秒</translation>
    </message>
    <message>
        <source>%1 s</source>
        <translation>%1 秒</translation>
    </message>
    <message>
        <source>How long one attempt may take before it is abandoned (%1 to %2).</source>
        <translation>单次尝试在放弃前最多可用的时间（%1 至 %2）。</translation>
    </message>
    <message>
        <source>How many times a failed attempt is tried again (%1 to %2).</source>
        <translation>失败的尝试再试几次（%1 至 %2）。</translation>
    </message>
    <message>
        <source>The wait before the first retry (%1 to %2).</source>
        <translation>第一次重试前的等待时间（%1 至 %2）。</translation>
    </message>
    <message>
        <source>Each wait is the one before times this (%1 to %2).</source>
        <translation>每次等待为上一次乘以此倍数（%1 至 %2）。</translation>
    </message>
    <message>
        <source>No wait is longer than this (%1 to %2, not below the first delay).</source>
        <translation>任何一次等待都不超过此值（%1 至 %2，且不小于首次延迟）。</translation>
    </message>
    <message>
        <source>The longest wait a server may ask for with Retry-After (%1 to %2); never more than the maximum delay.</source>
        <translation>服务器通过 Retry-After 可要求的最长等待（%1 至 %2）；不超过最大延迟。</translation>
    </message>
    <message>
        <source>Team policy</source>
        <translation>团队策略</translation>
    </message>
</context>
<context>
    <name>AgentConsole::PolicySource</name>
    <message>
        <source>the team policy %1 %2</source>
        <translation>团队策略 %1 %2</translation>
    </message>
    <message>
        <source>is not a regular file</source>
        <translation>不是普通文件</translation>
    </message>
    <message>
        <source>is larger than 1 MiB</source>
        <translation>大于 1 MiB</translation>
    </message>
    <message>
        <source>cannot be read</source>
        <translation>无法读取</translation>
    </message>
</context>
<context>
    <name>AgentConsole::QuestionInput</name>
    <message>
        <source>Ask about an order, its shipment or stock — Enter sends, Shift+Enter starts a new line</source>
        <translation>询问订单、物流或库存 — Enter 发送，Shift+Enter 换行</translation>
    </message>
</context>
<context>
    <name>AgentConsole::RetryPolicy</name>
    <message>
        <source>maximum delay: not below the first delay</source>
        <translation>最大延迟：不能小于首次延迟</translation>
    </message>
    <message>
        <source>attempt timeout: from %1 to %2</source>
        <translation>单次尝试超时：须在 %1 到 %2 之间</translation>
    </message>
    <message>
        <source>retries: from %1 to %2</source>
        <translation>重试次数：须在 %1 到 %2 之间</translation>
    </message>
    <message>
        <source>first delay: from %1 to %2</source>
        <translation>首次延迟：须在 %1 到 %2 之间</translation>
    </message>
    <message>
        <source>multiplier: from %1 to %2</source>
        <translation>倍数：须在 %1 到 %2 之间</translation>
    </message>
    <message>
        <source>maximum delay: from %1 to %2</source>
        <translation>最大延迟：须在 %1 到 %2 之间</translation>
    </message>
    <message>
        <source>Retry-After cap: from %1 to %2</source>
        <translation>Retry-After 上限：须在 %1 到 %2 之间</translation>
    </message>
    <message>
        <source>call deadline: from %1 to %2</source>
        <translation>调用截止时间：须在 %1 到 %2 之间</translation>
    </message>
    <message>
        <source>%1 h</source>
        <translation>%1 小时</translation>
    </message>
    <message>
        <source>%1 s</source>
        <translation>%1 秒</translation>
    </message>
    <message>
        <source>%1 ms</source>
        <translation>%1 毫秒</translation>
    </message>
</context>
<context>
    <name>AgentConsole::RuntimeStartup</name>
    <message>
        <source>its pages do not read back</source>
        <translation>其数据页无法正确读回</translation>
    </message>
    <message>
        <source>restore it from a backup, or move it aside to start afresh (its records are then lost)</source>
        <translation>请从备份恢复，或将其移走后重新开始（其中的记录将丢失）</translation>
    </message>
    <message>
        <source>%1 is not a file; remove it or choose another --data-dir</source>
        <translation>%1 不是文件；请删除它，或用 --data-dir 另选数据目录</translation>
    </message>
    <message>
        <source>%1 is empty although this data directory was in use; %2</source>
        <translation>%1 是空的，但此数据目录之前已在使用；%2</translation>
    </message>
    <message>
        <source>%1 cannot be read (%2); give this user access to it</source>
        <translation>%1 无法读取（%2）；请为当前用户授予访问权限</translation>
    </message>
    <message>
        <source>%1 is damaged (not an SQLite database); %2</source>
        <translation>%1 已损坏（不是 SQLite 数据库）；%2</translation>
    </message>
    <message>
        <source>%1 is damaged (%2); %3</source>
        <translation>%1 已损坏（%2）；%3</translation>
    </message>
    <message>
        <source>unknown staff member &apos;%1&apos;</source>
        <translation>未知的客服“%1”</translation>
    </message>
    <message>
        <source>staff member &apos;%1&apos; does not belong to tenant &apos;%2&apos;</source>
        <translation>客服“%1”不属于租户“%2”</translation>
    </message>
    <message>
        <source>the store has no staff members</source>
        <translation>数据库中没有客服</translation>
    </message>
    <message>
        <source>unknown tenant &apos;%1&apos;</source>
        <translation>未知的租户“%1”</translation>
    </message>
    <message>
        <source>%1 is not a file; remove it so that the console can lock its data directory</source>
        <translation>%1 不是文件；请删除它，以便控制台锁定数据目录</translation>
    </message>
    <message>
        <source>cannot create the lock %1 (%2); make the data directory writable or choose another --data-dir</source>
        <translation>无法创建锁文件 %1（%2）；请让数据目录可写，或用 --data-dir 另选数据目录</translation>
    </message>
    <message>
        <source>permission denied</source>
        <translation>没有权限</translation>
    </message>
    <message>
        <source>unknown error</source>
        <translation>未知错误</translation>
    </message>
    <message>
        <source>another Agent Console process (pid %1) is using the data directory %2; close it or choose another --data-dir</source>
        <translation>另一个智能客服控制台进程（进程号 %1）正在使用数据目录 %2；请关闭该进程，或用 --data-dir 另选数据目录</translation>
    </message>
    <message>
        <source>the disk holding %1 is full: free space and try again; nothing was lost</source>
        <translation>%1 所在的磁盘已满：请腾出空间后重试；没有丢失任何数据</translation>
    </message>
    <message>
        <source>%1 could not be checked (see the local log); nothing was changed: check the disk and try again</source>
        <translation>%1 无法检查（见本地日志）；未做任何改动：请检查磁盘后重试</translation>
    </message>
    <message>
        <source>Cannot reach the team&apos;s database %1.</source>
        <translation>无法连接团队数据库 %1。</translation>
    </message>
    <message>
        <source>%1 Start again when it is back, or with --alone-if-unreachable to work alone on this desk&apos;s own store.</source>
        <translation>%1 请在其恢复后重新启动，或使用 --alone-if-unreachable 在本工位自己的存储上单机工作。</translation>
    </message>
</context>
<context>
    <name>AgentConsole::Scenario</name>
    <message>
        <source>%1: %2</source>
        <translation>%1：%2</translation>
    </message>
    <message>
        <source>missing</source>
        <translation>缺失</translation>
    </message>
    <message>
        <source>expected a string</source>
        <translation>应为字符串</translation>
    </message>
    <message>
        <source>expected 1 to %1 characters</source>
        <translation>应为 1 到 %1 个字符</translation>
    </message>
    <message>
        <source>expected a whole number from %1 to %2</source>
        <translation>应为 %1 到 %2 之间的整数</translation>
    </message>
    <message>
        <source>expected a number from %1 to %2</source>
        <translation>应为 %1 到 %2 之间的数</translation>
    </message>
    <message>
        <source>expected true or false</source>
        <translation>应为 true 或 false</translation>
    </message>
    <message>
        <source>expected an object</source>
        <translation>应为对象</translation>
    </message>
    <message>
        <source>expected an array</source>
        <translation>应为数组</translation>
    </message>
    <message>
        <source>at most %1 entries</source>
        <translation>最多 %1 项</translation>
    </message>
    <message>
        <source>unknown key</source>
        <translation>未知的键</translation>
    </message>
    <message>
        <source>no such result code</source>
        <translation>没有这个结果代码</translation>
    </message>
    <message>
        <source>give either attempts or minAttempts/maxAttempts</source>
        <translation>请只给出 attempts，或只给出 minAttempts/maxAttempts</translation>
    </message>
    <message>
        <source>below minAttempts</source>
        <translation>小于 minAttempts</translation>
    </message>
    <message>
        <source>expected answered, partial, unanswered or failed</source>
        <translation>应为 answered、partial、unanswered 或 failed</translation>
    </message>
    <message>
        <source>expected completed, failed or cancelled</source>
        <translation>应为 completed、failed 或 cancelled</translation>
    </message>
    <message>
        <source>no such counter of a turn</source>
        <translation>轮次中没有这个计数器</translation>
    </message>
    <message>
        <source>use 1 to 64 letters, digits, &apos;-&apos;, &apos;_&apos; or &apos;.&apos;</source>
        <translation>请使用 1 到 64 个字母、数字、“-”、“_”或“.”</translation>
    </message>
    <message>
        <source>expected approve or decline</source>
        <translation>应为 approve 或 decline</translation>
    </message>
    <message>
        <source>no such kill point (one of %1, optionally with #n)</source>
        <translation>没有这个终止点（应为 %1 之一，可加 #n）</translation>
    </message>
    <message>
        <source>a crash turn takes no cancelAfterMs or withoutStaff</source>
        <translation>崩溃轮次不能设置 cancelAfterMs 或 withoutStaff</translation>
    </message>
    <message>
        <source>only with crashAt</source>
        <translation>只能与 crashAt 一起使用</translation>
    </message>
    <message>
        <source>a turn that is not resumed has no result to check</source>
        <translation>不恢复的轮次没有可检查的结果</translation>
    </message>
    <message>
        <source>expected none, full or decorrelated</source>
        <translation>应为 none、full 或 decorrelated</translation>
    </message>
    <message>
        <source>use 1 to 64 lowercase letters, digits and &apos;-&apos;</source>
        <translation>请使用 1 到 64 个小写字母、数字和“-”</translation>
    </message>
    <message>
        <source>must be the file&apos;s name, %1</source>
        <translation>必须与文件名相同：%1</translation>
    </message>
    <message>
        <source>expected a result code such as TOOL_TIMEOUT</source>
        <translation>应为结果代码，例如 TOOL_TIMEOUT</translation>
    </message>
    <message>
        <source>no such tool (the tools are %1)</source>
        <translation>没有这个工具（可用工具：%1）</translation>
    </message>
    <message>
        <source>at least one turn</source>
        <translation>至少需要一轮</translation>
    </message>
    <message>
        <source>missing (or a top-level question and expect)</source>
        <translation>缺失（或在最外层给出 question 和 expect）</translation>
    </message>
    <message>
        <source>larger than %1 KiB</source>
        <translation>大于 %1 KiB</translation>
    </message>
    <message>
        <source>not valid JSON at offset %1 (%2)</source>
        <translation>第 %1 个字符处不是有效的 JSON（%2）</translation>
    </message>
    <message>
        <source>the top level must be an object</source>
        <translation>最外层必须是对象</translation>
    </message>
    <message>
        <source>scenario: %1</source>
        <translation>场景：%1</translation>
    </message>
    <message>
        <source>%1: cannot be read, or larger than %2 KiB</source>
        <translation>%1：无法读取，或大于 %2 KiB</translation>
    </message>
    <message>
        <source>scenario %1: %2</source>
        <translation>场景 %1：%2</translation>
    </message>
    <message>
        <source>no scenario named &apos;%1&apos; (agent-cli --list-scenarios lists them; a file needs a &apos;/&apos; or the .json ending)</source>
        <translation>没有名为“%1”的场景（agent-cli --list-scenarios 可列出全部场景；文件名须包含“/”或以 .json 结尾）</translation>
    </message>
    <message>
        <source>%1 after 1 attempt</source>
        <translation>1 次尝试后为 %1</translation>
    </message>
    <message>
        <source>%1 after %2 attempts</source>
        <translation>%2 次尝试后为 %1</translation>
    </message>
    <message>
        <source>%1 after at least %2 attempts</source>
        <translation>至少 %2 次尝试后为 %1</translation>
    </message>
    <message>
        <source>%1 after at most %2 attempts</source>
        <translation>至多 %2 次尝试后为 %1</translation>
    </message>
    <message>
        <source>%1 after %2 to %3 attempts</source>
        <translation>%2 到 %3 次尝试后为 %1</translation>
    </message>
    <message>
        <source>expected the question in Chinese</source>
        <translation>应为中文问题</translation>
    </message>
</context>
<context>
    <name>AgentConsole::ScenarioPanel</name>
    <message>
        <source>%1 ms</source>
        <translation>%1 毫秒</translation>
    </message>
    <message>
        <source>%1 s</source>
        <translation>%1 秒</translation>
    </message>
    <message>
        <source>Scenarios</source>
        <translation>场景</translation>
    </message>
    <message>
        <source>&amp;Scenario (Enter runs it):</source>
        <translation>场景（按 Enter 运行）(&amp;S)：</translation>
    </message>
    <message>
        <source>&amp;Run</source>
        <translation>运行(&amp;R)</translation>
    </message>
    <message>
        <source>Sets the scenario&apos;s faults and policies, asks its questions and compares what happens with what it expects</source>
        <translation>设置场景的故障与策略，提出其中的问题，并将实际结果与预期比较</translation>
    </message>
    <message>
        <source>&amp;Open scenario file…</source>
        <translation>打开场景文件(&amp;O)…</translation>
    </message>
    <message>
        <source>S&amp;top</source>
        <translation>停止(&amp;T)</translation>
    </message>
    <message>
        <source>Cancels the running turn; the scenario ends as not matched</source>
        <translation>取消正在进行的一轮；场景按“不符合预期”结束</translation>
    </message>
    <message>
        <source>Some shipped scenarios cannot be used</source>
        <translation>部分内置场景无法使用</translation>
    </message>
    <message>
        <source>%1 (file)</source>
        <translation>%1（文件）</translation>
    </message>
    <message>
        <source>Shows: %1</source>
        <translation>演示：%1</translation>
    </message>
    <message>
        <source>The scenario did not start</source>
        <translation>场景未能开始</translation>
    </message>
    <message>
        <source>Running…</source>
        <translation>进行中…</translation>
    </message>
    <message>
        <source>No such scenario</source>
        <translation>没有该场景</translation>
    </message>
    <message>
        <source>The scenario file was not loaded</source>
        <translation>场景文件未加载</translation>
    </message>
    <message>
        <source>Open a scenario file</source>
        <translation>打开场景文件</translation>
    </message>
    <message>
        <source>Scenarios (*.json)</source>
        <translation>场景 (*.json)</translation>
    </message>
    <message>
        <source>Turn %1 of %2: “%3”</source>
        <translation>第 %1 轮（共 %2 轮）：“%3”</translation>
    </message>
    <message>
        <source>Asking: “%1”</source>
        <translation>正在提问：“%1”</translation>
    </message>
    <message>
        <source>✓ As expected</source>
        <translation>✓ 符合预期</translation>
    </message>
    <message>
        <source>Every turn ended as the scenario expects, in %1.</source>
        <translation>每一轮都按场景预期结束，用时 %1。</translation>
    </message>
    <message>
        <source>✗ Not as expected</source>
        <translation>✗ 不符合预期</translation>
    </message>
    <message>
        <source>What differed (after %1):</source>
        <translation>差异（%1 后）：</translation>
    </message>
    <message>
        <source>“%1”</source>
        <translation>“%1”</translation>
    </message>
    <message>
        <source>%1 before any attempt</source>
        <translation>%1（未经尝试）</translation>
    </message>
    <message numerus="yes">
        <source>%1 after %n attempt(s)</source>
        <translation>
            <numerusform>%1（%n 次尝试后）</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%1 after at least %n attempt(s)</source>
        <translation>
            <numerusform>%1（至少 %n 次尝试后）</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%1 after at most %n attempt(s)</source>
        <translation>
            <numerusform>%1（至多 %n 次尝试后）</numerusform>
        </translation>
    </message>
    <message>
        <source>%1 after %2 to %3 attempts</source>
        <translation>%1（%2 至 %3 次尝试后）</translation>
    </message>
    <message>
        <source>%1: %2</source>
        <translation>%1：%2</translation>
    </message>
    <message>
        <source>finished</source>
        <translation>已完成</translation>
    </message>
    <message>
        <source>failed</source>
        <translation>失败</translation>
    </message>
    <message>
        <source>cancelled</source>
        <translation>已取消</translation>
    </message>
    <message>
        <source>, </source>
        <translation>、</translation>
    </message>
    <message>
        <source>Turn %1, call %2 (%3): expected %4, got %5</source>
        <translation>第 %1 轮第 %2 次调用（%3）：预期为%4，实际为%5</translation>
    </message>
    <message>
        <source>Turn %1, call %2: expected %3 to end %4; %5 was called instead and ended %6</source>
        <translation>第 %1 轮第 %2 次调用：预期%3以%4结束，实际调用的是%5，结果为%6</translation>
    </message>
    <message numerus="yes">
        <source>Turn %1: expected %n tool call(s), got %2</source>
        <translation>
            <numerusform>第 %1 轮：预期 %n 个工具调用，实际 %2 个</numerusform>
        </translation>
    </message>
    <message>
        <source> (also %1)</source>
        <translation>（另有 %1）</translation>
    </message>
    <message>
        <source>; </source>
        <translation>；</translation>
    </message>
    <message>
        <source>Turn %1: expected it to end “%2”; it ended “%3”</source>
        <translation>第 %1 轮：预期以“%2”结束，实际以“%3”结束</translation>
    </message>
    <message>
        <source>Turn %1: expected it to be %2; it was %3</source>
        <translation>第 %1 轮：预期为“%2”，实际为“%3”</translation>
    </message>
    <message>
        <source>Turn %1 took %2; the scenario allows at most %3</source>
        <translation>第 %1 轮用时 %2，场景最多允许 %3</translation>
    </message>
    <message>
        <source>Turn %1, “%2”: expected %3, got %4</source>
        <translation>第 %1 轮，“%2”：预期 %3，实际 %4</translation>
    </message>
    <message numerus="yes">
        <source>Turn %1: expected %n ticket(s), got %2</source>
        <translation>
            <numerusform>第 %1 轮：预期 %n 张工单，实际 %2 张</numerusform>
        </translation>
    </message>
    <message>
        <source>Turn %1 could not run to its end: %2</source>
        <translation>第 %1 轮未能运行完毕：%2</translation>
    </message>
    <message numerus="yes">
        <source>The backend now holds %n request(s) with more than one ticket</source>
        <translation>
            <numerusform>后端现有 %n 个请求对应不止一张工单</numerusform>
        </translation>
    </message>
    <message>
        <source>The run was stopped before its end</source>
        <translation>本次运行在结束前被停止</translation>
    </message>
    <message>
        <source>For testers, as the scenario file spells them:
%1</source>
        <translation>供测试人员参考（按场景文件的写法）：
%1</translation>
    </message>
    <message>
        <source>The faults, retry policies, circuit breakers and model fallback chain in force before the scenario were put back, and your conversation carries on where it was.</source>
        <translation>已恢复场景开始前生效的故障、重试策略、熔断器和模型回退链，您的对话从原处继续。</translation>
    </message>
</context>
<context>
    <name>AgentConsole::ScenarioRunner</name>
    <message>
        <source>a scenario is running</source>
        <translation>已有场景正在运行</translation>
    </message>
    <message>
        <source>the console is not ready yet</source>
        <translation>控制台尚未就绪</translation>
    </message>
    <message>
        <source>wait until the running question is answered</source>
        <translation>请等待当前问题答复完毕</translation>
    </message>
    <message>
        <source>the data directory is lent to another process</source>
        <translation>数据目录已借给另一个进程使用</translation>
    </message>
    <message>
        <source>the scenario has no turns</source>
        <translation>该场景没有任何轮次</translation>
    </message>
    <message>
        <source>policies.%1: %2</source>
        <translation>policies.%1：%2</translation>
    </message>
    <message>
        <source>%1 after %2</source>
        <translation>%2 次尝试后为 %1</translation>
    </message>
    <message>
        <source>turn %1, call %2 %3: expected %4, got %5%6</source>
        <translation>第 %1 轮第 %2 个调用 %3：预期 %4，实际 %5%6</translation>
    </message>
    <message>
        <source>turn %1: expected %2 tool call(s), got %3%4</source>
        <translation>第 %1 轮：预期 %2 个工具调用，实际 %3 个%4</translation>
    </message>
    <message>
        <source> (also %1)</source>
        <translation>（另有 %1）</translation>
    </message>
    <message>
        <source>turn %1: expected the outcome %2, got %3</source>
        <translation>第 %1 轮：预期结果 %2，实际 %3</translation>
    </message>
    <message>
        <source>turn %1: expected the status %2, got %3</source>
        <translation>第 %1 轮：预期状态 %2，实际 %3</translation>
    </message>
    <message>
        <source>turn %1: took %2 ms, expected at most %3 ms</source>
        <translation>第 %1 轮：用时 %2 毫秒，预期至多 %3 毫秒</translation>
    </message>
    <message>
        <source>turn %1: expected %2 = %3, got %4</source>
        <translation>第 %1 轮：预期 %2 = %3，实际 %4</translation>
    </message>
    <message>
        <source>turn %1: expected %2 ticket(s), got %3</source>
        <translation>第 %1 轮：预期 %2 张工单，实际 %3 张</translation>
    </message>
    <message>
        <source>the agent loop did not take the question</source>
        <translation>智能体没有接受这个问题</translation>
    </message>
    <message>
        <source>turn %1: %2</source>
        <translation>第 %1 轮：%2</translation>
    </message>
    <message>
        <source>cannot run the crash: %1</source>
        <translation>无法运行崩溃轮次：%1</translation>
    </message>
    <message>
        <source>not resumed: the run was cancelled</source>
        <translation>未恢复：运行已取消</translation>
    </message>
    <message>
        <source>the interrupted turn could not be resumed</source>
        <translation>中断的轮次无法恢复</translation>
    </message>
    <message>
        <source>no interrupted turn to resume after the kill at %1</source>
        <translation>在 %1 处终止后，没有可恢复的中断轮次</translation>
    </message>
    <message>
        <source>the backend holds %1 idempotency key(s) with more than one ticket (duplicate_business_object_count)</source>
        <translation>后端有 %1 个幂等键对应不止一张工单（duplicate_business_object_count）</translation>
    </message>
    <message>
        <source>the run was cancelled</source>
        <translation>运行已取消</translation>
    </message>
    <message>
        <source>a crash turn needs agent-cli, not found at %1</source>
        <translation>崩溃轮次需要 agent-cli，但在 %1 未找到</translation>
    </message>
</context>
<context>
    <name>AgentConsole::SetAsideTurn</name>
    <message>
        <source>(with an unreadable id)</source>
        <translation>（编号无法读取）</translation>
    </message>
    <message>
        <source>interrupted request %1 was saved by another staff member or tenant: it is not resumed here and stays in the journal</source>
        <translation>中断的请求 %1 由其他客服或租户保存：不在此处恢复，仍保留在日志库中</translation>
    </message>
    <message>
        <source>the checkpoint of interrupted request %1 is damaged and cannot be resumed; it stays in turns.sqlite (details in the local log)</source>
        <translation>中断的请求 %1 的检查点已损坏，无法恢复；它仍保留在 turns.sqlite 中（详情见本地日志）</translation>
    </message>
    <message>
        <source>interrupted request %1 is being carried on at desk %2: only one desk resumes a request</source>
        <translation>中断的请求 %1 正在工位 %2 上继续处理：一个请求只由一个工位恢复</translation>
    </message>
</context>
<context>
    <name>AgentConsole::SettingsProblem</name>
    <message>
        <source>API key variable</source>
        <translation>API 密钥环境变量</translation>
    </message>
    <message>
        <source>is not the name of an environment variable (letters, digits, _)</source>
        <translation>不是有效的环境变量名（只能包含字母、数字和 _）</translation>
    </message>
    <message>
        <source>Base URL (model)</source>
        <translation>基础 URL（模型）</translation>
    </message>
    <message>
        <source>is needed for an OpenAI-compatible provider</source>
        <translation>OpenAI 兼容服务必须填写</translation>
    </message>
    <message>
        <source>is not an http:// or https:// address</source>
        <translation>不是 http:// 或 https:// 地址</translation>
    </message>
    <message>
        <source>Model</source>
        <translation>模型</translation>
    </message>
    <message>
        <source>Extra header</source>
        <translation>附加请求头</translation>
    </message>
    <message>
        <source>is not written as &quot;Name: value&quot;</source>
        <translation>格式应为“Name: value”</translation>
    </message>
    <message>
        <source>may not carry the API key: it comes from the API key variable</source>
        <translation>不能携带 API 密钥：密钥应来自 API 密钥环境变量</translation>
    </message>
    <message>
        <source>Secondary base URL</source>
        <translation>备用基础 URL</translation>
    </message>
    <message>
        <source>Secondary model</source>
        <translation>备用模型</translation>
    </message>
    <message>
        <source>is needed when a secondary provider is set</source>
        <translation>设置了备用服务商时必须填写</translation>
    </message>
    <message>
        <source>Secondary API key variable</source>
        <translation>备用 API 密钥环境变量</translation>
    </message>
    <message>
        <source>is needed when a secondary model is set</source>
        <translation>设置了备用模型时必须填写</translation>
    </message>
    <message>
        <source>Base URL (backend)</source>
        <translation>基础 URL（后端）</translation>
    </message>
    <message>
        <source>is needed for a REST backend</source>
        <translation>REST 后端必须填写</translation>
    </message>
    <message>
        <source>%1: %2</source>
        <translation>%1：%2</translation>
    </message>
    <message>
        <source>Conversation budget</source>
        <translation>对话预算</translation>
    </message>
    <message>
        <source>is not 0 (the provider&apos;s default) or from 2,000 to 4,000,000 characters</source>
        <translation>既不是 0（服务商默认），也不在 2,000 到 4,000,000 个字符之间</translation>
    </message>
</context>
<context>
    <name>AgentConsole::ShortcutsDialog</name>
    <message>
        <source>Window</source>
        <translation>窗口</translation>
    </message>
    <message>
        <source>Keyboard shortcuts</source>
        <translation>键盘快捷键</translation>
    </message>
    <message>
        <source>Command</source>
        <translation>命令</translation>
    </message>
    <message>
        <source>Shortcut</source>
        <translation>快捷键</translation>
    </message>
    <message>
        <source>&amp;Help</source>
        <translation>帮助(&amp;H)</translation>
    </message>
    <message>
        <source>&amp;Keyboard shortcuts</source>
        <translation>键盘快捷键(&amp;K)</translation>
    </message>
</context>
<context>
    <name>AgentConsole::SimFaultControl</name>
    <message>
        <source>support-sim sent an answer too large to read; its faults may not be the ones set</source>
        <translation>support-sim 返回的应答过大，无法读取；其当前故障可能与所设置的不同</translation>
    </message>
    <message>
        <source>support-sim did not answer; its faults were not changed</source>
        <translation>support-sim 没有应答；其故障未改变</translation>
    </message>
    <message>
        <source>support-sim refused the faults; its old faults stay</source>
        <translation>support-sim 拒绝了这些故障；原有故障保持不变</translation>
    </message>
    <message>
        <source>support-sim refused the faults (%1); its old faults stay</source>
        <translation>support-sim 拒绝了这些故障（%1）；原有故障保持不变</translation>
    </message>
    <message>
        <source>the REST backend has no fault control: it is not a support-sim</source>
        <translation>该 REST 后端没有故障控制功能：它不是 support-sim</translation>
    </message>
    <message>
        <source>support-sim answered HTTP %1 to the faults; they may not be set</source>
        <translation>support-sim 对这些故障返回了 HTTP %1；故障可能未设置</translation>
    </message>
</context>
<context>
    <name>AgentConsole::StaffWords</name>
    <message>
        <source>Model</source>
        <translation>模型</translation>
    </message>
    <message>
        <source>Orders</source>
        <translation>订单</translation>
    </message>
    <message>
        <source>Logistics</source>
        <translation>物流</translation>
    </message>
    <message>
        <source>Inventory</source>
        <translation>库存</translation>
    </message>
    <message>
        <source>Tickets</source>
        <translation>工单</translation>
    </message>
    <message>
        <source>embedded store</source>
        <translation>内置数据库</translation>
    </message>
    <message>
        <source>offline demo</source>
        <translation>离线演示</translation>
    </message>
    <message>
        <source>primary provider</source>
        <translation>主服务商</translation>
    </message>
    <message>
        <source>secondary provider</source>
        <translation>备用服务商</translation>
    </message>
    <message numerus="yes">
        <source>%n attempt(s) × %1, backoff %2 ×%3 ≤ %4; worst case %5</source>
        <translation>
            <numerusform>%n 次尝试 × %1，退避 %2 ×%3 ≤ %4；最坏情况 %5</numerusform>
        </translation>
    </message>
    <message>
        <source>%1 · %2</source>
        <translation>%1 · %2</translation>
    </message>
    <message>
        <source>&gt; %1</source>
        <translation>&gt; %1</translation>
    </message>
    <message>
        <source>≤ %1</source>
        <translation>≤ %1</translation>
    </message>
    <message>
        <source>%1 s</source>
        <translation>%1 秒</translation>
    </message>
    <message numerus="yes">
        <source>%n attempt(s) × %1, backoff %2 ×%3 ≤ %4, jittered; worst case %5</source>
        <translation>
            <numerusform>%n 次尝试 × %1，退避 %2 ×%3 ≤ %4（随机抖动）；最坏情况 %5</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n attempt(s) × %1, backoff %2 ×%3 ≤ %4, decorrelated jitter; worst case %5</source>
        <translation>
            <numerusform>%n 次尝试 × %1，退避 %2 ×%3 ≤ %4（去相关抖动）；最坏情况 %5</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>AgentConsole::SupportStore</name>
    <message>
        <source>cannot create the data directory %1</source>
        <translation>无法创建数据目录 %1</translation>
    </message>
    <message>
        <source>cannot open the store %1: %2</source>
        <translation>无法打开数据库 %1：%2</translation>
    </message>
    <message>
        <source>the store %1 is not a readable SQLite database</source>
        <translation>数据库 %1 不是可读取的 SQLite 数据库</translation>
    </message>
    <message>
        <source>the store %1 is damaged (its pages do not read back); restore it from a backup, or move it aside to start with the demo data (its tickets are then lost)</source>
        <translation>数据库 %1 已损坏（其数据页无法正确读回）；请从备份恢复，或将其移走后以演示数据重新开始（其中的工单将丢失）</translation>
    </message>
    <message>
        <source>the store %1 has schema version %2; this build knows %3</source>
        <translation>数据库 %1 的结构版本为 %2；当前版本只支持 %3</translation>
    </message>
    <message>
        <source>cannot write the store %1: %2</source>
        <translation>无法写入数据库 %1：%2</translation>
    </message>
    <message>
        <source>cannot bring the store %1 from schema version %2 to %3: %4</source>
        <translation>无法将数据库 %1 的结构从版本 %2 升级到 %3：%4</translation>
    </message>
</context>
<context>
    <name>AgentConsole::TeamDatabase</name>
    <message>
        <source>a team&apos;s database is named postgresql://user@host:port/database</source>
        <translation>团队数据库的地址格式为 postgresql://user@host:port/database</translation>
    </message>
    <message>
        <source>leave the password out of the address: the console reads it from the keychain, ~/.pgpass or a PostgreSQL service file</source>
        <translation>请不要在地址中写入密码：控制台会从系统钥匙串、~/.pgpass 或 PostgreSQL 服务文件中读取</translation>
    </message>
</context>
<context>
    <name>AgentConsole::TeamPolicy</name>
    <message>
        <source>providerChain.primary.provider: expected %1</source>
        <translation>providerChain.primary.provider：应为 %1</translation>
    </message>
    <message>
        <source>providerChain.secondary: goes with a primary provider</source>
        <translation>providerChain.secondary：需要同时设置主提供方</translation>
    </message>
    <message>
        <source>providerChain.fallback: expected %1</source>
        <translation>providerChain.fallback：应为 %1</translation>
    </message>
    <message>
        <source>providerChain: %1</source>
        <translation>providerChain：%1</translation>
    </message>
    <message>
        <source>The team policy %1 cannot be used: %2</source>
        <translation>无法使用团队策略 %1：%2</translation>
    </message>
    <message>
        <source>%1 is locked by your team&apos;s policy (version %2)</source>
        <translation>%1 已被团队策略锁定（版本 %2）</translation>
    </message>
    <message>
        <source>The team policy %1 cannot be used with these settings: %2</source>
        <translation>团队策略 %1 无法与这些设置一起使用：%2</translation>
    </message>
    <message>
        <source>Set by your team&apos;s policy (version %1)</source>
        <translation>由团队策略设定（版本 %1）</translation>
    </message>
    <message>
        <source>%1 are locked by your team&apos;s policy (version %2)</source>
        <translation>%1 已被团队策略锁定（版本 %2）</translation>
    </message>
    <message>
        <source>No team policy</source>
        <translation>无团队策略</translation>
    </message>
    <message>
        <source>Team policy %1 (%2)</source>
        <translation>团队策略 %1（%2）</translation>
    </message>
    <message>
        <source>The provider</source>
        <translation>模型提供方</translation>
    </message>
    <message>
        <source>The provider&apos;s base URL</source>
        <translation>提供方的基础 URL</translation>
    </message>
    <message>
        <source>The model</source>
        <translation>模型</translation>
    </message>
    <message>
        <source>The API key&apos;s variable</source>
        <translation>API 密钥的环境变量</translation>
    </message>
    <message>
        <source>Streaming</source>
        <translation>流式输出</translation>
    </message>
    <message>
        <source>The offline fallback</source>
        <translation>离线回退</translation>
    </message>
    <message>
        <source>The conversation sent to the model</source>
        <translation>发送给模型的对话长度</translation>
    </message>
    <message>
        <source>The secondary provider</source>
        <translation>备用提供方</translation>
    </message>
    <message>
        <source>The backend</source>
        <translation>工具后端</translation>
    </message>
    <message>
        <source>The backend&apos;s URL</source>
        <translation>后端 URL</translation>
    </message>
    <message>
        <source>The ledger</source>
        <translation>幂等账本</translation>
    </message>
    <message>
        <source>The language</source>
        <translation>界面语言</translation>
    </message>
    <message>
        <source>The MCP tool policies</source>
        <translation>MCP 工具策略</translation>
    </message>
    <message>
        <source>The tool retry policies</source>
        <translation>工具重试策略</translation>
    </message>
    <message>
        <source>The MCP servers</source>
        <translation>MCP 服务器</translation>
    </message>
    <message>
        <source>The team database</source>
        <translation>团队数据库</translation>
    </message>
</context>
<context>
    <name>AgentConsole::ToolCallCard</name>
    <message>
        <source>Click to show or hide the attempt timeline</source>
        <translation>点击显示或隐藏尝试时间线</translation>
    </message>
    <message>
        <source>(unnamed tool)</source>
        <translation>（未命名工具）</translation>
    </message>
    <message>
        <source>Operation %1</source>
        <translation>操作 %1</translation>
    </message>
    <message>
        <source>Incident %1 (details in the local log)</source>
        <translation>事件 %1（详情见本地日志）</translation>
    </message>
    <message>
        <source>%1: %2, %3</source>
        <translation>%1：%2，%3</translation>
    </message>
    <message>
        <source>Copy</source>
        <translation>复制</translation>
    </message>
    <message>
        <source>Copy this tool call</source>
        <translation>复制此工具调用</translation>
    </message>
    <message>
        <source>%1 %2</source>
        <translation>%1 %2</translation>
    </message>
    <message>
        <source>Copy the operation id</source>
        <translation>复制操作编号</translation>
    </message>
    <message>
        <source>Copy the id of what it made</source>
        <translation>复制所创建内容的编号</translation>
    </message>
    <message>
        <source>Copy %1 %2</source>
        <translation>复制%1 %2</translation>
    </message>
    <message>
        <source>Copied</source>
        <translation>已复制</translation>
    </message>
    <message>
        <source>Tool %1</source>
        <translation>工具 %1</translation>
    </message>
    <message>
        <source>Worst case %1, turn deadline %2 left when it started</source>
        <translation>最坏情况 %1；开始时本轮截止还剩 %2</translation>
    </message>
    <message>
        <source>Worst case %1</source>
        <translation>最坏情况 %1</translation>
    </message>
    <message>
        <source>%1: %2, %3, %4</source>
        <translation>%1：%2，%3，%4</translation>
    </message>
</context>
<context>
    <name>AgentConsole::ToolCallText</name>
    <message>
        <source>OK</source>
        <translation>成功</translation>
    </message>
    <message>
        <source>Invalid</source>
        <translation>参数无效</translation>
    </message>
    <message>
        <source>Context missing</source>
        <translation>缺少上下文</translation>
    </message>
    <message>
        <source>Unknown tool</source>
        <translation>未知工具</translation>
    </message>
    <message>
        <source>Timed out</source>
        <translation>超时</translation>
    </message>
    <message>
        <source>Unavailable</source>
        <translation>不可用</translation>
    </message>
    <message>
        <source>Rejected</source>
        <translation>被拒绝</translation>
    </message>
    <message>
        <source>Access denied</source>
        <translation>无权访问</translation>
    </message>
    <message>
        <source>Cancelled</source>
        <translation>已取消</translation>
    </message>
    <message>
        <source>Internal error</source>
        <translation>内部错误</translation>
    </message>
    <message>
        <source>Declined</source>
        <translation>已拒绝</translation>
    </message>
    <message>
        <source>Conflict</source>
        <translation>冲突</translation>
    </message>
    <message>
        <source>Outcome unknown</source>
        <translation>结果未知</translation>
    </message>
    <message>
        <source>In progress</source>
        <translation>处理中</translation>
    </message>
    <message>
        <source>Not found</source>
        <translation>未找到</translation>
    </message>
    <message>
        <source>Failed</source>
        <translation>失败</translation>
    </message>
    <message>
        <source>Awaiting confirmation</source>
        <translation>等待确认</translation>
    </message>
    <message>
        <source>Running…</source>
        <translation>进行中…</translation>
    </message>
    <message>
        <source>Circuit open</source>
        <translation>已熔断</translation>
    </message>
    <message>
        <source>%1: %2</source>
        <translation>%1：%2</translation>
    </message>
    <message>
        <source>no arguments</source>
        <translation>无参数</translation>
    </message>
    <message>
        <source>%1 ms</source>
        <translation>%1 毫秒</translation>
    </message>
    <message>
        <source>%1 s</source>
        <translation>%1 秒</translation>
    </message>
    <message>
        <source>not run yet</source>
        <translation>尚未执行</translation>
    </message>
    <message>
        <source>in progress</source>
        <translation>进行中</translation>
    </message>
    <message numerus="yes">
        <source>%n attempt(s) so far</source>
        <translation>
            <numerusform>已尝试 %n 次</numerusform>
        </translation>
    </message>
    <message>
        <source>not attempted · circuit open</source>
        <translation>未尝试 · 已熔断</translation>
    </message>
    <message>
        <source>not run</source>
        <translation>未执行</translation>
    </message>
    <message numerus="yes">
        <source>%n attempt(s)</source>
        <translation>
            <numerusform>%n 次尝试</numerusform>
        </translation>
    </message>
    <message>
        <source>answered in %1, nothing matched</source>
        <translation>%1内响应，无匹配结果</translation>
    </message>
    <message>
        <source>ended after %1 with its outcome unknown (it may have been done)</source>
        <translation>%1后结束，结果未知（可能已执行）</translation>
    </message>
    <message>
        <source>answered in %1: already in progress, not run again</source>
        <translation>%1内响应：已在处理中，未重复执行</translation>
    </message>
    <message>
        <source>refused after %1: same key used with other arguments</source>
        <translation>%1后被拒绝：同一幂等键使用了不同参数</translation>
    </message>
    <message>
        <source>declined by the staff member</source>
        <translation>已被客服拒绝</translation>
    </message>
    <message>
        <source>arguments refused after %1</source>
        <translation>%1后参数被拒绝</translation>
    </message>
    <message>
        <source>refused after %1: session context missing</source>
        <translation>%1后被拒绝：缺少会话上下文</translation>
    </message>
    <message>
        <source>answered in %1 without a result (%2)</source>
        <translation>%1内响应，但没有结果（%2）</translation>
    </message>
    <message>
        <source>not made: the deadline passed during the backoff, at %1</source>
        <translation>未进行：退避期间已过截止时间（%1 时）</translation>
    </message>
    <message>
        <source>not made: cancelled during the backoff, at %1</source>
        <translation>未进行：退避期间被取消（%1 时）</translation>
    </message>
    <message>
        <source>stopped at the deadline after %1</source>
        <translation>%1后因到达截止时间而停止</translation>
    </message>
    <message>
        <source>cancelled after %1</source>
        <translation>%1后被取消</translation>
    </message>
    <message>
        <source>succeeded in %1</source>
        <translation>%1内成功</translation>
    </message>
    <message>
        <source>failed (transient) after %1</source>
        <translation>%1后失败（临时性）</translation>
    </message>
    <message>
        <source>timed out after %1</source>
        <translation>%1后超时</translation>
    </message>
    <message>
        <source>rejected by the backend after %1</source>
        <translation>%1后被后端拒绝</translation>
    </message>
    <message>
        <source>access denied after %1</source>
        <translation>%1后被拒绝访问</translation>
    </message>
    <message>
        <source>internal error after %1</source>
        <translation>%1后发生内部错误</translation>
    </message>
    <message>
        <source>not attempted: circuit open (the service is known to be down), cool-down %1 left</source>
        <translation>未尝试：已熔断（已知服务不可用），冷却剩余 %1</translation>
    </message>
    <message>
        <source>not attempted: circuit half-open (a trial call is testing the service)</source>
        <translation>未尝试：熔断器半开（试探调用正在检测服务）</translation>
    </message>
    <message>
        <source>not attempted: the service is known to be down (circuit open)</source>
        <translation>未尝试：已知服务不可用（已熔断）</translation>
    </message>
    <message>
        <source>, waited %1 ms as the server asked (Retry-After)</source>
        <translation>，按服务器要求等待了 %1 毫秒（Retry-After）</translation>
    </message>
    <message>
        <source>, backoff %1 ms</source>
        <translation>，退避 %1 毫秒</translation>
    </message>
    <message>
        <source>circuit open</source>
        <translation>已熔断</translation>
    </message>
    <message>
        <source>failed</source>
        <translation>失败</translation>
    </message>
    <message>
        <source>Waiting for the staff member to confirm; nothing has run</source>
        <translation>等待客服确认；尚未执行任何操作</translation>
    </message>
    <message>
        <source>#%1 after backoff…</source>
        <translation>#%1 退避后进行…</translation>
    </message>
    <message>
        <source>#%1 running…</source>
        <translation>#%1 进行中…</translation>
    </message>
    <message>
        <source>Not attempted: circuit open (the service is known to be down); cool-down %1 left</source>
        <translation>未尝试：已熔断（已知服务不可用）；冷却剩余 %1</translation>
    </message>
    <message>
        <source>Not attempted: circuit half-open (a trial call is testing the service)</source>
        <translation>未尝试：熔断器半开（试探调用正在检测服务）</translation>
    </message>
    <message>
        <source>Not attempted: %1</source>
        <translation>未尝试：%1</translation>
    </message>
    <message>
        <source>Confirm: run %1</source>
        <translation>确认：执行%1</translation>
    </message>
    <message>
        <source>Confirm</source>
        <translation>确认</translation>
    </message>
    <message>
        <source>Arguments</source>
        <translation>参数</translation>
    </message>
    <message>
        <source>ok</source>
        <translation>成功</translation>
    </message>
    <message>
        <source>timeout</source>
        <translation>超时</translation>
    </message>
    <message>
        <source>rejected</source>
        <translation>被拒绝</translation>
    </message>
    <message>
        <source>denied</source>
        <translation>无权</translation>
    </message>
    <message>
        <source>error</source>
        <translation>错误</translation>
    </message>
    <message>
        <source>cancelled</source>
        <translation>已取消</translation>
    </message>
    <message>
        <source>deadline</source>
        <translation>截止</translation>
    </message>
    <message>
        <source>read</source>
        <translation>只读</translation>
    </message>
    <message>
        <source>idempotent write</source>
        <translation>幂等写入</translation>
    </message>
    <message>
        <source>confirm first</source>
        <translation>先确认</translation>
    </message>
    <message>
        <source>Policy set by staff: %1 (annotations said: %2)</source>
        <translation>策略由客服设定：%1（注解为：%2）</translation>
    </message>
    <message>
        <source>Policy from the server&apos;s annotations (hints, not verified): %1</source>
        <translation>策略来自服务器的注解（提示，未经验证）：%1</translation>
    </message>
    <message>
        <source>Whatever the policy, the arguments are validated and every attempt keeps its deadline. Staff can change it in Settings › MCP tool policies.</source>
        <translation>无论何种策略，参数都会校验，每次尝试都有时限。客服可在“设置 › MCP 工具策略”中更改。</translation>
    </message>
    <message>
        <source>Annotations are hints from the server, which may not be trusted: they let this tool be retried without staff confirming it.</source>
        <translation>注解是服务器给出的提示，未必可信：它们让此工具无需客服确认即可重试。</translation>
    </message>
    <message>
        <source>Sign-in needed</source>
        <translation>需要登录</translation>
    </message>
    <message>
        <source>sign-in</source>
        <translation>需登录</translation>
    </message>
    <message>
        <source>Waiting for your answer to the question from %1 (the call&apos;s time keeps running)</source>
        <translation>正在等待您回答 %1 的问题（调用的计时不会暂停）</translation>
    </message>
    <message>
        <source>%1 asked a question: answered</source>
        <translation>%1 提了一个问题：已回答</translation>
    </message>
    <message>
        <source>%1 asked a question: declined</source>
        <translation>%1 提了一个问题：已拒绝</translation>
    </message>
    <message>
        <source>%1 asked a question: dismissed</source>
        <translation>%1 提了一个问题：已取消</translation>
    </message>
    <message>
        <source>%1 asked a question: withdrawn, the call ended before an answer</source>
        <translation>%1 提了一个问题：已撤回，调用在回答前已结束</translation>
    </message>
    <message>
        <source>refused after %1: its server needs a sign-in</source>
        <translation>%1后被拒绝：其服务器需要登录</translation>
    </message>
    <message>
        <source>Not confirmed</source>
        <translation>未确认</translation>
    </message>
    <message>
        <source>just now</source>
        <translation>刚刚</translation>
    </message>
    <message numerus="yes">
        <source>%n min ago</source>
        <translation>
            <numerusform>%n 分钟前</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n h ago</source>
        <translation>
            <numerusform>%n 小时前</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n day(s) ago</source>
        <translation>
            <numerusform>%n 天前</numerusform>
        </translation>
    </message>
    <message>
        <source>Earlier ones</source>
        <translation>已有记录</translation>
    </message>
    <message>
        <source>by you</source>
        <translation>由您创建</translation>
    </message>
    <message>
        <source>%1, by you</source>
        <translation>%1，由您创建</translation>
    </message>
    <message>
        <source>by %1</source>
        <translation>由 %1 创建</translation>
    </message>
    <message>
        <source>%1, by %2</source>
        <translation>%1，由 %2 创建</translation>
    </message>
    <message>
        <source>%1: checking…</source>
        <translation>%1：正在查询…</translation>
    </message>
    <message>
        <source>%1: none</source>
        <translation>%1：无</translation>
    </message>
    <message>
        <source>%1:</source>
        <translation>%1：</translation>
    </message>
    <message>
        <source>%1 could not be checked (%2). The console&apos;s own record is below.</source>
        <translation>%1 无法查询（%2）。以下为本控制台自己的记录。</translation>
    </message>
    <message>
        <source>%1 could not be checked (%2).</source>
        <translation>%1 无法查询（%2）。</translation>
    </message>
    <message numerus="yes">
        <source>and %n more</source>
        <translation>
            <numerusform>另有 %n 张</numerusform>
        </translation>
    </message>
    <message>
        <source>from the console&apos;s record</source>
        <translation>来自本控制台的记录</translation>
    </message>
    <message>
        <source>%1 already has %3 (“%2”)</source>
        <translation>%1 已有 %3（“%2”）</translation>
    </message>
    <message>
        <source>, created %1</source>
        <translation>，创建于%1</translation>
    </message>
    <message>
        <source>%1 (%2)</source>
        <translation>%1（%2）</translation>
    </message>
    <message>
        <source>Not run (too many at once)</source>
        <translation>未执行（一次请求过多）</translation>
    </message>
</context>
<context>
    <name>AgentConsole::TranscriptView</name>
    <message numerus="yes">
        <source>%n attempt(s)</source>
        <translation>
            <numerusform>%n 次尝试</numerusform>
        </translation>
    </message>
    <message>
        <source>model: %1</source>
        <translation>模型：%1</translation>
    </message>
    <message>
        <source>fallback ×%1</source>
        <translation>备用 ×%1</translation>
    </message>
    <message>
        <source>tools: %1</source>
        <translation>工具：%1</translation>
    </message>
    <message>
        <source>stopped before looking anything up</source>
        <translation>在查询之前停止</translation>
    </message>
    <message>
        <source>stopped while looking things up</source>
        <translation>在查询过程中停止</translation>
    </message>
    <message>
        <source>stopped after looking things up, before answering</source>
        <translation>在查询完成后、作答之前停止</translation>
    </message>
    <message>
        <source>stopped while writing the answer</source>
        <translation>在撰写回答时停止</translation>
    </message>
    <message>
        <source>could not write the answer</source>
        <translation>未能写出回答</translation>
    </message>
    <message>
        <source>Agent</source>
        <translation>智能体</translation>
    </message>
    <message>
        <source>Looking this up…</source>
        <translation>正在查询…</translation>
    </message>
    <message>
        <source>The model&apos;s thinking</source>
        <translation>模型的思考过程</translation>
    </message>
    <message>
        <source>Resumed: %1</source>
        <translation>已恢复：%1</translation>
    </message>
    <message>
        <source>The console %1. The request was carried on from there (restart %2); lookups whose results were kept did not run again, and no ticket was sent twice.</source>
        <translation>控制台%1。请求从该处继续（第 %2 次重启）；已保存结果的查询未再次执行，工单也不会重复提交。</translation>
    </message>
    <message numerus="yes">
        <source>%n lookup(s) not run: too many asked for at once</source>
        <translation>
            <numerusform>%n 项查询未执行：一次请求的查询过多</numerusform>
        </translation>
    </message>
    <message>
        <source>Waiting for your confirmation below…</source>
        <translation>等待您在下方确认…</translation>
    </message>
    <message>
        <source>The turn was cancelled before an answer was written.</source>
        <translation>本轮在写出回答前已取消。</translation>
    </message>
    <message>
        <source>No answer could be written for this question.</source>
        <translation>无法为此问题写出回答。</translation>
    </message>
    <message>
        <source>Answer cut off</source>
        <translation>回答被截断</translation>
    </message>
    <message>
        <source>The model stopped at its output limit: what it wrote is shown as it came, and the rest is missing.</source>
        <translation>模型达到输出上限而停止：已生成的内容原样显示，其余部分缺失。</translation>
    </message>
    <message>
        <source>Agent · %1</source>
        <translation>智能体 · %1</translation>
    </message>
    <message>
        <source>Answered</source>
        <translation>已回答</translation>
    </message>
    <message>
        <source>Partly answered</source>
        <translation>部分回答</translation>
    </message>
    <message>
        <source>Declined by the model</source>
        <translation>模型拒绝回答</translation>
    </message>
    <message>
        <source>Not answered</source>
        <translation>未回答</translation>
    </message>
    <message>
        <source>Cancelled</source>
        <translation>已取消</translation>
    </message>
    <message>
        <source>Failed</source>
        <translation>失败</translation>
    </message>
    <message numerus="yes">
        <source>%n tool call(s)</source>
        <translation>
            <numerusform>%n 次工具调用</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n tool round(s)</source>
        <translation>
            <numerusform>%n 轮工具调用</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>resumed %n time(s)</source>
        <translation>
            <numerusform>恢复 %n 次</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n circuit(s) opened</source>
        <translation>
            <numerusform>%n 个熔断器打开</numerusform>
        </translation>
    </message>
    <message>
        <source>incident %1 (details in the local log)</source>
        <translation>事件 %1（详情见本地日志）</translation>
    </message>
    <message>
        <source>Attempts per layer, retries included. A fallback means the model asked first failed and the next one in the chain answered.</source>
        <translation>各层的尝试次数（含重试）。“备用”表示首选模型失败，由链中的下一个模型作答。</translation>
    </message>
    <message>
        <source>Copy</source>
        <translation>复制</translation>
    </message>
    <message>
        <source>Copy the answer</source>
        <translation>复制回答</translation>
    </message>
    <message>
        <source>Looking this up: attempt %1 of %2…</source>
        <translation>正在查询：第 %1 次尝试（共 %2 次）…</translation>
    </message>
    <message>
        <source>Looking this up: attempt %1…</source>
        <translation>正在查询：第 %1 次尝试…</translation>
    </message>
    <message>
        <source>Answering with the fallback model %1: attempt %2 of %3…</source>
        <translation>正在由备用模型 %1 作答：第 %2 次尝试（共 %3 次）…</translation>
    </message>
    <message>
        <source>Answering with the fallback model %1…</source>
        <translation>正在由备用模型 %1 作答…</translation>
    </message>
    <message>
        <source>The model is retrying: attempt %1 of %2…</source>
        <translation>模型正在重试：第 %1 次尝试（共 %2 次）…</translation>
    </message>
    <message>
        <source>%1 (%2)</source>
        <translation>%1（%2）</translation>
    </message>
    <message>
        <source>Copy answer</source>
        <translation>复制回答</translation>
    </message>
    <message>
        <source>Copy as Markdown</source>
        <translation>复制为 Markdown</translation>
    </message>
    <message>
        <source>, </source>
        <translation>、</translation>
    </message>
    <message>
        <source>Not offered: %1</source>
        <translation>未提供：%1</translation>
    </message>
    <message>
        <source>These MCP servers were not ready when the question was asked, so the model was not offered their tools: %1</source>
        <translation>提问时这些 MCP 服务器尚未就绪，因此未向模型提供它们的工具：%1</translation>
    </message>
    <message numerus="yes">
        <source>%n earlier turn(s) not sent to the model</source>
        <translation>
            <numerusform>%n 个较早的轮次未发送给模型</numerusform>
        </translation>
    </message>
    <message>
        <source>Scenario run: %1</source>
        <translation>场景运行：%1</translation>
    </message>
    <message>
        <source>Interrupted — Resume or Dismiss it in the banner above</source>
        <translation>已中断——请在上方横幅中选择“恢复”或“忽略”</translation>
    </message>
    <message>
        <source>Ask about an order, its shipment or stock, or try one of these. Each tool the agent uses appears as a card under its answer; click a card to see every attempt.</source>
        <translation>询问订单、物流或库存，或试试下面的问题。智能体用到的每个工具都会以卡片形式显示在回答下方；点击卡片可查看每一次尝试。</translation>
    </message>
    <message>
        <source>Where is order A1001 and is SKU-200 in stock?</source>
        <translation>订单 A1001 到哪里了？SKU-200 有货吗？</translation>
    </message>
    <message>
        <source>Where is order A1004 right now?</source>
        <translation>订单 A1004 现在在哪里？</translation>
    </message>
    <message>
        <source>Create an after-sales ticket for order A1001: the mug arrived broken</source>
        <translation>为订单 A1001 创建售后工单：杯子到货时已破损</translation>
    </message>
    <message>
        <source>Try again: %1</source>
        <translation>再试一次：%1</translation>
    </message>
    <message>
        <source>; </source>
        <translation>；</translation>
    </message>
    <message>
        <source>Try again</source>
        <translation>再试一次</translation>
    </message>
</context>
<context>
    <name>AgentConsole::TurnJournal</name>
    <message>
        <source>cannot open the turn journal %1; if it is damaged, restore it from a backup or move it aside (its interrupted turns are then lost)</source>
        <translation>无法打开轮次日志库 %1；如果它已损坏，请从备份恢复或将其移走（其中中断的轮次将丢失）</translation>
    </message>
    <message>
        <source>the turn journal %1 has schema version %2, newer than this Agent Console knows (%3): update the console; the file was left as it is</source>
        <translation>轮次日志库 %1 的结构版本为 %2，比当前智能客服控制台所支持的版本（%3）更新：请更新控制台；该文件保持原样</translation>
    </message>
    <message>
        <source>cannot reach the team database %1</source>
        <translation>无法连接团队数据库 %1</translation>
    </message>
    <message>
        <source>the turn journal in the team database %1 has schema version %2, newer than this Agent Console knows (%3): update the console; the database was left as it is</source>
        <translation>团队数据库 %1 中的轮次日志库结构版本为 %2，比当前智能客服控制台所支持的版本（%3）更新：请更新控制台；该数据库保持原样</translation>
    </message>
    <message>
        <source>cannot update the turn journal in the team database %1</source>
        <translation>无法更新团队数据库 %1 中的轮次日志库结构</translation>
    </message>
    <message>
        <source>cannot read the team&apos;s members in %1</source>
        <translation>无法读取 %1 中的团队成员</translation>
    </message>
    <message>
        <source>the database role %1 is not in the team&apos;s members: a database administrator adds it to team_members (docs/TEAM.md)</source>
        <translation>数据库角色 %1 不在团队成员中：请数据库管理员将其加入 team_members（见 docs/TEAM.md）</translation>
    </message>
    <message>
        <source>the database role %1 belongs to %2, not to %3: sign in with your own role</source>
        <translation>数据库角色 %1 属于 %2，而不是 %3：请使用您自己的角色登录</translation>
    </message>
</context>
<context>
    <name>FaultPlans</name>
    <message>
        <source>The logistics service hangs: every attempt times out; other tools still answer.</source>
        <translation>物流服务挂起：每次尝试都超时；其他工具照常应答。</translation>
    </message>
    <message>
        <source>The logistics service fails twice per call, then answers: retries win.</source>
        <translation>物流服务每次调用先失败两次，然后应答：重试奏效。</translation>
    </message>
    <message>
        <source>Every tool is slow and fails a third of its attempts, reproducibly.</source>
        <translation>每个工具都很慢，且三分之一的尝试会失败，可复现。</translation>
    </message>
    <message>
        <source>The primary model&apos;s quota is spent: it is never retried, it is taken out of the chain, and the next model (the offline demo model, with --fallback offline) answers. Works with no network: the faulted offline model stands in for the provider.</source>
        <translation>主模型的配额已用完：不重试，将其移出模型链，由下一个模型（启用离线兜底时为离线演示模型）回答。无需网络：由注入故障的离线模型扮演服务商。</translation>
    </message>
    <message>
        <source>The primary model answers 429 to the first two attempts of every call, with Retry-After: 1 s; the model layer waits and retries, and the third attempt answers (model_retry_count 2 per call).</source>
        <translation>主模型对每次调用的前两次尝试回复 429，并带 Retry-After: 1 秒；模型层等待后重试，第三次尝试得到应答（每次调用 model_retry_count 为 2）。</translation>
    </message>
    <message>
        <source>With --backend http and support-sim: the sim&apos;s logistics route answers 503 with Retry-After: 1 to its next two requests, then heals; the console&apos;s retries win.</source>
        <translation>适用于 HTTP 后端与 support-sim：模拟服务的物流接口对接下来的两个请求回复 503 并带 Retry-After: 1，之后恢复；控制台的重试奏效。</translation>
    </message>
    <message>
        <source>The embedded store commits every ticket, then its answer is lost: the status query by idempotency key finds the one ticket, and no second one is made.</source>
        <translation>内嵌商店提交每张工单后丢失其应答：按幂等键查询状态找到那一张工单，不会再建第二张。</translation>
    </message>
</context>
<context>
    <name>Scenarios</name>
    <message>
        <source>Access denied</source>
        <translation>无权访问</translation>
    </message>
    <message>
        <source>Everything answers</source>
        <translation>一切正常</translation>
    </message>
    <message>
        <source>The whole backend down</source>
        <translation>整个后端宕机</translation>
    </message>
    <message>
        <source>Bad key (provider refuses)</source>
        <translation>密钥错误（服务商拒绝）</translation>
    </message>
    <message>
        <source>The model provider refuses every call, as with a wrong API key: the offline default has no key to get wrong, so the plan&apos;s model fault &apos;unavailable&apos; stands for the refusal; nothing is retried and the next model in the chain (the un-faulted offline model) answers instead.</source>
        <translation>模型服务商拒绝所有调用，如同 API 密钥错误：默认的离线模型没有密钥，因此用方案中的模型故障“不可用”代表这种拒绝；不做重试，改由链中的下一个模型（未注入故障的离线模型）作答。</translation>
    </message>
    <message>
        <source>Cancelled by staff</source>
        <translation>客服取消</translation>
    </message>
    <message>
        <source>The logistics lookup hangs and the staff member cancels the turn after 500 ms: the running attempt is cancelled and the turn ends cancelled, not as a timeout.</source>
        <translation>物流查询挂起，客服在 500 毫秒后取消本轮：正在进行的尝试被取消，本轮以“已取消”结束，而不是超时。</translation>
    </message>
    <message>
        <source>No staff member in the session</source>
        <translation>会话中没有客服身份</translation>
    </message>
    <message>
        <source>A crash between two lookups, then resume</source>
        <translation>两项查询之间崩溃后恢复</translation>
    </message>
    <message>
        <source>A child agent-cli is killed right after the first of two lookup results was checkpointed; the console resumes the turn from its checkpoint and it is answered, the stored result kept rather than looked up again.</source>
        <translation>子进程 agent-cli 在两项查询中第一项的结果写入检查点后立即被终止；控制台从检查点恢复本轮并作答，已保存的结果直接沿用，不再重新查询。</translation>
    </message>
    <message>
        <source>A crash during a write, then resume</source>
        <translation>写操作期间崩溃后恢复</translation>
    </message>
    <message>
        <source>A child agent-cli on the same data directory is killed right after the store committed the ticket, before its answer came back; the console then resumes the turn, recovers the write through the ledger and the backend, and exactly one ticket exists.</source>
        <translation>使用同一数据目录的子进程 agent-cli 在数据库提交工单后、响应返回前被终止；控制台随后恢复本轮，通过幂等台账和后端找回该写操作，最终恰好只有一张工单。</translation>
    </message>
    <message>
        <source>Declined confirmation</source>
        <translation>拒绝确认</translation>
    </message>
    <message>
        <source>Down, and the breaker opens</source>
        <translation>服务宕机，熔断器打开</translation>
    </message>
    <message>
        <source>Flaky, then OK on attempt 3</source>
        <translation>时好时坏，第 3 次尝试成功</translation>
    </message>
    <message>
        <source>A bug in a tool</source>
        <translation>工具中的程序错误</translation>
    </message>
    <message>
        <source>Malformed order number</source>
        <translation>订单号格式错误</translation>
    </message>
    <message>
        <source>Malformed tool arguments</source>
        <translation>工具参数格式错误</translation>
    </message>
    <message>
        <source>Rate-limited model with Retry-After</source>
        <translation>模型限流（带 Retry-After）</translation>
    </message>
    <message>
        <source>The model answers 429 with Retry-After 300 ms to the first two attempts of every call: the model layer waits as told and retries, each retry counted, and the turn is answered.</source>
        <translation>模型对每次调用的前两次尝试返回 429 和 Retry-After 300 毫秒：模型层按要求等待后重试，每次重试都计数，本轮为“已回答”。</translation>
    </message>
    <message>
        <source>Not found</source>
        <translation>未找到</translation>
    </message>
    <message>
        <source>An order that does not exist, an order not shipped yet and an unknown SKU: each is answered &quot;not found&quot; at once, never retried, and the turn still counts as answered.</source>
        <translation>一个不存在的订单、一个尚未发货的订单和一个未知 SKU：每项都立即返回“未找到”，不会重试，本轮仍算作“已回答”。</translation>
    </message>
    <message>
        <source>A write still in progress</source>
        <translation>写操作仍在处理中</translation>
    </message>
    <message>
        <source>Quota exhausted, falls back</source>
        <translation>配额用尽，改用备用模型</translation>
    </message>
    <message>
        <source>The model&apos;s quota is exhausted: the error is final, never retried, and the provider is taken out of the chain; the next model in the chain (the un-faulted offline model, with no key and no network) plans and answers both model calls, so the turn is still answered.</source>
        <translation>模型配额已用尽：该错误为最终错误，不会重试，服务商被移出模型链；链中的下一个模型（未注入故障的离线模型，无需密钥和网络）负责规划并完成两次模型调用，本轮仍为“已回答”。</translation>
    </message>
    <message>
        <source>Rejected by the backend</source>
        <translation>被后端拒绝</translation>
    </message>
    <message>
        <source>Same key, other details</source>
        <translation>同一幂等键，不同参数</translation>
    </message>
    <message>
        <source>Slow past the timeout</source>
        <translation>慢到超时</translation>
    </message>
    <message>
        <source>Ticket answer lost, status query settles it</source>
        <translation>工单响应丢失，由状态查询确认</translation>
    </message>
    <message>
        <source>Ticket write flaky, then OK</source>
        <translation>工单写入时好时坏，最终成功</translation>
    </message>
    <message>
        <source>Too many calls in one message</source>
        <translation>单条消息调用过多</translation>
    </message>
    <message>
        <source>Unknown tool</source>
        <translation>未知工具</translation>
    </message>
    <message>
        <source>Write outcome unknown</source>
        <translation>写操作结果未知</translation>
    </message>
    <message>
        <source>The order-status backend refuses like a 401/403: the lookup is denied on its first attempt and never retried, while the logistics lookup answers.</source>
        <translation>订单状态后端像 401/403 一样拒绝访问：查询在第一次尝试时即被拒绝，不会重试；物流查询照常响应。</translation>
    </message>
    <message>
        <source>Two lookups in one question, no faults: both answer on the first attempt and the turn is answered.</source>
        <translation>一个问题包含两项查询、没有故障：两项都在第一次尝试时成功，本轮为“已回答”。</translation>
    </message>
    <message>
        <source>The plan&apos;s backend entry makes every tool without an entry of its own fail like a 503: both lookups are still unavailable after three attempts and the answer says plainly that nothing could be looked up, without guessing.</source>
        <translation>方案中的后端条目让所有未单独设置的工具像 503 一样失败：两项查询在三次尝试后仍不可用，回答如实说明无法查询，不做猜测。</translation>
    </message>
    <message>
        <source>The question is asked with no user and no tenant in the trusted session: the lookup is refused before any attempt for want of the staff member&apos;s context, since identity never comes from the model.</source>
        <translation>在可信会话中没有用户和租户的情况下提问：查询因缺少客服身份，在任何尝试之前即被拒绝，因为身份绝不来自模型。</translation>
    </message>
    <message>
        <source>The staff member declines the after-sales ticket shown for confirmation: nothing is sent, the call ends declined and no ticket exists.</source>
        <translation>客服拒绝了待确认的售后工单：不发送任何内容，调用以“已拒绝”结束，不会创建工单。</translation>
    </message>
    <message>
        <source>The logistics backend is down (every attempt fails like a 503): three calls are still unavailable after three attempts each, the logistics breaker opens on the tenth failure and the next call fails fast without an attempt, while the stock lookup, behind its own breaker, keeps answering.</source>
        <translation>物流后端宕机（每次尝试都像 503 一样失败）：三次调用各尝试三次后仍不可用，物流熔断器在第十次失败时打开，下一次调用不做尝试直接失败；库存查询有自己的熔断器，照常响应。</translation>
    </message>
    <message>
        <source>The logistics lookup fails like a 503 twice, then answers: the executor retries with backoff and the call succeeds on its third attempt.</source>
        <translation>物流查询像 503 一样失败两次后响应：执行器按退避重试，调用在第三次尝试时成功。</translation>
    </message>
    <message>
        <source>The stock lookup&apos;s body throws: the executor catches it once and reports an internal error without retrying; a bug fails the whole turn with a generic message and an incident id (details only in the local log), though the logistics lookup had answered.</source>
        <translation>库存查询内部抛出异常：执行器捕获一次并报告内部错误，不做重试；尽管物流查询已响应，程序错误仍使整轮失败，只给出通用提示和事件编号（详情仅在本地日志中）。</translation>
    </message>
    <message>
        <source>The question names order A12, which is not a valid order number: the call is refused as invalid before any attempt and never retried.</source>
        <translation>问题中的订单号 A12 不是有效订单号：调用在任何尝试之前即因参数无效被拒绝，不会重试。</translation>
    </message>
    <message>
        <source>The model calls the logistics lookup with arguments that are not JSON: the call is refused as invalid before any attempt, and the raw text is kept for the bug report.</source>
        <translation>模型以非 JSON 参数调用物流查询：调用在任何尝试之前即因参数无效被拒绝，原始文本保留以供问题报告使用。</translation>
    </message>
    <message>
        <source>A child agent-cli claims the ticket&apos;s idempotency key and is killed before it sends anything; asking the same request afresh (not resuming it) finds the write still in progress and says so instead of writing a second time.</source>
        <translation>子进程 agent-cli 占用了工单的幂等键，在发送任何内容前被终止；重新提出同一请求（而非恢复）时发现该写操作仍在处理中，如实告知，不会再写一次。</translation>
    </message>
    <message>
        <source>The inventory backend rejects the request like a 400: the lookup is rejected on its first attempt and never retried, while the logistics lookup answers.</source>
        <translation>库存后端像 400 一样拒绝请求：查询在第一次尝试时即被拒绝，不会重试；物流查询照常响应。</translation>
    </message>
    <message>
        <source>A request makes a ticket; replayed under the same request id it is answered from the ledger; asked again under that id with other details it is refused as a conflict and nothing new is written.</source>
        <translation>一个请求创建了工单；以同一请求编号重放时由幂等台账直接答复；以该编号但不同参数再次提出时因冲突被拒绝，不会写入任何新内容。</translation>
    </message>
    <message>
        <source>The logistics lookup takes 5 s against a 300 ms attempt timeout: three attempts time out and the call gives up as timed out, while the stock lookup still answers.</source>
        <translation>物流查询耗时 5 秒，而单次尝试超时为 300 毫秒：三次尝试均超时，调用以超时结束；库存查询照常响应。</translation>
    </message>
    <message>
        <source>The ticket is committed but its answer is lost: the same attempt asks the backend for the idempotency key&apos;s status, finds the ticket and succeeds with exactly one ticket.</source>
        <translation>工单已提交但响应丢失：同一次尝试向后端查询幂等键状态，找到该工单并以成功结束，恰好只有一张工单。</translation>
    </message>
    <message>
        <source>The first two ticket attempts fail like a 503 before anything is sent; the third asks the backend for the key&apos;s status (none), then writes: exactly one ticket, never a blind retry.</source>
        <translation>前两次工单尝试在发送任何内容之前像 503 一样失败；第三次先向后端查询幂等键状态（不存在），再写入：恰好只有一张工单，绝不盲目重试。</translation>
    </message>
    <message>
        <source>One question asks for seventeen stock lookups, one more than a model message may run: sixteen run and answer, the seventeenth is not run and the answer says so.</source>
        <translation>一个问题要求十七项库存查询，比一条模型消息允许的多一项：十六项执行并响应，第十七项不执行，回答中如实说明。</translation>
    </message>
    <message>
        <source>The model names a tool that does not exist: nothing runs, the call is answered as an unknown tool, and the answer says the lookup could not be made.</source>
        <translation>模型指定了一个不存在的工具：不执行任何操作，调用以“未知工具”结束，回答说明无法完成该查询。</translation>
    </message>
    <message>
        <source>Every ticket attempt hangs past its 300 ms timeout and the status query cannot be answered either: the call ends with its outcome unknown, with no blind retry and no ticket.</source>
        <translation>每次工单尝试都挂起超过 300 毫秒的超时，状态查询也无法得到答复：调用以结果未知结束，不盲目重试，也没有创建工单。</translation>
    </message>
</context>
<context>
    <name>ToolLabels</name>
    <message>
        <source>Return</source>
        <translation>退货</translation>
    </message>
    <message>
        <source>Exchange</source>
        <translation>换货</translation>
    </message>
    <message>
        <source>Refund</source>
        <translation>退款</translation>
    </message>
    <message>
        <source>Damaged item</source>
        <translation>商品破损</translation>
    </message>
    <message>
        <source>Missing item</source>
        <translation>商品缺件</translation>
    </message>
    <message>
        <source>Other</source>
        <translation>其他</translation>
    </message>
    <message>
        <source>Create an after-sales ticket</source>
        <translation>创建售后工单</translation>
    </message>
    <message>
        <source>Confirm: create an after-sales ticket</source>
        <translation>确认：创建售后工单</translation>
    </message>
    <message>
        <source>Create ticket</source>
        <translation>创建工单</translation>
    </message>
    <message>
        <source>Order</source>
        <translation>订单</translation>
    </message>
    <message>
        <source>Category</source>
        <translation>类别</translation>
    </message>
    <message>
        <source>Description</source>
        <translation>描述</translation>
    </message>
    <message>
        <source>SKU</source>
        <translation>SKU</translation>
    </message>
    <message>
        <source>Look up an order</source>
        <translation>查询订单</translation>
    </message>
    <message>
        <source>Track a shipment</source>
        <translation>查询物流</translation>
    </message>
    <message>
        <source>Check stock</source>
        <translation>查询库存</translation>
    </message>
    <message>
        <source>Ticket</source>
        <translation>工单</translation>
    </message>
    <message>
        <source>This order&apos;s tickets</source>
        <translation>该订单的工单</translation>
    </message>
    <message>
        <source>%1 already has a “%2” ticket %3</source>
        <translation>%1 已有一张“%2”工单 %3</translation>
    </message>
    <message>
        <source>List an order&apos;s tickets</source>
        <translation>查看订单的工单</translation>
    </message>
    <message>
        <source>{ticketId} · {category}</source>
        <translation>{ticketId} · {category}</translation>
    </message>
    <message>
        <source>Awaiting payment</source>
        <translation>待付款</translation>
    </message>
    <message>
        <source>Paid</source>
        <translation>已付款</translation>
    </message>
    <message>
        <source>Shipped</source>
        <translation>已发货</translation>
    </message>
    <message>
        <source>Delivered</source>
        <translation>已送达</translation>
    </message>
    <message>
        <source>Cancelled</source>
        <translation>已取消</translation>
    </message>
    <message>
        <source>In transit</source>
        <translation>运输中</translation>
    </message>
    <message>
        <source>Out for delivery</source>
        <translation>派送中</translation>
    </message>
    <message>
        <source>In stock</source>
        <translation>有货</translation>
    </message>
    <message>
        <source>Low stock</source>
        <translation>库存紧张</translation>
    </message>
    <message>
        <source>Out of stock</source>
        <translation>缺货</translation>
    </message>
    <message>
        <source>{status} · {totalAmount} {currency}</source>
        <translation>{status} · {totalAmount} {currency}</translation>
    </message>
    <message>
        <source>{status} · {currentLocation}</source>
        <translation>{status} · {currentLocation}</translation>
    </message>
    <message>
        <source>{status} · {available} available</source>
        <translation>{status} · 可售 {available} 件</translation>
    </message>
    <message>
        <source>Tickets: {tickets#}</source>
        <translation>工单：{tickets#} 张</translation>
    </message>
</context>
</TS>
