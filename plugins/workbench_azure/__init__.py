"""Azure provider plugin: GPU VMs through azure-mgmt-compute/network/resource and azure-identity.

Nothing here imports an Azure SDK at module import time; the SDKs are
imported inside the functions that use them, so listing plugins costs nothing.
"""
