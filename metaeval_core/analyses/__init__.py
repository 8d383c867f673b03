"""Analyses built on the statistics: the papers' remaining analyses, the TACL 2021 simulations, practitioner tools."""
