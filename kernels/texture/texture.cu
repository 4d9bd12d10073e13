// Textures and surfaces as image code uses them: each kernel reads through a texture or
// surface object what its reference reads with plain loads (the pairs: *.toml here; also
// tests/golden/test_texture_pairs.py). Planted bugs are marked "Planted bug".
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

// 3-D: copy a w x h x d volume by plain loads, and through a point-sampled 3-D texture.
extern "C" __global__ void copy3d_ref(const float* vol, float* out, int w, int h, int d) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y, z = blockIdx.z;
    if (x >= w) return;
    int i = (z * h + y) * w + x;
    out[i] = vol[i];
}
extern "C" __global__ void copy3d_tex(cudaTextureObject_t t, float* out, int w, int h, int d) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y, z = blockIdx.z;
    if (x >= w) return;
    out[(z * h + y) * w + x] = tex3D<float>(t, x + 0.5f, y + 0.5f, z + 0.5f);
}
// Planted bug: y and z swapped (the same texels only where h == d and y == z).
extern "C" __global__ void copy3d_tex_swapped(cudaTextureObject_t t, float* out, int w, int h,
                                              int d) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y, z = blockIdx.z;
    if (x >= w) return;
    out[(z * h + y) * w + x] = tex3D<float>(t, x + 0.5f, z + 0.5f, y + 0.5f);
}

// Bilinear 2x upsample through a texture with cudaFilterModeLinear: output pixel (x, y) of
// the 2w x 2h image samples the w x h texture at ((x + 0.5) / 2, (y + 0.5) / 2).
extern "C" __global__ void upsample_tex(cudaTextureObject_t t, float* out, int w, int h) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
    if (x >= 2 * w) return;
    out[y * 2 * w + x] = tex2D<float>(t, (x + 0.5f) * 0.5f, (y + 0.5f) * 0.5f);
}
// The same, two horizontally adjacent output pixels per thread.
extern "C" __global__ void upsample_tex_pairs(cudaTextureObject_t t, float* out, int w, int h) {
    int p = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
    if (p >= w) return;
    float v = (y + 0.5f) * 0.5f;
    float* row = out + y * 2 * w;
    for (int k = 0; k < 2; ++k) {
        int x = 2 * p + k;
        row[x] = tex2D<float>(t, (x + 0.5f) * 0.5f, v);
    }
}
// Planted bug: the pixel centre's +0.5 is missing (the sample moves by a quarter texel).
extern "C" __global__ void upsample_tex_corner(cudaTextureObject_t t, float* out, int w, int h) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
    if (x >= 2 * w) return;
    out[y * 2 * w + x] = tex2D<float>(t, x * 0.5f, y * 0.5f);
}

// tex2Dgather (tld4): the 2x2 footprint around texel corner (x + 1, y + 1), as four point
// fetches and as one gather (x: (x, y+1), y: (x+1, y+1), z: (x+1, y), w: (x, y)).
extern "C" __global__ void quad_ref(cudaTextureObject_t t, float* out, int w, int h) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
    if (x >= w) return;
    float* o = out + 4 * (y * w + x);
    o[0] = tex2D<float>(t, x + 0.5f, y + 1.5f);
    o[1] = tex2D<float>(t, x + 1.5f, y + 1.5f);
    o[2] = tex2D<float>(t, x + 1.5f, y + 0.5f);
    o[3] = tex2D<float>(t, x + 0.5f, y + 0.5f);
}
extern "C" __global__ void quad_gather(cudaTextureObject_t t, float* out, int w, int h) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
    if (x >= w) return;
    float4 g = tex2Dgather<float4>(t, x + 1.0f, y + 1.0f, 0);
    float* o = out + 4 * (y * w + x);
    o[0] = g.x;
    o[1] = g.y;
    o[2] = g.z;
    o[3] = g.w;
}
// Planted bug: the gather read as if it started at the upper left (T(x, y) first).
extern "C" __global__ void quad_gather_order(cudaTextureObject_t t, float* out, int w, int h) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
    if (x >= w) return;
    float4 g = tex2Dgather<float4>(t, x + 1.0f, y + 1.0f, 0);
    float* o = out + 4 * (y * w + x);
    o[0] = g.w;
    o[1] = g.z;
    o[2] = g.y;
    o[3] = g.x;
}
