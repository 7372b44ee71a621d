"""Finance model: cash flows per way of paying for a GPU cluster."""
