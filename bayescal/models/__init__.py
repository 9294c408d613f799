"""PyMC models, one module per model stem."""
