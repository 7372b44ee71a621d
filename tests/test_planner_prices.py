"""How the planner chooses among a reservation's stored variants (no database needed)."""

from decimal import Decimal

from app.planner.service import cheapest_variant
from app.pricing.models import (
    OfferingClass,
    PaymentOption,
    PriceItem,
    PriceKind,
    PricePoint,
    PurchaseOption,
)


def _point(pay: PaymentOption, cls: OfferingClass, hourly: str, upfront: str) -> PricePoint:
    item = PriceItem(kind=PriceKind.cloud_instance, name=f"p5 {cls} {pay}", gpu_count=8,
                     purchase_option=PurchaseOption.reserved, term_months=12,
                     payment_option=pay, offering_class=cls)
    return PricePoint(item=item, amount=Decimal(hourly), upfront_usd=Decimal(upfront))


def test_the_cheapest_effective_hourly_variant_is_chosen() -> None:
    # effective hourly = hourly + upfront / (12 x 730 h):
    #   no upfront 30.00; partial 15.00 + 124,100 / 8,760 = 29.167; all 0 + 254,040 / 8,760 = 29.0
    #   convertible no upfront 33.00
    variants = [_point(PaymentOption.no_upfront, OfferingClass.standard, "30", "0"),
                _point(PaymentOption.partial_upfront, OfferingClass.standard, "15", "127750"),
                _point(PaymentOption.all_upfront, OfferingClass.standard, "0", "254040"),
                _point(PaymentOption.no_upfront, OfferingClass.convertible, "33", "0")]
    for order in (variants, variants[::-1]):
        best = cheapest_variant(order, 12)
        assert best is not None
        assert best.item.payment_option == PaymentOption.all_upfront


def test_ties_are_broken_deterministically() -> None:
    a = _point(PaymentOption.no_upfront, OfferingClass.standard, "29", "0")
    b = _point(PaymentOption.no_upfront, OfferingClass.convertible, "29", "0")
    assert cheapest_variant([a, b], 12) is a
    assert cheapest_variant([b, a], 12) is a
    assert cheapest_variant([], 12) is None
