// BUG (for sizes that are not multiples of 32): tiled transpose without the bounds checks.
// Edge tiles read and write past the ends of in and out. Correct when rows and cols are
// both multiples of TILE.
constexpr int TILE = 32;
constexpr int BLOCK_ROWS = 8;

extern "C" __global__ void transpose_tiled_nobounds(const float* __restrict__ in, float* __restrict__ out,
                                                    int rows, int cols)
{
    __shared__ float tile[TILE][TILE];
    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += BLOCK_ROWS)
        tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * cols + x];
    __syncthreads();
    x = blockIdx.y * TILE + threadIdx.x;
    y = blockIdx.x * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += BLOCK_ROWS)
        out[(y + j) * rows + x] = tile[threadIdx.x][threadIdx.y + j];
}
