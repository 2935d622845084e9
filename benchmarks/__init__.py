"""Benchmarks run by `make bench`: medians and ratios against a baseline measured in the same run."""
