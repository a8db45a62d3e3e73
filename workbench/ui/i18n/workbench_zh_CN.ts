<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="zh_CN" sourcelanguage="en">
  <context>
    <name>Workbench</name>
    <message>
      <location filename="../../../workbench/ui/money/planner_view.py" />
      <source> GPUs</source>
      <translation> 块 GPU</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/money/planner_view.py" />
      <source> hours</source>
      <translation> 小时</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/extend_dialog.py" />
      <source> min</source>
      <translation> 分钟</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/money/planner_view.py" />
      <source> per kWh</source>
      <translation> /千瓦时</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/money/planner_view.py" />
      <source> per year</source>
      <translation> /年</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_storage.py" />
      <source> times</source>
      <translation> 次</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/port_actions.py" />
      <source> · every node</source>
      <translation> · 每个节点</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/instances_model.py" />
      <source>$/h</source>
      <translation>$/小时</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/stop_all.py" />
      <source>%v of %m done</source>
      <translation>已完成 %v / %m</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/shell/help_menu.py" />
      <source>&amp;About</source>
      <translation>关于(&amp;A)</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/accounts_view.py" />
      <source>&amp;Add profile…</source>
      <translation>添加配置文件(&amp;A)…</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/profile_dialog.py" />
      <source>&amp;Advanced</source>
      <translation>高级(&amp;A)</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/shell/main_window.py" />
      <source>&amp;Appearance</source>
      <translation>外观(&amp;A)</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/instances_view.py" />
      <source>&amp;Billable only</source>
      <translation>仅显示计费中(&amp;B)</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/stop_all.py" />
      <source>&amp;Cancel</source>
      <translation>取消(&amp;C)</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/stop_all.py" />
      <source>&amp;Close</source>
      <translation>关闭(&amp;C)</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_job_page.py" />
      <source>&amp;Command:</source>
      <translation>命令(&amp;C)：</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/prices/compare_view.py" />
      <source>&amp;Compare</source>
      <translation>比较(&amp;C)</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/login_key.py" />
      <source>&amp;Copy</source>
      <translation>复制(&amp;C)</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/instances_view.py" />
      <source>&amp;Copy SSH command</source>
      <translation>复制 SSH 命令(&amp;C)</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/port_actions.py" />
      <source>&amp;Copy address</source>
      <translation>复制地址(&amp;C)</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/common/controller_confirm.py" />
      <source>&amp;Create controller</source>
      <translation>创建控制器(&amp;C)</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/logs_dialog.py" />
      <source>&amp;Download results</source>
      <translation>下载结果(&amp;D)</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/accounts_view.py" />
      <source>&amp;Edit…</source>
      <translation>编辑(&amp;E)…</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/money/spend_view.py" />
      <source>&amp;Export CSV…</source>
      <translation>导出 CSV(&amp;E)…</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/extend_dialog.py" />
      <source>&amp;Extend</source>
      <translation>延长(&amp;E)</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/shell/main_window.py" />
      <source>&amp;File</source>
      <translation>文件(&amp;F)</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/logs_dialog.py" />
      <source>&amp;Follow</source>
      <translation>跟随(&amp;F)</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/port_actions.py" />
      <source>&amp;Forward</source>
      <translation>转发(&amp;F)</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_job_page.py" />
      <source>&amp;GPU model:</source>
      <translation>GPU 型号(&amp;G)：</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/shell/help_menu.py" />
      <source>&amp;Getting started</source>
      <translation>入门(&amp;G)</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/shell/main_window.py" />
      <source>&amp;Help</source>
      <translation>帮助(&amp;H)</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/monitor/monitor_view.py" />
      <source>&amp;Instance:</source>
      <translation>实例(&amp;I)：</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/runtime/guard_loop.py" />
      <source>&amp;Keep running</source>
      <translation>保持运行(&amp;K)</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/shell/quit_guard.py" />
      <source>&amp;Keep running and quit</source>
      <translation>保持运行并退出(&amp;K)</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/watch_actions.py" />
      <source>&amp;Keep watching while this computer is off</source>
      <translation>本机关机时继续看护(&amp;K)</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/shell/help_menu.py" />
      <source>&amp;Keyboard shortcuts</source>
      <translation>键盘快捷键(&amp;K)</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/shell/main_window.py" />
      <source>&amp;Language (after restart)</source>
      <translation>语言(&amp;L)（重启后生效）</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_review.py" />
      <source>&amp;Launch</source>
      <translation>启动(&amp;L)</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/runtime/guard_loop.py" />
      <source>&amp;Let it end</source>
      <translation>让它结束(&amp;L)</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/instances_view.py" />
      <source>&amp;Logs</source>
      <translation>日志(&amp;L)</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/shell/main_window.py" />
      <source>&amp;Machines</source>
      <translation>机器(&amp;M)</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_pages.py" />
      <source>&amp;Machines:</source>
      <translation>机器数(&amp;M)：</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_job_page.py" />
      <source>&amp;Min. GPU memory:</source>
      <translation>最小显存(&amp;M)：</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/instances_view.py" />
      <source>&amp;Monitor</source>
      <translation>监控(&amp;M)</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/profile_dialog.py" />
      <source>&amp;Name</source>
      <translation>名称(&amp;N)</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_view.py" />
      <source>&amp;New launch…</source>
      <translation>新建启动任务(&amp;N)…</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/monitor/monitor_view.py" />
      <source>&amp;Node:</source>
      <translation>节点(&amp;N)：</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_job_page.py" />
      <source>&amp;Open job spec…</source>
      <translation>打开作业规格(&amp;O)…</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/money/planner_view.py" />
      <source>&amp;Plan</source>
      <translation>计算(&amp;P)</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_job_page.py" />
      <source>&amp;Ports:</source>
      <translation>端口(&amp;P)：</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/profile_dialog.py" />
      <source>&amp;Provider</source>
      <translation>云服务商(&amp;P)</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_job_page.py" />
      <source>&amp;Quick example (free, on this computer)</source>
      <translation>快速示例(&amp;Q)（免费，在这台计算机上）</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_view.py" />
      <source>&amp;Quick example: run a short job on this computer</source>
      <translation>快速示例(&amp;Q)：在这台计算机上运行一个短作业</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/stop_all.py" />
      <source>&amp;Quit</source>
      <translation>退出(&amp;Q)</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_view.py" />
      <source>&amp;Recent launches</source>
      <translation>最近的启动任务(&amp;R)</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/shell/main_window.py" />
      <source>&amp;Refresh</source>
      <translation>刷新(&amp;R)</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_pages.py" />
      <source>&amp;Refresh offers</source>
      <translation>刷新报价(&amp;R)</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/profile_dialog.py" />
      <source>&amp;Region:</source>
      <translation>区域(&amp;R)：</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/image_field.py" />
      <source>&amp;Registry login:</source>
      <translation>镜像仓库登录(&amp;R)：</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/accounts_view.py" />
      <source>&amp;Remove</source>
      <translation>移除(&amp;R)</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/shell/help_menu.py" />
      <source>&amp;Report a problem…</source>
      <translation>报告问题(&amp;R)…</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/stop_all.py" />
      <source>&amp;Retry</source>
      <translation>重试(&amp;R)</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/profile_dialog.py" />
      <source>&amp;Save</source>
      <translation>保存(&amp;S)</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/shell/main_window.py" />
      <source>&amp;Settings</source>
      <translation>设置(&amp;S)</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/instances_view.py" />
      <source>&amp;Stop (deallocate)…</source>
      <translation>停止（解除分配）(&amp;S)…</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/stop_all.py" />
      <source>&amp;Stop all billing</source>
      <translation>停止所有计费(&amp;S)</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_review.py" />
      <source>&amp;Tear down what remains</source>
      <translation>终止剩余资源(&amp;T)</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/shell/quit_guard.py" />
      <source>&amp;Tear everything down</source>
      <translation>全部终止(&amp;T)</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/accounts_view.py" />
      <source>&amp;Test</source>
      <translation>测试(&amp;T)</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/profile_dialog.py" />
      <source>&amp;Test credentials</source>
      <translation>测试凭据(&amp;T)</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/prices/compare_view.py" />
      <source>&amp;Update prices</source>
      <translation>更新价格(&amp;U)</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_storage.py" />
      <source>&amp;Upload a folder…</source>
      <translation>上传文件夹(&amp;U)…</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/shell/main_window.py" />
      <source>&amp;View</source>
      <translation>视图(&amp;V)</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/monitor/nodes_overview.py" />
      <source>(CPU)</source>
      <translation>（CPU）</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/instances_model.py" />
      <source>(spot)</source>
      <translation>（竞价）</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_watch.py" />
      <source>(the controller of {profile} runs already)</source>
      <translation>（{profile} 的控制器已在运行）</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_watch.py" />
      <source>(unavailable: {why})</source>
      <translation>（不可用：{why}）</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_review.py" />
      <source>(uploaded first to {uri})</source>
      <translation>（先上传到 {uri}）</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/common/controller_confirm.py" />
      <source>(what it needs: {missing})</source>
      <translation>（需要：{missing}）</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/profile_dialog.py" />
      <source>* required</source>
      <translation>* 必填</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_watch.py" />
      <source>+ {price}/h while it watches</source>
      <translation>看护期间另加 {price}/小时</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/shell/away_notice.py" />
      <source>, </source>
      <translation>，</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/stop_all.py" />
      <source>0 billable resources remain</source>
      <translation>0 个计费资源剩余</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/controller_panel.py" />
      <source>0 s</source>
      <translation>0 秒</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/money/planner_view.py" />
      <source>1 USD = </source>
      <translation>1 美元 = </translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/shell/away_notice.py" />
      <source>1 attempt cost {cost}</source>
      <translation>1 次尝试花费 {cost}</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/monitor/monitor_view.py" />
      <source>1 hour</source>
      <translation>1 小时</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_pages.py" />
      <source>1 matching offer, {usable} can be chosen.</source>
      <translation>1 个匹配的报价，{usable} 个可选。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/money/planner_view.py" />
      <source>1 month</source>
      <translation>1 个月</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/monitor/run_report.py" />
      <source>1 piece of advice</source>
      <translation>1 条建议</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/money/planner_view.py" />
      <source>1 week</source>
      <translation>1 周</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/money/planner_view.py" />
      <source>1 year</source>
      <translation>1 年</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/shell/help_menu.py" />
      <source>1. Try it for free: Launch (Ctrl+N) → Quick example runs a short job on this computer. Watch it in Instances, Logs (Ctrl+L) and Monitor (Ctrl+M).</source>
      <translation>1. 免费试用：启动（Ctrl+N）→ 快速示例会在这台计算机上运行一个短作业。在实例、日志（Ctrl+L）和监控（Ctrl+M）中查看它。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/shell/help_menu.py" />
      <source>2. Compare GPU prices: the offers list every cloud's prices with their source and date, even before you have an account.</source>
      <translation>2. 比较 GPU 价格：报价列表列出各云的价格及其来源和日期，即使您还没有账号。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/plugin_texts.py" />
      <source>22 unless your cluster says otherwise</source>
      <translation>默认 22，除非您的集群另有规定</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/money/planner_view.py" />
      <source>3 months</source>
      <translation>3 个月</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/shell/help_menu.py" />
      <source>3. Add an account: Accounts → Add (AWS, Azure …). Secrets go to the system keyring only; Test shows who you are or exactly why not.</source>
      <translation>3. 添加账号：账号 → 添加（AWS、Azure …）。密钥只保存在系统密钥环中；测试会显示您的身份，或确切说明为何不行。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/shell/help_menu.py" />
      <source>4. Launch on a cloud: pick an offer, keep the guards (max runtime, idle GPU, budget), launch. The badge shows what bills now.</source>
      <translation>4. 在云上启动：选择报价，保留保护规则（最长运行时长、GPU 空闲、预算），然后启动。徽标显示当前正在计费的内容。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/monitor/monitor_view.py" />
      <source>5 min</source>
      <translation>5 分钟</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/shell/help_menu.py" />
      <source>5. Stop the bill: the red Stop all billing button (Ctrl+Shift+K) ends every machine and says "0 billable resources remain" only after checking with each provider.</source>
      <translation>5. 停止计费：红色的“停止所有计费”按钮（Ctrl+Shift+K）会终止每台机器，并且只有在与每个云服务商核实后才会显示“0 个计费资源剩余”。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/money/planner_view.py" />
      <source>6 months</source>
      <translation>6 个月</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/common/advice_text.py" />
      <source>90th pct.</source>
      <translation>第 90 百分位</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/common/format.py" />
      <source>; </source>
      <translation>；</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_job_page.py" />
      <source>A GPU job needs at least 1 GPU (choose 'None' for a CPU-only machine).</source>
      <translation>GPU 作业至少需要 1 个 GPU（若要仅使用 CPU 的机器，请选择“无”）。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/common/advice_text.py" />
      <source>A cheaper GPU fits</source>
      <translation>更便宜的 GPU 就够用</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_job_page.py" />
      <source>A few seconds, no cloud account, no bill: see how a launch works.</source>
      <translation>只需几秒，无需云账号，不产生费用：了解启动任务如何运作。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_storage.py" />
      <source>A folder of this computer: the launch uploads it to your account's bucket first (only what changed), then copies it to the machine</source>
      <translation>本机的文件夹：启动时先上传到你账户的存储桶（只传改动过的文件），再复制到机器上</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/profile_dialog.py" />
      <source>A profile name uses only letters, digits, '.', '_' and '-', starts with a letter or digit, and has at most 63 characters.</source>
      <translation>配置文件名称只能使用字母、数字、'.'、'_' 和 '-'，必须以字母或数字开头，最多 63 个字符。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/profile_dialog.py" />
      <source>A profile named {name} already exists.</source>
      <translation>名为 {name} 的配置文件已存在。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/shell/help_menu.py" />
      <source>About Cloud GPU Workbench</source>
      <translation>关于云端 GPU 工作台</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/plugin_texts.py" />
      <source>Access key ID</source>
      <translation>访问密钥 ID</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/plugin_texts.py" />
      <source>AccessKey ID</source>
      <translation>AccessKey ID</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/plugin_texts.py" />
      <source>AccessKey secret</source>
      <translation>AccessKey Secret</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/plugin_texts.py" />
      <source>Account</source>
      <translation>账户</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/shell/main_window.py" />
      <source>Accounts</source>
      <translation>账号</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/shell/help_menu.py" />
      <source>Action</source>
      <translation>操作</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_storage.py" />
      <source>Add a &amp;bucket…</source>
      <translation>添加存储桶(&amp;B)…</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_storage.py" />
      <source>Add a bucket</source>
      <translation>添加存储桶</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/prices/compare_view.py" />
      <source>Add a {provider} account to launch {type} in {region}</source>
      <translation>添加 {provider} 账户以在 {region} 启动 {type}</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/prices/compare_view.py" />
      <source>Add an account to launch here</source>
      <translation>添加账户以在此启动</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/profile_dialog.py" />
      <source>Add profile</source>
      <translation>添加配置文件</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/instances_model.py" />
      <source>Address: {host}</source>
      <translation>地址：{host}</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/common/advice_text.py" />
      <source>Advice</source>
      <translation>建议</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/monitor/advice_panel.py" />
      <source>Advice needs a few minutes of GPU readings.</source>
      <translation>需要几分钟的 GPU 读数才能给出建议。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/plugin_texts.py" />
      <source>Alibaba Cloud CLI profile</source>
      <translation>阿里云 CLI 配置</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/monitor/monitor_view.py" />
      <source>All</source>
      <translation>全部</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/offers_model.py" />
      <source>All machines /h</source>
      <translation>全部机器 /小时</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/monitor/nodes_overview.py" />
      <source>All nodes (overview)</source>
      <translation>全部节点（总览）</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/logs_dialog.py" />
      <source>All nodes, by rank</source>
      <translation>全部节点（按序号）</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_job_page.py" />
      <source>Any GPU</source>
      <translation>任意 GPU</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/plugin_texts.py" />
      <source>Application (client) ID of the service principal; or client_id= in the settings</source>
      <translation>服务主体的应用程序（客户端）ID；或在设置中填写 client_id=</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/shell/main_window.py" />
      <source>Ask every provider what is running</source>
      <translation>向所有云服务商查询正在运行的资源</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/stop_all.py" />
      <source>Asking every provider what is billing…</source>
      <translation>正在向所有云服务商查询计费中的资源…</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_pages.py" />
      <source>Asking your accounts for offers…</source>
      <translation>正在向您的账号查询报价…</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_review.py" />
      <source>Asking {provider} for a machine</source>
      <translation>正在向 {provider} 申请机器</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/shell/away_notice.py" />
      <source>Attempt</source>
      <translation>尝试</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/offers_model.py" />
      <source>Availability</source>
      <translation>可用性</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/money/spend_view.py" />
      <source>Billed</source>
      <translation>已计费</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/money/spend_view.py" />
      <source>Billed cost reported by {source}; it lags by hours</source>
      <translation>由 {source} 报告的已计费金额;会延迟数小时</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/money/spend_view.py" />
      <source>Billed: what the provider reports (lags by hours).</source>
      <translation>已计费:云服务商报告的金额(延迟数小时)。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/instances_model.py" />
      <source>Billing now at {rate}</source>
      <translation>当前计费 {rate}</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/stop_all.py" />
      <source>Billing stopped</source>
      <translation>计费已停止</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/runtime/guard_loop.py" />
      <source>Budget</source>
      <translation>预算</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/money/spend_view.py" />
      <source>Budget for all spend this month ({currency}); 0 removes it. Warnings at 50, 80 and 100 %; at 100 % every launch that bills is torn down.</source>
      <translation>本月全部花费的预算({currency});填 0 表示删除。在 50%、80% 和 100% 时提醒;达到 100% 时所有仍在计费的启动都会被销毁。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/money/spend_view.py" />
      <source>Budget used</source>
      <translation>预算已用</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/monitor/monitor_plots.py" />
      <source>Budget {amount}</source>
      <translation>预算 {amount}</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/monitor/run_report.py" />
      <source>Building the report…</source>
      <translation>正在生成报告…</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/monitor/monitor_plots.py" />
      <source>Burn rate ({currency}/h)</source>
      <translation>消耗速率（{currency}/小时）</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/money/planner_view.py" />
      <source>Buy: a reference price of {date}, not a vendor quote; tick “My own quote” to enter yours.</source>
      <translation>购买：{date} 的参考价格，并非供应商报价；勾选“我自己的报价”可填写您的报价。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_job_page.py" />
      <source>C&amp;lear</source>
      <translation>清除(&amp;L)</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/monitor/monitor_plots.py" />
      <source>CPU</source>
      <translation>CPU</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/common/advice_text.py" />
      <source>CPU busy (%)</source>
      <translation>CPU 繁忙度（%）</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/monitor/monitor_plots.py" />
      <source>CPU utilization (%)</source>
      <translation>CPU 利用率（%）</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/money/spend_view.py" />
      <source>CSV files (*.csv)</source>
      <translation>CSV 文件 (*.csv)</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/profile_dialog.py" />
      <source>Cancel</source>
      <translation>取消</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_wizard.py" />
      <source>Cancel launch</source>
      <translation>取消启动</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_wizard.py" />
      <source>Cancelled: tearing the launch down…</source>
      <translation>已取消：正在终止启动任务…</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_wizard.py" />
      <source>Cancelling: waiting for {provider} to answer, then tearing the launch down…</source>
      <translation>正在取消：等待 {provider} 响应，然后终止启动任务…</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/offers_model.py" />
      <source>Cannot be chosen: {note}</source>
      <translation>无法选择：{note}</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/monitor/advice_panel.py" />
      <source>Checked at {time}; click a card to see its evidence.</source>
      <translation>{time} 检查；点击卡片查看依据。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_wizard.py" />
      <source>Checking that nothing was left behind…</source>
      <translation>正在检查是否有残留资源…</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_review.py" />
      <source>Checking the buckets…</source>
      <translation>正在检查存储桶…</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/monitor/monitor_view.py" />
      <source>Choose an instance…</source>
      <translation>选择一个实例…</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_review.py" />
      <source>Chosen:</source>
      <translation>已选择：</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/monitor/advice_panel.py" />
      <source>Click to highlight the evidence in the plots</source>
      <translation>点击以在图表中突出显示依据</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/plugin_texts.py" />
      <source>Client ID</source>
      <translation>客户端 ID</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/plugin_texts.py" />
      <source>Client secret</source>
      <translation>客户端密码</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_wizard.py" />
      <source>Close</source>
      <translation>关闭</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/stop_all.py" />
      <source>Closing this window does not stop the teardown; you will be notified when it is finished.</source>
      <translation>关闭此窗口不会中止终止操作；完成后会通知您。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/common/dialogs.py" />
      <source>Cloud GPU Workbench</source>
      <translation>云端 GPU 工作台</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/shell/help_menu.py" />
      <source>Cloud GPU Workbench in five steps</source>
      <translation>五步上手云端 GPU 工作台</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/shell/tray.py" />
      <source>Cloud GPU Workbench — {state}</source>
      <translation>云端 GPU 工作台 — {state}</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/common/controller_confirm.py" />
      <source>Cloud identity it creates: {name}</source>
      <translation>将创建的云身份：{name}</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/common/controller_confirm.py" />
      <source>Cloud identity: none needed on this cloud</source>
      <translation>云身份：此云不需要</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/common/controller_confirm.py" />
      <source>Cloud identity: {name} (exists)</source>
      <translation>云身份：{name}（已存在）</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/shell/help_menu.py" />
      <source>Collecting what a problem report needs…</source>
      <translation>正在收集问题报告所需的信息…</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_review.py" />
      <source>Command:</source>
      <translation>命令：</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/prices/prices_view.py" />
      <source>Compare GPUs</source>
      <translation>比较 GPU</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/prices/compare_view.py" />
      <source>Comparing prices…</source>
      <translation>正在比较价格…</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/stop_all.py" />
      <source>Continue in &amp;background</source>
      <translation>转入后台继续(&amp;B)</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/runtime/controller_hook.py" />
      <source>Controller</source>
      <translation>控制器</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/controller_panel.py" />
      <source>Controller (watches your launches while this computer is off)</source>
      <translation>控制器（本机关机时看护你的启动）</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/shell/away_notice.py" />
      <source>Controller does not answer</source>
      <translation>控制器没有响应</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/common/open_folder.py" />
      <source>Copied</source>
      <translation>已复制</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/logs_dialog.py" />
      <source>Copy &amp;path</source>
      <translation>复制路径(&amp;P)</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/instances_view.py" />
      <source>Copy SSH command</source>
      <translation>复制 SSH 命令</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/common/advice_text.py" />
      <source>Cost</source>
      <translation>费用</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/common/advice_text.py" />
      <source>Cost is the app's estimate from the price and billed time of each machine, as in Spend; savings are for this run's duration.</source>
      <translation>费用是本应用根据每台机器的价格和计费时长估算的，与“花费”视图一致；节省金额按本次运行的时长计算。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/money/spend_view.py" />
      <source>Cost, utilization and advice of the selected launch, as HTML or PDF</source>
      <translation>所选启动的费用、利用率和建议，导出为 HTML 或 PDF</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_wizard.py" />
      <source>Could not check {profile}: {error}</source>
      <translation>无法检查 {profile}：{error}</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/stop_all.py" />
      <source>Could not find out what is billing.</source>
      <translation>无法确定哪些资源正在计费。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/stop_all.py" />
      <source>Could not verify everything; something may still be billing:</source>
      <translation>无法全部核实；可能仍有资源在计费：</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/controller_panel.py" />
      <source>Create &amp;controller…</source>
      <translation>创建控制器(&amp;C)…</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/common/controller_confirm.py" />
      <source>Create a controller</source>
      <translation>创建控制器</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/common/controller_confirm.py" />
      <source>Create the controller of {profile}? A small machine in this cloud account watches your launches while this computer is off: it relaunches interrupted spot jobs and ends what should end.</source>
      <translation>创建 {profile} 的控制器？这个云账号中的一台小机器会在本机关机时看护你的启动：重新启动被中断的竞价作业，并结束该结束的机器。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_view.py" />
      <source>Created</source>
      <translation>创建时间</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/controller_panel.py" />
      <source>Creating the controller: asking the cloud for its machine…</source>
      <translation>正在创建控制器：向云申请它的机器…</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/controller_panel.py" />
      <source>Creating the controller: installing the workbench on its machine…</source>
      <translation>正在创建控制器：在它的机器上安装 Workbench…</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/controller_panel.py" />
      <source>Creating the controller: its machine runs…</source>
      <translation>正在创建控制器：它的机器已运行…</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/controller_panel.py" />
      <source>Creating the controller: recording the launch…</source>
      <translation>正在创建控制器：记录这次启动…</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/controller_panel.py" />
      <source>Creating the controller: waiting for its first heartbeat…</source>
      <translation>正在创建控制器：等待它的第一次心跳…</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/controller_panel.py" />
      <source>Creating the controller: waiting for its machine to start…</source>
      <translation>正在创建控制器：等待它的机器启动…</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/controller_panel.py" />
      <source>Creating the controller…</source>
      <translation>正在创建控制器…</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/profile_dialog.py" />
      <source>Credentials</source>
      <translation>凭据</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/credentials_form.py" />
      <source>Credentials work: {display} ({principal}) in account {account}</source>
      <translation>凭据有效：账号 {account} 中的 {display}（{principal}）</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/credentials_form.py" />
      <source>Credentials work: {principal} in account {account}</source>
      <translation>凭据有效：账号 {account} 中的 {principal}</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/plugin_texts.py" />
      <source>Currency</source>
      <translation>货币</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/money/spend_view.py" />
      <source>Currency:</source>
      <translation>货币:</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/shell/main_window.py" />
      <source>Dark</source>
      <translation>深色</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_storage.py" />
      <source>Data and recovery</source>
      <translation>数据与恢复</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_review.py" />
      <source>Data:</source>
      <translation>数据：</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_view.py" />
      <source>Describe the job in a short form.</source>
      <translation>用简短表单描述作业。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/money/spend_view.py" />
      <source>Difference</source>
      <translation>差额</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/plugin_texts.py" />
      <source>Directory (tenant) ID of the app registration; or tenant_id= in the profile settings</source>
      <translation>应用注册的目录（租户）ID；或在配置文件设置中填写 tenant_id=</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_review.py" />
      <source>Disk:</source>
      <translation>磁盘：</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/logs_dialog.py" />
      <source>Download failed: {message}</source>
      <translation>下载失败:{message}</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/logs_dialog.py" />
      <source>Downloaded {n} files into {folder}</source>
      <translation>已下载 {n} 个文件到 {folder}</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/logs_dialog.py" />
      <source>Downloading the outputs…</source>
      <translation>正在下载输出…</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/common/advice_text.py" />
      <source>Duration</source>
      <translation>时长</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/money/planner_view.py" />
      <source>Duration…</source>
      <translation>时长…</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/controller_panel.py" />
      <source>E&amp;nd controller</source>
      <translation>结束控制器(&amp;N)</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/controller_panel.py" />
      <source>E&amp;nd controller…</source>
      <translation>结束控制器(&amp;N)…</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/instances_view.py" />
      <source>E&amp;xtend max runtime…</source>
      <translation>延长最长运行时间(&amp;X)…</translation>
    </message>
    <message>
      <location filename="../../../workbench/core/money/planner.py" />
      <source>ESTIMATED price (on-demand × a typical discount; `workbench catalog update` reads the published one)</source>
      <translation>估算价格（按需价格 × 常见折扣；在“比较 GPU”中更新价格可读取公布价格）</translation>
    </message>
    <message>
      <location filename="../../../workbench/core/providers/price_snapshot.py" />
      <source>ESTIMATED: on-demand × a typical discount</source>
      <translation>估算：按需价格 × 常见折扣</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/profile_dialog.py" />
      <source>Edit profile {name}</source>
      <translation>编辑配置文件 {name}</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/controller_panel.py" />
      <source>End controller</source>
      <translation>结束控制器</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/controller_panel.py" />
      <source>End the controller of {profile}? The launches it watches go back to this app, which relaunches them only while it runs.</source>
      <translation>结束 {profile} 的控制器？它看护的启动交回本应用，本应用只在运行时才会重新启动它们。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/controller_panel.py" />
      <source>Ending the controller and checking nothing of it is left…</source>
      <translation>正在结束控制器，并确认它没有留下任何东西…</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/profile_dialog.py" />
      <source>Endpoint URL:</source>
      <translation>端点 URL：</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/profile_dialog.py" />
      <source>Enter a name for the profile.</source>
      <translation>请输入配置文件名称。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/profile_dialog.py" />
      <source>Enter {field}.</source>
      <translation>请输入{field}。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/money/spend_view.py" />
      <source>Estimates: price × billable seconds from each provider's price list.</source>
      <translation>估算方式：各云服务商价目表中的价格 × 计费秒数。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/money/spend_view.py" />
      <source>Estimates: price × billable seconds under each provider's billing rules; figures in {note}.</source>
      <translation>估算:按各云服务商的计费规则,价格 × 计费秒数;金额单位:{note}。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_storage.py" />
      <source>Every (s)</source>
      <translation>间隔（秒）</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/shell/away_notice.py" />
      <source>Every attempt and what it cost:</source>
      <translation>每一次尝试及其花费：</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_pages.py" />
      <source>Every matching offer is blocked by quota or capacity: request a quota increase, or go back and ask for another machine.</source>
      <translation>所有匹配的报价都受配额或容量限制：请申请提高配额，或返回选择其他机器。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/common/advice_text.py" />
      <source>Evidence: {start} – {end}</source>
      <translation>依据：{start} – {end}</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/common/advice_text.py" />
      <source>Exit code</source>
      <translation>退出码</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/money/spend_view.py" />
      <source>Export spend</source>
      <translation>导出花费</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/money/spend_view.py" />
      <source>Exported</source>
      <translation>已导出</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/extend_dialog.py" />
      <source>Extend &amp;by:</source>
      <translation>延长(&amp;B)：</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/extend_dialog.py" />
      <source>Extend by (minutes)</source>
      <translation>延长（分钟）</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/extend_dialog.py" />
      <source>Extend max runtime</source>
      <translation>延长最长运行时间</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/extend_dialog.py" />
      <source>Extended</source>
      <translation>已延长</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/extend_dialog.py" />
      <source>Extending by {minutes} min…</source>
      <translation>正在延长 {minutes} 分钟…</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/import_notes.py" />
      <source>Field</source>
      <translation>字段</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/instances_view.py" />
      <source>Filter by name, provider, region, type, state…</source>
      <translation>按名称、云服务商、区域、类型、状态筛选…</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/common/open_folder.py" />
      <source>Folder</source>
      <translation>文件夹</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_storage.py" />
      <source>Folder in the bucket:</source>
      <translation>存储桶中的文件夹：</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_storage.py" />
      <source>Folder on the machine:</source>
      <translation>机器上的文件夹：</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_storage.py" />
      <source>Folder to upload</source>
      <translation>要上传的文件夹</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/shell/main_window.py" />
      <source>Follow the system</source>
      <translation>跟随系统</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_job_page.py" />
      <source>Forget the opened spec and start from a blank form</source>
      <translation>丢弃已打开的规格，从空白表单开始</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/port_actions.py" />
      <source>Forward a port of the job to this computer (127.0.0.1 only) and open it</source>
      <translation>把作业的一个端口转发到本机（仅 127.0.0.1）并打开</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/port_actions.py" />
      <source>Forwarded over SSH to 127.0.0.1 on this computer only; nothing is opened to the internet. The forward ends with the launch, or when the app quits.</source>
      <translation>通过 SSH 只转发到本机的 127.0.0.1，不向互联网开放任何端口。转发随启动结束，或在应用退出时结束。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/port_actions.py" />
      <source>Forwarding port {port}…</source>
      <translation>正在转发端口 {port}…</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/monitor/monitor_plots.py" />
      <source>GB</source>
      <translation>GB</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/common/advice_text.py" />
      <source>GPU</source>
      <translation>GPU</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_job_page.py" />
      <source>GPU coun&amp;t:</source>
      <translation>GPU 数量(&amp;T)：</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/monitor/monitor_poll.py" />
      <source>GPU driver not ready: {m}</source>
      <translation>GPU 驱动尚未就绪:{m}</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/offers_model.py" />
      <source>GPU memory</source>
      <translation>显存</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/common/advice_text.py" />
      <source>GPU memory peaked at {mem_percent}% and utilization averaged {util}% for most of the run: raise the batch size about {factor}× (and the learning rate with it, with a short warm-up). Expected about {speedup}× faster.</source>
      <translation>运行期间 GPU 显存峰值仅 {mem_percent}%，利用率平均 {util}%：将批大小提高约 {factor}×（学习率同比例提高，并加短暂预热）。预计快约 {speedup}×。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/monitor/monitor_plots.py" />
      <source>GPU memory used</source>
      <translation>已用 GPU 显存</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/common/advice_text.py" />
      <source>GPU memory used (GB)</source>
      <translation>已用 GPU 显存（GB）</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/plugin_texts.py" />
      <source>GPU models by partition</source>
      <translation>各分区的 GPU 型号</translation>
    </message>
    <message>
      <location filename="../../../plugins/workbench_slurm/cluster.py" />
      <source>GPU type {gres_type} of partition {partition} is not a model the workbench knows: name it in the profile's GPU models ({partition}=MODEL)</source>
      <translation>分区 {partition} 的 GPU 类型 {gres_type} 不是本应用认识的型号：请在配置文件的 GPU 型号中写明（{partition}=型号）</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/monitor/nodes_overview.py" />
      <source>GPU use</source>
      <translation>GPU 使用率</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/common/advice_text.py" />
      <source>GPU utilization (%)</source>
      <translation>GPU 利用率（%）</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/common/advice_text.py" />
      <source>GPU utilization averaged {util}% while the GPUs waited for input: use more DataLoader workers (about one per CPU core), pin_memory=True, and a local or memory-mapped copy of the dataset. Expected up to {speedup}× faster.</source>
      <translation>GPU 在等待输入数据，利用率平均仅 {util}%：增加 DataLoader 工作进程（约每个 CPU 核一个），设置 pin_memory=True，并把数据集复制到本地或使用内存映射。预计最多快 {speedup}×。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/monitor/monitor_plots.py" />
      <source>GPU {index} · {model}</source>
      <translation>GPU {index} · {model}</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/money/planner_view.py" />
      <source>GPU:</source>
      <translation>GPU：</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/common/advice_text.py" />
      <source>GPUs</source>
      <translation>GPU</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_job_page.py" />
      <source>GPUs from the file: {gpu}</source>
      <translation>GPU 取自文件：{gpu}</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_job_page.py" />
      <source>GPUs from the file: {how} {choices}</source>
      <translation>GPU 取自文件：{how}{choices}</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/runtime/guard_loop.py" />
      <source>GPUs idle</source>
      <translation>GPU 空闲</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/prices/compare_view.py" />
      <source>GPUs per machine, at least:</source>
      <translation>每台机器的 GPU 数，至少：</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/shell/help_menu.py" />
      <source>Getting started</source>
      <translation>入门</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_review.py" />
      <source>Give a value for {names} to launch.</source>
      <translation>请为 {names} 提供值后再启动。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_job_page.py" />
      <source>Give the command that runs the job.</source>
      <translation>请填写运行作业的命令。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_job_page.py" />
      <source>Give the job a name.</source>
      <translation>请为作业命名。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/extend_dialog.py" />
      <source>Give {name} more time. Its guards (in the app, on the machine and at the cloud) move their deadline; the projected cost rises.</source>
      <translation>给 {name} 更多时间。它的守护（应用内、机器上和云端）会推迟截止时间；预计费用随之增加。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_review.py" />
      <source>Given to the job's environment only: never saved, shown or logged.</source>
      <translation>仅传入作业的环境变量：不会保存、显示或写入日志。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/runtime/guard_loop.py" />
      <source>Guard</source>
      <translation>守护</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/runtime/guard_loop.py" />
      <source>Guard problem</source>
      <translation>守护出现问题</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/instances_model.py" />
      <source>Guards</source>
      <translation>保护规则</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_review.py" />
      <source>Guards:</source>
      <translation>保护规则：</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_watch.py" />
      <source>Hands the launch to the controller of {profile} once its job has started: it relaunches and ends it while this computer is off.</source>
      <translation>作业开始后把这次启动交给 {profile} 的控制器：本机关机时由它重新启动和结束。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/shell/away_notice.py" />
      <source>Hide</source>
      <translation>隐藏</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/shell/away_notice.py" />
      <source>How it ended</source>
      <translation>如何结束</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/import_notes.py" />
      <source>How this file was read</source>
      <translation>此文件的读取方式</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/common/advice_text.py" />
      <source>Idle GPUs</source>
      <translation>空闲的 GPU</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/shell/quit_guard.py" />
      <source>If you keep them running, the guards installed on each machine still stop it at its max runtime or when its GPUs sit idle. Local jobs on this computer keep running too.</source>
      <translation>如果保持它们运行，每台机器上安装的保护规则仍会在达到最长运行时间或 GPU 空闲时将其停止。这台计算机上的本地作业也会继续运行。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/image_field.py" />
      <source>Imag&amp;e:</source>
      <translation>镜像(&amp;E)：</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_review.py" />
      <source>Image:</source>
      <translation>镜像：</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/image_field.py" />
      <source>Image: '{ref}' is not an image reference (registry/name:tag or name@sha256:…)</source>
      <translation>镜像：“{ref}”不是镜像引用（registry/name:tag 或 name@sha256:…）</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/instances_model.py" />
      <source>Image: {image}</source>
      <translation>镜像：{image}</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/common/advice_text.py" />
      <source>Image: {image} · by digest {digest}</source>
      <translation>镜像：{image} · 摘要 {digest}</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/common/advice_text.py" />
      <source>Image: {image} · digest unknown (the pull did not log it)</source>
      <translation>镜像：{image} · 摘要未知（拉取时未记录）</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/accounts_view.py" />
      <source>Install it with: {command}</source>
      <translation>安装命令：{command}</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/shell/main_window.py" />
      <source>Instances</source>
      <translation>实例</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/common/controller_confirm.py" />
      <source>It bills while it runs, and ends itself after 30 minutes with nothing to watch. You are asked this once for this account.</source>
      <translation>它运行期间计费，没有可看护的内容 30 分钟后自行结束。每个账号只询问这一次。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/runtime/guard_loop.py" />
      <source>It will be ended at {time}. Keep it running to look at it; the maximum runtime, idle and budget guards still apply.</source>
      <translation>它将在 {time} 被结束。如需查看,可保持运行;最长运行时间、空闲和预算守护仍然有效。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/accounts_view.py" />
      <source>Its credentials are deleted from the keyring.</source>
      <translation>其凭据将从密钥环中删除。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/controller_panel.py" />
      <source>Its records cannot be read: {error}</source>
      <translation>无法读取它的记录：{error}</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/common/controller_confirm.py" />
      <source>Its records live in: {where}</source>
      <translation>它的记录保存在：{where}</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_job_page.py" />
      <source>Job</source>
      <translation>作业</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/runtime/session.py" />
      <source>Job failed</source>
      <translation>作业失败</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/runtime/guard_loop.py" />
      <source>Job finished</source>
      <translation>作业已完成</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/runtime/recovery_loop.py" />
      <source>Job interrupted</source>
      <translation>作业被中断</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/monitor/monitor_plots.py" />
      <source>Job memory (RSS)</source>
      <translation>作业内存（RSS）</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/monitor/monitor_plots.py" />
      <source>Job memory (RSS) · this computer has {total}</source>
      <translation>作业内存（RSS）· 这台计算机共有 {total}</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/runtime/recovery_loop.py" />
      <source>Job relaunched</source>
      <translation>作业已重新启动</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_job_page.py" />
      <source>Job spec:</source>
      <translation>作业规格：</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_job_page.py" />
      <source>Job specs, SkyPilot and dstack files (*.yaml *.yml);;All files (*)</source>
      <translation>作业规格、SkyPilot 和 dstack 文件 (*.yaml *.yml);;所有文件 (*)</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_review.py" />
      <source>Job:</source>
      <translation>作业：</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/stop_all_local.py" />
      <source>Jobs on this computer</source>
      <translation>这台计算机上的作业</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/stop_all_local.py" />
      <source>Jobs on this computer and your cluster</source>
      <translation>本机和您的集群上的作业</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/stop_all_local.py" />
      <source>Jobs on your cluster</source>
      <translation>您的集群上的作业</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/plugin_texts.py" />
      <source>Jump host</source>
      <translation>跳板机</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/port_actions.py" />
      <source>Jupyter has not printed its address with a token in the job's log yet.</source>
      <translation>Jupyter 尚未在作业日志中打印带令牌的地址。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/image_field.py" />
      <source>Keep the password typed on the review page in this computer's keyring for this registry (saved when you launch); later jobs can use it.</source>
      <translation>将在确认页输入的密码保存到此计算机的密钥环中，供此镜像仓库使用（在启动时保存）；之后的作业可以直接使用。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_watch.py" />
      <source>Keep watching while this computer is off</source>
      <translation>本机关机时继续看护</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/runtime/guard_loop.py" />
      <source>Keeps running</source>
      <translation>保持运行</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/shell/help_menu.py" />
      <source>Keyboard shortcuts</source>
      <translation>键盘快捷键</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/accounts_view.py" />
      <source>Keyring: checking…</source>
      <translation>密钥环：正在检查…</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/shell/help_menu.py" />
      <source>Keys</source>
      <translation>按键</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/monitor/nodes_overview.py" />
      <source>Last reading</source>
      <translation>最近读数</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/money/spend_view.py" />
      <source>Launch</source>
      <translation>启动</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_view.py" />
      <source>Launch a job</source>
      <translation>启动作业</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_view.py" />
      <source>Launch a job described in a YAML file.</source>
      <translation>启动由 YAML 文件描述的作业。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/shell/main_window.py" />
      <source>Launch a job from a YAML spec</source>
      <translation>从 YAML 规格启动作业</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_wizard.py" />
      <source>Launch failed</source>
      <translation>启动失败</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_review.py" />
      <source>Launch progress</source>
      <translation>启动进度</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_wizard.py" />
      <source>Launch ready</source>
      <translation>启动完成</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_wizard.py" />
      <source>Launch {id}</source>
      <translation>启动任务 {id}</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/common/advice_text.py" />
      <source>Launch {launch} · {where} · generated {when}</source>
      <translation>启动 {launch} · {where} · 生成于 {when}</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/profile_dialog.py" />
      <source>Letters, digits, '.', '_' and '-'; machines launched with this profile are tracked under this name, so it cannot be changed later.</source>
      <translation>可使用字母、数字、'.'、'_' 和 '-'；用此配置文件启动的机器以该名称跟踪，因此以后无法更改。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/shell/main_window.py" />
      <source>Light</source>
      <translation>浅色</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_pages.py" />
      <source>Limits that end the bill even if you forget the job. They are enforced on the machine itself, so they work while this app is closed.</source>
      <translation>即使您忘了作业，这些限制也会终止计费。它们在机器本身上执行，因此即使关闭本应用也依然有效。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_pages.py" />
      <source>Limits that end the job even if you forget it.</source>
      <translation>即使您忘了作业，这些限制也会将其结束。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/import_notes.py" />
      <source>Line</source>
      <translation>行</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_storage.py" />
      <source>Listing the buckets of your accounts…</source>
      <translation>正在列出你账户中的存储桶…</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/plugin_texts.py" />
      <source>Log in with</source>
      <translation>登录方式</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/image_field.py" />
      <source>Log in with the password saved on this computer (workbench registry login): nothing is asked at launch.</source>
      <translation>使用此计算机上保存的密码登录（workbench registry login）：启动时不再询问。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/plugin_texts.py" />
      <source>Login node</source>
      <translation>登录节点</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/logs_dialog.py" />
      <source>Logs from cloud machines stream here once the job runs there.</source>
      <translation>作业在云端机器上运行后，其日志会实时显示在这里。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/logs_dialog.py" />
      <source>Logs — {name}</source>
      <translation>日志 — {name}</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_wizard.py" />
      <source>Look in the Instances view, or run Stop all billing to be sure.</source>
      <translation>请查看“实例”视图，或运行“停止所有计费”以确保无误。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/monitor/advice_panel.py" />
      <source>Looking at the run's telemetry…</source>
      <translation>正在分析本次运行的遥测数据…</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/monitor/monitor_plots.py" />
      <source>MB</source>
      <translation>MB</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/mfa.py" />
      <source>MFA code for {profile}</source>
      <translation>{profile} 的 MFA 验证码</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/monitor/monitor_plots.py" />
      <source>MIG {index} · {profile}</source>
      <translation>MIG {index} · {profile}</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_pages.py" />
      <source>Machine</source>
      <translation>机器</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_pages.py" />
      <source>Machine &amp;disk:</source>
      <translation>机器磁盘(&amp;D)：</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/runtime/session.py" />
      <source>Machine ready</source>
      <translation>机器已就绪</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/runtime/session.py" />
      <source>Machine stopped</source>
      <translation>机器已停止</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_review.py" />
      <source>Machine:</source>
      <translation>机器：</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/common/controller_confirm.py" />
      <source>Machine: {type} in {region}</source>
      <translation>机器：{type}，位于 {region}</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/common/advice_text.py" />
      <source>Machines</source>
      <translation>机器数</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/shell/quit_guard.py" />
      <source>Machines are still billing</source>
      <translation>机器仍在计费</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/stop_all.py" />
      <source>Machines are terminated and their disks, addresses and other leftovers deleted. This cannot be undone.</source>
      <translation>机器将被终止，其磁盘、地址及其他残留资源将被删除。此操作无法撤销。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/shell/main_window.py" />
      <source>Main toolbar</source>
      <translation>主工具栏</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_pages.py" />
      <source>Matching offers from all your accounts, cheapest first. Offers marked ⚠ cannot be chosen on this account.</source>
      <translation>来自您所有账号的匹配报价，按价格从低到高排列。标有 ⚠ 的报价在此账号上无法选择。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/runtime/guard_loop.py" />
      <source>Maximum runtime reached</source>
      <translation>已达到最长运行时间</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/stop_all.py" />
      <source>May still be billing</source>
      <translation>可能仍在计费</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/common/advice_text.py" />
      <source>Mean</source>
      <translation>平均</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/common/advice_text.py" />
      <source>Mean power</source>
      <translation>平均功率</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/common/advice_text.py" />
      <source>Median</source>
      <translation>中位数</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/monitor/nodes_overview.py" />
      <source>Memory</source>
      <translation>内存</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/monitor/monitor_plots.py" />
      <source>Memory used</source>
      <translation>已用内存</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/common/advice_text.py" />
      <source>Memory used (GB)</source>
      <translation>已用内存（GB）</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/monitor/monitor_plots.py" />
      <source>Memory used by the job (RSS)</source>
      <translation>作业占用的内存（RSS）</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_storage.py" />
      <source>Mode</source>
      <translation>模式</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_storage.py" />
      <source>Mode:</source>
      <translation>模式：</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/common/advice_text.py" />
      <source>Model</source>
      <translation>型号</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/shell/main_window.py" />
      <source>Monitor</source>
      <translation>监控</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/money/spend_view.py" />
      <source>Monthly &amp;budget…</source>
      <translation>每月预算(&amp;B)…</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/money/spend_view.py" />
      <source>Monthly budget</source>
      <translation>每月预算</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/money/planner_view.py" />
      <source>My own quote for buying:</source>
      <translation>我自己的购买报价：</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_job_page.py" />
      <source>N&amp;ame:</source>
      <translation>名称(&amp;A)：</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/common/advice_text.py" />
      <source>NVLink rx / tx</source>
      <translation>NVLink 接收 / 发送</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/instances_model.py" />
      <source>Name</source>
      <translation>名称</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/plugin_texts.py" />
      <source>Named profile (AWS config / SSO)</source>
      <translation>命名配置（AWS config / SSO）</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/offers_model.py" />
      <source>Network</source>
      <translation>网络</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_wizard.py" />
      <source>New launch</source>
      <translation>新建启动任务</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/common/advice_text.py" />
      <source>No GPU did any work ({total} GPUs near 0%): check that the job runs on the GPU (torch.cuda.is_available()) or run it on a machine without GPUs.</source>
      <translation>没有任何 GPU 在工作（{total} 块 GPU 接近 0%）：请检查作业是否在 GPU 上运行（torch.cuda.is_available()），或改用没有 GPU 的机器。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/common/advice_text.py" />
      <source>No GPU readings were recorded for this launch.</source>
      <translation>此启动没有记录到 GPU 读数。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/instances_view.py" />
      <source>No SSH for this machine (it runs on this computer or has no address yet)</source>
      <translation>此机器不支持 SSH（它在这台计算机上运行，或尚无地址）</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/monitor/run_report.py" />
      <source>No advice</source>
      <translation>没有建议</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/common/advice_text.py" />
      <source>No advice: the GPUs were busy and their memory well used.</source>
      <translation>没有建议：GPU 一直忙碌，显存也得到了充分利用。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/monitor/advice_panel.py" />
      <source>No advice: {error}</source>
      <translation>无法给出建议：{error}</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_storage.py" />
      <source>No bucket found in your accounts: type an address.</source>
      <translation>你的账户中没有找到存储桶：请输入地址。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_pages.py" />
      <source>No budget and no runtime limit: nothing caps the cost.</source>
      <translation>未设预算，也无运行时长上限：费用没有任何封顶。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_pages.py" />
      <source>No budget: the cost is capped only by the maximum runtime.</source>
      <translation>未设预算：费用仅受最长运行时间限制。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/common/dialogs.py" />
      <source>No capacity</source>
      <translation>容量不足</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_review.py" />
      <source>No charge: your cluster</source>
      <translation>不收费：您的集群</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/common/open_folder.py" />
      <source>No file manager could open this folder. It is here:</source>
      <translation>没有文件管理器能打开此文件夹。它位于：</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_pages.py" />
      <source>No idle shutdown: a stuck job keeps the GPUs billing while doing nothing.</source>
      <translation>无空闲关机：卡住的作业会让 GPU 在空转时继续计费。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/monitor/monitor_view.py" />
      <source>No instance selected. Pick one above, or choose Monitor on a row of the Instances view.</source>
      <translation>未选择实例。请在上方选择一个，或在“实例”视图的某一行上选择“监控”。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/accounts_view.py" />
      <source>No keyring is running on this computer, so cloud credentials can be neither saved nor read. Install your desktop's keyring: GNOME Keyring (the package gnome-keyring), KWallet, or KeePassXC with its Secret Service integration turned on. Then log out and back in, and open Accounts again.</source>
      <translation>这台电脑上没有运行密钥环，因此既无法保存也无法读取云凭据。请安装桌面的密钥环：GNOME 密钥环（软件包 gnome-keyring）、KWallet，或开启了 Secret Service 集成的 KeePassXC。然后注销并重新登录，再打开“账户”。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/instances_view.py" />
      <source>No machines yet. Start one from Launch (Ctrl+N) — the quick example runs a short job on this computer for free.</source>
      <translation>还没有机器。可在“启动”（Ctrl+N）中启动一台——快速示例会在这台计算机上免费运行一个短作业。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_pages.py" />
      <source>No offer matches this job: {reason}</source>
      <translation>没有符合此作业的报价：{reason}</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/prices/compare_view.py" />
      <source>No offer matches: {reason}</source>
      <translation>没有符合条件的报价：{reason}</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/money/planner_view.py" />
      <source>No offer of {gpu} is known.</source>
      <translation>没有已知的 {gpu} 报价。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_review.py" />
      <source>No offer of {model} to compare.</source>
      <translation>没有可比较的 {model} 报价。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/logs_dialog.py" />
      <source>No output yet.</source>
      <translation>暂无输出。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/money/planner_view.py" />
      <source>No plan: {reason}</source>
      <translation>无法规划：{reason}</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/profile_dialog.py" />
      <source>No provider is available; install a provider plugin first.</source>
      <translation>没有可用的云服务商；请先安装云服务商插件。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_review.py" />
      <source>No runtime limit is set: go back to Guards to set one.</source>
      <translation>未设置运行时长上限：请返回“保护规则”进行设置。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_pages.py" />
      <source>No runtime limit: the job runs until it ends or you stop it.</source>
      <translation>无运行时长上限：作业会一直运行，直到它结束或您将其停止。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_pages.py" />
      <source>No runtime limit: the machine keeps billing until the job ends, another guard stops it, or you stop it.</source>
      <translation>无运行时长上限：机器会一直计费，直到作业结束、其他保护规则将其停止，或您手动停止。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/money/spend_view.py" />
      <source>No spend recorded yet.</source>
      <translation>暂无花费记录。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/monitor/run_report.py" />
      <source>No state store: nothing to report.</source>
      <translation>没有状态数据库：无可报告的内容。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/monitor/nodes_overview.py" />
      <source>Node</source>
      <translation>节点</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_job_page.py" />
      <source>None (CPU only)</source>
      <translation>无（仅 CPU）</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_review.py" />
      <source>Not capped: {price} per hour until the job ends or you stop it.</source>
      <translation>不封顶：每小时 {price}，直到作业结束或您将其停止。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/common/advice_text.py" />
      <source>Not evaluated: {rule} ({why})</source>
      <translation>未评估：{rule}（{why}）</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/extend_dialog.py" />
      <source>Not extended: {message}</source>
      <translation>未延长：{message}</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/port_actions.py" />
      <source>Not forwarded: {error}</source>
      <translation>未转发：{error}</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/watch_actions.py" />
      <source>Not handed to the controller</source>
      <translation>未交给控制器</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/runtime/recovery_loop.py" />
      <source>Not relaunched</source>
      <translation>未重新启动</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_review.py" />
      <source>Note</source>
      <translation>说明</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/stop_all.py" />
      <source>Nothing billing was found, but not every profile could be listed.</source>
      <translation>未发现计费中的资源，但并非所有配置文件都能列出。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/shell/badge.py" />
      <source>Nothing billing · {today} today</source>
      <translation>无计费 · 今日 {today}</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/money/spend_view.py" />
      <source>Nothing has cost money: {n} launch(es), all free (jobs on this computer).</source>
      <translation>尚无任何花费：{n} 次启动，全部免费（在这台电脑上运行的任务）。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/stop_all.py" />
      <source>Nothing is billing right now</source>
      <translation>当前没有任何计费</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/money/spend_view.py" />
      <source>Nothing spent yet: each launch shows here with what it costs, from its first minute.</source>
      <translation>尚无花费：每次启动都会从第一分钟起显示在这里，并附上其费用。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/accounts_view.py" />
      <source>Nothing this app launched with it is known to be running.</source>
      <translation>本应用用它启动的内容中，没有已知仍在运行的。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/money/spend_view.py" />
      <source>Now {rate}/h · today {today} · this month {month}</source>
      <translation>当前 {rate}/小时 · 今日 {today} · 本月 {month}</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_pages.py" />
      <source>Offers could not be fetched: {error}</source>
      <translation>无法获取报价：{error}</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_storage.py" />
      <source>On the machine</source>
      <translation>机器上</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/offers_model.py" />
      <source>On-demand /h</source>
      <translation>按需 /小时</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/profile_dialog.py" />
      <source>Only for private or test endpoints (https://…).</source>
      <translation>仅用于私有或测试端点（https://…）。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/logs_dialog.py" />
      <source>Open &amp;folder</source>
      <translation>打开文件夹(&amp;F)</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/shell/main_window.py" />
      <source>Open &amp;log file</source>
      <translation>打开日志文件(&amp;L)</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/instances_view.py" />
      <source>Open &amp;outputs</source>
      <translation>打开输出(&amp;O)</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/port_actions.py" />
      <source>Open &amp;port…</source>
      <translation>打开端口(&amp;P)…</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/instances_view.py" />
      <source>Open &amp;terminal</source>
      <translation>打开终端(&amp;T)</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/port_actions.py" />
      <source>Open in &amp;browser</source>
      <translation>在浏览器中打开(&amp;B)</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/stop_all.py" />
      <source>Open in &amp;console</source>
      <translation>在控制台中打开(&amp;C)</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_job_page.py" />
      <source>Open job spec</source>
      <translation>打开作业规格</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/common/dialogs.py" />
      <source>Open log file</source>
      <translation>打开日志文件</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/port_actions.py" />
      <source>Open port · {name}</source>
      <translation>打开端口 · {name}</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/instances_model.py" />
      <source>Open ports (127.0.0.1 only): {ports}</source>
      <translation>已打开的端口（仅 127.0.0.1）：{ports}</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_review.py" />
      <source>Option</source>
      <translation>方式</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/logs_dialog.py" />
      <source>Outputs: {path}</source>
      <translation>输出：{path}</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/monitor/run_report.py" />
      <source>PDF files (*.pdf)</source>
      <translation>PDF 文件 (*.pdf)</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/plugin_texts.py" />
      <source>Partition</source>
      <translation>分区</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/common/advice_text.py" />
      <source>Peak GPU memory ({mem_gb} GB) and utilization ({util}% of the {model}) fit a cheaper {cand_model} ({cand_mem} GB): {offer} costs {offer_price}/h instead of {price}/h.</source>
      <translation>GPU 显存峰值（{mem_gb} GB）和利用率（{model} 的 {util}%）用更便宜的 {cand_model}（{cand_mem} GB）就够了：{offer} 每小时 {offer_price}，而不是 {price}。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/common/advice_text.py" />
      <source>Peak memory</source>
      <translation>显存峰值</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/money/planner_view.py" />
      <source>Per hour (all)</source>
      <translation>每小时（全部）</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/common/advice_text.py" />
      <source>Per-GPU utilization</source>
      <translation>各 GPU 利用率</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/monitor/advice_panel.py" />
      <source>Pick an instance to see advice on its run.</source>
      <translation>选择一个实例以查看对其运行的建议。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/prices/prices_view.py" />
      <source>Plan a job's cost</source>
      <translation>规划作业成本</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/port_actions.py" />
      <source>Port {port}</source>
      <translation>端口 {port}</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/port_actions.py" />
      <source>Port {port} ({name})</source>
      <translation>端口 {port}（{name}）</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/port_actions.py" />
      <source>Port {port} ({service})</source>
      <translation>端口 {port}（{service}）</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/port_actions.py" />
      <source>Port {port} is forwarded to {address}.</source>
      <translation>端口 {port} 已转发到 {address}。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/port_actions.py" />
      <source>Ports of launch {id}:</source>
      <translation>启动 {id} 的端口：</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/ports_field.py" />
      <source>Ports of the job forwarded to this computer over SSH (127.0.0.1 only) while it runs: Instances ▸ Open port…. PORT[:NAME][@all]; names jupyter, tensorboard, vscode and http open in the browser; @all forwards every node's port.</source>
      <translation>作业运行期间通过 SSH 转发到本机（仅 127.0.0.1）的端口：实例 ▸ 打开端口…。格式 PORT[:NAME][@all]；名称 jupyter、tensorboard、vscode 和 http 会在浏览器中打开；@all 转发每个节点的端口。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/ports_field.py" />
      <source>Ports: '{item}' is not PORT[:NAME][@all], e.g. 8888:jupyter</source>
      <translation>端口：'{item}' 不是 PORT[:NAME][@all] 格式，例如 8888:jupyter</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/ports_field.py" />
      <source>Ports: {port} is listed twice</source>
      <translation>端口：{port} 列出了两次</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/plugin_texts.py" />
      <source>Price per GPU-hour</source>
      <translation>每 GPU 小时价格</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/common/advice_text.py" />
      <source>Price per hour</source>
      <translation>每小时价格</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/offers_model.py" />
      <source>Price source</source>
      <translation>价格来源</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/controller_panel.py" />
      <source>Price:</source>
      <translation>价格：</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/common/controller_confirm.py" />
      <source>Price: {price} (machine {machine}, {gb} GB disk {disk}, public address {address})</source>
      <translation>价格：{price}（机器 {machine}，{gb} GB 磁盘 {disk}，公网地址 {address}）</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/shell/main_window.py" />
      <source>Prices</source>
      <translation>价格</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/prices/compare_view.py" />
      <source>Prices could not be compared: {error}</source>
      <translation>无法比较价格：{error}</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/money/planner_view.py" />
      <source>Prices from</source>
      <translation>价格日期</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/prices/compare_view.py" />
      <source>Prices from {date} (older than {days} days): press Update prices for the current public prices.</source>
      <translation>价格来自 {date}（超过 {days} 天）：点击“更新价格”获取当前的公开价格。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/money/planner_view.py" />
      <source>Prices from {date}: update them under Compare GPUs.</source>
      <translation>价格来自 {date}：请在“比较 GPU”中更新。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/prices/compare_view.py" />
      <source>Prices were not updated: {error}</source>
      <translation>价格未更新：{error}</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/money/planner_view.py" />
      <source>Pricing failed.</source>
      <translation>计价失败。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/controller_panel.py" />
      <source>Pricing the controller's machine…</source>
      <translation>正在为控制器的机器定价…</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/money/planner_view.py" />
      <source>Pricing {gpus}× {gpu} for {hours} h…</source>
      <translation>正在计算 {gpus}× {gpu} 使用 {hours} 小时的价格…</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_review.py" />
      <source>Pricing:</source>
      <translation>计费方式：</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/plugin_texts.py" />
      <source>Private key</source>
      <translation>私钥</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/shell/away_notice.py" />
      <source>Profile</source>
      <translation>配置文件</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/accounts_view.py" />
      <source>Profile {name} of {provider}</source>
      <translation>{provider} 的配置文件 {name}</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/money/spend_view.py" />
      <source>Projected (max runtime)</source>
      <translation>预计（按最长运行时间）</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_view.py" />
      <source>Projected cost</source>
      <translation>预计费用</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_review.py" />
      <source>Projected cost:</source>
      <translation>预计费用：</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_review.py" />
      <source>Provider</source>
      <translation>云服务商</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/accounts_view.py" />
      <source>Provider / profile</source>
      <translation>云服务商 / 配置文件</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/plugin_texts.py" />
      <source>QOS</source>
      <translation>QOS</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/common/dialogs.py" />
      <source>Quota exceeded</source>
      <translation>超出配额</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/offers_model.py" />
      <source>RAM</source>
      <translation>内存</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/accounts_view.py" />
      <source>Re&amp;move…</source>
      <translation>移除(&amp;M)…</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/import_notes.py" />
      <source>Read as {kind}: {mapped} fields mapped, {ignored} ignored (no effect here), {refused} refused (cannot run here yet).</source>
      <translation>按 {kind} 读取：{mapped} 个字段已映射，{ignored} 个已忽略（在此无效），{refused} 个已拒绝（暂不能在此运行）。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/prices/compare_view.py" />
      <source>Read the clouds' public price lists (no account needed) into your price cache</source>
      <translation>读取各云的公开价目表（无需账户）到您的价格缓存</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/prices/compare_view.py" />
      <source>Reading the public price lists (this can take minutes)…</source>
      <translation>正在读取公开价目表（可能需要几分钟）…</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/profile_dialog.py" />
      <source>Reading the stored values from the keyring…</source>
      <translation>正在从密钥环读取已保存的值…</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_review.py" />
      <source>Recording the launch</source>
      <translation>正在记录启动任务</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/runtime/recovery_loop.py" />
      <source>Recovery</source>
      <translation>恢复</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/runtime/recovery_loop.py" />
      <source>Recovery problem</source>
      <translation>恢复出错</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_storage.py" />
      <source>Recovery relaunches the job while this app, `workbench watch` or the account's controller ("Keep watching while this computer is off" on the review page) watches it. With none of them, an interrupted job stays ended until you open the app again; the machine's own guard still ends its bill.</source>
      <translation>恢复功能在本应用、`workbench watch` 或该账户的控制器（检查页上的“本机关机时继续看护”）看护作业时重新启动它。三者都不在时，被中断的作业会一直停着，直到你再次打开应用；机器自带的守护仍会结束它的计费。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_review.py" />
      <source>Recovery:</source>
      <translation>恢复：</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/shell/main_window.py" />
      <source>Refresh failed: {error}</source>
      <translation>刷新失败：{error}</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/shell/main_window.py" />
      <source>Refreshing…</source>
      <translation>正在刷新…</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/accounts_view.py" />
      <source>Region</source>
      <translation>区域</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/image_field.py" />
      <source>Registry login: '{name}' is also set in the spec's env; name another secret.</source>
      <translation>镜像仓库登录：“{name}”也在规格的 env 中设置了；请换一个密钥名称。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/image_field.py" />
      <source>Registry login: give the user name.</source>
      <translation>镜像仓库登录：请填写用户名。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/image_field.py" />
      <source>Registry login: no password is saved for {registry} (workbench registry login); type one at launch instead.</source>
      <translation>镜像仓库登录：没有为 {registry} 保存密码（workbench registry login）；请改为在启动时输入。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/image_field.py" />
      <source>Registry login: the password saved for {registry} is {user}'s; log in as {user}, or untick it and type a password at launch.</source>
      <translation>镜像仓库登录：为 {registry} 保存的密码属于 {user}；请以 {user} 登录，或取消勾选并在启动时输入密码。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/image_field.py" />
      <source>Registry login: the password secret '{name}' is not a variable name (letters, digits and '_').</source>
      <translation>镜像仓库登录：密码密钥“{name}”不是变量名（只能用字母、数字和“_”）。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_storage.py" />
      <source>Relaunch after a spot &amp;interruption, up to</source>
      <translation>竞价实例被中断后重新启动(&amp;I)，最多</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/runtime/recovery_loop.py" />
      <source>Relaunch failed</source>
      <translation>重新启动失败</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_storage.py" />
      <source>Remo&amp;ve</source>
      <translation>移除(&amp;V)</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/runtime/session.py" />
      <source>Remote job problem</source>
      <translation>远程作业出现问题</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/logs_dialog.py" />
      <source>Remote job: {phase}</source>
      <translation>远程作业:{phase}</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/accounts_view.py" />
      <source>Remove profile</source>
      <translation>移除配置文件</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/accounts_view.py" />
      <source>Remove profile {name} ({provider})?</source>
      <translation>移除配置文件 {name}（{provider}）？</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/accounts_view.py" />
      <source>Remove profile {name} ({provider})? No machines are running under it. Its credentials are deleted from the keyring.</source>
      <translation>要移除配置文件 {name}（{provider}）吗？该配置文件下没有正在运行的机器。其凭据将从密钥环中删除。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/accounts_view.py" />
      <source>Remove profile {name} ({provider})? {count} machine(s) launched with it are still running at {rate}/h. Removing the profile does not stop them: they keep billing and can no longer be managed here. Stop them first.</source>
      <translation>要移除配置文件 {name}（{provider}）吗？用它启动的 {count} 台机器仍在运行，费用为 {rate}/小时。移除配置文件不会停止这些机器：它们会继续计费，且无法再在此处管理。请先停止它们。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/accounts_view.py" />
      <source>Removed profile {name}.</source>
      <translation>已移除配置文件 {name}。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/accounts_view.py" />
      <source>Removing profile {name}…</source>
      <translation>正在移除配置文件 {name}…</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/shell/help_menu.py" />
      <source>Rent GPU machines, watch them train, stop the bill with one click.</source>
      <translation>租用 GPU 机器，观察训练，一键停止计费。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/shell/help_menu.py" />
      <source>Report a problem</source>
      <translation>报告问题</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_review.py" />
      <source>Review and launch</source>
      <translation>检查并启动</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/money/planner_view.py" />
      <source>Rows in {currencies}: set “Show in” and your rate to compare them in one currency.</source>
      <translation>各行的货币为 {currencies}：设置“显示为”和您的汇率，以同一货币比较。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/instances_view.py" />
      <source>Run &amp;report…</source>
      <translation>运行报告(&amp;R)…</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/monitor/run_report.py" />
      <source>Run report saved</source>
      <translation>运行报告已保存</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/monitor/run_report.py" />
      <source>Run report — {launch}</source>
      <translation>运行报告 — {launch}</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/common/advice_text.py" />
      <source>Run report: {name}</source>
      <translation>运行报告：{name}</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/accounts_view.py" />
      <source>Running</source>
      <translation>运行中</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/plugin_texts.py" />
      <source>SSH port</source>
      <translation>SSH 端口</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/monitor/run_report.py" />
      <source>Save &amp;HTML…</source>
      <translation>保存 &amp;HTML…</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/monitor/run_report.py" />
      <source>Save &amp;PDF…</source>
      <translation>保存 &amp;PDF…</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/profile_dialog.py" />
      <source>Save &amp;anyway</source>
      <translation>仍然保存(&amp;A)</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/image_field.py" />
      <source>Save for next time</source>
      <translation>保存供下次使用</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/profile_dialog.py" />
      <source>Save profile</source>
      <translation>保存配置文件</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/monitor/run_report.py" />
      <source>Save the run report</source>
      <translation>保存运行报告</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/accounts_view.py" />
      <source>Saved profile {name}.</source>
      <translation>已保存配置文件 {name}。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/monitor/run_report.py" />
      <source>Saved {path}</source>
      <translation>已保存 {path}</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/profile_dialog.py" />
      <source>Saved.</source>
      <translation>已保存。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/common/advice_text.py" />
      <source>Saves about {amount} on this run</source>
      <translation>本次运行约可节省 {amount}</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/common/advice_text.py" />
      <source>Saving unknown (no price)</source>
      <translation>节省金额未知（没有价格）</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/profile_dialog.py" />
      <source>Saving…</source>
      <translation>正在保存…</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/plugin_texts.py" />
      <source>Secret access key</source>
      <translation>秘密访问密钥</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/profile_dialog.py" />
      <source>Secret fields are saved only in the system keyring, never in a file.</source>
      <translation>机密字段只保存在系统密钥环中，绝不写入文件。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/accounts_view.py" />
      <source>Secrets are kept in the system keyring: none was found on this computer</source>
      <translation>机密保存在系统密钥环中：这台电脑上未找到密钥环</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/accounts_view.py" />
      <source>Secrets are kept in the system keyring: {backend}</source>
      <translation>机密信息保存在系统密钥环中：{backend}</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_review.py" />
      <source>Secrets the job asks for</source>
      <translation>作业需要的密钥</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/plugin_texts.py" />
      <source>Session token</source>
      <translation>会话令牌</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/profile_dialog.py" />
      <source>Settings line {line} is not key=value.</source>
      <translation>设置第 {line} 行不是 key=value 格式。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/profile_dialog.py" />
      <source>Settings:</source>
      <translation>设置：</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_pages.py" />
      <source>Several machines run one job together (torchrun, DeepSpeed, MPI); each gets the resources of one offer, and they are placed close together on a fast network.</source>
      <translation>多台机器共同运行一个作业（torchrun、DeepSpeed、MPI）；每台机器获得一个报价的资源，并被放置在彼此靠近的高速网络上。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/image_field.py" />
      <source>Shared memory (/dev/s&amp;hm):</source>
      <translation>共享内存（/dev/shm）(&amp;H)：</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/image_field.py" />
      <source>Shared memory: must be a size like 16g or 512m, got '{size}'</source>
      <translation>共享内存：必须是 16g 或 512m 这样的大小，实际为“{size}”</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/credentials_form.py" />
      <source>Show</source>
      <translation>显示</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/shell/tray.py" />
      <source>Show Cloud GPU Workbench</source>
      <translation>显示云端 GPU 工作台</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/money/planner_view.py" />
      <source>Show in:</source>
      <translation>显示为：</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/credentials_form.py" />
      <source>Show or hide what was typed</source>
      <translation>显示或隐藏已输入的内容</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/shell/away_notice.py" />
      <source>Show what happened…</source>
      <translation>查看发生了什么…</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_pages.py" />
      <source>Shut down when the GPUs are &amp;idle for</source>
      <translation>GPU 空闲达到以下时长即关机(&amp;I)：</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/plugin_texts.py" />
      <source>Slurm cluster</source>
      <translation>Slurm 集群</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/common/job_state.py" />
      <source>Slurm job {id}</source>
      <translation>Slurm 作业 {id}</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/common/job_state.py" />
      <source>Slurm job {id} in partition {partition}</source>
      <translation>Slurm 作业 {id}，分区 {partition}</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/prices/compare_view.py" />
      <source>Some accounts could not be asked; their clouds are priced from the catalog:</source>
      <translation>部分账户无法查询；其云的价格来自价格目录：</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_pages.py" />
      <source>Some accounts could not be asked; their offers are missing:</source>
      <translation>部分账号无法查询，缺少其报价：</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/money/planner_view.py" />
      <source>Some prices are in {source}: enter your exchange rate (1 USD = … CNY) in the box beside “Show in” to see every row in {target}.</source>
      <translation>部分价格以 {source} 计：请在“显示为”旁的输入框中填写您的汇率（1 USD = … CNY），即可将所有行显示为 {target}。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/runtime/controller_hook.py" />
      <source>Something of the controller of {profile} still bills: see Instances.</source>
      <translation>{profile} 的控制器仍有部分在计费：请查看“实例”。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/controller_panel.py" />
      <source>Something of the controller still bills: see Instances.</source>
      <translation>控制器仍有部分在计费：请查看“实例”。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/shell/quit_guard.py" />
      <source>Something this app launched may still be billing.</source>
      <translation>本应用启动的某些资源可能仍在计费。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/accounts_view.py" />
      <source>Something this app launched with it may still be billing: removing the profile does not stop it, and it can no longer be managed here.</source>
      <translation>本应用用它启动的某些资源可能仍在计费：移除配置文件不会停止它们，而且之后无法再在这里管理它们。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/common/dialogs.py" />
      <source>Something went wrong</source>
      <translation>出现问题</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_storage.py" />
      <source>Source</source>
      <translation>来源</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/shell/main_window.py" />
      <source>Spend</source>
      <translation>花费</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/monitor/monitor_plots.py" />
      <source>Spend ({currency})</source>
      <translation>花费（{currency}）</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/money/spend_view.py" />
      <source>Spend could not be computed: {error}</source>
      <translation>无法计算花费：{error}</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/instances_model.py" />
      <source>Spend so far</source>
      <translation>已花费</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/money/spend_view.py" />
      <source>Spent (estimate)</source>
      <translation>已花费(估算)</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/offers_model.py" />
      <source>Spot /h</source>
      <translation>竞价 /小时</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/common/job_state.py" />
      <source>Spot interrupted</source>
      <translation>竞价实例被回收</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/runtime/session.py" />
      <source>Spot machine taken back</source>
      <translation>竞价机器被收回</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/prices/compare_view.py" />
      <source>Spot prices</source>
      <translation>竞价实例价格</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/common/advice_text.py" />
      <source>Spot would have cost less</source>
      <translation>使用竞价实例会更便宜</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/shell/main_window.py" />
      <source>Start a job on this computer or a cloud GPU</source>
      <translation>在这台计算机或云端 GPU 上启动作业</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/money/spend_view.py" />
      <source>Started</source>
      <translation>开始时间</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/instances_model.py" />
      <source>State</source>
      <translation>状态</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/controller_panel.py" />
      <source>State:</source>
      <translation>状态：</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/accounts_view.py" />
      <source>Status</source>
      <translation>状态</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/instances_view.py" />
      <source>Still billing</source>
      <translation>仍在计费</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_wizard.py" />
      <source>Still there (may be billing):</source>
      <translation>仍然存在（可能在计费）：</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/instances_view.py" />
      <source>Stop</source>
      <translation>停止</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_pages.py" />
      <source>Stop after a &amp;maximum runtime of</source>
      <translation>超过最长运行时间即停止(&amp;M)：</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/stop_all.py" />
      <source>Stop all billing</source>
      <translation>停止所有计费</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/stop_all.py" />
      <source>Stop all billing: result</source>
      <translation>停止所有计费：结果</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/watch_actions.py" />
      <source>Stop the controller &amp;watching</source>
      <translation>不再由控制器看护(&amp;W)</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/stop_all.py" />
      <source>Stop what is starting now?</source>
      <translation>停止正在启动的内容？</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_pages.py" />
      <source>Stop when a bud&amp;get of</source>
      <translation>花费达到预算即停止(&amp;G)：</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/stop_all.py" />
      <source>Stop {count} billable thing(s), {rate}/h in total?</source>
      <translation>要停止 {count} 个计费资源（共 {rate}/小时）吗？</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/instances_view.py" />
      <source>Stop {count} machine(s), stopping {rate}/h of compute?</source>
      <translation>停止 {count} 台机器，停止每小时 {rate} 的计算费用？</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/instances_view.py" />
      <source>Stopped</source>
      <translation>已停止</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/stop_all.py" />
      <source>Stopping all billing…</source>
      <translation>正在停止所有计费…</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/plugin_texts.py" />
      <source>Subscription</source>
      <translation>订阅</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/shell/help_menu.py" />
      <source>System</source>
      <translation>系统</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/shell/main_window.py" />
      <source>System default</source>
      <translation>系统默认</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/instances_view.py" />
      <source>Te&amp;rminate…</source>
      <translation>终止(&amp;R)…</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/monitor/monitor_view.py" />
      <source>Telemetry problem: {message}</source>
      <translation>遥测出现问题：{message}</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/plugin_texts.py" />
      <source>Tenant ID</source>
      <translation>租户 ID</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/instances_view.py" />
      <source>Terminate</source>
      <translation>终止</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/shell/main_window.py" />
      <source>Terminate every machine and delete every leftover, then verify</source>
      <translation>终止所有机器并删除所有残留资源，然后核实</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/instances_view.py" />
      <source>Terminate {count} machine(s), stopping {rate}/h?</source>
      <translation>要终止 {count} 台机器，停止 {rate}/小时的计费吗？</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/instances_view.py" />
      <source>Terminated</source>
      <translation>已终止</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/instances_view.py" />
      <source>Terminating</source>
      <translation>正在终止</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/profile_dialog.py" />
      <source>Testing the credentials…</source>
      <translation>正在测试凭据…</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/accounts_view.py" />
      <source>Testing {name}…</source>
      <translation>正在测试 {name}…</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/common/advice_text.py" />
      <source>The GPUs wait for data</source>
      <translation>GPU 在等待数据</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/login_key.py" />
      <source>The app logs in with its own SSH key: add this line to ~/.ssh/authorized_keys on the login node (once).</source>
      <translation>本应用用自己的 SSH 密钥登录：请把这一行加到登录节点的 ~/.ssh/authorized_keys 中（只需一次）。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_storage.py" />
      <source>The buckets could not be listed: {error}</source>
      <translation>无法列出存储桶：{error}</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_review.py" />
      <source>The comparison is for GPU jobs: this job asks for no GPU model.</source>
      <translation>该比较仅适用于 GPU 任务：此任务未要求 GPU 型号。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_review.py" />
      <source>The comparison needs a maximum runtime: set one under Guards.</source>
      <translation>该比较需要最长运行时间：请在“保护规则”中设置。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/image_field.py" />
      <source>The container image setup and run happen in, with every GPU of the machine (registry/name:tag or name@sha256:…; Docker Hub when no registry is named). Empty: the job runs on the machine itself.</source>
      <translation>setup 和 run 在其中运行的容器镜像，可使用机器的所有 GPU（registry/name:tag 或 name@sha256:…；未指定仓库时为 Docker Hub）。留空：作业直接在机器上运行。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/controller_panel.py" />
      <source>The controller is gone (verified).</source>
      <translation>控制器已结束（已核实）。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/runtime/controller_hook.py" />
      <source>The controller of {profile} answers.</source>
      <translation>{profile} 的控制器有响应。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/shell/away_notice.py" />
      <source>The controller of {profile} does not answer; the app relaunches its launches while it runs.</source>
      <translation>{profile} 的控制器没有响应；本应用运行期间由它重新启动这些启动。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/runtime/controller_hook.py" />
      <source>The controller of {profile} is gone (verified).</source>
      <translation>{profile} 的控制器已结束（已核实）。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/runtime/controller_hook.py" />
      <source>The controller of {profile} was created but has not answered yet.</source>
      <translation>{profile} 的控制器已创建，但还没有响应。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/instances_model.py" />
      <source>The controller of {profile}: a small machine in this account that watches the launches handed to it while this computer is off (Accounts ▸ Controller).</source>
      <translation>{profile} 的控制器：这个账号中的一台小机器，在本机关机时看护交给它的启动（账号 ▸ 控制器）。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/runtime/controller_hook.py" />
      <source>The controller of {profile}: {error}</source>
      <translation>{profile} 的控制器：{error}</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/common/dialogs.py" />
      <source>The credentials were refused</source>
      <translation>凭据被拒绝</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/profile_dialog.py" />
      <source>The endpoint URL must start with https:// or http://.</source>
      <translation>端点 URL 必须以 https:// 或 http:// 开头。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/prices/compare_view.py" />
      <source>The fewest GPUs one machine must have</source>
      <translation>一台机器至少需要的 GPU 数量</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/logs_dialog.py" />
      <source>The job is running.</source>
      <translation>作业正在运行。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/port_actions.py" />
      <source>The job lists no ports, or its machine is not running</source>
      <translation>作业未列出端口，或其机器未在运行</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_job_page.py" />
      <source>The job spec has an error (see above): fix the file and open it again, or clear it.</source>
      <translation>作业规格有错误（见上文）：请修正文件后重新打开，或将其清除。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/shell/main_window.py" />
      <source>The language changes when the app is restarted.</source>
      <translation>重启应用后语言设置才会生效。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/profile_dialog.py" />
      <source>The last test of these credentials failed. Save the profile anyway?</source>
      <translation>这些凭据上次测试失败。仍然保存配置文件吗？</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_wizard.py" />
      <source>The launch failed.</source>
      <translation>启动失败。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_wizard.py" />
      <source>The launch was cancelled and torn down.</source>
      <translation>启动任务已取消并已终止。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_job_page.py" />
      <source>The name may use letters, digits, '_', '.' and '-' (up to 63), starting with a letter or digit.</source>
      <translation>名称可使用字母、数字、'_'、'.' 和 '-'（最多 63 个字符），且须以字母或数字开头。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/common/advice_text.py" />
      <source>The network limits training</source>
      <translation>网络限制了训练速度</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/image_field.py" />
      <source>The password or token is a launch secret: its value is asked for on the review page and kept in memory for the launch; it is saved (in this computer's keyring) only when you tick Save for next time. Only the secret's name goes into the job.</source>
      <translation>密码或令牌是启动密钥：其值在确认页询问，仅在启动期间保存在内存中；只有勾选“保存供下次使用”时才会保存（到此计算机的密钥环）。作业中只包含密钥的名称。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/shell/help_menu.py" />
      <source>The problem report is on the clipboard.</source>
      <translation>问题报告已复制到剪贴板。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/common/dialogs.py" />
      <source>The provider is not answering right now</source>
      <translation>云服务商目前无响应</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/monitor/run_report.py" />
      <source>The report could not be built: {error}</source>
      <translation>无法生成报告：{error}</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/shell/help_menu.py" />
      <source>The report could not be collected</source>
      <translation>无法收集报告</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/plugin_texts.py" />
      <source>The secret's Value; not needed with auth=cli (your `az login`)</source>
      <translation>密码的“值”；使用 auth=cli（您的 `az login`）时不需要</translation>
    </message>
    <message>
      <location filename="../../../workbench/app.py" />
      <source>The state database was damaged and moved to {path}; machines are being found again from the providers.</source>
      <translation>状态数据库已损坏，已移至 {path}；正在从各云服务商重新查找机器。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/accounts_view.py" />
      <source>The system keyring did not answer, so cloud credentials can be neither saved nor read right now. Try again in a moment; if it keeps failing, restart your desktop session.</source>
      <translation>系统密钥环没有响应，目前既无法保存也无法读取云凭据。请稍后重试；如果一直失败，请重新启动桌面会话。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/stop_all.py" />
      <source>The teardown could not run.</source>
      <translation>终止操作无法执行。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/stop_all.py" />
      <source>The teardown could not run; something may still be billing.</source>
      <translation>终止操作无法执行；可能仍有资源在计费。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/common/advice_text.py" />
      <source>The {model} GPUs were busy ({util}%) but drew only {power_percent}% of their power limit, a sign of FP32 math: train with automatic mixed precision (torch.autocast with bfloat16 or float16). Expected about {speedup}× faster.</source>
      <translation>{model} GPU 很忙（{util}%），但功耗只有功率上限的 {power_percent}%，说明在用 FP32 计算：请使用自动混合精度训练（torch.autocast，bfloat16 或 float16）。预计快约 {speedup}×。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/common/advice_text.py" />
      <source>The {nodes} machines moved up to {net_gbps} Gbit/s, {net_percent}% of their {link_gbps} Gbit/s network, while the GPUs averaged {util}%: use an instance type with EFA or InfiniBand, with all nodes in one placement group, and check that NCCL uses it.</source>
      <translation>{nodes} 台机器的网络流量高达 {net_gbps} Gbit/s，占其 {link_gbps} Gbit/s 网络的 {net_percent}%，而 GPU 平均利用率仅 {util}%：请使用带 EFA 或 InfiniBand 的实例类型，把所有节点放在同一个置放群组中，并确认 NCCL 在使用它。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/common/advice_text.py" />
      <source>The {nodes} machines moved up to {net_gbps} Gbit/s, {net_percent}% of their {link_gbps} Gbit/s network, while the GPUs averaged {util}%: use {offer} (EFA / InfiniBand, {offer_price}/h) with all nodes in one placement group.</source>
      <translation>{nodes} 台机器的网络流量高达 {net_gbps} Gbit/s，占其 {link_gbps} Gbit/s 网络的 {net_percent}%，而 GPU 平均利用率仅 {util}%：请使用 {offer}（EFA / InfiniBand，每小时 {offer_price}），并把所有节点放在同一个置放群组中。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/monitor/monitor_view.py" />
      <source>The {provider} provider does not report GPU telemetry, so there is nothing to plot for {name}. Its spend is still tracked.</source>
      <translation>{provider} 提供商不报告 GPU 遥测数据，因此 {name} 没有可绘制的内容。其花费仍在记录中。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/instances_view.py" />
      <source>Their disks and addresses are deleted too. This cannot be undone.</source>
      <translation>它们的磁盘和地址也会被删除。此操作无法撤销。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/instances_view.py" />
      <source>Their disks are kept (and still bill a little); the job is interrupted. Terminate deletes everything instead.</source>
      <translation>磁盘会保留（仍会产生少量费用）；作业将被中断。若要删除全部资源，请使用“终止”。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_pages.py" />
      <source>These prices come from the price catalog: no account of yours can launch them yet. Add an account in Accounts for one of these clouds.</source>
      <translation>这些价格来自价格目录：您还没有可以启动它们的账户。请在“账户”中为其中一个云添加账户。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/stop_all_local.py" />
      <source>They cost nothing and are not stopped unless you tick them.</source>
      <translation>它们不产生费用，除非您勾选，否则不会被停止。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/stop_all_local.py" />
      <source>They cost nothing and are not stopped unless you tick them. A cluster job that is cancelled loses its place in the queue.</source>
      <translation>它们不产生费用，除非您勾选，否则不会被停止。集群作业一旦取消，就会失去它在队列中的位置。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/stop_all_model.py" />
      <source>Thing</source>
      <translation>资源</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/plugin_texts.py" />
      <source>This computer</source>
      <translation>这台计算机</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/common/open_folder.py" />
      <source>This folder does not exist yet. It will be here:</source>
      <translation>此文件夹尚不存在。它将位于：</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/common/dialogs.py" />
      <source>This is a bug; the log file has the details.</source>
      <translation>这是一个程序缺陷；详情请查看日志文件。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_review.py" />
      <source>This is what will be created and what it can cost. Nothing is created before you press Launch.</source>
      <translation>以下是将要创建的内容及可能产生的费用。在您按下“启动”之前不会创建任何资源。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_job_page.py" />
      <source>This job cannot be launched yet: {why}.</source>
      <translation>这个作业暂时无法启动：{why}。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/offers_model.py" />
      <source>This job pays {price} per hour ({term})</source>
      <translation>此作业每小时费用 {price}（{term}）</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/offers_model.py" />
      <source>This job pays {price} per hour per machine, {total} for all {n} ({term})</source>
      <translation>此作业每台机器每小时 {price}，{n} 台合计 {total}（{term}）</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/common/advice_text.py" />
      <source>This launch ran without a GPU: the GPU advice does not apply. Its CPU and memory use are below.</source>
      <translation>此启动未使用 GPU：GPU 建议不适用。其 CPU 和内存使用情况如下。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/credentials_form.py" />
      <source>This provider needs no credentials.</source>
      <translation>此云服务商不需要凭据。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/shell/help_menu.py" />
      <source>This report (versions and the health checks, without your secrets, home folder or user name) is on the clipboard: paste it into your message. Attach the log file if you can.</source>
      <translation>此报告（版本与健康检查结果，不含您的密钥、主文件夹或用户名）已复制到剪贴板：请粘贴到您的消息中。如有可能，请附上日志文件。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/common/advice_text.py" />
      <source>This {hours} h on-demand run can resume from its checkpoints: on spot ({offer_price}/h instead of {price}/h) it would have cost {spot_cost} instead of {cost}, if interruptions cost little time.</source>
      <translation>这次 {hours} 小时的按需运行可以从检查点恢复：若使用竞价实例（每小时 {offer_price}，而不是 {price}），在中断损失时间不多的情况下，费用将是 {spot_cost}，而不是 {cost}。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/monitor/monitor_view.py" />
      <source>Time &amp;window:</source>
      <translation>时间范围(&amp;W)：</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_review.py" />
      <source>Total</source>
      <translation>总计</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/common/advice_text.py" />
      <source>Train in mixed precision</source>
      <translation>使用混合精度训练</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/instances_model.py" />
      <source>Type</source>
      <translation>类型</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/profile_dialog.py" />
      <source>Type a region, or run Test to list the provider's regions.</source>
      <translation>输入区域，或运行“测试”以列出该云服务商的区域。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_storage.py" />
      <source>Type the bucket's address.</source>
      <translation>请输入存储桶的地址。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/common/dialogs.py" />
      <source>Unexpected error</source>
      <translation>意外错误</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_review.py" />
      <source>Unknown: this offer has no price for this term.</source>
      <translation>未知：此报价没有该计费方式的价格。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/shell/main_window.py" />
      <source>Up to date</source>
      <translation>已是最新</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/logs_dialog.py" />
      <source>Uploading {files} files, {size} MB…</source>
      <translation>正在上传 {files} 个文件,共 {size} MB…</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_run.py" />
      <source>Uploading {folder}: {pct} % ({done} of {total} files; {skipped} unchanged)</source>
      <translation>正在上传 {folder}：{pct} %（{total} 个文件中的 {done} 个；{skipped} 个未改动）</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/instances_model.py" />
      <source>Uptime</source>
      <translation>运行时长</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_job_page.py" />
      <source>Use &amp;spot capacity (cheaper, may be interrupted)</source>
      <translation>使用竞价实例(&amp;S)（更便宜，可能被中断）</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/common/advice_text.py" />
      <source>Use larger batches</source>
      <translation>使用更大的批大小</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/image_field.py" />
      <source>Use the password saved for {registry}</source>
      <translation>使用为 {registry} 保存的密码</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/plugin_texts.py" />
      <source>User</source>
      <translation>用户</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/image_field.py" />
      <source>User in the container:</source>
      <translation>容器内的用户：</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/image_field.py" />
      <source>User in the container: must be a user name, a uid or uid:gid, got '{user}'</source>
      <translation>容器内的用户：必须是用户名、uid 或 uid:gid，实际为“{user}”</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/monitor/monitor_plots.py" />
      <source>Utilization (%)</source>
      <translation>利用率（%）</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/port_actions.py" />
      <source>VS Code server</source>
      <translation>VS Code 服务器</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/instances_view.py" />
      <source>Verified: nothing of it is billing any more.</source>
      <translation>已核实：相关资源均已停止计费。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_review.py" />
      <source>Waiting for it to start</source>
      <translation>正在等待其启动</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/monitor/monitor_view.py" />
      <source>Waiting for the first reading from {name}…</source>
      <translation>正在等待 {name} 的第一个读数…</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/stop_all.py" />
      <source>Waiting for {launch} to finish starting on {profile}…</source>
      <translation>正在等待 {launch} 在 {profile} 上完成启动…</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/runtime/controller_hook.py" />
      <source>Watched by the controller</source>
      <translation>由控制器看护</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/instances_model.py" />
      <source>Watched by the controller of {profile}: it relaunches and ends this launch while this computer is off.</source>
      <translation>由 {profile} 的控制器看护：本机关机时由它重新启动和结束这次启动。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/controller_panel.py" />
      <source>Watches:</source>
      <translation>看护：</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_review.py" />
      <source>Ways to pay for this job</source>
      <translation>这个任务的付费方式</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/monitor/run_report.py" />
      <source>Web pages (*.html)</source>
      <translation>网页 (*.html)</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/shell/main_window.py" />
      <source>What everything billing costs now, and what today cost so far</source>
      <translation>当前所有计费资源的费用，以及今天到目前为止的花费</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/shell/away_notice.py" />
      <source>What happened</source>
      <translation>发生了什么</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/import_notes.py" />
      <source>What it became, or why</source>
      <translation>转换结果或原因</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/shell/away_notice.py" />
      <source>What the controllers did:</source>
      <translation>控制器做了什么：</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/common/dialogs.py" />
      <source>What to do:</source>
      <translation>解决方法：</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_job_page.py" />
      <source>What to run: open a job spec, a SkyPilot task or a dstack task (YAML), or fill in the form.</source>
      <translation>要运行什么：打开作业规格、SkyPilot 任务或 dstack 任务（YAML），或填写表单。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/shell/away_notice.py" />
      <source>When</source>
      <translation>时间</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_review.py" />
      <source>When the job ends:</source>
      <translation>作业结束时：</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_review.py" />
      <source>Where:</source>
      <translation>位置：</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/shell/away_notice.py" />
      <source>While you were away</source>
      <translation>你不在时</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/shell/away_notice.py" />
      <source>While you were away: {summary}</source>
      <translation>你不在时：{summary}</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/image_field.py" />
      <source>Who setup and run are inside the container: a user name, a uid or uid:gid</source>
      <translation>setup 和 run 在容器内以谁的身份运行：用户名、uid 或 uid:gid</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/common/job_state.py" />
      <source>Why it waits: {reason}</source>
      <translation>等待原因：{reason}</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/accounts_view.py" />
      <source>Windows Credential Manager</source>
      <translation>Windows 凭据管理器</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_storage.py" />
      <source>Without a sync mount a relaunched job starts from the beginning: add a bucket in sync mode for its checkpoints.</source>
      <translation>没有同步挂载时，重新启动的作业会从头开始：请添加一个同步模式的存储桶来保存检查点。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/accounts_view.py" />
      <source>Your keyring is locked, so cloud credentials can be neither saved nor read. Unlock it (log in to the desktop again, or open your keyring app and unlock the Login keyring), then open Accounts again.</source>
      <translation>您的密钥环已锁定，因此既无法保存也无法读取云凭据。请将其解锁（重新登录桌面，或打开密钥环应用并解锁“登录”密钥环），然后再打开“账户”。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/plugin_texts.py" />
      <source>a RAM user's AccessKey ID (LTAI…); leave empty to use an Alibaba Cloud CLI profile</source>
      <translation>RAM 用户的 AccessKey ID（LTAI…）；留空则使用阿里云 CLI 配置</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/import_notes.py" />
      <source>a SkyPilot task</source>
      <translation>SkyPilot 任务</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/plugin_texts.py" />
      <source>a bastion to go through, user@host:port (empty: connect directly)</source>
      <translation>经由的跳板机，格式 user@host:port（留空：直接连接）</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/import_notes.py" />
      <source>a dstack task</source>
      <translation>dstack 任务</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_watch.py" />
      <source>a job on this computer stops when the computer does: there is nothing to watch</source>
      <translation>本机上的作业随本机一起停止：没有可看护的内容</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_watch.py" />
      <source>a job with launch secrets cannot be handed over: their values live only in this app's memory</source>
      <translation>带启动密钥的作业不能交出：密钥的值只保存在本应用的内存中</translation>
    </message>
    <message>
      <location filename="../../../workbench/core/domain/queue_words.py" />
      <source>a node failed to boot (BOOT_FAIL)</source>
      <translation>某个节点启动失败 (BOOT_FAIL)</translation>
    </message>
    <message>
      <location filename="../../../workbench/core/domain/queue_words.py" />
      <source>a node is being cleaned up after a previous job (Cleaning)</source>
      <translation>某个节点正在清理上一个作业 (Cleaning)</translation>
    </message>
    <message>
      <location filename="../../../workbench/core/domain/queue_words.py" />
      <source>a node is rebooting for it (NodeRebooting)</source>
      <translation>某个节点正在为它重启 (NodeRebooting)</translation>
    </message>
    <message>
      <location filename="../../../workbench/core/domain/queue_words.py" />
      <source>a node it needs is down (NodeDown)</source>
      <translation>它需要的某个节点已宕机 (NodeDown)</translation>
    </message>
    <message>
      <location filename="../../../workbench/core/domain/queue_words.py" />
      <source>a node it needs is down, drained or reserved (ReqNodeNotAvail)</source>
      <translation>它需要的某个节点已宕机、已排空或被预留 (ReqNodeNotAvail)</translation>
    </message>
    <message>
      <location filename="../../../workbench/core/domain/queue_words.py" />
      <source>a node of the job failed (NODE_FAIL)</source>
      <translation>作业的某个节点出故障了 (NODE_FAIL)</translation>
    </message>
    <message>
      <location filename="../../../workbench/core/domain/queue_words.py" />
      <source>a powered-down node is starting for it (PowerUp)</source>
      <translation>某个已关机的节点正在为它启动 (PowerUp)</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/plugin_texts.py" />
      <source>a profile from ~/.aws/config, e.g. for IAM Identity Center (SSO) sign-in</source>
      <translation>~/.aws/config 中的配置，例如用于 IAM Identity Center（SSO）登录</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/plugin_texts.py" />
      <source>a profile name from ~/.aliyun/config.json (aliyun configure) instead of an AccessKey</source>
      <translation>~/.aliyun/config.json（aliyun configure）中的配置名，代替 AccessKey</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/plugin_texts.py" />
      <source>a quality of service (sbatch --qos)</source>
      <translation>服务质量（sbatch --qos）</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_review.py" />
      <source>a spot interruption</source>
      <translation>竞价实例中断</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_review.py" />
      <source>a spot interruption or a failure</source>
      <translation>竞价实例中断或作业失败</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/logs_dialog.py" />
      <source>add 'outputs:' to the spec</source>
      <translation>在作业描述中添加 'outputs:'</translation>
    </message>
    <message>
      <location filename="../../../workbench/core/offers/catalog.py" />
      <source>add an account to launch</source>
      <translation>添加账户后可启动</translation>
    </message>
    <message>
      <location filename="../../../workbench/core/providers/price_snapshot.py" />
      <source>all upfront, effective hourly</source>
      <translation>全额预付，折合每小时</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_storage.py" />
      <source>also when the job fails</source>
      <translation>作业失败时也重新启动</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/plugin_texts.py" />
      <source>an IAM user's key (AKIA…); leave empty to use a named profile instead</source>
      <translation>IAM 用户的密钥（AKIA…）；留空则改用命名配置</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/controller_panel.py" />
      <source>answering, last heard {age} ago</source>
      <translation>有响应，最近一次在 {age} 前</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_job_page.py" />
      <source>any</source>
      <translation>任意</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/plugin_texts.py" />
      <source>app (its own key), keyring (the stored private key) or agent (ssh-agent); empty: keyring if a key is stored</source>
      <translation>app（本应用自己的密钥）、keyring（已保存的私钥）或 agent（ssh-agent）；留空：已保存私钥时用 keyring</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/money/planner_view.py" />
      <source>as priced</source>
      <translation>按原币种</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/instances_model.py" />
      <source>attempt {n} of {root}: relaunched after an interruption (Spend lists every attempt)</source>
      <translation>{root} 的第 {n} 次尝试：中断后重新启动（“花费”中列出每一次尝试）</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/accounts_view.py" />
      <source>available</source>
      <translation>可用</translation>
    </message>
    <message>
      <location filename="../../../workbench/core/providers/price_snapshot.py" />
      <source>average at one time</source>
      <translation>某一时刻的平均值</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_pages.py" />
      <source>below </source>
      <translation>低于 </translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/stop_all_model.py" />
      <source>billing</source>
      <translation>计费中</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_review.py" />
      <source>budget {amount}</source>
      <translation>预算 {amount}</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/instances_model.py" />
      <source>budget {used} %</source>
      <translation>预算已用 {used} %</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/accounts_view.py" />
      <source>built in</source>
      <translation>内置</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/accounts_view.py" />
      <source>built in; always available</source>
      <translation>内置；始终可用</translation>
    </message>
    <message>
      <location filename="../../../workbench/core/providers/price_snapshot.py" />
      <source>bundled snapshot</source>
      <translation>内置价格快照</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_review.py" />
      <source>buy</source>
      <translation>购买</translation>
    </message>
    <message>
      <location filename="../../../workbench/core/domain/queue_words.py" />
      <source>cancelled (CANCELLED)</source>
      <translation>已取消 (CANCELLED)</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/money/spend_view.py" />
      <source>cannot be checked (no exchange rate)</source>
      <translation>无法检查(未设置汇率)</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/shell/badge.py" />
      <source>cannot check {count}</source>
      <translation>无法检查 {count} 个</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/common/format.py" />
      <source>cannot check {profile}: {reason}</source>
      <translation>无法检查 {profile}：{reason}</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_watch.py" />
      <source>checking whether {profile} can have a controller…</source>
      <translation>正在检查 {profile} 能否使用控制器…</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/controller_panel.py" />
      <source>checking…</source>
      <translation>正在检查…</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/instances_model.py" />
      <source>controller of {profile}</source>
      <translation>{profile} 的控制器</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/instances_model.py" />
      <source>controller · machine {state}</source>
      <translation>控制器 · 机器{state}</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/money/planner_view.py" />
      <source>converted from {currency} at your rate</source>
      <translation>按您的汇率从 {currency} 换算</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_storage.py" />
      <source>copy</source>
      <translation>复制</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_review.py" />
      <source>copy {source} → {path} before setup</source>
      <translation>在 setup 之前复制 {source} → {path}</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_storage.py" />
      <source>copy: bring it to the machine before setup (a dataset)</source>
      <translation>复制：在 setup 之前把它拷到机器上（数据集）</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/remote_access.py" />
      <source>could not start {program}</source>
      <translation>无法启动 {program}</translation>
    </message>
    <message>
      <location filename="../../../workbench/core/providers/price_snapshot.py" />
      <source>date unknown</source>
      <translation>日期未知</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/common/format.py" />
      <source>deallocated</source>
      <translation>已解除分配</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/profile_dialog.py" />
      <source>default endpoint of the provider</source>
      <translation>云服务商的默认端点</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/image_field.py" />
      <source>default: 64m</source>
      <translation>默认：64m</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/stop_all_model.py" />
      <source>deleted, verifying…</source>
      <translation>已删除，正在核实…</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/stop_all_model.py" />
      <source>deleting…</source>
      <translation>正在删除…</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/common/controller_confirm.py" />
      <source>disk</source>
      <translation>磁盘</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/controller_panel.py" />
      <source>does not answer (last heard {age} ago): this app relaunches its launches while it runs</source>
      <translation>没有响应（最近一次在 {age} 前）：本应用运行期间由它重新启动这些启动</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/controller_panel.py" />
      <source>does not answer: this app relaunches its launches while it runs</source>
      <translation>没有响应：本应用运行期间由它重新启动这些启动</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_job_page.py" />
      <source>e.g. python3 train.py --epochs 10</source>
      <translation>例如 python3 train.py --epochs 10</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_job_page.py" />
      <source>e.g. train-resnet</source>
      <translation>例如 train-resnet</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_review.py" />
      <source>end the batch job (its nodes go back to the cluster)</source>
      <translation>结束批处理作业（它的节点归还给集群）</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_review.py" />
      <source>end the job (nothing keeps running or billing)</source>
      <translation>结束作业（不会有任何内容继续运行或计费）</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/accounts_view.py" />
      <source>endpoint {url}</source>
      <translation>端点 {url}</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/common/job_state.py" />
      <source>estimated start {time}</source>
      <translation>预计 {time} 开始</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/logs_dialog.py" />
      <source>exit code {code}</source>
      <translation>退出码 {code}</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/common/job_state.py" />
      <source>exit {code}</source>
      <translation>退出码 {code}</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/common/advice_text.py" />
      <source>failed</source>
      <translation>失败</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/common/advice_text.py" />
      <source>finished</source>
      <translation>已完成</translation>
    </message>
    <message>
      <location filename="../../../workbench/core/domain/queue_words.py" />
      <source>finished (COMPLETED)</source>
      <translation>已完成 (COMPLETED)</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_storage.py" />
      <source>folder in the bucket, e.g. datasets/imagenet</source>
      <translation>存储桶中的文件夹，例如 datasets/imagenet</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/plugin_texts.py" />
      <source>for clusters whose GRES name no GPU type: partition=Model, e.g. gpu=A100, v100q=V100</source>
      <translation>适用于 GRES 未标明 GPU 类型的集群：分区=型号，例如 gpu=A100, v100q=V100</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/plugin_texts.py" />
      <source>for storage mounts: its path on the login node when it is not on the PATH, e.g. ~/bin/rclone</source>
      <translation>用于存储挂载：当 rclone 不在 PATH 中时，它在登录节点上的路径，例如 ~/bin/rclone</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/stop_all_local.py" />
      <source>free</source>
      <translation>免费</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/offers_model.py" />
      <source>free now: {free} of {total} nodes</source>
      <translation>当前空闲：{free} / {total} 个节点</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_review.py" />
      <source>from {file}</source>
      <translation>来自 {file}</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_storage.py" />
      <source>give the folder on the machine, e.g. data</source>
      <translation>请给出机器上的文件夹，例如 data</translation>
    </message>
    <message>
      <location filename="../../../workbench/core/domain/queue_words.py" />
      <source>held by the cluster's administrators (JobHeldAdmin)</source>
      <translation>被集群管理员挂起 (JobHeldAdmin)</translation>
    </message>
    <message>
      <location filename="../../../workbench/core/domain/queue_words.py" />
      <source>held by you: release it with scontrol release (JobHeldUser)</source>
      <translation>被您挂起：用 scontrol release 释放它 (JobHeldUser)</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/common/advice_text.py" />
      <source>high</source>
      <translation>高</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/common/advice_text.py" />
      <source>hours since start</source>
      <translation>自开始以来的小时数</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_review.py" />
      <source>idle shutdown after {minutes} min below {util} % GPU use</source>
      <translation>GPU 使用率低于 {util} % 持续 {minutes} 分钟后关机</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/instances_model.py" />
      <source>idle {minutes} min</source>
      <translation>空闲 {minutes} 分钟</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/import_notes.py" />
      <source>ignored</source>
      <translation>已忽略</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/remote_access.py" />
      <source>install one (for example xterm) or set the TERMINAL environment variable</source>
      <translation>请安装一个终端程序（例如 xterm），或设置 TERMINAL 环境变量</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/common/advice_text.py" />
      <source>interrupted</source>
      <translation>已中断</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_pages.py" />
      <source>is spent (estimated)</source>
      <translation>（按估算花费）</translation>
    </message>
    <message>
      <location filename="../../../workbench/core/domain/queue_words.py" />
      <source>it asks more CPUs or memory than the partition's nodes have: it will never start (PartitionConfig)</source>
      <translation>它请求的 CPU 或内存超出该分区节点所有：永远不会开始（PartitionConfig）</translation>
    </message>
    <message>
      <location filename="../../../workbench/core/domain/queue_words.py" />
      <source>it asks more nodes than the partition allows: it will never start (PartitionNodeLimit)</source>
      <translation>它要求的节点数超过了分区允许的数量：它永远不会开始 (PartitionNodeLimit)</translation>
    </message>
    <message>
      <location filename="../../../workbench/core/domain/queue_words.py" />
      <source>its deadline passed before it could run (DEADLINE)</source>
      <translation>它在运行之前就已过了截止时间 (DEADLINE)</translation>
    </message>
    <message>
      <location filename="../../../workbench/core/domain/queue_words.py" />
      <source>its start failed; held for an administrator (launch failed requeued held)</source>
      <translation>它启动失败，已挂起等待管理员处理 (launch failed requeued held)</translation>
    </message>
    <message>
      <location filename="../../../workbench/core/domain/queue_words.py" />
      <source>its time limit is beyond the partition's: it will never start (PartitionTimeLimit)</source>
      <translation>它的时间限制超过了分区的上限：它永远不会开始 (PartitionTimeLimit)</translation>
    </message>
    <message>
      <location filename="../../../workbench/core/domain/queue_words.py" />
      <source>its time limit is beyond your QOS's (QOSMaxWallDurationPerJobLimit)</source>
      <translation>它的时间限制超过了您的 QOS 上限 (QOSMaxWallDurationPerJobLimit)</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_review.py" />
      <source>keep the machine running (it bills until a guard or you stop it)</source>
      <translation>保持机器运行（持续计费，直到保护规则或您将其停止）</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/instances_model.py" />
      <source>launch {id}</source>
      <translation>启动任务 {id}</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/common/advice_text.py" />
      <source>launching</source>
      <translation>启动中</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/stop_all_model.py" />
      <source>leftover {kind} {id}</source>
      <translation>残留 {kind} {id}</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/common/format.py" />
      <source>login as {user} to {registry}</source>
      <translation>以 {user} 身份登录 {registry}</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/common/advice_text.py" />
      <source>low</source>
      <translation>低</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/common/controller_confirm.py" />
      <source>machine</source>
      <translation>机器</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/common/job_state.py" />
      <source>machine {state}</source>
      <translation>机器{state}</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/import_notes.py" />
      <source>mapped</source>
      <translation>已映射</translation>
    </message>
    <message>
      <location filename="../../../workbench/core/money/planner.py" />
      <source>may be interrupted at short notice (AWS gives 2 minutes, Azure 30 s); the job must checkpoint and resume, and the price changes over time</source>
      <translation>可能在短时间通知后被中断（AWS 提前 2 分钟，Azure 提前 30 秒）；任务必须保存检查点并能恢复，且价格随时间变化</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/common/advice_text.py" />
      <source>medium</source>
      <translation>中</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/money/spend_view.py" />
      <source>monthly budget {amount}: {used}</source>
      <translation>每月预算 {amount}:{used}</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_watch.py" />
      <source>needs the profile's storage_uri bucket, where the app and the controller meet (Accounts ▸ Edit)</source>
      <translation>需要配置的 storage_uri 存储桶，应用和控制器在那里交换记录（账号 ▸ 编辑）</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_review.py" />
      <source>no GPU</source>
      <translation>无 GPU</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_review.py" />
      <source>no budget</source>
      <translation>无预算</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_watch.py" />
      <source>no controller can be asked here</source>
      <translation>这里无法询问控制器</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_review.py" />
      <source>no fast interconnect</source>
      <translation>无高速互联</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_review.py" />
      <source>no idle shutdown</source>
      <translation>无空闲关机</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/common/format.py" />
      <source>no keyring is running on this computer, so the account's credentials cannot be read (see Accounts)</source>
      <translation>这台电脑上没有运行密钥环，因此无法读取该账户的凭据（见“账户”）</translation>
    </message>
    <message>
      <location filename="../../../workbench/core/domain/queue_words.py" />
      <source>no node has what it asks for (BadConstraints)</source>
      <translation>没有节点满足它的要求 (BadConstraints)</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/offers_model.py" />
      <source>no quota or capacity</source>
      <translation>无配额或容量</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/money/planner_view.py" />
      <source>no rate set</source>
      <translation>未设置汇率</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/instances_model.py" />
      <source>no runtime limit</source>
      <translation>无运行时长上限</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/remote_access.py" />
      <source>no terminal program found</source>
      <translation>未找到终端程序</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/instances_model.py" />
      <source>node {rank}</source>
      <translation>节点 {rank}</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/logs_dialog.py" />
      <source>node {rank} (head)</source>
      <translation>节点 {rank}（主节点）</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/instances_model.py" />
      <source>node {rank} of the launch's {n} machines: Terminate and Stop act on all of them</source>
      <translation>本次启动 {n} 台机器中的节点 {rank}：终止和停止会作用于全部机器</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/controller_panel.py" />
      <source>none</source>
      <translation>无</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/offers_model.py" />
      <source>none (CPU)</source>
      <translation>无（CPU）</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/accounts_view.py" />
      <source>none that can keep secrets safely</source>
      <translation>没有可安全保存机密的密钥环</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/monitor/nodes_overview.py" />
      <source>none yet</source>
      <translation>暂无</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/ports_field.py" />
      <source>none, or e.g. 8888:jupyter, 6006:tensorboard</source>
      <translation>无，或例如 8888:jupyter, 6006:tensorboard</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/image_field.py" />
      <source>none, or e.g. nvcr.io/nvidia/pytorch:24.05-py3</source>
      <translation>无，或例如 nvcr.io/nvidia/pytorch:24.05-py3</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_job_page.py" />
      <source>none: the job is described by the form below</source>
      <translation>无：作业由下方表单描述</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/common/format.py" />
      <source>none: the job runs on the machine itself</source>
      <translation>无：作业直接在机器上运行</translation>
    </message>
    <message>
      <location filename="../../../workbench/core/money/planner.py" />
      <source>not available to this account now</source>
      <translation>此账户当前不可用</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/shell/away_notice.py" />
      <source>not relaunched again after attempt {n}</source>
      <translation>第 {n} 次尝试后不再重新启动</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/controller_panel.py" />
      <source>nothing handed to it</source>
      <translation>没有交给它的启动</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/plugin_texts.py" />
      <source>of the price per GPU-hour (USD unless set)</source>
      <translation>每 GPU 小时价格所用的货币（未设置时为 USD）</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_review.py" />
      <source>off</source>
      <translation>关闭</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_review.py" />
      <source>off: an interrupted spot machine ends the job</source>
      <translation>关闭：竞价机器被中断时作业随之结束</translation>
    </message>
    <message>
      <location filename="../../../workbench/core/providers/price_snapshot.py" />
      <source>on or before {date}</source>
      <translation>不晚于 {date}</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/common/advice_text.py" />
      <source>on-demand</source>
      <translation>按需</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/profile_dialog.py" />
      <source>one key=value per line, provider-specific</source>
      <translation>每行一个 key=value，因云服务商而异</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/plugin_texts.py" />
      <source>only for temporary credentials (ASIA… keys)</source>
      <translation>仅用于临时凭据（ASIA… 密钥）</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_storage.py" />
      <source>or type an address: s3://BUCKET/PREFIX, https://ACCOUNT.blob.core.windows.net/CONTAINER/PREFIX, oss://…</source>
      <translation>或输入地址：s3://BUCKET/PREFIX、https://ACCOUNT.blob.core.windows.net/CONTAINER/PREFIX、oss://…</translation>
    </message>
    <message>
      <location filename="../../../workbench/core/domain/queue_words.py" />
      <source>other jobs are ahead in the queue (Priority)</source>
      <translation>队列中有其他作业排在前面 (Priority)</translation>
    </message>
    <message>
      <location filename="../../../plugins/workbench_slurm/cluster.py" />
      <source>partition {partition} is {state}: jobs wait until it is up</source>
      <translation>分区 {partition} 处于 {state} 状态：作业要等到它恢复后才会运行</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/image_field.py" />
      <source>password from the launch secret</source>
      <translation>密码取自启动密钥</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_review.py" />
      <source>password or token of {user} at {registry}</source>
      <translation>{user} 在 {registry} 的密码或令牌</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/money/spend_view.py" />
      <source>per day ({currency})</source>
      <translation>每天({currency})</translation>
    </message>
    <message>
      <location filename="../../../workbench/core/money/planner.py" />
      <source>per hour: purchase, power and upkeep over the job's {hours:,.0f} h</source>
      <translation>每小时：购置、电费和维护费用分摊到任务的 {hours:,.0f} 小时</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_pages.py" />
      <source>per machine: prices below are for one; the total is for all {n}</source>
      <translation>按台计价：下列价格为单台价格，合计为全部 {n} 台</translation>
    </message>
    <message>
      <location filename="../../../workbench/core/domain/queue_words.py" />
      <source>preempted by a job of higher priority (PREEMPTED)</source>
      <translation>被优先级更高的作业抢占 (PREEMPTED)</translation>
    </message>
    <message>
      <location filename="../../../workbench/core/money/planner.py" />
      <source>preferred: 1 machine instead of {other} for {more:.2f} % more (fewer machines win within {tolerance:.0%}); the cheapest is {provider} {type} × {other}</source>
      <translation>优先：用 1 台机器代替 {other} 台，贵 {more:.2f}%（相差在 {tolerance:.0%} 以内时机器少者优先）；最便宜的是 {provider} {type} × {other}</translation>
    </message>
    <message>
      <location filename="../../../workbench/core/money/planner.py" />
      <source>preferred: {machines} machines instead of {other} for {more:.2f} % more (fewer machines win within {tolerance:.0%}); the cheapest is {provider} {type} × {other}</source>
      <translation>优先：用 {machines} 台机器代替 {other} 台，贵 {more:.2f}%（相差在 {tolerance:.0%} 以内时机器少者优先）；最便宜的是 {provider} {type} × {other}</translation>
    </message>
    <message>
      <location filename="../../../workbench/core/providers/price_snapshot.py" />
      <source>price cache</source>
      <translation>价格缓存</translation>
    </message>
    <message>
      <location filename="../../../plugins/workbench_local/provider.py" />
      <source>profile setting</source>
      <translation>配置文件设置</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/common/controller_confirm.py" />
      <source>public address</source>
      <translation>公网地址</translation>
    </message>
    <message>
      <location filename="../../../workbench/core/money/planner.py" />
      <source>published price: {basis}</source>
      <translation>公布价格：{basis}</translation>
    </message>
    <message>
      <location filename="../../../workbench/core/money/planner.py" />
      <source>purchase {price:,.0f} + power {kw:g} kW × {hours:,.0f} h × {kwh:g}/kWh + upkeep {upkeep:,.0f}/year</source>
      <translation>购置 {price:,.0f} + 电费 {kw:g} kW × {hours:,.0f} 小时 × {kwh:g}/kWh + 维护 {upkeep:,.0f}/年</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/common/job_state.py" />
      <source>queued ({reason})</source>
      <translation>排队中（{reason}）</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/common/job_state.py" />
      <source>queued: {reason}</source>
      <translation>排队中：{reason}</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/plugin_texts.py" />
      <source>rclone on the cluster</source>
      <translation>集群上的 rclone</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/monitor/monitor_poll.py" />
      <source>reconnecting: {m}</source>
      <translation>正在重新连接:{m}</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/common/advice_text.py" />
      <source>recovered</source>
      <translation>已恢复</translation>
    </message>
    <message>
      <location filename="../../../workbench/core/money/planner.py" />
      <source>reference price of {as_of}, not a quote: {servers} server(s) of {per} GPUs at {each:,.0f} each</source>
      <translation>{as_of} 的参考价格，并非报价：{servers} 台 {per} GPU 服务器，每台 {each:,.0f}</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/import_notes.py" />
      <source>refused</source>
      <translation>已拒绝</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_review.py" />
      <source>relaunch after {on}, up to {n} times, on the cheapest allowed offer (while this app, `workbench watch` or the account's controller watches it)</source>
      <translation>发生{on}后，在允许的最便宜的配置上重新启动，最多 {n} 次（需本应用、`workbench watch` 或该账户的控制器在看护）</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/common/advice_text.py" />
      <source>relaunched as attempt {n}</source>
      <translation>已作为第 {n} 次尝试重新启动</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/shell/away_notice.py" />
      <source>relaunched: attempt {n} runs as {id}</source>
      <translation>已重新启动：第 {n} 次尝试以 {id} 运行</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_review.py" />
      <source>reserved 1 year</source>
      <translation>预留 1 年</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_review.py" />
      <source>reserved 3 years</source>
      <translation>预留 3 年</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/shell/main_window.py" />
      <source>retrying in {seconds} s</source>
      <translation>{seconds} 秒后重试</translation>
    </message>
    <message>
      <location filename="../../../workbench/core/domain/queue_words.py" />
      <source>revoked: it runs on another cluster of the federation (REVOKED)</source>
      <translation>已撤回：它在联邦中的另一个集群上运行 (REVOKED)</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/common/advice_text.py" />
      <source>running</source>
      <translation>运行中</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_review.py" />
      <source>savings plan 1 year</source>
      <translation>节省计划 1 年</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_review.py" />
      <source>savings plan 3 years</source>
      <translation>节省计划 3 年</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/plugin_texts.py" />
      <source>shown once when the AccessKey was created; stored in the system keyring only</source>
      <translation>仅在创建 AccessKey 时显示一次；只保存在系统密钥环中</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/plugin_texts.py" />
      <source>shown once when the key was created; stored in the system keyring only</source>
      <translation>仅在创建密钥时显示一次；只保存在系统密钥环中</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/common/format.py" />
      <source>something this app launched there may still be billing</source>
      <translation>本应用在那里启动的某些资源可能仍在计费</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/offers_model.py" />
      <source>speed unknown</source>
      <translation>速度未知</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/common/advice_text.py" />
      <source>spot</source>
      <translation>竞价</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_review.py" />
      <source>spot (cheaper, may be interrupted)</source>
      <translation>竞价（更便宜，可能被中断）</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/common/format.py" />
      <source>starting</source>
      <translation>启动中</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/controller_panel.py" />
      <source>starting (installing the workbench on its machine)</source>
      <translation>正在启动（在它的机器上安装 Workbench）</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/stop_all_model.py" />
      <source>still billing</source>
      <translation>仍在计费</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/monitor/monitor_poll.py" />
      <source>still booting: {m}</source>
      <translation>仍在启动:{m}</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_review.py" />
      <source>stop the machine (its disks still bill)</source>
      <translation>停止机器（其磁盘仍计费）</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/common/advice_text.py" />
      <source>stopped</source>
      <translation>已停止</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/common/format.py" />
      <source>stopped (disks bill)</source>
      <translation>已停止（磁盘计费）</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/common/job_state.py" />
      <source>stopped by a guard</source>
      <translation>已被保护规则停止</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/shell/away_notice.py" />
      <source>stopped by the {guard} guard</source>
      <translation>被 {guard} 守护停止</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/common/job_state.py" />
      <source>stopped by you</source>
      <translation>已由您停止</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/common/job_state.py" />
      <source>stopped, no compute charge (disks still bill)</source>
      <translation>已停机，不收计算费用（磁盘仍计费）</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/common/format.py" />
      <source>stopping</source>
      <translation>停止中</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_review.py" />
      <source>stops after {time}</source>
      <translation>{time}后停止</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/instances_model.py" />
      <source>stops in {left}</source>
      <translation>{left}后停止</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_storage.py" />
      <source>sync</source>
      <translation>同步</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_review.py" />
      <source>sync {path} → {source} every {every}</source>
      <translation>每 {every} 把 {path} 同步到 {source}</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_storage.py" />
      <source>sync: save the folder there while the job runs (checkpoints)</source>
      <translation>同步：作业运行期间把文件夹保存到那里（检查点）</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_review.py" />
      <source>terminate the machine (billing stops)</source>
      <translation>终止机器（停止计费）</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/common/advice_text.py" />
      <source>terminated</source>
      <translation>已终止</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/stop_all_model.py" />
      <source>terminated, verifying…</source>
      <translation>已终止，正在核实…</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/common/format.py" />
      <source>terminating</source>
      <translation>终止中</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/stop_all_model.py" />
      <source>terminating…</source>
      <translation>正在终止…</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_storage.py" />
      <source>that is not a bucket address</source>
      <translation>这不是存储桶地址</translation>
    </message>
    <message>
      <location filename="../../../plugins/workbench_slurm/cluster.py" />
      <source>the GPUs of partition {partition} have no type in Slurm: name their model in the profile's GPU models ({partition}=MODEL, e.g. {partition}=A100)</source>
      <translation>分区 {partition} 的 GPU 在 Slurm 中没有类型：请在配置文件的 GPU 型号中写明它们的型号（{partition}=型号，例如 {partition}=A100）</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/plugin_texts.py" />
      <source>the Slurm account to charge (sbatch --account)</source>
      <translation>计费的 Slurm 账户（sbatch --account）</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/plugin_texts.py" />
      <source>the address you ssh to, e.g. login.hpc.example.edu</source>
      <translation>您 ssh 登录的地址，例如 login.hpc.example.edu</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_job_page.py" />
      <source>the cheapest of</source>
      <translation>以下中最便宜的：</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_pages.py" />
      <source>the cloud machine's disk (billed while the machine exists)</source>
      <translation>云机器的磁盘（机器存在期间计费）</translation>
    </message>
    <message>
      <location filename="../../../workbench/core/domain/queue_words.py" />
      <source>the cluster's prolog script is running (Prolog)</source>
      <translation>集群的 prolog 脚本正在运行 (Prolog)</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/shell/away_notice.py" />
      <source>the controller ended itself: nothing to watch</source>
      <translation>控制器已自行结束：没有可看护的内容</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/shell/away_notice.py" />
      <source>the controller kept watching</source>
      <translation>控制器一直在看护</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/plugin_texts.py" />
      <source>the default partition (empty: the cluster's default)</source>
      <translation>默认分区（留空：使用集群的默认分区）</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_job_page.py" />
      <source>the first with an offer of</source>
      <translation>以下中第一个有报价的：</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/image_field.py" />
      <source>the image's own</source>
      <translation>镜像自带的</translation>
    </message>
    <message>
      <location filename="../../../workbench/core/domain/queue_words.py" />
      <source>the job exited with an error (FAILED)</source>
      <translation>作业出错退出 (FAILED)</translation>
    </message>
    <message>
      <location filename="../../../workbench/core/domain/queue_words.py" />
      <source>the job it depends on failed: it will never start (DependencyNeverSatisfied)</source>
      <translation>它依赖的作业失败了：它永远不会开始 (DependencyNeverSatisfied)</translation>
    </message>
    <message>
      <location filename="../../../workbench/core/domain/queue_words.py" />
      <source>the job ran out of memory (OUT_OF_MEMORY)</source>
      <translation>作业内存不足 (OUT_OF_MEMORY)</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/logs_dialog.py" />
      <source>the job spec names no outputs</source>
      <translation>作业描述未指定任何输出</translation>
    </message>
    <message>
      <location filename="../../../workbench/core/domain/queue_words.py" />
      <source>the job's QOS is not valid (InvalidQOS)</source>
      <translation>作业的 QOS 无效 (InvalidQOS)</translation>
    </message>
    <message>
      <location filename="../../../workbench/core/domain/queue_words.py" />
      <source>the job's account is not valid (InvalidAccount)</source>
      <translation>作业的账户无效 (InvalidAccount)</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/accounts_view.py" />
      <source>the macOS Keychain</source>
      <translation>macOS 钥匙串</translation>
    </message>
    <message>
      <location filename="../../../workbench/core/domain/queue_words.py" />
      <source>the nodes it needs are down, drained or reserved (ReqNodeNotAvail)</source>
      <translation>它需要的节点已宕机、已排空或被预留 (ReqNodeNotAvail)</translation>
    </message>
    <message>
      <location filename="../../../workbench/core/domain/queue_words.py" />
      <source>the partition is down (PartitionDown)</source>
      <translation>分区已停用 (PartitionDown)</translation>
    </message>
    <message>
      <location filename="../../../workbench/core/domain/queue_words.py" />
      <source>the partition is inactive (PartitionInactive)</source>
      <translation>分区处于非活动状态 (PartitionInactive)</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/plugin_texts.py" />
      <source>the subscription to launch in; Test lists the ones this identity may use (empty: the only one it sees)</source>
      <translation>在其中启动的订阅；测试会列出此身份可使用的订阅（留空：它能看到的唯一订阅）</translation>
    </message>
    <message>
      <location filename="../../../workbench/core/domain/queue_words.py" />
      <source>the time limit was reached (TIMEOUT)</source>
      <translation>已达到时间限制 (TIMEOUT)</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/plugin_texts.py" />
      <source>the whole key file, no passphrase; kept in the keyring (empty: the app's own key)</source>
      <translation>完整的密钥文件，无口令；保存在系统密钥环中（留空：使用本应用自己的密钥）</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/watch_actions.py" />
      <source>this cloud has no controller</source>
      <translation>此云没有控制器</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/money/planner_view.py" />
      <source>total for the job ({currency})</source>
      <translation>作业总成本（{currency}）</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/money/planner_view.py" />
      <source>total for the job ({currency}, converted at your rate)</source>
      <translation>作业总成本（{currency}，按您的汇率换算）</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/money/planner_view.py" />
      <source>total for the job ({currency}, other currencies ≈ at the reference rate {rate:g} CNY per USD: set yours beside “Show in”)</source>
      <translation>作业总成本（{currency}，其他货币按参考汇率 1 USD ≈ {rate:g} CNY 换算：可在“显示为”旁填写您的汇率）</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/accounts_view.py" />
      <source>unavailable: no plugin provides it</source>
      <translation>不可用：没有插件提供它</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/accounts_view.py" />
      <source>unavailable: {reason}</source>
      <translation>不可用：{reason}</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/credentials_form.py" />
      <source>unchanged (stored in the keyring)</source>
      <translation>未更改（已保存在密钥环中）</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/accounts_view.py" />
      <source>unknown</source>
      <translation>未知</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/common/format.py" />
      <source>unknown (may bill)</source>
      <translation>未知（可能计费）</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/accounts_view.py" />
      <source>unknown reason</source>
      <translation>原因未知</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/controller_panel.py" />
      <source>unknown: {reason}</source>
      <translation>未知：{reason}</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_storage.py" />
      <source>uploaded to your account's bucket when you launch</source>
      <translation>启动时上传到你账户的存储桶</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/image_field.py" />
      <source>user name</source>
      <translation>用户名</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/offers_model.py" />
      <source>vCPUs</source>
      <translation>vCPU</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_review.py" />
      <source>value of {name}</source>
      <translation>{name} 的值</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/stop_all_model.py" />
      <source>verified gone</source>
      <translation>已核实清除</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/remote_access.py" />
      <source>wait until it is running, then try again</source>
      <translation>请等待其运行后再试</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/stop_all_model.py" />
      <source>waiting</source>
      <translation>等待中</translation>
    </message>
    <message>
      <location filename="../../../workbench/core/domain/queue_words.py" />
      <source>waiting for GPUs or nodes to become free (Resources)</source>
      <translation>正在等待 GPU 或节点空闲 (Resources)</translation>
    </message>
    <message>
      <location filename="../../../workbench/core/domain/queue_words.py" />
      <source>waiting for a license (Licenses)</source>
      <translation>正在等待许可证 (Licenses)</translation>
    </message>
    <message>
      <location filename="../../../workbench/core/domain/queue_words.py" />
      <source>waiting for another job to finish (Dependency)</source>
      <translation>正在等待另一个作业结束 (Dependency)</translation>
    </message>
    <message>
      <location filename="../../../workbench/core/domain/queue_words.py" />
      <source>waiting for its reservation to start (Reservation)</source>
      <translation>正在等待它的预留开始 (Reservation)</translation>
    </message>
    <message>
      <location filename="../../../workbench/core/domain/queue_words.py" />
      <source>waiting for its start time (BeginTime)</source>
      <translation>正在等待它的开始时间 (BeginTime)</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/instances_model.py" />
      <source>watched by the controller</source>
      <translation>由控制器看护</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/plugin_texts.py" />
      <source>what a GPU-hour costs you where the cluster charges; empty: free (your cluster)</source>
      <translation>集群收费时每 GPU 小时的费用；留空：免费（您的集群）</translation>
    </message>
    <message>
      <location filename="../../../workbench/core/domain/queue_words.py" />
      <source>you already run as many jobs as your QOS allows (QOSMaxJobsPerUserLimit)</source>
      <translation>您运行的作业数已达到您的 QOS 上限 (QOSMaxJobsPerUserLimit)</translation>
    </message>
    <message>
      <location filename="../../../workbench/core/domain/queue_words.py" />
      <source>you already use as many GPUs as your QOS allows (QOSMaxGRESPerUser)</source>
      <translation>您使用的 GPU 数已达到您的 QOS 上限 (QOSMaxGRESPerUser)</translation>
    </message>
    <message>
      <location filename="../../../workbench/core/money/planner.py" />
      <source>you keep the hardware afterwards (resale not counted)</source>
      <translation>硬件之后仍归你所有（未计入转售价值）</translation>
    </message>
    <message>
      <location filename="../../../workbench/core/money/planner.py" />
      <source>you pay for the whole {years}-year savings plan commitment ({paid:,.0f} h) even though the job needs {hours:,.0f} h</source>
      <translation>即使任务只需 {hours:,.0f} 小时，也要支付整个 {years} 年节省计划承诺（{paid:,.0f} 小时）</translation>
    </message>
    <message>
      <location filename="../../../workbench/core/money/planner.py" />
      <source>you pay for the whole {years}-year term ({paid:,.0f} h) even though the job needs {hours:,.0f} h</source>
      <translation>即使任务只需 {hours:,.0f} 小时，也要支付整个 {years} 年期限（{paid:,.0f} 小时）</translation>
    </message>
    <message>
      <location filename="../../../workbench/core/domain/queue_words.py" />
      <source>your QOS's group already uses all the GPUs it may (QOSGrpGRES)</source>
      <translation>您的 QOS 所在组已用完允许的全部 GPU (QOSGrpGRES)</translation>
    </message>
    <message>
      <location filename="../../../workbench/core/domain/queue_words.py" />
      <source>your QOS's limits are reached (QOSResourceLimit)</source>
      <translation>已达到您的 QOS 限额 (QOSResourceLimit)</translation>
    </message>
    <message>
      <location filename="../../../workbench/core/domain/queue_words.py" />
      <source>your account already runs as many jobs as it may (AssocMaxJobsLimit)</source>
      <translation>您的账户运行的作业数已达上限 (AssocMaxJobsLimit)</translation>
    </message>
    <message>
      <location filename="../../../workbench/core/domain/queue_words.py" />
      <source>your account already uses all the CPUs it may (AssocGrpCPULimit)</source>
      <translation>您的账户已用完允许的全部 CPU (AssocGrpCPULimit)</translation>
    </message>
    <message>
      <location filename="../../../workbench/core/domain/queue_words.py" />
      <source>your account already uses all the GPUs it may (AssocGrpGRES)</source>
      <translation>您的账户已用完允许的全部 GPU (AssocGrpGRES)</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/plugin_texts.py" />
      <source>your account name on the cluster</source>
      <translation>您在集群上的账户名</translation>
    </message>
    <message>
      <location filename="../../../workbench/core/domain/queue_words.py" />
      <source>your account's allocation of GPU time is used up (AssocGrpGRESMinutes)</source>
      <translation>您账户分配的 GPU 时间已用完 (AssocGrpGRESMinutes)</translation>
    </message>
    <message>
      <location filename="../../../workbench/core/domain/queue_words.py" />
      <source>your account's allocation of compute time is used up (AssocGrpBillingMinutes)</source>
      <translation>您账户分配的计算时间已用完 (AssocGrpBillingMinutes)</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/offers_model.py" />
      <source>your cluster</source>
      <translation>您的集群</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_review.py" />
      <source>your cluster: its profile sets no hourly rate</source>
      <translation>您的集群：其配置文件未设置每小时费率</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/accounts_view.py" />
      <source>your desktop's keyring (GNOME Keyring, KWallet or KeePassXC)</source>
      <translation>桌面的密钥环（GNOME 密钥环、KWallet 或 KeePassXC）</translation>
    </message>
    <message>
      <location filename="../../../workbench/core/money/planner.py" />
      <source>your figures</source>
      <translation>你的数字</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/money/planner_view.py" />
      <source>your own hardware</source>
      <translation>您自己的硬件</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/monitor/run_report.py" />
      <source>{advice} · prices from the bundled catalogue snapshots</source>
      <translation>{advice} · 价格来自内置的价格目录快照</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/monitor/nodes_overview.py" />
      <source>{age} ago</source>
      <translation>{age}前</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_review.py" />
      <source>{cost} if it runs the full {time} ({n} machines × {price}/h × {hours} h)</source>
      <translation>若运行满 {time}，费用为 {cost}（{n} 台 × {price}/小时 × {hours} 小时）</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_review.py" />
      <source>{cost} if it runs the full {time} ({price}/h × {hours} h)</source>
      <translation>若运行满 {time}，费用为 {cost}（{price}/小时 × {hours} 小时）</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/stop_all.py" />
      <source>{count} billable resource(s) remain:</source>
      <translation>{count} 个计费资源剩余：</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/instances_view.py" />
      <source>{count} billing · {rate}/h</source>
      <translation>{count} 个计费中 · {rate}/小时</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/shell/badge.py" />
      <source>{count} billing · {rate}/h · {today} today</source>
      <translation>{count} 个计费中 · {rate}/小时 · 今日 {today}</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/stop_all.py" />
      <source>{count} leftover(s) without a known price are not in the total.</source>
      <translation>{count} 个价格未知的残留资源未计入总额。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/shell/quit_guard.py" />
      <source>{count} machine(s) are still billing {rate}/h.</source>
      <translation>{count} 台机器仍在计费，{rate}/小时。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/instances_view.py" />
      <source>{count} machine(s) stopped; their disks are kept.</source>
      <translation>已停止 {count} 台机器；磁盘已保留。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_pages.py" />
      <source>{count} matching offers, {usable} can be chosen.</source>
      <translation>{count} 个匹配报价，其中 {usable} 个可选。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/prices/compare_view.py" />
      <source>{count} offers from {clouds}; cheapest {price}/h: {provider} {type} in {region}.</source>
      <translation>来自 {clouds} 的 {count} 个报价；最便宜 {price}/小时：{provider} {type}（{region}）。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/prices/compare_view.py" />
      <source>{count} offers.</source>
      <translation>{count} 个报价。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/monitor/run_report.py" />
      <source>{count} pieces of advice</source>
      <translation>{count} 条建议</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/shell/badge.py" />
      <source>{count} running here</source>
      <translation>{count} 个在本机运行</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/accounts_view.py" />
      <source>{count} running, {rate}/h</source>
      <translation>{count} 台运行中，{rate}/小时</translation>
    </message>
    <message>
      <location filename="../../../workbench/core/providers/price_snapshot.py" />
      <source>{date}</source>
      <translation>{date}</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/money/spend_view.py" />
      <source>{display}, as the provider prices it</source>
      <translation>{display}，按云服务商的计价</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/money/spend_view.py" />
      <source>{display}; amounts in {others} are not converted (no rate set)</source>
      <translation>{display}；{others} 金额未换算（未设置汇率）</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/money/spend_view.py" />
      <source>{display}; {others} converted at your rate of {rate} CNY per USD</source>
      <translation>{display}；{others} 按您设置的汇率 {rate} 人民币/美元换算</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/common/format.py" />
      <source>{d} d {h} h</source>
      <translation>{d} 天 {h} 小时</translation>
    </message>
    <message>
      <location filename="../../../workbench/core/money/planner.py" />
      <source>{got} GPUs ({more} more than asked)</source>
      <translation>{got} 个 GPU（比要求多 {more} 个）</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/money/planner_view.py" />
      <source>{gpus}× {gpu} for {hours} h: cheapest is {option} at {total} ({where}).</source>
      <translation>{gpus}× {gpu} 使用 {hours} 小时：最便宜的是{option}，{total}（{where}）。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/common/advice_text.py" />
      <source>{h} h {m:02d} min</source>
      <translation>{h} 小时 {m:02d} 分钟</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/common/advice_text.py" />
      <source>{idle} of {total} GPUs stayed near 0% ({gpus}): the job uses {used}. Ask for {used} GPUs, or make the job use all of them (for example torchrun --nproc_per_node={per_node}).</source>
      <translation>{total} 块 GPU 中有 {idle} 块一直接近 0%（{gpus}）：作业只用到 {used} 块。请只申请 {used} 块 GPU，或让作业用上全部 GPU（例如 torchrun --nproc_per_node={per_node}）。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/common/advice_text.py" />
      <source>{idle} of {total} GPUs stayed near 0% ({gpus}): the job uses {used}. {offer} has {offer_gpus} {model} GPUs for {offer_price}/h instead of {price}/h.</source>
      <translation>{total} 块 GPU 中有 {idle} 块一直接近 0%（{gpus}）：作业只用到 {used} 块。{offer} 有 {offer_gpus} 块 {model} GPU，每小时 {offer_price}，而不是 {price}。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/runtime/controller_hook.py" />
      <source>{id} is watched by the controller of {profile}, also while this computer is off.</source>
      <translation>{id} 由 {profile} 的控制器看护，本机关机时也一样。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/runtime/controller_hook.py" />
      <source>{id} is watched by this app again (while it runs).</source>
      <translation>{id} 重新由本应用看护（在它运行期间）。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/watch_actions.py" />
      <source>{id}: {error}</source>
      <translation>{id}：{error}</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/credentials_form.py" />
      <source>{label} (optional)</source>
      <translation>{label}（可选）</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/stop_all.py" />
      <source>{launch} is starting on {profile}: the teardown waits for it, then ends it</source>
      <translation>{launch} 正在 {profile} 上启动：清理会等待它启动完成，然后将其结束</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/runtime/guard_loop.py" />
      <source>{launch} keeps running; end it with Terminate when you are done.</source>
      <translation>{launch} 保持运行;用完后请点击“终止”结束它。</translation>
    </message>
    <message>
      <location filename="../../../workbench/core/money/planner.py" />
      <source>{machines} machines: the job must train across machines</source>
      <translation>{machines} 台机器：任务必须跨机器训练</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/credentials_form.py" />
      <source>{message}
What to do: {hint}</source>
      <translation>{message}
解决方法：{hint}</translation>
    </message>
    <message>
      <location filename="../../../workbench/core/money/planner.py" />
      <source>{more:.2f} % cheaper than {provider} {type} × {machines}, but needs {other} machines</source>
      <translation>比 {provider} {type} × {machines} 便宜 {more:.2f}%，但需要 {other} 台机器</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/runtime/session.py" />
      <source>{name} failed with exit code {code}.</source>
      <translation>{name} 失败，退出码为 {code}。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/runtime/session.py" />
      <source>{name} finished (exit code 0).</source>
      <translation>{name} 已完成（退出码 0）。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/remote_access.py" />
      <source>{name} has no address yet</source>
      <translation>{name} 尚无地址</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/accounts_view.py" />
      <source>{name} has not been checked yet</source>
      <translation>{name} 尚未检查</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/monitor/monitor_view.py" />
      <source>{name} is not running ({state}) and no readings were recorded while it ran.</source>
      <translation>{name} 未在运行（{state}），运行期间没有记录任何读数。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/monitor/monitor_view.py" />
      <source>{name} is not running ({state}): showing its recorded history.</source>
      <translation>{name} 未在运行（{state}）：显示其已记录的历史。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_wizard.py" />
      <source>{name} is running on {where}.</source>
      <translation>{name} 正在 {where} 上运行。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/runtime/session.py" />
      <source>{name} is running.</source>
      <translation>{name} 正在运行。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/runtime/session.py" />
      <source>{name} is {state} and may still bill.</source>
      <translation>{name} 处于{state}状态，可能仍在计费。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/monitor/monitor_view.py" />
      <source>{name} is {state}. Readings start when it runs.</source>
      <translation>{name} {state}。它开始运行后才有读数。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/extend_dialog.py" />
      <source>{name} now runs until {end} (max runtime {minutes} min); projected cost {cost}.</source>
      <translation>{name} 现在运行到 {end}（最长运行时间 {minutes} 分钟）；预计费用 {cost}。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_wizard.py" />
      <source>{name} was created on {where} and is still starting.</source>
      <translation>{name} 已在 {where} 上创建，仍在启动中。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/instances_model.py" />
      <source>{name} · attempt {n}</source>
      <translation>{name} · 第 {n} 次尝试</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/money/spend_view.py" />
      <source>{name} · attempt {n} of {root}</source>
      <translation>{name} · {root} 的第 {n} 次尝试</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/instances_model.py" />
      <source>{name} · {n} machines · node 0</source>
      <translation>{name} · {n} 台机器 · 节点 0</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/monitor/monitor_view.py" />
      <source>{name} — {provider}/{profile} · {type} · {state}</source>
      <translation>{name} — {provider}/{profile} · {type} · {state}</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/accounts_view.py" />
      <source>{name}: plugin {target} from {dist} {version}</source>
      <translation>{name}：插件 {target}，来自 {dist} {version}</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/accounts_view.py" />
      <source>{name}: {reason}</source>
      <translation>{name}：{reason}</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/accounts_view.py" />
      <source>{name}: {result}</source>
      <translation>{name}：{result}</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/offers_model.py" />
      <source>{network}: no fast interconnect</source>
      <translation>{network}：无高速互联</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_review.py" />
      <source>{n} GB</source>
      <translation>{n} GB</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/monitor/monitor_plots.py" />
      <source>{n} MB</source>
      <translation>{n} MB</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/shell/away_notice.py" />
      <source>{n} attempts cost {cost}</source>
      <translation>{n} 次尝试花费 {cost}</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_storage.py" />
      <source>{n} buckets: choose one, or type an address.</source>
      <translation>{n} 个存储桶：选择一个，或输入地址。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/shell/away_notice.py" />
      <source>{n} failed</source>
      <translation>{n} 个失败</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/shell/away_notice.py" />
      <source>{n} finished</source>
      <translation>{n} 个完成</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/shell/away_notice.py" />
      <source>{n} gave up</source>
      <translation>{n} 个放弃</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/offers_model.py" />
      <source>{n} machines talk over this network: without RDMA (InfiniBand, EFA) or 100 Gbps, multi-node training waits on it</source>
      <translation>{n} 台机器通过此网络通信：没有 RDMA（InfiniBand、EFA）或 100 Gbps，多节点训练会受网络拖累</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_review.py" />
      <source>{n} machines, each {machine}; placed close together, {network}</source>
      <translation>{n} 台机器，每台 {machine}；彼此靠近放置，{network}</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/common/advice_text.py" />
      <source>{n} min</source>
      <translation>{n} 分钟</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/shell/away_notice.py" />
      <source>{n} relaunched</source>
      <translation>{n} 个重新启动</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/common/advice_text.py" />
      <source>{n} s</source>
      <translation>{n} 秒</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/shell/away_notice.py" />
      <source>{n} stopped by a guard</source>
      <translation>{n} 个被守护停止</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_review.py" />
      <source>{n}× {model} for {hours} h. Reserved terms are paid in full even when the job is shorter; spot may be interrupted. Compare with buying the hardware under Prices ▸ Plan a job's cost.</source>
      <translation>{n}× {model},共 {hours} 小时。预留期限即使任务更短也要全额支付;竞价实例可能被中断。可在“价格 ▸ 规划作业成本”中与购买硬件比较。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/stop_all_model.py" />
      <source>{price}/h</source>
      <translation>{price}/小时</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/common/controller_confirm.py" />
      <source>{price}/h all-in</source>
      <translation>{price}/小时（全包）</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts/mfa.py" />
      <source>{profile} needs the six-digit code your MFA device shows now.</source>
      <translation>{profile} 需要您的 MFA 设备当前显示的六位验证码。</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/offers_model.py" />
      <source>{provider} (no account)</source>
      <translation>{provider}（无账户）</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_review.py" />
      <source>{provider} / {profile}, cluster {region}</source>
      <translation>{provider} / {profile}，集群 {region}</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_review.py" />
      <source>{provider} / {profile}, region {region}</source>
      <translation>{provider} / {profile}，区域 {region}</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_wizard.py" />
      <source>{provider} / {profile}, {region}</source>
      <translation>{provider} / {profile}，{region}</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/prices/compare_view.py" />
      <source>{provider}: not updated ({error})</source>
      <translation>{provider}：未更新（{error}）</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/prices/compare_view.py" />
      <source>{provider}: {rows} prices as of {date}</source>
      <translation>{provider}：{rows} 个价格，截至 {date}</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/money/spend_view.py" />
      <source>{p} % of the monthly budget</source>
      <translation>已用每月预算的 {p} %</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/money/spend_view.py" />
      <source>{p} % of {amount}</source>
      <translation>{amount} 的 {p} %</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/monitor/monitor_plots.py" />
      <source>{series} (of {total})</source>
      <translation>{series}（共 {total}）</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_review.py" />
      <source>{size} in {n} files</source>
      <translation>{n} 个文件，共 {size}</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_review.py" />
      <source>{term}: {price} per hour per machine, {total} for all {n} · prices: {source}, {date}</source>
      <translation>{term}：每台每小时 {price}，{n} 台合计 {total} · 价格：{source}，{date}</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_review.py" />
      <source>{term}: {price} per hour · prices: {source}, {date}</source>
      <translation>{term}：每小时 {price} · 价格来源：{source}，{date}</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/stop_all_local.py" />
      <source>{thing} on {cluster} — {state} · no charge</source>
      <translation>{thing}，位于 {cluster} — {state} · 不收费</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/stop_all.py" />
      <source>{thing} on {where}, {price}</source>
      <translation>{thing}，位于 {where}，{price}</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/instances/stop_all_local.py" />
      <source>{thing}, {cost}</source>
      <translation>{thing}，{cost}</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/common/controller_confirm.py" />
      <source>{type} in {region}, {price}/h all-in:</source>
      <translation>{type}，位于 {region}，{price}/小时（全包）：</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_review.py" />
      <source>{type}: {gpus}, {cpus} vCPUs, {ram} GB RAM</source>
      <translation>{type}：{gpus}，{cpus} 个 vCPU，{ram} GB 内存</translation>
    </message>
    <message>
      <location filename="../../../workbench/core/money/planner.py" />
      <source>{years}-year savings plan commitment</source>
      <translation>{years} 年节省计划承诺</translation>
    </message>
    <message>
      <location filename="../../../workbench/core/money/planner.py" />
      <source>{years}-year term</source>
      <translation>{years} 年期限</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_wizard.py" />
      <source>• machine {id} ({type}, {region}), {state}, {price}/h</source>
      <translation>• 机器 {id}（{type}，{region}），{state}，{price}/小时</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_wizard.py" />
      <source>• {kind} {id} ({region})</source>
      <translation>• {kind} {id}（{region}）</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/common/controller_confirm.py" />
      <source>• {part} ({what}): {price}/h — {source}, {date}</source>
      <translation>• {part}（{what}）：{price}/小时 — {source}，{date}</translation>
    </message>
    <message>
      <location filename="../../../workbench/core/money/planner.py" />
      <source>− resale {resale:,.0f}</source>
      <translation>− 转售 {resale:,.0f}</translation>
    </message>
    <message>
      <location filename="../../../workbench/ui/launch/launch_wizard.py" />
      <source>✓ Nothing was left behind: nothing of this launch is billing.</source>
      <translation>✓ 没有残留资源：此启动任务已无任何计费。</translation>
    </message>
  </context>
</TS>
