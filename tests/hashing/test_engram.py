"""Engram's hash as deployed: fixed values, bit-identity with the NumPy transcription, the
Barrett floor mod, the compressing map, the exact law against Monte Carlo, and bad input."""

from __future__ import annotations

import math
from fractions import Fraction
from types import SimpleNamespace

import numpy as np
import pytest

from lshsim.hashing.engram import (
    Engram,
    EngramHash,
    compress_table,
    floor_mod,
    normalize_text,
    sentencepiece_texts,
)
from lshsim.laws.engram import (
    compressed_window_probability,
    engram_heads_law,
    engram_primes,
    engram_probability,
    mix_range,
    residue_match,
)
from lshsim.sentences import sentence_pairs
from lshsim.testing.engram_reference import (
    NgramHashMappingRef,
    build_lookup_table,
    engram_family,
    handmade_sentencepiece_model,
    is_prime_trial,
)

V = 129280
TABLE = 5 * V


def _ref(h: EngramHash) -> NgramHashMappingRef:
    args = (list(h.table_sizes), h.max_ngram_size, h.heads, list(h.layer_ids), h.pad, h.seed)
    return NgramHashMappingRef(*args, h.vocab_size)


# ----------------------------------------------------------------------------- fixed values


def test_fixed_values_of_the_deployed_setting():
    """Seed 0, layers [1, 15], N = 3, V = 129280, tables 5 x 129280, H = 8 (engram_demo_v1)."""
    h = EngramHash(V, table_sizes=[TABLE, TABLE], max_ngram_size=3, heads=8, layer_ids=[1, 15])
    assert h.multipliers(1).tolist() == [58737837727525, 3709723095905, 27562777300965]
    primes = h.primes(1)
    assert primes[2] == [646403, 646411, 646421, 646423, 646433, 646453, 646519, 646523]
    assert primes[3][0] == 646537 and primes[3][-1] == 646619 and len(primes[3]) == 8
    assert min(h.primes(15)[2]) > max(primes[3])  # one prime search across orders and layers
    ids = np.array([[17, 4242, 99, 123456, 7, 7]])
    m = [int(v) for v in h.multipliers(1)]
    mix = (123456 * m[0]) ^ (99 * m[1])  # position 3, order 2 (no wrap: products < 2^63)
    assert mix == 7251901314871504323
    heads = [225690, 557341, 20288, 527264, 245406, 596712, 414381, 341421]
    assert [mix % p for p in primes[2]] == heads
    out = h.hash(ids, 1)
    assert out.shape == (1, 6, 16) and out.dtype == np.int64
    assert out[0, 3, :8].tolist() == heads
    np.testing.assert_array_equal(out, _ref(h).get_ngram_hashes(ids, 1))


def test_prime_search_matches_trial_division():
    """engram_primes equals the reference search (trial division) and continues across layers."""
    got = engram_primes([10, 12, 10], 3, [4, 0])
    ref = NgramHashMappingRef([10, 12, 10], 4, 3, [4, 0], 0, 0, 50)
    assert got == ref.vocab_size_across_layers
    assert got[4] == [[11, 13, 17], [19, 23, 29], [31, 37, 41]]
    assert all(is_prime_trial(p) for per in got.values() for o in per for p in o)


# ----------------------------------------------------------------------------- bit identity


@pytest.mark.parametrize("seed", [0, 1, 12345])
@pytest.mark.parametrize(("order", "heads"), [(3, 8), (4, 1), (4, 8), (2, 3)])
def test_equals_the_numpy_transcription(seed, order, heads):
    """Random ids (valid, and any int64: wrapping products and negative mixes), layers [1, 15],
    several vocabularies and table sizes: equal to the reference bit for bit."""
    rng = np.random.default_rng(seed)
    for vocab, table in ((V, TABLE), (1000, 7), (1, 2), (2**40, 100_003)):
        h = EngramHash(
            vocab,
            table_sizes=table,
            max_ngram_size=order,
            heads=heads,
            layer_ids=[1, 15],
            pad_id=int(rng.integers(0, min(vocab, 2**31))),
            seed=seed,
        )
        ref = _ref(h)
        valid = rng.integers(0, vocab, size=(3, 37))
        wide = rng.integers(-(2**63), 2**63 - 1, size=(4, 29), dtype=np.int64, endpoint=True)
        wide[0, :3] = [-(2**63), 2**63 - 1, -1]
        for layer in (1, 15):
            for x in (valid, wide, valid[:, :2], valid[:, :0]):
                np.testing.assert_array_equal(h.hash(x, layer), ref.get_ngram_hashes(x, layer))
            m = h.multipliers(layer)
            mix = wide[:, 1:] * m[0] ^ wide[:, :-1] * m[1]
            assert vocab == 1 or (mix < 0).any()  # the negative-mix path is exercised
    assert h.hash(valid[0], 1).shape == (37, (order - 1) * heads)  # one sequence: [T, heads]


def test_lookup_compresses_ids_and_the_pad_id():
    """With a lookup, ids >= 0 are compressed first, negative ids pass unchanged, and the pad
    id is mapped; equal to the reference's hash of every layer."""
    rng = np.random.default_rng(3)
    lookup = rng.integers(0, 50, size=300)
    lookup[:50] = np.arange(50)
    h = EngramHash(lookup=lookup, table_sizes=[101, 103], heads=4, pad_id=123, layer_ids=[2, 0])
    assert h.vocab_size == 50 and h.pad == lookup[123]
    ref = NgramHashMappingRef([101, 103], 3, 4, [2, 0], 123, 0, 50, lookup_table=lookup)
    x = rng.integers(-3, 300, size=(5, 20))
    got, want = h.hash_layers(x), ref.hash(x)
    assert list(got) == [2, 0]
    for layer in (2, 0):
        np.testing.assert_array_equal(got[layer], want[layer])


def test_family_equals_its_reference():
    """The engram family: full windows of one order, H primes >= n, Python-int reference."""
    rng = np.random.default_rng(5)
    x = rng.integers(0, 2**40, size=(3, 2, 9))
    for order, heads, n in ((2, 1, 2), (2, 8, 646400), (3, 3, 3), (5, 2, 2**31)):
        h = Engram(n, 1, seed=order, ngram=order, heads=heads, compressed_vocab=1000)
        assert h.primes.tolist() == Engram.moduli(n, heads) and h.primes[0] >= n
        np.testing.assert_array_equal(h.hash(x), engram_family(h, x))
    assert h.hash(x[..., :3]).shape == (3, 2, 0, 2)


# ----------------------------------------------------------------------------- floor mod


def test_barrett_floor_mod_equals_numpy_remainder():
    """Floor mod by the Barrett reduction equals NumPy's % (>= 0 for a positive modulus) on
    edge values, negatives included, for small, Engram-sized, 32-bit and huge moduli."""
    top = 2**63 - 1
    edges = [0, 1, -1, 2, -2, top, -top - 1, top - 1, -top, 2**32, -(2**32), 2**62, -(2**62)]
    rng = np.random.default_rng(0)
    for p in (1, 2, 3, 4, 7, 646403, 646619, 2**31 - 1, 2**32 - 5, 2**32 + 15, 2**61 - 1, top):
        near = [k * p + d for k in (-3, -1, 0, 1, 5) for d in (-1, 0, 1)]
        big = [(top // p) * p + d for d in (-1, 0)] + [-(top // p) * p - d for d in (0, 1)]
        vals = [v for v in edges + near + big if -(2**63) <= v <= top]
        x = np.concatenate(
            [np.array(vals, dtype=np.int64), rng.integers(-(2**63), top, size=2000, dtype=np.int64)]
        )
        got = floor_mod(x, p)
        np.testing.assert_array_equal(got, x % np.int64(p))
        assert [int(v) for v in got[: len(vals)]] == [v % p for v in vals]  # Python ints


# ----------------------------------------------------------------------------- compressing map


NORMALIZED = {
    "Café": "cafe",
    "  CAFE\t": "cafe",
    "ﬁne": "fine",  # NFKC ligature
    "Ⅻ": "xii",  # NFKC compatibility
    "ΟΔΟΣ": "οδοσ",  # per-char lowercase: no final sigma (str.lower() gives ...ς)
    "İ": "i",  # NFD: I + combining dot, the mark stripped
    " ": " ",  # a lone space survives the strip
    "\t\n": " ",
    "a \t\r\n b": "a b",
    "\u3000x\u00a0": "x",  # NFKC turns both into spaces, stripped
    "\x1cA": "\x1ca",  # U+001C is not White_Space (Python's strip would remove it)
    "e\u0301\u20dd": "e",  # Mn and Me marks
    "": "",
}


def test_normalize_text_hand_checked():
    for text, want in NORMALIZED.items():
        assert normalize_text(text) == want, text


def test_normalize_text_matches_hugging_face_tokenizers():
    """Where tokenizers is installed: the same normal form as Engram's normaliser sequence."""
    pytest.importorskip("tokenizers")
    from lshsim.testing.engram_reference import hf_normalizer

    hf = hf_normalizer()
    extra = ["Ⅷ½", "ＡＢＣ", "ǅ", "ß", "ﬃ", "\u0085x\u2028", "\u1680y", "x\ue000y", "Å\u0327"]
    for text in [*NORMALIZED, *extra]:
        assert normalize_text(text) == hf(text), repr(text)


def _spm_model() -> bytes:
    """The handmade SentencePiece model: controls, accents, case, NFKC forms, bytes."""
    return handmade_sentencepiece_model()


def test_sentencepiece_texts_takes_bytes_a_path_or_a_tokenizer(tmp_path):
    """The model as serialized bytes, a .model file, or an object with ``model_proto``."""
    proto = _spm_model()
    path = tmp_path / "m.model"
    path.write_bytes(proto)
    want = sentencepiece_texts(proto)
    assert sentencepiece_texts(path) == want
    assert sentencepiece_texts(SimpleNamespace(model_proto=proto)) == want
    assert len(want[0]) == 14 + 256


def test_compress_table_from_a_sentencepiece_vocabulary():
    """Accents, case and NFKC forms merge; specials keep their own ids; a non-ASCII byte piece
    (decoded to U+FFFD) keys on its raw piece; an ASCII byte piece merges with its letter.
    Equal to the reference construction (with our normaliser, and with HF's where present)."""
    texts, raw = sentencepiece_texts(_spm_model())
    lookup, new = compress_table(texts, raw)
    ids = {t: i for i, t in enumerate(raw)}
    assert texts[:3] == ["<pad>", "</s>", "<unk>"] and lookup[:3].tolist() == [0, 1, 2]
    assert lookup[ids["▁Café"]] == lookup[ids["▁cafe"]] == lookup[ids["CAFE"]]
    assert lookup[ids["é"]] == lookup[ids["e"]] and lookup[ids["ﬁ"]] == lookup[ids["fi"]]
    assert lookup[ids["▁the"]] == lookup[ids["The"]] != lookup[ids["<0x74>"]]
    assert lookup[ids["<0x74>"]] == lookup[ids["<0x54>"]]  # byte pieces "t" and "T"
    assert lookup[ids["<0xE2>"]] != lookup[ids["<0xE3>"]]  # U+FFFD texts: raw keys
    assert new == lookup.max() + 1 and lookup[0] == 0
    ref_lookup, ref_new = build_lookup_table(texts, raw, normalize=normalize_text)
    np.testing.assert_array_equal(lookup, ref_lookup)
    assert new == ref_new
    try:
        hf_lookup, _ = build_lookup_table(texts, raw)
    except ImportError:
        return
    np.testing.assert_array_equal(lookup, hf_lookup)
    h = EngramHash(lookup=lookup, table_sizes=97, heads=2, pad_id=0)
    assert h.vocab_size == new and h.pad == 0


# ----------------------------------------------------------------------------- the law


def _wilson(k: float, n: int, z: float = 4.5) -> tuple[float, float]:
    p = k / n
    den = 1 + z * z / n
    mid = (p + z * z / (2 * n)) / den
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / den
    return mid - half, mid + half


def _inside(freq: float, law: float, pairs: int) -> bool:
    """``law`` in the z = 4.5 Wilson interval of ``freq`` with one trial per pair: a pair's
    mean over its (positively correlated or not) windows has variance <= p (1 - p), so this is
    conservative."""
    lo, hi = _wilson(freq * pairs, pairs)
    return lo <= law <= hi


@pytest.mark.parametrize(
    ("order", "n", "heads", "overlap", "length", "vocab"),
    [(2, 3, 3, 0.5, 12, 1000), (3, 2, 4, 0.8, 10, 129280), (2, 5, 2, 0.25, 8, 40)],
)
def test_law_against_monte_carlo(order, n, heads, overlap, length, vocab):
    """The real kernel on the sentence model, a fresh multiplier set per pair, small primes:
    every-head rate, mean per-head rate and the head-count law inside Wilson intervals."""
    pairs = 12_000
    rng = np.random.default_rng(2026)
    sp = sentence_pairs(pairs, overlap, length=length, vocab=vocab, rng=rng, embed=False)
    kw = {"ngram": order, "heads": heads, "compressed_vocab": vocab}
    hits = Engram.head_hits(n, sp.tokens1, sp.tokens2, rng, **kw)
    primes = Engram.moduli(n, heads)
    law = engram_heads_law(order, primes, overlap, length, vocab=vocab)
    assert abs(sum(law) - 1) < 1e-12
    for k in range(heads + 1):
        assert _inside(float((hits == k).mean()), law[k], pairs), (k, law)
    every = engram_probability(order, primes, overlap, length, vocab=vocab)
    assert every == pytest.approx(law[-1], abs=1e-15)
    assert _inside(float((hits == heads).mean()), every, pairs)
    per_head = [
        engram_probability(order, primes, overlap, length, vocab=vocab, head=j)
        for j in range(heads)
    ]
    assert _inside(float(hits.mean() / heads), sum(per_head) / heads, pairs)
    # padded positions (Engram's left padding): position t reads min(N, t + 1) real tokens
    padded = Engram.head_hits(n, sp.tokens1, sp.tokens2, rng, pad_id=7, **kw)
    assert padded.shape == (pairs, length)
    for t in range(min(order, length)):
        p_t = engram_probability(order, primes, overlap, length, vocab=vocab, position=t)
        assert _inside(float((padded[:, t] == heads).mean()), p_t, pairs), t


def test_compressed_window_probability_is_exact():
    """Q (windows equal after compression) equals the enumeration of every sentence pair of a
    tiny model (l = 3, V_0 = 7 ids in classes of sizes 3, 2, 1, 1); Q = q for a bijection."""
    import itertools

    compress = [0, 0, 0, 1, 1, 2, 3]
    length = 3
    for f in (0.0, 1 / 3, 2 / 3):
        s = round(f * length)
        for order, pos in ((2, None), (3, None), (3, 1), (2, 0)):
            t = length - 1 if pos is None else pos
            window = range(max(0, t - order + 1), t + 1)
            hits = total = 0
            for unshared in itertools.combinations(range(length), length - s):
                for ids in itertools.permutations(range(7), 2 * length - s):
                    s2 = list(ids[:length])
                    for i, p in enumerate(unshared):
                        s2[p] = ids[length + i]
                    hits += all(compress[ids[p]] == compress[s2[p]] for p in window)
                    total += 1
            got = compressed_window_probability(order, compress, f, length, position=pos)
            assert got == pytest.approx(hits / total, abs=1e-15), (f, order, pos)
    q = engram_probability(2, [7], 0.5, 8, vocab=40, head=0)
    assert engram_probability(2, [7], 0.5, 8, vocab=40, head=0, compress=range(40)) == q


def test_compressed_law_against_monte_carlo():
    """Engram's layer output (orders 2 and 3 together, left-padded, one multiplier set per
    pair) on original ids compressed by a coarse map (V_0 = 48 ids in 6 classes of unequal
    sizes): every-head and per-head rates of each order, full and padded windows, inside the
    z = 4.5 Wilson intervals of the law on compressed ids; the uncompressed law is outside.
    (Primes 11..19: at p = 3 the one-token window at t = 0 departs from the uniform-mix model,
    measured 0.780 against 0.736 for head 0, see lshsim.laws.engram.)"""
    pairs, length, overlap = 6_000, 8, 0.5
    rng = np.random.default_rng(34)
    compress = np.repeat(np.arange(6), [16, 12, 8, 6, 4, 2])
    vocab = 6
    h = EngramHash(lookup=compress, table_sizes=[11, 13], heads=2, layer_ids=[0], pad_id=5)
    sp = sentence_pairs(pairs, overlap, length=length, vocab=48, rng=rng, embed=False)
    hits = h.pair_hits(sp.tokens1, sp.tokens2, rng, 0)
    assert hits.shape == (pairs, length, 4)
    primes = h.primes(0)
    for order in (2, 3):
        heads = hits[..., (order - 2) * 2 : (order - 1) * 2]
        for t in (0, 1, length - 1):
            pos = None if t >= order - 1 else t
            kw = {"vocab": vocab, "position": pos, "compress": compress}
            every = engram_probability(order, primes[order], overlap, length, **kw)
            assert _inside(float(heads[:, t].all(axis=-1).mean()), every, pairs), (order, t)
            for j in range(2):
                one = engram_probability(order, primes[order], overlap, length, head=j, **kw)
                assert _inside(float(heads[:, t, j].mean()), one, pairs), (order, t, j)
        plain = engram_probability(order, primes[order], overlap, length, vocab=vocab)
        assert not _inside(float(heads[:, -1].all(axis=-1).mean()), plain, pairs)


def test_family_laws_and_histogram():
    """The family's overlap law and details come from lshsim.laws.engram; pair_collisions is
    the histogram of head_hits under the same draws."""
    law = Engram.overlap_law(3, 0.5, dim=16, length=12, vocab=1000, cosines=1, seed=0, heads=3)
    assert law.probability == engram_probability(2, [3, 5, 7], 0.5, 12)
    details = Engram.overlap_details(3, 0.5, 12, heads=3)
    assert details["primes"] == [3, 5, 7] and details["probability"] == law.probability
    assert sum(details["heads_law"]) == pytest.approx(1.0)
    rng = np.random.default_rng(1)
    sp = sentence_pairs(50, 0.5, length=12, vocab=1000, rng=rng, embed=False)
    hist = Engram.pair_collisions(3, sp.tokens1, sp.tokens2, np.random.default_rng(4), heads=3)
    hits = Engram.head_hits(3, sp.tokens1, sp.tokens2, np.random.default_rng(4), heads=3)
    np.testing.assert_array_equal(hist, np.bincount(hits.ravel(), minlength=4))


def test_law_structure():
    """rho(L) = 1/L + b (L - b) / (L R^2), exactly 1/R once L >= R; Engram's 8 deployed primes
    make the all-heads rate of distinct windows 1/R = 2^-63, not prod 1/p; one head ~ 1/p."""
    assert residue_match(7, 20) == Fraction(sum(c * c for c in (3, 3, 3, 3, 3, 3, 2)), 400)
    assert residue_match(1, 9) == 1
    assert residue_match(25, 20) == residue_match(10**9, 20) == Fraction(1, 20)
    assert mix_range(V) == 2**63 and mix_range(2) == 2**62 and mix_range(1) == 1
    primes = EngramHash(V).primes(1)[2]
    assert engram_probability(2, primes, 0.0, 32) == 2.0**-63  # q = 0 at f = 0
    one = engram_probability(2, primes, 0.0, 32, head=0)
    assert one == pytest.approx(1 / primes[0], rel=1e-15)
    q = 30 * 29 / (32 * 31)
    assert engram_probability(2, primes, 30 / 32, 32) == pytest.approx(q + (1 - q) * 2.0**-63)
    assert engram_probability(3, primes, 0.5, 32, position=0) == pytest.approx(0.5)


# ----------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: EngramHash(), r"^vocab_size \(compressed vocabulary\) is required"),
        (lambda: EngramHash(0), r"^vocab_size \(compressed vocabulary\) must be"),
        (lambda: EngramHash(V, max_ngram_size=1), r"^max_ngram_size must be"),
        (lambda: EngramHash(V, heads=0), r"^heads \(H\) must be"),
        (lambda: EngramHash(V, table_sizes=[10]), r"^table_sizes must give one size per order"),
        (lambda: EngramHash(V, table_sizes=1), r"^table_sizes must be"),
        (lambda: EngramHash(V, layer_ids=[1, 1]), r"^layer_ids must be distinct"),
        (lambda: EngramHash(V, layer_ids=[-1]), r"^layer_ids must be"),
        (lambda: EngramHash(V, pad_id=-1), r"^pad_id must be"),
        (lambda: EngramHash(V, seed=-1), r"^seed must be"),
        (lambda: EngramHash(lookup=[0.5]), r"^lookup must be"),
        (lambda: EngramHash(lookup=[0, 1], pad_id=2), r"^pad_id must be"),
        (lambda: EngramHash(V).hash(np.zeros((2, 3)), 1), r"^ids must be an integer array"),
        (lambda: EngramHash(V).hash(np.int64(3), 1), r"^ids must have at least one axis"),
        (lambda: EngramHash(V).hash([[1, 2]], 2), r"^layer must be one of layer_ids"),
        (
            lambda: EngramHash(lookup=[0, 1], pad_id=0).hash([[2]], 1),
            r"^ids must be < len\(lookup\)",
        ),
        (lambda: Engram(1, 1), r"^n \(buckets\) must be"),
        (lambda: Engram(2**41, 1), r"^n \(buckets\) must be <= 2\^40"),
        (lambda: Engram(8, 1, compressed_vocab=0), r"^compressed_vocab \(V\) must be"),
        (lambda: Engram(8, 1, ngram=0), r"^ngram \(N\) must be"),
        (lambda: Engram(8, 1, bogus=1), r"^unknown parameter\(s\) for engram: bogus"),
        (lambda: Engram(8, 1).hash(np.array([1, -1])), r"^batch token ids must be >= 0"),
        (lambda: floor_mod([1], 0), r"^modulus must be"),
        (lambda: compress_table(["a", 3]), r"^pieces must be strings"),
        (lambda: compress_table(["a"], []), r"^raw_tokens must have one entry per piece"),
        (lambda: engram_probability(2, [], 0.5), r"^primes must be 1 to 64 moduli"),
        (lambda: engram_probability(40, [3], 0.5, 32), r"^ngram \(N\) must be"),
        (lambda: engram_probability(1, [3], 0.5, 32), r"^ngram \(N\) must be an integer in \[2"),
        (lambda: compressed_window_probability(2, [0] * 5, 0.5, 4), r"^compress must map at"),
        (lambda: compressed_window_probability(2, [-1] * 9, 0.5, 4), r"^compress must be a"),
        (lambda: EngramHash(7).pair_hits([[1]], [[1, 2]], None, 1), r"^tokens1 and tokens2"),
    ],
)
def test_bad_input_one_line_value_errors(call, match):
    with pytest.raises(ValueError, match=match) as err:
        call()
    assert "\n" not in str(err.value)
