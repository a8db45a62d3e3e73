"""Launch against the ARM test server: what gets created (checked on the server), spot, failures that leave
nothing, capacity fallback across zones and regions, quota, the guard's identity, cancel."""

from __future__ import annotations

import base64
import threading
import time

import pytest
import yaml

from workbench.core.domain.errors import AuthError, CapacityError, ConfigError, QuotaError, TransientError
from workbench.core.domain.models import Guards, InstanceState, JobSpec, Resources
from workbench.core.providers.contract import TAG_LAUNCH, TAG_MANAGED, TAG_OWNER
from workbench.core.providers.sshkeys import ensure_keypair
from workbench_azure.launch import Cancelled

CONTRIBUTOR = "b24988ac-6180-42a0-ab88-20f7382dd24c"


def _by_type(resources):
    return {r["type"]: r for r in resources}


def test_launch_creates_a_tagged_group_with_a_locked_down_vm(arm, account, provider, request_for, install_id):
    req = request_for(provider, "Standard_NC24ads_A100_v4",
                      spec=JobSpec(name="train", run="python3 train.py", guards=Guards(max_runtime_minutes=120),
                                   resources=Resources(disk_gb=200)))
    [inst] = provider.launch(req)
    group = f"wb-{req.launch_id}"
    # the instance the app shows
    assert inst.state == InstanceState.RUNNING and inst.launch_id == req.launch_id and inst.region == "eastus"
    assert inst.price_per_hour == 3.673 and inst.currency == "USD" and not inst.spot
    assert (inst.gpu_model, inst.gpu_count) == ("A100", 1) and inst.name == "train"
    assert inst.extra["ssh_user"] == "azureuser" and inst.extra["resource_group"] == group
    assert inst.extra["zone"] is None and inst.extra["spot"] is False
    res = _by_type(arm.resources(account.subscription, group))
    pip = res["Microsoft.Network/publicIPAddresses"]
    assert inst.host == pip["properties"]["ipAddress"] and pip["sku"]["name"] == "Standard"
    assert pip["properties"]["publicIPAllocationMethod"] == "Static"
    # every resource (and the group) carries the three tags
    [g] = [g for g in arm.groups(account.subscription) if g["name"] == group]
    assert g["location"] == "eastus"
    want = {TAG_MANAGED: "true", TAG_LAUNCH: req.launch_id, TAG_OWNER: install_id}
    for r in [g, *(r for r in res.values() if r["type"] != "Microsoft.Authorization/roleAssignments")]:
        assert want.items() <= r["tags"].items(), r["type"]
    # SSH only from the profile's address
    [rule] = res["Microsoft.Network/networkSecurityGroups"]["properties"]["securityRules"]
    p = rule["properties"]
    assert (p["sourceAddressPrefix"], p["destinationPortRange"], p["access"], p["direction"], p["protocol"]) == (
        "203.0.113.7/32", "22", "Allow", "Inbound", "Tcp")
    nic = res["Microsoft.Network/networkInterfaces"]
    assert nic["properties"]["enableAcceleratedNetworking"] is True
    assert nic["properties"]["ipConfigurations"][0]["properties"]["publicIPAddress"]["properties"]["deleteOption"] == "Delete"
    # the VM: the app's key, our custom data, deleteOption Delete, identity, no spot
    vm = res["Microsoft.Compute/virtualMachines"]
    vp = vm["properties"]
    assert vp["hardwareProfile"]["vmSize"] == "Standard_NC24ads_A100_v4" and "priority" not in vp
    assert vp["storageProfile"]["osDisk"]["deleteOption"] == "Delete"
    assert vp["storageProfile"]["osDisk"]["diskSizeGB"] == 200
    assert vp["storageProfile"]["imageReference"]["offer"] == "ubuntu-hpc"
    assert vp["networkProfile"]["networkInterfaces"][0]["properties"]["deleteOption"] == "Delete"
    key = ensure_keypair(provider.context.data_dir).public_openssh
    [k] = vp["osProfile"]["linuxConfiguration"]["ssh"]["publicKeys"]
    assert k == {"path": "/home/azureuser/.ssh/authorized_keys", "keyData": key}
    assert vp["osProfile"]["linuxConfiguration"]["disablePasswordAuthentication"] is True
    cloud = base64.b64decode(vm["_custom_data"]).decode()
    doc = yaml.safe_load(cloud)
    assert cloud.startswith("#cloud-config")
    files = {f["path"]: f for f in doc["write_files"]}
    assert req.launch_id in files["/var/lib/workbench/launch.json"]["content"]
    assert "/opt/workbench/guard/workbench_guard.py" in files  # the instance-side guard
    assert f'"resource_group": "{group}"' in files["/etc/workbench/guard.json"]["content"]
    assert account.secret not in cloud
    assert vm["identity"]["type"] == "SystemAssigned"
    disk = res["Microsoft.Compute/disks"]
    assert disk["properties"]["encryption"]["type"] == "EncryptionAtRestWithPlatformKey"
    # encryption at host is not enabled on this subscription: the VM was created without it, and says so
    assert inst.extra["disk_encryption"] == "platform-managed keys"
    # the guard may delete its own group, and only that
    ra = res["Microsoft.Authorization/roleAssignments"]
    assert ra["properties"]["principalId"] == vm["identity"]["principalId"]
    assert ra["properties"]["scope"].lower() == f"/subscriptions/{account.subscription}/resourcegroups/{group}".lower()
    assert ra["properties"]["roleDefinitionId"].endswith(CONTRIBUTOR)
    # a second line: auto-shutdown (it deallocates) after the max runtime
    sched = res["Microsoft.DevTestLab/schedules"]
    assert sched["name"] == "shutdown-computevm-wb-vm" and sched["properties"]["targetResourceId"].endswith("/wb-vm")
    assert inst.extra["auto_shutdown_utc"] == sched["properties"]["dailyRecurrence"]["time"]
    due = time.gmtime(time.time() + 125 * 60)
    assert sched["properties"]["dailyRecurrence"]["time"] in {time.strftime("%H%M", due),
                                                              time.strftime("%H%M", time.gmtime(time.time() + 124 * 60))}


def test_spot_launch_with_a_price_cap_and_encryption_at_host(arm, account, make_provider, request_for):
    arm.state.config(account.subscription).features.add("Microsoft.Compute/EncryptionAtHost")
    prov = make_provider(zones="auto")
    spec = JobSpec(name="cheap", run="x", resources=Resources(spot=True, max_price=1.5))
    req = request_for(prov, "Standard_NC4as_T4_v3", spot=True, spec=spec)
    [inst] = prov.launch(req)
    vm = arm.vm(account.subscription, f"wb-{req.launch_id}")
    vp = vm["properties"]
    assert (vp["priority"], vp["evictionPolicy"], vp["billingProfile"]["maxPrice"]) == ("Spot", "Delete", 1.5)
    assert vp["securityProfile"] == {"encryptionAtHost": True}
    assert vm["zones"] == ["1"] and inst.extra["zone"] == "1"
    assert inst.spot and inst.price_per_hour == req.offer.prices.spot and inst.extra["disk_encryption"].endswith(
        "encryption at host")
    # no cap: maxPrice -1 (pay up to the on-demand price, never evicted for price)
    req2 = request_for(prov, "Standard_NC4as_T4_v3", spot=True)
    prov.launch(req2)
    assert arm.vm(account.subscription, f"wb-{req2.launch_id}")["properties"]["billingProfile"]["maxPrice"] == -1


def _nothing_left(arm, account, launch_id):
    assert not [g for g in arm.groups(account.subscription) if g["name"] == f"wb-{launch_id}"]
    assert not [r for r in arm.resources(account.subscription) if launch_id in str(r.get("tags"))]


@pytest.mark.parametrize(("fault", "error", "text"), [
    (dict(path=r"/networkinterfaces/wb-nic$", method="PUT", status=500, times=-1), TransientError, "network interface"),
    (dict(path=r"/roleassignments/", method="PUT", status=403, code="AuthorizationFailed",
          message="The client 'x' with object id 'y' does not have authorization to perform action "
                  "'Microsoft.Authorization/roleAssignments/write' over scope 'z' or the scope is invalid."),
     AuthError, "Microsoft.Authorization/roleAssignments/write"),
    (dict(path=r"/virtualmachines/wb-vm$", method="PUT", code="OSProvisioningTimedOut", in_operation=True, times=-1,
          message="OS Provisioning for VM 'wb-vm' did not finish in the allotted time."), Exception, "OSProvisioning"),
])
def test_a_failure_mid_launch_leaves_nothing(arm, account, provider, request_for, fault, error, text):
    arm.add_fault(sub=account.subscription, **fault)
    req = request_for(provider)
    with pytest.raises(error) as info:
        provider.launch(req)
    assert text in str(info.value)
    _nothing_left(arm, account, req.launch_id)
    assert provider.instances() == [] and provider.leftovers() == []


def test_allocation_failure_tries_the_next_zone_then_the_next_region(arm, account, make_provider, request_for):
    cfg = arm.state.config(account.subscription)
    cfg.no_capacity |= {("eastus", "Standard_ND96asr_v4", "2")}
    prov = make_provider(zones="auto", regions="eastus,westus2")
    [inst] = prov.launch(request_for(prov, "Standard_ND96asr_v4"))
    assert (inst.region, inst.extra["zone"]) == ("eastus", "3")
    # no capacity anywhere in eastus: on to the region the job allows next, at that region's price
    cfg.no_capacity |= {("eastus", "Standard_ND96asr_v4", "3")}
    spec = JobSpec(name="big", run="x", regions=("eastus", "westus2"))
    req = request_for(prov, "Standard_ND96asr_v4", spec=spec)
    [inst] = prov.launch(req)
    assert inst.region == "westus2" and inst.extra["zone"] == "1" and inst.price_per_hour == 27.197
    [g] = [g for g in arm.groups(account.subscription) if g["name"] == f"wb-{req.launch_id}"]
    assert g["location"] == "westus2"
    assert {r["location"] for r in arm.resources(account.subscription, g["name"])
            if r["type"] != "Microsoft.Authorization/roleAssignments"} == {"westus2"}
    failed = [s for s in arm.seen if s.sub == account.subscription and s.method == "DELETE"
              and s.path.endswith("/wb-vm") and s.status == 202]
    assert len(failed) == 3  # each failed attempt's VM was deleted before the next try


def test_no_capacity_anywhere_is_a_capacity_error_and_leaves_nothing(arm, account, make_provider, request_for):
    arm.state.config(account.subscription).no_capacity.add(("eastus", "Standard_NC6s_v3", "*"))
    prov = make_provider()
    req = request_for(prov, "Standard_NC6s_v3")
    with pytest.raises(CapacityError, match="AllocationFailed") as info:
        prov.launch(req)
    assert "regions:" in info.value.hint
    _nothing_left(arm, account, req.launch_id)


def test_quota_is_a_quota_error_with_a_hint_and_leaves_nothing(arm, account, provider, request_for):
    req = request_for(provider, "Standard_NC64as_T4_v3")
    arm.state.config(account.subscription).quotas[("eastus", "standardNCASv3_T4Family")] = 8
    with pytest.raises(QuotaError, match="standardNCASv3_T4Family") as info:
        provider.launch(req)
    assert "quota increase" in info.value.hint
    _nothing_left(arm, account, req.launch_id)


def test_a_new_identity_not_yet_replicated_is_retried(arm, account, provider, request_for):
    arm.state.config(account.subscription).principal_delay = 2
    req = request_for(provider)
    provider.launch(req)
    puts = [s.status for s in arm.seen if s.sub == account.subscription and "roleassignments" in s.path.lower()]
    assert puts == [400, 400, 201]


def test_a_launch_that_crashed_half_way_is_completed_not_duplicated(arm, account, provider, request_for):
    req = request_for(provider)
    group = f"wb-{req.launch_id}"
    # what a process killed mid-launch leaves: the tagged group and its NSG, no VM
    clients = provider._clients
    clients.resources.resource_groups.create_or_update(group, {"location": "eastus", "tags": dict(req.tags)})
    clients.network.network_security_groups.begin_create_or_update(group, "wb-nsg", {
        "location": "eastus", "tags": dict(req.tags), "properties": {"securityRules": []}}).result()
    [first] = provider.launch(req)
    [again] = provider.launch(req)
    assert first.instance_id == again.instance_id and first.state == InstanceState.RUNNING
    res = arm.resources(account.subscription, group)
    assert [r["type"] for r in res].count("Microsoft.Compute/virtualMachines") == 1
    [nsg] = [r for r in res if r["type"] == "Microsoft.Network/networkSecurityGroups"]
    assert nsg["properties"]["securityRules"][0]["properties"]["destinationPortRange"] == "22"  # completed


def test_a_group_of_the_same_name_from_another_install_is_not_taken_over(arm, account, provider, request_for):
    req = request_for(provider)
    provider._clients.resources.resource_groups.create_or_update(
        f"wb-{req.launch_id}", {"location": "eastus", "tags": {TAG_OWNER: "someone-else"}})
    with pytest.raises(ConfigError, match="not created by this install"):
        provider.launch(req)
    assert [g for g in arm.groups(account.subscription) if g["name"] == f"wb-{req.launch_id}"]  # left alone


def test_cancel_rolls_the_launch_back(arm, account, provider, request_for):
    cfg = arm.state.config(account.subscription)
    req = request_for(provider)
    cfg.hold = True  # every long-running operation now waits
    outcome: list[BaseException] = []

    def run() -> None:
        try:
            provider.launch(req)
        except BaseException as exc:  # noqa: BLE001 - handed to the test thread
            outcome.append(exc)

    t = threading.Thread(target=run)
    t.start()
    deadline = time.monotonic() + 10
    while not [s for s in arm.seen if s.sub == account.subscription and s.method == "PUT"] and time.monotonic() < deadline:
        time.sleep(0.02)
    assert provider.cancel_launch(req.launch_id)
    cfg.hold = False  # let the rollback's own deletion run
    t.join(20)
    assert not t.is_alive() and outcome and isinstance(outcome[0], Cancelled)
    _nothing_left(arm, account, req.launch_id)
    assert not provider.cancel_launch(req.launch_id)  # nothing in flight any more


def test_a_size_withdrawn_after_the_offers_were_listed_is_a_capacity_error(arm, account, provider, request_for):
    req = request_for(provider, "Standard_NC6s_v3")  # offers (and the size list) are now cached
    arm.state.config(account.subscription).restricted[("eastus", "Standard_NC6s_v3")] = {
        "type": "Location", "values": ["eastus"], "restrictionInfo": {"locations": ["eastus"]},
        "reasonCode": "NotAvailableForSubscription"}
    with pytest.raises(CapacityError, match="SkuNotAvailable"):
        provider.launch(req)
    _nothing_left(arm, account, req.launch_id)
