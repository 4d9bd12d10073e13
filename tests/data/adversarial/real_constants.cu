// Mode real reads each float operation as the exact real operation it rounds, constants
// computed at a fixed launch shape included (semantics/domains/real_exactness.py): 1.0f / n
// folded to 0x3EAAAAAB would make x * (1.0f / n) differ from x / n as reals.

extern "C" __global__ void times_inverse(const float* x, float* out, int n) {
  int i = threadIdx.x;
  float inv = 1.0f / (float)n;
  if (i < n) out[i] = x[i] * inv;
}
extern "C" __global__ void divided(const float* x, float* out, int n) {
  int i = threadIdx.x;
  if (i < n) out[i] = x[i] / (float)n;
}

// A conversion of a large integer rounds too: (float)16777217 is 16777216. As reals, x * n and
// x * ((n - 1) + 1) are one value; folding (float)n to its rounded constant would make them
// differ by x (a wrong refutation in mode real).
extern "C" __global__ void times_count(const float* x, float* out, int n, int m) {
  int i = threadIdx.x;
  if (i < m) out[i] = x[i] * (float)n;
}
extern "C" __global__ void times_count_plus_one(const float* x, float* out, int n, int m) {
  int i = threadIdx.x;
  if (i < m) out[i] = x[i] * ((float)(n - 1) + 1.0f);
}
