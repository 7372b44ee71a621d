"""Alpha-beta cost of NCCL-style collectives, vectorised over numpy arrays.

Time = latency term (alpha per step) + bytes on the busiest link / bandwidth (beta).
Ring algorithms: Thakur, Rabenseifner & Gropp 2005 (IJHPCA 19(1)); Patarasuk & Yuan 2009.
Bus-bandwidth definitions: NCCL docs / nccl-tests PERFORMANCE.md. Sizes in bytes, bandwidths
in bytes/s per GPU per direction, alpha in seconds.
"""

from __future__ import annotations

import numpy as np

from app.modelling.throughput.config import ClusterConfig, FloatArray
from app.modelling.throughput.hardware import FabricSpec

_MSS_BYTES = 4096.0  # RoCE/IB MTU payload; TCP uses jumbo 9000 (8948 MSS)
_TCP_MSS_BYTES = 8948.0
_TCP_FLOWS_PER_NIC = 8.0  # NCCL_SOCKET_NTHREADS * NCCL_NSOCKS_PERTHREAD (NCCL env docs)


def _f(x: FloatArray | float) -> FloatArray:
    return np.asarray(x, dtype=np.float64)


def ring_allreduce_s(size_bytes: FloatArray | float, n: FloatArray | float,
                     bw_bytes_per_s: FloatArray | float, alpha_s: FloatArray | float
                     ) -> FloatArray:
    """Ring all-reduce: 2(n-1)/n * S/B + 2(n-1)*alpha (Thakur et al. 2005, Sec. 4.5)."""
    n = _f(n)
    t = 2.0 * (n - 1) / n * _f(size_bytes) / _f(bw_bytes_per_s) + 2.0 * (n - 1) * _f(alpha_s)
    return np.where(n > 1, t, 0.0)


def tree_allreduce_s(size_bytes: FloatArray | float, n: FloatArray | float,
                     bw_bytes_per_s: FloatArray | float, alpha_s: FloatArray | float
                     ) -> FloatArray:
    """Pipelined double-binary-tree all-reduce (NCCL 2.4+): ~2*S/B + 2*log2(n)*alpha
    (Sanders et al. 2009; NCCL blog 'Massively scale your DL training with NCCL 2.4')."""
    n = _f(n)
    t = 2.0 * _f(size_bytes) / _f(bw_bytes_per_s) + 2.0 * np.log2(np.maximum(n, 1)) * _f(alpha_s)
    return np.where(n > 1, t, 0.0)


def reduce_scatter_s(size_bytes: FloatArray | float, n: FloatArray | float,
                     bw_bytes_per_s: FloatArray | float, alpha_s: FloatArray | float
                     ) -> FloatArray:
    """Ring reduce-scatter (or all-gather) of S total bytes: (n-1)/n * S/B + (n-1)*alpha."""
    n = _f(n)
    t = (n - 1) / n * _f(size_bytes) / _f(bw_bytes_per_s) + (n - 1) * _f(alpha_s)
    return np.where(n > 1, t, 0.0)


all_gather_s = reduce_scatter_s


def p2p_s(size_bytes: FloatArray | float, bw_bytes_per_s: FloatArray | float,
          alpha_s: FloatArray | float) -> FloatArray:
    """Point-to-point send: S/B + alpha."""
    return _f(size_bytes) / _f(bw_bytes_per_s) + _f(alpha_s)


def allreduce_s(size_bytes: FloatArray | float, n: FloatArray | float,
                bw_bytes_per_s: FloatArray | float, alpha_s: FloatArray | float,
                in_network: bool) -> FloatArray:
    """NCCL picks the faster of ring and tree; with in-network reduction (SHARP, NVLS) each
    GPU sends and receives S once instead of 2(n-1)/n*S (Graham et al. 2016, SHARP)."""
    best = np.minimum(ring_allreduce_s(size_bytes, n, bw_bytes_per_s, alpha_s),
                      tree_allreduce_s(size_bytes, n, bw_bytes_per_s, alpha_s))
    if in_network:
        n_ = _f(n)
        sharp = np.where(n_ > 1, _f(size_bytes) / _f(bw_bytes_per_s) + 2.0 * _f(alpha_s), 0.0)
        best = np.minimum(best, sharp)
    return best


def hierarchical_allreduce_s(size_bytes: FloatArray | float, ranks_per_node: FloatArray,
                             nodes: FloatArray, intra_bw: float, intra_alpha: float,
                             inter_bw: FloatArray | float, inter_alpha: float,
                             inter_in_network: bool) -> FloatArray:
    """Two-level all-reduce: reduce-scatter over NVLink among the k local ranks, all-reduce
    of S/k across m nodes on the scale-out fabric, all-gather over NVLink (NCCL's
    NVLS-tree / 'hierarchical' algorithm; Jia et al. 2018 hierarchical all-reduce)."""
    k, m = _f(ranks_per_node), _f(nodes)
    intra = 2.0 * reduce_scatter_s(size_bytes, k, intra_bw, intra_alpha)
    inter = allreduce_s(_f(size_bytes) / k, m, inter_bw, inter_alpha, inter_in_network)
    return intra + inter


def loss_throughput_factor(fabric: FabricSpec, loss_rate: float, link_bytes_per_s: float
                           ) -> float:
    """Goodput fraction left by random packet loss on a lossy fabric.

    RoCEv2 NICs recover with go-back-N: each loss resends a window of W = BDP/MTU packets,
    so goodput = 1/(1 + p*W) (Mittal et al. 2018, 'Revisiting network support for RDMA').
    TCP: Mathis et al. 1997, rate per flow <= MSS/RTT * sqrt(3/2)/sqrt(p), times the number
    of NCCL socket flows. Lossless fabrics (IB credit flow control, PFC) and AWS EFA's SRD
    (multipath, out-of-order retransmit) are not penalised.
    """
    if fabric.lossless or loss_rate <= 0.0 or fabric.kind == "efa":
        return 1.0
    rtt_s = 4.0 * fabric.latency_us * 1e-6  # ~2 hops each way
    if fabric.kind == "ethernet":
        per_flow = _TCP_MSS_BYTES / rtt_s * np.sqrt(1.5 / loss_rate)
        return float(min(1.0, _TCP_FLOWS_PER_NIC * per_flow / link_bytes_per_s))
    window_pkts = max(1.0, link_bytes_per_s * rtt_s / _MSS_BYTES)
    return float(1.0 / (1.0 + loss_rate * window_pkts))


def topology_factor(cluster: ClusterConfig, nodes_spanned: FloatArray) -> FloatArray:
    """Bandwidth left when a collective spans more nodes than one leaf (group) serves.

    A fraction x = 1 - group/nodes of the traffic crosses the oversubscribed layer, which
    runs at 1/r of line rate: effective bandwidth = 1/((1-x) + x*r) (harmonic mix; the
    scheduler is assumed not to pack rings by leaf). Rail-optimised fabrics keep same-rail
    traffic on one rail switch, which serves gpus_per_node times more nodes; Dragonfly+
    groups span several leaves (Shpiner et al. 2017) - we take 4 leaves per group.
    """
    group = float(cluster.nodes_per_leaf)
    if cluster.topology == "rail_optimized":
        group *= cluster.gpus_per_node
    elif cluster.topology == "dragonfly_plus":
        group *= 4.0
    m = _f(nodes_spanned)
    x = np.clip(1.0 - group / np.maximum(m, 1.0), 0.0, 1.0)
    return 1.0 / ((1.0 - x) + x * cluster.oversubscription)


def scale_out_bw_per_gpu(cluster: ClusterConfig, nodes_spanned: FloatArray,
                         data_fraction: float = 0.0) -> FloatArray:
    """Achievable scale-out bandwidth per GPU (bytes/s): the node's NIC bandwidth shared by
    its GPUs, times NCCL bus efficiency, loss goodput, topology factor, and minus the share
    the data loader uses when it rides the same network."""
    fab = cluster.scale_out
    node_bytes = cluster.node_bytes_per_s
    if cluster.degraded_nic_gbits_per_s is not None:
        # NCCL splits each collective evenly over the node's NICs (one channel set per
        # rail): the slow port's share finishes last, so the node runs at nics x slow port.
        slow = min(cluster.degraded_nic_gbits_per_s, cluster.nic_gbits_per_s) * 1e9 / 8.0
        node_bytes = min(node_bytes, cluster.nics_per_node * slow)
    per_gpu_line = node_bytes / cluster.gpus_per_node
    loss = cluster.packet_loss_rate
    p = fab.default_loss_rate if loss is None else loss
    port_bytes = fab.port_gbits_per_s * 1e9 / 8.0
    eff = fab.busbw_efficiency * loss_throughput_factor(fab, p, port_bytes)
    return (per_gpu_line * eff * (1.0 - data_fraction)
            * topology_factor(cluster, nodes_spanned))


def scale_up_bw_per_gpu(cluster: ClusterConfig) -> float:
    """NVLink/PCIe bandwidth per GPU per direction times NCCL bus efficiency (bytes/s);
    bounded by the GPU's own scale-up port (an A100 on an NVLink4 fabric still gets 300)."""
    fab = cluster.scale_up
    line = min(fab.port_gbits_per_s / 8.0, cluster.gpu.scale_up_gbytes_per_s) * 1e9
    for g in cluster.other_gpus:
        line = min(line, g.scale_up_gbytes_per_s * 1e9)
    if cluster.degraded_scale_up_gbytes_per_s is not None:
        line = min(line, cluster.degraded_scale_up_gbytes_per_s * 1e9)
    return line * fab.busbw_efficiency
