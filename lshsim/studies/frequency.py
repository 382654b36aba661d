"""Frequency-aware collisions on a real corpus: the law against the real hashes.

``frequency_collisions`` tokenizes a corpus (the embedded one, or a user's files / JSON
lines), takes its frequency spectra of tokens and of 2-grams (windows left-padded with the
pad id, as the model's n-gram lookup pads), and for tables of several sizes reports the share
of occurrences whose bucket also holds another distinct key (:mod:`lshsim.laws.frequency`):
the exact law under ideal hashing (mean and the standard deviation over hash draws) and the
share measured with the real hash functions of :mod:`lshsim.hashing`:

* **Token-ID** (``id mod m``) on tokens: injective for ``m >= V``, so no collisions at all
  where the ideal law predicts many; below ``V`` a deterministic folding;
* **hashed n-grams** on tokens (``N = 1``, one head) and on 2-grams (``N = 2``, two heads:
  each head, all heads, any head);
* **product keys at initialisation** on tokens: each token type gets an i.i.d. Gaussian
  vector (the sentence model's embeddings) and its top-1 slot of ``m = s^2``;
* per frequency band (the top 1% of key types by count, the next 9%, the rest) at one size;
* the **LongCat rule** "avoid table sizes near multiples of the vocabulary": 2-gram shares at
  ``m = k V + delta`` for the n-gram family and for the polynomial id ``x_{t-1} V + x_t mod m``
  (the kind of hash the rule guards: ``x_{t-1}`` and ``x_{t-1} + k`` shift ``x_t`` by
  ``-delta`` only, so near a multiple of ``V``, and near ``(k + 1/2) V``, it collides far
  more than ideal; the hashed family does not care); and the table sizes (and their share
  of a model's parameters) at which the mean 2-gram share falls to 10% and 1%, the rule's
  other half ("at most about half the parameters in n-gram tables").

References:
    :mod:`lshsim.laws.frequency` and ``proofs/frequency.md``; Meituan LongCat team 2026
    (LongCat-Flash-Lite); X. Cheng et al. (DeepSeek) 2026, Engram.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from lshsim.hashing import NGram, ProductKey, TokenID, make_family
from lshsim.laws import frequency as law
from lshsim.plots.frequency import plot_frequency_collisions
from lshsim.studies.base import Study, spawn_seeds

#: the model config whose tokenizer (and parameter count) the study uses
TOKENIZER_CONFIG = "tiny"
#: heads of the 2-gram table
BIGRAM_HEADS = 2
#: the product-key vectors' dimension
PK_DIM = 32


@dataclass(frozen=True)
class FrequencyConfig:
    """The study's sizes.

    The corpus (``None``: embedded; else paths) and its documents used (``None``: all), the
    table-size grids (``m / D`` as powers of 2, ``D`` the distinct keys), the product keys'
    ``log2 s`` grid; the LongCat panel's ``k V`` (the multiple ``k`` of the vocabulary ``V``
    nearest ``ratio D`` for the ``D`` distinct 2-grams) and its offsets ``delta`` (whole
    numbers, and fractions of ``V``); the mean shares whose table sizes are reported.
    """

    frequency_corpus: tuple[str, ...] | None
    frequency_documents: int | None
    frequency_log2_ratios: tuple[int, ...]
    frequency_pk_log2s: tuple[int, ...]
    frequency_longcat_ratio: float
    frequency_offsets: tuple[int, ...]
    frequency_offset_fractions: tuple[float, ...]
    frequency_targets: tuple[float, ...]


def corpus_tokens(corpus, documents: int | None, seed: int):
    """``(token rows, tokenizer)`` of the corpus: the tokenizer ``lshsim train`` would use.

    Args:
        corpus: paths (``None``: the embedded corpus).
        documents: the first ``documents`` documents only (``None``: all).
        seed: the tokenizer's training split seed.
    """
    from lshsim.t5.configs import get_config
    from lshsim.t5.data.corpus import load_corpus
    from lshsim.t5.loop import held_out_tokenizer
    from lshsim.t5.options import TrainOptions

    config = get_config(TOKENIZER_CONFIG)
    paths = None if corpus is None else list(corpus)
    opts = TrainOptions.from_config(config, corpus=paths, seed=seed)
    tok, _ = held_out_tokenizer(config, opts, None)
    docs = load_corpus(paths)
    docs = docs if documents is None else docs[:documents]
    return tok.encode_batch(list(docs)), tok


def _points(counts, buckets, distinct: int, sizes) -> dict:
    """Measured shares and the law's mean and sd, per event (heads, all, any)."""
    measured = law.measured_shares(counts, buckets)
    ideal = law.collision_law(counts, sizes, distinct=distinct)
    return {e: {"measured": measured[e], **ideal[e]} for e in measured}


def _series(cells: list[dict]) -> dict:
    """``[{"m": .., event: {...}}, ...]`` -> ``{"m": [...], event: {"measured": [...], ...}}``."""
    out: dict = {"m": [c["m"] for c in cells]}
    for event in cells[0]["shares"]:
        out[event] = {k: [c["shares"][event][k] for c in cells] for k in ("measured", "mean", "sd")}
    return out


def _law_curve(counts, ms, heads: int, points: int = 33) -> dict:
    """The law on a dense log grid over ``ms`` (``heads`` tables of the same size)."""
    grid = np.unique(np.round(np.geomspace(max(2, min(ms)), max(ms), points)).astype(np.int64))
    out: dict = {"m": grid.tolist()}
    for m in grid:
        for event, v in law.collision_law(counts, [int(m)] * heads).items():
            cell = out.setdefault(event, {"mean": [], "sd": []})
            cell["mean"].append(v["mean"])
            cell["sd"].append(v["sd"])
    return out


def _family_buckets(name: str, m: int, keys: np.ndarray, seed: int, **params) -> np.ndarray:
    """``[D, H]`` buckets of the distinct ``keys`` under a fresh function of family ``name``.

    ``keys``: ids ``[D]``, windows ``[D, N]`` or float vectors ``[D, d]``.
    """
    dim = keys.shape[1] if keys.ndim == 2 and np.issubdtype(keys.dtype, np.floating) else 1
    fam = make_family(name, m, dim, seed, **params)
    return np.asarray(fam.hash(keys)).reshape(keys.shape[0], -1)


def _sizes_of(name: str, m: int, **params) -> list[int]:
    """The heads' table sizes of family ``name`` at ``m`` (n-gram heads: its moduli)."""
    fam = make_family(name, m, 1, 0, **params)
    moduli = getattr(fam, "moduli", None)
    return [m] if moduli is None else [int(v) for v in np.atleast_1d(moduli)]


def _polynomial(windows: np.ndarray, vocab: int, m: int) -> np.ndarray:
    """``(x_{t-1} V + x_t) mod m`` of 2-gram windows (the rule's polynomial n-gram id)."""
    return (windows[:, 0].astype(np.int64) * vocab + windows[:, 1]) % m


def frequency_collisions(cfg: FrequencyConfig, seed: int) -> dict:
    """The study's data (module docstring); same config and seed, same data."""
    from lshsim.t5.configs import get_config
    from lshsim.t5.params import count_params

    rows, tok = corpus_tokens(cfg.frequency_corpus, cfg.frequency_documents, seed)
    vocab = int(tok.vocab_size)
    ids, id_counts = law.spectrum(np.concatenate([np.asarray(r, np.int64) for r in rows if r]))
    bigrams, bi_counts = law.spectrum(law.windows(rows, 2, pad_id=tok.pad_id))
    d1, d2 = len(ids), len(bigrams)
    seeds = iter(spawn_seeds(seed, 4 * len(cfg.frequency_log2_ratios) + 64))
    rng = np.random.default_rng(next(seeds))
    vectors = rng.standard_normal((d1, PK_DIM))

    tables: dict = {TokenID.name: [], NGram.name + " N=1": [], NGram.name + " N=2": []}
    for j in cfg.frequency_log2_ratios:
        m1 = max(2, round(d1 * 2.0**j))
        b = _family_buckets(TokenID.name, m1, ids, next(seeds))
        tables[TokenID.name].append({"m": m1, "shares": _points(id_counts, b, d1, [m1])})
        b = _family_buckets(NGram.name, m1, ids[:, None], next(seeds), ngram=1, heads=1)
        tables[NGram.name + " N=1"].append({"m": m1, "shares": _points(id_counts, b, d1, [m1])})
        m2 = max(2, round(d2 * 2.0**j))
        params = {"ngram": 2, "heads": BIGRAM_HEADS}
        b = _family_buckets(NGram.name, m2, bigrams, next(seeds), **params)
        sizes = _sizes_of(NGram.name, m2, **params)
        tables[NGram.name + " N=2"].append({"m": m2, "shares": _points(bi_counts, b, d2, sizes)})
    pk = []
    for k in cfg.frequency_pk_log2s:
        m = 4**k
        b = _family_buckets(ProductKey.name, m, vectors, next(seeds))
        pk.append({"m": m, "shares": _points(id_counts, b, d1, [m])})
    tables[ProductKey.name] = pk
    series = {name: _series(cells) for name, cells in tables.items()}
    spectra = {
        TokenID.name: (id_counts, 1),
        NGram.name + " N=1": (id_counts, 1),
        NGram.name + " N=2": (bi_counts, BIGRAM_HEADS),
        ProductKey.name: (id_counts, 1),
    }
    for name, (counts, heads) in spectra.items():
        series[name]["law"] = _law_curve(counts, series[name]["m"], heads)

    # per band, at the table size nearest D (ratio 2^0) of the 2-gram table and product keys
    m2 = max(2, d2)
    params = {"ngram": 2, "heads": BIGRAM_HEADS}
    b2 = _family_buckets(NGram.name, m2, bigrams, next(seeds), **params)
    sizes2 = _sizes_of(NGram.name, m2, **params)
    band2 = law.frequency_bands(bi_counts)
    s = round(math.sqrt(d1))
    b1 = _family_buckets(ProductKey.name, s * s, vectors, next(seeds))
    band1 = law.frequency_bands(id_counts)
    bands = {"names": list(law.BAND_NAMES), "m_ngram": sizes2, "m_productkey": s * s}
    for label, counts, band, bk, d, sz in (
        (NGram.name + " N=2", bi_counts, band2, b2, d2, sizes2),
        (ProductKey.name, id_counts, band1, b1, d1, [s * s]),
    ):
        bands[label] = [
            {
                "types": int(np.count_nonzero(band == i)),
                "occurrences": int(counts[band == i].sum()),
                "shares": _points(np.where(band == i, counts, 0), bk, d, sz),
            }
            for i in range(len(law.BAND_NAMES))
        ]

    # LongCat: 2-gram tables at m = k V + delta, one head
    k = max(1, round(cfg.frequency_longcat_ratio * d2 / vocab))
    longcat: dict = {"vocab": vocab, "k": k, "offsets": []}
    cols = {"hashed": [], "polynomial": [], "mean": [], "sd": []}
    deltas = {*cfg.frequency_offsets, *(round(x * vocab) for x in cfg.frequency_offset_fractions)}
    for delta in sorted(deltas):
        m = k * vocab + delta
        b = _family_buckets(NGram.name, m, bigrams, next(seeds), ngram=2, heads=1)
        p = _points(bi_counts, b, d2, [m])["head 0"]
        poly = law.measured_shares(bi_counts, _polynomial(bigrams, vocab, m))["head 0"]
        longcat["offsets"].append(delta)
        for key, v in (("hashed", p["measured"]), ("polynomial", poly), ("mean", p["mean"]),
                       ("sd", p["sd"])):  # fmt: skip
            cols[key].append(v)
    longcat.update(cols)
    config = get_config(TOKENIZER_CONFIG)
    total = sum(count_params(config).values())
    budget = []
    for share in cfg.frequency_targets:
        m = law.share_for_mean(share, d2)
        table = m * config.d_model
        budget.append(
            {"share": share, "m": m, "m_over_vocab": m / vocab, "table_params": table,
             "param_fraction": table / (table + total)}
        )  # fmt: skip
    longcat["budget"] = {"config": TOKENIZER_CONFIG, "model_params": total, "rows": budget}
    return {
        "vocab": vocab,
        "documents": len(rows),
        "tokens": int(id_counts.sum()),
        "distinct_tokens": d1,
        "bigrams": int(bi_counts.sum()),
        "distinct_bigrams": d2,
        "tables": series,
        "bands": bands,
        "longcat": longcat,
    }


def _events(series: dict) -> list[str]:
    """A table's events: its heads, and all/any when it has several."""
    events = [e for e in series if e not in ("m", "law")]
    return events if "head 1" in series else ["head 0"]


def _z(p: dict, i: int | None = None) -> float:
    m, mu, sd = (p[k] if i is None else p[k][i] for k in ("measured", "mean", "sd"))
    return (m - mu) / sd if sd > 0 else 0.0


def frequency_section(data: dict) -> list[str]:
    """``REPORT.md`` lines: the shares against the law, per band, and the LongCat rule."""
    lines = [
        f"Corpus: {data['documents']} documents, {data['tokens']} tokens "
        f"({data['distinct_tokens']} distinct; vocabulary {data['vocab']}), "
        f"{data['distinct_bigrams']} distinct 2-grams. Share of occurrences whose bucket holds "
        "another distinct key: measured with the real hash, and the ideal-hash law "
        "(mean +- sd over hash draws).",
        "",
        "| table | m | event | measured | law mean | law sd | z |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, s in data["tables"].items():
        for i, m in enumerate(s["m"]):
            for event in _events(s):
                p = s[event]
                lines.append(
                    f"| {name} | {m} | {event} | {p['measured'][i]:.4f} | {p['mean'][i]:.4f} "
                    f"| {p['sd'][i]:.4f} | {_z(p, i):+.2f} |"
                )
    b = data["bands"]
    lines += ["", "Per frequency band (2-gram table at m ~ D, product keys at s^2 ~ D):", "",
              "| table | band | types | occurrences | event | measured | law mean | law sd |",
              "|---|---|---|---|---|---|---|---|"]  # fmt: skip
    for name in (k for k in b if k not in ("names", "m_ngram", "m_productkey")):
        for band_name, row in zip(b["names"], b[name], strict=True):
            for event, p in row["shares"].items():
                if not (event.startswith("head") or "head 1" in row["shares"]):
                    continue  # one head: all = any = head 0
                lines.append(
                    f"| {name} | {band_name} | {row['types']} | {row['occurrences']} | {event} "
                    f"| {p['measured']:.4f} | {p['mean']:.4f} | {p['sd']:.4f} |"
                )
    lc = data["longcat"]
    lines += ["", f"LongCat rule, 2-gram tables at m = {lc['k']} V + delta (V = {lc['vocab']}):",
              "", "| delta | n-gram family | polynomial id | law mean |",
              "|---|---|---|---|"]  # fmt: skip
    for i, delta in enumerate(lc["offsets"]):
        lines.append(
            f"| {delta:+d} | {lc['hashed'][i]:.4f} | {lc['polynomial'][i]:.4f} "
            f"| {lc['mean'][i]:.4f} |"
        )
    bud = lc["budget"]
    lines += ["", f"Table size for a mean 2-gram share, against {bud['config']} "
              f"({bud['model_params']} parameters):", "",
              "| mean share | m | m / V | n-gram table's share of all parameters |",
              "|---|---|---|---|"]  # fmt: skip
    for r in bud["rows"]:
        lines.append(
            f"| {r['share']:g} | {r['m']:.0f} | {r['m_over_vocab']:.1f} | "
            f"{r['param_fraction']:.2f} |"
        )
    return lines


STUDIES = (
    Study(
        "frequency_collisions",
        frequency_collisions,
        plot_frequency_collisions,
        "Frequency-aware collisions on the embedded corpus: the share of token (and 2-gram) "
        "occurrences whose bucket also holds another distinct key, against the table size "
        "(lines: the exact ideal-hash law 1 - (1 - 1/m)^(D-1), shaded +-2 sd over hash draws, "
        "which the frequency spectrum sets; points: the real hashes). Token-ID is injective "
        "from m = V; product keys at init collide more than ideal (unequal Voronoi cells). "
        "Middle: per frequency band; right: the LongCat rule, 2-gram tables at m = kV + delta "
        "(a polynomial id x1 V + x2 collides far above the law near m = kV and (k + 1/2) V; "
        "the hashed family follows the law at every size).",
        {
            "default": FrequencyConfig(
                frequency_corpus=None,
                frequency_documents=None,
                frequency_log2_ratios=(-4, -3, -2, -1, 0, 1, 2, 3, 4),
                frequency_pk_log2s=(3, 4, 5, 6, 7, 8),
                frequency_longcat_ratio=4.0,
                frequency_offsets=(-64, -2, -1, 0, 1, 2, 64),
                frequency_offset_fractions=(-0.5, -0.25, -0.125, 0.125, 0.25, 0.5),
                frequency_targets=(0.1, 0.01),
            ),
            "quick": FrequencyConfig(
                frequency_corpus=None,
                frequency_documents=800,
                frequency_log2_ratios=(-2, 0, 2),
                frequency_pk_log2s=(4, 6),
                frequency_longcat_ratio=4.0,
                frequency_offsets=(-1, 0, 1, 64),
                frequency_offset_fractions=(0.25, 0.5),
                frequency_targets=(0.1, 0.01),
            ),
        },
        section=frequency_section,
        kinds={"": "monte_carlo"},
    ),
)
