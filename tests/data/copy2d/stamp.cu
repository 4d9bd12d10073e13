// Reference for the one-symbolic-CTA tests (verifier/symbolic_cta.py): each element is the
// input plus its CTA's x index, a value of %ctaid itself.
extern "C" __global__ void stamp(const unsigned* in, unsigned* out, int rows, int cols)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < cols && y < rows)
        out[y * cols + x] = in[y * cols + x] + blockIdx.x;
}
