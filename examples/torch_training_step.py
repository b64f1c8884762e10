"""Your training step as an asyncbench workload: a PyTorch MLP, its optimizer and its data on the device.

The five-line form: a function that sets up and returns the callable that
issues one step. asyncbench runs `steps` steps per sample with a wait for
the device every k steps (`sync_every`), and reports for each k the time per
step and its slowdown against never waiting, plus the illusion: how much a
timer without a sync under-reports the step.

    asyncbench run examples/torch-training-step.yaml            # cpu, and cuda where there is one
    asyncbench run -w examples/torch_training_step.py:training_step -b torch -d cuda
"""

import asyncbench
from asyncbench import INT, Param


@asyncbench.step(
    params=(
        Param("batch", INT, 512, "rows per minibatch", quick=64, minimum=1, maximum=1_000_000),
        Param("width", INT, 1024, "hidden width of the MLP", quick=256, minimum=1, maximum=65_536),
    ),
    sync_every=(0, 8, 1),
)
def training_step(backend, device, params):
    """One SGD step of a 3-layer MLP (PyTorch): forward, MSE loss, backward, optimizer step."""
    import torch
    from torch import nn

    if backend.name != "torch":
        raise TypeError("this example trains with torch.nn: run it with -b torch")
    width, batch = params["width"], params["batch"]
    model = nn.Sequential(nn.Linear(width, width), nn.ReLU(), nn.Linear(width, width), nn.ReLU(), nn.Linear(width, 1)).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    inputs = torch.randn(batch, width, device=device)
    targets = torch.randn(batch, 1, device=device)

    def step():
        optimizer.zero_grad(set_to_none=True)
        loss = nn.functional.mse_loss(model(inputs), targets)
        loss.backward()
        optimizer.step()
        return loss  # not .item(): that would wait for the device on every step

    return step
