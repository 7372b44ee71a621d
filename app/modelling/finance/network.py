"""Scale-out network bill of materials derived from the node count, fabric and oversubscription.

Compute fabric: a folded Clos (fat-tree) of `radix`-port switches (Leiserson 1985,
"Fat-trees"; Al-Fares et al. 2008, "A scalable, commodity data center network architecture").
With oversubscription r = downlinks : uplinks at the leaf, each leaf gives radix·r/(r+1) ports
to nodes and the rest to spines; r = 1 is non-blocking.
- Ports fit one switch: one switch, no fabric links.
- Two tiers while every spine can reach every leaf (leaves ≤ radix): spines = ⌈uplinks/radix⌉.
- Three tiers beyond (a k-ary fat-tree serves k³/4 hosts non-blocking with 5k²/4 switches,
  Al-Fares 2008): aggregation switches split radix/2 down, radix/2 up; cores take the rest.
Rail-optimised designs give every GPU its own NIC port (NVIDIA DGX SuperPOD reference
architecture: 8 × 400 Gb/s compute ports per DGX H100/H200).

Cabling: every compute-fabric link is one cable with an optical transceiver at each end
(`transceivers_per_link` = 2; set 0 for DAC/AOC copper runs). The front-end (storage and
management) Ethernet uses `frontend_ports_per_node` ports per node into `eth_radix`-port
switches, DAC-cabled.

All functions accept a node count or an integer array of them and broadcast.
"""

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from app.modelling.finance.money import FloatArray


@dataclass(frozen=True)
class NetworkDesign:
    nics_per_node: int = 8  # one 400 Gb/s port per GPU (DGX SuperPOD rail-optimised)
    radix: int = 64  # NVIDIA Quantum-2 QM9700/QM9790: 64 NDR ports
    oversubscription: float = 1.0  # leaf downlinks : uplinks
    transceivers_per_link: int = 2
    frontend_ports_per_node: int = 2  # storage + management Ethernet
    eth_radix: int = 64  # e.g. NVIDIA Spectrum SN4600: 64 × 200 GbE


@dataclass(frozen=True)
class NetworkBill:
    """Counts (float arrays of whole numbers, shaped like the node count)."""

    leaf_switches: FloatArray
    spine_switches: FloatArray  # spine + core tiers
    nics: FloatArray
    node_links: FloatArray  # NIC ↔ leaf
    fabric_links: FloatArray  # switch ↔ switch
    transceivers: FloatArray
    eth_switches: FloatArray
    eth_cables: FloatArray

    @property
    def ib_switches(self) -> FloatArray:
        return np.asarray(self.leaf_switches + self.spine_switches)

    @property
    def cables(self) -> FloatArray:
        return np.asarray(self.node_links + self.fabric_links + self.eth_cables)


def network_bill(nodes: int | FloatArray, design: NetworkDesign = NetworkDesign()) -> NetworkBill:
    """Switch, NIC, cable and transceiver counts for `nodes` nodes (vectorized over nodes)."""
    if isinstance(nodes, int):
        return _network_bill_cached(nodes, design)
    n = np.asarray(nodes, dtype=np.float64)
    if n.size > 8 and n.max() <= 4096:  # many counts: look them up in a table of 0 … max
        table = _network_table(int(n.max()), design)
        whole = np.rint(n).astype(np.int64)  # node counts are whole numbers
        return NetworkBill(*(np.asarray(getattr(table, f)[whole]) for f in _FIELDS))
    return _network_bill(n, design)


_FIELDS = ("leaf_switches", "spine_switches", "nics", "node_links", "fabric_links",
           "transceivers", "eth_switches", "eth_cables")


@lru_cache(maxsize=64)
def _network_table(max_nodes: int, design: NetworkDesign) -> NetworkBill:
    return _network_bill(np.arange(max_nodes + 1, dtype=np.float64), design)


@lru_cache(maxsize=1024)
def _network_bill_cached(nodes: int, design: NetworkDesign) -> NetworkBill:
    return _network_bill(np.asarray(float(nodes)), design)


def _network_bill(n: FloatArray, design: NetworkDesign) -> NetworkBill:
    ports = n * design.nics_per_node
    k = float(design.radix)
    down = np.floor(k * design.oversubscription / (design.oversubscription + 1.0))
    up = k - down
    one_switch = ports <= k
    leaves = np.where(ports == 0, 0.0, np.where(one_switch, 1.0, np.ceil(ports / down)))
    uplinks = np.where(one_switch, 0.0, leaves * up)
    two_tier = leaves <= k
    spines_2 = np.ceil(uplinks / k)
    aggs = np.ceil(uplinks / (k / 2.0))
    cores = np.ceil(aggs * (k / 2.0) / k)
    spines = np.where(two_tier, spines_2, aggs + cores)
    fabric_links = np.where(two_tier, uplinks, uplinks + aggs * (k / 2.0))
    links = ports + fabric_links
    fe_ports = n * design.frontend_ports_per_node
    eth = np.ceil(fe_ports / design.eth_radix)
    return NetworkBill(
        leaf_switches=leaves, spine_switches=spines, nics=ports, node_links=ports,
        fabric_links=fabric_links, transceivers=links * design.transceivers_per_link,
        eth_switches=eth, eth_cables=fe_ports,
    )


@dataclass(frozen=True)
class FabricBill:
    """Switch and link counts for one fabric (scalar view of `network_bill`)."""

    leaf_switches: int
    spine_switches: int  # spine + core tiers
    node_links: int
    fabric_links: int

    @property
    def switches(self) -> int:
        return self.leaf_switches + self.spine_switches


def two_tier_fabric(endpoint_ports: int, radix: int, oversubscription: float = 1.0) -> FabricBill:
    """Counts for `endpoint_ports` NIC ports (the first cut's interface, used by the planner;
    three tiers beyond `radix` leaves, as `network_bill`)."""
    bill = network_bill(endpoint_ports, NetworkDesign(
        nics_per_node=1, radix=radix, oversubscription=oversubscription,
        frontend_ports_per_node=0))
    return FabricBill(int(bill.leaf_switches), int(bill.spine_switches), int(bill.node_links),
                      int(bill.fabric_links))

