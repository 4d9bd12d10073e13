// BUG: off-by-one in the right halo's bounds check (right <= n instead of right < n).
// When a block's right halo starts exactly at n it loads in[n], one past the end of in,
// and that value leaks into the last outputs.
constexpr int R = 3;
constexpr int BLOCK = 256;

extern "C" __global__ void stencil_shared_halo_oob(const int* __restrict__ in, int* __restrict__ out, int n)
{
    __shared__ int tile[BLOCK + 2 * R];
    int gi = blockIdx.x * BLOCK + threadIdx.x;
    int li = threadIdx.x + R;
    tile[li] = (gi < n) ? in[gi] : 0;
    if (threadIdx.x < R) {
        int left = gi - R;
        int right = gi + BLOCK;
        tile[li - R] = (left >= 0) ? in[left] : 0;
        tile[li + BLOCK] = (right <= n) ? in[right] : 0;
    }
    __syncthreads();
    if (gi < n) {
        int sum = 0;
#pragma unroll
        for (int j = -R; j <= R; ++j)
            sum += tile[li + j];
        out[gi] = sum;
    }
}
