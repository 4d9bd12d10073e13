"""PTX parse throughput, in PTX lines per second.

    .venv/bin/python bench/parse.py [--profile] [--lines N] [--repeat R]

Measures, best of R runs each:
  (a) every .ptx file under kernels/ (if any), parsed one by one;
  (b) one large module of >= N lines (default 100,000), made of renamed copies of the nvcc
      output of a mid-size CUDA file (compiled now if nvcc is on PATH, else a built-in kernel).
Printed in the same run, for context: the time of tokenizing alone
(semantics.ptx.lexer.tokenize) and of one plain `re.findall` over the text, so the parser's
own overhead shows. Target: >= 100,000 lines/s on (b).
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from semantics.ir.nodes import Function, Variable  # noqa: E402
from semantics.ptx import parse_ptx  # noqa: E402
from semantics.ptx.lexer import tokenize  # noqa: E402

TARGET = 100_000

# A mid-size CUDA file: the kernel shapes of the corpus (tiled matmul, shared-memory and
# shuffle reductions, softmax, scan, histogram, stencil), about 1,000 lines of PTX.
CUDA_SOURCE = r"""
#define TILE 16
__global__ void matmul_tiled(const float* A, const float* B, float* C, int n) {
  __shared__ float As[TILE][TILE], Bs[TILE][TILE];
  int row = blockIdx.y * TILE + threadIdx.y, col = blockIdx.x * TILE + threadIdx.x;
  float acc = 0.f;
  for (int t = 0; t < (n + TILE - 1) / TILE; ++t) {
    As[threadIdx.y][threadIdx.x] = (row < n && t * TILE + threadIdx.x < n) ? A[row * n + t * TILE + threadIdx.x] : 0.f;
    Bs[threadIdx.y][threadIdx.x] = (col < n && t * TILE + threadIdx.y < n) ? B[(t * TILE + threadIdx.y) * n + col] : 0.f;
    __syncthreads();
    for (int k = 0; k < TILE; ++k) acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
    __syncthreads();
  }
  if (row < n && col < n) C[row * n + col] = acc;
}
__global__ void reduce_shared(const float* in, float* out, int n) {
  extern __shared__ float s[];
  unsigned t = threadIdx.x, i = blockIdx.x * blockDim.x * 2 + t;
  float v = 0.f;
  if (i < n) v = in[i];
  if (i + blockDim.x < n) v += in[i + blockDim.x];
  s[t] = v; __syncthreads();
  for (unsigned k = blockDim.x / 2; k > 32; k >>= 1) { if (t < k) s[t] += s[t + k]; __syncthreads(); }
  if (t < 32) {
    v = s[t] + s[t + 32];
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffff, v, o);
    if (t == 0) atomicAdd(out, v);
  }
}
__global__ void softmax_rows(const float* x, float* y, int cols) {
  __shared__ float red[32];
  const float* r = x + blockIdx.x * cols; float* o = y + blockIdx.x * cols;
  float m = -INFINITY;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) m = fmaxf(m, r[c]);
  for (int d = 16; d > 0; d >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffff, m, d));
  if ((threadIdx.x & 31) == 0) red[threadIdx.x >> 5] = m; __syncthreads();
  if (threadIdx.x < 32) { m = threadIdx.x < blockDim.x / 32 ? red[threadIdx.x] : -INFINITY;
    for (int d = 16; d > 0; d >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffff, m, d));
    if (threadIdx.x == 0) red[0] = m; }
  __syncthreads(); m = red[0]; __syncthreads();
  float s = 0.f;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) s += __expf(r[c] - m);
  for (int d = 16; d > 0; d >>= 1) s += __shfl_xor_sync(0xffffffff, s, d);
  if ((threadIdx.x & 31) == 0) red[threadIdx.x >> 5] = s; __syncthreads();
  if (threadIdx.x == 0) { float t = 0; for (int w = 0; w < blockDim.x / 32; ++w) t += red[w]; red[0] = t; }
  __syncthreads(); s = red[0];
  for (int c = threadIdx.x; c < cols; c += blockDim.x) o[c] = __expf(r[c] - m) / s;
}
__global__ void scan_hillis_steele(const int* in, int* out, int n) {
  __shared__ int buf[2][256];
  int t = threadIdx.x, p = 0;
  buf[0][t] = t < n ? in[t] : 0; __syncthreads();
  for (int o = 1; o < 256; o <<= 1) {
    buf[1 - p][t] = buf[p][t] + (t >= o ? buf[p][t - o] : 0);
    p = 1 - p; __syncthreads();
  }
  if (t < n) out[t] = buf[p][t];
}
__global__ void histogram_shared(const unsigned char* d, unsigned* h, int n) {
  __shared__ unsigned sh[256];
  sh[threadIdx.x] = 0; __syncthreads();
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) atomicAdd(&sh[d[i]], 1u);
  __syncthreads();
  atomicAdd(&h[threadIdx.x], sh[threadIdx.x]);
}
__global__ void stencil_shared(const float* in, float* out, int n) {
  __shared__ float t[256 + 2];
  int g = blockIdx.x * blockDim.x + threadIdx.x, l = threadIdx.x + 1;
  t[l] = g < n ? in[g] : 0.f;
  if (threadIdx.x == 0) t[0] = g > 0 ? in[g - 1] : 0.f;
  if (threadIdx.x == blockDim.x - 1) t[l + 1] = g + 1 < n ? in[g + 1] : 0.f;
  __syncthreads();
  if (g < n) out[g] = 0.25f * t[l - 1] + 0.5f * t[l] + 0.25f * t[l + 1];
}
__global__ void vector_add_vec4(const float4* a, const float4* b, float4* c, int n4) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n4) { float4 x = a[i], y = b[i]; c[i] = make_float4(x.x + y.x, x.y + y.y, x.z + y.z, x.w + y.w); }
}
__global__ void transpose_padded(const float* in, float* out, int w, int h) {
  __shared__ float tile[32][33];
  int x = blockIdx.x * 32 + threadIdx.x, y = blockIdx.y * 32 + threadIdx.y;
  for (int j = 0; j < 32; j += 8) if (x < w && y + j < h) tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * w + x];
  __syncthreads();
  x = blockIdx.y * 32 + threadIdx.x; y = blockIdx.x * 32 + threadIdx.y;
  for (int j = 0; j < 32; j += 8) if (x < h && y + j < w) out[(y + j) * h + x] = tile[threadIdx.x][threadIdx.y + j];
}
"""

# Used when nvcc is absent: nvcc 13.0 output of a shared-memory reduction.
FALLBACK_PTX = (Path(__file__).resolve().parents[1] / "tests" / "data"
                / "reduce_sample.ptx").read_text()

# The peer for "how fast can one pass over the text go": one regex, no structure.
_PLAIN = re.compile(r"[^\s,;\[\]{}()]+|\S")


def lines_of(text: str) -> int:
    return text.count("\n") + (not text.endswith("\n"))


def best_of(repeat: int, fn) -> float:
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def seed_ptx() -> tuple[str, str]:
    """(PTX text, where it came from)."""
    nvcc = shutil.which("nvcc")
    if nvcc:
        with tempfile.TemporaryDirectory() as d:
            src, out = Path(d, "bench.cu"), Path(d, "bench.ptx")
            src.write_text(CUDA_SOURCE)
            r = subprocess.run([nvcc, "-ptx", "-arch=sm_90", "-O3", str(src), "-o", str(out)],
                               capture_output=True, text=True)
            if r.returncode == 0:
                return out.read_text(), "nvcc -ptx -arch=sm_90 -O3 of the built-in CUDA file"
            print(f"  (nvcc failed, using the built-in kernel: {r.stderr.strip()[:200]})")
    return FALLBACK_PTX, "the built-in reduction kernel (nvcc not found)"


def replicate(seed: str, min_lines: int) -> str:
    """One module: the seed's header once, then copies of its body with every module-level
    name (functions, variables) renamed, until the module has at least `min_lines` lines."""
    m = parse_ptx(seed, "seed.ptx")
    names = [i.name for i in m.items if isinstance(i, (Function, Variable))]
    head_end = re.search(r"^\s*\.address_size\s+\d+\s*$", seed, re.M)
    if head_end:
        header, body = seed[:head_end.end()] + "\n", seed[head_end.end():]
    else:
        header = f".version {m.version}\n.target {', '.join(m.target)}\n"
        body = seed.split("\n", 2)[2]
    alternatives = "|".join(map(re.escape, sorted(set(names), key=len, reverse=True)))
    pattern = re.compile(r"(?<![\w$])(" + alternatives + r")(?![\w$])")
    per_copy = max(lines_of(body), 1)
    copies = -(-min_lines // per_copy)
    parts = [header]
    for k in range(copies):
        parts.append(pattern.sub(lambda mt: f"{mt.group(1)}_c{k}", body) if names else body)
    return "".join(parts)


def report(label: str, lines: int, seconds: float) -> None:
    rate = lines / seconds if seconds > 0 else float("inf")
    print(f"  {label:<34} {seconds * 1000:9.1f} ms   {rate:>12,.0f} lines/s")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lines", type=int, default=100_000, help="size of the generated module")
    ap.add_argument("--repeat", type=int, default=3, help="runs per measurement (best is kept)")
    ap.add_argument("--profile", action="store_true",
                    help="print the top cProfile entries of parsing the generated module")
    args = ap.parse_args(argv)
    print(f"python {sys.version.split()[0]}; best of {args.repeat}; target >= {TARGET:,} lines/s")

    # (a) the corpus
    files = sorted((REPO / "kernels").rglob("*.ptx")) if (REPO / "kernels").is_dir() else []
    if files:
        texts = [(str(p), p.read_text()) for p in files]
        n = sum(lines_of(t) for _, t in texts)
        print(f"\n(a) kernels/: {len(files)} .ptx files, {n:,} lines")
        report("parse_ptx, file by file", n,
               best_of(args.repeat, lambda: [parse_ptx(t, p) for p, t in texts]))
        report("  peer: tokenize only", n,
               best_of(args.repeat, lambda: [tokenize(t, p) for p, t in texts]))
    else:
        print("\n(a) kernels/: no .ptx files (skipped)")

    # (b) one large module
    seed, origin = seed_ptx()
    big = replicate(seed, args.lines)
    n = lines_of(big)
    print(f"\n(b) generated module: {n:,} lines, {len(big) / 1e6:.1f} MB "
          f"({lines_of(seed):,}-line seed: {origin})")
    t_parse = best_of(args.repeat, lambda: parse_ptx(big, "big.ptx"))
    t_tok = best_of(args.repeat, lambda: tokenize(big, "big.ptx"))
    t_re = best_of(args.repeat, lambda: _PLAIN.findall(big))
    report("parse_ptx", n, t_parse)
    report("  peer: tokenize only", n, t_tok)
    report("  peer: one re.findall over the text", n, t_re)
    print(f"  parser beyond tokenizing: {(t_parse - t_tok) * 1000:.1f} ms "
          f"({t_parse / t_tok:.1f}x tokenize, {t_parse / t_re:.1f}x a bare re.findall)")
    rate = n / t_parse
    verdict = "meets" if rate >= TARGET else "BELOW"
    print(f"\n{verdict} the target: {rate:,.0f} lines/s vs >= {TARGET:,} lines/s")

    if args.profile:
        prof = cProfile.Profile()
        prof.enable()
        parse_ptx(big, "big.ptx")
        prof.disable()
        print("\ncProfile of one parse of the generated module (top 25 by own time):")
        pstats.Stats(prof, stream=sys.stdout).strip_dirs().sort_stats("tottime").print_stats(25)
    return 0


if __name__ == "__main__":
    sys.exit(main())
