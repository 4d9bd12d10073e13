// Reference: 256-bin histogram of bytes, one global atomic increment per input element.
// The counts are added to whatever bins already holds.
extern "C" __global__ void histogram_global(const unsigned char* data, unsigned int* bins, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        atomicAdd(&bins[data[i]], 1u);
}
