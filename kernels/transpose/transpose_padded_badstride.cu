// BUG: padded tile kept as a flat array of TILE * (TILE + 1) floats. The store uses the padded
// row stride TILE + 1 but the transposed read uses TILE, so it reads the wrong element
// (off by threadIdx.x positions).
constexpr int TILE = 32;
constexpr int BLOCK_ROWS = 8;

extern "C" __global__ void transpose_padded_badstride(const float* __restrict__ in, float* __restrict__ out,
                                                      int rows, int cols)
{
    __shared__ float tile[TILE * (TILE + 1)];
    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += BLOCK_ROWS)
        if (x < cols && y + j < rows)
            tile[(threadIdx.y + j) * (TILE + 1) + threadIdx.x] = in[(y + j) * cols + x];
    __syncthreads();
    x = blockIdx.y * TILE + threadIdx.x;
    y = blockIdx.x * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += BLOCK_ROWS)
        if (x < rows && y + j < cols)
            out[(y + j) * rows + x] = tile[threadIdx.x * TILE + threadIdx.y + j];
}
