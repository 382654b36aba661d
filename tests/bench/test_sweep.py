"""lshsim.bench.sweep (experiments/bench_sweep.py): its spec and report; the timing run itself
starts two LocalClusters, so it is left to the script (tests/sweep covers the engine)."""

from lshsim.bench.sweep import bench_spec, format_table, parse_args
from lshsim.bench.timing import speedup_row
from lshsim.sweep import enumerate_cells, parse_spec


def test_bench_spec_is_a_valid_monte_carlo_sweep():
    cells = enumerate_cells(parse_spec(bench_spec(16, 2000)))
    assert len(cells) == 16 and {c.command for c in cells} == {"simulate"}
    assert {c.options["mode"] for c in cells} == {"full"}
    cosines = [c.options["cosine"] for c in cells]
    assert cosines[0] == 0.05 and cosines[-1] == 0.95 and len(set(cosines)) == 16


def test_defaults_and_report():
    args = parse_args([])
    assert (args.cells, args.samples, args.rounds, args.out) == (16, 2000, 3, None)
    timings = {
        "1 worker": {"median": 4.0, "iqr": 0.1, "times": [4.0]},
        "2 workers": {"median": 2.0, "iqr": 0.2, "times": [2.0]},
    }
    row = speedup_row(
        "x",
        timings,
        "2 workers",
        "1 worker",
        goal=1.7,
        ours="a",
        peer="b",
        checks={"same rows": True},
    )
    text = format_table(row)
    assert "speed-up : 2.00x (goal >= 1.7; same rows: True; meets: True)" in text
