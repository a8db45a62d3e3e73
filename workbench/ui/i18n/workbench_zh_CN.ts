<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="zh_CN" sourcelanguage="en">
  <context>
    <name>Workbench</name>
    <message>
      <location filename="../../../workbench/ui/instances_model.py" />
      <source>$/h</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/main_window.py" />
      <source>&amp;About</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts_view.py" />
      <source>&amp;Add profile…</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/credentials_form.py" />
      <source>&amp;Advanced</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/main_window.py" />
      <source>&amp;Appearance</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/instances_view.py" />
      <source>&amp;Billable only</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/launch_job_page.py" />
      <source>&amp;Command:</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/instances_view.py" />
      <source>&amp;Copy SSH command</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/launch_job_page.py" />
      <source>&amp;Disk:</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts_view.py" />
      <source>&amp;Edit…</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/spend_view.py" />
      <source>&amp;Export CSV…</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/main_window.py" />
      <source>&amp;File</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/logs_dialog.py" />
      <source>&amp;Follow</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/launch_job_page.py" />
      <source>&amp;GPU model:</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/main_window.py" />
      <source>&amp;Help</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/main_window.py" />
      <source>&amp;Keep running and quit</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/main_window.py" />
      <source>&amp;Language (after restart)</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/instances_view.py" />
      <source>&amp;Logs</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/main_window.py" />
      <source>&amp;Machines</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/launch_job_page.py" />
      <source>&amp;Min. GPU memory:</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/instances_view.py" />
      <source>&amp;Monitor</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/credentials_form.py" />
      <source>&amp;Name:</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/main_window.py" />
      <source>&amp;New launch…</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/launch_job_page.py" />
      <source>&amp;Open job spec…</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/credentials_form.py" />
      <source>&amp;Provider:</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/main_window.py" />
      <source>&amp;Quit</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/main_window.py" />
      <source>&amp;Refresh</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/credentials_form.py" />
      <source>&amp;Region:</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts_view.py" />
      <source>&amp;Remove</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/credentials_form.py" />
      <source>&amp;Save</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/main_window.py" />
      <source>&amp;Settings</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/main_window.py" />
      <source>&amp;Tear everything down</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts_view.py" />
      <source>&amp;Test</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/credentials_form.py" />
      <source>&amp;Test credentials</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/main_window.py" />
      <source>&amp;View</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/instances_model.py" />
      <source>(spot)</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/launch_job_page.py" />
      <source>A GPU job needs at least 1 GPU (choose 'None' for a CPU-only machine).</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/credentials_form.py" />
      <source>A profile name uses only letters, digits, '.', '_' and '-', starts with a letter or digit, and has at most 63 characters.</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/credentials_form.py" />
      <source>A profile named {name} already exists.</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/main_window.py" />
      <source>About Cloud GPU Workbench</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/main_window.py" />
      <source>Accounts</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/credentials_form.py" />
      <source>Add profile</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/instances_model.py" />
      <source>Address: {host}</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/launch_job_page.py" />
      <source>Any GPU</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/main_window.py" />
      <source>Ask every provider what is running</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/offers_model.py" />
      <source>Availability</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/instances_model.py" />
      <source>Billing now at {rate}</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/launch_job_page.py" />
      <source>C&amp;lear</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/spend_view.py" />
      <source>CSV files (*.csv)</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/credentials_form.py" />
      <source>Cancel</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/offers_model.py" />
      <source>Cannot be chosen: {note}</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/dialogs.py" />
      <source>Cloud GPU Workbench</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/main_window.py" />
      <source>Cloud GPU Workbench {version}
Rent GPU machines, watch them train, stop the bill with one click.</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/tray.py" />
      <source>Cloud GPU Workbench — {count} billable · {rate}/h</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/launch_view.py" />
      <source>Coming soon</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/instances_view.py" />
      <source>Copied</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/instances_view.py" />
      <source>Copy SSH command</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/credentials_form.py" />
      <source>Credentials</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/credentials_form.py" />
      <source>Credentials work: {display} ({principal}) in account {account}</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/credentials_form.py" />
      <source>Credentials work: {principal} in account {account}</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/main_window.py" />
      <source>Dark</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/credentials_form.py" />
      <source>Edit profile {name}</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/credentials_form.py" />
      <source>Endpoint URL:</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/credentials_form.py" />
      <source>Enter a name for the profile.</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/credentials_form.py" />
      <source>Enter {field}.</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/spend_view.py" />
      <source>Estimates: price × billable seconds from each provider's price list.</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/spend_view.py" />
      <source>Export spend</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/spend_view.py" />
      <source>Exported</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/instances_view.py" />
      <source>Filter by name, provider, region, type, state…</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/main_window.py" />
      <source>Follow the system</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/launch_job_page.py" />
      <source>Forget the opened spec and start from a blank form</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/launch_job_page.py" />
      <source>GPU c&amp;ount:</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/offers_model.py" />
      <source>GPU memory</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/instances_model.py" />
      <source>GPUs</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/launch_job_page.py" />
      <source>Give the command that runs the job.</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/launch_job_page.py" />
      <source>Give the job a name.</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/instances_model.py" />
      <source>Guards</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/main_window.py" />
      <source>If you keep them running, the guards installed on each machine still stop it at its max runtime or when its GPUs sit idle. Local jobs on this computer keep running too.</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts_view.py" />
      <source>Install it with: {command}</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/main_window.py" />
      <source>Instances</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/launch_job_page.py" />
      <source>Job</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/launch_job_page.py" />
      <source>Job spec:</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/main_window.py" />
      <source>Job specs (*.yaml *.yml)</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/launch_job_page.py" />
      <source>Job specs (*.yaml *.yml);;All files (*)</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts_view.py" />
      <source>Keyring: checking…</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/main_window.py" />
      <source>Launch</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/main_window.py" />
      <source>Launch a job from a YAML spec</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/credentials_form.py" />
      <source>Letters, digits, '.', '_' and '-'; machines launched with this profile are tracked under this name, so it cannot be changed later.</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/main_window.py" />
      <source>Light</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/logs_dialog.py" />
      <source>Logs from cloud machines stream here once the job runs there.</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/logs_dialog.py" />
      <source>Logs — {name}</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/main_window.py" />
      <source>Machines are still billing</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/main_window.py" />
      <source>Main toolbar</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/main_window.py" />
      <source>Monitor</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/instances_model.py" />
      <source>Name</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/instances_view.py" />
      <source>No SSH for this machine (it runs on this computer or has no address yet)</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/dialogs.py" />
      <source>No capacity</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/instances_view.py" />
      <source>No machines yet. Start one from Launch (Ctrl+N) — the quick example runs a short job on this computer for free.</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/logs_dialog.py" />
      <source>No output yet.</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/credentials_form.py" />
      <source>No provider is available; install a provider plugin first.</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/spend_view.py" />
      <source>No spend recorded yet.</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/launch_job_page.py" />
      <source>None (CPU only)</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/spend_view.py" />
      <source>Now {rate}/h · today {today} · this month {month}</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/offers_model.py" />
      <source>On-demand $/h</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/credentials_form.py" />
      <source>Only for private or test endpoints (https://…).</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/logs_dialog.py" />
      <source>Open &amp;folder</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/main_window.py" />
      <source>Open &amp;log file</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/instances_view.py" />
      <source>Open &amp;terminal</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/launch_job_page.py" />
      <source>Open job spec</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/dialogs.py" />
      <source>Open log file</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/offers_model.py" />
      <source>Price source</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts_view.py" />
      <source>Profile {name} of {provider}</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/spend_view.py" />
      <source>Projected (max runtime)</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts_view.py" />
      <source>Provider / profile</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/dialogs.py" />
      <source>Quota exceeded</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/offers_model.py" />
      <source>RAM</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts_view.py" />
      <source>Re&amp;move…</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/credentials_form.py" />
      <source>Reading the stored values from the keyring…</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/main_window.py" />
      <source>Refresh failed: {error}</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/main_window.py" />
      <source>Refreshing…</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts_view.py" />
      <source>Region</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts_view.py" />
      <source>Remove profile</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts_view.py" />
      <source>Remove profile {name} ({provider})? No machines are running under it. Its credentials are deleted from the keyring.</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts_view.py" />
      <source>Remove profile {name} ({provider})? {count} machine(s) launched with it are still running at {rate}/h. Removing the profile does not stop them: they keep billing and can no longer be managed here. Stop them first.</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts_view.py" />
      <source>Removed profile {name}.</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts_view.py" />
      <source>Removing profile {name}…</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts_view.py" />
      <source>Running</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts_view.py" />
      <source>Saved profile {name}.</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/credentials_form.py" />
      <source>Saved.</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/credentials_form.py" />
      <source>Saving…</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/credentials_form.py" />
      <source>Secret fields are saved only in the system keyring, never in a file.</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts_view.py" />
      <source>Secrets are kept in the system keyring: {backend}</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/credentials_form.py" />
      <source>Settings line {line} is not key=value.</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/credentials_form.py" />
      <source>Settings:</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/credentials_form.py" />
      <source>Show</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/tray.py" />
      <source>Show Cloud GPU Workbench</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/credentials_form.py" />
      <source>Show or hide what was typed</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/dialogs.py" />
      <source>Something went wrong</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/main_window.py" />
      <source>Spend</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/spend_view.py" />
      <source>Spend could not be computed: {error}</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/instances_model.py" />
      <source>Spend so far</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/spend_view.py" />
      <source>Spent</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/offers_model.py" />
      <source>Spot $/h</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/main_window.py" />
      <source>Start a job on this computer or a cloud GPU</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/spend_view.py" />
      <source>Started</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/instances_model.py" />
      <source>State</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts_view.py" />
      <source>Status</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/instances_view.py" />
      <source>Still billing</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/main_window.py" />
      <source>Stop all billing</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/main_window.py" />
      <source>System default</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/instances_view.py" />
      <source>Te&amp;rminate…</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/instances_view.py" />
      <source>Terminate</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/main_window.py" />
      <source>Terminate every machine and delete every leftover, then verify</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/instances_view.py" />
      <source>Terminate {count} machine(s), stopping {rate}/h?</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/instances_view.py" />
      <source>Terminated</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/instances_view.py" />
      <source>Terminating</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/credentials_form.py" />
      <source>Testing the credentials…</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts_view.py" />
      <source>Testing {name}…</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/dialogs.py" />
      <source>The credentials were refused</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/credentials_form.py" />
      <source>The endpoint URL must start with https:// or http://.</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/launch_job_page.py" />
      <source>The job spec has an error (see above): fix the file and open it again, or clear it.</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/main_window.py" />
      <source>The language changes when the app is restarted.</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/launch_job_page.py" />
      <source>The name may use letters, digits, '_', '.' and '-' (up to 63), starting with a letter or digit.</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/dialogs.py" />
      <source>The provider is not answering right now</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts_view.py" />
      <source>The system keyring cannot be used, so cloud credentials can be neither saved nor read.
{reason}</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/instances_view.py" />
      <source>Their disks and addresses are deleted too. This cannot be undone.</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/dialogs.py" />
      <source>This is a bug; the log file has the details.</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/offers_model.py" />
      <source>This job pays {price} per hour ({term})</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/credentials_form.py" />
      <source>This provider needs no credentials.</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/instances_model.py" />
      <source>Type</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/credentials_form.py" />
      <source>Type a region, or run Test to list the provider's regions.</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/dialogs.py" />
      <source>Unexpected error</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/main_window.py" />
      <source>Up to date</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/instances_model.py" />
      <source>Uptime</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/launch_job_page.py" />
      <source>Use &amp;spot capacity (cheaper, may be interrupted)</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/instances_view.py" />
      <source>Verified: nothing of it is billing any more.</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/main_window.py" />
      <source>What everything billing costs now, and what today cost so far</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/dialogs.py" />
      <source>What to do:</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/launch_job_page.py" />
      <source>What to run: open a job spec (YAML) or fill in the form.</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/launch_job_page.py" />
      <source>any</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts_view.py" />
      <source>available</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/instances_model.py" />
      <source>budget {used} %</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts_view.py" />
      <source>built in</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts_view.py" />
      <source>built in; always available</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/remote_access.py" />
      <source>could not start {program}</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/instances_model.py" />
      <source>deallocated</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/credentials_form.py" />
      <source>default endpoint of the provider</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/launch_job_page.py" />
      <source>e.g. python3 train.py --epochs 10</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/launch_job_page.py" />
      <source>e.g. train-resnet</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts_view.py" />
      <source>endpoint {url}</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/instances_model.py" />
      <source>exit {code}</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/instances_model.py" />
      <source>idle {minutes} min</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/remote_access.py" />
      <source>install one (for example xterm) or set the TERMINAL environment variable</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/instances_model.py" />
      <source>launch {id}</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/offers_model.py" />
      <source>no quota or capacity</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/instances_model.py" />
      <source>no runtime limit</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/remote_access.py" />
      <source>no terminal program found</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/instances_model.py" />
      <source>none</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/offers_model.py" />
      <source>none (CPU)</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/launch_job_page.py" />
      <source>none: the job is described by the form below</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/offers_model.py" />
      <source>on-demand</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/credentials_form.py" />
      <source>one key=value per line, provider-specific</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/spend_view.py" />
      <source>per day</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/main_window.py" />
      <source>retrying in {seconds} s</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/instances_model.py" />
      <source>running</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/offers_model.py" />
      <source>spot</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/instances_model.py" />
      <source>starting</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/instances_model.py" />
      <source>stopped (disks bill)</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/instances_model.py" />
      <source>stopping</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/instances_model.py" />
      <source>stops in {left}</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/instances_model.py" />
      <source>terminated</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/instances_model.py" />
      <source>terminating</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts_view.py" />
      <source>unavailable: no plugin provides it</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts_view.py" />
      <source>unavailable: {reason}</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/credentials_form.py" />
      <source>unchanged (stored in the keyring)</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts_view.py" />
      <source>unknown</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/instances_model.py" />
      <source>unknown (may bill)</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts_view.py" />
      <source>unknown reason</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/offers_model.py" />
      <source>vCPUs</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/remote_access.py" />
      <source>wait until it is running, then try again</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/instances_view.py" />
      <source>{count} billable · {rate}/h</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/main_window.py" />
      <source>{count} billable · {rate}/h · {today} today</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/main_window.py" />
      <source>{count} machine(s) are still billing {rate}/h.</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts_view.py" />
      <source>{count} running, {rate}/h</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/format.py" />
      <source>{d} d {h} h</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/format.py" />
      <source>{h} h {m:02d} min</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/credentials_form.py" />
      <source>{label} (optional)</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/credentials_form.py" />
      <source>{message}
What to do: {hint}</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/remote_access.py" />
      <source>{name} has no address yet</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts_view.py" />
      <source>{name}: plugin {target} from {dist} {version}</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts_view.py" />
      <source>{name}: {reason}</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/accounts_view.py" />
      <source>{name}: {result}</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/offers_model.py" />
      <source>{n} GB</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/format.py" />
      <source>{n} min</source>
      <translation type="unfinished" />
    </message>
    <message>
      <location filename="../../../workbench/ui/format.py" />
      <source>{n} s</source>
      <translation type="unfinished" />
    </message>
  </context>
</TS>
