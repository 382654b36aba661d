"""Lookup families defined outside the package, as a third party would (see test_toy_family)."""
