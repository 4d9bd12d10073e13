// Reference for the gate tests: a plain 32-bit add.
extern "C" __global__ void add(const unsigned int* a, const unsigned int* b, unsigned int* c, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        c[i] = a[i] + b[i];
}
