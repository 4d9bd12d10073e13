// Transpose through a 32x32 shared-memory tile so that both the global reads and the global
// writes coalesce. Blocks are 32x8 threads; each thread moves 4 elements.
// (The column reads tile[threadIdx.x][...] hit 32-way bank conflicts; see transpose_padded.)
constexpr int TILE = 32;
constexpr int BLOCK_ROWS = 8;

extern "C" __global__ void transpose_tiled(const float* __restrict__ in, float* __restrict__ out, int rows, int cols)
{
    __shared__ float tile[TILE][TILE];
    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += BLOCK_ROWS)
        if (x < cols && y + j < rows)
            tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * cols + x];
    __syncthreads();
    x = blockIdx.y * TILE + threadIdx.x;   // column of out
    y = blockIdx.x * TILE + threadIdx.y;   // row of out
    for (int j = 0; j < TILE; j += BLOCK_ROWS)
        if (x < rows && y + j < cols)
            out[(y + j) * rows + x] = tile[threadIdx.x][threadIdx.y + j];
}
