// BUG: stages only the tile's in-bounds words, then reads the mirrored word under the
// *reader's* bounds check: at a ragged edge it reads a word no thread wrote.
extern "C" __global__ void copy2d_tiled_uninit(const float* in, float* out, int rows, int cols)
{
    __shared__ float tile[16][16];
    int x = blockIdx.x * 16 + threadIdx.x;
    int y = blockIdx.y * 16 + threadIdx.y;
    if (x < cols && y < rows)
        tile[threadIdx.y][threadIdx.x] = in[y * cols + x];
    __syncthreads();
    if (x < cols && y < rows)
        out[y * cols + x] = tile[threadIdx.y][15 - threadIdx.x];
}
