"""The model's slot lookups beyond the paper's three: product keys and hashed n-grams.

``productkey_layer`` (PKM/PEER product keys) and ``ngram_layer`` (Engram's hashed n-grams)
are the Flax layers, reading their slots' values through ``tables``; ``sizes`` holds their
JAX-free table sizes and parameter counts; ``probe_theory`` the routing probe's prediction
for them. This package's ``__init__`` imports nothing (``lshsim.t5.budget`` reads ``sizes``
without JAX).
"""
