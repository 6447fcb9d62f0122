"""Benchmarks: figures and ratios against LangGraph, run with `python -m benchmarks`."""
