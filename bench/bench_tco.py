"""Finance model speed: one foundation comparison (3 options, 60 months)."""

from app.modelling.finance.tco import CloudRates, ClusterShape, OwnedCosts, compare
from bench.timing import best_of


def main() -> None:
    owned = OwnedCosts(25_000, 35_000, 30_000, 10.2, 3.06, 0.08, 1.3, 150_000)
    rates = CloudRates(55.04, 19.50)
    seconds = best_of(lambda: compare(ClusterShape(8), owned, rates, 60, 0.5), number=200)
    print(f"one comparison, 3 options x 60 months: {seconds * 1e6:.1f} us")
