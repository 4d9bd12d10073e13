// Layer normalization as three launches, the way a reference is often written: the row
// means, then each row's 1/sqrt(variance + eps), both into scratch buffers, then the
// normalization, one thread per element (kernels/layernorm/three_launch.toml).

extern "C" __global__ void ln_mean(const float* in, float* mean, int rows, int cols)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows) {
        float s = 0.0f;
        for (int c = 0; c < cols; c++)
            s += in[r * cols + c];
        mean[r] = s / cols;
    }
}

extern "C" __global__ void ln_rstd(const float* in, const float* mean, float* rstd, int rows,
                                   int cols, float eps)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows) {
        float q = 0.0f;
        for (int c = 0; c < cols; c++) {
            float d = in[r * cols + c] - mean[r];
            q += d * d;
        }
        rstd[r] = rsqrtf(q / cols + eps);
    }
}

// Planted bug: the unbiased variance (divided by cols - 1), where layernorm uses the biased.
extern "C" __global__ void ln_rstd_unbiased(const float* in, const float* mean, float* rstd,
                                            int rows, int cols, float eps)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows) {
        float q = 0.0f;
        for (int c = 0; c < cols; c++) {
            float d = in[r * cols + c] - mean[r];
            q += d * d;
        }
        rstd[r] = rsqrtf(q / (cols - 1) + eps);
    }
}

extern "C" __global__ void ln_normalize(const float* in, const float* mean, const float* rstd,
                                        const float* gamma, const float* beta, float* out,
                                        int rows, int cols)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < rows * cols) {
        int r = i / cols, c = i % cols;
        out[i] = (in[i] - mean[r]) * rstd[r] * gamma[c] + beta[c];
    }
}
