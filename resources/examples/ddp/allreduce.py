"""A few steps of data-parallel training across nodes, plus an all_reduce every rank checks.

Started by torchrun on every node (see ../ddp-local-2nodes.yaml): torchrun gives each process
RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR and MASTER_PORT.  Runs on CPUs (gloo) or GPUs (nccl).
"""

import os

import torch
import torch.distributed as dist


def main() -> None:
    backend = "nccl" if torch.cuda.is_available() else "gloo"
    dist.init_process_group(backend)
    rank, world = dist.get_rank(), dist.get_world_size()
    device = torch.device("cuda", int(os.environ.get("LOCAL_RANK", 0))) if backend == "nccl" else torch.device("cpu")
    if backend == "nccl":
        torch.cuda.set_device(device)

    # every rank contributes rank + 1: the sum is world * (world + 1) / 2 everywhere
    value = torch.tensor([float(rank + 1)], device=device)
    dist.all_reduce(value)
    expected = world * (world + 1) / 2
    if value.item() != expected:
        raise SystemExit(f"rank {rank}: all_reduce gave {value.item()}, expected {expected}")

    # a tiny model trained data-parallel: gradients are averaged across every node
    torch.manual_seed(0)
    model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(16, 1).to(device))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(int(os.environ.get("STEPS", "5"))):
        x = torch.randn(32, 16, device=device) + rank
        loss = ((model(x) - 1.0) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    weights = model.module.weight.detach().clone()
    dist.all_reduce(weights)  # identical replicas: the sum is world times each one
    same = torch.allclose(weights / world, model.module.weight.detach(), atol=1e-6)
    node = os.environ.get("WORKBENCH_NODE_RANK", "?")
    print(f"rank {rank}/{world} on node {node}: all_reduce={value.item():g} ok, "
          f"replicas in sync={same}, loss={loss.item():.4f}", flush=True)
    dist.destroy_process_group()
    if not same:
        raise SystemExit(f"rank {rank}: replicas diverged")


if __name__ == "__main__":
    main()
