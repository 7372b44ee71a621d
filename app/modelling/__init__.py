"""The pure core: numbers in, numbers out. Standard library and numpy only."""
