"""Benchmarks of the grading apparatus itself (throughput, class scale, where the seconds go)."""
