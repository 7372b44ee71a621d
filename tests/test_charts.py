"""Chart helpers."""

import pytest

from app.web.charts import spread


def test_spread_keeps_far_labels_and_separates_close_ones() -> None:
    assert spread([1.0, 5.0, 9.0], 0.5) == [1.0, 5.0, 9.0]
    # 2.5 and 2.73 are 0.23 apart; a gap of 0.3 pushes 2.73 up by 0.07, then all three move down
    # by 0.07 / 3 to stay centred on the original values.
    assert spread([2.5, 2.73, 3.8], 0.3) == pytest.approx([2.5 - 0.07 / 3, 2.8 - 0.07 / 3,
                                                          3.8 - 0.07 / 3])
    assert spread([1.0, 1.0], 0.2) == pytest.approx([0.9, 1.1])
