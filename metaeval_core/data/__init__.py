"""Datasets: the data model, the registry and its loaders, uploads, the local store, what-if edits, the synthetic demo."""
