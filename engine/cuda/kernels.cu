// outcore's GPU kernels, compiled with NVRTC at first use (engine/cuda).
// They mirror engine/nn's CPU code operation for operation, so a GPU step
// computes what the CPU trainer computes within float rounding: the same
// mean aggregation, the same counter-based dropout bits (engine/nn
// dropout.go), the same softmax cross-entropy in double and the same Adam.
// Row-major float32 tensors; int32 CSR blocks (indptr over destinations,
// indices = local source ids).

typedef unsigned long long u64;

extern "C" {

// out[r, :] = x[idx[r], :] for r < n (rows of width d).
__global__ void gather_rows(float* out, const float* x, const int* idx, int n, int d) {
	long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	long long total = (long long)n * d;
	for (; t < total; t += (long long)gridDim.x * blockDim.x) {
		int r = (int)(t / d), c = (int)(t % d);
		out[t] = x[(long long)idx[r] * d + c];
	}
}

// SAGE forward, aggregate first: cat[i] = [x[i] | mean_{e in row i} x[indices[e]]]
// for the nd destinations (a row without edges aggregates to 0).
__global__ void sage_cat(float* cat, const float* x, const int* indptr, const int* indices, int nd, int in) {
	long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	long long total = (long long)nd * in;
	for (; t < total; t += (long long)gridDim.x * blockDim.x) {
		int i = (int)(t / in), c = (int)(t % in);
		int s = indptr[i], e = indptr[i + 1];
		float acc = 0.f;
		for (int k = s; k < e; k++) acc += x[(long long)indices[k] * in + c];
		float m = e > s ? acc * (1.f / (float)(e - s)) : 0.f;
		cat[(long long)i * 2 * in + c] = x[(long long)i * in + c];
		cat[(long long)i * 2 * in + in + c] = m;
	}
}

// SAGE backward into dx (zeroed, ns rows): dx[i] += dcat[i, :in] and, for
// every edge (i <- j), dx[j] += dcat[i, in:] / deg(i).
__global__ void sage_cat_back(float* dx, const float* dcat, const int* indptr, const int* indices, int nd, int in) {
	long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	long long total = (long long)nd * in;
	for (; t < total; t += (long long)gridDim.x * blockDim.x) {
		int i = (int)(t / in), c = (int)(t % in);
		int s = indptr[i], e = indptr[i + 1];
		atomicAdd(&dx[(long long)i * in + c], dcat[(long long)i * 2 * in + c]);
		if (e > s) {
			float g = dcat[(long long)i * 2 * in + in + c] * (1.f / (float)(e - s));
			for (int k = s; k < e; k++) atomicAdd(&dx[(long long)indices[k] * in + c], g);
		}
	}
}

// y[r, c] += b[c]
__global__ void add_bias(float* y, const float* b, int n, int d) {
	long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	long long total = (long long)n * d;
	for (; t < total; t += (long long)gridDim.x * blockDim.x) y[t] += b[t % d];
}

// y[i] = 1 everywhere (the ones vector of the bias-gradient GEMM).
__global__ void fill(float* y, float v, int n) {
	int t = blockIdx.x * blockDim.x + threadIdx.x;
	for (; t < n; t += gridDim.x * blockDim.x) y[t] = v;
}

__device__ __forceinline__ u64 splitmix64(u64 x) {
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

// ReLU then dropout with engine/nn's bits: element i keeps when the 16-bit
// lane (i & 3) of splitmix64(key ^ (i>>2)*0xd1342543de82ef95) is >= thr.
__global__ void relu_drop_fwd(float* y, long long n, int drop, unsigned thr, float scale, u64 key) {
	long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	for (; t < n; t += (long long)gridDim.x * blockDim.x) {
		float v = fmaxf(y[t], 0.f);
		if (drop) {
			u64 bits = splitmix64(key ^ (u64)(t >> 2) * 0xd1342543de82ef95ULL);
			unsigned lane = (unsigned)(bits >> (16 * (t & 3))) & 0xffffu;
			v = lane >= thr ? v * scale : 0.f;
		}
		y[t] = v;
	}
}

// g *= out > 0 ? scale : 0 (ReLU and dropout backward; out is the
// forward's output after dropout).
__global__ void relu_drop_bwd(float* g, const float* out, long long n, float scale) {
	long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	for (; t < n; t += (long long)gridDim.x * blockDim.x) g[t] = out[t] > 0.f ? g[t] * scale : 0.f;
}

// Softmax cross-entropy per row (one thread a row): grad = (softmax - onehot)
// * inv, rowloss = logsumexp - logit[y], correct = argmax == y; rows with a
// label < 0 get a zero gradient and no loss.
__global__ void softmax_ce(const float* logits, const int* labels, float* grad, double* rowloss, int* correct,
                           int n, int C, float inv) {
	int r = blockIdx.x * blockDim.x + threadIdx.x;
	if (r >= n) return;
	const float* row = logits + (long long)r * C;
	float* g = grad + (long long)r * C;
	int y = labels[r];
	if (y < 0) {
		for (int j = 0; j < C; j++) g[j] = 0.f;
		rowloss[r] = 0;
		correct[r] = 0;
		return;
	}
	float mx = row[0];
	int arg = 0;
	for (int j = 1; j < C; j++)
		if (row[j] > mx) { mx = row[j]; arg = j; }
	double sum = 0;
	for (int j = 0; j < C; j++) sum += exp((double)(row[j] - mx));
	double lse = (double)mx + log(sum);
	rowloss[r] = lse - (double)row[y];
	correct[r] = arg == y;
	for (int j = 0; j < C; j++) g[j] = (float)exp((double)row[j] - lse) * inv;
	g[y] -= inv;
}

// Adam (engine/nn adam.go): L2 decay added to the gradient, bias
// corrections folded into stepSize and sq2.
__global__ void adam(float* w, const float* g, float* m, float* v, int n, float b1, float b2, float eps, float wd,
                     float stepSize, float sq2) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	for (; i < n; i += gridDim.x * blockDim.x) {
		float gi = g[i] + wd * w[i];
		m[i] = b1 * m[i] + (1.f - b1) * gi;
		v[i] = b2 * v[i] + (1.f - b2) * gi * gi;
		float denom = (float)sqrt((double)v[i]) / sq2 + eps;
		w[i] -= stepSize * m[i] / denom;
	}
}

}  // extern "C"

extern "C" {

// out[i, c] = sum_e w[e] * x[idx[e], c] over row i's edges (GCN's
// normalised aggregation, self loops included in the CSR).
__global__ void spmm_w(float* out, const float* x, const int* ptr, const int* idx, const float* w, int nd, int d) {
	long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	long long total = (long long)nd * d;
	for (; t < total; t += (long long)gridDim.x * blockDim.x) {
		int i = (int)(t / d), c = (int)(t % d);
		float acc = 0.f;
		for (int e = ptr[i]; e < ptr[i + 1]; e++) acc += w[e] * x[(long long)idx[e] * d + c];
		out[t] = acc;
	}
}

// dx[idx[e], c] += w[e] * g[i, c] (spmm_w's transpose; dx zeroed first).
__global__ void spmm_w_t(float* dx, const float* g, const int* ptr, const int* idx, const float* w, int nd, int d) {
	long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	long long total = (long long)nd * d;
	for (; t < total; t += (long long)gridDim.x * blockDim.x) {
		int i = (int)(t / d), c = (int)(t % d);
		float gi = g[t];
		for (int e = ptr[i]; e < ptr[i + 1]; e++) atomicAdd(&dx[(long long)idx[e] * d + c], w[e] * gi);
	}
}

// Dropout alone (engine/nn Dropout: the input features of GCN and GAT).
__global__ void drop_fwd(float* y, long long n, unsigned thr, float scale, u64 key) {
	long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	for (; t < n; t += (long long)gridDim.x * blockDim.x) {
		u64 bits = splitmix64(key ^ (u64)(t >> 2) * 0xd1342543de82ef95ULL);
		unsigned lane = (unsigned)(bits >> (16 * (t & 3))) & 0xffffu;
		y[t] = lane >= thr ? y[t] * scale : 0.f;
	}
}

}  // extern "C"

// ---- GAT (engine/nn gat.go): H heads of F features, z = x·W (rows × H·F),
// edges in CSR with a self loop last in each row, coefficients E×H.
extern "C" {

__device__ __forceinline__ bool drop_bit(u64 key, long long k, unsigned thr) {
	u64 bits = splitmix64(key ^ (u64)(k >> 2) * 0xd1342543de82ef95ULL);
	return ((unsigned)(bits >> (16 * (k & 3))) & 0xffffu) < thr;
}

// out[r*H+h] = z[r, h, :]·att[h, :]
__global__ void head_dots(float* out, const float* z, const float* att, int rows, int H, int F) {
	long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	long long total = (long long)rows * H;
	for (; t < total; t += (long long)gridDim.x * blockDim.x) {
		int r = (int)(t / H), h = (int)(t % H);
		const float* zr = z + (long long)r * H * F + h * F;
		float s = 0.f;
		for (int f = 0; f < F; f++) s += zr[f] * att[h * F + f];
		out[t] = s;
	}
}

// Attention coefficients per (destination, head): LeakyReLU scores, softmax
// over the row (alpha), and alpha after attention dropout (aw).
__global__ void gat_alpha(float* alpha, float* aw, const float* el, const float* er, const int* ptr, const int* idx,
                          int nd, int H, float slope, int drop, unsigned thr, float scale, u64 key) {
	long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	long long total = (long long)nd * H;
	for (; t < total; t += (long long)gridDim.x * blockDim.x) {
		int i = (int)(t / H), h = (int)(t % H);
		int s = ptr[i], e1 = ptr[i + 1];
		float mx = -__int_as_float(0x7f800000), eri = er[(long long)i * H + h];
		for (int e = s; e < e1; e++) {
			float v = el[(long long)idx[e] * H + h] + eri;
			if (v < 0.f) v *= slope;
			alpha[(long long)e * H + h] = v;
			mx = fmaxf(mx, v);
		}
		float sum = 0.f;
		for (int e = s; e < e1; e++) {
			float v = (float)exp((double)(alpha[(long long)e * H + h] - mx));
			alpha[(long long)e * H + h] = v;
			sum += v;
		}
		float inv = 1.f / sum;
		for (int e = s; e < e1; e++) {
			long long k = (long long)e * H + h;
			alpha[k] *= inv;
			float w = alpha[k];
			if (drop) w = drop_bit(key, k, thr) ? 0.f : w * scale;
			aw[k] = w;
		}
	}
}

// full[i, h*F+f] = sum_e aw[e,h] * z[idx[e], h*F+f]
__global__ void gat_agg(float* full, const float* z, const int* ptr, const int* idx, const float* aw, int nd, int H, int F) {
	long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	int HF = H * F;
	long long total = (long long)nd * HF;
	for (; t < total; t += (long long)gridDim.x * blockDim.x) {
		int i = (int)(t / HF), c = (int)(t % HF), h = c / F;
		float acc = 0.f;
		for (int e = ptr[i]; e < ptr[i + 1]; e++) acc += aw[(long long)e * H + h] * z[(long long)idx[e] * HF + c];
		full[t] = acc;
	}
}

// dz[idx[e], h*F+f] += aw[e,h] * dOut[i, h*F+f] (gat_agg's transpose; dz zeroed first)
__global__ void gat_agg_t(float* dz, const float* dOut, const int* ptr, const int* idx, const float* aw, int nd, int H, int F) {
	long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	int HF = H * F;
	long long total = (long long)nd * HF;
	for (; t < total; t += (long long)gridDim.x * blockDim.x) {
		int i = (int)(t / HF), c = (int)(t % HF), h = c / F;
		float g = dOut[t];
		for (int e = ptr[i]; e < ptr[i + 1]; e++) atomicAdd(&dz[(long long)idx[e] * HF + c], aw[(long long)e * H + h] * g);
	}
}

// y[i, f] = bias[f] + sum_h full[i, h*F+f] / H (heads averaged)
__global__ void head_mean(float* y, const float* full, const float* bias, int nd, int H, int F) {
	long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	long long total = (long long)nd * F;
	float invH = 1.f / (float)H;
	for (; t < total; t += (long long)gridDim.x * blockDim.x) {
		int i = (int)(t / F), f = (int)(t % F);
		float v = bias[f];
		for (int h = 0; h < H; h++) v += invH * full[(long long)i * H * F + h * F + f];
		y[t] = v;
	}
}

// dOut[i, h*F+f] = dy[i, f] / H
__global__ void head_mean_back(float* dOut, const float* dy, int nd, int H, int F) {
	long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	long long total = (long long)nd * H * F;
	float invH = 1.f / (float)H;
	for (; t < total; t += (long long)gridDim.x * blockDim.x) {
		int i = (int)(t / (H * F)), f = (int)(t % F);
		dOut[t] = dy[(long long)i * F + f] * invH;
	}
}

// Per (destination, head): d loss / d score of every edge (through the
// attention dropout, the softmax and the LeakyReLU) into ds, their sum der.
__global__ void gat_ds(float* ds, float* der, const float* alpha, const float* dOut, const float* z, const float* el,
                       const float* er, const int* ptr, const int* idx, int nd, int H, int F, float slope, int drop,
                       unsigned thr, float scale, u64 key) {
	long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	long long total = (long long)nd * H;
	int HF = H * F;
	for (; t < total; t += (long long)gridDim.x * blockDim.x) {
		int i = (int)(t / H), h = (int)(t % H);
		int s = ptr[i], e1 = ptr[i + 1];
		const float* dr = dOut + (long long)i * HF + h * F;
		for (int e = s; e < e1; e++) {
			const float* zj = z + (long long)idx[e] * HF + h * F;
			long long k = (long long)e * H + h;
			float g = 0.f;
			for (int f = 0; f < F; f++) g += dr[f] * zj[f];
			if (drop) g = drop_bit(key, k, thr) ? 0.f : g * scale;
			ds[k] = g;
		}
		float sum = 0.f;
		for (int e = s; e < e1; e++) sum += alpha[(long long)e * H + h] * ds[(long long)e * H + h];
		float eri = er[(long long)i * H + h], acc = 0.f;
		for (int e = s; e < e1; e++) {
			long long k = (long long)e * H + h;
			float g = alpha[k] * (ds[k] - sum);
			if (el[(long long)idx[e] * H + h] + eri < 0.f) g *= slope;
			ds[k] = g;
			acc += g;
		}
		der[t] = acc;
	}
}

// del[idx[e], h] += ds[e, h] (del zeroed first)
__global__ void gat_del(float* del, const float* ds, const int* ptr, const int* idx, int nd, int H) {
	long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	long long total = (long long)nd * H;
	for (; t < total; t += (long long)gridDim.x * blockDim.x) {
		int i = (int)(t / H), h = (int)(t % H);
		for (int e = ptr[i]; e < ptr[i + 1]; e++) atomicAdd(&del[(long long)idx[e] * H + h], ds[(long long)e * H + h]);
	}
}

// gatt[h, f] += sum_r d[r, h] * z[r, h*F+f] (one thread per (h, f))
__global__ void att_grad(float* gatt, const float* d, const float* z, int rows, int H, int F) {
	int t = blockIdx.x * blockDim.x + threadIdx.x;
	for (; t < H * F; t += gridDim.x * blockDim.x) {
		int h = t / F;
		float acc = 0.f;
		for (int r = 0; r < rows; r++) acc += d[(long long)r * H + h] * z[(long long)r * H * F + t];
		gatt[t] += acc;
	}
}

// dz[r, h*F+f] += d[r, h] * att[h, f]
__global__ void dz_add_att(float* dz, const float* d, const float* att, int rows, int H, int F) {
	long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	long long total = (long long)rows * H * F;
	for (; t < total; t += (long long)gridDim.x * blockDim.x) {
		int r = (int)(t / (H * F)), c = (int)(t % (H * F));
		dz[t] += d[(long long)r * H + c / F] * att[c];
	}
}

// ELU (engine/nn ActForward): v <= 0 -> exp(v) - 1 (in double)
__global__ void elu_fwd(float* y, long long n) {
	long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	for (; t < n; t += (long long)gridDim.x * blockDim.x) {
		float v = y[t];
		if (v <= 0.f) y[t] = (float)(exp((double)v) - 1.0);
	}
}

// ELU backward on the output after dropout: g *= out*keep + 1 where out <= 0
__global__ void elu_bwd(float* g, const float* out, long long n, float keep) {
	long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	for (; t < n; t += (long long)gridDim.x * blockDim.x) {
		float v = out[t];
		if (v <= 0.f) g[t] *= v * keep + 1.f;
	}
}

}  // extern "C"
