"""Benchmarks: ``python -m benchmarks`` runs them side by side (see ``__main__``)."""
