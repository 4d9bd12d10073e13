// Mode real reads expf as an opaque 2^x and fmaxf as an opaque max (verifier/real_exp.py).
// A solver model of "the readings differ" may choose values those functions never take;
// only a difference of the true real functions is a counterexample (verifier/real_check.py).

// exp(a + b), with a and b away from zero so that the floats round.
extern "C" __global__ void exp_of_sum(const float* x, const float* y, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float a = x[i] + 1.0f, b = y[i] + 1.0f;
  if (i < n) out[i] = expf(a + b);
}

// max(e^a e^b, e^(a+b) / 2) is e^(a+b) as reals, through max's definition and 2^x > 0,
// which the real-arithmetic check adds (RealTranslator.facts): proved.
extern "C" __global__ void max_of_halves(const float* x, const float* y, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float a = x[i] + 1.0f, b = y[i] + 1.0f;
  if (i < n) out[i] = fmaxf(expf(a) * expf(b), 0.5f * expf(a + b));
}

// max(e^a e^b, 2 e^(a+b)) is 2 e^(a+b): a real difference, refuted.
extern "C" __global__ void max_of_doubles(const float* x, const float* y, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float a = x[i] + 1.0f, b = y[i] + 1.0f;
  if (i < n) out[i] = fmaxf(expf(a) * expf(b), 2.0f * expf(a + b));
}

// e^max(a, b) and max(e^a, e^b) are equal as reals only because exp is increasing, which
// nothing assumes: the solver's models of their difference choose values of 2^x no true
// function has, so the verdict is Inconclusive, never a rounding difference as a refutation.
extern "C" __global__ void exp_of_max(const float* x, const float* y, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float a = x[i] + 1.0f, b = y[i] + 1.0f;
  if (i < n) out[i] = expf(fmaxf(a, b));
}

extern "C" __global__ void max_of_exps(const float* x, const float* y, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float a = x[i] + 1.0f, b = y[i] + 1.0f;
  if (i < n) out[i] = fmaxf(expf(a), expf(b));
}
