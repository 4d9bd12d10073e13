// Approximate instructions are uninterpreted functions; a refutation must hold for every
// function within the error bound the PTX ISA documents (verifier/approx_bounds.py).

// e^x the CUDA way: ex2.approx(x * log2(e)).
extern "C" __global__ void exp_fast(const float* x, float* out, int n) {
  int i = threadIdx.x;
  if (i < n) out[i] = __expf(x[i]);
}

// A planted bug: the prescale by log2(e) forgotten, 2^x instead of e^x. Within 2 ulp of
// 2^x and of e^x, no ex2.approx makes them agree: refuted.
extern "C" __global__ void exp_no_prescale(const float* x, float* out, int n) {
  int i = threadIdx.x;
  if (i < n) out[i] = exp2f(x[i]);
}

// (e^(x/2))^2: e^x as reals, bits apart by rounding; some ex2.approx within its 2 ulp makes
// the two agree at every input the solver tries: Inconclusive, never refuted.
extern "C" __global__ void exp_halves(const float* x, float* out, int n) {
  int i = threadIdx.x;
  if (i < n) { float h = __expf(0.5f * x[i]); out[i] = h * h; }
}

// The same bug with a float scalar factor, found by testing: the emulator's difference counts
// because it holds for every ex2.approx within the ISA's bounds at those inputs and that `a`.
extern "C" __global__ void exp_scaled(const float* x, float* out, float a, int n) {
  int i = threadIdx.x;
  if (i < n) out[i] = __expf(x[i] * a);
}

extern "C" __global__ void exp_scaled_no_prescale(const float* x, float* out, float a, int n) {
  int i = threadIdx.x;
  if (i < n) out[i] = exp2f(x[i] * a);
}
