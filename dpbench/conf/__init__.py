"""dpbench's Hydra configs (searched as pkg://dpbench.conf, so they work from an installed package)."""
