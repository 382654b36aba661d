"""Shared by the sweep tests: a spec of 228 cheap cells (Monte Carlo first) and row helpers."""

#: 26 small Monte-Carlo cells (first, so a sweep spends its first seconds on them), then 202
#: theory cells (closed forms and two quadratures).
SPEC = {
    "seed": 11,
    "grids": [
        {
            "command": "simulate",
            "family": ["simhash", "voronoi", "crosspolytope"],
            "buckets": [4, 16, 64],
            "cosine": [0.5, 0.9],
            "mode": ["reduced"],
            "samples": [400],
        },
        {
            "command": "simulate",
            "family": ["minhash", "tokenid"],
            "buckets": [4, 64],
            "overlap": [0.25, 0.75],
            "length": [8],
            "samples": [40],
        },
        {
            "command": "theory",
            "family": ["simhash", "pstable"],
            "buckets": [2**k for k in range(1, 11)],
            "cosine": [k / 10 for k in range(1, 11)],
        },
        {"command": "theory", "family": ["voronoi"], "buckets": [4, 64], "cosine": [0.5]},
    ],
}
CELLS = 18 + 8 + 200 + 2


def sorted_rows(table, drop=("seconds",)):
    """A table's rows as dicts without ``drop``, sorted by cell key."""
    rows = [{k: v for k, v in r.items() if k not in drop} for r in table.to_pylist()]
    return sorted(rows, key=lambda r: r["cell"])
