"""clustertco: what a GPU training cluster really costs and how fast it really trains."""
