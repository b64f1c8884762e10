"""A data-pipeline step as an asyncbench workload, in the full (class) form.

Each step prepares a batch on the host (NumPy: normalize, random crop and
flip), copies it to the device and runs the model's first layer on it. The
variants take it apart: `prepare` (host work alone), `copy` (the copy of a
ready batch alone) and `step` (all three). The metrics say how much of the
step the host-side preparation and the copy take; with the three clocks, the
`step` variant's issue time shows whether the host work hides behind the
device's (on a GPU) or simply adds to it (on a CPU).

    asyncbench run examples/data-pipeline.yaml
"""

from typing import Any, Mapping

from asyncbench import INT, Metric, Param, Prepared, Workload

PREPARE, COPY, STEP = "prepare", "copy", "step"


class DataPipeline(Workload):
    name = "data_pipeline"
    summary = "host-side batch preparation (NumPy) + a copy to the device + the first layer, and each part alone"
    params = (
        Param("batch", INT, 256, "images per batch", quick=32, minimum=1, maximum=100_000),
        Param("side", INT, 64, "image side (pixels); 3 channels", quick=32, minimum=8, maximum=4096),
        Param("steps", INT, 8, "batches per sample", quick=3, minimum=1, maximum=100_000),
    )
    variants = (PREPARE, COPY, STEP)
    metrics = (
        Metric("prepare_share", "%", "prepare done time / step done time: the host's part of the step"),
        Metric("copy_share", "%", "copy done time / step done time"),
        Metric("batches_per_s", "", "batches per second through the whole step"),
    )

    def setup(self, backend: Any, device: str, params: Mapping[str, Any]) -> Prepared:
        import numpy
        import torch

        if backend.name != "torch":
            raise TypeError("this example copies into torch tensors: run it with -b torch")
        batch, side, steps = params["batch"], params["side"], params["steps"]
        crop = side - side // 8
        rng = numpy.random.default_rng(0)
        raw = rng.integers(0, 256, size=(batch, 3, side, side), dtype=numpy.uint8)
        weights = torch.randn(3 * crop * crop, 256, device=device)
        pinned = device.startswith("cuda")
        ready = torch.from_numpy(numpy.zeros((batch, 3 * crop * crop), dtype=numpy.float32))
        ready = ready.pin_memory() if pinned else ready

        def prepare() -> Any:
            top, left = rng.integers(0, side - crop + 1, size=2)
            images = raw[:, :, top : top + crop, left : left + crop].astype(numpy.float32) / 255.0
            if rng.random() < 0.5:
                images = images[..., ::-1]
            images = (images - images.mean()) / (images.std() + 1e-6)
            return torch.from_numpy(numpy.ascontiguousarray(images).reshape(batch, -1))

        def run_prepare() -> Any:
            return [prepare() for _ in range(steps)][-1]

        def run_copy() -> Any:
            return [ready.to(device, non_blocking=pinned) for _ in range(steps)][-1]

        def run_step() -> Any:
            out = None
            for _ in range(steps):
                host = prepare()
                host = host.pin_memory() if pinned else host
                out = torch.relu(host.to(device, non_blocking=pinned) @ weights)
            return out

        return Prepared(
            variants={PREPARE: run_prepare, COPY: run_copy, STEP: run_step},
            sync=lambda: backend.barrier(device),
        )

    def round_metrics(self, params: Mapping[str, Any], clocks: Mapping[str, Any]) -> dict[str, float | None]:
        step = clocks[STEP].done_s
        return {
            "prepare_share": clocks[PREPARE].done_s / step,
            "copy_share": clocks[COPY].done_s / step,
            "batches_per_s": params["steps"] / step,
        }

    def reading(self, result: Any) -> str:
        if "prepare_share" not in result.metrics:
            return ""
        return (
            f"host-side preparation is {self.figure(result, 'prepare_share')} of the step, the copy "
            f"{self.figure(result, 'copy_share')}; {self.figure(result, 'batches_per_s')} batches/s"
        )
