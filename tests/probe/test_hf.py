"""Check (2) of issue 44: tiny random Hugging Face MoE models of each supported architecture,
built from configs here (never downloaded), probe end to end; the captured logits equal the
``router_logits`` the model returns; unsupported routers are refused by name."""

from __future__ import annotations

import json

import numpy as np
import pytest

from lshsim.cli.main import main
from lshsim.probe.hf import REFUSED, hf_tap, load_hf_model
from lshsim.probe.measure import probe_tap
from lshsim.t5.probe import ROW_KEYS
from tests import LazyModule, needs

# imported by the first test that uses them, not at collection in every pytest-xdist worker
# (torch and transformers: about 4 s of CPU per worker)
pytestmark = needs("torch", "transformers")
torch, transformers = LazyModule("torch"), LazyModule("transformers")

VOCAB = 512
DECODER = dict(
    vocab_size=VOCAB,
    hidden_size=32,
    intermediate_size=64,
    num_hidden_layers=2,
    num_attention_heads=4,
    num_key_value_heads=2,
    max_position_embeddings=64,
)


def _model(arch: str):
    torch.manual_seed(0)
    if arch == "mixtral":
        cfg = transformers.MixtralConfig(**DECODER, num_local_experts=8, num_experts_per_tok=2)
        return transformers.MixtralForCausalLM(cfg), ["layers/0", "layers/1"]
    if arch == "olmoe":
        cfg = transformers.OlmoeConfig(**DECODER, num_experts=8, num_experts_per_tok=1)
        return transformers.OlmoeForCausalLM(cfg), ["layers/0", "layers/1"]
    if arch == "qwen2_moe":  # layer 0 dense: no gate, skipped
        cfg = transformers.Qwen2MoeConfig(
            **DECODER,
            num_experts=8,
            num_experts_per_tok=1,
            moe_intermediate_size=32,
            shared_expert_intermediate_size=32,
            mlp_only_layers=[0],
        )
        return transformers.Qwen2MoeForCausalLM(cfg), ["layers/1"]
    cfg = transformers.SwitchTransformersConfig(
        vocab_size=VOCAB, d_model=32, d_kv=8, d_ff=64, num_layers=4, num_decoder_layers=2,
        num_heads=4, num_experts=8, expert_capacity=2, encoder_sparse_step=2,
        decoder_sparse_step=2,
    )  # fmt: skip
    model = transformers.SwitchTransformersForConditionalGeneration(cfg)
    return model, ["encoder/1", "encoder/3", "decoder/1"]


def _router_logits(model, ids):
    """The model's own router logits, one ``[B*T, E]`` array per MoE layer, encoder first
    (Switch's decoder reads the ids shifted right behind start token 0)."""
    t = torch.as_tensor(ids)
    with torch.no_grad():
        if hasattr(model, "encoder"):
            dec = torch.zeros_like(t)
            dec[:, 1:] = t[:, :-1]
            out = model(input_ids=t, decoder_input_ids=dec, output_router_logits=True)
            logits = [*out.encoder_router_logits, *out.decoder_router_logits]
        else:
            logits = model(input_ids=t, output_router_logits=True).router_logits
    return [x.reshape(-1, x.shape[-1]).float().numpy() for x in logits]


@pytest.mark.parametrize("arch", ["mixtral", "olmoe", "qwen2_moe", "switch_transformers"])
def test_architecture_probes_end_to_end(arch):
    model, layers = _model(arch)
    tap = hf_tap(model)
    assert tap.experts == 8 and tap.top_k == (2 if arch == "mixtral" else 1)
    rng = np.random.default_rng(0)
    ids = rng.integers(3, VOCAB, size=(3, 12))
    caps = tap.capture(ids, np.ones(ids.shape, bool))
    assert list(caps) == layers
    pairs = zip(caps.values(), tap.capture.gates, _router_logits(model, ids), strict=True)
    for cap, (name, module), want in pairs:
        w = (getattr(module, "classifier", module)).weight.detach().numpy()
        got = cap.inputs.reshape(-1, w.shape[1]) @ w.T
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6, err_msg=name)
        top = np.argsort(-want, axis=-1, kind="stable")[:, : tap.top_k]
        np.testing.assert_array_equal(cap.choice.reshape(-1, tap.top_k), top)
    rows = probe_tap(
        tap, rng.integers(3, VOCAB, size=(40, 16)), np.arange(3, VOCAB),
        overlaps=[0.2, 0.8], samples=16, router_draws=4,
    )  # fmt: skip
    assert [r["layer"] for r in rows] == [n for n in layers for _ in range(2)]
    for r in rows:
        assert set(ROW_KEYS) <= set(r) and 0 <= r["measured"] <= 1
        assert abs(r["z"]) < 5, r  # a freshly initialised gate is a random Gaussian router


def test_switch_capacity_dropped_tokens_count_by_their_logits():
    """With capacity 1, Switch drops most tokens (expert_index all zero); the tap still routes
    each by the argmax of its logits, so the experts used are not just expert 0."""
    model, _ = _model("switch_transformers")
    model.config.expert_capacity = 1
    for m in model.modules():
        if type(m).__name__ == "SwitchTransformersTop1Router":
            m.expert_capacity = 1
    tap = hf_tap(model)
    ids = np.random.default_rng(1).integers(3, VOCAB, size=(2, 24))
    cap = tap.capture(ids, np.ones(ids.shape, bool))["encoder/1"]
    assert len(np.unique(cap.choice)) > 2
    x = torch.as_tensor(cap.inputs)
    index, _, _ = tap.capture.gates[0][1](x)
    dropped = index.sum(-1) == 0
    assert dropped.any()
    want = np.argmax(tap.capture.gates[0][1].classifier(x).detach().numpy(), axis=-1)
    np.testing.assert_array_equal(cap.choice[..., 0], want)


def _save(tmp_path, arch="olmoe"):
    model, _ = _model(arch)
    folder = tmp_path / arch
    model.save_pretrained(folder)
    return folder


def test_cli_probes_a_folder_without_a_tokenizer(tmp_path, capsys):
    folder = _save(tmp_path)
    fig = tmp_path / "olmoe.svg"
    args = ["probe", "--hf", str(folder), "--samples", "8", "--overlap", "0.5", "--length", "16"]
    assert main([*args, "--router-draws", "2", "--json", "--figure", str(fig)]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["experts"] == 8 and data["top_k"] == 1 and len(data["rows"]) == 2
    assert any("modulo the model's vocabulary (512)" in n for n in data["notes"])
    assert {"departure", "departure_low", "departure_high"} <= set(data["rows"][0])
    assert fig.stat().st_size > 1000


def test_folder_tokenizer_is_used(tmp_path):
    """A folder with a tokenizer: rows come from it, with no modulo note."""
    from tokenizers import Tokenizer, models, pre_tokenizers

    from lshsim.probe.text import tap_rows

    folder = _save(tmp_path)
    words = ["[UNK]", "[PAD]", *sorted({w for w in "the a of and to in is it that was".split()})]
    vocab = {w: i for i, w in enumerate(words)}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    fast = transformers.PreTrainedTokenizerFast(
        tokenizer_object=tok, unk_token="[UNK]", pad_token="[PAD]"
    )
    fast.save_pretrained(folder)
    model, tokenizer = load_hf_model(folder)
    tap = hf_tap(model, tokenizer=tokenizer)
    assert tap.notes == ()
    rows, replace = tap_rows(tap, length=8)
    assert rows.max() < len(words) and set(replace.tolist()) == set(range(2, len(words)))


@pytest.mark.parametrize("model_type", [*sorted(REFUSED)[:2], "bert"])
def test_unsupported_routers_are_refused_by_name(tmp_path, capsys, model_type):
    folder = tmp_path / model_type
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({"model_type": model_type}))
    assert main(["probe", "--hf", str(folder)]) == 2
    err = capsys.readouterr().err
    assert model_type in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_remote_code_is_refused(tmp_path):
    folder = tmp_path / "remote"
    folder.mkdir()
    config = {"model_type": "mixtral", "auto_map": {"AutoModel": "modeling.Model"}}
    (folder / "config.json").write_text(json.dumps(config))
    with pytest.raises(ValueError, match="remote code"):
        load_hf_model(folder)


def test_t5_flags_are_refused_with_hf(tmp_path, capsys):
    assert main(["probe", "--hf", str(tmp_path), "--lookup", "softmax"]) == 2
    assert "--lookup" in capsys.readouterr().err


def test_bf16_weights_are_routed_in_float32(tmp_path):
    folder = _save(tmp_path)
    model, _ = load_hf_model(folder, bf16=True)
    assert next(model.parameters()).dtype == torch.bfloat16
    tap = hf_tap(model)
    ids = np.random.default_rng(5).integers(3, VOCAB, size=(2, 10))
    cap = tap.capture(ids, np.ones(ids.shape, bool))["layers/0"]
    assert cap.inputs.dtype == np.float32
    w = tap.capture.gates[0][1].weight.detach().float().numpy()
    top = np.argmax(cap.inputs @ w.T, axis=-1)
    np.testing.assert_array_equal(cap.choice[..., 0], top)


def test_cli_tap_factory(capsys):
    args = ["probe", "--samples", "6", "--overlap", "0.5", "--length", "16", "--json"]
    assert main([*args, "--tap", "tests.probe.factories:make_tap", "--router-draws", "2"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["model"] == "embedding router" and [r["layer"] for r in data["rows"]] == ["mine/0"]
    for spec, says in (
        ("tests.probe.factories", "module:factory"),
        ("tests.probe.nowhere:make_tap", "cannot import"),
        ("tests.probe.factories:missing", "no callable"),
        ("tests.probe.factories:not_a_tap", "not a lshsim.probe.RouterTap"),
    ):
        assert main(["probe", "--tap", spec]) == 2
        err = capsys.readouterr().err
        assert says in err and "tap" in err and len(err.strip().splitlines()) == 1
    assert main(["probe", "--tap", "tests.probe.factories:make_tap", "--bf16"]) == 2
    assert "bf16: only with --hf" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("damage", "says"),
    [
        ("weights", "cannot load the model"),
        ("config", "cannot load the model"),
        ("tokenizer", "cannot load the tokenizer"),
    ],
)
def test_damaged_folders_are_one_line(tmp_path, capsys, damage, says):
    folder = _save(tmp_path)
    if damage == "weights":
        (folder / "model.safetensors").write_bytes(b"\x01\x02garbage")
    elif damage == "config":
        config = json.loads((folder / "config.json").read_text())
        (folder / "config.json").write_text(json.dumps({**config, "num_experts": "eight"}))
    else:
        (folder / "tokenizer.json").write_text("{}")
    capsys.readouterr()  # the save's progress bars
    assert main(["probe", "--hf", str(folder), "--samples", "4", "--overlap", "0.5"]) == 2
    err = capsys.readouterr().err
    assert says in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_a_tap_whose_choices_miss_its_top_k_is_refused():
    from lshsim.probe import Capture, RouterTap
    from lshsim.probe.measure import capture_rows

    def capture(ids, mask):  # says top-2, returns one expert per token
        return {
            "r/0": Capture(choice=np.zeros(ids.shape, np.int64), inputs=np.ones((*ids.shape, 3)))
        }

    tap = RouterTap("liar", 4, 2, "voronoi", capture)
    with pytest.raises(ValueError, match=r"choice must be integer \(2, 3, 2\)"):
        capture_rows(tap, np.ones((2, 3), np.int64))
