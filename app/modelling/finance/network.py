"""Scale-out network bill of materials derived from the node count.

A two-tier leaf-spine (folded Clos / fat-tree) of switches with `radix` ports (Leiserson 1985,
"Fat-trees"; NVIDIA DGX SuperPOD reference architecture uses the same two-tier shape per scalable
unit). With an oversubscription ratio r = downlinks : uplinks, each leaf gives
radix·r/(r+1) ports to nodes and the rest to spines; r = 1 is non-blocking.
"""

from dataclasses import dataclass
from math import ceil


@dataclass(frozen=True)
class FabricBill:
    leaf_switches: int
    spine_switches: int
    node_links: int  # node NIC ↔ leaf cables (one per NIC port)
    fabric_links: int  # leaf ↔ spine cables

    @property
    def switches(self) -> int:
        return self.leaf_switches + self.spine_switches


def two_tier_fabric(endpoint_ports: int, radix: int, oversubscription: float = 1.0) -> FabricBill:
    """Switches and links for `endpoint_ports` NIC ports. One switch suffices when the ports fit."""
    if endpoint_ports <= radix:
        return FabricBill(1, 0, endpoint_ports, 0)
    down = int(radix * oversubscription / (oversubscription + 1.0))
    up = radix - down
    leaves = ceil(endpoint_ports / down)
    uplinks = leaves * up
    spines = ceil(uplinks / radix)
    return FabricBill(leaves, spines, endpoint_ports, uplinks)
