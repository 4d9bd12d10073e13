// Kernel pairs for textures and surfaces (tests/golden/test_texture_pairs.py; specs *.toml).
// nvcc -arch=sm_80 -ptx texture.cu -o texture.ptx
#include <cuda_runtime.h>

__device__ int clampi(int v, int lo, int hi) { return v < lo ? lo : (v > hi ? hi : v); }

// Reference: a horizontal 3-tap sum with the edge texels repeated (clamp), by plain loads.
extern "C" __global__ void blur_ref(const float* img, float* out, int w, int h) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
    if (x >= w) return;
    const float* row = img + y * w;
    float s = row[clampi(x - 1, 0, w - 1)] + row[x];
    out[y * w + x] = s + row[clampi(x + 1, 0, w - 1)];
}

// The same through a texture object (address clamp, point filter, unnormalized).
extern "C" __global__ void blur_tex(cudaTextureObject_t t, float* out, int w, int h) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
    if (x >= w) return;
    float fy = y + 0.5f;
    float s = tex2D<float>(t, x - 0.5f, fy) + tex2D<float>(t, x + 0.5f, fy);
    out[y * w + x] = s + tex2D<float>(t, x + 1.5f, fy);
}

// Planted bug: the left tap at x - 1.5 reads texel x - 2.
extern "C" __global__ void blur_tex_offbyone(cudaTextureObject_t t, float* out, int w, int h) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
    if (x >= w) return;
    float fy = y + 0.5f;
    float s = tex2D<float>(t, x - 1.5f, fy) + tex2D<float>(t, x + 0.5f, fy);
    out[y * w + x] = s + tex2D<float>(t, x + 1.5f, fy);
}

// Normalized coordinates with wrap: texel (x + 1) mod w of each row.
extern "C" __global__ void shift_ref(const float* img, float* out, int w, int h) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
    if (x >= w) return;
    out[y * w + x] = img[y * w + (x + 1) % w];
}
extern "C" __global__ void shift_tex(cudaTextureObject_t t, float* out, int w, int h) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
    if (x >= w) return;
    out[y * w + x] = tex2D<float>(t, (x + 1.5f) / w, (y + 0.5f) / h);
}

// Surfaces: scale an image by 2, by plain loads and stores and through surfaces (x in bytes).
extern "C" __global__ void scale_ref(const float* in, float* out, int w, int h) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
    if (x >= w) return;
    out[y * w + x] = 2.0f * in[y * w + x];
}
extern "C" __global__ void scale_surf(cudaSurfaceObject_t in, cudaSurfaceObject_t out, int w,
                                      int h) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
    if (x >= w) return;
    float v = surf2Dread<float>(in, x * 4, y);
    surf2Dwrite(2.0f * v, out, x * 4, y);
}
// Planted bug: the x coordinate in elements, not bytes (reads and writes the wrong texels;
// .trap faults past the first quarter of a row).
extern "C" __global__ void scale_surf_elements(cudaSurfaceObject_t in, cudaSurfaceObject_t out,
                                               int w, int h) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
    if (x >= w) return;
    float v = surf2Dread<float>(in, x, y);
    surf2Dwrite(2.0f * v, out, x, y);
}
