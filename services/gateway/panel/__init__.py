"""A panel: which collection and reply mode a model string means, the seats' text, and the run on the bus."""
