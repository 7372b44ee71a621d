"""Throughput use case: request → model inputs from the hardware catalog → estimate."""

from dataclasses import replace

from app.errors import InvalidInput
from app.hardware import catalog
from app.modelling.throughput import (
    ClusterConfig,
    FailureConfig,
    Layout,
    LayoutError,
    ModelShape,
    TrainingConfig,
    estimate,
    kv_cache,
    preset,
    scaling_curve,
)
from app.modelling.throughput.failures import LLAMA3_FAILURES_PER_GPU_HOUR
from app.modelling.throughput.hardware import FabricSpec, GpuSpec
from app.throughput.schemas import (
    GoodputOut,
    KvCacheRequest,
    KvCacheResponse,
    LayoutInput,
    MemoryOut,
    ModelInput,
    ScalingSeries,
    StepBreakdownOut,
    ThroughputRequest,
    ThroughputResponse,
)


def model_shape(spec: ModelInput, field: str = "model") -> ModelShape:
    try:
        if spec.preset is not None:
            return preset(spec.preset)
        return ModelShape("custom", spec.layers or 0, spec.hidden or 0, spec.ffn or 0,
                          spec.heads or 0, spec.kv_heads or 0, spec.vocab or 0,
                          spec.seq_len or 0)
    except (KeyError, ValueError) as exc:
        raise InvalidInput(field, str(exc).strip("'\"")) from None


def gpu_spec(name: str, field: str = "gpu") -> GpuSpec:
    try:
        return catalog.gpu(name)
    except KeyError as exc:
        raise InvalidInput(field, str(exc).strip("'\"")) from None


def fabric_spec(name: str, field: str) -> FabricSpec:
    try:
        return catalog.fabric(name)
    except KeyError as exc:
        raise InvalidInput(field, str(exc).strip("'\"")) from None


def cluster_config(req: ThroughputRequest) -> ClusterConfig:
    gpu = gpu_spec(req.gpu)
    scale_out = fabric_spec(req.scale_out_fabric, "scale_out_fabric")
    scale_up = fabric_spec(req.scale_up_fabric or gpu.scale_up, "scale_up_fabric")
    return ClusterConfig(
        gpu=gpu, gpus_per_node=req.gpus_per_node, nodes=req.nodes, scale_up=scale_up,
        scale_out=scale_out, nics_per_node=req.nics_per_node,
        nic_gbits_per_s=req.nic_gbps or scale_out.port_gbits_per_s, topology=req.topology,
        oversubscription=req.oversubscription, packet_loss_rate=req.packet_loss_rate,
        storage_gbytes_per_s=req.storage_gbytes_per_s,
        data_shares_network=req.data_shares_network,
        degraded_scale_up_gbytes_per_s=req.degraded_scale_up_gbytes_per_s,
        degraded_nic_gbits_per_s=req.degraded_nic_gbps)


def training_config(req: ThroughputRequest) -> TrainingConfig:
    return TrainingConfig(global_batch_seqs=req.global_batch_seqs, total_tokens=req.total_tokens,
                          precision=req.precision, recompute=req.recompute,
                          zero_stage=req.zero_stage)


def failure_config(req: ThroughputRequest) -> FailureConfig:
    rate = LLAMA3_FAILURES_PER_GPU_HOUR if req.failures_per_gpu_hour is None \
        else req.failures_per_gpu_hour
    return FailureConfig(failures_per_gpu_hour=rate,
                         storage_write_gbytes_per_s=req.checkpoint_write_gbytes_per_s,
                         async_checkpoint=req.async_checkpoint, restart_s=req.restart_s)


def _scaling(req: ThroughputRequest, m: ModelShape, tr: TrainingConfig,
             cl: ClusterConfig) -> list[ScalingSeries]:
    series = []
    for name in req.scaling_fabrics:
        fab = fabric_spec(name, "scaling_fabrics")
        curve = scaling_curve(m, tr, replace(cl, scale_out=fab,
                                             nic_gbits_per_s=req.nic_gbps or fab.port_gbits_per_s),
                              req.scaling_nodes)
        series.append(ScalingSeries(fabric=name, num_gpus=curve.num_gpus.tolist(),
                                    tokens_per_s=curve.tokens_per_s.tolist(),
                                    mfu=curve.mfu.tolist()))
    return series


def compute_throughput(req: ThroughputRequest) -> ThroughputResponse:
    m = model_shape(req.model)
    cl = cluster_config(req)
    tr = training_config(req)
    layout = Layout(**req.layout.model_dump()) if req.layout else None
    try:
        est = estimate(m, tr, cl, layout, failure_config(req))
    except LayoutError as exc:
        raise InvalidInput("layout", str(exc)) from None
    except ValueError as exc:  # e.g. fp8 on a GPU without fp8 tensor cores
        raise InvalidInput("precision", str(exc)) from None
    if not est.fits:
        raise InvalidInput("layout" if layout else "nodes", est.reason)
    days = est.time_to_train_s / 86400.0
    gp = est.goodput
    return ThroughputResponse(
        model_name=m.name, params=m.total_params, num_gpus=cl.num_gpus,
        layout=LayoutInput(**vars(est.layout)), fits=est.fits, reason=est.reason,
        step=StepBreakdownOut(**vars(est.step)), memory=MemoryOut(**vars(est.memory)),
        tokens_per_s=est.tokens_per_s, tokens_per_day=est.tokens_per_day, mfu=est.mfu,
        hfu=est.hfu,
        goodput=GoodputOut(mtbf_s=gp.mtbf_s, checkpoint_bytes=gp.checkpoint_bytes,
                           checkpoint_write_s=gp.checkpoint_write_s,
                           checkpoint_blocking_s=gp.checkpoint_blocking_s,
                           interval_s=gp.interval_s, useful_fraction=gp.useful_fraction),
        useful_tokens_per_day=est.useful_tokens_per_day,
        time_to_train_days=days if days != float("inf") else None,
        layouts_evaluated=est.layouts_evaluated, notes=list(est.notes),
        scaling=_scaling(req, m, tr, cl))


def compute_kv_cache(req: KvCacheRequest) -> KvCacheResponse:
    m = model_shape(req.model)
    gpu = gpu_spec(req.gpu)
    try:
        kv = kv_cache(m, req.context_tokens, gpu.hbm_gbytes, req.batch, req.bytes_per_element)
    except ValueError as exc:
        raise InvalidInput("model", str(exc)) from None
    return KvCacheResponse(model_name=m.name, kv_bytes_per_token=kv.kv_bytes_per_token,
                           kv_bytes=kv.kv_bytes, weights_bytes=kv.weights_bytes,
                           gpus_needed=kv.gpus_needed, tensor_parallel=kv.tensor_parallel,
                           context_parallel=kv.context_parallel)
