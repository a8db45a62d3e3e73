"""Profile settings, sign-in and identity: service principal against our Entra token endpoint, Azure CLI, clouds."""

from __future__ import annotations

import pytest

from workbench.core.domain.errors import AuthError, ConfigError
from workbench.core.domain.models import Profile
from workbench.core.providers.contract import ProviderContext
from workbench_azure.provider import AzureProvider
from workbench_azure.settings import CONTRIBUTOR_ROLE, parse


def _profile(**settings: str) -> Profile:
    return Profile("p", "azure", None, settings={"tenant_id": "t1", "client_id": "c1", **settings})


def test_public_and_china_clouds_have_their_own_endpoints():
    pub = parse(_profile())
    assert (pub.arm_endpoint, pub.authority_host, pub.scope) == (
        "https://management.azure.com", "login.microsoftonline.com", "https://management.azure.com/.default")
    assert pub.regions == ("eastus",) and pub.prices_url == "https://prices.azure.com/api/retail/prices"
    cn = parse(_profile(cloud="china"))
    assert (cn.arm_endpoint, cn.authority_host, cn.portal_url) == (
        "https://management.chinacloudapi.cn", "login.chinacloudapi.cn", "https://portal.azure.cn")
    assert cn.regions == ("chinanorth3",) and cn.prices_url is None
    assert cn.scope == "https://management.chinacloudapi.cn/.default"
    custom = parse(_profile(cloud="custom", arm_endpoint="https://arm.example/", authority_host="https://login.example",
                            regions="eastus, westus2", zones="auto", currency="cny"))
    assert custom.arm_endpoint == "https://arm.example" and custom.regions == ("eastus", "westus2")
    assert custom.zone_choices(("1", "2")) == ["1", "2"] and custom.currency == "CNY"
    assert pub.zone_choices(("1", "2")) == [None] and pub.guard_role_id == CONTRIBUTOR_ROLE
    # tenant and client may come from the credential form instead of the settings
    assert parse(Profile("p", "azure", None), {"tenant_id": "t9", "client_id": "c9"}).tenant_id == "t9"


@pytest.mark.parametrize(("settings", "message"), [
    ({"cloud": "mars"}, "cloud must be one of"),
    ({"cloud": "custom"}, "needs arm_endpoint and authority_host"),
    ({"cloud": "custom", "arm_endpoint": "http://x", "authority_host": "https://y"}, "https://"),
    ({"ssh_cidr": "0.0.0.0/0"}, "whole internet"),
    ({"ssh_cidr": "not-an-ip"}, "not an address"),
    ({"regions": "East US"}, "not an Azure region"),
    ({"subscription_id": "nope"}, "must be a GUID"),
    ({"image": "a:b:c"}, "publisher:offer:sku:version"),
    ({"zones": "4"}, "zones must be"),
    ({"auto_shutdown": "25:00"}, "auto_shutdown"),
    ({"ssh_user": "root"}, "not allowed"),
    ({"retry_total": "many"}, "retry_total must be a number"),
    ({"tenant_id": ""}, "tenant_id missing"),
])
def test_bad_settings_name_the_key(settings, message):
    with pytest.raises(ConfigError, match=message):
        parse(_profile(**settings))


def test_ssh_from_anywhere_needs_the_explicit_flag():
    assert parse(_profile(ssh_cidr="0.0.0.0/0", allow_ssh_from_anywhere="true")).ssh_cidr == "0.0.0.0/0"
    assert parse(_profile(ssh_cidr="203.0.113.7")).ssh_cidr == "203.0.113.7/32"


def test_check_credentials_signs_in_and_names_the_subscription(provider, account):
    identity = provider.check_credentials()
    assert identity.account == account.subscription and identity.principal == account.client_id
    assert "Workbench Test" in identity.display and "custom cloud" in identity.display


@pytest.mark.parametrize(("who", "message"), [
    ("secret", "client secret was rejected (AADSTS7000215)"),
    ("tenant", "tenant was not found"),
    ("client", "not an application in this tenant (AADSTS700016)"),
])
def test_sign_in_failures_name_the_cause_never_the_secret(make_provider, account, who, message):
    wrong = "not-the-secret-0123456789"
    kwargs = {"secret": wrong} if who == "secret" else {}
    if who == "tenant":
        kwargs["tenant_id"] = "00000000-0000-0000-0000-00000000dead"
    if who == "client":
        kwargs["client_id"] = "00000000-0000-0000-0000-00000000beef"
    prov = make_provider(**kwargs)
    with pytest.raises(AuthError) as info:
        prov.check_credentials()
    text = f"{info.value.message} {info.value.hint}"
    assert message in text
    assert wrong not in text and account.secret not in text


def test_no_secret_stored_says_how_to_store_one(make_provider):
    with pytest.raises(AuthError, match="no client secret stored") as info:
        make_provider(secret="").check_credentials()
    assert "workbench credentials set azure" in info.value.hint


def test_identity_without_a_role_anywhere_or_on_the_chosen_subscription(arm, make_provider, account):
    lonely = arm.new_account()
    arm.state.clients[(lonely.tenant, lonely.client_id)].subscriptions = ()
    with pytest.raises(AuthError, match="no role on any subscription"):
        make_provider(acct=lonely).check_credentials()
    with pytest.raises(AuthError, match="no role on subscription") as info:
        make_provider(acct=account, subscription_id="11111111-2222-3333-4444-555555555555").check_credentials()
    assert account.subscription in info.value.hint  # the ones it can use are listed


def test_several_subscriptions_need_a_choice(arm, make_provider, account):
    other = "22222222-3333-4444-5555-666666666666"
    arm.state.add_subscription(other, account.tenant, "Second")
    client = arm.state.clients[(account.tenant, account.client_id)]
    client.subscriptions = (account.subscription, other)
    prov = make_provider(subscription_id="")
    with pytest.raises(ConfigError, match="sees 2 subscriptions") as info:
        prov.check_credentials()
    assert other in info.value.hint and "Second" in info.value.hint
    assert make_provider(subscription_id=other).check_credentials().account == other


def test_missing_role_action_is_named(arm, make_provider):
    reader = arm.new_account(actions=("Microsoft.Resources/subscriptions/read",))
    with pytest.raises(AuthError) as info:
        make_provider(acct=reader).check_credentials()
    assert "Microsoft.Resources/subscriptions/resourceGroups/read" in info.value.message
    assert "azure-custom-role.json" in info.value.hint


def test_azure_cli_sign_in_without_az_is_an_auth_error(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))  # no `az` here
    prov = AzureProvider(Profile("cli", "azure", None, settings={"auth": "cli"}), {},
                         ProviderContext(install_id="i", data_dir=tmp_path))
    with pytest.raises(AuthError, match="Azure CLI sign-in is not available") as info:
        prov.check_credentials()
    assert "az login" in info.value.hint


def test_console_links_need_no_network(provider, account):
    from workbench.core.domain.models import Instance, InstanceState, Resource

    vm = (f"/subscriptions/{account.subscription}/resourceGroups/wb-x/providers/Microsoft.Compute/"
          "virtualMachines/wb-vm")
    inst = Instance("azure", "p", vm, "x", "eastus", "Standard_NC6s_v3", InstanceState.RUNNING)
    assert provider.console_url(inst) == f"https://portal.azure.com/#@{account.tenant}/resource{vm}/overview"
    rg = Resource("azure", "p", f"/subscriptions/{account.subscription}/resourceGroups/wb-x", "resource_group", "eastus")
    assert provider.console_url(rg).endswith("/resourceGroups/wb-x/overview")
    cn = AzureProvider(Profile("cn", "azure", None, settings={"cloud": "china", "auth": "cli"}), {},
                       ProviderContext("i", provider.context.data_dir))
    assert cn.console_url(inst).startswith("https://portal.azure.cn/#resource/subscriptions/")


def test_a_token_arm_no_longer_accepts_is_an_auth_error(arm, provider):
    provider.check_credentials()
    with arm.state.lock:
        arm.state.tokens.clear()  # e.g. revoked, or signed for another audience
    with pytest.raises(AuthError, match="did not accept the sign-in"):
        provider.instances()


def test_importing_the_plugin_loads_no_azure_sdk():
    import subprocess
    import sys

    code = ("import sys, workbench_azure.provider as p; p.AzureProvider.credential_fields; "
            "print(sorted(m for m in sys.modules if m == 'azure' or m.startswith(('azure.', 'msal', 'requests'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and out.stdout.strip() == "[]", out.stdout + out.stderr


def test_error_mapping_scrubs_secrets_and_keeps_azure_s_code():
    from azure.core.exceptions import HttpResponseError, ServiceRequestError

    from workbench.core.domain.errors import PluginError, TransientError
    from workbench_azure.errors import map_error

    secret = "very-secret-value-123"
    err = map_error(HttpResponseError(message=f"(InvalidParameter) bad value {secret}"), "creating a VM", [secret])
    assert isinstance(err, PluginError) and "InvalidParameter" in err.message and secret not in err.message
    net = map_error(ServiceRequestError("[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed"), "listing")
    assert isinstance(net, TransientError) and "ca_bundle" in net.hint


def test_ssh_address_override_is_read_and_checked():
    assert parse(_profile()).ssh_address is None
    assert parse(_profile(ssh_address="me@127.0.0.1:2222")).ssh_address == ("127.0.0.1", 2222, "me")
    with pytest.raises(ConfigError, match="ssh_address"):
        parse(_profile(ssh_address="host:99999"))
