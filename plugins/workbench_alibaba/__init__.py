"""Alibaba Cloud (ECS) provider plugin: GPU instances on the China and international sites, priced in CNY.

The Alibaba Cloud SDKs (``pip install 'cloud-gpu-workbench[alibaba]'``) are imported on the first
call only; without them the plugin still loads, and its calls say which extra to install.
"""
