"""Interactive explorers (ipywidgets), one module per notebook."""
