"""Runs of a bundle on a cluster."""
