"""Hardware catalog: loads pricing_data/hardware/*.csv into the model's dataclasses."""
