// BUG: adds the CTA's y index (from the row) where stamp.cu adds its x index: equal in the
// CTAs on the diagonal only, so only a launch of two CTAs or more shows it.
extern "C" __global__ void stamp_row(const unsigned* in, unsigned* out, int rows, int cols)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < cols && y < rows)
        out[y * cols + x] = in[y * cols + x] + ((unsigned)y >> 4);
}
