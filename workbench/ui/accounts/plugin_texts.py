"""The in-tree plugins' own words (form labels, help, provider names) in the UI language.

Plugins are plain Python without Qt, so their labels are English.  The texts of the clouds this
app ships are marked here so they reach the translation catalogue; :func:`plugin_text` shows one
translated when it is known, and any other plugin's text as the plugin wrote it.
"""

from __future__ import annotations

from workbench.ui.i18n import N_, tr

KNOWN = frozenset({
    # Local
    N_("This computer"),
    # AWS
    N_("Access key ID"), N_("an IAM user's key (AKIA…); leave empty to use a named profile instead"),
    N_("Secret access key"), N_("shown once when the key was created; stored in the system keyring only"),
    N_("Session token"), N_("only for temporary credentials (ASIA… keys)"),
    N_("Named profile (AWS config / SSO)"),
    N_("a profile from ~/.aws/config, e.g. for IAM Identity Center (SSO) sign-in"),
    # Azure
    N_("Tenant ID"), N_("Directory (tenant) ID of the app registration; or tenant_id= in the profile settings"),
    N_("Client ID"), N_("Application (client) ID of the service principal; or client_id= in the settings"),
    N_("Client secret"), N_("The secret's Value; not needed with auth=cli (your `az login`)"),
    N_("Subscription"),
    N_("the subscription to launch in; Test lists the ones this identity may use (empty: the only one it sees)"),
    # Alibaba Cloud
    N_("AccessKey ID"),
    N_("a RAM user's AccessKey ID (LTAI…); leave empty to use an Alibaba Cloud CLI profile"),
    N_("AccessKey secret"), N_("shown once when the AccessKey was created; stored in the system keyring only"),
    N_("Alibaba Cloud CLI profile"),
    N_("a profile name from ~/.aliyun/config.json (aliyun configure) instead of an AccessKey"),
    # Slurm (the user's cluster)
    N_("Slurm cluster"),
    N_("Login node"), N_("the address you ssh to, e.g. login.hpc.example.edu"),
    N_("User"), N_("your account name on the cluster"),
    N_("SSH port"), N_("22 unless your cluster says otherwise"),
    N_("Partition"), N_("the default partition (empty: the cluster's default)"),
    N_("Account"), N_("the Slurm account to charge (sbatch --account)"),
    N_("QOS"), N_("a quality of service (sbatch --qos)"),
    N_("Price per GPU-hour"), N_("what a GPU-hour costs you where the cluster charges; empty: free (your cluster)"),
    N_("Currency"), N_("of the price per GPU-hour (USD unless set)"),
    N_("GPU models by partition"),
    N_("for clusters whose GRES name no GPU type: partition=Model, e.g. gpu=A100, v100q=V100"),
    N_("rclone on the cluster"),
    N_("for storage mounts: its path on the login node when it is not on the PATH, e.g. ~/bin/rclone"),
    N_("Private key"),
    N_("the whole key file, no passphrase; kept in the keyring (empty: the app's own key)"),
    N_("Log in with"),
    N_("app (its own key), keyring (the stored private key) or agent (ssh-agent); "
       "empty: keyring if a key is stored"),
    N_("Jump host"), N_("a bastion to go through, user@host:port (empty: connect directly)"),
})


def plugin_text(text: str) -> str:
    """``text`` in the UI language when it is one of the in-tree plugins' words, else as it is."""
    return tr(text) if text in KNOWN else text
