// 1-D radius-3 stencil through shared memory: each block of 256 threads stages its 256
// elements plus a 3-element halo on each side (0 outside [0, n)), then sums from the tile.
constexpr int R = 3;
constexpr int BLOCK = 256;

extern "C" __global__ void stencil_shared(const int* __restrict__ in, int* __restrict__ out, int n)
{
    __shared__ int tile[BLOCK + 2 * R];
    int gi = blockIdx.x * BLOCK + threadIdx.x;
    int li = threadIdx.x + R;
    tile[li] = (gi < n) ? in[gi] : 0;
    if (threadIdx.x < R) {
        int left = gi - R;
        int right = gi + BLOCK;
        tile[li - R] = (left >= 0) ? in[left] : 0;
        tile[li + BLOCK] = (right < n) ? in[right] : 0;
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
