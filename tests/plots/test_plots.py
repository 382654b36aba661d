"""Figure functions: synthetic data of each schema in, a readable Figure out; atomic saving."""

from __future__ import annotations

import copy
import io
import math

import numpy as np
import pytest

pytest.importorskip("matplotlib")

from matplotlib.figure import Figure

from lshsim import plots

OVERLAPS = [0.1, 0.3, 0.5, 0.7, 0.9]
NS = [2**k for k in range(2, 21, 2)]


def _curve(ns, p):
    return {"n": list(ns), "p": [float(x) for x in p]}


def _mc(ns, p, trials=100_000, rng=None):
    rng = rng or np.random.default_rng(0)
    est = rng.binomial(trials, np.asarray(p)) / trials
    half = 1.96 * np.sqrt(np.maximum(est * (1 - est), 1e-12) / trials)
    return {
        "n": list(ns),
        "estimate": est.tolist(),
        "ci_low": np.clip(est - half, 0, 1).tolist(),
        "ci_high": np.clip(est + half, 0, 1).tolist(),
    }


def collision_data():
    ns = np.array(NS, dtype=float)
    panels = {}
    for fam, rho in (("simhash", lambda f: 0.8 * math.sqrt(1 - f)), ("softmax", lambda f: 1 - f)):
        exact = {str(f): _curve(ns, np.minimum(1, (1 + 1 / ns) * ns ** -rho(f))) for f in OVERLAPS}
        rate = {str(f): _curve(ns, ns ** -rho(f)) for f in OVERLAPS}
        mc = {
            str(f): _mc(ns[:6], np.minimum(1, (1 + 1 / ns[:6]) * ns[:6] ** -rho(f)))
            for f in OVERLAPS
        }
        panels[fam] = {"exact": exact, "mc": mc, "rate": rate}
    # Token-ID: no asymptotic rate; P = f + (1 - f) / n
    panels["tokenid"] = {
        "exact": {str(f): _curve(ns, f + (1 - f) / ns) for f in OVERLAPS},
        "mc": {str(f): _mc(ns[:5], f + (1 - f) / ns[:5]) for f in OVERLAPS},
    }
    # Hadamard: Monte Carlo only, for some overlaps
    panels["hadamard"] = {
        "mc": {str(f): _mc(ns[:5], ns[:5] ** -(1 - f)) for f in OVERLAPS[::2]},
    }
    panels["crosspolytope"] = {"exact": {"0.5": _curve(ns, ns**-0.4)}}
    return {"overlaps": OVERLAPS, "panels": panels}


def rho_data():
    f = np.linspace(0.05, 0.95, 19)
    n = 65536
    return {
        "n": n,
        "f": f.tolist(),
        "rho": {
            "simhash": (0.79 * np.sqrt(1 - f) + 0.01).tolist(),
            "softmax": (1 - f).tolist(),
            "crosspolytope": ((1 - f) / (1 + f)).tolist(),
            "tokenid": (-np.log(f) / np.log(n)).tolist(),
        },
        "fits": {"simhash": {"form": "sqrt(1-f)", "c": 0.79}, "softmax": {"form": "1-f", "c": 1.0}},
    }


def ordering_data():
    f = np.linspace(0.05, 0.95, 19)
    log2n = np.arange(1, 21, dtype=float)
    n = 2.0**log2n
    tok = f[None, :] + (1 - f[None, :]) / n[:, None]
    soft = n[:, None] ** -(1 - f[None, :]) * 1.3
    sim = n[:, None] ** -(0.79 * np.sqrt(1 - f[None, :]))
    winner = np.argmax(np.stack([tok, soft, sim]), axis=0)
    return {
        "f": f.tolist(),
        "log2n": log2n.tolist(),
        "labels": ["Token-ID", "Softmax", "SimHash"],
        "winner": winner.tolist(),
        "crossover": {"f": f.tolist(), "n": (1.3 / f).tolist()},
        "claimed": {"f": f.tolist(), "n_lo": (1 / f).tolist(), "n_hi": (1 + 1.71 / f).tolist()},
    }


def sentence_data():
    rows = []
    for d in (64, 512):
        for length in (8, 32):
            for f in np.linspace(0.0, 1.0, 6):
                sd = math.sqrt((1 - f**2) / d) / math.sqrt(length) * 2
                rows.append(
                    {
                        "d": d,
                        "l": length,
                        "f": float(f),
                        "mc_mean": float(f + 0.01 * (d == 64)),
                        "mc_sd": sd,
                        "theory_mean": float(f),
                        "theory_sd": sd,
                    }
                )
    return {"rows": rows}


def tokenid_data():
    f = np.linspace(0.1, 0.9, 9)
    rng = np.random.default_rng(1)
    curve_f = np.linspace(0, 1, 101)
    return {
        "f": f.tolist(),
        "tokenid": _mc(f, f, trials=2000, rng=rng),
        "minhash": _mc(f, f / (2 - f), trials=2000, rng=rng),
        "curve_f": curve_f.tolist(),
        "jaccard": (curve_f / (2 - curve_f)).tolist(),
    }


DATA = {
    "collision_vs_n": collision_data,
    "rho_vs_f": rho_data,
    "ordering_map": ordering_data,
    "sentence_cosine": sentence_data,
    "tokenid_vs_minhash": tokenid_data,
}
#: Expected number of data panels (colour bars excluded).
N_PANELS = {
    "collision_vs_n": 5,
    "rho_vs_f": 1,
    "ordering_map": 1,
    "sentence_cosine": 2,
    "tokenid_vs_minhash": 1,
}


def _panels(fig):
    """Axes that are not colour bars."""
    return [ax for ax in fig.axes if ax.get_label() != "<colorbar>"]


def _has_legend(fig, axes):
    return bool(fig.legends) or any(ax.get_legend() is not None for ax in axes)


def test_registry_matches_functions():
    assert set(plots.FIGURES) == set(DATA)
    assert plots.FIGURES["collision_vs_n"] is plots.plot_collision_vs_n


@pytest.mark.parametrize("name", sorted(DATA))
def test_figure_structure(name):
    fig = plots.FIGURES[name](DATA[name]())
    assert isinstance(fig, Figure)
    axes = _panels(fig)
    assert len(axes) == N_PANELS[name]
    for ax in axes:
        assert ax.get_xlabel().strip()
        assert ax.get_ylabel().strip()
        assert ax.get_title().strip()
    assert _has_legend(fig, axes)


def test_collision_vs_n_log_axes_and_colorbar():
    data = collision_data()
    fig = plots.plot_collision_vs_n(data)
    axes = _panels(fig)
    assert [ax.get_title() for ax in axes] == list(data["panels"])
    for ax in axes:
        assert ax.get_xscale() == "log"
        assert ax.get_yscale() == "log"
        assert ax.get_ylim()[0] >= plots.Y_FLOOR * 0.999
    assert len(fig.axes) == len(axes) + 1  # one colour bar for f


def test_collision_vs_n_zero_estimates_do_not_break_log_axis():
    data = collision_data()
    mc = data["panels"]["hadamard"]["mc"]["0.1"]
    mc["estimate"][-1] = 0.0
    mc["ci_low"][-1] = 0.0
    fig = plots.plot_collision_vs_n(data)
    fig.savefig(io.BytesIO(), format="png")
    assert _panels(fig)[3].get_yscale() == "log"


def test_colors_consistent_per_overlap():
    fig = plots.plot_collision_vs_n(collision_data())
    a, b = _panels(fig)[:2]
    assert a.lines[0].get_color() == b.lines[0].get_color() == plots.f_color("0.1")
    assert plots.f_color(0.1) != plots.f_color(0.9)


def test_rho_vs_f_reference_curves_and_title():
    fig = plots.plot_rho_vs_f(rho_data())
    (ax,) = _panels(fig)
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "0.79 sqrt(1-f) (simhash fit)" in labels
    assert "1.00 1-f (softmax fit)" in labels
    assert "65,536" in ax.get_title() or "2^16" in ax.get_title()
    assert ax.get_ylabel() == "rho = -log P / log n"


def test_ordering_map_legend_labels():
    fig = plots.plot_ordering_map(ordering_data())
    (ax,) = _panels(fig)
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    for lab in ("Token-ID", "Softmax", "SimHash", "n*(f): Token-ID = Softmax"):
        assert lab in labels
    assert any(lab.startswith("claimed") for lab in labels)
    ticks = [t.get_text() for t in ax.get_yticklabels()]
    assert all(t.startswith("$2^{") for t in ticks if t)


def test_ordering_map_rejects_bad_winner():
    data = ordering_data()
    data["winner"] = data["winner"][:-1]
    with pytest.raises(ValueError, match="winner"):
        plots.plot_ordering_map(data)
    data = ordering_data()
    data["winner"][0][0] = 7
    with pytest.raises(ValueError, match="winner"):
        plots.plot_ordering_map(data)


@pytest.mark.parametrize(
    ("name", "path"),
    [
        ("collision_vs_n", ("panels",)),
        ("collision_vs_n", ("panels", "simhash", "mc", "0.3", "ci_high")),
        ("rho_vs_f", ("rho",)),
        ("rho_vs_f", ("fits", "simhash", "c")),
        ("ordering_map", ("crossover",)),
        ("ordering_map", ("claimed", "n_hi")),
        ("sentence_cosine", ("rows", 3, "theory_sd")),
        ("tokenid_vs_minhash", ("minhash", "ci_low")),
        ("tokenid_vs_minhash", ("jaccard",)),
    ],
)
def test_missing_key_names_the_key(name, path):
    data = copy.deepcopy(DATA[name]())
    node = data
    for key in path[:-1]:
        node = node[key]
    del node[path[-1]]
    with pytest.raises(KeyError, match=repr(path[-1])):
        plots.FIGURES[name](data)


def test_bad_fit_form_and_length_mismatch():
    data = rho_data()
    data["fits"]["simhash"]["form"] = "exp(-f)"
    with pytest.raises(ValueError, match="form"):
        plots.plot_rho_vs_f(data)
    data = tokenid_data()
    data["tokenid"]["ci_high"] = data["tokenid"]["ci_high"][:-1]
    with pytest.raises(ValueError, match="equal lengths"):
        plots.plot_tokenid_vs_minhash(data)


def test_save_figure_atomic(tmp_path):
    fig = plots.plot_tokenid_vs_minhash(tokenid_data())
    out = tmp_path / "sub" / "fig.v1"
    paths = plots.save_figure(fig, out)
    assert paths == [tmp_path / "sub" / "fig.v1.png", tmp_path / "sub" / "fig.v1.svg"]
    for p in paths:
        assert p.is_file() and p.stat().st_size > 0
    assert paths[0].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert b"<svg" in paths[1].read_bytes()[:2000]
    assert sorted(p.name for p in (tmp_path / "sub").iterdir()) == ["fig.v1.png", "fig.v1.svg"]


def test_save_figure_png_dpi(tmp_path):
    from PIL import Image

    fig = plots.plot_rho_vs_f(rho_data())
    (png,) = plots.save_figure(fig, tmp_path / "rho", formats=("png",))
    w, _ = Image.open(png).size
    assert w == pytest.approx(fig.get_figwidth() * plots.PNG_DPI, abs=2)


def test_save_figure_bad_format_leaves_nothing(tmp_path):
    fig = plots.plot_tokenid_vs_minhash(tokenid_data())
    with pytest.raises(ValueError, match="not supported"):
        plots.save_figure(fig, tmp_path / "x", formats=("png", "docx"))
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("name", sorted(DATA))
def test_every_figure_renders(name, tmp_path):
    fig = plots.FIGURES[name](DATA[name]())
    (png,) = plots.save_figure(fig, tmp_path / name, formats=("png",))
    assert png.stat().st_size > 10_000


def test_saved_files_are_byte_identical_run_to_run(tmp_path):
    """Same data, same files: PNG and SVG bytes do not change between two saves (no dates,
    fixed SVG id salt), so a re-run of `lshsim reproduce` leaves committed figures unchanged."""
    first = plots.save_figure(plots.plot_rho_vs_f(rho_data()), tmp_path / "a")
    again = plots.save_figure(plots.plot_rho_vs_f(rho_data()), tmp_path / "b")
    for p, q in zip(first, again, strict=True):
        assert p.read_bytes() == q.read_bytes(), p.name
