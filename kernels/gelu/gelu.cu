// GELU two ways, as deep-learning kernels write them (no --use_fast_math; libdevice erff and
// tanhf, the latter built on ex2.approx and rcp.approx):
//   gelu_erf:  0.5 x (1 + erf(x / sqrt(2)))                      (the definition)
//   gelu_tanh: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))   (the tanh approximation)
// They are different functions: the pair is refuted, for every ex2.approx and rcp.approx
// within the PTX ISA's error bounds (verifier/approx_bounds.py).

extern "C" __global__ void gelu_erf(const float* x, float* out, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        const float v = x[i];
        out[i] = 0.5f * v * (1.0f + erff(v * 0.70710678118654752f));
    }
}

extern "C" __global__ void gelu_tanh(const float* x, float* out, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        const float v = x[i];
        const float u = 0.7978845608028654f * (v + 0.044715f * v * v * v);
        out[i] = 0.5f * v * (1.0f + tanhf(u));
    }
}
