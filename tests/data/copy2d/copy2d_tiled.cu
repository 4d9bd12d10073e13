// The same copy through a 16x16 shared-memory tile read back by the same thread's neighbour
// row: each CTA stages its tile under the bounds check, then threads write the element their
// lane staged, so every shared read is of a word written under the same condition.
extern "C" __global__ void copy2d_tiled(const float* in, float* out, int rows, int cols)
{
    __shared__ float tile[16][16];
    int x = blockIdx.x * 16 + threadIdx.x;
    int y = blockIdx.y * 16 + threadIdx.y;
    if (x < cols && y < rows)
        tile[threadIdx.y][threadIdx.x] = in[y * cols + x];
    __syncthreads();
    // thread (tx, ty) writes the element staged by thread (15 - tx, ty)
    int sx = 15 - threadIdx.x;
    int ox = blockIdx.x * 16 + sx;
    if (ox < cols && y < rows)
        out[y * cols + ox] = tile[threadIdx.y][sx];
}
